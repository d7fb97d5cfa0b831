//! The columns customer and supplier share: nation, region, city and phone number.
//!
//! Follows ssb-dbgen's `build.c`: `mk_cust()`/`mk_supp()` draw a nation index in
//! `[0, 24]`, take its region from the `nations` distribution's weights (which `dists.dss`
//! defines so that their running sum is the region index), build the city with
//! `gen_city()` and the phone number with `gen_phone()`.
//!
//! Both tables use the same two streams for the city digit (`P_CITY_SD`) and the phone
//! (`C_PHNE_SD` — ssb-dbgen's `mk_supp()` passes the customer phone stream, not
//! `S_PHNE_SD`), each starting from its initial seed when the table is generated on its
//! own (`dbgen -T s`, `dbgen -T c`). That is why supplier and customer *n* have the same
//! city digit and the same phone number apart from the country code.
//!
//! In a run that generates all tables in one process (plain `dbgen -s SF`), supplier comes
//! first and dbgen never rewinds these two streams for customer (they are registered to
//! other tables, so `row_stop(CUST)` leaves them alone): customer then continues them where
//! supplier stopped. `CustomerGenerator::following_supplier` reproduces that.

use tpchgen::distribution::Distributions;

use super::inline_str::InlineStr;
use super::random::Stream;

/// `P_CITY_SD` (`Seed[49]` in ssb-dbgen's `rnd.h`): the city digit, one draw per row.
pub(crate) const CITY_SEED: i64 = 1_495_190_827;
/// `C_PHNE_SD` (`Seed[28]`): the phone number, three draws per row.
pub(crate) const PHONE_SEED: i64 = 1_521_138_112;

/// `CITY_FIX`: a city is the nation name cut or space-padded to 9 characters plus a digit.
const CITY_FIX: usize = 10;
/// `NATIONS_MAX`: phone country codes are `10 + nation % 90`.
const NATIONS_MAX: i64 = 90;

/// A row's nation, region, city and phone number.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geography {
    pub nation: &'static str,
    pub region: &'static str,
    pub city: InlineStr<CITY_FIX>,
    pub phone: InlineStr<15>,
}

/// The streams behind [`Geography`]; the nation stream is table specific.
#[derive(Debug, Clone)]
pub(crate) struct GeographyStreams {
    nation: Stream,
    city: Stream,
    phone: Stream,
}

impl GeographyStreams {
    pub(crate) fn new(nation_seed: i64) -> Self {
        Self {
            nation: Stream::new(nation_seed, 1),
            city: Stream::new(CITY_SEED, 1),
            phone: Stream::new(PHONE_SEED, 3),
        }
    }

    pub(crate) fn next(&mut self, dists: &'static Distributions) -> Geography {
        let nations = dists.nations();
        let index = self.nation.next_int(0, nations.size() as i64 - 1).max(0) as usize;
        let nation = nations.get_value(index);
        let region = usize::try_from(nations.get_weight(index))
            .ok()
            .and_then(|r| dists.regions().get_values().get(r).copied())
            .unwrap_or_default();
        let city = city(nation, self.city.next_int(0, 9));
        let phone = phone(index as i64, &mut self.phone);
        Geography {
            nation,
            region,
            city,
            phone,
        }
    }

    pub(crate) fn row_finished(&mut self) {
        self.nation.row_finished();
        self.city.row_finished();
        self.phone.row_finished();
    }

    pub(crate) fn advance_rows(&mut self, rows: i64) {
        self.nation.advance_rows(rows);
        self.city.advance_rows(rows);
        self.phone.advance_rows(rows);
    }

    /// Skip the city and phone streams (not the nation stream) past `rows` rows of another
    /// table that shares them.
    pub(crate) fn advance_shared_rows(&mut self, rows: i64) {
        self.city.advance_rows(rows);
        self.phone.advance_rows(rows);
    }
}

/// `gen_city()`: the first 9 characters of the nation, space-padded, then the digit.
fn city(nation: &str, digit: i64) -> InlineStr<CITY_FIX> {
    let mut out = InlineStr::new();
    for &b in nation.as_bytes().iter().take(CITY_FIX - 1) {
        out.push(b);
    }
    while out.len() < CITY_FIX - 1 {
        out.push(b' ');
    }
    out.push_int(digit, 1);
    out
}

/// `gen_phone()`: `CC-AAA-EEE-NNNN` with the country code from the nation and three draws.
fn phone(nation_index: i64, stream: &mut Stream) -> InlineStr<15> {
    let area = stream.next_int(100, 999);
    let exchange = stream.next_int(100, 999);
    let number = stream.next_int(1000, 9999);
    let mut out = InlineStr::new();
    out.push_int(10 + nation_index % NATIONS_MAX, 2);
    out.push(b'-');
    out.push_int(area, 3);
    out.push(b'-');
    out.push_int(exchange, 3);
    out.push(b'-');
    out.push_int(number, 4);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn city_names() {
        assert_eq!(city("MOROCCO", 9).as_str(), "MOROCCO  9");
        assert_eq!(city("ARGENTINA", 5).as_str(), "ARGENTINA5");
        assert_eq!(city("UNITED KINGDOM", 0).as_str(), "UNITED KI0");
        assert_eq!(city("PERU", 3).as_str(), "PERU     3");
    }

    #[test]
    fn first_phone_matches_tpch_customer_1() {
        // TPC-H customer 1 (same stream, same nation 15) has phone 25-989-741-2988.
        let mut s = Stream::new(PHONE_SEED, 3);
        assert_eq!(phone(15, &mut s).as_str(), "25-989-741-2988");
    }
}
