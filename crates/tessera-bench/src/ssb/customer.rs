//! The CUSTOMER dimension (SSB specification §2.3; ssb-dbgen `mk_cust()` in `build.c`,
//! `pr_cust()` in `print.c`).
//!
//! `c_custkey` runs 1..=30,000 × SF. Per row, in dbgen's order:
//!
//! - `c_name`: `Customer#` and the key zero-padded to 9 digits;
//! - `c_address`: `a_rnd(6, 24)` on `C_ADDR_SD` (`C_ADDR_LEN` = 15 in SSB, × 0.4 and × 1.6),
//!   boundary 9 draws per row;
//! - `c_nation`, `c_region`, `c_city`, `c_phone`: see [`super::geography`]
//!   (nation drawn on `C_NTRG_SD`);
//! - `c_mktsegment`: `pick_str()` from `msegmnt` on `C_MSEG_SD`.
//!
//! TPC-H's `c_acctbal` and `c_comment` are gone in SSB.
//!
//! [`CustomerGenerator::new`] produces the table as `dbgen -T c` does.
//! [`CustomerGenerator::following_supplier`] produces it as a single all-tables run does,
//! where the city and phone streams continue after SUPPLIER's rows (see
//! [`super::geography`]). Only the former is checked against reference data.

use tpchgen::distribution::Distributions;

use super::geography::GeographyStreams;
use super::inline_str::InlineStr;
use super::random::Stream;
use super::scale::{Scale, chunk};
use super::tbl::{TblFields, TblRow, display_as_tbl};

/// `C_ADDR_SD` (`Seed[26]`).
const ADDRESS_SEED: i64 = 881_155_353;
/// `C_NTRG_SD` (`Seed[27]`).
const NATION_SEED: i64 = 1_489_529_863;
/// `C_MSEG_SD` (`Seed[30]`).
const SEGMENT_SEED: i64 = 1_140_279_430;
/// `a_rnd()` bounds for `C_ADDR_LEN` = 15: `(int)(15 * 0.4)` and `(int)(15 * 1.6)`.
const ADDRESS_MIN: i64 = 6;
const ADDRESS_MAX: i64 = 24;
/// `a_rnd()` uses at most 1 + 24/5 draws; dbgen reserves 9 per row.
const ADDRESS_DRAWS_PER_ROW: i32 = 9;

/// One row of CUSTOMER.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Customer {
    pub c_custkey: i64,
    pub c_name: InlineStr<32>,
    pub c_address: InlineStr<24>,
    pub c_city: InlineStr<10>,
    pub c_nation: &'static str,
    pub c_region: &'static str,
    pub c_phone: InlineStr<15>,
    pub c_mktsegment: &'static str,
}

impl TblRow for Customer {
    fn write_fields(&self, f: &mut TblFields<'_>) {
        f.int(self.c_custkey)
            .str(self.c_name.as_str())
            .str(self.c_address.as_str())
            .str(self.c_city.as_str())
            .str(self.c_nation)
            .str(self.c_region)
            .str(self.c_phone.as_str())
            .str(self.c_mktsegment);
    }
}

display_as_tbl!(Customer);

/// Generates CUSTOMER, or chunk `part` of `num_parts` of it.
#[derive(Debug, Clone)]
pub struct CustomerGenerator {
    start: i64,
    count: i64,
    /// Rows of SUPPLIER generated before, in the same dbgen process (0 for `-T c`).
    supplier_rows_before: i64,
}

impl CustomerGenerator {
    /// Chunk `part` (1-based) of `num_parts` of CUSTOMER at `scale_factor`.
    pub fn new(scale_factor: f64, part: i32, num_parts: i32) -> Self {
        let (start, count) = chunk(Self::row_count(scale_factor), part, num_parts);
        Self {
            start,
            count,
            supplier_rows_before: 0,
        }
    }

    /// Like [`new`](Self::new), but as a plain `dbgen -s SF` run (all tables in one
    /// process) generates CUSTOMER: after SUPPLIER, continuing the city-digit and phone
    /// streams SUPPLIER used. Derived from ssb-dbgen's source; not covered by the SF 1
    /// reference data, which was generated table by table.
    pub fn following_supplier(scale_factor: f64, part: i32, num_parts: i32) -> Self {
        Self {
            supplier_rows_before: Scale::new(scale_factor).supplier_rows(),
            ..Self::new(scale_factor, part, num_parts)
        }
    }

    /// Rows in the whole CUSTOMER table: 30,000 × SF.
    pub fn row_count(scale_factor: f64) -> i64 {
        Scale::new(scale_factor).customer_rows()
    }

    /// Rows this generator produces.
    pub fn len(&self) -> i64 {
        self.count
    }

    /// Whether this generator produces no rows.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Iterate the rows.
    pub fn iter(&self) -> CustomerIter {
        CustomerIter::new(self.start, self.count, self.supplier_rows_before)
    }
}

impl IntoIterator for CustomerGenerator {
    type Item = Customer;
    type IntoIter = CustomerIter;
    fn into_iter(self) -> CustomerIter {
        self.iter()
    }
}

/// Iterator over CUSTOMER rows.
#[derive(Debug, Clone)]
pub struct CustomerIter {
    dists: &'static Distributions,
    address: Stream,
    geography: GeographyStreams,
    segment: Stream,
    next_key: i64,
    remaining: i64,
}

impl CustomerIter {
    fn new(start: i64, count: i64, supplier_rows_before: i64) -> Self {
        let mut it = Self {
            dists: Distributions::static_default(),
            address: Stream::new(ADDRESS_SEED, ADDRESS_DRAWS_PER_ROW),
            geography: GeographyStreams::new(NATION_SEED),
            segment: Stream::new(SEGMENT_SEED, 1),
            next_key: start + 1,
            remaining: count,
        };
        it.address.advance_rows(start);
        it.geography.advance_rows(start);
        it.segment.advance_rows(start);
        it.geography.advance_shared_rows(supplier_rows_before);
        it
    }
}

impl Iterator for CustomerIter {
    type Item = Customer;

    fn next(&mut self) -> Option<Customer> {
        if self.remaining <= 0 {
            return None;
        }
        let key = self.next_key;
        let mut name = InlineStr::new();
        name.push_str("Customer#");
        name.push_int(key, 9);
        let address = self.address.alpha_numeric(ADDRESS_MIN, ADDRESS_MAX);
        let geo = self.geography.next(self.dists);
        let segment = self.segment.pick(self.dists.market_segments());

        self.address.row_finished();
        self.geography.row_finished();
        self.segment.row_finished();
        self.next_key += 1;
        self.remaining -= 1;

        Some(Customer {
            c_custkey: key,
            c_name: name,
            c_address: address,
            c_city: geo.city,
            c_nation: geo.nation,
            c_region: geo.region,
            c_phone: geo.phone,
            c_mktsegment: segment,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(0);
        (n, Some(n))
    }
}

impl ExactSizeIterator for CustomerIter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_row() {
        let first = CustomerGenerator::new(1.0, 1, 1)
            .iter()
            .next()
            .map(|c| c.to_string());
        assert_eq!(
            first.as_deref(),
            Some(
                "1|Customer#000000001|j5JsirBM9P|MOROCCO  9|MOROCCO|AFRICA|25-989-741-2988|BUILDING|"
            )
        );
    }

    #[test]
    fn following_supplier_continues_the_shared_streams() {
        // Customer n of a full run draws its city digit and phone where standalone
        // customer n + 2000 (SF 1 has 2000 suppliers) draws them.
        let full_run: Vec<Customer> = CustomerGenerator::following_supplier(1.0, 1, 1)
            .iter()
            .take(5)
            .collect();
        let standalone: Vec<Customer> = CustomerGenerator::new(1.0, 1, 1)
            .iter()
            .skip(2000)
            .take(5)
            .collect();
        let alone: Vec<Customer> = CustomerGenerator::new(1.0, 1, 1).iter().take(5).collect();
        for ((f, s), a) in full_run.iter().zip(&standalone).zip(&alone) {
            assert_eq!(f.c_city.as_bytes()[9], s.c_city.as_bytes()[9]);
            assert_eq!(f.c_phone.as_bytes()[2..], s.c_phone.as_bytes()[2..]);
            // Everything else is as in the standalone table.
            assert_eq!(
                (f.c_custkey, f.c_address, f.c_nation),
                (a.c_custkey, a.c_address, a.c_nation)
            );
            assert_eq!(f.c_mktsegment, a.c_mktsegment);
        }
        // Chunks of the full-run variant also concatenate to the whole table.
        let whole: Vec<Customer> = CustomerGenerator::following_supplier(0.01, 1, 1)
            .iter()
            .collect();
        let chunked: Vec<Customer> = (1..=2)
            .flat_map(|p| CustomerGenerator::following_supplier(0.01, p, 2).iter())
            .collect();
        assert_eq!(whole, chunked);
    }

    #[test]
    fn chunks_concatenate_to_the_whole_table() {
        let whole: Vec<Customer> = CustomerGenerator::new(0.01, 1, 1).iter().collect();
        let chunked: Vec<Customer> = (1..=3)
            .flat_map(|p| CustomerGenerator::new(0.01, p, 3).iter())
            .collect();
        assert_eq!(whole.len(), 300);
        assert_eq!(whole, chunked);
    }
}
