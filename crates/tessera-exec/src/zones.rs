//! Zone-map pruning: a scan pipeline whose first operators are filters skips the rows
//! that the tiles' minimum and maximum prove none of can pass ([`tessera_ir::zone_bounds`]),
//! before anything is evaluated. The CPU backend skips batches (64 Ki rows, 32 tiles);
//! GPU kernels skip their tiles by a bitmap of 2048-row units ([`tile_bitmap`]). It pays
//! where the data is clustered on the filtered column (a table loaded in date order,
//! keys in key order); elsewhere each batch costs a few comparisons.

use tessera_ir::{Operator, zone_bounds};
use tessera_storage::LoadedTable;

/// Per batch of `table`, whether the leading filters of `operators` (over the scan's
/// columns `columns`, stored column numbers) reject every row of it.
pub fn skipped_batches(table: &LoadedTable, columns: &[usize], operators: &[Operator]) -> Vec<bool> {
    let bounds = zone_bounds(operators);
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
                    Some(Some((lo, hi))) => b.excludes(lo, hi),
                    None => false,
                }
            })
        })
        .collect()
}

/// Rows a bit of a GPU kernel's zone bitmap stands for: a stored tile's, so that a kernel
/// tile (at most 1 024 rows, `codegen::MAX_ITEMS_PER_THREAD` × 128) spans at most two.
pub const ZONE_UNIT_ROWS: usize = 2048;

/// The bitmap GPU kernels skip tiles by (`tessera_zone_pass` in `cuda/zones.cuh`): bit
/// `g` set when rows `[g × ZONE_UNIT_ROWS, (g + 1) × ZONE_UNIT_ROWS)` overlap a batch
/// [`skipped_batches`] keeps, and the share of the table's rows in kept batches. None
/// when no batch is skipped (the kernel then takes a null bitmap and skips nothing).
pub fn tile_bitmap(table: &LoadedTable, columns: &[usize], operators: &[Operator]) -> Option<(Vec<u32>, f64)> {
    let skipped = skipped_batches(table, columns, operators);
    if !skipped.contains(&true) {
        return None;
    }
    let units = table.rows.div_ceil(ZONE_UNIT_ROWS).max(1);
    let mut bits = vec![0u32; units.div_ceil(32)];
    let (mut start, mut kept) = (0usize, 0usize);
    for (&rows, &skip) in table.batch_rows().iter().zip(&skipped) {
        if !skip && rows > 0 {
            kept += rows;
            for g in start / ZONE_UNIT_ROWS..=(start + rows - 1) / ZONE_UNIT_ROWS {
                bits[g / 32] |= 1 << (g % 32);
            }
        }
        start += rows;
    }
    Some((bits, kept as f64 / table.rows.max(1) as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{CmpOp, Expr, Scalar, Type};

    fn cmp(op: CmpOp, col: usize, v: i64) -> Expr {
        Expr::Cmp { op, left: Box::new(Expr::col(col, "c")), right: Box::new(Expr::lit(Scalar::Int(v), Type::Int64)) }
    }

    /// A stored table of keys 0..200 000 in order: four batches, the first three of
    /// 65 536 rows. Only the leading filters count, and only their bounds. The GPU's
    /// bitmap keeps the 2048-row units of the batches kept.
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
        // 98 units of 2048 rows: batch k holds units 32k..32k+31, the last 3 040 rows
        // units 96 and 97.
        let (bits, share) = tile_bitmap(&t, &[0], &[Operator::Filter(cmp(CmpOp::Gt, 0, 150_000))]).unwrap();
        assert_eq!(bits, [0, 0, u32::MAX, 0b11]);
        assert!((share - (200_000.0 - 131_072.0) / 200_000.0).abs() < 1e-12);
        let (bits, _) = tile_bitmap(&t, &[0], &[Operator::Filter(cmp(CmpOp::Lt, 0, 10))]).unwrap();
        assert_eq!(bits, [u32::MAX, 0, 0, 0]);
        assert_eq!(tile_bitmap(&t, &[0], &[Operator::Filter(cmp(CmpOp::GtEq, 0, 0))]), None, "nothing skipped");
        assert_eq!(tile_bitmap(&t, &[0], &[Operator::Filter(cmp(CmpOp::Eq, 0, -1))]).unwrap().0, [0; 4]);
    }
}
