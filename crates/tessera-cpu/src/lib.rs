//! The CPU backend: morsel-driven, vectorized execution of Tessera pipelines.
//!
//! A pipeline's input is split into morsels (the store's 64 Ki-row batches). A few
//! worker threads — one per core — pull morsels from a shared counter, push each one
//! through the pipeline's operators (filters, projections, chains of hash probes) with
//! arrow's vectorized kernels, and feed the result to a thread-local sink: a partial
//! aggregation table, a list of batches for a hash-table build, sort or
//! materialization. Sinks are merged once all morsels are done. This backend is also
//! the reference semantics the CUDA backend must match.
//!
//! Entry point: [`CpuBackend::run`].
#![warn(missing_docs)]

mod aggregate;
mod eval;
mod hash;
mod join;
pub mod parallel;
mod types;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, BooleanArray, UInt32Array};
use arrow::compute::{FilterBuilder, SortColumn, SortOptions, concat, lexsort_to_indices, take};
use tessera_common::{Result, TesseraError};
use tessera_ir::{Expr, HashTableId, JoinKind, MarkBuild, Operator, Pipeline, Probe, ResultId, Sink};

pub use aggregate::{AggregateWorker, GroupPlan, GroupTable, Partitions};
pub use eval::{Evaluator, STRICT, arrow_err, cast_to};
pub use join::JoinTable;
pub use types::{arrow_type, ir_type, scalar_array};

/// A morsel: columns of equal length.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// The columns, in the pipeline layout's order.
    pub columns: Vec<ArrayRef>,
    /// Rows.
    pub rows: usize,
}

impl Chunk {
    /// A chunk of `columns` (rows taken from the first; `rows` when there is none).
    pub fn new(columns: Vec<ArrayRef>, rows: usize) -> Chunk {
        let rows = columns.first().map(|c| c.len()).unwrap_or(rows);
        Chunk { columns, rows }
    }
}

/// Where a pipeline's time went: the morsels (operators and thread-local sinks, in
/// parallel) and the sink's finish (merging partial aggregates, building the hash table,
/// sorting).
#[derive(Debug, Clone, Copy, Default)]
pub struct PipelineRun {
    /// Rows of the source.
    pub rows_in: u64,
    /// Rows the sink produced (groups, build rows, result rows).
    pub rows_out: u64,
    /// Milliseconds until every morsel had passed the operators.
    pub morsels_ms: f64,
    /// Milliseconds of the sink's finish after that.
    pub finish_ms: f64,
}

/// What pipelines leave for later ones: results and hash tables.
#[derive(Debug, Default)]
pub struct CpuState {
    /// Materialized results by id.
    pub results: HashMap<ResultId, Arc<Vec<Chunk>>>,
    /// Built hash tables by id.
    pub tables: HashMap<HashTableId, Arc<JoinTable>>,
}

/// Runs pipelines on the CPU.
#[derive(Debug, Clone)]
pub struct CpuBackend {
    threads: usize,
}

impl Default for CpuBackend {
    fn default() -> Self {
        CpuBackend::new(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        )
    }
}

impl CpuBackend {
    /// A backend using `threads` worker threads.
    pub fn new(threads: usize) -> Self {
        CpuBackend {
            threads: threads.max(1),
        }
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `pipeline` over `input` (its source's morsels), leaving its sink's product
    /// in `state`; returns where its time went (for EXPLAIN ANALYZE).
    pub fn run(&self, pipeline: &Pipeline, input: &[Chunk], state: &mut CpuState) -> Result<PipelineRun> {
        let started = std::time::Instant::now();
        let mut run = PipelineRun {
            rows_in: input.iter().map(|c| c.rows as u64).sum(),
            ..PipelineRun::default()
        };
        let split = split_morsels(input, self.threads);
        let input = split.as_deref().unwrap_or(input);
        let morsels_done = |run: &mut PipelineRun| run.morsels_ms = started.elapsed().as_secs_f64() * 1e3;
        let eval = Evaluator::for_input_rows(usize::try_from(run.rows_in).unwrap_or(usize::MAX));
        let ops = &pipeline.operators;
        let shared: &CpuState = state;
        let live = live_columns(pipeline);
        let step = |chunk: &Chunk| -> Result<Option<Chunk>> {
            apply_operators(ops, &live, chunk.clone(), &eval, shared)
        };
        match &pipeline.sink {
            Sink::Materialize {
                result,
                skip,
                fetch,
            } => {
                let chunks = self.collect(input, &step)?;
                morsels_done(&mut run);
                let chunks = limit(chunks, *skip, *fetch)?;
                run.rows_out = chunks.iter().map(|c| c.rows as u64).sum();
                state.results.insert(*result, Arc::new(chunks));
            }
            Sink::Sort(sort) => {
                let chunks = self.collect(input, &step)?;
                morsels_done(&mut run);
                let sorted = sort_chunks(chunks, sort, &eval)?;
                run.rows_out = sorted.iter().map(|c| c.rows as u64).sum();
                state.results.insert(sort.result, Arc::new(sorted));
            }
            Sink::HashBuild(build) => {
                let parts = self.for_each_morsel(
                    input.len(),
                    || Ok(Vec::new()),
                    |acc: &mut Vec<(usize, Vec<ArrayRef>, Vec<ArrayRef>, usize)>, i| {
                        if let Some(c) = step(&input[i])? {
                            let keys = build
                                .keys
                                .iter()
                                .map(|k| eval.eval(k, &c.columns, c.rows))
                                .collect::<Result<Vec<_>>>()?;
                            let payload = build
                                .payload
                                .iter()
                                .map(|&p| Arc::clone(&c.columns[p]))
                                .collect();
                            acc.push((i, keys, payload, c.rows));
                        }
                        Ok(())
                    },
                )?;
                morsels_done(&mut run);
                let mut parts: Vec<_> = parts.into_iter().flatten().collect();
                parts.sort_by_key(|p| p.0);
                let rows: usize = parts.iter().map(|p| p.3).sum();
                let fields = pipeline.sink_input_fields();
                // A key that is a payload column is concatenated once, as payload.
                let key_in_payload: Vec<Option<usize>> = build
                    .keys
                    .iter()
                    .map(|k| match k {
                        Expr::Column { index, .. } => build.payload.iter().position(|p| p == index),
                        _ => None,
                    })
                    .collect();
                let mut wanted: Vec<(Vec<&dyn Array>, arrow::datatypes::DataType)> = build
                    .payload
                    .iter()
                    .enumerate()
                    .map(|(k, &c)| (parts.iter().map(|p| p.2[k].as_ref()).collect(), arrow_type(fields[c].ty)))
                    .collect();
                for (k, key) in build.keys.iter().enumerate() {
                    if key_in_payload[k].is_none() {
                        wanted.push((parts.iter().map(|p| p.1[k].as_ref()).collect(), arrow_type(key.ty(&fields))));
                    }
                }
                let mut columns = concat_in_parallel(wanted, rows, self.threads)?.into_iter();
                let payload: Vec<ArrayRef> = columns.by_ref().take(build.payload.len()).collect();
                let keys: Vec<ArrayRef> = key_in_payload
                    .iter()
                    .map(|p| match p {
                        Some(j) => Some(Arc::clone(&payload[*j])),
                        None => columns.next(),
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(|| TesseraError::Internal("build keys missing".into()))?;
                let table = JoinTable::build(
                    keys,
                    payload,
                    rows,
                    &build.strategy,
                    build.nulls_equal,
                    self.threads,
                )?;
                run.rows_out = table.rows as u64;
                state.tables.insert(build.table, Arc::new(table));
            }
            Sink::Aggregate(agg) => {
                // Grouped by the independent keys when the planner found dependent ones,
                // the output's columns then put back in order. Not with a dependent
                // string: a MIN of strings compares and copies every row's value (TPC-H
                // q10 at SF 1 took 335 ms so, against 44 ms hashing all seven keys).
                let reduced = agg.reduced_form().filter(|(r, _)| r.aggregates[agg.aggregates.len()..].iter().all(|x| x.ty != tessera_ir::Type::Utf8));
                let (agg, order) = match &reduced {
                    Some((a, order)) => (a, Some(order)),
                    None => (agg, None),
                };
                let fields = pipeline.sink_input_fields();
                let key_types: Vec<_> = agg
                    .group_by
                    .iter()
                    .map(|k| arrow_type(k.ty(&fields)))
                    .collect();
                let nullable = agg.group_by.iter().any(|k| k.nullable(&fields));
                let plan = GroupPlan::new(&agg.strategy, &agg.aggregates, &key_types, nullable)?;
                let workers = self.for_each_morsel(
                    input.len(),
                    || Ok(AggregateWorker::default()),
                    |worker, i| {
                        let Some(c) = step(&input[i])? else {
                            return Ok(());
                        };
                        let keys = agg
                            .group_by
                            .iter()
                            .map(|k| eval.eval(k, &c.columns, c.rows))
                            .collect::<Result<Vec<_>>>()?;
                        worker.update(&plan, &keys, &c.columns, c.rows, &eval)
                    },
                )?;
                morsels_done(&mut run);
                // Partitions of the groups merge in parallel, each into one chunk.
                let parts = Partitions::of_workers(workers, self.threads)?;
                let chunks = if parts.is_empty() {
                    if agg.group_by.is_empty() {
                        vec![Chunk::new(plan.table(&[], 0)?.finish(&agg.fields)?, 1)]
                    } else {
                        Vec::new()
                    }
                } else {
                    let done = self.for_each_morsel(
                        parts.len(),
                        || Ok(Vec::new()),
                        |acc: &mut Vec<(usize, Vec<ArrayRef>)>, p| {
                            acc.push((p, parts.finish(p, &agg.fields)?));
                            Ok(())
                        },
                    )?;
                    let mut done: Vec<_> = done.into_iter().flatten().collect();
                    done.sort_by_key(|d| d.0);
                    let scalar = agg.group_by.is_empty();
                    done.into_iter()
                        .map(|(_, columns)| Chunk::new(columns, if scalar { 1 } else { 0 }))
                        .filter(|c| c.rows > 0)
                        .collect()
                };
                let chunks = match order {
                    Some(order) => chunks
                        .into_iter()
                        .map(|c| Chunk::new(order.iter().map(|&k| Arc::clone(&c.columns[k])).collect(), c.rows))
                        .collect(),
                    None => chunks,
                };
                run.rows_out = chunks.iter().map(|c: &Chunk| c.rows as u64).sum();
                state.results.insert(agg.result, Arc::new(chunks));
            }
            Sink::MarkBuild(m) => {
                let table = state.tables.get(&m.table).cloned().ok_or_else(|| {
                    TesseraError::Internal(format!(
                        "hash table h{} probed before it was built",
                        m.table
                    ))
                })?;
                let marks: Vec<AtomicBool> =
                    (0..table.rows).map(|_| AtomicBool::new(false)).collect();
                self.for_each_morsel(
                    input.len(),
                    || Ok(()),
                    |_, i| match step(&input[i])? {
                        Some(c) => mark_matches(m, &table, &c, &eval, &marks),
                        None => Ok(()),
                    },
                )?;
                morsels_done(&mut run);
                let chunks = marked_rows(&table, |r| marks[r].load(Ordering::Relaxed), m.anti)?;
                run.rows_out = chunks.iter().map(|c| c.rows as u64).sum();
                state.results.insert(m.result, Arc::new(chunks));
            }
        }
        run.finish_ms = started.elapsed().as_secs_f64() * 1e3 - run.morsels_ms;
        Ok(run)
    }

    /// Runs `step` over every morsel and returns the non-empty outputs in input order.
    fn collect(
        &self,
        input: &[Chunk],
        step: &(dyn Fn(&Chunk) -> Result<Option<Chunk>> + Sync),
    ) -> Result<Vec<Chunk>> {
        let parts = self.for_each_morsel(
            input.len(),
            || Ok(Vec::new()),
            |acc: &mut Vec<(usize, Chunk)>, i| {
                if let Some(c) = step(&input[i])? {
                    if c.rows > 0 {
                        acc.push((i, c));
                    }
                }
                Ok(())
            },
        )?;
        let mut all: Vec<(usize, Chunk)> = parts.into_iter().flatten().collect();
        all.sort_by_key(|p| p.0);
        Ok(all.into_iter().map(|p| p.1).collect())
    }

    /// Morsel-driven scheduling: workers take morsel numbers from a shared counter and
    /// fold them into their own state; the states are returned for merging. The first
    /// error stops every worker.
    fn for_each_morsel<S: Send>(
        &self,
        morsels: usize,
        init: impl Fn() -> Result<S> + Sync,
        work: impl Fn(&mut S, usize) -> Result<()> + Sync,
    ) -> Result<Vec<S>> {
        let workers = self.threads.min(morsels).max(1);
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let first_error: Mutex<Option<TesseraError>> = Mutex::new(None);
        let run = || -> Option<S> {
            let mut state = match init() {
                Ok(s) => s,
                Err(e) => {
                    record(&failed, &first_error, e);
                    return None;
                }
            };
            loop {
                if failed.load(Ordering::Relaxed) {
                    return None;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= morsels {
                    return Some(state);
                }
                // A panic in a kernel is a bug, reported as an error, never a crash.
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut state, i)))
                        .unwrap_or_else(|p| {
                            Err(TesseraError::Internal(format!(
                                "panic in a CPU pipeline: {}",
                                panic_message(&p)
                            )))
                        });
                if let Err(e) = outcome {
                    record(&failed, &first_error, e);
                    return None;
                }
            }
        };
        let states: Vec<Option<S>> = if workers == 1 {
            vec![run()]
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..workers).map(|_| s.spawn(&run)).collect();
                handles
                    .into_iter()
                    .map(|h| match h.join() {
                        Ok(s) => s,
                        Err(_) => {
                            record(
                                &failed,
                                &first_error,
                                TesseraError::Internal("a worker thread panicked".into()),
                            );
                            None
                        }
                    })
                    .collect()
            })
        };
        if let Some(e) = first_error.lock().ok().and_then(|mut e| e.take()) {
            return Err(e);
        }
        Ok(states.into_iter().flatten().collect())
    }
}

/// A source with fewer morsels than this per thread is cut into smaller ones, so that
/// a small input whose rows fan out (a probe of customers matching ten orders each, TPC-H
/// q13) still keeps every thread busy: at SF 10 on 16 threads its 23 morsels left half
/// of the threads idle for the second half of the pipeline.
const MORSELS_PER_THREAD: usize = 4;

/// Morsels are not cut below this many rows (a morsel's fixed costs stay small).
const SPLIT_MIN_ROWS: usize = 8192;

/// `input` cut into at least `MORSELS_PER_THREAD` morsels per thread where it has fewer
/// and its morsels are large enough (zero-copy slices, in order); None to keep it.
fn split_morsels(input: &[Chunk], threads: usize) -> Option<Vec<Chunk>> {
    let want = threads * MORSELS_PER_THREAD;
    if threads <= 1 || input.len() >= want {
        return None;
    }
    let rows: usize = input.iter().map(|c| c.rows).sum();
    let piece = rows.div_ceil(want).max(SPLIT_MIN_ROWS);
    if input.iter().all(|c| c.rows <= piece) {
        return None;
    }
    let mut out = Vec::new();
    for c in input {
        for at in (0..c.rows).step_by(piece) {
            let n = piece.min(c.rows - at);
            out.push(Chunk { columns: c.columns.iter().map(|a| a.slice(at, n)).collect(), rows: n });
        }
    }
    Some(out)
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

fn record(failed: &AtomicBool, slot: &Mutex<Option<TesseraError>>, e: TesseraError) {
    failed.store(true, Ordering::Relaxed);
    if let Ok(mut s) = slot.lock() {
        if s.is_none() {
            *s = Some(e);
        }
    }
}

/// For each operator, which of its output columns a later operator or the sink reads
/// (None: all of them). A filter or probe leaves the others unfiltered and ungathered
/// (empty placeholders of type Null), so a chain of probes moves only what is used.
fn live_columns(pipeline: &Pipeline) -> Vec<Option<Vec<bool>>> {
    let ops = &pipeline.operators;
    let mut widths = vec![pipeline.source_fields().len()];
    let mut fields = pipeline.source_fields().to_vec();
    for op in ops {
        fields = op.output_fields(&fields);
        widths.push(fields.len());
    }
    let mark = |v: &mut Vec<bool>, columns: Vec<usize>| {
        for c in columns {
            if let Some(x) = v.get_mut(c) {
                *x = true;
            }
        }
    };
    let mut need: Option<Vec<bool>> = match &pipeline.sink {
        Sink::Materialize { .. } | Sink::Sort(_) => None,
        Sink::HashBuild(b) => {
            let mut v = vec![false; widths[ops.len()]];
            b.keys.iter().for_each(|k| mark(&mut v, k.columns()));
            mark(&mut v, b.payload.clone());
            Some(v)
        }
        Sink::MarkBuild(m) => {
            let mut v = vec![false; widths[ops.len()]];
            m.keys.iter().for_each(|k| mark(&mut v, k.columns()));
            if let Some(r) = &m.residual {
                mark(&mut v, r.columns());
            }
            Some(v)
        }
        Sink::Aggregate(a) => {
            let mut v = vec![false; widths[ops.len()]];
            a.group_by.iter().for_each(|k| mark(&mut v, k.columns()));
            a.aggregates
                .iter()
                .filter_map(|x| x.arg.as_ref())
                .for_each(|e| mark(&mut v, e.columns()));
            Some(v)
        }
    };
    let mut out = vec![None; ops.len()];
    for (i, op) in ops.iter().enumerate().rev() {
        let needed = |c: usize| {
            need.as_ref()
                .is_none_or(|n| n.get(c).copied().unwrap_or(false))
        };
        let mut input = vec![false; widths[i]];
        match op {
            Operator::Filter(pred) => {
                input
                    .iter_mut()
                    .enumerate()
                    .for_each(|(c, x)| *x = needed(c));
                mark(&mut input, pred.columns());
            }
            Operator::Project { exprs, .. } => {
                for (j, e) in exprs.iter().enumerate() {
                    if needed(j) {
                        mark(&mut input, e.columns());
                    }
                }
            }
            Operator::Probe(p) => {
                input
                    .iter_mut()
                    .enumerate()
                    .for_each(|(c, x)| *x = needed(c));
                p.keys.iter().for_each(|k| mark(&mut input, k.columns()));
                if let Some(r) = &p.residual {
                    mark(&mut input, r.columns());
                }
            }
        }
        out[i] = need.take();
        need = Some(input);
    }
    out
}

/// Pushes one morsel through the operators; None when every row was filtered out.
/// `live` is [`live_columns`] of the pipeline.
fn apply_operators(
    ops: &[Operator],
    live: &[Option<Vec<bool>>],
    mut chunk: Chunk,
    eval: &Evaluator,
    state: &CpuState,
) -> Result<Option<Chunk>> {
    for (op, live) in ops.iter().zip(live) {
        if chunk.rows == 0 {
            return Ok(None);
        }
        let live = live.as_deref();
        chunk = match op {
            Operator::Filter(pred) => {
                let mask = eval.predicate(pred, &chunk.columns, chunk.rows)?;
                match filter_chunk(chunk, &mask, live)? {
                    Some(c) => c,
                    None => return Ok(None),
                }
            }
            Operator::Project { exprs, .. } => {
                let columns = exprs
                    .iter()
                    .map(|e| eval.eval(e, &chunk.columns, chunk.rows))
                    .collect::<Result<Vec<_>>>()?;
                Chunk {
                    columns,
                    rows: chunk.rows,
                }
            }
            Operator::Probe(p) => {
                let table = state.tables.get(&p.table).ok_or_else(|| {
                    TesseraError::Internal(format!(
                        "hash table h{} probed before it was built",
                        p.table
                    ))
                })?;
                probe(p, table, chunk, eval, live)?
            }
        };
    }
    Ok((chunk.rows > 0).then_some(chunk))
}

/// Whether column `c` is read later (`live` from [`live_columns`]; None: all are).
fn is_live(live: Option<&[bool]>, c: usize) -> bool {
    live.is_none_or(|l| l.get(c).copied().unwrap_or(true))
}

/// A placeholder for a column nobody reads.
fn dead(rows: usize) -> ArrayRef {
    Arc::new(arrow::array::NullArray::new(rows))
}

/// Keeps the rows where `mask` is true (NULL counts as false), in the live columns.
fn filter_chunk(chunk: Chunk, mask: &BooleanArray, live: Option<&[bool]>) -> Result<Option<Chunk>> {
    let kept = mask.true_count();
    if kept == 0 {
        return Ok(None);
    }
    if kept == chunk.rows && mask.null_count() == 0 {
        return Ok(Some(chunk));
    }
    let f = FilterBuilder::new(mask).optimize().build();
    let columns = chunk
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if is_live(live, i) {
                f.filter(c.as_ref()).map_err(arrow_err)
            } else {
                Ok(dead(kept))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Chunk {
        columns,
        rows: kept,
    }))
}

/// Gathers `idx` of each column whose position (from `first` on) is live.
fn take_live<I: arrow::array::ArrowPrimitiveType>(
    columns: &[ArrayRef],
    idx: &arrow::array::PrimitiveArray<I>,
    live: Option<&[bool]>,
    first: usize,
) -> Result<Vec<ArrayRef>> {
    columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if is_live(live, first + i) {
                take(c.as_ref(), idx, None).map_err(arrow_err)
            } else {
                Ok(dead(idx.len()))
            }
        })
        .collect()
}

fn take_all(columns: &[ArrayRef], idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    columns
        .iter()
        .map(|c| take(c.as_ref(), idx, None).map_err(arrow_err))
        .collect()
}

/// One hash probe over a morsel; only `live` output columns are gathered.
fn probe(
    p: &Probe,
    table: &JoinTable,
    chunk: Chunk,
    eval: &Evaluator,
    live: Option<&[bool]>,
) -> Result<Chunk> {
    let rows = chunk.rows;
    let width = chunk.columns.len();
    let keys = p
        .keys
        .iter()
        .map(|k| eval.eval(k, &chunk.columns, rows))
        .collect::<Result<Vec<_>>>()?;
    let heads = table.heads(&keys, rows, p.nulls_equal)?;
    // Candidate pairs (probe row, build row), in probe order.
    let needs_pairs =
        matches!(p.kind, JoinKind::Inner | JoinKind::LeftOuter) || p.residual.is_some();
    let (mut pr, mut br) = if needs_pairs { table.pairs(&heads, |_| true) } else { (Vec::new(), Vec::new()) };
    if let Some(residual) = &p.residual {
        let ok = residual_holds(residual, &chunk.columns, table, &pr, &br, eval)?;
        let keep: Vec<usize> = (0..pr.len()).filter(|&i| ok.value(i)).collect();
        pr = keep.iter().map(|&i| pr[i]).collect();
        br = keep.iter().map(|&i| br[i]).collect();
    }
    let matched: Vec<bool> = if needs_pairs {
        let mut m = vec![false; rows];
        pr.iter().for_each(|&r| m[r as usize] = true);
        m
    } else {
        heads.iter().map(|&h| h != join::END).collect()
    };
    match p.kind {
        JoinKind::Inner => {
            let n = pr.len();
            let mut columns = take_live(&chunk.columns, &UInt32Array::from(pr), live, 0)?;
            columns.extend(take_live(
                &table.payload,
                &UInt32Array::from(br),
                live,
                width,
            )?);
            Ok(Chunk::new(columns, n))
        }
        JoinKind::LeftOuter => {
            // Matches in probe order, with each unmatched probe row once, build side NULL.
            let (mut po, mut bo): (Vec<u32>, Vec<Option<u32>>) = (Vec::new(), Vec::new());
            let mut k = 0;
            for r in 0..rows as u32 {
                if !matched[r as usize] {
                    po.push(r);
                    bo.push(None);
                }
                while k < pr.len() && pr[k] == r {
                    po.push(r);
                    bo.push(Some(br[k]));
                    k += 1;
                }
            }
            let n = po.len();
            let mut columns = take_live(&chunk.columns, &UInt32Array::from(po), live, 0)?;
            columns.extend(take_live(
                &table.payload,
                &UInt32Array::from(bo),
                live,
                width,
            )?);
            Ok(Chunk::new(columns, n))
        }
        JoinKind::Semi | JoinKind::Anti => {
            let semi = p.kind == JoinKind::Semi;
            let mut keep: Vec<bool> = matched.iter().map(|&m| m == semi).collect();
            if !semi && p.null_aware && table.rows > 0 {
                if table.has_null_key {
                    keep.iter_mut().for_each(|k| *k = false);
                } else {
                    let nulls = hash::any_null(&keys, rows);
                    keep.iter_mut().zip(nulls).for_each(|(k, n)| *k &= !n);
                }
            }
            let mask = BooleanArray::from(keep);
            let empty = Chunk {
                columns: chunk.columns.iter().map(|c| c.slice(0, 0)).collect(),
                rows: 0,
            };
            Ok(filter_chunk(chunk, &mask, live)?.unwrap_or(empty))
        }
        // Every row, and whether it matched (a NULL key matches nothing).
        JoinKind::Mark => {
            if p.null_aware {
                return Err(TesseraError::NotImplemented("NULL-aware mark joins".into()));
            }
            let mut columns = chunk.columns;
            columns.push(Arc::new(BooleanArray::from(matched)));
            Ok(Chunk::new(columns, rows))
        }
    }
}

/// Rows per chunk of a result the backend makes from a table (the store's morsel size,
/// so a later pipeline reading it spreads over the workers as a scan does).
const RESULT_CHUNK_ROWS: usize = 1 << 16;

/// The rows of `table` a [`MarkBuild`] keeps: those `marked` (without `anti`) or not
/// (with it), in build-row order, as chunks of a result. The GPU's mark kernels
/// (tessera-cuda's `codegen::mark`) leave their marks to this too.
pub fn marked_rows(table: &JoinTable, marked: impl Fn(usize) -> bool, anti: bool) -> Result<Vec<Chunk>> {
    let kept: Vec<u32> = (0..table.rows).filter(|&r| marked(r) != anti).map(|r| r as u32).collect();
    let columns = take_all(&table.payload, &UInt32Array::from(kept))?;
    let rows = columns.first().map_or(0, |c| c.len());
    Ok((0..rows)
        .step_by(RESULT_CHUNK_ROWS)
        .map(|at| {
            let n = RESULT_CHUNK_ROWS.min(rows - at);
            Chunk { columns: columns.iter().map(|c| c.slice(at, n)).collect(), rows: n }
        })
        .collect())
}

/// Marks the build rows of `table` that the rows of `chunk` match (see
/// [`tessera_ir::MarkBuild`]). Without a residual every row of a chain has the same key,
/// so a chain whose head is marked is skipped whole.
fn mark_matches(
    m: &MarkBuild,
    table: &JoinTable,
    chunk: &Chunk,
    eval: &Evaluator,
    marks: &[AtomicBool],
) -> Result<()> {
    let rows = chunk.rows;
    let keys = m
        .keys
        .iter()
        .map(|k| eval.eval(k, &chunk.columns, rows))
        .collect::<Result<Vec<_>>>()?;
    let heads = table.heads(&keys, rows, false)?;
    let marked = |b: u32| marks[b as usize].load(Ordering::Relaxed);
    let Some(residual) = &m.residual else {
        for &h in &heads {
            if h != join::END && !marked(h) {
                let mut b = h;
                while b != join::END {
                    marks[b as usize].store(true, Ordering::Relaxed);
                    b = table.next(b);
                }
            }
        }
        return Ok(());
    };
    // Pairs with build rows not marked yet, checked against the residual.
    let (pr, br) = table.pairs(&heads, |b| !marked(b));
    if pr.is_empty() {
        return Ok(());
    }
    let ok = residual_holds(residual, &chunk.columns, table, &pr, &br, eval)?;
    for (i, &b) in br.iter().enumerate() {
        if ok.value(i) {
            marks[b as usize].store(true, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Whether `residual` holds (NULL: no) for each pair of probe row `pr[i]` of `columns`
/// and build row `br[i]` of `table`; only the columns it reads are gathered.
fn residual_holds(
    residual: &Expr,
    columns: &[ArrayRef],
    table: &JoinTable,
    pr: &[u32],
    br: &[u32],
    eval: &Evaluator,
) -> Result<BooleanArray> {
    let width = columns.len();
    let used = residual.columns();
    let read: Vec<bool> = (0..width + table.payload.len()).map(|c| used.contains(&c)).collect();
    let mut cols = take_live(columns, &UInt32Array::from(pr.to_vec()), Some(&read), 0)?;
    cols.extend(take_live(&table.payload, &UInt32Array::from(br.to_vec()), Some(&read), width)?);
    Ok(eval::null_as_false(&eval.predicate(residual, &cols, pr.len())?))
}

/// Build sides of fewer rows than this concatenate their columns on one thread.
const PARALLEL_CONCAT_MIN_ROWS: usize = 1 << 17;

/// Concatenates each column's parts (an empty array of its type when there are none).
/// For large inputs of `rows` rows, fixed-width columns are copied by `threads` threads
/// into one lazily zeroed allocation (so its page faults are taken in parallel too) and
/// other columns get a thread each: a 15 M-row build's serial copy took 60-95 ms of its
/// finish on 16 cores (TPC-H SF 10 q09, q13).
fn concat_in_parallel(columns: Vec<(Vec<&dyn Array>, arrow::datatypes::DataType)>, rows: usize, threads: usize) -> Result<Vec<ArrayRef>> {
    let one = |(arrays, ty): &(Vec<&dyn Array>, arrow::datatypes::DataType)| -> Result<ArrayRef> {
        if arrays.is_empty() { Ok(arrow::array::new_empty_array(ty)) } else { concat_same_type(arrays) }
    };
    if rows < PARALLEL_CONCAT_MIN_ROWS || threads <= 1 {
        return columns.iter().map(one).collect();
    }
    let mut out: Vec<Option<ArrayRef>> = columns.iter().map(|(arrays, _)| concat_fixed_width(arrays, threads)).collect::<Result<_>>()?;
    let rest: Vec<usize> = (0..columns.len()).filter(|&i| out[i].is_none()).collect();
    let done = parallel::on_threads(rest.clone(), |i| one(&columns[i]))?;
    for (i, column) in rest.into_iter().zip(done) {
        out[i] = Some(column);
    }
    out.into_iter().map(|c| c.ok_or_else(|| TesseraError::Internal("column not concatenated".into()))).collect()
}

/// `arrays` (of one fixed-width type) concatenated by `threads` threads; None for other
/// types, mixed types or no arrays.
fn concat_fixed_width(arrays: &[&dyn Array], threads: usize) -> Result<Option<ArrayRef>> {
    use arrow::datatypes::*;
    let Some(first) = arrays.first() else { return Ok(None) };
    match first.data_type() {
        DataType::Int8 => concat_primitive::<Int8Type>(arrays, threads),
        DataType::Int16 => concat_primitive::<Int16Type>(arrays, threads),
        DataType::Int32 => concat_primitive::<Int32Type>(arrays, threads),
        DataType::Int64 => concat_primitive::<Int64Type>(arrays, threads),
        DataType::UInt32 => concat_primitive::<UInt32Type>(arrays, threads),
        DataType::UInt64 => concat_primitive::<UInt64Type>(arrays, threads),
        DataType::Float32 => concat_primitive::<Float32Type>(arrays, threads),
        DataType::Float64 => concat_primitive::<Float64Type>(arrays, threads),
        DataType::Date32 => concat_primitive::<Date32Type>(arrays, threads),
        DataType::Date64 => concat_primitive::<Date64Type>(arrays, threads),
        DataType::Decimal128(..) => concat_primitive::<Decimal128Type>(arrays, threads),
        _ => Ok(None),
    }
}

fn concat_primitive<T: arrow::datatypes::ArrowPrimitiveType>(arrays: &[&dyn Array], threads: usize) -> Result<Option<ArrayRef>> {
    use arrow::array::{AsArray, PrimitiveArray};
    let Some(first) = arrays.first() else { return Ok(None) };
    let ty = first.data_type();
    let parts: Option<Vec<&PrimitiveArray<T>>> =
        arrays.iter().map(|a| if a.data_type() == ty { a.as_primitive_opt::<T>() } else { None }).collect();
    let Some(parts) = parts else { return Ok(None) };
    let total: usize = parts.iter().map(|p| p.len()).sum();
    // Zeroed lazily by the allocator: pages are first touched by the copying threads.
    let mut values = vec![T::Native::default(); total];
    {
        let mut pieces: Vec<(&mut [T::Native], &[T::Native])> = Vec::with_capacity(parts.len());
        let mut rest: &mut [T::Native] = &mut values;
        for p in &parts {
            let (piece, after) = std::mem::take(&mut rest).split_at_mut(p.len());
            pieces.push((piece, p.values().as_ref()));
            rest = after;
        }
        let per = pieces.len().div_ceil(threads.max(1)).max(1);
        let groups: Vec<_> = pieces.chunks_mut(per).collect();
        parallel::on_threads(groups, |group| {
            group.iter_mut().for_each(|(to, from)| to.copy_from_slice(from));
            Ok(())
        })?;
    }
    let nulls = parts.iter().any(|p| p.null_count() > 0).then(|| {
        arrow::buffer::NullBuffer::from_iter(parts.iter().flat_map(|p| (0..p.len()).map(move |i| p.is_valid(i))))
    });
    Ok(Some(Arc::new(PrimitiveArray::<T>::new(values.into(), nulls).with_data_type(ty.clone()))))
}

/// Concatenates arrays, decoding dictionaries when parts use different types.
fn concat_same_type(arrays: &[&dyn Array]) -> Result<ArrayRef> {
    let first = arrays[0].data_type();
    if arrays.iter().all(|a| a.data_type() == first) {
        return concat(arrays).map_err(arrow_err);
    }
    let plain = hash::plain_type(first);
    let cast: Vec<ArrayRef> = arrays
        .iter()
        .map(|a| arrow::compute::cast_with_options(*a, &plain, &STRICT).map_err(arrow_err))
        .collect::<Result<_>>()?;
    let refs: Vec<&dyn Array> = cast.iter().map(|a| a.as_ref()).collect();
    concat(&refs).map_err(arrow_err)
}

/// Applies OFFSET/LIMIT to chunks in order.
pub fn limit(chunks: Vec<Chunk>, skip: usize, fetch: Option<usize>) -> Result<Vec<Chunk>> {
    if skip == 0 && fetch.is_none() {
        return Ok(chunks);
    }
    let mut to_skip = skip;
    let mut left = fetch.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for c in chunks {
        if left == 0 {
            break;
        }
        if to_skip >= c.rows {
            to_skip -= c.rows;
            continue;
        }
        let len = (c.rows - to_skip).min(left);
        let columns = c.columns.iter().map(|a| a.slice(to_skip, len)).collect();
        out.push(Chunk { columns, rows: len });
        left -= len;
        to_skip = 0;
    }
    Ok(out)
}

/// Sorts all rows (top-N when limited). Only the sort keys are concatenated before the
/// sort; the rows kept are then picked straight from the chunks, one copy each (TPC-H
/// q10's top 20 of 381 K groups carry four string columns that a concatenation of every
/// row copied whole first).
fn sort_chunks(
    chunks: Vec<Chunk>,
    sort: &tessera_ir::Sort,
    eval: &Evaluator,
) -> Result<Vec<Chunk>> {
    let n = chunks.first().map_or(0, |c| c.columns.len());
    if chunks.is_empty() || n == 0 {
        return limit(chunks, sort.skip, sort.fetch);
    }
    let rows: usize = chunks.iter().map(|c| c.rows).sum();
    let keys = sort
        .keys
        .iter()
        .map(|k| {
            let parts = chunks.iter().map(|c| eval.eval(&k.expr, &c.columns, c.rows)).collect::<Result<Vec<_>>>()?;
            let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
            let values = concat_same_type(&refs)?;
            // Sorting dictionary codes ranks every entry of the dictionary first: for a
            // result smaller than its dictionary (TPC-H q20's 1 804 suppliers by name, a
            // 100 000-entry dictionary at SF 10: 1.6 ms) sort the strings themselves.
            let values = match (values.data_type(), arrow::array::AsArray::as_any_dictionary_opt(values.as_ref())) {
                (arrow::datatypes::DataType::Dictionary(_, value), Some(d)) if d.values().len() > rows => arrow::compute::cast(&values, value).map_err(arrow_err)?,
                _ => values,
            };
            Ok(SortColumn {
                values,
                options: Some(SortOptions {
                    descending: k.descending,
                    nulls_first: k.nulls_first,
                }),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let fetch = sort.fetch.map(|f| f + sort.skip);
    let idx = sort_indices(&keys, rows, fetch)?;
    let sorted = if let [only] = chunks.as_slice() {
        take_all(&only.columns, &idx)?
    } else {
        // Row i of the concatenation is row i - starts[c] of chunk c.
        let starts: Vec<usize> = chunks.iter().scan(0, |at, c| { let s = *at; *at += c.rows; Some(s) }).collect();
        let picks: Vec<(usize, usize)> = idx
            .values()
            .iter()
            .map(|&i| {
                let i = i as usize;
                let c = starts.partition_point(|&s| s <= i) - 1;
                (c, i - starts[c])
            })
            .collect();
        (0..n)
            .map(|k| {
                let arrays: Vec<&dyn Array> = chunks.iter().map(|c| c.columns[k].as_ref()).collect();
                pick_rows(&arrays, &picks, &idx)
            })
            .collect::<Result<Vec<_>>>()?
    };
    limit(vec![Chunk::new(sorted, 0)], sort.skip, sort.fetch)
}

/// The order of `rows` rows by `keys` (the first `fetch` of it when limited; rows equal
/// on every key in their order of arrival). One primitive key sorts with arrow's kernel.
/// Several keys, or a string key, sort as one packed integer a row where their ranges
/// allow ([`packed_order`]), else through arrow's row format, whose rows compare as
/// bytes: `lexsort_to_indices` compares column by column through a dynamic comparator
/// for each pair, and TPC-H q16's 27 840 groups by count, brand, type and size took 15.9
/// ms to sort that way at SF 10 on the H200's host (6.9 ms through the row format).
fn sort_indices(keys: &[SortColumn], rows: usize, fetch: Option<usize>) -> Result<UInt32Array> {
    let plain = |k: &SortColumn| k.values.data_type().is_primitive();
    if (keys.len() == 1 && plain(&keys[0])) || rows <= 1 {
        return lexsort_to_indices(keys, fetch).map_err(arrow_err);
    }
    match packed_order(keys, rows)? {
        Some(order) => Ok(sorted_rows(order, fetch)),
        None => row_format_order(keys, rows, fetch),
    }
}

/// The row numbers of [`packed_order`]'s integers in their order (the first `fetch`).
fn sorted_rows(mut order: Vec<u128>, fetch: Option<usize>) -> UInt32Array {
    match fetch {
        Some(f) if f < order.len() => {
            if f > 0 {
                order.select_nth_unstable(f - 1);
            }
            order.truncate(f);
            order.sort_unstable();
        }
        _ => order.sort_unstable(),
    }
    UInt32Array::from_iter_values(order.iter().map(|&o| o as u32))
}

/// The rank of each of `len` strings among their distinct values in byte order (arrow's
/// order of strings), and the largest rank (NULLs' ranks mean nothing). The distinct
/// values are found by hashing, so only they are compared.
fn string_ranks<'a>(values: impl Iterator<Item = Option<&'a str>>, len: usize) -> (Vec<u64>, u64) {
    /// [`hash::hash_bytes`] as a `Hasher` (the default SipHash costs more than the sort saves).
    #[derive(Default)]
    struct Bytes(u64);
    impl std::hash::Hasher for Bytes {
        fn write(&mut self, b: &[u8]) {
            self.0 = self.0.rotate_left(7) ^ hash::hash_bytes(b);
        }
        fn finish(&self) -> u64 {
            self.0
        }
    }
    let mut ids: HashMap<&str, u32, std::hash::BuildHasherDefault<Bytes>> = HashMap::default();
    let mut distinct: Vec<&str> = Vec::new();
    let mut row_ids = Vec::with_capacity(len);
    for v in values {
        row_ids.push(v.map_or(0, |s| {
            *ids.entry(s).or_insert_with(|| {
                distinct.push(s);
                (distinct.len() - 1) as u32
            })
        }));
    }
    let mut by_value: Vec<u32> = (0..distinct.len() as u32).collect();
    by_value.sort_unstable_by(|&x, &y| distinct[x as usize].cmp(distinct[y as usize]));
    let mut rank = vec![0u64; distinct.len()];
    for (r, &id) in by_value.iter().enumerate() {
        rank[id as usize] = r as u64;
    }
    (row_ids.iter().map(|&id| rank.get(id as usize).copied().unwrap_or(0)).collect(), distinct.len().saturating_sub(1) as u64)
}

/// [`sort_indices`] through arrow's row format (any key types).
fn row_format_order(keys: &[SortColumn], rows: usize, fetch: Option<usize>) -> Result<UInt32Array> {
    let fields = keys.iter().map(|k| arrow::row::SortField::new_with_options(k.values.data_type().clone(), k.options.unwrap_or_default())).collect();
    let converter = arrow::row::RowConverter::new(fields).map_err(arrow_err)?;
    let columns: Vec<ArrayRef> = keys.iter().map(|k| Arc::clone(&k.values)).collect();
    let converted = converter.convert_columns(&columns).map_err(arrow_err)?;
    let n = u32::try_from(rows).map_err(|_| TesseraError::NotImplemented(format!("sorting {rows} rows (at most 2^32)")))?;
    let mut idx: Vec<u32> = (0..n).collect();
    let order = |a: &u32, b: &u32| converted.row(*a as usize).cmp(&converted.row(*b as usize)).then(a.cmp(b));
    match fetch {
        Some(f) if f < idx.len() => {
            if f > 0 {
                idx.select_nth_unstable_by(f - 1, order);
            }
            idx.truncate(f);
            idx.sort_unstable_by(order);
        }
        _ => idx.sort_unstable_by(order),
    }
    Ok(UInt32Array::from(idx))
}

/// The order of `rows` rows by `keys` as one integer a row, where every key has a small
/// enough range: each key's values become their rank within the key's range (integers,
/// dates and decimals less the smallest, doubles by their total order, dictionary
/// strings by the rank of their value among the dictionary's, booleans), reversed when
/// descending, with a rank of their own for NULLs first or last. The ranks are packed
/// key after key into the high bits of a `u128`, the row number into its low 32 bits, so
/// plain integer sorting orders rows as the keys do, ties in input order. None when a
/// key is of another type (plain strings) or the ranks take more than 96 bits: the row
/// format then compares them. TPC-H q16's 27 840 groups by count, brand, type and size
/// (24 bits) took 6.9 ms to sort through the row format at SF 10 on the H200's host.
fn packed_order(keys: &[SortColumn], rows: usize) -> Result<Option<Vec<u128>>> {
    let Ok(n) = u32::try_from(rows) else { return Ok(None) };
    let mut ranked: Vec<(Vec<u64>, u32)> = Vec::with_capacity(keys.len());
    let mut bits = 0u32;
    for k in keys {
        let Some((mut ranks, span)) = key_ranks(k.values.as_ref())? else { return Ok(None) };
        let options = k.options.unwrap_or_default();
        if options.descending {
            ranks.iter_mut().for_each(|r| *r = span - *r);
        }
        // NULLs take rank 0 (first) or span + 2 (last), values 1..=span + 1.
        let nulls = k.values.logical_nulls();
        let span = match nulls.as_ref().filter(|n| n.null_count() > 0) {
            None => span,
            Some(valid) => {
                let null_rank = if options.nulls_first { 0 } else { span + 2 };
                for (r, ok) in ranks.iter_mut().zip(valid.iter()) {
                    *r = if ok { *r + 1 } else { null_rank };
                }
                span + 2
            }
        };
        let width = u64::BITS - span.leading_zeros();
        bits += width;
        if bits > 96 {
            return Ok(None);
        }
        ranked.push((ranks, width));
    }
    let mut order: Vec<u128> = (0..n).map(u128::from).collect();
    let mut shift = 32;
    for (ranks, width) in ranked.iter().rev() {
        for (o, &r) in order.iter_mut().zip(ranks) {
            *o |= u128::from(r) << shift;
        }
        shift += width;
    }
    Ok(Some(order))
}

/// Each value of `a` as its rank from 0 in ascending order, and the largest rank (NULL
/// rows' ranks mean nothing); None for a type or range [`packed_order`] does not pack.
fn key_ranks(a: &dyn Array) -> Result<Option<(Vec<u64>, u64)>> {
    use arrow::array::AsArray;
    use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type};
    let valid = |i: usize| a.is_valid(i);
    // Integer values as their distance from the smallest one.
    let ints = |values: Vec<i128>| -> Result<Option<(Vec<u64>, u64)>> {
        let (mut lo, mut hi) = (i128::MAX, i128::MIN);
        for (i, &v) in values.iter().enumerate() {
            if valid(i) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        if lo > hi {
            return Ok(Some((vec![0; values.len()], 0)));
        }
        let Some(span) = u64::try_from(hi - lo).ok().filter(|&s| s < u64::MAX - 2) else { return Ok(None) };
        Ok(Some((values.iter().map(|&v| if v < lo || v > hi { 0 } else { (v - lo) as u64 }).collect(), span)))
    };
    match a.data_type() {
        DataType::Int8 => ints(a.as_primitive::<Int8Type>().values().iter().map(|&v| i128::from(v)).collect()),
        DataType::Int16 => ints(a.as_primitive::<Int16Type>().values().iter().map(|&v| i128::from(v)).collect()),
        DataType::Int32 => ints(a.as_primitive::<Int32Type>().values().iter().map(|&v| i128::from(v)).collect()),
        DataType::Int64 => ints(a.as_primitive::<Int64Type>().values().iter().map(|&v| i128::from(v)).collect()),
        DataType::Date32 => ints(a.as_primitive::<Date32Type>().values().iter().map(|&v| i128::from(v)).collect()),
        DataType::Decimal128(..) => ints(a.as_primitive::<Decimal128Type>().values().to_vec()),
        DataType::Boolean => ints(a.as_boolean().values().iter().map(i128::from).collect()),
        // IEEE 754's total order, as arrow's sort kernels and the row format order doubles.
        DataType::Float64 => ints(a.as_primitive::<Float64Type>().values().iter().map(|&v| i128::from(tessera_ir::float_order_key(v))).collect()),
        // Strings by the rank of their value among the column's distinct values (a
        // group key decoded from a hash aggregation comes back as plain strings).
        DataType::Utf8 => Ok(Some(string_ranks(a.as_string::<i32>().iter(), a.len()))),
        DataType::LargeUtf8 => Ok(Some(string_ranks(a.as_string::<i64>().iter(), a.len()))),
        DataType::Utf8View => Ok(Some(string_ranks(a.as_string_view().iter(), a.len()))),
        DataType::Dictionary(_, value) if matches!(value.as_ref(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) => {
            let Some(d) = a.as_any_dictionary_opt() else { return Ok(None) };
            let values = d.values();
            if values.null_count() > 0 {
                return Ok(None);
            }
            // The dictionary's entries ranked by value (equal entries one rank).
            let sorted = arrow::compute::sort_to_indices(values.as_ref(), None, None).map_err(arrow_err)?;
            let mut rank = vec![0u64; values.len()];
            let mut r = 0u64;
            let cmp = arrow::array::make_comparator(values.as_ref(), values.as_ref(), SortOptions::default()).map_err(arrow_err)?;
            for (j, &i) in sorted.values().iter().enumerate() {
                if j > 0 && cmp(sorted.value(j - 1) as usize, i as usize).is_ne() {
                    r += 1;
                }
                rank[i as usize] = r;
            }
            let ranks = d.normalized_keys().iter().enumerate().map(|(i, &k)| if valid(i) { rank.get(k).copied().unwrap_or(0) } else { 0 }).collect();
            Ok(Some((ranks, r)))
        }
        _ => Ok(None),
    }
}

/// The rows `picks` ((chunk, row) pairs; `idx`: the same rows of the concatenation) of
/// one column whose chunks are `arrays`, copied once. Dictionary columns whose chunks
/// share one dictionary (a build's payload gathered by probes) keep it and only their
/// codes are picked: arrow's `interleave` concatenates every chunk's dictionary even
/// when they are the same one (TPC-H q02 at SF 10 on 16 threads: 122 chunks of
/// `s_name`'s 100 000-entry dictionary, 225 ms for 100 rows).
fn pick_rows(arrays: &[&dyn Array], picks: &[(usize, usize)], idx: &UInt32Array) -> Result<ArrayRef> {
    use arrow::array::{AsArray, DictionaryArray};
    use arrow::datatypes::{DataType, Int32Type};
    let first = arrays[0].data_type();
    if arrays.iter().any(|a| a.data_type() != first) {
        // Chunks disagree on the type (a dictionary in some, plain in others).
        return take(concat_same_type(arrays)?.as_ref(), idx, None).map_err(arrow_err);
    }
    if !matches!(first, DataType::Dictionary(..)) {
        return arrow::compute::interleave(arrays, picks).map_err(arrow_err);
    }
    let dictionaries: Option<Vec<&DictionaryArray<Int32Type>>> = arrays.iter().map(|a| a.as_dictionary_opt::<Int32Type>()).collect();
    if let Some(d) = dictionaries {
        let values = d[0].values();
        let shared = d.iter().all(|x| Arc::ptr_eq(x.values(), values) || x.values().to_data().ptr_eq(&values.to_data()));
        if shared {
            let codes: Vec<&dyn Array> = d.iter().map(|x| x.keys() as &dyn Array).collect();
            let codes = arrow::compute::interleave(&codes, picks).map_err(arrow_err)?;
            let keys = codes.as_primitive::<Int32Type>().clone();
            return Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(keys, Arc::clone(values)).map_err(arrow_err)?));
        }
    }
    take(concat_same_type(arrays)?.as_ref(), idx, None).map_err(arrow_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;

    fn values(chunks: &[Chunk]) -> Vec<i64> {
        chunks
            .iter()
            .flat_map(|c| c.columns[0].as_any().downcast_ref::<Int64Array>().map(|a| a.values().to_vec()).unwrap_or_default())
            .collect()
    }

    /// A sort over several chunks picks its rows from them (keys concatenated only):
    /// the same rows in the same order as a sort of the concatenation, with OFFSET and
    /// LIMIT, ties kept in input order, and a column that is a dictionary in one chunk
    /// and plain in another.
    #[test]
    fn sorts_over_chunks_pick_the_rows_of_a_sort_of_their_concatenation() {
        use arrow::array::{AsArray, DictionaryArray, StringArray};
        use arrow::datatypes::Int32Type;
        let chunk = |keys: Vec<i64>, dict: bool| {
            let text: Vec<String> = keys.iter().map(|k| format!("row{k}")).collect();
            let s: ArrayRef = if dict {
                Arc::new(text.iter().map(|t| t.as_str()).collect::<DictionaryArray<Int32Type>>())
            } else {
                Arc::new(StringArray::from_iter_values(text.iter()))
            };
            let k = Arc::new(Int64Array::from(keys.iter().map(|k| k % 10).collect::<Vec<_>>())) as ArrayRef;
            Chunk::new(vec![k, s], keys.len())
        };
        let key = tessera_ir::SortKey { expr: Expr::Column { index: 0, name: "k".into() }, descending: true, nulls_first: false };
        for (skip, fetch) in [(0, None), (0, Some(3)), (2, Some(4)), (30, Some(2))] {
            let sort = tessera_ir::Sort { result: 0, keys: vec![key.clone()], skip, fetch };
            let chunks = vec![chunk((0..7).collect(), false), chunk((7..15).collect(), true), chunk((15..23).collect(), false)];
            let got = sort_chunks(chunks, &sort, &Evaluator::new()).unwrap();
            let strings: Vec<String> = got
                .iter()
                .flat_map(|c| {
                    let s = arrow::compute::cast(&c.columns[1], &arrow::datatypes::DataType::Utf8).unwrap();
                    s.as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect::<Vec<_>>()
                })
                .collect();
            // Expected: rows 0..23 by k = row % 10 descending, ties in row order.
            let mut want: Vec<i64> = (0..23).collect();
            want.sort_by_key(|r| std::cmp::Reverse(r % 10));
            let want: Vec<String> = want.into_iter().skip(skip).take(fetch.unwrap_or(usize::MAX)).map(|r| format!("row{r}")).collect();
            assert_eq!(strings, want, "skip {skip} fetch {fetch:?}");
            assert_eq!(values(&got), want.iter().map(|r| r[3..].parse::<i64>().unwrap() % 10).collect::<Vec<_>>());
        }
    }

    /// Several keys (a string with NULLs first, descending; an integer with NULLs last)
    /// sort through the row format: the order of a stable sort of the values, with and
    /// without a limit, ties in input order.
    #[test]
    fn multi_key_sorts_order_rows_as_a_stable_sort_of_their_values() {
        use arrow::array::{Int32Array, StringArray};
        let n = 500u32;
        let text: Vec<Option<String>> = (0..n).map(|i| (i % 7 != 0).then(|| format!("t{}", (i * 31) % 13))).collect();
        let num: Vec<Option<i32>> = (0..n).map(|i| (i % 5 != 0).then_some(((i * 17) % 11) as i32 - 5)).collect();
        let keys = vec![
            SortColumn {
                values: Arc::new(StringArray::from(text.clone())) as ArrayRef,
                options: Some(SortOptions { descending: true, nulls_first: true }),
            },
            SortColumn { values: Arc::new(Int32Array::from(num.clone())) as ArrayRef, options: Some(SortOptions { descending: false, nulls_first: false }) },
        ];
        let mut want: Vec<u32> = (0..n).collect();
        // NULLs first then descending text; then ascending numbers, NULLs last.
        want.sort_by(|&a, &b| {
            let (ta, tb) = (&text[a as usize], &text[b as usize]);
            let t = match (ta, tb) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Less,
                (Some(_), None) => std::cmp::Ordering::Greater,
                (Some(x), Some(y)) => y.cmp(x),
            };
            let (na, nb) = (num[a as usize], num[b as usize]);
            t.then(match (na, nb) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some(_), None) => std::cmp::Ordering::Less,
                (Some(x), Some(y)) => x.cmp(&y),
            })
        });
        for fetch in [None, Some(0), Some(1), Some(37), Some(499), Some(500), Some(900)] {
            let got = sort_indices(&keys, n as usize, fetch).unwrap();
            let k = fetch.unwrap_or(usize::MAX).min(n as usize);
            assert_eq!(got.values().to_vec(), want[..k].to_vec(), "fetch {fetch:?}");
        }
    }

    /// Keys packed into one integer a row order rows as the row format does: integers,
    /// dates, decimals, booleans, doubles (NaN, -0.0, infinities), dictionary strings
    /// (entries repeated, unsorted, unused), plain strings (multi-byte, empty), NULLs first and last, ascending and
    /// descending, with and without a limit; a range too wide to pack is not packed.
    #[test]
    fn packed_orders_match_the_row_format() {
        use arrow::array::{BooleanArray, Date32Array, Decimal128Array, DictionaryArray, Float64Array, Int32Array, Int64Array, StringArray};
        use arrow::datatypes::Int32Type;
        let n = 700usize;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let floats = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -2.25, 1e300];
        let dictionary: ArrayRef = Arc::new(StringArray::from(vec!["pear", "apple", "fig", "apple", "zucchini", "b"]));
        let columns = |next: &mut dyn FnMut() -> u64| -> Vec<ArrayRef> {
            let null = |r: u64| r % 6 == 0;
            let mut v = |f: &dyn Fn(u64) -> i64| -> Vec<Option<i64>> { (0..n).map(|_| { let r = next(); (!null(r)).then(|| f(r >> 8)) }).collect() };
            let ints = v(&|r| (r % 9) as i64 - 4);
            let wide = v(&|r| if r % 2 == 0 { i64::MIN + (r % 3) as i64 } else { i64::MAX - (r % 3) as i64 });
            let days = v(&|r| (r % 40) as i64 - 20);
            let cents = v(&|r| (r % 1000) as i64 * 1_000_000_007);
            let flags = v(&|r| (r % 2) as i64);
            let fl = v(&|r| (r % floats.len() as u64) as i64);
            let codes = v(&|r| (r % 6) as i64);
            vec![
                Arc::new(Int32Array::from_iter(ints.iter().map(|x| x.map(|x| x as i32)))),
                Arc::new(Int64Array::from(wide)),
                Arc::new(Date32Array::from_iter(days.iter().map(|x| x.map(|x| x as i32)))),
                Arc::new(Decimal128Array::from_iter(cents.iter().map(|x| x.map(i128::from))).with_precision_and_scale(38, 2).unwrap()),
                Arc::new(BooleanArray::from_iter(flags.iter().map(|x| x.map(|x| x == 1)))),
                Arc::new(Float64Array::from_iter(fl.iter().map(|x| x.map(|i| floats[i as usize])))),
                Arc::new(DictionaryArray::<Int32Type>::try_new(Int32Array::from_iter(codes.iter().map(|x| x.map(|x| x as i32))), Arc::clone(&dictionary)).unwrap()),
                Arc::new(StringArray::from_iter(codes.iter().map(|x| x.map(|i| ["b", "a", "\u{e9}t\u{e9}", "aa", "", "zz"][i as usize])))),
            ]
        };
        let all = columns(&mut next);
        let mut packed = 0;
        for round in 0..60 {
            let count = 1 + (next() % 3) as usize;
            let keys: Vec<SortColumn> = (0..count)
                .map(|_| SortColumn {
                    values: Arc::clone(&all[(next() % all.len() as u64) as usize]),
                    options: Some(SortOptions { descending: next() % 2 == 0, nulls_first: next() % 2 == 0 }),
                })
                .collect();
            let fetch = [None, Some(0), Some(5), Some(n)][round % 4];
            let Some(order) = packed_order(&keys, n).unwrap() else { continue };
            packed += 1;
            let want = row_format_order(&keys, n, fetch).unwrap();
            assert_eq!(sorted_rows(order, fetch), want, "round {round}: {:?}", keys.iter().map(|k| (k.values.data_type().clone(), k.options)).collect::<Vec<_>>());
        }
        assert!(packed > 20, "{packed} of 60 packed");
        // The wide column's span (nearly 2^64) does not pack.
        let wide = SortColumn { values: Arc::clone(&all[1]), options: None };
        assert!(packed_order(&[wide.clone(), wide], n).unwrap().is_none());
    }

    /// Chunks sharing one dictionary (a build's payload gathered by probes) come out of
    /// a sort with that dictionary, only their codes picked (not a concatenation of a
    /// dictionary per chunk), and the right strings.
    #[test]
    fn sorted_chunks_sharing_a_dictionary_keep_it() {
        use arrow::array::{AsArray, DictionaryArray, Int32Array, StringArray};
        use arrow::datatypes::Int32Type;
        let values = Arc::new(StringArray::from_iter_values((0..1000).map(|i| format!("s{i:04}")))) as ArrayRef;
        let dict: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::try_new(Int32Array::from_iter_values(0..1000), Arc::clone(&values)).unwrap());
        let chunks: Vec<Chunk> = (0..5u32)
            .map(|c| {
                let rows = UInt32Array::from_iter_values((0..20u32).map(|i| (i * 37 + c * 101) % 1000));
                let k = Arc::new(Int64Array::from_iter_values((0..20).map(|i| i64::from((i * 37 + c * 101) % 1000)))) as ArrayRef;
                Chunk::new(vec![k, take(dict.as_ref(), &rows, None).unwrap()], 20)
            })
            .collect();
        let key = tessera_ir::SortKey { expr: Expr::Column { index: 0, name: "k".into() }, descending: false, nulls_first: false };
        let sort = tessera_ir::Sort { result: 0, keys: vec![key], skip: 0, fetch: Some(10) };
        let got = sort_chunks(chunks.clone(), &sort, &Evaluator::new()).unwrap();
        let d = got[0].columns[1].as_dictionary::<Int32Type>();
        assert!(Arc::ptr_eq(d.values(), &values), "the dictionary was copied");
        let mut keys: Vec<i64> = chunks.iter().flat_map(|c| c.columns[0].as_primitive::<arrow::datatypes::Int64Type>().values().to_vec()).collect();
        keys.sort();
        let want: Vec<String> = keys[..10].iter().map(|k| format!("s{k:04}")).collect();
        let strings = arrow::compute::cast(&got[0].columns[1], &arrow::datatypes::DataType::Utf8).unwrap();
        let strings: Vec<String> = strings.as_string::<i32>().iter().map(|v| v.unwrap().to_string()).collect();
        assert_eq!(strings, want);
    }

    /// Columns concatenated by several threads equal arrow's own concatenation: values,
    /// NULLs and decimal types kept, strings (not fixed width) included.
    #[test]
    fn parallel_concatenation_matches_arrow() {
        use arrow::array::{Decimal128Array, StringArray};
        let ints: Vec<ArrayRef> = (0..5)
            .map(|p| Arc::new(Int64Array::from_iter((0..70_000i64).map(|i| (i % 7 != p).then_some(i * p)))) as ArrayRef)
            .collect();
        let decimals: Vec<ArrayRef> = (0..5)
            .map(|p| Arc::new(Decimal128Array::from_iter_values((0..70_000i128).map(|i| i * 10 + p)).with_precision_and_scale(20, 2).unwrap()) as ArrayRef)
            .collect();
        let strings: Vec<ArrayRef> = (0..5).map(|p| Arc::new(StringArray::from_iter_values((0..70_000).map(|i| format!("{p}-{i}")))) as ArrayRef).collect();
        fn refs(v: &[ArrayRef]) -> Vec<&dyn Array> {
            v.iter().map(|a| a.as_ref()).collect()
        }
        let columns = vec![
            (refs(&ints), arrow::datatypes::DataType::Int64),
            (refs(&decimals), arrow::datatypes::DataType::Decimal128(20, 2)),
            (refs(&strings), arrow::datatypes::DataType::Utf8),
            (Vec::new(), arrow::datatypes::DataType::Int32),
        ];
        let got = concat_in_parallel(columns, 350_000, 4).unwrap();
        assert_eq!(got[0].as_ref(), concat(&refs(&ints)).unwrap().as_ref());
        assert_eq!(got[1].as_ref(), concat(&refs(&decimals)).unwrap().as_ref());
        assert_eq!(got[2].as_ref(), concat(&refs(&strings)).unwrap().as_ref());
        assert_eq!((got[3].len(), got[3].data_type()), (0, &arrow::datatypes::DataType::Int32));
        assert!(got[0].null_count() > 0);
    }

    /// A source of few large morsels is cut into enough smaller ones, every row once and
    /// in order; one with enough morsels, or with small ones, is kept.
    #[test]
    fn few_large_morsels_are_cut_in_order() {
        let chunk = |a: i64, n: i64| Chunk::new(vec![Arc::new(Int64Array::from_iter_values(a..a + n)) as ArrayRef], 0);
        let input = vec![chunk(0, 65_536), chunk(65_536, 30_000)];
        let split = split_morsels(&input, 4).expect("cut");
        // 95,536 rows for 16 morsels would be 5,971 each: cut at the floor of 8,192.
        assert_eq!(split.iter().map(|c| c.rows).collect::<Vec<_>>(), [vec![8_192; 8], vec![8_192, 8_192, 8_192, 5_424]].concat());
        assert_eq!(values(&split), (0..95_536).collect::<Vec<_>>());
        assert!(split_morsels(&input, 1).is_none());
        assert!(split_morsels(&[chunk(0, 5_000), chunk(5_000, 5_000)], 16).is_none());
        let many: Vec<Chunk> = (0..64).map(|i| chunk(i * 65_536, 65_536)).collect();
        assert!(split_morsels(&many, 16).is_none());
    }
}
