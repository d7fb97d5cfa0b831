//! An exact Star Schema Benchmark (SSB) data generator.
//!
//! Produces the same rows, byte for byte in `.tbl` form, as the official `ssb-dbgen`
//! (P. O'Neil, E. O'Neil, X. Chen, "Star Schema Benchmark", Revision 3, 2009; the generator
//! derived from TPC-H dbgen, as maintained at `eyalroz/ssb-dbgen`), when each table is
//! generated on its own (`dbgen -s SF -T l|p|s|c|d`). A plain all-tables run differs only in
//! CUSTOMER's city digits and phone numbers; see
//! [`CustomerGenerator::following_supplier`].
//!
//! The random number generator, its seeds and per-row draw counts, and the text
//! distributions (`dists.dss`) are TPC-H dbgen's; they come from the `tpchgen` crate (an
//! exact Rust port of TPC-H dbgen) and are driven here the way ssb-dbgen drives them. The
//! (private) `random` module notes where ssb-dbgen's older dbgen base differs from
//! `tpchgen`: addresses (`a_rnd()`) and part names (`permute()`) are generated here.
//!
//! Tables ([`scale`] has the row counts):
//!
//! - [`LineOrderGenerator`] → [`LineOrder`] (fact table, orders × lines)
//! - [`PartGenerator`] → [`Part`]
//! - [`SupplierGenerator`] → [`Supplier`]
//! - [`CustomerGenerator`] → [`Customer`]
//! - [`DateGenerator`] → [`Date`]
//!
//! Every generator is built with `new(scale_factor, part, num_parts)` and produces chunk
//! `part` (1-based) of `num_parts` of its table, so a table can be generated in parallel;
//! the chunks, concatenated in order, are exactly the whole table. Row types implement
//! [`TblRow`] and `Display` (dbgen's `|`-terminated `.tbl` line); [`write_tbl`] writes a
//! whole generator to an `io::Write`.
//!
//! ```
//! use tessera_bench::ssb::{PartGenerator, write_tbl};
//!
//! let first = PartGenerator::new(1.0, 1, 1).iter().next().map(|p| p.to_string());
//! assert_eq!(
//!     first.as_deref(),
//!     Some("1|lace spring|MFGR#1|MFGR#11|MFGR#1121|goldenrod|PROMO BURNISHED COPPER|7|JUMBO PKG|")
//! );
//!
//! let mut out = Vec::new();
//! let rows = write_tbl(PartGenerator::new(0.01, 1, 1), &mut out).expect("write to a Vec");
//! assert_eq!(rows, 2000);
//! ```

mod calendar;
mod customer;
mod date;
mod geography;
mod inline_str;
mod lineorder;
mod part;
mod random;
pub mod scale;
mod supplier;
mod tbl;

pub use customer::{Customer, CustomerGenerator, CustomerIter};
pub use date::{Date, DateGenerator, DateIter};
pub use inline_str::InlineStr;
pub use lineorder::{LineOrder, LineOrderGenerator, LineOrderIter, retail_price, sparse_order_key};
pub use part::{Part, PartGenerator, PartIter};
pub use supplier::{Supplier, SupplierGenerator, SupplierIter};
pub use tbl::{TblFields, TblRow, write_tbl};
