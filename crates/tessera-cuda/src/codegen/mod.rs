//! Code generation: one IR pipeline → one fused CUDA kernel.
//!
//! The kernel reads like a hand-written SSB query (Crystal): each thread block takes a
//! tile of `BLOCK_THREADS × ITEMS` rows; each thread holds its items striped (coalesced)
//! with a selection flag each, and the pipeline runs as a sequence of *stages*, each one
//! unrolled loop over the thread's selected items. A stage ends before the first use of a
//! value loaded from global memory in it, so a thread issues a load for all its items
//! before any item waits (Crystal's `BlockLoad` → `BlockPred`); columns needed later load
//! only for items still selected; per-item values live in register arrays, so nothing
//! between operators touches global memory.
//!
//! Generation has three steps:
//! 1. **Lowering** ([`builder`]): each operator of the pipeline adds statements over typed
//!    per-item values to a kernel IR ([`ir`]) — one file per operator family: [`scan`]
//!    (column loads), [`filter`] (filters, projections, expressions), [`probe`], and the
//!    sinks [`build`], [`aggregate`], [`mark`], [`materialize`] ([`sort`] ranks an aggregation's
//!    groups and [`having`] filters them before they leave the GPU; sort pipelines are not
//!    generated yet).
//! 2. **Passes** on the IR, reading definitions and uses: [`passes`] drops payload loads
//!    nothing reads and cuts the statements into stages; [`defer`] queues the rows that
//!    pass a selective pipeline's tests per warp; [`scan::eager_columns`] picks the columns
//!    to load up front (then the pipeline is lowered again with them first).
//! 3. **Printing** ([`print`]): the IR as CUDA C++, with the parameters of [`abi`].
//!
//! NULLs: a source column whose data holds them comes with its validity bitmap
//! ([`GpuColumn::nullable`], [`abi::Param::Validity`]); a value that may be NULL carries
//! the condition of not being NULL ([`builder::Builder::nulls`]) through filters and
//! projections (three-valued logic), probes and builds (a NULL key matches nothing) and
//! aggregations (NULL inputs skipped and counted, a NULL perfect-hash key its own group).
//!
//! A new operator is a new file that lowers it through the [`builder::Builder`], plus one
//! match arm in [`lower`]. What the generator does not support comes back as
//! [`Unsupported`] reasons, all of them; the pipeline then runs on the CPU backend.
//! Device functions the kernels call live in the device library (`cuda/*.cuh`).

pub mod abi;
pub mod aggregate;
pub mod build;
pub mod builder;
pub mod defer;
pub mod filter;
pub mod hash;
pub mod having;
pub mod ir;
pub mod layout;
pub mod mark;
pub mod materialize;
pub mod options;
pub mod passes;
pub mod print;
pub mod probe;
pub mod scan;
pub mod sort;
pub mod unsupported;

#[cfg(test)]
mod tests;

use std::collections::HashMap;

use tessera_ir::{GroupStrategy, Operator, Pipeline, Sink, Source, Type};

pub use abi::{KERNEL_NAME, Kernel, MAX_KERNEL_PARAMS, Out, Param};
pub use aggregate::{Accumulator, DIRECT_DOMAIN_MAX_BYTES, GroupTable, MAX_GROUP_SLOTS, MAX_TABLE_COPIES, SHARED_AGG_BYTES, Presence, SumRepr, group_table, magnitude, presence, table_copies};
pub use hash::{KeyPack, KeyPart};
pub use layout::{DictRef, GpuColumn, GpuTable, KeyLayout, Narrow, SinkLayout, Width, BITS_GROUP_ROWS, bit_loads, count_runs, fill_runs, pack_bits, run_value, runs_of, unpack_bit, width_of};
pub use options::{BLOCK_THREADS, Experiments, WIDE_BLOCK_THREADS, INDEX32_MAX_ROWS, ITEMS_PER_THREAD, ITEMS_PER_THREAD_LEAN, ITEMS_PER_THREAD_MANY_PROBES, KernelOptions, Literals, MAX_ITEMS_PER_THREAD};
pub use probe::{MAX_TABLE_SLOTS, bitmap_words};
pub use unsupported::{Reason, Site, Unsupported};

use crate::cx;
use builder::{Builder, Val};
use ir::{KernelIr, Stmt};

/// Generates the kernel of `pipeline`, whose source columns live on the GPU as `cols`
/// and whose probes read `tables` (per probe, in operator order, then the table a mark
/// sink reads), with literals inlined and the default tile.
pub fn generate(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable]) -> Result<Kernel, Vec<Unsupported>> {
    generate_with(pipeline, cols, tables, KernelOptions { literals: Literals::Inline, ..KernelOptions::default() })
}

/// Multi-probe pipelines over packed columns whose probed tables take at most this many
/// bytes in all run 4 items a thread, not 2: their probes hit L2 (an H100's or H200's is
/// 50 MB), and the tile's staging and decoder setup then serve twice the rows. On the
/// H200 (2026-11-27g runs 4 and 5), 4 items for every multi-probe pipeline over packed
/// columns made SSB SF 20's kernels 13.85 -> 12.57 ms (q2.x, q3.1/q3.2, q4.x: dimension
/// tables of a few MB) but TPC-H SF 10's 49.6 -> 56.6 ms, all of it in lineitem's probes
/// of orders (a dense table of 60 M slots) and partsupp (q05, q07, q08, q09, q21), whose
/// misses to DRAM want every warp they can keep resident.
pub const L2_RESIDENT_TABLE_BYTES: usize = 24 << 20;

/// The bytes of a built table a probe may read: its payload arrays, its keys when
/// hashed, its chains' heads and links, its membership bitmap.
fn table_bytes(t: &GpuTable) -> usize {
    let rows = t.chain.unwrap_or(t.slots);
    let payload: usize = t.payload.iter().map(|c| c.width.bytes()).sum();
    let keys = if t.hashed.is_some() { 8 * t.slots } else { 0 };
    let chains = t.chain.map_or(0, |rows| 4 * (t.slots + 1 + rows));
    rows.saturating_mul(payload).saturating_add(keys).saturating_add(chains).saturating_add(t.slots / 8)
}

/// The probes of `pipeline`.
fn probe_count(pipeline: &Pipeline) -> usize {
    pipeline.operators.iter().filter(|o| matches!(o, Operator::Probe(_))).count()
}

/// Whether the tables `pipeline`'s probes read take at most [`L2_RESIDENT_TABLE_BYTES`]
/// in all (`tables` per probe, in operator order, then a mark sink's).
fn tables_stay_in_l2(pipeline: &Pipeline, tables: &[GpuTable]) -> bool {
    tables.iter().take(probe_count(pipeline)).map(table_bytes).sum::<usize>() <= L2_RESIDENT_TABLE_BYTES
}

/// [`generate`] with a choice of how literals reach the kernel and of the tile shape.
pub fn generate_with(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable], options: KernelOptions) -> Result<Kernel, Vec<Unsupported>> {
    let probes = probe_count(pipeline);
    // Over packed columns, a pipeline whose tables stay in L2 takes 4 items too (see
    // [`L2_RESIDENT_TABLE_BYTES`]).
    let packed = cols.iter().any(|c| c.packed);
    let many = match options.experiments.packed_items {
        0 if packed && tables_stay_in_l2(pipeline, tables) => ITEMS_PER_THREAD,
        n if n > 0 && packed => n,
        _ => ITEMS_PER_THREAD_MANY_PROBES,
    };
    let single = match options.experiments.single_items {
        0 => ITEMS_PER_THREAD,
        n => n,
    };
    let items = options.items_per_thread.unwrap_or(if probes <= 1 { single } else { many });
    if !(1..=MAX_ITEMS_PER_THREAD).contains(&items) {
        return Err(vec![Unsupported::new(Site::Kernel, Reason::ItemsPerThread(items))]);
    }
    // Lowered once to see where each column is first loaded and how many rows are
    // estimated to be still selected there; columns most of whose sectors would be read
    // anyway are then loaded up front, together (the first one is loaded first anyway:
    // a lone narrowed one loaded up front a word a lane made SSB q1.3 slower on the H200,
    // 0.257-0.259 → 0.264-0.268 ms, 2026-11-27i run 1).
    let (mut kernel, mut ir) = assemble(pipeline, cols, tables, &options, items, &[])?;
    // A lean pipeline (see [`ITEMS_PER_THREAD_LEAN`]), known once lowered, is lowered
    // again with its items (should that fail, the first kernel stays), and with its rows
    // counted in 64 bits: SSB's lean q1.x probes ran 4–12% slower with 32-bit rows on the
    // H200 (q1.3 0.139 → 0.156 ms, q1.1 0.269 → 0.287; 2026-11-28g run 2), where every
    // other SSB query's kernels ran as fast or faster but q3.2's (see `INDEX32_MAX_ROWS`).
    // Over compact columns too (bit-packed, runs): with 32-bit rows SSB SF 20's q1.1 and
    // q1.2 took 0.014 and 0.006 ms less, q1.3 0.06 more (0.246 → 0.305; H200,
    // 2026-11-30e run 1).
    let mut options = options;
    let lean = options.experiments.lean_items;
    if options.items_per_thread.is_none() && lean > 0 && lean != items && probes <= 1 && lean <= MAX_ITEMS_PER_THREAD && is_lean(pipeline, &ir) {
        let wide = KernelOptions { experiments: Experiments { index32: false, ..options.experiments }, ..options };
        if let Ok(again) = assemble(pipeline, cols, tables, &wide, lean, &[]) {
            (kernel, ir) = again;
            options = wide;
        }
    }
    let items = kernel.items_per_thread;
    let early = queues_early(pipeline, &options);
    let queued_from = if early { defer::early_split(&ir.stmts, options.experiments.defer_max_pass, items, sink_group_table(pipeline, &kernel.sink), cols) } else { None };
    // The filters' estimate (`filtered_share`) is there for the queue: where no queue
    // follows, the pipeline is lowered again without it, as it was before queues. With
    // it alone TPC-H q19's part key, first read after its filters, fell below the eager
    // rule's share of sectors and was read at the rows left, behind a warp vote: its
    // kernel took 0.321-0.329 ms against 0.307-0.321 at SF 10 (H200, 2026-12-01b run 4).
    if queued_from.is_none() && early && filtered_share(pipeline).is_some() {
        let plain = KernelOptions { experiments: Experiments { scalar_queue: false, grouped_queue: false, ..options.experiments }, ..options };
        if let Ok(again) = assemble(pipeline, cols, tables, &plain, items, &[]) {
            (kernel, ir) = again;
            options = plain;
        }
    }
    let eager = scan::eager_columns(&ir, cols, options.experiments.eager_min_sectors, queued_from);
    // A bit-packed column is loaded up front even alone: where first used it is read a
    // row at a time (`tessera_bits_get`: the row's word found, one or two loads, shifts),
    // up front as the words of the thread's stream, shared by its items (SSB q2.2's
    // probe, its part keys bit-packed and read a row at a time, issued 203 M instructions
    // against 113 M with them 4 bytes wide; H200, 2026-11-29g run 2). So is a column of
    // runs: read a row at a time it is two dependent loads a row (`tessera_runs_get`),
    // up front its directory words are loaded a tile ahead (SSB SF 20 q1.3 over compact
    // columns, its dates in runs read a row at a time: 364 µs and 196 M instructions
    // against 135 µs and 75 M byte-narrowed; H200, 2026-11-30d run 12).
    let laid_out = eager.iter().any(|&c| compact(&cols[c]));
    if eager.len() < 2 && !laid_out {
        return Ok(kernel);
    }
    // Loading columns up front makes more values live across stages (and queued, with a
    // warp queue): should that exceed a limit the first kernel is kept.
    Ok(assemble(pipeline, cols, tables, &options, items, &eager).map_or(kernel, |(k, _)| k))
}

/// A grouped aggregation's block-level table in its sink's layout `sink` (None for a
/// scalar aggregation or another sink): what decides whether and where its rows queue.
fn sink_group_table(pipeline: &Pipeline, sink: &SinkLayout) -> Option<GroupTable> {
    match (sink, &pipeline.sink) {
        (SinkLayout::Aggregate { table, .. }, Sink::Aggregate(a)) if !matches!(a.strategy, GroupStrategy::Scalar) => Some(*table),
        _ => None,
    }
}

/// Whether `pipeline`'s rows may be queued after its first selective row test (see
/// `defer.rs`): it aggregates, into one group whose sums each thread keeps in registers
/// (`Experiments::scalar_queue`) or into groups (`Experiments::grouped_queue`, where
/// `defer::early_split` allows it).
fn queues_early(pipeline: &Pipeline, options: &KernelOptions) -> bool {
    let Sink::Aggregate(a) = &pipeline.sink else { return false };
    if a.group_by.is_empty() { options.experiments.scalar_queue } else { options.experiments.grouped_queue }
}

/// The last filter before `pipeline`'s first probe (an operator index) and the share of
/// the scanned rows the planner estimates the operators before that probe keep
/// ([`tessera_ir::Scan::kept_permille`]); None without an estimate.
fn filtered_share(pipeline: &Pipeline) -> Option<(usize, f64)> {
    let Source::Scan(scan) = &pipeline.source else { return None };
    if scan.kept_permille >= 1000 {
        return None;
    }
    let first_probe = pipeline.operators.iter().position(|op| matches!(op, Operator::Probe(_))).unwrap_or(pipeline.operators.len());
    let last = pipeline.operators[..first_probe].iter().rposition(|op| matches!(op, Operator::Filter(_)))?;
    Some((last, f64::from(scan.kept_permille) / 1000.0))
}

/// Whether `pipeline`, lowered to `ir`, is lean (see [`ITEMS_PER_THREAD_LEAN`]): it ends
/// in one group and loads nothing but its source columns and membership bits (a probe's
/// payload, hash keys or chains are other loads).
fn is_lean(pipeline: &Pipeline, ir: &KernelIr) -> bool {
    matches!(&pipeline.sink, Sink::Aggregate(a) if a.group_by.is_empty())
        && ir.stmts.iter().all(|s| match s {
            Stmt::Def { load: Some(l), .. } => matches!(l, ir::Load::Column { .. } | ir::Load::Bitmap { .. }),
            Stmt::Expand { .. } => false,
            _ => true,
        })
}

/// Lowers, runs the passes and prints: the kernel and its IR.
fn assemble(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable], options: &KernelOptions, items: u32, eager: &[usize]) -> Result<(Kernel, KernelIr), Vec<Unsupported>> {
    let mut lowered = lower(pipeline, cols, tables, options, items, eager)?;
    passes::drop_unread_payloads(&mut lowered.ir);
    if options.experiments.compact_cuts {
        // Only loads of runs, the costliest, get a stage: the stages that cuts before
        // bit-packed loads added took SSB q4.2's probe over compact columns from 40
        // registers to 55 (3 blocks of 512 threads an SM to 2; SF 20 0.554 → 0.658 ms)
        // and, with them left to kernels of 128-thread blocks, q4.2's and q4.3's at SF 100
        // 2.63 → 2.90 and 1.49 → 1.67 ms (H200, 2026-11-30h runs 2, 5–7).
        // In kernels of ITEMS_PER_THREAD_LEAN items or more (SSB's lean q1.x probes) a
        // bit-packed row read alone gets one too (`Experiments::lean_bit_cuts`).
        let bits = options.experiments.lean_bit_cuts && items >= options::ITEMS_PER_THREAD_LEAN;
        let costly: Vec<bool> = cols.iter().map(|c| c.in_runs() || (bits && c.bit_width().is_some())).collect();
        passes::cut_before_compact_loads(&mut lowered.ir, &costly, items);
    }
    let stages = passes::stages(&lowered.ir.stmts);
    let planned = match defer::expansion(&lowered.ir, &stages) {
        Some(Ok(expanded)) => Some(expanded),
        Some(Err(r)) => return Err(vec![Unsupported::new(Site::Kernel, r)]),
        None => {
            let early = queues_early(pipeline, options).then_some(((options.experiments.drain_items, options.experiments.compact_drain_items), cols));
            defer::plan(&lowered.ir, &stages, lowered.group_table, items, options.experiments.defer_max_pass, early)
        }
    };
    let (deferral, mut head, tail) = match planned {
        Some((d, head, tail)) => (Some(defer::Deferral { row32: options.experiments.queue_rows32 && fits32(pipeline), ..d }), head, tail),
        None => (None, stages, Vec::new()),
    };
    // (`Experiments::carry` runs the last stage an iteration late instead.)
    if options.experiments.merge_sink && !options.experiments.carry && deferral.is_none() && lowered.group_table == Some(GroupTable::Global) {
        merge_last_stage(&mut head);
    }
    let threads = block_threads(pipeline, cols, tables, options, items, lowered.group_table, deferral.is_some());
    let shape = print::Shape {
        pipeline: pipeline.id,
        params: &lowered.params,
        cols,
        items,
        prefetch: !eager.is_empty() && options.experiments.prefetch,
        whole_tiles: options.experiments.whole_tiles,
        stage_late: options.experiments.stage_late,
        zones: zone_pruned(pipeline, options),
        zone_carry: options.experiments.zone_carry,
        zone_one: options.experiments.zone_carry && options.experiments.zone_one,
        min_blocks: options.experiments.min_blocks,
        narrow_words: options.experiments.narrow_words,
        warp_skip: options.experiments.warp_skip,
        sel_bool: options.experiments.sel_bool,
        column_loads: options.experiments.column_loads,
        index32: index32(pipeline, options),
        int_rows: options.experiments.int_rows && index32(pipeline, options),
        // Over a table of at most INDEX32_MAX_ROWS rows, whatever its rows are counted in
        // (a lean pipeline counts them in 64 bits): the count of stream values fits 32.
        stream_steps: options.experiments.stream_steps && options.experiments.int_rows && fits32(pipeline) && cols.iter().any(compact),
        runs_lanes: options.experiments.runs_lanes && (options::RUNS_LANES_MIN_ITEMS..=16).contains(&items),
        runs_distances: options.experiments.runs_distances,
        rolled_drain_max: options.experiments.rolled_drain_max,
        parts: threads > BLOCK_THREADS && cols.iter().any(compact),
        carry: options.experiments.carry,
        threads,
    };
    let source = print::kernel(&lowered.ir, &shape, &head, deferral.as_ref(), &tail);
    let rows_limit = if shape.index32 || shape.stream_steps { lowered.rows_limit.min(INDEX32_MAX_ROWS) } else { lowered.rows_limit };
    let kernel = Kernel {
        source,
        params: lowered.params,
        literals: lowered.literals,
        subqueries: lowered.subqueries,
        consts: lowered.consts,
        sink: lowered.sink,
        items_per_thread: items,
        block_threads: threads,
        rows_limit,
        strings: lowered.strings,
    };
    Ok((kernel, lowered.ir))
}

/// Runs the last stage in the one before it (`Experiments::merge_sink`, for kernels
/// summing into global group arrays): each item's statements of both, in order, in one
/// loop over the items, so that an item's loaded payloads and value die at its atomics
/// instead of all items' living until the last loop (SSB q3.1's probe: 32 registers
/// instead of 40; see `Experiments::merge_sink` for what was measured). Never into the
/// first stage, which the printer may issue a tile ahead (`Shape::prefetch`).
fn merge_last_stage(stages: &mut Vec<ir::Stage>) {
    if stages.len() < 3 {
        return;
    }
    if let Some(last) = stages.pop() {
        if let Some(before) = stages.last_mut() {
            before.extend(last);
        }
    }
}

/// Threads a block for `pipeline`'s kernel: [`WIDE_BLOCK_THREADS`] for a pipeline with two
/// or more probes whose tables stay in L2 ([`L2_RESIDENT_TABLE_BYTES`]) and whose groups
/// are summed into global arrays, with no warp queue and no packed column (nor a
/// bit-packed or run one without `Experiments::compact_wide`: those a wide kernel reads
/// in parts, see [`compact`]), where a tile of `items` rows a thread holds at most a
/// stored tile's rows (a zone of the zone bitmap: `tessera_zone_pass` tests the zones of
/// a tile's first and last rows, so a tile may span two, not three); [`BLOCK_THREADS`]
/// otherwise (see [`WIDE_BLOCK_THREADS`] for what was measured).
fn block_threads(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable], options: &KernelOptions, items: u32, group_table: Option<GroupTable>, deferred: bool) -> u32 {
    let laid_out = |c: &GpuColumn| c.packed || !options.experiments.compact_wide && compact(c);
    let wide = options.experiments.wide_blocks
        && probe_count(pipeline) >= 2
        && !deferred
        && group_table == Some(GroupTable::Global)
        && !cols.iter().any(laid_out)
        && tables_stay_in_l2(pipeline, tables)
        && WIDE_BLOCK_THREADS * items <= print::STORAGE_TILE_ROWS;
    if wide { WIDE_BLOCK_THREADS } else { BLOCK_THREADS }
}

/// Whether `c` is bit-packed or in runs: laid out for blocks of [`BLOCK_THREADS`], which a
/// kernel of wider blocks reads in parts (`print::Shape::parts`).
fn compact(c: &GpuColumn) -> bool {
    c.bit_width().is_some() || c.in_runs()
}

/// A pipeline lowered into the kernel IR, with what the kernel reads and writes.
struct Lowered {
    ir: KernelIr,
    params: Vec<Param>,
    literals: Vec<i64>,
    subqueries: Vec<(tessera_ir::ResultId, Type)>,
    consts: Vec<i64>,
    sink: SinkLayout,
    rows_limit: u64,
    /// A grouped aggregation's block-level table (what decides warp queues).
    group_table: Option<GroupTable>,
    /// Source string columns whose bytes the kernel reads.
    strings: Vec<usize>,
}

/// Lowers `pipeline`, loading source columns `eager` first, in a stage of their own;
/// every reason it cannot run on the GPU when it cannot.
fn lower(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable], options: &KernelOptions, items: u32, eager: &[usize]) -> Result<Lowered, Vec<Unsupported>> {
    let mut reasons = Vec::new();
    let fields0 = pipeline.source_fields().to_vec();
    if fields0.len() != cols.len() {
        return Err(vec![Unsupported::new(Site::Source, Reason::Inconsistent("source columns and GPU columns differ".into()))]);
    }
    for t in tables.iter().filter(|t| t.hashed.is_none() && t.slots > MAX_TABLE_SLOTS) {
        reasons.push(Unsupported::new(Site::Kernel, Reason::TableSlots(t.slots)));
    }
    // A nullable field whose data holds NULLs comes with its validity bitmap
    // (`GpuColumn::nullable`, then `Builder::nulls`); one without a NULL goes as it is.
    for (f, c) in fields0.iter().zip(cols) {
        if c.nullable && c.packed {
            // Packed tiles have no NULLs: the executor never packs such a column.
            reasons.push(Unsupported::new(Site::Source, Reason::NullableColumn { column: f.name.clone() }));
        }
        if c.narrow.is_some() && (c.nullable || c.packed || c.width == Width::Str) {
            // The executor narrows only plain value columns without NULLs.
            reasons.push(Unsupported::new(Site::Source, Reason::Inconsistent(format!("column {} narrowed in another form", f.name))));
        }
    }
    let mut b = Builder::new(cols, options.literals == Literals::Parameters);
    b.compares_32 = options.experiments.compares_32;
    if options.experiments.direct_max_bytes > 0 {
        b.group_table_bytes = options.experiments.direct_max_bytes as usize;
    }
    if options.experiments.direct_domain_bytes > 0 {
        b.direct_domain_bytes = options.experiments.direct_domain_bytes as usize;
    }
    b.column_policy = options.experiments.column_loads != 0;
    b.warp_combine = options.experiments.warp_combine;
    b.presence = options.experiments.presence;
    b.l2_bitmap_cost = options.experiments.bitmap_cost;
    b.items = items;
    b.narrow_payloads = options.experiments.narrow_payloads;
    if options.experiments.global_copies > 0 {
        b.global_copies = (options.experiments.global_copies as usize).next_power_of_two().min(aggregate::MAX_GLOBAL_COPIES);
    }
    for &c in eager {
        if let Err(r) = scan::load(&mut b, c) {
            reasons.push(Unsupported::new(Site::Source, r));
        }
    }
    // The eager loads are the first stage, alone: the kernel issues them for the next
    // tile while it works on this one (see `print.rs`).
    b.cut();
    let mut fields = fields0;
    let mut hoisted = probe::hoistable(pipeline, cols, tables);
    // Far more selective probes are tested before the filters (see `probe::early`).
    let early = probe::early(pipeline, &hoisted, tables, options.experiments.early_probes);
    hoisted.retain(|h| !early.contains(h));
    let mut hoisted_slots = match probe::hoist(&mut b, &early, tables, true) {
        Ok(slots) => slots,
        Err(r) => {
            reasons.push(Unsupported::new(Site::Kernel, r));
            HashMap::new()
        }
    };
    let mut probe_no = 0usize;
    // An aggregation may queue its rows after its first selective row test (see
    // `defer.rs`); the planner's estimate of what its filters before the first probe keep
    // goes on the last of their tests (`filtered_share`), which had none.
    let filters_kept = filtered_share(pipeline).filter(|_| queues_early(pipeline, options));
    for (index, op) in pipeline.operators.iter().enumerate() {
        let tested_from = b.ir.stmts.len();
        let (kind, out) = match op {
            Operator::Filter(_) => ("filter", fields.clone()),
            Operator::Project { fields: out, .. } => ("project", out.clone()),
            Operator::Probe(_) => ("probe", op.output_fields(&fields)),
        };
        let site = Site::Operator { index, kind };
        if matches!(op, Operator::Probe(_)) && probe_no == 0 {
            match probe::hoist(&mut b, &hoisted, tables, false) {
                Ok(slots) => hoisted_slots.extend(slots),
                Err(r) => reasons.push(Unsupported::new(site.clone(), r)),
            }
        }
        let done = match op {
            Operator::Filter(p) => filter::filter(&mut b, p, &fields),
            Operator::Project { exprs, fields: out } => filter::project(&mut b, exprs, out, &fields),
            Operator::Probe(p) => match tables.get(probe_no) {
                Some(t) => probe::lower(&mut b, p, probe_no, t, &hoisted_slots, &fields),
                None => Err(Reason::TableOnCpu),
            },
        };
        if let Err(r) = done {
            reasons.push(Unsupported::new(site, r));
            // Keep the layout the operator's output, so the rest is still checked.
            b.layout.truncate(out.len());
            b.dicts.truncate(out.len());
            b.nulls.truncate(out.len());
            while b.layout.len() < out.len() {
                b.layout.push(Val::Local(cx!["0"], Width::I64));
                b.dicts.push(None);
                b.nulls.push(None);
            }
        }
        if let Some((last, kept)) = filters_kept
            && index == last
            && let Some(Stmt::Reject { pass, .. }) = b.ir.stmts[tested_from..].iter_mut().rev().find(|s| matches!(s, Stmt::Reject { flag: None, .. }))
        {
            b.pass *= kept;
            *pass = b.pass;
        }
        if matches!(op, Operator::Probe(_)) {
            probe_no += 1;
        }
        fields = out;
    }
    let source_rows = match &pipeline.source {
        // Expanded rows are not bounded by the source's (sums then take 128 bits).
        Source::Scan(scan) if !b.expanded => scan.rows,
        _ => u64::MAX,
    };
    let sink = match &pipeline.sink {
        Sink::HashBuild(h) => build::lower(&mut b, h, pipeline, &fields).map(|l| (l, u64::MAX)),
        Sink::Aggregate(a) => {
            // The rows estimated to reach the sink: the scan's share kept by its filters,
            // then the probes' pass rates.
            let estimated = match &pipeline.source {
                Source::Scan(scan) => Some(scan.rows as f64 * f64::from(scan.kept_permille.min(1000)) / 1000.0 * b.pass),
                Source::Result { .. } => None,
            };
            aggregate::lower(&mut b, a, &fields, source_rows, estimated).map(|l| (l.layout, l.rows_limit))
        }
        Sink::Sort(_) => Err(Reason::Sort),
        // The table a mark sink reads comes after the operators' probes.
        Sink::MarkBuild(m) => match tables.get(probe_no) {
            Some(t) => mark::lower(&mut b, m, probe_no, t, &fields).map(|l| (l, u64::MAX)),
            None => Err(Reason::MarkBuild),
        },
        // Materialized rows have room for as many as the source has.
        Sink::Materialize { .. } if b.expanded => Err(Reason::ExpandedSink("materializing rows")),
        Sink::Materialize { skip, fetch, .. } => materialize::lower(&mut b, &fields, *skip > 0 || fetch.is_some()).map(|l| (l, u64::MAX)),
    };
    let (sink, rows_limit, group_table) = match sink {
        Err(r) => {
            reasons.push(Unsupported::new(Site::Sink(sink_kind(&pipeline.sink)), r));
            (None, u64::MAX, None)
        }
        Ok((layout, limit)) => {
            let table = sink_group_table(pipeline, &layout);
            (Some(layout), limit, table)
        }
    };
    let literals = b.literals.take().unwrap_or_default();
    let mut params = vec![Param::Rows, Param::Flags, Param::Consts];
    params.extend(cols.iter().enumerate().map(|(i, c)| Param::Column { column: i, width: c.width, packed: c.packed, narrow: c.narrow }));
    params.extend(cols.iter().enumerate().filter(|(_, c)| c.width == Width::Str).map(|(i, _)| Param::Bytes { column: i }));
    params.extend(cols.iter().enumerate().filter(|(_, c)| c.nullable).map(|(i, _)| Param::Validity { column: i }));
    params.extend(cols.iter().enumerate().filter(|(_, c)| c.narrow.is_some()).map(|(i, _)| Param::Reference { column: i }));
    params.extend(cols.iter().enumerate().filter_map(|(i, c)| match c.narrow {
        Some(n @ Narrow::Runs { .. }) => Some(Param::RunValues { column: i, narrow: n }),
        _ => None,
    }));
    if zone_pruned(pipeline, options) {
        params.push(Param::Zones);
    }
    params.append(&mut b.params);
    params.extend((0..literals.len()).map(Param::Literal));
    params.extend((0..b.subqueries.len()).map(Param::Subquery));
    if params.len() > MAX_KERNEL_PARAMS {
        reasons.push(Unsupported::new(Site::Kernel, Reason::Parameters(params.len())));
    }
    match sink {
        Some(sink) if reasons.is_empty() => Ok(Lowered { ir: b.ir, params, literals, subqueries: b.subqueries, consts: b.consts, sink, rows_limit, group_table, strings: b.strings }),
        _ => Err(reasons),
    }
}

/// Whether the kernel counts rows in 32 bits (see [`INDEX32_MAX_ROWS`]): a scan of a
/// table that small, whose rows are known when the kernel is made.
fn index32(pipeline: &Pipeline, options: &KernelOptions) -> bool {
    options.experiments.index32 && fits32(pipeline)
}

/// Whether the pipeline scans a stored table of at most [`INDEX32_MAX_ROWS`] rows.
fn fits32(pipeline: &Pipeline) -> bool {
    matches!(&pipeline.source, Source::Scan(scan) if scan.rows <= INDEX32_MAX_ROWS)
}

/// Whether the kernel skips tiles by a zone bitmap ([`Param::Zones`]): a scan whose
/// leading filters have bounds zone maps can decide. Only those: the block around the
/// stages made some kernels faster where nothing is skipped (TPC-H SF 10 q03, q12, q20),
/// but given to every scan's kernel it made SSB SF 20's 6.59-6.61 -> 7.04-7.06 ms and
/// TPC-H SF 10's 62.3 -> 63.7 (H200, 2026-11-26f run 9).
fn zone_pruned(pipeline: &Pipeline, options: &KernelOptions) -> bool {
    options.experiments.zones && matches!(pipeline.source, Source::Scan(_)) && !tessera_ir::zone_bounds(&pipeline.operators).is_empty()
}

/// The sink's kind, for reasons.
fn sink_kind(sink: &Sink) -> &'static str {
    match sink {
        Sink::HashBuild(_) => "build",
        Sink::Aggregate(_) => "aggregate",
        Sink::Sort(_) => "sort",
        Sink::Materialize { .. } => "materialize",
        Sink::MarkBuild(_) => "mark build rows",
    }
}
