//! Rows that pass a selective pipeline's tests finish in full warps.
//!
//! After its last row test a probe pipeline reads the payloads of the slots its probes
//! found and aggregates: global loads from L2 for the few rows left. Done in place, each
//! warp waits for one L2 round trip per tile for the one or two of its rows that passed.
//! Instead each warp appends the values the rest of the pipeline needs (slots, columns,
//! the row number) to a queue in shared memory (a ballot and a population count, no
//! barrier), and once 32 rows are queued the warp runs the rest of the pipeline on them,
//! one a lane: one round trip for 32 rows. What is left in a queue runs after the last
//! tile.
//!
//! Only for sinks that aggregate into a shared `GroupTable::Direct`: with global atomics
//! the 32 lanes' atomics on a few hot L2 lines made it slower (measured on an H200,
//! `benchmarks/results/README.md`, "Warp queues").
//!
//! An aggregation queues earlier ([`early_split`]): after its first row test that leaves
//! few rows, when a load follows it (a probe's bit, a column read at the row). A scalar
//! one (sums in each thread's registers, no atomics a row) always; a grouped one into a
//! direct table, or into the global arrays where the queue saves decoding compact
//! columns and few queued rows reach the atomics ([`grouped_early`]). Such kernels are
//! bound by the instructions they issue, not by their bytes, and a warp issues an item's
//! statements whenever one of its 32 lanes still holds the item: with 13% of the rows
//! left (SSB q1.1's discount and quantity) nearly every warp does. Queued, the date
//! probe, the product and the sum run once a lane for 32 rows, and a column only the
//! rows left read (SSB's order dates in runs, two dependent loads a row) is read for
//! them alone, at their rows.
//!
//! The same queue expands rows at a 1:N join ([`expansion`]): each row that matches
//! several build rows queues one entry per match, the warp's lanes walking their chains
//! together (a ballot per step), and the rest of the pipeline runs on full warps of
//! (row, match) entries. A row with a thousand matches thus never holds up its tile's
//! other rows for more than the steps of its walk, and the pipeline after the join keeps
//! its per-row code.

use std::collections::HashSet;

use super::aggregate::GroupTable;
use super::ir::{CExpr, KernelIr, Load, Scope, Stage, Stmt, Use, ValueId};
use super::layout::GpuColumn;
use super::options::BLOCK_THREADS;
use super::unsupported::Reason;

/// The largest estimated share of rows passing a pipeline's row tests for which the rows
/// that pass are queued. At 0.25 a warp's tile of 64 rows keeps 16 on average, half a
/// queue's drain: above that, rows finishing in place already share their warps' round
/// trips. Not swept: SSB's queued kernels keep 2% of their rows or fewer, and queueing
/// every pipeline that can changed none of SSB's kernel times beyond the runs' spread.
pub const DEFER_MAX_PASS: f64 = 0.25;

/// Shared memory a block may spend on its warps' queues: 12 KiB holds six 32-bit values
/// a row at two items a thread. With a direct group table of `SHARED_AGG_BYTES` a block
/// then needs 29 KiB, and 7 blocks of 128 threads stay resident per SM (12 with the
/// tables SSB's queries have).
pub const DEFER_MAX_BYTES: usize = 12 << 10;

/// Entries a warp's queue holds when it expands rows: a step of the walk adds at most
/// one entry a lane, and the queue drains whenever it holds 32.
pub const EXPAND_CAPACITY: usize = 64;

/// Shared memory a block may spend on the queues of an expansion: 24 KiB holds twelve
/// 32-bit values an entry (the columns the rest of the pipeline reads, the match, the
/// row number); with the largest shared group table a block then needs 41 KiB, and 5
/// blocks of 128 threads stay resident per SM. More values than that keep the pipeline
/// on the CPU (a reason says so).
pub const EXPAND_MAX_BYTES: usize = 24 << 10;

/// How a kernel's passing rows are queued.
#[derive(Debug, Clone)]
pub struct Deferral {
    /// The per-item values the rest of the pipeline reads (queued per row).
    pub live: Vec<ValueId>,
    /// Whether the rest of the pipeline reads the row number.
    pub row: bool,
    /// Rows a warp's queue holds: 32 per item of a thread, plus the 31 that may wait.
    pub capacity: usize,
    /// The rows expand at a 1:N join here: one entry per match.
    pub expand: Option<Expansion>,
    /// Items a thread queues before its warp drains the queue (the kernel's items, or
    /// fewer where a queue of 32 rows an item would take more than [`DEFER_MAX_BYTES`]).
    pub chunk: u32,
    /// Entries each lane takes in a drain (the drain's items): a warp drains once its
    /// queue holds 32 times as many.
    pub drain: u32,
    /// Whether row numbers are queued as `int`s (`Experiments::queue_rows32`; set by
    /// `codegen::generate_with` where the scanned table's rows fit 32 bits): the rest
    /// then reads compact columns at the row in 32 bits (`tessera_bits_get`,
    /// `tessera_runs_get`) in every kernel, the lean ones counting their tiles in 64 bits
    /// too. The queue's size is reckoned for 8-byte rows either way, so its chunks stay
    /// as they were.
    pub row32: bool,
    /// The estimated share of the scanned rows the queue takes (1 at an expansion, whose
    /// entries are not counted): a queue that seldom fills keeps its drain loop rolled
    /// ([`ROLLED_DRAIN_MAX_SHARE`]).
    pub share: f64,
}

impl Deferral {
    /// The C type of a queued row number ([`Deferral::row32`]).
    pub fn row_type(&self) -> &'static str {
        if self.row32 { "int" } else { "long long" }
    }
}

/// Where the queue expands rows (from a [`Stmt::Expand`]).
#[derive(Debug, Clone)]
pub struct Expansion {
    /// The first match of the item (a per-item value of the head).
    pub first: CExpr,
    /// The link array: the match after `m` is `next[m]` (−1: none).
    pub next: String,
    /// The value holding the match in the rest of the pipeline (queued per entry, one of
    /// [`Deferral::live`]).
    pub matched: ValueId,
    /// A LEFT OUTER join's expansion: an item without a match is queued once, its match
    /// negative.
    pub outer: bool,
}

/// Splits `stages` at the kernel's [`Stmt::Expand`] (a stage ends there, see
/// `passes::stages`): the queue, the stages before, and the stages after (run on the
/// queued (row, match) entries). None: the kernel does not expand rows.
pub fn expansion(ir: &KernelIr, stages: &[Stage]) -> Option<Result<(Deferral, Vec<Stage>, Vec<Stage>), Reason>> {
    let k = stages.iter().position(|st| st.iter().any(|s| matches!(s, Stmt::Expand { .. })))?;
    let mut head: Vec<Stage> = stages[..=k].to_vec();
    let (first, next, matched, outer) = match head.last_mut().and_then(Vec::pop) {
        Some(Stmt::Expand { first, next, matched, outer }) => (first, next, matched, outer),
        _ => return Some(Err(Reason::Inconsistent("an expansion inside a stage".into()))),
    };
    if head.last().is_some_and(Vec::is_empty) {
        head.pop();
    }
    let tail: Vec<Stage> = stages[k + 1..].to_vec();
    let rest: Vec<Stmt> = tail.concat();
    let (live, row, per_row) = queued(ir, &head, &rest, Some(matched));
    let bytes = per_row * EXPAND_CAPACITY * (BLOCK_THREADS / 32) as usize;
    if bytes > EXPAND_MAX_BYTES {
        return Some(Err(Reason::ExpansionQueue(bytes)));
    }
    Some(Ok((Deferral { live, row, capacity: EXPAND_CAPACITY, expand: Some(Expansion { first, next, matched, outer }), chunk: 1, drain: 1, row32: false, share: 1.0 }, head, tail)))
}

/// The largest estimated share of the scanned rows a warp queue takes for which its drain
/// loop (`while (tq_n >= 32)`) is kept rolled (`#pragma unroll 1`); NVRTC otherwise
/// unrolls it twice where its body is short, code a queue that seldom fills runs once in
/// many tiles. Rolled everywhere (H200, 2026-12-01d run 4), SSB q1.2's compact probe,
/// which queues one row in 84, took 0.931 → 0.875 ms at SF 100 and 0.208 → 0.195 at SF
/// 20, q1.3's (one in 364) 0.202 → 0.198 at SF 20, the queues of q2.2, q2.3, q3.3 and
/// q3.4 over compact columns (0.1–0.8%) the same within 0.005 ms; those filling more
/// often were slower rolled (q1.1's, 13%: 1.171 → 1.393 ms at SF 100; q4.2's, 20%: 2.395
/// → 2.485). With this share (2026-12-01e run 5): compact q1.2 0.927 → 0.877 ms at SF
/// 100 and 0.205 → 0.197 at SF 20, every other SSB and TPC-H SF 10 kernel the same
/// within the runs' noise. `TESSERA_EXP_ROLLED_DRAIN_MAX=S` sets another share (0:
/// never).
pub const ROLLED_DRAIN_MAX_SHARE: f64 = 0.02;

/// Splits `stages` after the kernel's last row test when its passing rows are queued
/// (see the module doc): the queue, the stages before, and the stages after (run on
/// queued rows). None: the rows finish in place. With `early` the split is after the
/// first selective row test instead where [`early_split`] allows it; `early` then gives
/// the entries a lane takes in a drain and the kernel's source columns (see
/// [`plan_early`]).
pub fn plan(ir: &KernelIr, stages: &[Stage], table: Option<GroupTable>, items: u32, max_pass: f64, early: Option<((u32, u32), &[GpuColumn])>) -> Option<(Deferral, Vec<Stage>, Vec<Stage>)> {
    if let Some(planned) = early.and_then(|(drain, cols)| plan_early(ir, stages, table, items, max_pass, drain, cols)) {
        return Some(planned);
    }
    // The last row test: (stage, statement) and the estimated share passing it.
    let (at_stage, at_stmt, pass) = stages
        .iter()
        .enumerate()
        .flat_map(|(k, st)| st.iter().enumerate().map(move |(j, s)| (k, j, s)))
        .filter_map(|(k, j, s)| match s {
            Stmt::Reject { flag: None, pass, .. } => Some((k, j, *pass)),
            _ => None,
        })
        .last()?;
    if !matches!(table, Some(GroupTable::Direct { .. })) || pass > max_pass {
        return None;
    }
    let (head, tail) = split(stages, at_stage, at_stmt);
    let rest: Vec<Stmt> = tail.concat();
    let (live, row, per_row) = queued(ir, &head, &rest, None);
    // Worth it only when the rest reads global memory: payloads at the slots found, or
    // columns at the row.
    let gathers = row || rest.iter().any(|s| matches!(s, Stmt::Def { load: Some(Load::Payload { .. }), .. }));
    if !gathers {
        return None;
    }
    let capacity = 32 * (items as usize + 1);
    let warps = (BLOCK_THREADS / 32) as usize;
    (per_row * capacity * warps <= DEFER_MAX_BYTES).then_some((Deferral { live, row, capacity, expand: None, chunk: items, drain: 1, row32: false, share: pass }, head, tail))
}

/// The stages before statement `at_stmt` of stage `at_stage` (it included) and those after.
fn split(stages: &[Stage], at_stage: usize, at_stmt: usize) -> (Vec<Stage>, Vec<Stage>) {
    let mut head: Vec<Stage> = stages[..at_stage].to_vec();
    let mut tail: Vec<Stage> = Vec::new();
    let (a, b) = stages[at_stage].split_at(at_stmt + 1);
    if !a.is_empty() {
        head.push(a.to_vec());
    }
    if !b.is_empty() {
        tail.push(b.to_vec());
    }
    tail.extend(stages[at_stage + 1..].iter().cloned());
    (head, tail)
}

/// Where an aggregation's rows are queued early, in `stmts` (a kernel's statements in
/// order, `items` a thread): the index of its first row test that leaves at most
/// `max_pass` of the rows, but too many for a warp's vote to skip its stages often
/// (`print::warp_skip_likely`), and after which a statement loads from global memory.
/// `table` is a grouped aggregation's block-level table (None: a scalar one); a grouped
/// one queues early only as [`grouped_early`] allows. None: its rows finish in place (or
/// queue after the last test, [`plan`]).
///
/// Where a vote skips most warps, the queue's ballot an item costs more than it saves:
/// SSB q1.3's byte-narrowed probe (one row in 364 left by its dates) took 0.181 ms
/// queued against 0.147 with the vote (H200, SF 20, 2026-12-01b run 1). A column first
/// read after the test is read at the queued rows, not up front (`scan::eager_columns`).
pub fn early_split<'a>(stmts: impl IntoIterator<Item = &'a Stmt>, max_pass: f64, items: u32, table: Option<GroupTable>, cols: &[GpuColumn]) -> Option<usize> {
    let stmts: Vec<&Stmt> = stmts.into_iter().collect();
    let last_load = stmts.iter().rposition(|s| matches!(s, Stmt::Def { load: Some(_), .. }))?;
    let at = stmts[..last_load].iter().position(|s| matches!(s, Stmt::Reject { flag: None, pass, .. } if *pass <= max_pass))?;
    let queued = match stmts[at] {
        Stmt::Reject { pass, .. } if super::print::warp_skip_likely(*pass, items) => return None,
        Stmt::Reject { pass, .. } => *pass,
        _ => return None,
    };
    match table {
        None => Some(at),
        Some(t) => grouped_early(t, queued, &stmts[at + 1..], cols).then_some(at),
    }
}

/// The largest estimated share of a grouped aggregation's queued rows that reach its
/// global arrays (what its later tests leave) for which it queues early.
/// A warp's drain then adds its rows' values in one atomic instruction of up to 32
/// lanes, on the few lines of the groups present; in place, the same atomics come a
/// lane or two an instruction. Queued early, SSB's kernels whose queued rows reach the
/// sums in 2-3.5% (q3.2, q4.2 over compact columns) or fewer (q4.3) took 1.431 → 1.381,
/// 2.642 → 2.381 and 1.458 → 1.383 ms at SF 100; those reaching them in 17-20% (q3.1,
/// q2.1) 2.477 → 2.970 and 2.090 → 3.983 ms (H200, 2026-12-01c run 1).
pub const EARLY_GLOBAL_MAX_REACH: f64 = 0.05;

/// Whether a grouped aggregation into `table` queues early, `queued` the estimated share
/// of the scanned rows its test leaves and `rest` the statements after the test.
///
/// - Into a shared direct table, always. Against queueing after its last test (H200,
///   2026-12-01c run 2): SSB SF 20 q4.1 0.574 → 0.479 ms byte-narrowed and 0.619 →
///   0.510 compact; TPC-H SF 10 q09 6.98 → 5.77 ms, q05 1.25 → 1.15.
/// - Into the global arrays, where the rest reads a compact column (bit-packed or in
///   runs) at the row, whose decoding the queue saves for the rows the test rejects, and
///   few of the queued rows reach the sums ([`EARLY_GLOBAL_MAX_REACH`]). Over byte-wide
///   columns the rows read at the queued rows cost more than the in-place kernel's
///   up-front loads: SSB q4.2's byte-narrowed probe took 0.407 → 0.496 ms queued early
///   (SF 20, run 1).
fn grouped_early(table: GroupTable, queued: f64, rest: &[&Stmt], cols: &[GpuColumn]) -> bool {
    match table {
        GroupTable::Direct { .. } => true,
        GroupTable::Global => {
            // A test's estimate is the share of the scanned rows passing it and every
            // test before it: the last one's, over the queued share, is the share of
            // the queued rows reaching the sums.
            let left = rest.iter().rev().find_map(|s| if let Stmt::Reject { flag: None, pass, .. } = s { Some(*pass) } else { None }).unwrap_or(queued);
            reads_compact(rest.iter().copied(), cols) && left <= EARLY_GLOBAL_MAX_REACH * queued
        }
    }
}

/// Whether the statements `rest` read a compact column of `cols` (bit-packed or in runs)
/// at the row.
fn reads_compact<'a>(rest: impl IntoIterator<Item = &'a Stmt>, cols: &[GpuColumn]) -> bool {
    rest.into_iter().any(|s| matches!(s, Stmt::Def { load: Some(Load::Column { column, .. }), .. } if cols.get(*column).is_some_and(super::compact)))
}

/// [`plan`] for an aggregation queued early: after [`early_split`]'s row test, draining
/// `drain.0` entries a lane whenever a warp's queue holds that many, after every
/// [`Deferral::chunk`] items; `drain.1` (one unless an experiment says otherwise) where
/// the rest reads a compact column of `cols` (bit-packed or in runs) at the row.
///
/// Two entries a lane keep two rows' loads in flight in a drain: SSB q1.1's
/// byte-narrowed probe took 0.266 ms against 0.295 with one at SF 20, 1.292 against
/// 1.421 at SF 100 (H200, 2026-12-01b run 3). A compact row read alone holds more
/// registers (q1.1's compact probe 48 instead of 40 with two, compiled at SF 0.01): it
/// took 0.305 against 0.258 ms with two at SF 20, 1.478 against 1.249 at SF 100.
fn plan_early(ir: &KernelIr, stages: &[Stage], table: Option<GroupTable>, items: u32, max_pass: f64, drain: (u32, u32), cols: &[GpuColumn]) -> Option<(Deferral, Vec<Stage>, Vec<Stage>)> {
    let at = early_split(stages.iter().flatten(), max_pass, items, table, cols)?;
    let share = match stages.iter().flatten().nth(at) {
        Some(Stmt::Reject { pass, .. }) => *pass,
        _ => 1.0,
    };
    let mut seen = 0;
    let (at_stage, at_stmt) = stages.iter().enumerate().find_map(|(k, st)| {
        let found = (at < seen + st.len()).then_some((k, at - seen));
        seen += st.len();
        found
    })?;
    let (head, tail) = split(stages, at_stage, at_stmt);
    let rest: Vec<Stmt> = tail.concat();
    let (live, row, per_row) = queued(ir, &head, &rest, None);
    // The most items a thread queues before a drain that keeps the queues within
    // DEFER_MAX_BYTES: a divisor of the items (the queueing loop is unrolled in chunks).
    // A queue holds fewer than 32 × `drain` entries after a drain, and a chunk adds at
    // most 32 a thread's item.
    let warps = (BLOCK_THREADS / 32) as usize;
    let drain = if reads_compact(&rest, cols) { drain.1 } else { drain.0 }.max(1);
    let capacity = |chunk: u32| 32 * (chunk + drain) as usize;
    let chunk = (1..=items).rev().find(|&c| items.is_multiple_of(c) && per_row * capacity(c) * warps <= DEFER_MAX_BYTES)?;
    Some((Deferral { live, row, capacity: capacity(chunk), expand: None, chunk, drain, row32: false, share }, head, tail))
}

/// What a queue entry holds when the statements `rest` run on queued rows after the
/// stages `head`: the per-item values defined in `head` (and `matched`, an expansion's
/// match) that `rest` reads, in value order; whether `rest` reads the row number; and
/// the entry's bytes.
fn queued(ir: &KernelIr, head: &[Stage], rest: &[Stmt], matched: Option<ValueId>) -> (Vec<ValueId>, bool, usize) {
    let row = super::passes::any_uses(rest, Use::Row);
    let mut defined: HashSet<ValueId> = head.concat().iter().filter_map(|s| if let Stmt::Def { value, .. } = s { Some(*value) } else { None }).collect();
    defined.extend(matched);
    let live: Vec<ValueId> = (0..ir.values.len())
        .map(ValueId)
        .filter(|v| ir.value(*v).scope == Scope::Item && defined.contains(v) && (Some(*v) == matched || super::passes::any_uses(rest, Use::Value(*v))))
        .collect();
    let per_row = live.iter().map(|v| ir.value(*v).ty.bytes()).sum::<usize>() + if row { 8 } else { 0 };
    (live, row, per_row)
}
