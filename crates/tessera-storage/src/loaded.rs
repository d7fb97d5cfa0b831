//! A table of the store, opened from its memory-mapped data files and decoded column by
//! column on first use, with low-cardinality strings dictionary-encoded against one
//! sorted dictionary per column.

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use arrow::array::{Array, ArrayRef, AsArray, DictionaryArray, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use tessera_common::{Result, TesseraError};

use crate::colfile::{ColumnFile, StringTarget};
use crate::manifest::TableMeta;
use crate::packed::{PackedColumn, pack_column};
use crate::tiles::TileHeader;

/// Rows per in-memory batch: 64 Ki rows, the morsel size of the execution engines (32
/// tiles; a data file's batches start at its first row).
pub const LOADED_BATCH_ROWS: usize = 64 * 1024;

/// The sorted dictionary of one dictionary-encoded string column: code `i` stands for
/// `values[i]`, and codes compare like the strings they stand for.
#[derive(Debug, Clone)]
pub struct LoadedColumnDictionary {
    /// The distinct values, sorted, without NULL.
    pub values: Arc<StringArray>,
}

/// A value made on first ask; a failed attempt is not remembered (the next ask tries
/// again), and concurrent askers wait for the one making it.
#[derive(Debug)]
struct Lazy<T>(Mutex<Option<T>>);

impl<T: Clone> Lazy<T> {
    fn new(v: Option<T>) -> Lazy<T> {
        Lazy(Mutex::new(v))
    }

    fn get_or_try(&self, make: impl FnOnce() -> Result<T>) -> Result<T> {
        let mut slot = self.0.lock().map_err(|_| TesseraError::Internal("a table column's lock is poisoned".into()))?;
        if let Some(v) = slot.as_ref() {
            return Ok(v.clone());
        }
        let v = make()?;
        *slot = Some(v.clone());
        Ok(v)
    }
}

/// A dictionary column's table-wide dictionary and, per file, its codes' places in it.
#[derive(Debug)]
struct TableDictionary {
    values: Arc<StringArray>,
    file_to_table: Vec<Vec<i32>>,
}

/// A table: its data files mapped, its columns decoded on first use.
#[derive(Debug)]
pub struct LoadedTable {
    /// Table name.
    pub name: String,
    /// The table version this was loaded from.
    pub version: u64,
    /// The table's declared (logical) schema, strings as `Utf8`.
    pub schema: SchemaRef,
    /// The physical schema of [`LoadedTable::column`]'s arrays: dictionary-encoded string
    /// columns are `Dictionary(Int32, Utf8)`.
    pub physical_schema: SchemaRef,
    /// Total number of rows.
    pub rows: usize,
    /// Rows of each batch (at most [`LOADED_BATCH_ROWS`]).
    batch_rows: Vec<usize>,
    /// Per batch, its file and first row in that file.
    batch_at: Vec<(usize, usize)>,
    files: Vec<ColumnFile>,
    /// Per column, its arrays (one a batch), decoded on first ask.
    columns: Vec<Lazy<Arc<[ArrayRef]>>>,
    /// Per dictionary-encoded column, its dictionary, made on first ask.
    dictionaries: Vec<Option<Lazy<Arc<TableDictionary>>>>,
    /// Per column, whether its values are all present and distinct, found on first ask.
    unique: Vec<OnceLock<bool>>,
    /// Per column, its values as one array, made on first ask.
    whole: Vec<OnceLock<ArrayRef>>,
    /// Per column, whether it has a packed form, found on first ask.
    packable: Vec<OnceLock<bool>>,
    /// Per column, the zone map of each batch ([`LoadedTable::batch_zone`]).
    zones: Vec<OnceLock<Vec<Option<Option<(i64, i64)>>>>>,
    /// Per column, at most how many runs of repeated values it holds
    /// ([`LoadedTable::column_runs`]).
    runs: Vec<OnceLock<Option<usize>>>,
}

impl LoadedTable {
    /// Opens `table`'s data files under `dir` (maps them and reads their footers);
    /// string columns whose statistics mark them are dictionary-encoded when decoded.
    pub fn load(dir: &Path, table: &TableMeta) -> Result<LoadedTable> {
        let schema = table.schema()?;
        let mut files = Vec::with_capacity(table.files.len());
        let (mut batch_rows, mut batch_at) = (Vec::new(), Vec::new());
        for (k, f) in table.files.iter().enumerate() {
            let file = ColumnFile::open(&dir.join(&f.path))?;
            let rows = file.footer().rows as usize;
            if rows as u64 != f.rows || file.footer().columns.len() != schema.fields().len() {
                return Err(TesseraError::Execution(format!(
                    "table '{}': data file {} holds {} rows of {} columns, the manifest says {} rows of {}",
                    table.name,
                    f.path,
                    rows,
                    file.footer().columns.len(),
                    f.rows,
                    schema.fields().len()
                )));
            }
            for start in (0..rows).step_by(LOADED_BATCH_ROWS) {
                batch_rows.push(LOADED_BATCH_ROWS.min(rows - start));
                batch_at.push((k, start));
            }
            files.push(file);
        }
        let encode: Vec<bool> =
            schema.fields().iter().zip(&table.columns).map(|(f, c)| c.stats.dictionary && f.data_type() == &DataType::Utf8).collect();
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .zip(&encode)
            .map(|(f, &e)| {
                if e {
                    Field::new(f.name(), DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)), f.is_nullable())
                } else {
                    f.as_ref().clone()
                }
            })
            .collect();
        let width = fields.len();
        Ok(LoadedTable::assemble(
            (table.name.clone(), table.version, schema, Arc::new(Schema::new(fields))),
            (batch_rows, batch_at, files),
            (0..width).map(|_| Lazy::new(None)).collect(),
            encode.iter().map(|&e| e.then(|| Lazy::new(None))).collect(),
        ))
    }

    /// A table of `batches` that are not from the store (an intermediate result), without
    /// dictionaries; the declared and physical schemas are the batches'.
    pub fn from_batches(name: String, schema: SchemaRef, batches: Vec<RecordBatch>) -> LoadedTable {
        let width = schema.fields().len();
        let columns = (0..width).map(|c| Lazy::new(Some(batches.iter().map(|b| Arc::clone(b.column(c))).collect()))).collect();
        let batch_rows: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
        LoadedTable::assemble((name, 0, Arc::clone(&schema), schema), (batch_rows, Vec::new(), Vec::new()), columns, (0..width).map(|_| None).collect())
    }

    /// A table of (name, version, declared and physical schemas), its (batch rows, batch
    /// places, files), its columns and dictionaries, with empty per-column caches.
    fn assemble(
        (name, version, schema, physical_schema): (String, u64, SchemaRef, SchemaRef),
        (batch_rows, batch_at, files): (Vec<usize>, Vec<(usize, usize)>, Vec<ColumnFile>),
        columns: Vec<Lazy<Arc<[ArrayRef]>>>,
        dictionaries: Vec<Option<Lazy<Arc<TableDictionary>>>>,
    ) -> LoadedTable {
        fn cells<T>(n: usize) -> Vec<OnceLock<T>> {
            (0..n).map(|_| OnceLock::new()).collect()
        }
        let width = columns.len();
        LoadedTable {
            name,
            version,
            schema,
            physical_schema,
            rows: batch_rows.iter().sum(),
            batch_rows,
            batch_at,
            files,
            columns,
            dictionaries,
            unique: cells(width),
            whole: cells(width),
            packable: cells(width),
            zones: cells(width),
            runs: cells(width),
        }
    }

    /// The footers of the table's data files (where each column lies, its encodings and
    /// sizes); none for an intermediate result.
    pub fn footers(&self) -> impl Iterator<Item = &crate::colfile::Footer> {
        self.files.iter().map(|f| f.footer())
    }

    /// Rows of each batch: every column's arrays have these lengths.
    pub fn batch_rows(&self) -> &[usize] {
        &self.batch_rows
    }

    /// Column `c` as one array of its physical type per batch, decoded on first ask
    /// (the batches in parallel, a thread a core).
    pub fn column(&self, c: usize) -> Result<Arc<[ArrayRef]>> {
        let Some(cell) = self.columns.get(c) else {
            // An empty intermediate result has no schema to know its columns by: any
            // column of it is no arrays at all.
            if self.batch_rows.is_empty() {
                return Ok(Arc::from(Vec::new()));
            }
            return Err(TesseraError::Internal(format!("column #{c} of {}", self.name)));
        };
        cell.get_or_try(|| self.decode_column(c))
    }

    /// The physical type of column `c`.
    fn physical_type(&self, c: usize) -> Result<&DataType> {
        let field = self.physical_schema.fields().get(c).ok_or_else(|| TesseraError::Internal(format!("column #{c} of {}", self.name)))?;
        Ok(field.data_type())
    }

    /// Column `c` in the packed form GPU kernels decode ([`PackedColumn`]), from its
    /// stored tiles; `None` for an intermediate result, a dictionary-encoded column, or
    /// a column with a tile that cannot be packed (NULLs, raw values).
    pub fn packed_column(&self, c: usize) -> Result<Option<PackedColumn>> {
        if !self.packable(c) {
            return Ok(None);
        }
        let headers = self.tile_headers(c)?;
        let mut stored = Vec::with_capacity(headers.iter().map(|h| h.len()).sum());
        let mut at = 0usize;
        for (f, hs) in self.files.iter().zip(&headers) {
            for h in hs {
                stored.push((at, *h, f.tile_bytes(c, h)?));
                at += h.rows as usize;
            }
        }
        pack_column(&stored, self.rows)
    }

    /// Column `c`'s tile headers, file by file (read from the mapped files each time:
    /// a 64-byte record a tile).
    pub(crate) fn tile_headers(&self, c: usize) -> Result<Vec<Vec<TileHeader>>> {
        self.files.iter().map(|f| f.headers(c)).collect()
    }

    /// Whether [`LoadedTable::packed_column`] gives column `c` (its tile headers read
    /// once and remembered).
    pub fn packable(&self, c: usize) -> bool {
        let Some(cell) = self.packable.get(c) else { return false };
        *cell.get_or_init(|| {
            let stored = !self.files.is_empty() && matches!(self.dictionaries.get(c), Some(None));
            stored
                && self.files.iter().all(|f| f.footer().columns.get(c).is_some_and(|e| e.ipc.is_none()))
                && self.tile_headers(c).is_ok_and(|hs| hs.iter().flatten().all(crate::packed::packable))
        })
    }

    /// At most how many runs of repeated values column `c` holds in row order, from its
    /// tile headers (kept once asked): a run-length tile's runs, 1 for a constant tile,
    /// a row each for other tiles (a run across tiles counts in each). None for an
    /// intermediate result, or a column whose headers do not read.
    pub fn column_runs(&self, c: usize) -> Option<usize> {
        let cell = self.runs.get(c)?;
        *cell.get_or_init(|| {
            if self.files.is_empty() {
                return None;
            }
            let headers = self.tile_headers(c).ok()?;
            Some(
                headers
                    .iter()
                    .flatten()
                    .map(|h| match h.scheme {
                        crate::tiles::Scheme::Rle => h.runs as usize,
                        crate::tiles::Scheme::Constant => 1,
                        _ => h.rows as usize,
                    })
                    .sum(),
            )
        })
    }

    /// The zone map of column `c` over batch `i`: the smallest and largest non-NULL
    /// value of its tiles (in the column's integer domain: days, unscaled decimals), or
    /// `Some(None)` when the batch holds no value at all; `None` when unknown (floats,
    /// strings, 128-bit decimals, an intermediate result). Kept per column once asked.
    pub fn batch_zone(&self, c: usize, i: usize) -> Option<Option<(i64, i64)>> {
        let cell = self.zones.get(c)?;
        let zones = cell.get_or_init(|| self.batch_zones(c));
        zones.get(i).copied().flatten()
    }

    /// The zone map of column `c` over the whole table (see [`LoadedTable::batch_zone`]):
    /// `Some(None)` when it holds no value, `None` when unknown.
    pub fn column_zone(&self, c: usize) -> Option<Option<(i64, i64)>> {
        let mut zone: Option<(i64, i64)> = None;
        for i in 0..self.batch_rows.len() {
            if let Some((lo, hi)) = self.batch_zone(c, i)? {
                zone = Some(zone.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
            }
        }
        Some(zone)
    }

    fn batch_zones(&self, c: usize) -> Vec<Option<Option<(i64, i64)>>> {
        let Ok(headers) = self.tile_headers(c) else { return Vec::new() };
        self.batch_at
            .iter()
            .zip(&self.batch_rows)
            .map(|(&(k, start), &rows)| {
                let first = start / crate::tiles::TILE_ROWS;
                let tiles = headers[k].get(first..first + rows.div_ceil(crate::tiles::TILE_ROWS))?;
                let mut zone: Option<(i64, i64)> = None;
                for h in tiles {
                    if h.flags & crate::tiles::FLAG_NO_ZONE != 0 {
                        return None;
                    }
                    if h.flags & crate::tiles::FLAG_ALL_NULL == 0 {
                        zone = Some(zone.map_or((h.min, h.max), |(lo, hi)| (lo.min(h.min), hi.max(h.max))));
                    }
                }
                Some(zone)
            })
            .collect()
    }

    /// Column `c`'s dictionary when it is dictionary-encoded.
    pub fn dictionary(&self, c: usize) -> Result<Option<LoadedColumnDictionary>> {
        Ok(self.table_dictionary(c)?.map(|d| LoadedColumnDictionary { values: Arc::clone(&d.values) }))
    }

    fn table_dictionary(&self, c: usize) -> Result<Option<Arc<TableDictionary>>> {
        let Some(Some(cell)) = self.dictionaries.get(c) else { return Ok(None) };
        cell.get_or_try(|| {
            let per_file: Vec<Vec<&str>> = self.files.iter().map(|f| f.dictionary(c)).collect::<Result<_>>()?;
            let mut all: Vec<&str> = per_file.iter().flatten().copied().collect();
            all.sort_unstable();
            all.dedup();
            // Strings a file stored as bytes (its dictionary was full) belong too.
            let mut extra = Vec::new();
            for f in &self.files {
                extra.extend(f.plain_strings(c)?);
            }
            if !extra.is_empty() {
                all.extend(extra.iter().map(|s| s.as_str()));
                all.sort_unstable();
                all.dedup();
            }
            let file_to_table = per_file
                .iter()
                .map(|d| d.iter().map(|s| all.binary_search(s).map(|i| i as i32).unwrap_or(0)).collect())
                .collect();
            Ok(Arc::new(TableDictionary { values: Arc::new(StringArray::from(all)), file_to_table }))
        })
        .map(Some)
    }

    fn decode_column(&self, c: usize) -> Result<Arc<[ArrayRef]>> {
        let field = self.schema.field(c);
        let headers = self.tile_headers(c)?;
        let dict = self.table_dictionary(c)?;
        let file_dicts: Vec<Vec<&str>> = if dict.is_some() {
            Vec::new()
        } else {
            self.files.iter().map(|f| f.dictionary(c)).collect::<Result<_>>()?
        };
        let sorted: Vec<&str> = dict.as_ref().map(|d| d.values.iter().flatten().collect()).unwrap_or_default();
        let decode = |i: usize| -> Result<ArrayRef> {
            let (k, start) = self.batch_at[i];
            let target = match &dict {
                Some(d) => StringTarget::Codes { file_to_table: &d.file_to_table[k], sorted: &sorted },
                None => StringTarget::Strings { dictionary: file_dicts.get(k).map(|v| v.as_slice()).unwrap_or(&[]) },
            };
            let a = self.files[k].decode(c, field, &headers[k], start, self.batch_rows[i], &target)?;
            match &dict {
                Some(d) => {
                    let keys = a.as_primitive::<Int32Type>().clone();
                    let values = Arc::clone(&d.values) as ArrayRef;
                    Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).map_err(|e| TesseraError::Internal(format!("dictionary: {e}")))?))
                }
                None => Ok(a),
            }
        };
        let n = self.batch_rows.len();
        let threads = std::thread::available_parallelism().map(|t| t.get()).unwrap_or(1).min(n).max(1);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<ArrayRef>>>> = (0..n).map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        let a = decode(i);
                        if let Ok(mut slot) = slots[i].lock() {
                            *slot = Some(a);
                        }
                    }
                });
            }
        });
        slots
            .into_iter()
            .map(|m| m.into_inner().ok().flatten().unwrap_or_else(|| Err(TesseraError::Internal("a batch was not decoded".into()))))
            .collect::<Result<Vec<_>>>()
            .map(Arc::from)
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
        let checked = matches!(
            self.physical_schema.field(c).data_type(),
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::Date32
        );
        let Some(column) = checked.then(|| self.column(c).ok()).flatten() else { return false };
        let mut parts = Vec::with_capacity(column.len());
        for a in column.iter() {
            if a.null_count() > 0 {
                return false;
            }
            let a = match a.data_type() {
                DataType::Date32 => arrow::compute::cast(a, &DataType::Int32).and_then(|a| arrow::compute::cast(&a, &DataType::Int64)),
                _ => arrow::compute::cast(a, &DataType::Int64),
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
            // Checked as the batches' path below checks: a row past the end is an error,
            // not a panic (arrow's string `take` does not check).
            return arrow::compute::take(whole, &idx, Some(arrow::compute::TakeOptions { check_bounds: true })).map_err(err);
        }
        let mut starts = Vec::with_capacity(self.batch_rows.len());
        let mut at = 0usize;
        for &n in &self.batch_rows {
            starts.push(at);
            at += n;
        }
        let mut picks = Vec::with_capacity(rows.len());
        for &r in rows {
            if r >= at {
                return Err(TesseraError::Internal(format!("row {r} of {} rows", at)));
            }
            let b = starts.partition_point(|&s| s <= r) - 1;
            picks.push((b, r - starts[b]));
        }
        let column = self.column(c)?;
        let parts: Vec<&dyn Array> = column.iter().map(|a| a.as_ref()).collect();
        if parts.is_empty() {
            return Ok(arrow::array::new_empty_array(self.physical_type(c)?));
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
        let column = self.column(c)?;
        let parts: Vec<&dyn Array> = column.iter().map(|a| a.as_ref()).collect();
        let whole = if parts.is_empty() {
            arrow::array::new_empty_array(self.physical_type(c)?)
        } else {
            arrow::compute::concat(&parts).map_err(|e| TesseraError::Internal(format!("concatenating a column: {e}")))?
        };
        Ok(Arc::clone(cell.get_or_init(|| whole)))
    }

    /// Batch `i` with the columns in `projection` (all when `None`), dictionary columns
    /// decoded back to the declared string type.
    pub fn logical_batch(&self, i: usize, projection: Option<&[usize]>) -> Result<RecordBatch> {
        let all: Vec<usize> = (0..self.schema.fields().len()).collect();
        let projection = projection.unwrap_or(&all);
        let mut columns = Vec::with_capacity(projection.len());
        for &c in projection {
            let col = Arc::clone(&self.column(c)?[i]);
            columns.push(if matches!(self.dictionaries.get(c), Some(Some(_))) {
                arrow::compute::cast(&col, self.schema.field(c).data_type())
                    .map_err(|e| TesseraError::Internal(format!("decoding dictionary: {e}")))?
            } else {
                col
            });
        }
        let schema = Arc::new(self.schema.project(projection).map_err(|e| TesseraError::Internal(e.to_string()))?);
        RecordBatch::try_new_with_options(
            schema,
            columns,
            &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(self.batch_rows[i])),
        )
        .map_err(|e| TesseraError::Internal(format!("building batch: {e}")))
    }
}

impl LoadedTable {
    /// The table's batches with the logical schema, dealt round-robin into at most
    /// `partitions` partitions (at least one), for engines that scan in parallel.
    pub fn logical_partitions(&self, partitions: usize, projection: Option<&[usize]>) -> Result<Vec<Vec<RecordBatch>>> {
        let batches = self.batch_rows.len();
        let n = partitions.min(batches).max(1);
        let mut parts = vec![Vec::new(); n];
        for i in 0..batches {
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
        // Past the end from the whole column too: an error, not a panic.
        assert!(t.gather(0, &[5]).is_err());
        assert!(t.is_unique(0) == false, "strings are not checked");
    }

    /// An empty intermediate result has no schema: its columns are no arrays, not an
    /// error (a GPU pipeline over a HAVING that kept no group reads one).
    #[test]
    fn an_empty_result_has_empty_columns() {
        let t = LoadedTable::from_batches("r".into(), Arc::new(Schema::empty()), Vec::new());
        assert_eq!(t.column(0).unwrap().len(), 0);
        assert_eq!(t.rows, 0);
        assert!(t.whole_column(0).is_err() && t.gather(0, &[]).is_err());
    }
}
