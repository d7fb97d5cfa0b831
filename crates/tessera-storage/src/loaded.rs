//! A table loaded into memory as Arrow batches, with low-cardinality strings
//! dictionary-encoded against one sorted dictionary per column.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::{Arc, OnceLock};

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
    /// Per column, whether its values are all present and distinct, found on first ask.
    unique: Vec<OnceLock<bool>>,
    /// Per column, its values as one array, made on first ask.
    whole: Vec<OnceLock<ArrayRef>>,
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
        Ok(LoadedTable::new(table.name.clone(), table.version, schema, physical_schema, batches, dictionaries))
    }

    /// A table of `batches` that are not from the store (an intermediate result), without
    /// dictionaries; the declared and physical schemas are the batches'.
    pub fn from_batches(name: String, schema: SchemaRef, batches: Vec<RecordBatch>) -> LoadedTable {
        let dictionaries = vec![None; schema.fields().len()];
        LoadedTable::new(name, 0, Arc::clone(&schema), schema, batches, dictionaries)
    }

    fn new(
        name: String,
        version: u64,
        schema: SchemaRef,
        physical_schema: SchemaRef,
        batches: Vec<RecordBatch>,
        dictionaries: Vec<Option<LoadedColumnDictionary>>,
    ) -> LoadedTable {
        let width = dictionaries.len();
        LoadedTable {
            name,
            version,
            schema,
            physical_schema,
            rows: batches.iter().map(|b| b.num_rows()).sum(),
            batches,
            dictionaries,
            unique: (0..width).map(|_| OnceLock::new()).collect(),
            whole: (0..width).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Whether column `c` holds no NULL and no value twice: a key of the table, as the
    /// planner's functional dependencies need it (see `tessera_ir::ReducedKeys`). Only
    /// integer and date columns are checked; any other column answers false. Checked on
    /// first ask (stopping at the first repeat) and remembered for this version.
    pub fn is_unique(&self, c: usize) -> bool {
        let Some(cell) = self.unique.get(c) else { return false };
        *cell.get_or_init(|| self.check_unique(c))
    }

    fn check_unique(&self, c: usize) -> bool {
        let mut parts = Vec::with_capacity(self.batches.len());
        for b in &self.batches {
            let a = b.column(c);
            if a.null_count() > 0 {
                return false;
            }
            let a = match a.data_type() {
                DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => {
                    arrow::compute::cast(a, &DataType::Int64)
                }
                DataType::Date32 => arrow::compute::cast(a, &DataType::Int32).and_then(|a| arrow::compute::cast(&a, &DataType::Int64)),
                _ => return false,
            };
            let Ok(a) = a else { return false };
            parts.push(a);
        }
        let values = parts.iter().flat_map(|a| a.as_primitive::<arrow::datatypes::Int64Type>().values().iter().copied());
        unique_values(values, self.rows)
    }

    /// Rows `rows` of column `c` (row numbers of the whole table), as one array of its
    /// physical type: the column's one array when made ([`LoadedTable::whole_column`]),
    /// else picked from its batches.
    pub fn gather(&self, c: usize, rows: &[usize]) -> Result<ArrayRef> {
        let err = |e: arrow::error::ArrowError| TesseraError::Internal(format!("gathering rows: {e}"));
        if let Some(whole) = self.whole.get(c).and_then(|w| w.get()) {
            let idx = arrow::array::UInt64Array::from_iter_values(rows.iter().map(|&r| r as u64));
            return arrow::compute::take(whole, &idx, None).map_err(err);
        }
        let mut starts = Vec::with_capacity(self.batches.len());
        let mut at = 0usize;
        for b in &self.batches {
            starts.push(at);
            at += b.num_rows();
        }
        let mut picks = Vec::with_capacity(rows.len());
        for &r in rows {
            if r >= at {
                return Err(TesseraError::Internal(format!("row {r} of {} rows", at)));
            }
            let b = starts.partition_point(|&s| s <= r) - 1;
            picks.push((b, r - starts[b]));
        }
        let parts: Vec<&dyn arrow::array::Array> = self.batches.iter().map(|b| b.column(c).as_ref()).collect();
        if parts.is_empty() {
            return Ok(arrow::array::new_empty_array(self.physical_schema.field(c).data_type()));
        }
        arrow::compute::interleave(&parts, &picks).map_err(err)
    }

    /// Column `c`'s values as one array of its physical type (the batches concatenated),
    /// made once: what a GPU result's row numbers into this column are gathered from.
    pub fn whole_column(&self, c: usize) -> Result<ArrayRef> {
        let cell = self.whole.get(c).ok_or_else(|| TesseraError::Internal(format!("column #{c} of {}", self.name)))?;
        if let Some(a) = cell.get() {
            return Ok(Arc::clone(a));
        }
        let parts: Vec<&dyn arrow::array::Array> = self.batches.iter().map(|b| b.column(c).as_ref()).collect();
        let whole = if parts.is_empty() {
            arrow::array::new_empty_array(self.physical_schema.field(c).data_type())
        } else {
            arrow::compute::concat(&parts).map_err(|e| TesseraError::Internal(format!("concatenating a column: {e}")))?
        };
        Ok(Arc::clone(cell.get_or_init(|| whole)))
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

/// Whether the `n` `values` are distinct: a bitmap over their range when it is at most 8
/// bits a value (stopping at the first repeat, which a column of repeating values meets
/// within its first rows), else a sort.
fn unique_values<I: Iterator<Item = i64> + Clone>(values: I, n: usize) -> bool {
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    for v in values.clone() {
        min = min.min(v);
        max = max.max(v);
    }
    if n == 0 || min > max {
        return true;
    }
    let span = (max as i128 - min as i128) as u128 + 1;
    if span <= 8 * n as u128 + 64 {
        let mut bits = vec![0u64; (span as usize).div_ceil(64)];
        for v in values {
            let i = (v as i128 - min as i128) as usize;
            let (w, b) = (i / 64, 1u64 << (i % 64));
            if bits[w] & b != 0 {
                return false;
            }
            bits[w] |= b;
        }
        return true;
    }
    let mut all: Vec<i64> = values.collect();
    all.sort_unstable();
    all.windows(2).all(|w| w[0] != w[1])
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Array, StringArray};

    #[test]
    fn unique_values_by_bitmap_and_by_sort() {
        let u = |v: Vec<i64>| unique_values(v.iter().copied(), v.len());
        assert!(u(vec![]));
        assert!(u(vec![5]));
        assert!(u((1..=1000).rev().collect()));
        assert!(!u(vec![3, 1, 2, 3]));
        // Spread too wide for a bitmap: sorted.
        assert!(u(vec![i64::MIN, 0, i64::MAX]));
        assert!(!u(vec![i64::MAX, i64::MIN, 7, i64::MAX]));
        assert!(!u(vec![i64::MIN, i64::MIN]));
    }

    #[test]
    fn rows_are_gathered_across_batches_and_from_the_whole_column() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
        let batch = |v: &[&str]| RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(StringArray::from(v.to_vec()))]).unwrap();
        let t = LoadedTable::from_batches("t".into(), Arc::clone(&schema), vec![batch(&["a", "b"]), batch(&[]), batch(&["c", "d", "e"])]);
        let strings = |a: ArrayRef| a.as_string::<i32>().iter().map(|s| s.unwrap().to_string()).collect::<Vec<_>>();
        assert_eq!(strings(t.gather(0, &[4, 0, 2, 2, 1]).unwrap()), ["e", "a", "c", "c", "b"]);
        assert!(t.gather(0, &[5]).is_err());
        assert_eq!(t.whole_column(0).unwrap().len(), 5);
        assert_eq!(strings(t.gather(0, &[3, 1]).unwrap()), ["d", "b"]);
        assert!(t.is_unique(0) == false, "strings are not checked");
    }
}
