//! The SUPPLIER dimension (SSB specification §2.2; ssb-dbgen `mk_supp()` in `build.c`,
//! `pr_supp()` in `print.c`).
//!
//! `s_suppkey` runs 1..=2,000 × SF. Per row, in dbgen's order:
//!
//! - `s_name`: `Supplier#` and the key zero-padded to 9 digits;
//! - `s_address`: `a_rnd(6, 24)` on `S_ADDR_SD` (`S_ADDR_LEN` = 15 in SSB), boundary 9;
//! - `s_city`, `s_nation`, `s_region`, `s_phone`: see [`super::geography`] (nation drawn
//!   on `S_NTRG_SD`; city and phone on the streams shared with customer).
//!
//! TPC-H's `s_acctbal` and `s_comment` (with its "Customer Complaints" noise) are gone.

use tpchgen::distribution::Distributions;

use super::geography::GeographyStreams;
use super::inline_str::InlineStr;
use super::random::Stream;
use super::scale::{Scale, chunk};
use super::tbl::{TblFields, TblRow, display_as_tbl};

/// `S_ADDR_SD` (`Seed[32]`).
const ADDRESS_SEED: i64 = 706_178_559;
/// `S_NTRG_SD` (`Seed[33]`).
const NATION_SEED: i64 = 110_356_601;
/// `a_rnd()` bounds for `S_ADDR_LEN` = 15.
const ADDRESS_MIN: i64 = 6;
const ADDRESS_MAX: i64 = 24;
const ADDRESS_DRAWS_PER_ROW: i32 = 9;

/// One row of SUPPLIER.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Supplier {
    pub s_suppkey: i64,
    pub s_name: InlineStr<32>,
    pub s_address: InlineStr<24>,
    pub s_city: InlineStr<10>,
    pub s_nation: &'static str,
    pub s_region: &'static str,
    pub s_phone: InlineStr<15>,
}

impl TblRow for Supplier {
    fn write_fields(&self, f: &mut TblFields<'_>) {
        f.int(self.s_suppkey)
            .str(self.s_name.as_str())
            .str(self.s_address.as_str())
            .str(self.s_city.as_str())
            .str(self.s_nation)
            .str(self.s_region)
            .str(self.s_phone.as_str());
    }
}

display_as_tbl!(Supplier);

/// Generates SUPPLIER, or chunk `part` of `num_parts` of it.
#[derive(Debug, Clone)]
pub struct SupplierGenerator {
    start: i64,
    count: i64,
}

impl SupplierGenerator {
    /// Chunk `part` (1-based) of `num_parts` of SUPPLIER at `scale_factor`.
    pub fn new(scale_factor: f64, part: i32, num_parts: i32) -> Self {
        let (start, count) = chunk(Self::row_count(scale_factor), part, num_parts);
        Self { start, count }
    }

    /// Rows in the whole SUPPLIER table: 2,000 × SF.
    pub fn row_count(scale_factor: f64) -> i64 {
        Scale::new(scale_factor).supplier_rows()
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
    pub fn iter(&self) -> SupplierIter {
        SupplierIter::new(self.start, self.count)
    }
}

impl IntoIterator for SupplierGenerator {
    type Item = Supplier;
    type IntoIter = SupplierIter;
    fn into_iter(self) -> SupplierIter {
        self.iter()
    }
}

/// Iterator over SUPPLIER rows.
#[derive(Debug, Clone)]
pub struct SupplierIter {
    dists: &'static Distributions,
    address: Stream,
    geography: GeographyStreams,
    next_key: i64,
    remaining: i64,
}

impl SupplierIter {
    fn new(start: i64, count: i64) -> Self {
        let mut it = Self {
            dists: Distributions::static_default(),
            address: Stream::new(ADDRESS_SEED, ADDRESS_DRAWS_PER_ROW),
            geography: GeographyStreams::new(NATION_SEED),
            next_key: start + 1,
            remaining: count,
        };
        it.address.advance_rows(start);
        it.geography.advance_rows(start);
        it
    }
}

impl Iterator for SupplierIter {
    type Item = Supplier;

    fn next(&mut self) -> Option<Supplier> {
        if self.remaining <= 0 {
            return None;
        }
        let key = self.next_key;
        let mut name = InlineStr::new();
        name.push_str("Supplier#");
        name.push_int(key, 9);
        let address = self.address.alpha_numeric(ADDRESS_MIN, ADDRESS_MAX);
        let geo = self.geography.next(self.dists);

        self.address.row_finished();
        self.geography.row_finished();
        self.next_key += 1;
        self.remaining -= 1;

        Some(Supplier {
            s_suppkey: key,
            s_name: name,
            s_address: address,
            s_city: geo.city,
            s_nation: geo.nation,
            s_region: geo.region,
            s_phone: geo.phone,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(0);
        (n, Some(n))
    }
}

impl ExactSizeIterator for SupplierIter {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_row() {
        let first = SupplierGenerator::new(1.0, 1, 1)
            .iter()
            .next()
            .map(|s| s.to_string());
        assert_eq!(
            first.as_deref(),
            Some(
                "1|Supplier#000000001|sdrGnXCDRcfriBvY0KL,i|PERU     9|PERU|AMERICA|27-989-741-2988|"
            )
        );
    }

    #[test]
    fn chunks_concatenate_to_the_whole_table() {
        let whole: Vec<Supplier> = SupplierGenerator::new(1.0, 1, 1).iter().collect();
        let chunked: Vec<Supplier> = (1..=7)
            .flat_map(|p| SupplierGenerator::new(1.0, p, 7).iter())
            .collect();
        assert_eq!(whole.len(), 2000);
        assert_eq!(whole, chunked);
    }
}
