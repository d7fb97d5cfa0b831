//! The executor: runs a planned query's steps in order — pipelines on a backend,
//! fallback subtrees on DataFusion — passing results between them as Arrow.
//!
//! Entry point: [`Executor::run`].
#![warn(missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::SchemaRef;
use datafusion::prelude::SessionContext;
use tessera_common::{Result, TesseraError};
use tessera_cpu::{Chunk, CpuBackend, CpuState, STRICT, arrow_err};
use tessera_ir::{Source, Step};
use tessera_plan::PlannedQuery;
use tessera_storage::Store;

/// Runs planned queries against a store.
#[derive(Debug)]
pub struct Executor {
    store: Arc<Store>,
    cpu: CpuBackend,
    fallbacks: AtomicU64,
    pipelines: AtomicU64,
}

impl Executor {
    /// An executor over `store` using every core.
    pub fn new(store: Arc<Store>) -> Self {
        Executor { store, cpu: CpuBackend::default(), fallbacks: AtomicU64::new(0), pipelines: AtomicU64::new(0) }
    }

    /// DataFusion subtrees run so far (the fallback counter).
    pub fn fallback_count(&self) -> u64 {
        self.fallbacks.load(Ordering::Relaxed)
    }

    /// Pipelines run so far.
    pub fn pipeline_count(&self) -> u64 {
        self.pipelines.load(Ordering::Relaxed)
    }

    /// Runs `planned` and returns its rows typed as `schema` (DataFusion's schema of the
    /// query).
    pub async fn run(&self, planned: &PlannedQuery, ctx: &SessionContext, schema: &SchemaRef) -> Result<Vec<RecordBatch>> {
        let mut state = CpuState::default();
        for step in &planned.plan.steps {
            match step {
                Step::Pipeline(p) => {
                    let input = self.source(&p.source, &state)?;
                    self.cpu.run(p, &input, &mut state)?;
                    self.pipelines.fetch_add(1, Ordering::Relaxed);
                }
                Step::External(e) => {
                    let ext = planned
                        .externals
                        .get(e.id)
                        .ok_or_else(|| TesseraError::Internal(format!("fallback #{} missing", e.id)))?;
                    for (rid, slot) in &ext.inputs {
                        let chunks = result(&state, *rid)?;
                        slot.fill(to_batches(&chunks, slot.schema_ref())?);
                    }
                    let df = ctx.execute_logical_plan(ext.plan.clone()).await.map_err(df_err)?;
                    let batches = df.collect().await.map_err(df_err)?;
                    let chunks = batches.iter().filter(|b| b.num_rows() > 0).map(|b| Chunk::new(b.columns().to_vec(), b.num_rows())).collect();
                    state.results.insert(e.result, Arc::new(chunks));
                    self.fallbacks.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        let out = result(&state, planned.plan.output)?;
        to_batches(&out, schema)
    }

    fn source(&self, source: &Source, state: &CpuState) -> Result<Arc<Vec<Chunk>>> {
        match source {
            Source::Result { id, .. } => result(state, *id),
            Source::Scan(scan) => {
                let manifest = self.store.manifest()?;
                let meta = manifest
                    .table(&scan.table)
                    .ok_or_else(|| TesseraError::Plan(format!("table '{}' was dropped while the query ran", scan.table)))?;
                let loaded = self.store.load(meta)?;
                let chunks = loaded
                    .batches
                    .iter()
                    .map(|b| Chunk::new(scan.columns.iter().map(|&c| Arc::clone(b.column(c))).collect(), b.num_rows()))
                    .collect();
                Ok(Arc::new(chunks))
            }
        }
    }
}

fn result(state: &CpuState, id: usize) -> Result<Arc<Vec<Chunk>>> {
    state.results.get(&id).cloned().ok_or_else(|| TesseraError::Internal(format!("result r{id} used before it was computed")))
}

/// Chunks as record batches of `schema`, casting (dictionaries to strings, widths) to
/// its types.
pub fn to_batches(chunks: &[Chunk], schema: &SchemaRef) -> Result<Vec<RecordBatch>> {
    chunks
        .iter()
        .map(|c| {
            if c.columns.len() != schema.fields().len() {
                return Err(TesseraError::Internal(format!(
                    "result has {} columns, expected {}",
                    c.columns.len(),
                    schema.fields().len()
                )));
            }
            let columns: Vec<ArrayRef> = c
                .columns
                .iter()
                .zip(schema.fields())
                .map(|(a, f)| {
                    if a.data_type() == f.data_type() {
                        Ok(Arc::clone(a))
                    } else {
                        arrow::compute::cast_with_options(a, f.data_type(), &STRICT).map_err(arrow_err)
                    }
                })
                .collect::<Result<_>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(c.rows));
            RecordBatch::try_new_with_options(Arc::clone(schema), columns.clone(), &options).or_else(|_| {
                // DataFusion's nullability is an estimate; keep the rows under a schema
                // that allows NULLs rather than fail.
                let relaxed = Arc::new(arrow::datatypes::Schema::new(
                    schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect::<Vec<_>>(),
                ));
                RecordBatch::try_new_with_options(relaxed, columns, &options).map_err(arrow_err)
            })
        })
        .collect()
}

fn df_err(e: datafusion::error::DataFusionError) -> TesseraError {
    TesseraError::External(Box::new(e))
}
