//! Passes over the kernel IR that need no knowledge of operators: dropping loads nothing
//! reads, and cutting the statements into stages.

use std::collections::HashSet;

use super::ir::{KernelIr, Load, Stage, Stmt, Use, ValueId};

/// Removes loads of probe payloads that nothing reads: a probe loads every payload
/// column of its table, and the plan may not use them all (dead loads would also keep
/// slots alive that a warp queue would then store, see `defer.rs`).
pub fn drop_unread_payloads(ir: &mut KernelIr) {
    let mut used: HashSet<ValueId> = HashSet::new();
    for s in &ir.stmts {
        s.for_each_use(&mut |u| {
            if let Use::Value(v) = u {
                used.insert(v);
            }
        });
    }
    ir.stmts.retain(|s| !matches!(s, Stmt::Def { value, load: Some(Load::Payload { .. }), .. } if !used.contains(value)));
}

/// Ends a stage before each row-at-a-time load of a costly column (`costly`, by column:
/// in runs, and bit-packed in kernels of many items a thread, see `codegen::assemble`) where the rejections before it leave a share of the rows
/// small enough that a warp of `items` rows a lane often has none left
/// ([`super::print::warp_skip_likely`]): the warp then votes before the new stage and
/// skips the load with the rest of the tile. Left in the stage of the tests before it,
/// the load was predicated, not skipped: a row of runs is a directory word, a count of
/// bits and a second load (about 14 instructions an item, SSB q3.2's dates over compact
/// columns), issued for every item whatever the tests said. On an H200 (2026-11-30h run
/// 8) SSB SF 100's compact kernels took 21.79 ms against 22.31 without (q3.2 1.73 →
/// 1.46); SF 20's 4.66 against 4.75. A byte-narrowed or plain column's load is one
/// instruction and stays.
///
/// Only where a test with an estimate came since the last such cut: a filter's test
/// (no estimate) gives no vote a reason to skip more than the last one did.
pub fn cut_before_compact_loads(ir: &mut KernelIr, costly: &[bool], items: u32) {
    let mut out = Vec::with_capacity(ir.stmts.len());
    let mut cut_at = 1.0f64;
    for s in std::mem::take(&mut ir.stmts) {
        if let Stmt::Def { load: Some(Load::Column { column, pass }), .. } = &s {
            if costly.get(*column).copied().unwrap_or(false) && *pass < cut_at && super::print::warp_skip_likely(*pass, items) && !matches!(out.last(), Some(Stmt::Cut) | None) {
                out.push(Stmt::Cut);
                cut_at = *pass;
            }
        }
        out.push(s);
    }
    ir.stmts = out;
}

/// Cuts `stmts` into stages: a stage ends before the first statement that uses a value
/// loaded from global memory in it (and at every [`Stmt::Cut`], and after an
/// [`Stmt::Expand`]), so a thread issues each
/// load for all its items — together with every other load that does not depend on it —
/// before any item waits for its value (Crystal's `BlockLoad` before `BlockPred`): each
/// thread keeps `ITEMS` times as many loads in flight, which is what keeps HBM busy.
pub fn stages(stmts: &[Stmt]) -> Vec<Stage> {
    let mut out = Vec::new();
    let mut stage: Stage = Vec::new();
    let mut in_flight: HashSet<ValueId> = HashSet::new();
    for s in stmts {
        if matches!(s, Stmt::Cut) {
            in_flight.clear();
            if !stage.is_empty() {
                out.push(std::mem::take(&mut stage));
            }
            continue;
        }
        let mut waits = false;
        s.for_each_use(&mut |u| waits |= matches!(u, Use::Value(v) if in_flight.contains(&v)));
        if waits {
            in_flight.clear();
            out.push(std::mem::take(&mut stage));
        }
        if let Stmt::Def { value, load: Some(_), .. } = s {
            in_flight.insert(*value);
        }
        stage.push(s.clone());
        // The statements after an expansion run on its queue (`defer.rs`).
        if matches!(s, Stmt::Expand { .. }) {
            in_flight.clear();
            out.push(std::mem::take(&mut stage));
        }
    }
    if !stage.is_empty() {
        out.push(stage);
    }
    out
}

/// Whether any statement of `stmts` uses `u`.
pub fn any_uses(stmts: &[Stmt], u: Use) -> bool {
    stmts.iter().any(|s| s.uses(u))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::ir::CExpr;
    use crate::cx;

    fn def(v: usize, expr: CExpr, load: Option<Load>) -> Stmt {
        Stmt::Def { value: ValueId(v), expr, load }
    }

    #[test]
    fn a_stage_ends_before_the_first_use_of_a_value_loaded_in_it() {
        let col = |c| Some(Load::Column { column: c, pass: 1.0 });
        let v = |i| CExpr::value(ValueId(i));
        let stmts = vec![
            // Two independent loads share a stage...
            def(0, cx!["col0[", CExpr::row(), "]"], col(0)),
            def(1, cx!["col1[", CExpr::row(), "]"], col(1)),
            // ...the first use of one ends it.
            Stmt::Reject { cond: cx!["!(", v(0), " < 3)"], flag: None, pass: 1.0 },
            // Using a value loaded in an earlier stage does not.
            def(2, cx![v(1), " + 1"], None),
            Stmt::Cut,
            def(3, cx![v(2), " * 2"], None),
        ];
        let st = stages(&stmts);
        assert_eq!(st.iter().map(Vec::len).collect::<Vec<_>>(), vec![2, 2, 1]);
    }

    /// A row-at-a-time load of a compact column after a test that leaves few rows starts
    /// a stage of its own; a plain column's load, one before any test, and one after
    /// tests that left most rows do not.
    #[test]
    fn compact_loads_after_selective_tests_start_a_stage() {
        let v = |i| CExpr::value(ValueId(i));
        let load = |i: usize, column, pass| def(i, cx![format!("col{column}["), CExpr::row(), "]"], Some(Load::Column { column, pass }));
        let test = |i, pass| Stmt::Reject { cond: cx!["!", v(i)], flag: None, pass };
        let mut ir = KernelIr::default();
        ir.stmts = vec![
            load(0, 0, 1.0),
            test(0, 0.5),
            // Half the rows left: a warp of 64 rows almost never loses them all.
            load(1, 1, 0.5),
            test(1, 0.001),
            // One row in 1,000 left: a cut before the compact column 1 ...
            load(2, 1, 0.001),
            // ... none before the plain column 2 ...
            load(3, 2, 0.001),
            // ... nor again without a new estimate.
            load(4, 3, 0.001),
        ];
        cut_before_compact_loads(&mut ir, &[true, true, false, true], 2);
        let cuts: Vec<usize> = ir.stmts.iter().enumerate().filter(|(_, s)| matches!(s, Stmt::Cut)).map(|(k, _)| k).collect();
        assert_eq!(cuts, vec![4], "{:?}", ir.stmts);
        assert!(matches!(ir.stmts[5], Stmt::Def { value: ValueId(2), .. }));
    }

    #[test]
    fn payload_loads_nothing_reads_are_dropped() {
        let payload = Some(Load::Payload { probe: 0, column: 0 });
        let mut ir = KernelIr::default();
        ir.stmts = vec![
            def(0, cx!["h0_p0[s]"], payload),
            def(1, cx!["h0_p1[s]"], Some(Load::Payload { probe: 0, column: 1 })),
            Stmt::Effect(cx!["sum += ", CExpr::value(ValueId(1)), ";"]),
        ];
        drop_unread_payloads(&mut ir);
        assert_eq!(ir.stmts.len(), 2);
        assert!(matches!(ir.stmts[0], Stmt::Def { value: ValueId(1), .. }));
    }
}
