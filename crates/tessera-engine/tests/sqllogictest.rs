//! Runs the sqllogictest files under `tests/slt/` (repository root) against Tessera,
//! each file in a fresh data directory.
//!
//! ```text
//! cargo test -p tessera-engine --test sqllogictest                 # all files
//! cargo test -p tessera-engine --test sqllogictest -- types        # files whose path contains "types"
//! cargo test -p tessera-engine --test sqllogictest -- --complete   # rewrite expected output
//! ```
//!
//! Files that read fixtures start with `control substitution on` and name them as
//! `$SLT_DATA/…` (the folder `tests/slt/data`); `$__TEST_DIR__` is a scratch folder.
//! Values print as in DataFusion's suite: NULL as `NULL`, an empty string as `(empty)`.

use std::path::{Path, PathBuf};

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use sqllogictest::{DBOutput, DefaultColumnType};
use tessera_engine::Session;

struct TesseraDb {
    session: Session,
    _dir: tempfile::TempDir,
}

#[derive(Debug)]
struct DbError(String);

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for DbError {}

fn column_type(dt: &DataType) -> DefaultColumnType {
    match dt {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::UInt8
        | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => DefaultColumnType::Integer,
        DataType::Float16 | DataType::Float32 | DataType::Float64 | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

#[async_trait::async_trait]
impl sqllogictest::AsyncDB for TesseraDb {
    type Error = DbError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, DbError> {
        let out = self.session.execute(sql).await.map_err(|e| DbError(e.to_string()))?;
        if out.is_status_only() {
            return Ok(DBOutput::StatementComplete(0));
        }
        let types = out.schema.fields().iter().map(|f| column_type(f.data_type())).collect();
        let options = FormatOptions::default().with_null("NULL");
        let mut rows = Vec::new();
        for batch in &out.batches {
            let formatters = batch
                .columns()
                .iter()
                .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| DbError(e.to_string()))?;
            for r in 0..batch.num_rows() {
                let row = formatters
                    .iter()
                    .zip(batch.columns())
                    .map(|(f, c)| {
                        let s = f.value(r).to_string().trim_end().to_string();
                        let is_string = matches!(c.data_type(), DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8);
                        if s.is_empty() && is_string && c.is_valid(r) { "(empty)".to_string() } else { s }
                    })
                    .collect();
                rows.push(row);
            }
        }
        Ok(DBOutput::Rows { types, rows })
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "tessera"
    }
}

fn slt_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/slt")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "slt") {
            out.push(p);
        }
    }
}

/// The ways a query can run: Tessera's pipelines (with DataFusion for what the IR cannot
/// express) in plans shaped for this machine and in plans shaped for the GPU
/// (`tessera.plan_for`: unique-key build sides, membership tables), and plain DataFusion.
/// Every file runs under each, against the same expected results, so the paths must
/// agree record for record. Labels: the engine, for `skipif`/`onlyif`.
const ENGINES: [(&str, &str, &str); 3] = [("pipelines", "pipelines", "auto"), ("pipelines, plan for the gpu", "pipelines", "gpu"), ("datafusion", "datafusion", "auto")];

async fn make_db(engine: &'static str, plan_for: &'static str) -> Result<TesseraDb, DbError> {
    let dir = tempfile::tempdir().map_err(|e| DbError(e.to_string()))?;
    let session = Session::open(dir.path().join("data")).map_err(|e| DbError(e.to_string()))?;
    for set in [format!("SET tessera.engine = '{engine}'"), format!("SET tessera.plan_for = '{plan_for}'")] {
        session.execute(&set).await.map_err(|e| DbError(e.to_string()))?;
    }
    Ok(TesseraDb { session, _dir: dir })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let complete = args.iter().any(|a| a == "--complete");
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let root = slt_root().canonicalize().expect("tests/slt exists");
    let data = root.join("data");
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    files.retain(|f| filters.is_empty() || filters.iter().any(|x| f.to_string_lossy().contains(x.as_str())));
    assert!(!files.is_empty(), "no .slt files matched under {}", root.display());

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let mut failures = Vec::new();
    let mut records = 0usize;
    for (file, (label, engine, plan_for)) in files.iter().flat_map(|f| ENGINES.iter().map(move |e| (f, *e))) {
        // --complete rewrites expected results: from the reference path only.
        if complete && engine != "datafusion" {
            continue;
        }
        let name = format!("{} [{label}]", file.strip_prefix(&root).unwrap_or(file).display());
        records += count_records(file);
        let mut runner = sqllogictest::Runner::new(move || make_db(engine, plan_for));
        runner.set_var("SLT_DATA".to_string(), data.display().to_string());
        runner.add_label(engine);
        let result = runtime.block_on(async {
            if complete {
                runner
                    .update_test_file(
                        file,
                        " ",
                        sqllogictest::default_validator,
                        sqllogictest::default_normalizer,
                        sqllogictest::strict_column_validator,
                    )
                    .await
                    .map_err(|e| e.to_string())
            } else {
                runner.run_file_async(file).await.map_err(|e| e.display(true).to_string())
            }
        });
        match result {
            Ok(()) => println!("ok    {name}"),
            Err(e) => {
                println!("FAIL  {name}\n{e}");
                failures.push(name);
            }
        }
    }
    println!("{} files x {} engines, {records} records run, {} failed", files.len(), ENGINES.len(), failures.len());
    if !failures.is_empty() {
        eprintln!("failed: {}", failures.join(", "));
        std::process::exit(1);
    }
}

/// Number of `statement` and `query` records in a file (reported as the suite's size).
fn count_records(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|t| t.lines().filter(|l| l.starts_with("statement ") || l.starts_with("query ")).count())
        .unwrap_or(0)
}
