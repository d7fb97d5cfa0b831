//! Zone-map pruning on the CPU backend: a scan pipeline whose first operators are
//! filters skips the batches (64 Ki rows, 32 tiles) that the tiles' minimum and maximum
//! prove no row of can pass, before anything is evaluated. It pays where the data is
//! clustered on the filtered column (a table loaded in date order, keys in key order);
//! elsewhere each batch costs a few comparisons.

use tessera_ir::{CmpOp, Expr, Operator, Scalar};
use tessera_storage::LoadedTable;

/// One conjunct a zone map can decide: source column `column` compared with `value`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound {
    column: usize,
    op: CmpOp,
    value: i64,
}

/// Per batch of `table`, whether the leading filters of `operators` (over the scan's
/// columns `columns`, stored column numbers) reject every row of it.
pub fn skipped_batches(table: &LoadedTable, columns: &[usize], operators: &[Operator]) -> Vec<bool> {
    let mut bounds = Vec::new();
    for op in operators {
        let Operator::Filter(e) = op else { break };
        conjuncts(e, &mut |c| bounds.extend(bound(c)));
    }
    let batches = table.batch_rows().len();
    if bounds.is_empty() {
        return vec![false; batches];
    }
    (0..batches)
        .map(|i| {
            bounds.iter().any(|b| {
                let Some(&stored) = columns.get(b.column) else { return false };
                match table.batch_zone(stored, i) {
                    // No value at all: every comparison is NULL, no row passes.
                    Some(None) => true,
                    Some(Some((lo, hi))) => excludes(b.op, b.value, lo, hi),
                    None => false,
                }
            })
        })
        .collect()
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
fn bound(e: &Expr) -> Option<Bound> {
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
    Some(Bound { column, op, value })
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

/// Whether `x op v` is false for every `x` in `[lo, hi]`.
fn excludes(op: CmpOp, v: i64, lo: i64, hi: i64) -> bool {
    match op {
        CmpOp::Eq => v < lo || v > hi,
        CmpOp::NotEq => lo == hi && lo == v,
        CmpOp::Lt => lo >= v,
        CmpOp::LtEq => lo > v,
        CmpOp::Gt => hi <= v,
        CmpOp::GtEq => hi < v,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::Type;

    fn cmp(op: CmpOp, col: usize, v: i64) -> Expr {
        Expr::Cmp { op, left: Box::new(Expr::col(col, "c")), right: Box::new(Expr::lit(Scalar::Int(v), Type::Int64)) }
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
        assert_eq!(bound(&cmp(CmpOp::Lt, 2, 7)), Some(Bound { column: 2, op: CmpOp::Lt, value: 7 }));
        let flipped = Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::lit(Scalar::Int(7), Type::Int64)), right: Box::new(Expr::col(1, "c")) };
        assert_eq!(bound(&flipped), Some(Bound { column: 1, op: CmpOp::Gt, value: 7 }));
        let date = Expr::Cmp { op: CmpOp::GtEq, left: Box::new(Expr::col(0, "d")), right: Box::new(Expr::lit(Scalar::Date32(9000), Type::Date32)) };
        assert_eq!(bound(&date).map(|b| b.value), Some(9000));
        let float = Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::col(0, "f")), right: Box::new(Expr::lit(Scalar::Float(1.5), Type::Float64)) };
        assert_eq!(bound(&float), None);
        let mut found = Vec::new();
        conjuncts(&Expr::And(Box::new(cmp(CmpOp::Gt, 0, 1)), Box::new(Expr::Or(Box::new(cmp(CmpOp::Lt, 0, 0)), Box::new(cmp(CmpOp::Gt, 0, 9))))), &mut |c| found.extend(bound(c)));
        assert_eq!(found.len(), 1, "an OR is not a bound");
    }

    /// A stored table of keys 0..200 000 in order: four batches, the first three of
    /// 65 536 rows. Only the leading filters count, and only their bounds.
    #[test]
    fn batches_outside_a_filters_range_are_skipped() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let store = tessera_storage::Store::open(dir.path()).unwrap();
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new("k", arrow::datatypes::DataType::Int64, false)]));
        let mut tx = store.begin().unwrap();
        tx.create_table("t", &schema, false, false).unwrap();
        let mut w = tx.writer("t", false).unwrap();
        let keys = arrow::array::Int64Array::from_iter_values(0..200_000);
        w.write(&arrow::array::RecordBatch::try_new(schema, vec![Arc::new(keys)]).unwrap()).unwrap();
        w.finish().unwrap();
        tx.commit().unwrap();
        let m = store.manifest().unwrap();
        let t = store.load(m.table("t").unwrap()).unwrap();
        let skipped = |ops: &[Operator]| skipped_batches(&t, &[0], ops);
        assert_eq!(skipped(&[Operator::Filter(cmp(CmpOp::Gt, 0, 150_000))]), [true, true, false, false]);
        assert_eq!(skipped(&[Operator::Filter(cmp(CmpOp::Lt, 0, 65_536))]), [false, true, true, true]);
        let both = Expr::And(Box::new(cmp(CmpOp::GtEq, 0, 70_000)), Box::new(cmp(CmpOp::LtEq, 0, 70_001)));
        assert_eq!(skipped(&[Operator::Filter(both.clone())]), [true, false, true, true]);
        assert_eq!(skipped(&[Operator::Filter(cmp(CmpOp::Eq, 0, -1))]), [true; 4]);
        // A filter after a projection reads another layout: not used.
        let project = Operator::Project { exprs: vec![Expr::col(0, "k")], fields: vec![tessera_ir::Field::new("k", Type::Int64, false)] };
        assert_eq!(skipped(&[project, Operator::Filter(both)]), [false; 4]);
        assert_eq!(skipped(&[]), [false; 4]);
    }
}
