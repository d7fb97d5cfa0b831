//! What zone maps (a range of stored rows' smallest and largest value) can decide of a
//! pipeline: the comparisons of a source column with a literal in its leading filters.
//! Both backends skip the rows whose zones rule such a comparison out: the CPU backend
//! its batches, the GPU kernels their tiles (`tessera-exec/src/zones.rs`).

use crate::{CmpOp, Expr, Operator, Scalar};

/// One conjunct a zone map can decide: source column `column` compared with `value`
/// (in the zone maps' integer domain: days, unscaled decimals).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneBound {
    /// The source column (its index in the pipeline's source layout).
    pub column: usize,
    /// The comparison, column on the left.
    pub op: CmpOp,
    /// The literal.
    pub value: i64,
}

impl ZoneBound {
    /// Whether `x op value` is false for every `x` in `[lo, hi]`.
    pub fn excludes(&self, lo: i64, hi: i64) -> bool {
        let v = self.value;
        match self.op {
            CmpOp::Eq => v < lo || v > hi,
            CmpOp::NotEq => lo == hi && lo == v,
            CmpOp::Lt => lo >= v,
            CmpOp::LtEq => lo > v,
            CmpOp::Gt => hi <= v,
            CmpOp::GtEq => hi < v,
            _ => false,
        }
    }
}

/// The bounds among the conjuncts of the filters `operators` start with (before any
/// other operator changes the layout).
pub fn zone_bounds(operators: &[Operator]) -> Vec<ZoneBound> {
    let mut bounds = Vec::new();
    for op in operators {
        let Operator::Filter(e) = op else { break };
        conjuncts(e, &mut |c| bounds.extend(bound(c)));
    }
    bounds
}

fn conjuncts<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    match e {
        Expr::And(l, r) => {
            conjuncts(l, f);
            conjuncts(r, f);
        }
        other => f(other),
    }
}

/// `column op literal` (or `literal op column`, flipped) with a literal in the zone
/// maps' integer domain.
fn bound(e: &Expr) -> Option<ZoneBound> {
    let Expr::Cmp { op, left, right } = e else { return None };
    let (column, value, op) = match (left.as_ref(), right.as_ref()) {
        (Expr::Column { index, .. }, Expr::Literal { value, .. }) => (*index, value, *op),
        (Expr::Literal { value, .. }, Expr::Column { index, .. }) => (*index, value, flip(*op)?),
        _ => return None,
    };
    let value = match value {
        Scalar::Int(v) => *v,
        Scalar::UInt(v) => i64::try_from(*v).ok()?,
        Scalar::Decimal(v) => i64::try_from(*v).ok()?,
        Scalar::Date32(d) => i64::from(*d),
        _ => return None,
    };
    Some(ZoneBound { column, op, value })
}

/// `a op b` as `b op' a`.
fn flip(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Eq => CmpOp::Eq,
        CmpOp::NotEq => CmpOp::NotEq,
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::LtEq => CmpOp::GtEq,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::GtEq => CmpOp::LtEq,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Type;

    fn cmp(op: CmpOp, col: usize, v: i64) -> Expr {
        Expr::Cmp { op, left: Box::new(Expr::col(col, "c")), right: Box::new(Expr::lit(Scalar::Int(v), Type::Int64)) }
    }

    fn excludes(op: CmpOp, value: i64, lo: i64, hi: i64) -> bool {
        ZoneBound { column: 0, op, value }.excludes(lo, hi)
    }

    #[test]
    fn comparisons_exclude_ranges_they_cannot_match() {
        assert!(excludes(CmpOp::Eq, 5, 6, 9) && excludes(CmpOp::Eq, 10, 6, 9) && !excludes(CmpOp::Eq, 6, 6, 9));
        assert!(excludes(CmpOp::Lt, 6, 6, 9) && !excludes(CmpOp::Lt, 7, 6, 9));
        assert!(excludes(CmpOp::LtEq, 5, 6, 9) && !excludes(CmpOp::LtEq, 6, 6, 9));
        assert!(excludes(CmpOp::Gt, 9, 6, 9) && !excludes(CmpOp::Gt, 8, 6, 9));
        assert!(excludes(CmpOp::GtEq, 10, 6, 9) && !excludes(CmpOp::GtEq, 9, 6, 9));
        assert!(excludes(CmpOp::NotEq, 4, 4, 4) && !excludes(CmpOp::NotEq, 4, 4, 5));
        assert!(!excludes(CmpOp::Distinct, 4, 5, 5));
    }

    #[test]
    fn bounds_come_from_column_literal_comparisons_in_either_order() {
        assert_eq!(bound(&cmp(CmpOp::Lt, 2, 7)), Some(ZoneBound { column: 2, op: CmpOp::Lt, value: 7 }));
        let flipped = Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::lit(Scalar::Int(7), Type::Int64)), right: Box::new(Expr::col(1, "c")) };
        assert_eq!(bound(&flipped), Some(ZoneBound { column: 1, op: CmpOp::Gt, value: 7 }));
        let date = Expr::Cmp { op: CmpOp::GtEq, left: Box::new(Expr::col(0, "d")), right: Box::new(Expr::lit(Scalar::Date32(9000), Type::Date32)) };
        assert_eq!(bound(&date).map(|b| b.value), Some(9000));
        let float = Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::col(0, "f")), right: Box::new(Expr::lit(Scalar::Float(1.5), Type::Float64)) };
        assert_eq!(bound(&float), None);
        let or = Expr::And(Box::new(cmp(CmpOp::Gt, 0, 1)), Box::new(Expr::Or(Box::new(cmp(CmpOp::Lt, 0, 0)), Box::new(cmp(CmpOp::Gt, 0, 9)))));
        assert_eq!(zone_bounds(&[Operator::Filter(or)]).len(), 1, "an OR is not a bound");
        // Only the leading filters count.
        let project = Operator::Project { exprs: vec![Expr::col(0, "k")], fields: vec![crate::Field::new("k", Type::Int64, false)] };
        assert!(zone_bounds(&[project, Operator::Filter(cmp(CmpOp::Lt, 0, 1))]).is_empty());
    }
}
