//! Estimated share of rows a filter keeps, from column statistics.
//!
//! The estimates choose build sides and, through each hash build's estimated rows, how
//! the GPU code generator orders a pipeline's probes (most selective first) and which
//! columns it loads before the probes (those most of whose sectors are read anyway).
//! They follow the textbook (System R) rules: an equality keeps one distinct value's
//! share, a range its share of the column's min..max, conjuncts multiply (independence),
//! disjuncts add less their overlap. What statistics cannot tell keeps a documented
//! default.

use tessera_ir::{CmpOp, Expr, Scalar};

use crate::ColStats;

/// Share kept by a predicate nothing is known about (LIKE, IS NULL, functions, a
/// comparison of two columns): a quarter, the planner's long-standing guess.
pub(crate) const DEFAULT_SELECTIVITY: f64 = 0.25;

/// `column = constant` when the column's distinct count is unknown (PostgreSQL's
/// `DEFAULT_EQ_SEL`).
const DEFAULT_EQ_SELECTIVITY: f64 = 0.005;

/// One bound (`<`, `>=`, ...) on a column whose range is unknown (System R's 1/3).
const DEFAULT_INEQ_SELECTIVITY: f64 = 1.0 / 3.0;

/// Both bounds on one column whose range is unknown, e.g. a string `BETWEEN`: narrower
/// than two independent bounds, as ranges written with both ends usually are
/// (PostgreSQL's `DEFAULT_RANGE_INEQ_SEL`).
const DEFAULT_RANGE_SELECTIVITY: f64 = 0.005;

/// Estimated share of rows for which `e` is true, given statistics of the input columns.
pub(crate) fn selectivity(e: &Expr, stats: &[ColStats]) -> f64 {
    estimate(e, stats).clamp(0.0, 1.0)
}

fn estimate(e: &Expr, stats: &[ColStats]) -> f64 {
    match e {
        Expr::Literal { value: Scalar::Boolean(b), .. } => f64::from(u8::from(*b)),
        Expr::Literal { .. } => 0.0,
        Expr::And(a, b) => match two_sided_range(a, b, stats) {
            Some(s) => s,
            None => selectivity(a, stats) * selectivity(b, stats),
        },
        Expr::Or(a, b) => {
            let (x, y) = (selectivity(a, stats), selectivity(b, stats));
            x + y - x * y
        }
        Expr::Not(a) => 1.0 - selectivity(a, stats),
        Expr::Cmp { op, left, right } => compare(*op, left, right, stats),
        Expr::InList { expr, list, negated } => {
            let kept = match column_of(expr).and_then(|c| distinct_of(c, stats)) {
                Some(d) => (list.len() as f64 / d).min(1.0),
                None => (list.len() as f64 * DEFAULT_EQ_SELECTIVITY).min(1.0),
            };
            if *negated {
                1.0 - kept
            } else {
                kept
            }
        }
        _ => DEFAULT_SELECTIVITY,
    }
}

/// `column op constant` (either way round).
fn compare(op: CmpOp, left: &Expr, right: &Expr, stats: &[ColStats]) -> f64 {
    let Some((col, value, op)) = column_vs_constant(op, left, right) else {
        return DEFAULT_SELECTIVITY;
    };
    let eq = || distinct_of(col, stats).map_or(DEFAULT_EQ_SELECTIVITY, |d| 1.0 / d);
    match op {
        CmpOp::Eq | CmpOp::NotDistinct => eq(),
        CmpOp::NotEq | CmpOp::Distinct => 1.0 - eq(),
        CmpOp::Lt | CmpOp::LtEq | CmpOp::Gt | CmpOp::GtEq => {
            let (lo, hi) = bounds(op, value);
            range_share(col, lo, hi, stats).unwrap_or(DEFAULT_INEQ_SELECTIVITY)
        }
    }
}

/// `column op value` as (inclusive low, inclusive high), for the four inequalities.
fn bounds(op: CmpOp, value: Option<i64>) -> (Option<Option<i64>>, Option<Option<i64>>) {
    match op {
        CmpOp::Lt => (None, Some(value.map(|v| v.saturating_sub(1)))),
        CmpOp::LtEq => (None, Some(value)),
        CmpOp::Gt => (Some(value.map(|v| v.saturating_add(1))), None),
        _ => (Some(value), None),
    }
}

/// `x >= a AND x <= b` (any strictness) on one column: the share of its range between
/// the bounds, or [`DEFAULT_RANGE_SELECTIVITY`] when the range is unknown.
fn two_sided_range(a: &Expr, b: &Expr, stats: &[ColStats]) -> Option<f64> {
    let (ca, la, ha) = bound(a)?;
    let (cb, lb, hb) = bound(b)?;
    if ca != cb || (la.is_some() == lb.is_some()) {
        return None;
    }
    let (lo, hi) = (la.or(lb), ha.or(hb));
    Some(range_share(ca, lo, hi, stats).unwrap_or(DEFAULT_RANGE_SELECTIVITY))
}

/// A one-sided integer bound `column op constant` as (column, inclusive low, inclusive
/// high); a bound on a non-integer constant is a bound of unknown value.
fn bound(e: &Expr) -> Option<(usize, Option<Option<i64>>, Option<Option<i64>>)> {
    let Expr::Cmp { op, left, right } = e else { return None };
    let (col, value, op) = column_vs_constant(*op, left, right)?;
    match op {
        CmpOp::Lt | CmpOp::LtEq | CmpOp::Gt | CmpOp::GtEq => {
            let (lo, hi) = bounds(op, value);
            Some((col, lo, hi))
        }
        _ => None,
    }
}

/// Share of the column's integer range `min..=max` within `lo..=hi` (a missing side is
/// open; a side of unknown value, `Some(None)`, makes the share unknown).
fn range_share(col: usize, lo: Option<Option<i64>>, hi: Option<Option<i64>>, stats: &[ColStats]) -> Option<f64> {
    let (min, max) = stats.get(col)?.range?;
    if max < min {
        return None;
    }
    let lo = match lo {
        Some(v) => v?.max(min),
        None => min,
    };
    let hi = match hi {
        Some(v) => v?.min(max),
        None => max,
    };
    if hi < lo {
        return Some(0.0);
    }
    // i128: max - min + 1 can exceed i64.
    Some(((i128::from(hi) - i128::from(lo) + 1) as f64) / ((i128::from(max) - i128::from(min) + 1) as f64))
}

/// `left op right` as `column op' constant` (the operator flipped when the constant is on
/// the left): the column, the constant's integer value if it has one, and the operator.
fn column_vs_constant(op: CmpOp, left: &Expr, right: &Expr) -> Option<(usize, Option<i64>, CmpOp)> {
    match (column_of(left), constant_of(right), column_of(right), constant_of(left)) {
        (Some(c), Some(v), _, _) => Some((c, v, op)),
        (_, _, Some(c), Some(v)) => Some((c, v, flip(op))),
        _ => None,
    }
}

/// The column `e` reads, through casts (which keep an integer's value).
fn column_of(e: &Expr) -> Option<usize> {
    match e {
        Expr::Column { index, .. } => Some(*index),
        Expr::Cast { expr, .. } => column_of(expr),
        _ => None,
    }
}

/// `Some(value)` for a constant: its integer value where it has one (integers, dates),
/// `Some(None)` for other constants.
fn constant_of(e: &Expr) -> Option<Option<i64>> {
    match e {
        Expr::Literal { value, .. } => Some(match value {
            Scalar::Int(v) => Some(*v),
            Scalar::UInt(v) => i64::try_from(*v).ok(),
            Scalar::Date32(d) => Some(i64::from(*d)),
            _ => None,
        }),
        Expr::Cast { expr, .. } => constant_of(expr),
        _ => None,
    }
}

fn distinct_of(col: usize, stats: &[ColStats]) -> Option<f64> {
    stats.get(col)?.distinct.filter(|&d| d > 0).map(|d| d as f64)
}

/// The operator with its operands swapped (`5 < x` is `x > 5`).
fn flip(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::LtEq => CmpOp::GtEq,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::GtEq => CmpOp::LtEq,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::Type;

    fn stats() -> Vec<ColStats> {
        vec![
            // 0: d_year 1992..=1998, 7 distinct.
            ColStats { range: Some((1992, 1998)), dictionary: None, distinct: Some(7), unique: None, origin: None, ..ColStats::default() },
            // 1: a dictionary string with 25 distinct values.
            ColStats { range: None, dictionary: Some(25), distinct: Some(25), unique: None, origin: None, ..ColStats::default() },
            // 2: nothing known.
            ColStats::default(),
        ]
    }

    fn int(v: i64) -> Box<Expr> {
        Box::new(Expr::lit(Scalar::Int(v), Type::Int32))
    }

    fn text(s: &str) -> Box<Expr> {
        Box::new(Expr::lit(Scalar::Utf8(s.into()), Type::Utf8))
    }

    fn col(i: usize) -> Box<Expr> {
        Box::new(Expr::col(i, format!("c{i}")))
    }

    fn cmp(op: CmpOp, l: Box<Expr>, r: Box<Expr>) -> Expr {
        Expr::Cmp { op, left: l, right: r }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn equality_keeps_one_distinct_value() {
        let s = stats();
        assert!(close(selectivity(&cmp(CmpOp::Eq, col(0), int(1993)), &s), 1.0 / 7.0));
        assert!(close(selectivity(&cmp(CmpOp::Eq, text("MFGR#12"), col(1)), &s), 1.0 / 25.0));
        assert!(close(selectivity(&cmp(CmpOp::NotEq, col(1), text("x")), &s), 24.0 / 25.0));
        assert!(close(selectivity(&cmp(CmpOp::Eq, col(2), int(3)), &s), DEFAULT_EQ_SELECTIVITY));
    }

    #[test]
    fn ranges_take_their_share_of_min_to_max() {
        let s = stats();
        // BETWEEN 1992 AND 1997 as translated: two bounds under AND.
        let between = Expr::And(Box::new(cmp(CmpOp::GtEq, col(0), int(1992))), Box::new(cmp(CmpOp::LtEq, col(0), int(1997))));
        assert!(close(selectivity(&between, &s), 6.0 / 7.0));
        assert!(close(selectivity(&cmp(CmpOp::Lt, col(0), int(1994)), &s), 2.0 / 7.0));
        // Constant on the left: 1994 < d_year is d_year > 1994.
        assert!(close(selectivity(&cmp(CmpOp::Lt, int(1994), col(0)), &s), 4.0 / 7.0));
        assert_eq!(selectivity(&cmp(CmpOp::Gt, col(0), int(2000)), &s), 0.0);
        // A string BETWEEN has no range to measure.
        let strings = Expr::And(Box::new(cmp(CmpOp::GtEq, col(1), text("a"))), Box::new(cmp(CmpOp::LtEq, col(1), text("b"))));
        assert!(close(selectivity(&strings, &s), DEFAULT_RANGE_SELECTIVITY));
        assert!(close(selectivity(&cmp(CmpOp::Gt, col(2), int(0)), &s), DEFAULT_INEQ_SELECTIVITY));
    }

    #[test]
    fn lists_and_connectives() {
        let s = stats();
        let in2 = Expr::InList { expr: col(0), list: vec![Scalar::Int(1997), Scalar::Int(1998)], negated: false };
        assert!(close(selectivity(&in2, &s), 2.0 / 7.0));
        let not_in2 = Expr::InList { expr: col(0), list: vec![Scalar::Int(1997), Scalar::Int(1998)], negated: true };
        assert!(close(selectivity(&not_in2, &s), 5.0 / 7.0));
        let a = cmp(CmpOp::Eq, col(0), int(1993));
        let b = cmp(CmpOp::Eq, col(1), text("x"));
        let and = Expr::And(Box::new(a.clone()), Box::new(b.clone()));
        assert!(close(selectivity(&and, &s), 1.0 / 175.0));
        let or = Expr::Or(Box::new(a.clone()), Box::new(b));
        assert!(close(selectivity(&or, &s), 1.0 / 7.0 + 1.0 / 25.0 - 1.0 / 175.0));
        assert!(close(selectivity(&Expr::Not(Box::new(a)), &s), 6.0 / 7.0));
        let like = Expr::Like { expr: col(1), pattern: "%x%".into(), negated: false, case_insensitive: false };
        assert!(close(selectivity(&like, &s), DEFAULT_SELECTIVITY));
    }
}
