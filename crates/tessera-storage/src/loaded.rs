//! A table loaded into memory as Arrow batches, with low-cardinality strings
//! dictionary-encoded against one sorted dictionary per column.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, DictionaryArray, Int32Array, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use tessera_common::{Result, TesseraError};

use crate::manifest::TableMeta;

/// Rows per in-memory batch: 64 Ki rows, the morsel size of the execution engines.
pub const LOADED_BATCH_ROWS: usize = 64 * 1024;

/// The sorted dictionary of one dictionary-encoded string column: code `i` stands for
/// `values[i]`, and codes compare like the strings they stand for.
#[derive(Debug, Clone)]
pub struct LoadedColumnDictionary {
    /// The distinct values, sorted, without NULL.
    pub values: Arc<StringArray>,
}

/// A table in memory.
#[derive(Debug)]
pub struct LoadedTable {
    /// Table name.
    pub name: String,
    /// The table version this was loaded from.
    pub version: u64,
    /// The table's declared (logical) schema, strings as `Utf8`.
    pub schema: SchemaRef,
    /// The physical schema of [`LoadedTable::batches`]: dictionary-encoded string
    /// columns are `Dictionary(Int32, Utf8)`.
    pub physical_schema: SchemaRef,
    /// The rows, in batches of up to [`LOADED_BATCH_ROWS`].
    pub batches: Vec<RecordBatch>,
    /// Per column, its dictionary when it is dictionary-encoded.
    pub dictionaries: Vec<Option<LoadedColumnDictionary>>,
    /// Total number of rows.
    pub rows: usize,
}

impl LoadedTable {
    /// Reads every file of `table` under `dir` (files in parallel) and dictionary-encodes
    /// the columns whose statistics mark them for it.
    pub fn load(dir: &Path, table: &TableMeta) -> Result<LoadedTable> {
        let schema = table.schema()?;
        // Files are read in parallel by at most one thread per core.
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(table.files.len()).max(1);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<std::sync::Mutex<Option<Result<Vec<RecordBatch>>>>> =
            table.files.iter().map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(f) = table.files.get(i) else { break };
                        let read = read_parquet(&dir.join(&f.path));
                        if let Ok(mut slot) = slots[i].lock() {
                            *slot = Some(read);
                        }
                    }
                });
            }
        });
        let per_file: Vec<Result<Vec<RecordBatch>>> = slots
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| Err(TesseraError::Internal("a data file was not read".into())))
            })
            .collect();
        let mut batches = Vec::new();
        for file in per_file {
            for b in file? {
                // Files carry the schema they were written with; re-label with the
                // manifest's schema (same types) so every batch shares one schema.
                let b = RecordBatch::try_new(Arc::clone(&schema), b.columns().to_vec()).map_err(|e| {
                    TesseraError::Execution(format!("table '{}': data file does not match its schema: {e}", table.name))
                })?;
                batches.push(b);
            }
        }
        let rows = batches.iter().map(|b| b.num_rows()).sum();

        let mut dictionaries = Vec::with_capacity(schema.fields().len());
        let mut fields = Vec::with_capacity(schema.fields().len());
        let mut columns: Vec<Vec<ArrayRef>> = vec![Vec::new(); batches.len()];
        for (c, field) in schema.fields().iter().enumerate() {
            let encode = table.columns[c].stats.dictionary && field.data_type() == &DataType::Utf8;
            let parts: Vec<ArrayRef> = batches.iter().map(|b| Arc::clone(b.column(c))).collect();
            if encode {
                let (dict, encoded) = dictionary_encode(&parts)?;
                for (cols, e) in columns.iter_mut().zip(encoded) {
                    cols.push(e);
                }
                fields.push(Field::new(
                    field.name(),
                    DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                    field.is_nullable(),
                ));
                dictionaries.push(Some(dict));
            } else {
                for (cols, p) in columns.iter_mut().zip(parts) {
                    cols.push(p);
                }
                fields.push(field.as_ref().clone());
                dictionaries.push(None);
            }
        }
        let physical_schema = Arc::new(Schema::new(fields));
        let batches = columns
            .into_iter()
            .map(|cols| RecordBatch::try_new(Arc::clone(&physical_schema), cols))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| TesseraError::Internal(format!("building loaded batches: {e}")))?;
        Ok(LoadedTable {
            name: table.name.clone(),
            version: table.version,
            schema,
            physical_schema,
            batches,
            dictionaries,
            rows,
        })
    }

    /// Batch `i` with the columns in `projection` (all when `None`), dictionary columns
    /// decoded back to the declared string type.
    pub fn logical_batch(&self, i: usize, projection: Option<&[usize]>) -> Result<RecordBatch> {
        let batch = &self.batches[i];
        let all: Vec<usize> = (0..batch.num_columns()).collect();
        let projection = projection.unwrap_or(&all);
        let mut columns = Vec::with_capacity(projection.len());
        for &c in projection {
            let col = batch.column(c);
            columns.push(if self.dictionaries[c].is_some() {
                arrow::compute::cast(col, self.schema.field(c).data_type())
                    .map_err(|e| TesseraError::Internal(format!("decoding dictionary: {e}")))?
            } else {
                Arc::clone(col)
            });
        }
        let schema = Arc::new(self.schema.project(projection).map_err(|e| TesseraError::Internal(e.to_string()))?);
        RecordBatch::try_new_with_options(
            schema,
            columns,
            &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )
        .map_err(|e| TesseraError::Internal(format!("building batch: {e}")))
    }
}

impl LoadedTable {
    /// The table's batches with the logical schema, dealt round-robin into at most
    /// `partitions` partitions (at least one), for engines that scan in parallel.
    pub fn logical_partitions(&self, partitions: usize, projection: Option<&[usize]>) -> Result<Vec<Vec<RecordBatch>>> {
        let n = partitions.min(self.batches.len()).max(1);
        let mut parts = vec![Vec::new(); n];
        for i in 0..self.batches.len() {
            parts[i % n].push(self.logical_batch(i, projection)?);
        }
        Ok(parts)
    }
}

fn read_parquet(path: &Path) -> Result<Vec<RecordBatch>> {
    let file = File::open(path).map_err(|e| TesseraError::io(format!("opening {}", path.display()), e))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.with_batch_size(LOADED_BATCH_ROWS).build())
        .map_err(|e| TesseraError::Execution(format!("reading {}: {e}", path.display())))?;
    reader
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| TesseraError::Execution(format!("reading {}: {e}", path.display())))
}

/// Encodes string arrays against one sorted dictionary of all their distinct values.
fn dictionary_encode(parts: &[ArrayRef]) -> Result<(LoadedColumnDictionary, Vec<ArrayRef>)> {
    let mut distinct: Vec<&str> = Vec::new();
    let mut seen: HashMap<&str, ()> = HashMap::new();
    for p in parts {
        let s = p.as_string::<i32>();
        for v in s.iter().flatten() {
            if seen.insert(v, ()).is_none() {
                distinct.push(v);
            }
        }
    }
    distinct.sort_unstable();
    let codes: HashMap<&str, i32> = distinct.iter().enumerate().map(|(i, v)| (*v, i as i32)).collect();
    let values = Arc::new(StringArray::from(distinct.clone()));
    let mut encoded = Vec::with_capacity(parts.len());
    for p in parts {
        let s = p.as_string::<i32>();
        let keys: Int32Array = s.iter().map(|v| v.map(|v| codes[v])).collect();
        let dict = DictionaryArray::<Int32Type>::try_new(keys, Arc::clone(&values) as ArrayRef)
            .map_err(|e| TesseraError::Internal(format!("dictionary: {e}")))?;
        encoded.push(Arc::new(dict) as ArrayRef);
    }
    Ok((LoadedColumnDictionary { values }, encoded))
}
