//! Probes of tables built on the GPU: of dense tables (slot = key − min) a membership
//! bitmap test, of hashed ones ([`super::hash`]) a look at the key's first slot; then the
//! payload columns gathered at the slot. Probes of dense tables whose key is a source
//! column are tested first, the cheapest for the rows it drops first and then the most
//! selective first ([`hoist`]), as a hand-written star join orders its probes.
//!
//! Probes do not partition, however large the table. `tessera bench joins`
//! (`crate::join_study`) measured a radix-partitioned join against this no-partition probe
//! on an H200 (60 MiB L2; 2026-11-27, `benchmarks/results/gpu-2026-11-27/`): 2^28 probe
//! rows of a key and a 32-bit payload, each matching one build row, medians of 5 runs.
//!
//! | build rows | table | no partition (build + probe) | radix, one pass | radix, two passes |
//! | ---: | ---: | ---: | ---: | ---: |
//! | 2^18 | 6 MiB | 4.41 ms | 17.75 ms | – |
//! | 2^20 | 24 MiB | 4.80 ms | 18.74 ms | 15.70 ms |
//! | 2^22 | 96 MiB | 10.25 ms | 20.28 ms | 21.21 ms |
//! | 2^24 | 384 MiB | 16.66 ms | 20.68 ms | 27.52 ms |
//! | 2^26 | 1.5 GiB | 27.73 ms | **24.55 ms** | 35.53 ms |
//!
//! In one pass, partitioning both sides takes 13.6–21.5 ms of each radix figure and the
//! shared-memory joins 2.2–4.2 ms. The no-partition join is faster up to 2^24 build rows (a table 6.4×
//! L2), and the radix join only beyond (0.89× at 2^26, 25.6× L2). TPC-H SF 10's largest
//! build is orders, 15 M rows. The partitioner moves about 0.8 TB/s (40 bytes a row read
//! and written) against the 4.2 TB/s the device reads; a faster one would move the
//! crossover lower, and is where to look before a partitioned join is built in.

use std::collections::HashMap;

use tessera_ir::{Expr, Field, JoinKind, Operator, Pipeline, Probe, Source};

use super::abi::Param;
use super::builder::{Builder, Lowered, Val, c_long};
use super::hash::{EMPTY_KEY as EMPTY, KeyPack};
use super::ir::{CExpr, CType, Load};
use super::layout::{GpuTable, Width, width_of};
use super::unsupported::Reason;
use crate::cx;

/// The most slots of a dense hash table a kernel probes (slots are `int` in kernels).
pub const MAX_TABLE_SLOTS: usize = i32::MAX as usize;

/// The largest membership bitmap looked up for rows an earlier probe's test has not
/// filtered yet (when its key is loaded up front). A bitmap this small stays in L1 (256
/// KiB a SM on an H100/H200, shared with shared memory and the other bitmaps), so looking
/// it up for every row costs little and saves a round trip; a larger one is read from
/// L2, for every row. SSB q4.1 at SF 100 (a 171 KiB part bitmap) took 1.94–2.12× its
/// bandwidth model without this limit and 1.40–1.43× with it
/// (`benchmarks/results/README.md`, "Batched bitmaps").
pub const BATCHED_BITMAP_MAX_BYTES: usize = 64 << 10;

/// What a membership test over a bitmap larger than [`BATCHED_BITMAP_MAX_BYTES`] (read
/// from L2 for every row it tests) costs against one over a bitmap that stays in L1, when
/// [`test_order`] picks the test every row takes. Under the most-selective-first order
/// SSB q3.1's probe waited a third of its time at its customer bitmap's test (L2) and a
/// fiftieth at its supplier bitmap's (L1), tested for five times the rows (2026-11-30
/// run 1: 31.7% and 1.5% of the stall samples). With 4, SSB q2.1 tests its supplier
/// bitmap (20% pass) before its part bitmap (4%): its kernels took 0.353 ms against
/// 0.411 at SF 20 and 1.664 against 1.989 at SF 100 byte-narrowed, 0.392 against 0.421
/// and 1.861 against 2.088 compact (H200, 2026-12-01e runs 2–3); any value from 2 to 4
/// orders SSB's tests the same. `TESSERA_EXP_BITMAP_COST=1` orders by selectivity alone,
/// as before.
pub const L2_BITMAP_COST: u32 = 4;

/// Whether `t`'s membership bitmap is larger than [`BATCHED_BITMAP_MAX_BYTES`]: read from
/// L2, not kept in L1, for every row tested.
fn bitmap_in_l2(t: &GpuTable) -> bool {
    t.slots.div_ceil(8) > BATCHED_BITMAP_MAX_BYTES
}

/// Words of a membership bitmap over `slots` slots: one bit per slot and the always-clear
/// bit `slots` that [`lookup`] sends keys outside the range to.
pub fn bitmap_words(slots: usize) -> usize {
    (slots + 1).div_ceil(32)
}

/// A probe whose key is a source column as loaded: its membership test can run before
/// the probes written ahead of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hoisted {
    probe: usize,
    column: usize,
    anti: bool,
}

/// Probes (by operator order) whose single key is an unchanged source column without
/// NULLs (`cols`: the source columns on the GPU).
pub fn hoistable(pipeline: &Pipeline, cols: &[super::layout::GpuColumn], tables: &[GpuTable]) -> Vec<Hoisted> {
    let mut fields = pipeline.source_fields().to_vec();
    // Per layout column: the source column it is, unchanged.
    let mut source: Vec<Option<usize>> = (0..fields.len()).map(Some).collect();
    let mut out = Vec::new();
    let mut probe = 0usize;
    for op in &pipeline.operators {
        match op {
            Operator::Filter(_) => {}
            Operator::Project { exprs, fields: f } => {
                source = exprs
                    .iter()
                    .map(|e| match e {
                        Expr::Column { index, .. } => source.get(*index).copied().flatten(),
                        _ => None,
                    })
                    .collect();
                fields = f.clone();
            }
            Operator::Probe(p) => {
                let simple = p.residual.is_none() && !p.null_aware && !p.nulls_equal && p.keys.len() == 1;
                let kind_ok = matches!(p.kind, JoinKind::Inner | JoinKind::Semi | JoinKind::Anti);
                let dense = tables.get(probe).is_some_and(|t| t.hashed.is_none() && t.chain.is_none());
                if let ([Expr::Column { index, .. }], true, true, true) = (p.keys.as_slice(), simple, kind_ok, dense)
                    && let Some(c) = source.get(*index).copied().flatten().filter(|&c| cols.get(c).is_some_and(|col| !col.nullable))
                {
                    out.push(Hoisted { probe, column: c, anti: p.kind == JoinKind::Anti });
                }
                let before = fields.len();
                fields = op.output_fields(&fields);
                source.extend(std::iter::repeat_n(None, fields.len().saturating_sub(before)));
                probe += 1;
            }
        }
    }
    out
}

/// A probe whose table keeps at most this share of what the filters before the first
/// probe keep (the planner's estimates: [`tessera_ir::Scan::kept_permille`] and the
/// build's estimated rows) is tested before those filters ([`early`]). Testing first
/// lets the filters' columns be loaded only for the rows it keeps, where few sectors
/// hold one (see `scan::EAGER_MIN_SECTORS`): SSB q1.3 keeps one row in 364 by its date
/// and about one in 18 by its discount and quantity. A lookup costs more than a
/// comparison and both estimates are rough, hence the margin of 4.
pub const EARLY_MAX_SHARE: f64 = 0.25;

/// The hoistable probes whose membership tests go before the pipeline's filters: far
/// more selective than those filters (see [`EARLY_MAX_SHARE`]), over a bitmap small
/// enough to stay in L1 ([`BATCHED_BITMAP_MAX_BYTES`]: a larger one is an L2 read for
/// every row). Only where everything before the first probe is a filter or projection
/// that cannot fail ([`tessera_ir::Expr::cannot_fail`]): a test that drops a row first
/// must not hide an error the filter would raise for it, so that every backend and
/// test order gives the same outcome.
pub fn early(pipeline: &Pipeline, hoisted: &[Hoisted], tables: &[GpuTable], enabled: bool) -> Vec<Hoisted> {
    let Source::Scan(scan) = &pipeline.source else { return Vec::new() };
    if !enabled {
        return Vec::new();
    }
    let mut filtered = false;
    for op in pipeline.operators.iter().take_while(|op| !matches!(op, Operator::Probe(_))) {
        match op {
            Operator::Filter(e) if e.cannot_fail() => filtered = true,
            Operator::Project { exprs, .. } if exprs.iter().all(Expr::cannot_fail) => {}
            _ => return Vec::new(),
        }
    }
    if !filtered {
        return Vec::new();
    }
    let kept = f64::from(scan.kept_permille.min(1000)) / 1000.0;
    hoisted
        .iter()
        .filter(|h| {
            let t = &tables[h.probe];
            let share = if h.anti { 1.0 - pass_rate(t) } else { pass_rate(t) };
            !bitmap_in_l2(t) && share <= kept * EARLY_MAX_SHARE
        })
        .copied()
        .collect()
}

/// Runs the membership tests of hoistable probes first, the cheapest for the rows they
/// drop first ([`test_order`]): rows that some dimension filters out stop before they
/// load the other keys or touch the other tables. Consecutive tests whose keys are loaded
/// already (up front) look up their bitmaps in one stage and test them in the next, so
/// those loads are in flight together (unless a bitmap is larger than
/// [`BATCHED_BITMAP_MAX_BYTES`]). The probes themselves still run in plan order for their
/// payloads, reusing the slot found here (returned per probe). Ties keep plan order:
/// smaller tables first, and copying small bitmaps to shared memory, were measured slower
/// (`benchmarks/results/README.md`, "Probe order").
///
/// A single probe is hoisted only when `alone` (the [`early`] tests): in place, its own
/// test comes at the same point.
pub fn hoist(b: &mut Builder<'_>, hoisted: &[Hoisted], tables: &[GpuTable], alone: bool) -> Lowered<HashMap<usize, CExpr>> {
    let mut slots = HashMap::new();
    if hoisted.is_empty() || (hoisted.len() < 2 && !alone) {
        return Ok(slots);
    }
    let order = test_order(hoisted, tables, b.l2_bitmap_cost, b.items);
    // Lookups issued and not tested yet.
    let mut pending: Vec<(&Hoisted, CExpr)> = Vec::new();
    let test = |b: &mut Builder<'_>, pending: &mut Vec<(&Hoisted, CExpr)>| {
        for (h, found) in pending.drain(..) {
            let pass = pass_rate(&tables[h.probe]);
            if h.anti {
                b.reject_estimated(found, 1.0 - pass);
            } else {
                b.reject_estimated(cx!["!", found], pass);
            }
        }
    };
    for h in order {
        let large = bitmap_in_l2(&tables[h.probe]);
        if !b.loaded.contains(&h.column) || (large && !pending.is_empty()) {
            // The key is loaded here, or the bitmap is too large to read for every row:
            // only the items the tests so far let through go on.
            test(b, &mut pending);
        }
        let v = super::scan::load(b, h.column)?;
        let narrow = b.cols[h.column].width == Width::I32;
        let (s, found) = lookup(b, &tables[h.probe], h.probe, v, narrow);
        pending.push((h, found));
        slots.insert(h.probe, s);
    }
    test(b, &mut pending);
    Ok(slots)
}

/// The order [`hoist`] tests `hoisted` in: the most selective first, ties in plan order,
/// except that the first, which every row takes, is the one whose cost over the share of
/// rows it drops is least (the order that minimises the expected cost of independent
/// tests), a test over a bitmap larger than [`BATCHED_BITMAP_MAX_BYTES`] costing
/// `l2_cost` ([`L2_BITMAP_COST`]) and any other 1.
///
/// - A test that leaves so few rows that whole warps of `items` items a thread often have
///   none left costs 1 wherever its bitmap lies: the warps it empties skip the rest of
///   the tile (`print::warp_skip_likely`). SSB q2.2's and q2.3's part tests (0.8%, 0.1%)
///   after their supplier tests took their compact kernels at SF 20 from 0.270 to 0.312
///   ms and 0.222 to 0.283 (H200, 2026-12-01e run 1).
/// - The tests after the first stay in order of selectivity: ordered by cost too, SSB
///   q4.3's date test (28.6%, L1) went before its part test (4%, L2), the part keys were
///   then loaded for the rows left instead of up front (`scan::EAGER_MIN_SECTORS`), and
///   its byte-narrowed kernels took 0.377 ms against 0.318 (same run).
fn test_order<'h>(hoisted: &'h [Hoisted], tables: &[GpuTable], l2_cost: u32, items: u32) -> Vec<&'h Hoisted> {
    // (By the table's estimated share of matching rows, an anti probe's too, as the
    // order has always been; an anti probe keeps the rest.)
    let mut order: Vec<&Hoisted> = hoisted.iter().collect();
    order.sort_by_key(|h| (tables[h.probe].pass_permille, h.probe));
    let rank = |h: &Hoisted| {
        let t = &tables[h.probe];
        let pass = pass_rate(t);
        let read_from_l2 = bitmap_in_l2(t) && !super::print::warp_skip_likely(pass, items);
        let cost = if read_from_l2 { f64::from(l2_cost.max(1)) } else { 1.0 };
        // A test that drops no row ranks last.
        if pass < 1.0 { cost / (1.0 - pass) } else { f64::INFINITY }
    };
    // The least rank, the first in the order above among equals.
    if let Some(first) = (0..order.len()).min_by(|&a, &b| rank(order[a]).total_cmp(&rank(order[b])).then(a.cmp(&b))) {
        let h = order.remove(first);
        order.insert(0, h);
    }
    order
}

/// The estimated share of probe rows a table lets through.
fn pass_rate(t: &GpuTable) -> f64 {
    f64::from(t.pass_permille.min(1000)) / 1000.0
}

/// The slot of `key` in dense table `t` (`t.slots` outside its range) and whether a build
/// row is there, from the table's membership bitmap (a global load: the stage ends before
/// the first use of the answer).
///
/// A key outside the range is clamped to slot `t.slots`, whose bit is always clear (the
/// bitmap has [`bitmap_words`] words), so the test is one unconditional load and shift
/// for every key: no predicate and no branch around the load (SSB q3.1's probe loop
/// 206 → 184 SASS instructions per tile against a range check). The bitmap has one bit
/// per slot, 32× smaller than a row array: SSB's part table at SF 20 is a 128 KiB bitmap
/// that stays in L1. Slots are `int`: 32-bit per-item values leave more registers for
/// items in flight.
///
/// Keys are placed with one unsigned subtraction and compare: for a key outside the
/// range, `key - min` modulo 2^64 is at least `slots` (below the range it wraps past
/// `max - min`). A 32-bit key (`narrow`) against a table whose whole key range fits 32
/// bits does the same in 32 bits.
pub fn lookup(b: &mut Builder<'_>, t: &GpuTable, probe: usize, key: CExpr, narrow: bool) -> (CExpr, CExpr) {
    let s = dense_slot(b, t, key, narrow);
    let name = b.fresh("f");
    let bit = super::builder::bit_of(&format!("h{probe}_bits"), &s);
    let found = b.def(CType::Bool, name, bit, Some(Load::Bitmap { probe }));
    (s, found)
}

/// The slot of `key` in dense table `t`, `t.slots` when outside its range (see [`lookup`]).
fn dense_slot(b: &mut Builder<'_>, t: &GpuTable, key: CExpr, narrow: bool) -> CExpr {
    let max = i64::try_from(t.slots).ok().and_then(|n| t.min.checked_add(n - 1));
    let range_fits = max.is_some_and(|m| i32::try_from(m).is_ok());
    let slot = match i32::try_from(t.min) {
        Ok(min) if narrow && range_fits => cx!["(int)min((unsigned)(", key, format!(") - (unsigned)({min}), {}u)", t.slots)],
        _ => cx!["(int)min((unsigned long long)(", key, format!(") - (unsigned long long)({}), {}ull)", c_long(t.min), t.slots)],
    };
    b.var(CType::Int, "s", slot)
}

/// Probe number `probe_no` of the pipeline, reading `t`; `hoisted` holds the slots of
/// probes whose test ran already.
///
/// A residual predicate (over the input layout and the build's payload) decides a key
/// match as well. GPU tables other than membership tables hold one build row per key (a
/// duplicate key sends the query to the CPU), so a match is that one row: an inner join
/// gathers its payload and tests the residual as a filter; a semi or anti join tests
/// `found && residual`, gathering the payload inside the test, only for rows whose key
/// matched; a LEFT OUTER join keeps every row, gathers the payload where the key
/// matched and makes it NULL where the key or the residual did not (the payload
/// columns' condition of not being NULL is the match, see [`Builder::nulls`]); a mark
/// join keeps every row and adds `found && residual` as a column ([`push_mark`]). A
/// membership table (no payload, repeated keys one entry) answers only semi, anti and
/// mark probes without a residual. `NOT IN` (NULL-aware) reads what the build saw
/// ([`null_aware_anti`]). Chained (1:N) tables: see [`chained`].
pub fn lower(b: &mut Builder<'_>, p: &Probe, probe_no: usize, t: &GpuTable, hoisted: &HashMap<usize, CExpr>, fields: &[Field]) -> Lowered<()> {
    // `NOT IN` (NULL-aware) over one key without a residual, of a table with a row per
    // key; NULL-equal keys (IS NOT DISTINCT FROM) not at all.
    if p.nulls_equal || (p.null_aware && (p.kind != JoinKind::Anti || p.residual.is_some() || p.keys.len() != 1 || t.chain.is_some())) {
        return Err(Reason::ProbeShape);
    }
    let outer = p.kind == JoinKind::LeftOuter;
    if !matches!(p.kind, JoinKind::Inner | JoinKind::Semi | JoinKind::Anti | JoinKind::Mark | JoinKind::LeftOuter) {
        return Err(Reason::JoinKind(p.kind));
    }
    if t.hashed.is_none() && p.keys.len() != 1 {
        return Err(Reason::Inconsistent("a dense table probed on several keys".into()));
    }
    let rows_read = matches!(p.kind, JoinKind::Inner | JoinKind::LeftOuter) || p.residual.is_some();
    if t.membership && rows_read {
        return Err(Reason::Inconsistent("a membership table probed for its rows".into()));
    }
    if rows_read && t.payload.len() != p.build_fields.len() {
        return Err(Reason::Inconsistent(format!("a probe reading {} build columns of a table holding {}", p.build_fields.len(), t.payload.len())));
    }
    for (j, pc) in t.payload.iter().enumerate() {
        b.params.push(Param::Payload { probe: probe_no, column: j, width: pc.width, narrow: pc.narrow });
        if pc.nullable {
            b.params.push(Param::PayloadValid { probe: probe_no, column: j });
        }
    }
    if t.chain.is_some() {
        return chained(b, p, probe_no, t, fields);
    }
    b.params.push(if t.hashed.is_some() { Param::Keys { probe: probe_no } } else { Param::Bitmap { probe: probe_no } });
    // A hoisted probe's membership test has run already (hoisted probes have no
    // residual); only its payload is left.
    // `key_ok`: where the key may be NULL, the condition of it not being NULL.
    let (s, found, key_ok) = match (hoisted.get(&probe_no), &t.hashed) {
        (Some(s), _) => (s.clone(), None, None),
        (None, Some(pack)) => {
            let (values, ok) = keys(b, &p.keys, p.kind, fields)?;
            let (s, found) = find(b, t, pack, probe_no, &values, ok.clone());
            (s, Some(found), ok)
        }
        (None, None) => {
            let (k, ok) = keys(b, &p.keys, p.kind, fields)?;
            let k = k.into_iter().next().ok_or_else(|| Reason::Inconsistent("a probe without a key".into()))?;
            let narrow = width_of(p.keys[0].ty(fields)) == Some(Width::I32);
            let (s, found) = lookup(b, t, probe_no, k, narrow);
            // A NULL key matches nothing (its value, looked up anyway, means nothing).
            let found = match ok.clone() {
                Some(ok) => b.var(CType::Bool, "f", cx!["(", ok, " && ", found, ")"]),
                None => found,
            };
            (s, Some(found), ok)
        }
    };
    if p.null_aware {
        let found = found.ok_or_else(|| Reason::Inconsistent("a hoisted NULL-aware probe".into()))?;
        null_aware_anti(b, probe_no, found, key_ok, pass_rate(t));
        return Ok(());
    }
    let joined: Vec<Field> = fields.iter().chain(&p.build_fields).cloned().collect();
    if p.kind == JoinKind::Mark {
        let found = found.ok_or_else(|| Reason::Inconsistent("a hoisted mark probe".into()))?;
        let marked = match &p.residual {
            None => found,
            Some(residual) => {
                // Tested only where the key matched (the payload is there).
                let holds = b.branch(|b| {
                    gather_payload(b, t, probe_no, &s);
                    super::filter::condition(b, residual, &joined)
                })?;
                cx!["(", found, " && (", holds, "))"]
            }
        };
        push_mark(b, marked);
        return Ok(());
    }
    if outer {
        let found = found.ok_or_else(|| Reason::Inconsistent("a hoisted LEFT OUTER probe".into()))?;
        let from = b.layout.len();
        gather_payload_where(b, t, probe_no, &s, Some(&found));
        let matched = match &p.residual {
            None => found,
            Some(residual) => {
                // Tested only where the key matched (the payload is there).
                let holds = b.branch(|b| super::filter::condition(b, residual, &joined))?;
                b.var(CType::Bool, "om", cx![found, " && (", holds, ")"])
            }
        };
        null_where_unmatched(b, from, &matched);
        return Ok(());
    }
    match (&p.residual, found) {
        (None, found) => {
            if let Some(found) = found {
                reject_unmatched(b, p.kind, found, pass_rate(t));
            }
            if p.kind == JoinKind::Inner {
                gather_payload(b, t, probe_no, &s);
            }
        }
        (Some(residual), Some(found)) if p.kind == JoinKind::Inner => {
            reject_unmatched(b, p.kind, found, pass_rate(t));
            gather_payload(b, t, probe_no, &s);
            let holds = super::filter::condition(b, residual, &joined)?;
            b.reject(cx!["!(", holds, ")"]);
        }
        (Some(residual), Some(found)) => {
            let holds = b.branch(|b| {
                gather_payload(b, t, probe_no, &s);
                super::filter::condition(b, residual, &joined)
            })?;
            reject_unmatched(b, p.kind, cx!["(", found, " && (", holds, "))"], pass_rate(t));
        }
        (Some(_), None) => return Err(Reason::Inconsistent("a hoisted probe with a residual".into())),
    }
    Ok(())
}

/// A probe of a chained table (a 1:N join, see `build.rs`): the first row of the key's
/// chain, then per join kind: semi and anti joins without a residual test whether there
/// is one; with a residual, whether it holds for any row of the chain (walked until it
/// does, the payload gathered at each row); an inner join makes the item one item per
/// row ([`Builder::expand`]: the rest of the pipeline runs on a warp queue of (item,
/// row) pairs, `defer.rs`), gathers the payload at its row and tests the residual as a
/// filter; a LEFT OUTER join expands the same way and keeps an item without a match (with
/// a residual: without a row it holds for) once, its build columns NULL; a mark join
/// adds whether there is a row (with a residual: one it holds for) as a column.
fn chained(b: &mut Builder<'_>, p: &Probe, probe_no: usize, t: &GpuTable, fields: &[Field]) -> Lowered<()> {
    let (first, next) = chain_first(b, &p.keys, p.kind, probe_no, t, fields)?;
    let joined: Vec<Field> = fields.iter().chain(&p.build_fields).cloned().collect();
    let pass = pass_rate(t);
    match (&p.kind, &p.residual) {
        (JoinKind::Mark, None) => push_mark(b, cx!["(", &first, " >= 0)"]),
        (JoinKind::Mark, Some(residual)) => {
            let any = b.any_in_chain(first, next, |b, m| {
                gather_payload(b, t, probe_no, &m);
                super::filter::condition(b, residual, &joined)
            })?;
            push_mark(b, any);
        }
        (JoinKind::LeftOuter, None) => {
            // One item per match, and an item without one once (its match negative), the
            // build columns NULL there.
            let m = b.expand(first, next, true)?;
            let matched = b.var(CType::Bool, "om", cx![&m, " >= 0"]);
            let from = b.layout.len();
            gather_payload_where(b, t, probe_no, &m, Some(&matched));
            null_where_unmatched(b, from, &matched);
        }
        (JoinKind::LeftOuter, Some(residual)) => {
            // The rows of the chain the residual holds for, or the item once with NULL
            // build columns when it holds for none: the chain is walked first for
            // whether any row passes (stopping at the first), then expanded from its
            // head where one does (else from none: the unmatched item), and the rows it
            // fails for are dropped.
            let any = b.any_in_chain(first.clone(), next.clone(), |b, m| {
                gather_payload(b, t, probe_no, &m);
                super::filter::condition(b, residual, &joined)
            })?;
            let start = b.var(CType::Int, "m", cx!["(", any, ") ? ", first, " : -1"]);
            let m = b.expand(start, next, true)?;
            let matched = b.var(CType::Bool, "om", cx![&m, " >= 0"]);
            let from = b.layout.len();
            gather_payload_where(b, t, probe_no, &m, Some(&matched));
            null_where_unmatched(b, from, &matched);
            let holds = b.branch(|b| super::filter::condition(b, residual, &joined))?;
            b.reject(cx!["(", matched, ") && !(", holds, ")"]);
        }
        (JoinKind::Inner, residual) => {
            b.reject_estimated(cx![&first, " < 0"], pass);
            let m = b.expand(first, next, false)?;
            gather_payload(b, t, probe_no, &m);
            if let Some(residual) = residual {
                let holds = super::filter::condition(b, residual, &joined)?;
                b.reject(cx!["!(", holds, ")"]);
            }
        }
        (kind, None) => reject_unmatched(b, *kind, cx!["(", &first, " >= 0)"], pass),
        (kind, Some(residual)) => {
            let any = b.any_in_chain(first, next, |b, m| {
                gather_payload(b, t, probe_no, &m);
                super::filter::condition(b, residual, &joined)
            })?;
            reject_unmatched(b, *kind, any, pass);
        }
    }
    Ok(())
}

/// The first build row of the chain of `keys` in chained table `t` (−1: none), read
/// as probe `probe_no` (its heads, links and, hashed, keys join the parameters), and the
/// name of its links array. A NULL key has no chain; `kind` says what becomes of its row
/// ([`keys`]).
pub fn chain_first(b: &mut Builder<'_>, key_exprs: &[Expr], kind: JoinKind, probe_no: usize, t: &GpuTable, fields: &[Field]) -> Lowered<(CExpr, String)> {
    b.params.push(Param::Heads { probe: probe_no });
    b.params.push(Param::Next { probe: probe_no });
    let heads = format!("h{probe_no}_heads");
    let next = format!("h{probe_no}_next");
    let read = match &t.hashed {
        Some(pack) => {
            b.params.push(Param::Keys { probe: probe_no });
            let (values, ok) = keys(b, key_exprs, kind, fields)?;
            let (s, _) = find(b, t, pack, probe_no, &values, ok);
            cx![&s, format!(" < 0LL ? -1 : __ldg(&{heads}["), &s, "])"]
        }
        None => {
            let [key] = key_exprs else { return Err(Reason::Inconsistent("a dense table probed on several keys".into())) };
            let (k, ok) = keys(b, key_exprs, kind, fields)?;
            let k = k.into_iter().next().ok_or_else(|| Reason::Inconsistent("a probe without a key".into()))?;
            let narrow = width_of(key.ty(fields)) == Some(Width::I32);
            // Slot `slots` (outside the range) holds −1; a NULL key has no chain.
            let s = dense_slot(b, t, k, narrow);
            match ok {
                Some(ok) => cx!["(", ok, format!(") ? __ldg(&{heads}["), s, "]) : -1"],
                None => cx![format!("__ldg(&{heads}["), s, "])"],
            }
        }
    };
    let name = b.fresh("m");
    let first = b.def(CType::Int, name, read, Some(Load::Heads { probe: probe_no }));
    Ok((first, next))
}

/// A mark join's column (EXISTS / IN inside OR): every row stays, with whether it has a
/// match (`marked`), as an `int` 0 or 1 (a NULL key has none: never NULL).
fn push_mark(b: &mut Builder<'_>, marked: CExpr) {
    let v = b.var(CType::Int, "mk", cx!["(", marked, ") ? 1 : 0"]);
    b.layout.push(Val::Local(v, Width::I32));
    b.dicts.push(None);
    b.nulls.push(None);
}

/// Makes the layout's columns from `from` on (a LEFT OUTER join's build columns) NULL
/// where `matched` does not hold, and where matched to a NULL.
fn null_where_unmatched(b: &mut Builder<'_>, from: usize, matched: &CExpr) {
    for null in &mut b.nulls[from..] {
        *null = Some(match null.take() {
            Some(valid) => cx!["(", matched.clone(), " && ", valid, ")"],
            None => matched.clone(),
        });
    }
}

/// Appends the payload columns of table `t` at slot `s` to the layout.
pub(super) fn gather_payload(b: &mut Builder<'_>, t: &GpuTable, probe_no: usize, s: &CExpr) {
    gather_payload_where(b, t, probe_no, s, None);
}

/// Appends the payload columns of table `t` at slot `s` to the layout, read only where
/// `found` holds when given (elsewhere the slot is outside the arrays; the value is 0).
/// A column that may be NULL is NULL where its validity bit is not set (and, with
/// `found`, where it does not hold).
fn gather_payload_where(b: &mut Builder<'_>, t: &GpuTable, probe_no: usize, s: &CExpr, found: Option<&CExpr>) {
    for (j, pc) in t.payload.iter().enumerate() {
        let name = b.fresh("b");
        let read = cx![format!("h{probe_no}_p{j}["), s, "]"];
        // A narrowed payload holds distances from its reference (`build::payload_form`);
        // the sum is the value built, so it never wraps.
        let read = match (pc.narrow, t.payload_refs.get(j).copied().unwrap_or(0)) {
            (Some(_), 0) => cx!["(", pc.width.c(), ")", read],
            (Some(_), r) => cx![super::scan::plus_reference(pc.width, &c_long(r)), read, ")"],
            (None, _) => read,
        };
        let read = match found {
            Some(f) => cx!["(", f.clone(), format!(") ? ({})", pc.width.c()), read, format!(" : ({})0", pc.width.c())],
            None => read,
        };
        let v = b.def(pc.width.ctype(), name, read, Some(Load::Payload { probe: probe_no, column: j }));
        b.layout.push(Val::Local(v, pc.width));
        b.dicts.push(pc.dictionary);
        let valid = pc.nullable.then(|| {
            let bit = super::builder::bit_of(&format!("h{probe_no}_pv{j}"), s);
            let bit = match found {
                Some(f) => cx!["(", f.clone(), ") && (", bit, ")"],
                None => bit,
            };
            b.var(CType::Bool, "pn", bit)
        });
        b.nulls.push(valid);
    }
}

/// `key NOT IN (build keys)`, SQL's way: over an empty build side every row is kept
/// (NULL keys too); otherwise a row is dropped when its key matches, is NULL, or the
/// build side had a NULL key (the comparison is then NULL, never TRUE). What the build
/// saw is in `h{p}_seen` (`Out::BuildSeen`): `[0]` any row, `[1]` a NULL key.
fn null_aware_anti(b: &mut Builder<'_>, probe_no: usize, found: CExpr, key_ok: Option<CExpr>, pass: f64) {
    b.params.push(Param::BuildSeen { probe: probe_no });
    let seen = |i: usize| format!("__ldg(&h{probe_no}_seen[{i}]) != 0u");
    let null_key = key_ok.map_or(CExpr::text("false"), |ok| cx!["!(", ok, ")"]);
    let drop = cx!["(", seen(0), ") && ((", found, ") || ", null_key, format!(" || {})", seen(1))];
    b.reject_estimated(drop, 1.0 - pass);
}

/// Drops the item as join `kind` wants it (inner and semi joins: without a match; anti
/// joins: with one), `pass` being the estimated share of matches.
fn reject_unmatched(b: &mut Builder<'_>, kind: JoinKind, found: CExpr, pass: f64) {
    if kind == JoinKind::Anti {
        b.reject_estimated(found, 1.0 - pass);
    } else {
        b.reject_estimated(cx!["!", found], pass);
    }
}

/// The slot of `keys` in hashed table `t` (−1 when absent) and whether it is there. The
/// key's first slot is loaded for every item in one stage (a load the stage pass waits
/// for only where it is used, so a thread's items are in flight together, as with
/// column loads); only items whose first slot holds another key walk on
/// (`tessera_hash_find_after`), which at a load factor of at most one half is rare.
/// Keys outside the build's packed ranges cannot be in the table, nor can a NULL key
/// (`ok`: where the keys `values` are not NULL, when they may be).
pub fn find(b: &mut Builder<'_>, t: &GpuTable, pack: &KeyPack, probe: usize, values: &[CExpr], ok: Option<CExpr>) -> (CExpr, CExpr) {
    let (word, in_range) = super::hash::pack_values(b, pack, values);
    let in_range = match ok {
        Some(ok) => cx![ok, " && ", in_range],
        None => in_range,
    };
    let mask = t.slots - 1;
    let (first, at) = super::hash::first_slot(b, &word, mask, &format!("h{probe}_keys"), true, Load::HashKey { probe });
    let slot = cx![
        "!(", in_range, ") ? -1LL : (", at.clone(), " == ", word.clone(), " ? (long long)", first.clone(), " : (", at,
        format!(" == {EMPTY}ull ? -1LL : tessera_hash_find_after(h{probe}_keys, {mask}ull, "), word, ", ", first, ")))"
    ];
    let s = b.var(CType::LongLong, "s", slot);
    let found = b.var(CType::Bool, "f", cx![&s, " >= 0LL"]);
    (s, found)
}

/// The values of a probe's keys `key_exprs` and, when one may be NULL and the probe (of
/// `kind`) keeps rows without a match (anti, LEFT OUTER), the condition that none is (a
/// NULL key matches nothing). Inner and semi probes drop a row whose key is NULL here,
/// before the lookup.
fn keys(b: &mut Builder<'_>, key_exprs: &[Expr], kind: JoinKind, fields: &[Field]) -> Lowered<(Vec<CExpr>, Option<CExpr>)> {
    let (values, ok) = super::filter::keys(b, key_exprs, fields)?;
    Ok(match ok {
        Some(ok) if matches!(kind, JoinKind::Inner | JoinKind::Semi) => {
            super::filter::reject_null_keys(b, key_exprs, ok);
            (values, None)
        }
        ok => (values, ok),
    })
}
