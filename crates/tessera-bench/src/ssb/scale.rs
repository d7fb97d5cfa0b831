//! Scale factor handling and row counts, as ssb-dbgen's `driver.c` and `dss.h` compute them.
//!
//! ssb-dbgen reads `-s <SF>` into a double and then:
//!
//! - for SF >= 1, uses the integer part (`scale = (long) SF`, so SF 1.5 is SF 1) and scales
//!   the base row counts by it;
//! - for SF < 1, sets `scale = 1` and multiplies each table's *base* row count by SF
//!   (truncated, at least 1) instead.
//!
//! Row counts (SSB specification §2 and `driver.c`):
//!
//! | table     | rows                                                  |
//! |-----------|-------------------------------------------------------|
//! | part      | 200,000 × ⌊1 + log2(scale)⌋                           |
//! | supplier  | 2,000 × scale                                         |
//! | customer  | 30,000 × scale                                        |
//! | date      | 2,557 (1992-01-01 … 1998-12-31), independent of SF    |
//! | lineorder | the lines of 1,500,000 × scale orders (1–7 per order) |
//!
//! Foreign-key ranges drawn in lineorder (`dss.h`): `lo_custkey` in `[1, 30,000 × scale]`,
//! `lo_suppkey` in `[1, 2,000 × scale]`, and `lo_partkey` in
//! `[1, 200,000 × (⌊ln(scale)⌋ + 1)]` — note dbgen's `L_PKEY_MAX` uses the *natural*
//! logarithm while the part table uses log2, so above SF 1 lineorder references only a
//! prefix of the parts. This is reproduced as is.
//!
//! One deliberate deviation: for SF < 1, dbgen also shrinks the date table's base count (a
//! side effect of its loop over all tables), leaving most order dates without a date row.
//! This generator always produces the full 2,557-day date table.

/// Base row counts (`tdefs[].base` in `driver.c`).
pub(crate) const PART_BASE: i64 = 200_000;
pub(crate) const SUPPLIER_BASE: i64 = 2_000;
pub(crate) const CUSTOMER_BASE: i64 = 30_000;
/// `tdefs[LINE].base` (150,000) times `ORDERS_PER_CUST` (10).
pub(crate) const ORDER_BASE: i64 = 1_500_000;
/// Days from 1992-01-01 to 1998-12-31 inclusive (`TOTDATE`).
pub const DATE_ROWS: i64 = 2_557;

/// A scale factor interpreted the way ssb-dbgen interprets `-s`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scale {
    /// dbgen's integer `scale`.
    scale: i64,
    /// Base-count multiplier for SF < 1 (`flt_scale`), `None` for SF >= 1.
    fraction: Option<f64>,
}

impl Scale {
    /// Interpret `scale_factor` as dbgen does. Non-finite values give empty tables
    /// (a multiplier of 0); values <= 0 give dbgen's minimal one-row bases.
    pub(crate) fn new(scale_factor: f64) -> Self {
        if !scale_factor.is_finite() {
            Self {
                scale: 0,
                fraction: None,
            }
        } else if scale_factor < 1.0 {
            Self {
                scale: 1,
                fraction: Some(scale_factor),
            }
        } else {
            Self {
                scale: scale_factor as i64,
                fraction: None,
            }
        }
    }

    /// A table's base row count after dbgen's fractional-SF adjustment.
    fn base(&self, base: i64) -> i64 {
        match self.fraction {
            Some(f) => ((base as f64 * f) as i64).max(1),
            None => base,
        }
    }

    /// Rows in `part`: `base × floor(1 + log2(scale))`.
    pub(crate) fn part_rows(&self) -> i64 {
        if self.scale < 1 {
            return 0;
        }
        let factor = (1.0 + (self.scale as f64).ln() / 2f64.ln()).floor();
        (self.base(PART_BASE) as f64 * factor) as i64
    }

    /// Rows in `supplier`, which is also the largest `lo_suppkey`.
    pub(crate) fn supplier_rows(&self) -> i64 {
        self.base(SUPPLIER_BASE) * self.scale
    }

    /// Rows in `customer`, which is also the largest `lo_custkey` drawn.
    pub(crate) fn customer_rows(&self) -> i64 {
        self.base(CUSTOMER_BASE) * self.scale
    }

    /// Number of orders behind `lineorder`.
    pub(crate) fn order_count(&self) -> i64 {
        self.base(ORDER_BASE) * self.scale
    }

    /// The largest `lo_partkey` drawn: `base × (floor(ln(scale)) + 1)` (`L_PKEY_MAX`).
    pub(crate) fn max_line_partkey(&self) -> i64 {
        if self.scale < 1 {
            return 0;
        }
        let factor = (self.scale as f64).ln().floor() + 1.0;
        (self.base(PART_BASE) as f64 * factor) as i64
    }
}

/// The rows of chunk `part` (1-based) of `num_parts`: `(first row index, row count)`, with
/// the first row index 0-based. Chunks split the rows evenly and the last chunk takes the
/// remainder, like `tpchgen`'s generators. An invalid `part`/`num_parts` gives no rows.
pub(crate) fn chunk(total: i64, part: i32, num_parts: i32) -> (i64, i64) {
    if num_parts < 1 || part < 1 || part > num_parts || total <= 0 {
        return (0, 0);
    }
    let per_part = total / i64::from(num_parts);
    let start = per_part * i64::from(part - 1);
    let count = if part == num_parts {
        per_part + total % i64::from(num_parts)
    } else {
        per_part
    };
    (start, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sf1_counts() {
        let s = Scale::new(1.0);
        assert_eq!(s.part_rows(), 200_000);
        assert_eq!(s.supplier_rows(), 2_000);
        assert_eq!(s.customer_rows(), 30_000);
        assert_eq!(s.order_count(), 1_500_000);
        assert_eq!(s.max_line_partkey(), 200_000);
    }

    #[test]
    fn larger_scale_factors() {
        // part: 200,000 * floor(1 + log2(SF)); lineorder partkey: 200,000 * (floor(ln SF) + 1)
        let s = Scale::new(10.0);
        assert_eq!(s.part_rows(), 800_000);
        assert_eq!(s.max_line_partkey(), 600_000);
        assert_eq!(s.customer_rows(), 300_000);
        assert_eq!(s.supplier_rows(), 20_000);
        assert_eq!(s.order_count(), 15_000_000);
        let s = Scale::new(100.0);
        assert_eq!(s.part_rows(), 1_400_000);
        assert_eq!(s.max_line_partkey(), 1_000_000);
        // Exact powers of two.
        assert_eq!(Scale::new(2.0).part_rows(), 400_000);
        assert_eq!(Scale::new(8.0).part_rows(), 800_000);
        assert_eq!(Scale::new(1024.0).part_rows(), 2_200_000);
        // The integer part only, like dbgen's `(long) flt_scale`.
        assert_eq!(Scale::new(1.9), Scale::new(1.0));
    }

    #[test]
    fn fractional_scale_factors() {
        let s = Scale::new(0.01);
        assert_eq!(s.part_rows(), 2_000);
        assert_eq!(s.supplier_rows(), 20);
        assert_eq!(s.customer_rows(), 300);
        assert_eq!(s.order_count(), 15_000);
        assert_eq!(s.max_line_partkey(), 2_000);
        let tiny = Scale::new(1e-9);
        assert_eq!(tiny.supplier_rows(), 1);
        assert_eq!(Scale::new(f64::NAN).order_count(), 0);
    }

    #[test]
    fn chunks_cover_all_rows() {
        assert_eq!(chunk(10, 1, 3), (0, 3));
        assert_eq!(chunk(10, 2, 3), (3, 3));
        assert_eq!(chunk(10, 3, 3), (6, 4));
        assert_eq!(chunk(10, 1, 1), (0, 10));
        assert_eq!(chunk(10, 0, 3), (0, 0));
        assert_eq!(chunk(10, 4, 3), (0, 0));
        assert_eq!(chunk(10, 1, 0), (0, 0));
    }
}
