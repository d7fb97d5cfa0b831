//! The LINEORDER fact table (SSB specification §2.1; ssb-dbgen `mk_order()` and
//! `ez_sparse()` in `build.c`, `pr_line()` in `print.c`).
//!
//! LINEORDER is TPC-H's ORDERS joined with LINEITEM, generated order by order:
//! 1,500,000 × SF orders with 1..=7 lines each. Per order (streams of table ORDER, one draw
//! per order each):
//!
//! - `lo_orderkey`: the order number made sparse (`ez_sparse()`: of every 32 keys only the
//!   first 8 are used);
//! - `lo_orderdate`: a day in `[1992-01-01, 1998-08-02]` (`O_ODATE_SD`; 151 days short of
//!   the end so that ship and receipt dates still fit);
//! - `lo_custkey`: `[1, 30,000 × SF]` on `O_CKEY_SD`, moved off multiples of 3 as in TPC-H
//!   (`CUST_MORTALITY`), so a third of the customers have no orders;
//! - `lo_orderpriority`: `pick_str()` from `o_oprio` (`O_PRIO_SD`);
//! - `lo_shippriority`: always 0;
//! - the number of lines: 1..=7 (`O_LCNT_SD`).
//!
//! Per line (streams of table LINE, 7 draws reserved per order, one used per line):
//! `lo_partkey` (`L_PKEY_SD`, see [`super::scale`] for its range), `lo_suppkey` in
//! `[1, 2,000 × SF]` (`L_SKEY_SD` — drawn directly, not through TPC-H's partsupp bridge),
//! `lo_quantity` 1..=50, `lo_discount` 0..=10, `lo_tax` 0..=8, `lo_commitdate` = order date
//! + 30..=90 days, `lo_shipmode` from `smode`. Derived, in integer cents:
//!
//! - `lo_extendedprice` = retail price × quantity, with TPC-H's retail price
//!   `90000 + (partkey / 10) % 20001 + 100 × (partkey % 1000)`;
//! - `lo_revenue` = extendedprice × (100 − discount) / 100;
//! - `lo_supplycost` = 6 × retail price / 10;
//! - `lo_ordtotalprice` = Σ over the order's lines of
//!   (extendedprice × (100 − discount) / 100) × (100 + tax) / 100.
//!
//! Dates are `yyyymmdd` integers. The order clerk stream (`O_CLRK_SD`) is drawn by dbgen
//! but never printed; being an independent stream it is simply not generated here.

use tpchgen::distribution::Distributions;

use super::calendar;
use super::random::Stream;
use super::scale::{Scale, chunk};
use super::tbl::{TblFields, TblRow, display_as_tbl};

/// `O_ODATE_SD` (`Seed[13]`).
const ORDER_DATE_SEED: i64 = 1_066_728_069;
/// `O_CKEY_SD` (`Seed[40]`).
const CUSTKEY_SEED: i64 = 851_767_375;
/// `O_PRIO_SD` (`Seed[38]`).
const PRIORITY_SEED: i64 = 591_449_447;
/// `O_LCNT_SD` (`Seed[43]`).
const LINE_COUNT_SEED: i64 = 1_434_868_289;
/// `L_PKEY_SD` (`Seed[19]`).
const PARTKEY_SEED: i64 = 1_808_217_256;
/// `L_SKEY_SD` (`Seed[20]`).
const SUPPKEY_SEED: i64 = 2_095_021_727;
/// `L_QTY_SD` (`Seed[14]`).
const QUANTITY_SEED: i64 = 209_208_115;
/// `L_DCNT_SD` (`Seed[15]`).
const DISCOUNT_SEED: i64 = 554_590_007;
/// `L_TAX_SD` (`Seed[16]`).
const TAX_SEED: i64 = 721_958_466;
/// `L_CDTE_SD` (`Seed[22]`).
const COMMIT_DATE_SEED: i64 = 904_914_315;
/// `L_SMODE_SD` (`Seed[18]`).
const SHIP_MODE_SEED: i64 = 675_466_456;

/// `O_LCNT_MAX`: lines per order, also the draws reserved per order on line streams.
const MAX_LINES: usize = 7;
/// Order dates are offsets `0..=ORDER_DATE_MAX_OFFSET` from 1992-01-01: `O_ODATE_MAX` is
/// `STARTDATE + TOTDATE - (L_SDTE_MAX + L_RDTE_MAX) - 1`, i.e. 2557 - 151 - 1 days in.
const ORDER_DATE_MAX_OFFSET: i64 = 2557 - (121 + 30) - 1;
/// `CUST_MORTALITY`.
const CUSTOMER_MORTALITY: i64 = 3;

/// One row of LINEORDER.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineOrder {
    pub lo_orderkey: i64,
    pub lo_linenumber: i64,
    pub lo_custkey: i64,
    pub lo_partkey: i64,
    pub lo_suppkey: i64,
    /// `yyyymmdd`.
    pub lo_orderdate: i64,
    pub lo_orderpriority: &'static str,
    pub lo_shippriority: i64,
    pub lo_quantity: i64,
    /// Cents.
    pub lo_extendedprice: i64,
    /// Cents.
    pub lo_ordtotalprice: i64,
    /// Percent, 0..=10.
    pub lo_discount: i64,
    /// Cents.
    pub lo_revenue: i64,
    /// Cents.
    pub lo_supplycost: i64,
    /// Percent, 0..=8.
    pub lo_tax: i64,
    /// `yyyymmdd`.
    pub lo_commitdate: i64,
    pub lo_shipmode: &'static str,
}

impl LineOrder {
    const EMPTY: LineOrder = LineOrder {
        lo_orderkey: 0,
        lo_linenumber: 0,
        lo_custkey: 0,
        lo_partkey: 0,
        lo_suppkey: 0,
        lo_orderdate: 0,
        lo_orderpriority: "",
        lo_shippriority: 0,
        lo_quantity: 0,
        lo_extendedprice: 0,
        lo_ordtotalprice: 0,
        lo_discount: 0,
        lo_revenue: 0,
        lo_supplycost: 0,
        lo_tax: 0,
        lo_commitdate: 0,
        lo_shipmode: "",
    };
}

impl TblRow for LineOrder {
    fn write_fields(&self, f: &mut TblFields<'_>) {
        f.int(self.lo_orderkey)
            .int(self.lo_linenumber)
            .int(self.lo_custkey)
            .int(self.lo_partkey)
            .int(self.lo_suppkey)
            .int(self.lo_orderdate)
            .str(self.lo_orderpriority)
            .int(self.lo_shippriority)
            .int(self.lo_quantity)
            .int(self.lo_extendedprice)
            .int(self.lo_ordtotalprice)
            .int(self.lo_discount)
            .int(self.lo_revenue)
            .int(self.lo_supplycost)
            .int(self.lo_tax)
            .int(self.lo_commitdate)
            .str(self.lo_shipmode);
    }
}

display_as_tbl!(LineOrder);

/// dbgen's `ez_sparse()` with sequence 0: keep the low 3 bits of the order number and
/// shift the rest up by 2, so keys come in runs of 8 out of every 32.
pub fn sparse_order_key(order_number: i64) -> i64 {
    ((order_number >> 3) << 5) | (order_number & 7)
}

/// TPC-H's retail price of a part, in cents (`rpb_routine()`).
pub fn retail_price(partkey: i64) -> i64 {
    90_000 + (partkey / 10) % 20_001 + (partkey % 1_000) * 100
}

/// Generates LINEORDER, or chunk `part` of `num_parts` of it. Chunks split the *orders*,
/// so a chunk always holds whole orders.
#[derive(Debug, Clone)]
pub struct LineOrderGenerator {
    scale: Scale,
    /// First order index (0-based) and number of orders.
    start: i64,
    orders: i64,
}

impl LineOrderGenerator {
    /// Chunk `part` (1-based) of `num_parts` of LINEORDER at `scale_factor`.
    pub fn new(scale_factor: f64, part: i32, num_parts: i32) -> Self {
        let scale = Scale::new(scale_factor);
        let (start, orders) = chunk(scale.order_count(), part, num_parts);
        Self {
            scale,
            start,
            orders,
        }
    }

    /// Orders behind the whole LINEORDER table: 1,500,000 × SF.
    pub fn order_count(scale_factor: f64) -> i64 {
        Scale::new(scale_factor).order_count()
    }

    /// Rows in the whole LINEORDER table. The line counts are random, so this runs the
    /// line-count stream over every order (about 1.5 million draws per SF; cheap, but not
    /// free at large SF).
    pub fn row_count(scale_factor: f64) -> i64 {
        Self::new(scale_factor, 1, 1).len()
    }

    /// Orders this generator covers.
    pub fn orders(&self) -> i64 {
        self.orders
    }

    /// Rows this generator produces (runs the line-count stream over its orders).
    pub fn len(&self) -> i64 {
        let mut lines = Stream::new(LINE_COUNT_SEED, 1);
        lines.advance_rows(self.start);
        (0..self.orders)
            .map(|_| {
                let n = lines.next_int(1, MAX_LINES as i64);
                lines.row_finished();
                n
            })
            .sum()
    }

    /// Whether this generator produces no rows.
    pub fn is_empty(&self) -> bool {
        self.orders == 0
    }

    /// Iterate the rows.
    pub fn iter(&self) -> LineOrderIter {
        LineOrderIter::new(&self.scale, self.start, self.orders)
    }
}

impl IntoIterator for LineOrderGenerator {
    type Item = LineOrder;
    type IntoIter = LineOrderIter;
    fn into_iter(self) -> LineOrderIter {
        self.iter()
    }
}

/// Iterator over LINEORDER rows; generates one order (up to 7 rows) at a time.
#[derive(Debug, Clone)]
pub struct LineOrderIter {
    dists: &'static Distributions,
    max_custkey: i64,
    max_partkey: i64,
    max_suppkey: i64,

    order_date: Stream,
    custkey: Stream,
    priority: Stream,
    line_count: Stream,

    partkey: Stream,
    suppkey: Stream,
    quantity: Stream,
    discount: Stream,
    tax: Stream,
    commit_date: Stream,
    ship_mode: Stream,

    /// 1-based number of the next order.
    next_order: i64,
    orders_left: i64,
    /// The current order's rows and how many of them were already returned.
    lines: [LineOrder; MAX_LINES],
    line_len: usize,
    line_pos: usize,
}

impl LineOrderIter {
    fn new(scale: &Scale, start: i64, orders: i64) -> Self {
        let per_line = MAX_LINES as i32;
        let mut it = Self {
            dists: Distributions::static_default(),
            max_custkey: scale.customer_rows(),
            max_partkey: scale.max_line_partkey(),
            max_suppkey: scale.supplier_rows(),
            order_date: Stream::new(ORDER_DATE_SEED, 1),
            custkey: Stream::new(CUSTKEY_SEED, 1),
            priority: Stream::new(PRIORITY_SEED, 1),
            line_count: Stream::new(LINE_COUNT_SEED, 1),
            partkey: Stream::new(PARTKEY_SEED, per_line),
            suppkey: Stream::new(SUPPKEY_SEED, per_line),
            quantity: Stream::new(QUANTITY_SEED, per_line),
            discount: Stream::new(DISCOUNT_SEED, per_line),
            tax: Stream::new(TAX_SEED, per_line),
            commit_date: Stream::new(COMMIT_DATE_SEED, per_line),
            ship_mode: Stream::new(SHIP_MODE_SEED, per_line),
            next_order: start + 1,
            orders_left: orders,
            lines: [LineOrder::EMPTY; MAX_LINES],
            line_len: 0,
            line_pos: 0,
        };
        for s in it.streams_mut() {
            s.advance_rows(start);
        }
        it
    }

    fn streams_mut(&mut self) -> [&mut Stream; 11] {
        [
            &mut self.order_date,
            &mut self.custkey,
            &mut self.priority,
            &mut self.line_count,
            &mut self.partkey,
            &mut self.suppkey,
            &mut self.quantity,
            &mut self.discount,
            &mut self.tax,
            &mut self.commit_date,
            &mut self.ship_mode,
        ]
    }

    /// `mk_order()`: fill `self.lines` with the next order.
    fn make_order(&mut self) {
        let order_number = self.next_order;
        let orderkey = sparse_order_key(order_number);
        let date_offset = self.order_date.next_int(0, ORDER_DATE_MAX_OFFSET);
        let orderdate = i64::from(calendar::yyyymmdd(date_offset));

        let mut custkey = self.custkey.next_int(1, self.max_custkey);
        let mut delta = 1;
        while custkey % CUSTOMER_MORTALITY == 0 {
            custkey = (custkey + delta).min(self.max_custkey);
            delta = -delta;
        }

        let priority = self.priority.pick(self.dists.order_priority());
        let line_count = self
            .line_count
            .next_int(1, MAX_LINES as i64)
            .clamp(1, MAX_LINES as i64) as usize;
        let ship_modes = self.dists.ship_modes();

        let mut total_price = 0;
        for (i, line) in self.lines.iter_mut().take(line_count).enumerate() {
            let partkey = self.partkey.next_int(1, self.max_partkey);
            let suppkey = self.suppkey.next_int(1, self.max_suppkey);
            let quantity = self.quantity.next_int(1, 50);
            let discount = self.discount.next_int(0, 10);
            let tax = self.tax.next_int(0, 8);
            let commit_offset = date_offset + self.commit_date.next_int(30, 90);
            let ship_mode = self.ship_mode.pick(ship_modes);

            let price = retail_price(partkey);
            let extended_price = price * quantity;
            let discounted = extended_price * (100 - discount) / 100;
            total_price += discounted * (100 + tax) / 100;

            *line = LineOrder {
                lo_orderkey: orderkey,
                lo_linenumber: i as i64 + 1,
                lo_custkey: custkey,
                lo_partkey: partkey,
                lo_suppkey: suppkey,
                lo_orderdate: orderdate,
                lo_orderpriority: priority,
                lo_shippriority: 0,
                lo_quantity: quantity,
                lo_extendedprice: extended_price,
                lo_ordtotalprice: 0,
                lo_discount: discount,
                lo_revenue: discounted,
                lo_supplycost: 6 * price / 10,
                lo_tax: tax,
                lo_commitdate: i64::from(calendar::yyyymmdd(commit_offset)),
                lo_shipmode: ship_mode,
            };
        }
        for line in self.lines.iter_mut().take(line_count) {
            line.lo_ordtotalprice = total_price;
        }

        for s in self.streams_mut() {
            s.row_finished();
        }
        self.next_order += 1;
        self.orders_left -= 1;
        self.line_len = line_count;
        self.line_pos = 0;
    }
}

impl Iterator for LineOrderIter {
    type Item = LineOrder;

    #[inline]
    fn next(&mut self) -> Option<LineOrder> {
        if self.line_pos >= self.line_len {
            if self.orders_left <= 0 {
                return None;
            }
            self.make_order();
        }
        let line = self.lines.get(self.line_pos).copied();
        self.line_pos += 1;
        line
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let buffered = self.line_len.saturating_sub(self.line_pos);
        let orders = usize::try_from(self.orders_left).unwrap_or(0);
        let upper = orders
            .checked_mul(MAX_LINES)
            .and_then(|n| n.checked_add(buffered));
        (buffered.saturating_add(orders), upper)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_keys() {
        let keys: Vec<i64> = (1..=10).map(sparse_order_key).collect();
        assert_eq!(keys, [1, 2, 3, 4, 5, 6, 7, 32, 33, 34]);
        assert_eq!(sparse_order_key(1_500_000), 6_000_000);
    }

    #[test]
    fn retail_prices() {
        assert_eq!(retail_price(1), 90_100);
        assert_eq!(retail_price(155_190), 124_519);
    }

    #[test]
    fn first_row() {
        let first = LineOrderGenerator::new(1.0, 1, 1)
            .iter()
            .next()
            .map(|l| l.to_string());
        assert_eq!(
            first.as_deref(),
            Some(
                "1|1|7381|155190|828|19960102|5-LOW|0|17|2116823|17366547|4|2032150|74711|2|19960212|TRUCK|"
            )
        );
    }

    #[test]
    fn chunks_concatenate_to_the_whole_table() {
        let whole: Vec<LineOrder> = LineOrderGenerator::new(0.01, 1, 1).iter().collect();
        let chunked: Vec<LineOrder> = (1..=3)
            .flat_map(|p| LineOrderGenerator::new(0.01, p, 3).iter())
            .collect();
        assert_eq!(whole.len() as i64, LineOrderGenerator::row_count(0.01));
        let chunk_lens: i64 = (1..=3)
            .map(|p| LineOrderGenerator::new(0.01, p, 3).len())
            .sum();
        assert_eq!(chunk_lens, whole.len() as i64);
        assert_eq!(whole, chunked);
    }
}
