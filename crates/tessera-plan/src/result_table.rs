//! The bridge from pipelines to DataFusion: a result of earlier pipelines, seen by a
//! DataFusion subtree as a table.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;

/// Batches filled in by the executor before the DataFusion subtree that reads them runs.
#[derive(Debug)]
pub struct ResultTable {
    schema: SchemaRef,
    batches: Mutex<Option<Vec<RecordBatch>>>,
}

impl ResultTable {
    /// An empty slot with the columns the subtree expects.
    pub fn new(schema: SchemaRef) -> Self {
        ResultTable { schema, batches: Mutex::new(None) }
    }

    /// The columns (types exactly as DataFusion planned them).
    pub fn schema_ref(&self) -> &SchemaRef {
        &self.schema
    }

    /// Hands over the batches (already converted to [`ResultTable::schema_ref`]).
    pub fn fill(&self, batches: Vec<RecordBatch>) {
        if let Ok(mut slot) = self.batches.lock() {
            *slot = Some(batches);
        }
    }
}

#[async_trait]
impl TableProvider for ResultTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Temporary
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let batches = self
            .batches
            .lock()
            .map_err(|_| DataFusionError::Internal("result slot lock poisoned".into()))?
            .clone()
            .ok_or_else(|| DataFusionError::Internal("a pipeline result was read before it was computed".into()))?;
        Ok(MemorySourceConfig::try_new_exec(&[batches], Arc::clone(&self.schema), projection.cloned())?)
    }
}
