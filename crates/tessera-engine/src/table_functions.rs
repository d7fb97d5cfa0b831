//! `read_parquet('path')` and `read_csv('path' [, header [, 'delimiter']])`: querying
//! files in place. Paths may be globs or directories, as DataFusion's listing tables
//! accept. `SELECT … FROM 'file.parquet'` works too (DataFusion's URL tables).
//! `tessera_storage(['table'])`: how the store keeps each column (encodings, bytes).

use std::fs::File;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::datasource::MemTable;
use tessera_storage::tiles::Scheme;
use tessera_storage::{ColumnStorage, Store};
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{ScalarValue, plan_err};
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::prelude::SessionContext;

/// Registers the table functions on `ctx`.
pub fn register(ctx: &SessionContext, store: &Arc<Store>) {
    ctx.register_udtf("read_parquet", Arc::new(ReadParquet));
    ctx.register_udtf("read_csv", Arc::new(ReadCsv));
    ctx.register_udtf("tessera_storage", Arc::new(StorageReport(Arc::clone(store))));
}

/// `tessera_storage(['table'])`: one row per column of the store's tables (or of one
/// table): its rows, files and tiles, how many tiles each encoding took, and its bytes
/// in the data files beside its bytes in Arrow's layout.
#[derive(Debug)]
struct StorageReport(Arc<Store>);

impl TableFunctionImpl for StorageReport {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let only = match literal(args.exprs(), 0, "tessera_storage")? {
            None => None,
            Some(ScalarValue::Utf8(Some(t)) | ScalarValue::Utf8View(Some(t)) | ScalarValue::LargeUtf8(Some(t))) => Some(t),
            Some(other) => return plan_err!("tessera_storage takes a table name, got {other}"),
        };
        let mut rows = self.0.storage().map_err(|e| DataFusionError::External(Box::new(e)))?;
        if let Some(t) = &only {
            rows.retain(|r| &r.table == t);
            if rows.is_empty() && self.0.manifest().map_err(|e| DataFusionError::External(Box::new(e)))?.table(t).is_none() {
                return plan_err!("tessera_storage: table '{t}' does not exist");
            }
        }
        let encodings: Vec<String> = rows
            .iter()
            .map(|r| {
                let mut parts: Vec<String> =
                    Scheme::ALL.iter().filter(|s| r.schemes[**s as usize] > 0).map(|s| format!("{} {}", s.name(), r.schemes[*s as usize])).collect();
                if r.dictionary_values > 0 {
                    parts.push(format!("dictionary of {}", r.dictionary_values));
                }
                if r.zstd_tiles > 0 {
                    parts.push(format!("string bytes zstd in {}", r.zstd_tiles));
                }
                if r.ipc {
                    parts.push("arrow ipc".into());
                }
                parts.join(", ")
            })
            .collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("table_name", DataType::Utf8, false),
            Field::new("column_name", DataType::Utf8, false),
            Field::new("data_type", DataType::Utf8, false),
            Field::new("rows", DataType::UInt64, false),
            Field::new("files", DataType::UInt64, false),
            Field::new("tiles", DataType::UInt64, false),
            Field::new("encodings", DataType::Utf8, false),
            Field::new("stored_bytes", DataType::UInt64, false),
            Field::new("arrow_bytes", DataType::UInt64, false),
            Field::new("ratio", DataType::Float64, true),
        ]));
        let strings = |f: fn(&ColumnStorage) -> &str| Arc::new(StringArray::from_iter_values(rows.iter().map(f))) as ArrayRef;
        let counts = |f: fn(&ColumnStorage) -> u64| Arc::new(UInt64Array::from_iter_values(rows.iter().map(f))) as ArrayRef;
        let ratio = Float64Array::from_iter(rows.iter().map(|r| (r.stored_bytes > 0).then(|| r.arrow_bytes as f64 / r.stored_bytes as f64)));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                strings(|r| &r.table),
                strings(|r| &r.column),
                strings(|r| &r.data_type),
                counts(|r| r.rows),
                counts(|r| r.files),
                counts(|r| r.tiles),
                Arc::new(StringArray::from(encodings)),
                counts(|r| r.stored_bytes),
                counts(|r| r.arrow_bytes),
                Arc::new(ratio),
            ],
        )?;
        Ok(Arc::new(MemTable::try_new(schema, vec![vec![batch]])?))
    }
}

fn literal(args: &[Expr], i: usize, function: &str) -> Result<Option<ScalarValue>> {
    match args.get(i) {
        None => Ok(None),
        Some(Expr::Literal(v, _)) => Ok(Some(v.clone())),
        Some(other) => plan_err!("{function}: argument {} must be a literal, got {other}", i + 1),
    }
}

fn path_arg(args: &[Expr], function: &str) -> Result<String> {
    match literal(args, 0, function)? {
        Some(ScalarValue::Utf8(Some(p)) | ScalarValue::Utf8View(Some(p)) | ScalarValue::LargeUtf8(Some(p))) => Ok(p),
        _ => plan_err!("{function} takes a file path as its first argument, e.g. {function}('data/t.{}')",
            if function == "read_csv" { "csv" } else { "parquet" }),
    }
}

/// A local file whose schema stands for the table: the path itself, or for a directory
/// or glob the first file (in name order) with `extension` under its fixed prefix.
fn first_file(path: &str, extension: &str) -> Result<std::path::PathBuf> {
    let p = std::path::Path::new(path);
    if p.is_file() {
        return Ok(p.to_path_buf());
    }
    let glob_at = path.find(['*', '?', '[']).unwrap_or(path.len());
    let prefix = &path[..glob_at];
    let dir = match prefix.rfind('/') {
        Some(i) if glob_at < path.len() => &prefix[..=i],
        _ => prefix,
    };
    let mut stack = vec![std::path::PathBuf::from(if dir.is_empty() { "." } else { dir })];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        if let Some(f) = entries.iter().find(|e| e.is_file() && e.to_string_lossy().ends_with(extension)) {
            return Ok(f.clone());
        }
        stack.extend(entries.into_iter().filter(|e| e.is_dir()).rev());
    }
    plan_err!("no such file: '{path}'")
}

fn listing(path: &str, options: ListingOptions, schema: SchemaRef) -> Result<Arc<dyn TableProvider>> {
    let config = ListingTableConfig::new(ListingTableUrl::parse(path)?).with_listing_options(options).with_schema(schema);
    Ok(Arc::new(ListingTable::try_new(config)?))
}

#[derive(Debug)]
struct ReadParquet;

impl TableFunctionImpl for ReadParquet {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let path = path_arg(args.exprs(), "read_parquet")?;
        let file = first_file(&path, ".parquet")?;
        let f = File::open(&file).map_err(|e| DataFusionError::Execution(format!("read_parquet: cannot open '{}': {e}", file.display())))?;
        let schema = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)?.schema().clone();
        let options = ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
        listing(&path, options, schema)
    }
}

#[derive(Debug)]
struct ReadCsv;

impl TableFunctionImpl for ReadCsv {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let path = path_arg(exprs, "read_csv")?;
        let header = match literal(exprs, 1, "read_csv")? {
            None => true,
            Some(ScalarValue::Boolean(Some(b))) => b,
            Some(other) => return plan_err!("read_csv: the header argument must be true or false, got {other}"),
        };
        let delimiter = match literal(exprs, 2, "read_csv")? {
            None => b',',
            Some(ScalarValue::Utf8(Some(d))) if d.len() == 1 => d.as_bytes()[0],
            Some(other) => return plan_err!("read_csv: the delimiter must be one character, got {other}"),
        };
        let file = first_file(&path, "")?;
        let f = File::open(&file).map_err(|e| DataFusionError::Execution(format!("read_csv: cannot open '{}': {e}", file.display())))?;
        let (schema, _) = datafusion::arrow::csv::reader::Format::default()
            .with_header(header)
            .with_delimiter(delimiter)
            .infer_schema(f, Some(1000))?;
        let format = CsvFormat::default().with_has_header(header).with_delimiter(delimiter);
        let extension = std::path::Path::new(&file).extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
        let options = ListingOptions::new(Arc::new(format)).with_file_extension(extension);
        listing(&path, options, Arc::new(schema))
    }
}
