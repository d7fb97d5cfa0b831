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
mod types;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, BooleanArray, UInt32Array};
use arrow::compute::{FilterBuilder, SortColumn, SortOptions, concat, lexsort_to_indices, take};
use tessera_common::{Result, TesseraError};
use tessera_ir::{HashTableId, JoinKind, Operator, Pipeline, Probe, ResultId, Sink};

pub use aggregate::GroupTable;
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
        CpuBackend::new(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
    }
}

impl CpuBackend {
    /// A backend using `threads` worker threads.
    pub fn new(threads: usize) -> Self {
        CpuBackend { threads: threads.max(1) }
    }

    /// Runs `pipeline` over `input` (its source's morsels), leaving its sink's product
    /// in `state`.
    pub fn run(&self, pipeline: &Pipeline, input: &[Chunk], state: &mut CpuState) -> Result<()> {
        let eval = Evaluator::new();
        let ops = &pipeline.operators;
        let shared: &CpuState = state;
        let step = |chunk: &Chunk| -> Result<Option<Chunk>> { apply_operators(ops, chunk.clone(), &eval, shared) };
        match &pipeline.sink {
            Sink::Materialize { result, skip, fetch } => {
                let chunks = self.collect(input, &step)?;
                let chunks = limit(chunks, *skip, *fetch)?;
                state.results.insert(*result, Arc::new(chunks));
            }
            Sink::Sort(sort) => {
                let chunks = self.collect(input, &step)?;
                let sorted = sort_chunks(chunks, sort, &eval)?;
                state.results.insert(sort.result, Arc::new(sorted));
            }
            Sink::HashBuild(build) => {
                let parts = self.for_each_morsel(
                    input.len(),
                    || Ok(Vec::new()),
                    |acc: &mut Vec<(usize, Vec<ArrayRef>, Vec<ArrayRef>, usize)>, i| {
                        if let Some(c) = step(&input[i])? {
                            let keys = build.keys.iter().map(|k| eval.eval(k, &c.columns, c.rows)).collect::<Result<Vec<_>>>()?;
                            let payload = build.payload.iter().map(|&p| Arc::clone(&c.columns[p])).collect();
                            acc.push((i, keys, payload, c.rows));
                        }
                        Ok(())
                    },
                )?;
                let mut parts: Vec<_> = parts.into_iter().flatten().collect();
                parts.sort_by_key(|p| p.0);
                let rows: usize = parts.iter().map(|p| p.3).sum();
                let fields = pipeline.sink_input_fields();
                let keys = concat_columns(parts.iter().map(|p| &p.1), build.keys.len(), |k| {
                    arrow_type(build.keys[k].ty(&fields))
                })?;
                let payload =
                    concat_columns(parts.iter().map(|p| &p.2), build.payload.len(), |k| arrow_type(fields[build.payload[k]].ty))?;
                let table = JoinTable::build(keys, payload, rows, &build.strategy, build.nulls_equal)?;
                state.tables.insert(build.table, Arc::new(table));
            }
            Sink::Aggregate(agg) => {
                let fields = pipeline.sink_input_fields();
                let key_types: Vec<_> = agg.group_by.iter().map(|k| arrow_type(k.ty(&fields))).collect();
                let tables = self.for_each_morsel(
                    input.len(),
                    || Ok(None::<GroupTable>),
                    |table, i| {
                        let Some(c) = step(&input[i])? else { return Ok(()) };
                        let keys = agg.group_by.iter().map(|k| eval.eval(k, &c.columns, c.rows)).collect::<Result<Vec<_>>>()?;
                        if table.is_none() {
                            *table = Some(GroupTable::new(&agg.strategy, &agg.aggregates, &key_types, &keys)?);
                        }
                        if let Some(t) = table.as_mut() {
                            t.update(&keys, &c.columns, c.rows, &eval)?;
                        }
                        Ok(())
                    },
                )?;
                let mut merged: Option<GroupTable> = None;
                for t in tables.into_iter().flatten() {
                    match merged.as_mut() {
                        None => merged = Some(t),
                        Some(m) => m.merge(t)?,
                    }
                }
                let columns = match merged {
                    Some(t) => t.finish(&agg.fields)?,
                    None if agg.group_by.is_empty() => {
                        GroupTable::new(&agg.strategy, &agg.aggregates, &key_types, &[])?.finish(&agg.fields)?
                    }
                    None => agg.fields.iter().map(|f| arrow::array::new_empty_array(&arrow_type(f.ty))).collect(),
                };
                let chunk = Chunk::new(columns, if agg.group_by.is_empty() { 1 } else { 0 });
                let chunks = if chunk.rows == 0 { Vec::new() } else { vec![chunk] };
                state.results.insert(agg.result, Arc::new(chunks));
            }
        }
        Ok(())
    }

    /// Runs `step` over every morsel and returns the non-empty outputs in input order.
    fn collect(&self, input: &[Chunk], step: &(dyn Fn(&Chunk) -> Result<Option<Chunk>> + Sync)) -> Result<Vec<Chunk>> {
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
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut state, i)))
                    .unwrap_or_else(|p| Err(TesseraError::Internal(format!("panic in a CPU pipeline: {}", panic_message(&p)))));
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
                            record(&failed, &first_error, TesseraError::Internal("a worker thread panicked".into()));
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

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}

fn record(failed: &AtomicBool, slot: &Mutex<Option<TesseraError>>, e: TesseraError) {
    failed.store(true, Ordering::Relaxed);
    if let Ok(mut s) = slot.lock() {
        if s.is_none() {
            *s = Some(e);
        }
    }
}

/// Pushes one morsel through the operators; None when every row was filtered out.
fn apply_operators(ops: &[Operator], mut chunk: Chunk, eval: &Evaluator, state: &CpuState) -> Result<Option<Chunk>> {
    for op in ops {
        if chunk.rows == 0 {
            return Ok(None);
        }
        chunk = match op {
            Operator::Filter(pred) => {
                let mask = eval.predicate(pred, &chunk.columns, chunk.rows)?;
                match filter_chunk(chunk, &mask)? {
                    Some(c) => c,
                    None => return Ok(None),
                }
            }
            Operator::Project { exprs, .. } => {
                let columns = exprs.iter().map(|e| eval.eval(e, &chunk.columns, chunk.rows)).collect::<Result<Vec<_>>>()?;
                Chunk { columns, rows: chunk.rows }
            }
            Operator::Probe(p) => {
                let table = state
                    .tables
                    .get(&p.table)
                    .ok_or_else(|| TesseraError::Internal(format!("hash table h{} probed before it was built", p.table)))?;
                probe(p, table, chunk, eval)?
            }
        };
    }
    Ok((chunk.rows > 0).then_some(chunk))
}

/// Keeps the rows where `mask` is true (NULL counts as false).
fn filter_chunk(chunk: Chunk, mask: &BooleanArray) -> Result<Option<Chunk>> {
    let kept = mask.true_count();
    if kept == 0 {
        return Ok(None);
    }
    if kept == chunk.rows && mask.null_count() == 0 {
        return Ok(Some(chunk));
    }
    let f = FilterBuilder::new(mask).optimize().build();
    let columns = chunk.columns.iter().map(|c| f.filter(c.as_ref()).map_err(arrow_err)).collect::<Result<Vec<_>>>()?;
    Ok(Some(Chunk { columns, rows: kept }))
}

fn take_all(columns: &[ArrayRef], idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    columns.iter().map(|c| take(c.as_ref(), idx, None).map_err(arrow_err)).collect()
}

/// One hash probe over a morsel.
fn probe(p: &Probe, table: &JoinTable, chunk: Chunk, eval: &Evaluator) -> Result<Chunk> {
    let rows = chunk.rows;
    let keys = p.keys.iter().map(|k| eval.eval(k, &chunk.columns, rows)).collect::<Result<Vec<_>>>()?;
    let heads = table.heads(&keys, rows, p.nulls_equal)?;
    // Candidate pairs (probe row, build row), in probe order.
    let needs_pairs = matches!(p.kind, JoinKind::Inner | JoinKind::LeftOuter) || p.residual.is_some();
    let (mut pr, mut br): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    if needs_pairs {
        pr.reserve(rows);
        br.reserve(rows);
        for (r, &h) in heads.iter().enumerate() {
            let mut b = h;
            while b != join::END {
                pr.push(r as u32);
                br.push(b);
                b = table.next(b);
            }
        }
    }
    if let Some(residual) = &p.residual {
        let pi = UInt32Array::from(pr.clone());
        let bi = UInt32Array::from(br.clone());
        let mut cols = take_all(&chunk.columns, &pi)?;
        cols.extend(take_all(&table.payload, &bi)?);
        let ok = eval::null_as_false(&eval.predicate(residual, &cols, pr.len())?);
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
            let mut columns = take_all(&chunk.columns, &UInt32Array::from(pr))?;
            columns.extend(take_all(&table.payload, &UInt32Array::from(br))?);
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
            let mut columns = take_all(&chunk.columns, &UInt32Array::from(po))?;
            columns.extend(take_all(&table.payload, &UInt32Array::from(bo))?);
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
            let empty = Chunk { columns: chunk.columns.iter().map(|c| c.slice(0, 0)).collect(), rows: 0 };
            Ok(filter_chunk(chunk, &mask)?.unwrap_or(empty))
        }
        JoinKind::Mark => Err(TesseraError::NotImplemented("mark joins on the CPU backend".into())),
    }
}

/// Concatenates column `k` of every part, for `n` columns.
fn concat_columns<'a>(parts: impl Iterator<Item = &'a Vec<ArrayRef>> + Clone, n: usize, ty: impl Fn(usize) -> arrow::datatypes::DataType) -> Result<Vec<ArrayRef>> {
    (0..n)
        .map(|k| {
            let arrays: Vec<&dyn Array> = parts.clone().map(|p| p[k].as_ref()).collect();
            if arrays.is_empty() {
                return Ok(arrow::array::new_empty_array(&ty(k)));
            }
            concat_same_type(&arrays)
        })
        .collect()
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

/// Sorts all rows (top-N when limited).
fn sort_chunks(chunks: Vec<Chunk>, sort: &tessera_ir::Sort, eval: &Evaluator) -> Result<Vec<Chunk>> {
    if chunks.is_empty() {
        return Ok(chunks);
    }
    let n = chunks[0].columns.len();
    let columns = concat_columns(chunks.iter().map(|c| &c.columns), n, |_| arrow::datatypes::DataType::Null)?;
    let rows = columns.first().map(|c| c.len()).unwrap_or(0);
    let keys = sort
        .keys
        .iter()
        .map(|k| {
            Ok(SortColumn {
                values: eval.eval(&k.expr, &columns, rows)?,
                options: Some(SortOptions { descending: k.descending, nulls_first: k.nulls_first }),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let fetch = sort.fetch.map(|f| f + sort.skip);
    let idx = lexsort_to_indices(&keys, fetch).map_err(arrow_err)?;
    let sorted = take_all(&columns, &idx)?;
    limit(vec![Chunk::new(sorted, 0)], sort.skip, sort.fetch)
}
