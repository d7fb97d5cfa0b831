//! `read_parquet('path')` and `read_csv('path' [, header [, 'delimiter']])`: querying
//! files in place. Paths may be globs or directories, as DataFusion's listing tables
//! accept. `SELECT … FROM 'file.parquet'` works too (DataFusion's URL tables).

use std::fs::File;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{ScalarValue, plan_err};
use datafusion::datasource::file_format::csv::CsvFormat;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl};
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::prelude::SessionContext;

/// Registers the table functions on `ctx`.
pub fn register(ctx: &SessionContext) {
    ctx.register_udtf("read_parquet", Arc::new(ReadParquet));
    ctx.register_udtf("read_csv", Arc::new(ReadCsv));
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
