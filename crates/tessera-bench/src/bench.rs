//! `tessera bench`: runs a suite on Tessera and its peers (plain DataFusion, DuckDB),
//! checks every answer, and times one cold and several warm runs per query.
//!
//! Answers are checked against the stored SF 1 answers; at other scale factors against
//! DuckDB's result when DuckDB ran, else against plain DataFusion's.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};
use serde::Serialize;
use tessera_common::{Result, TesseraError};
use tessera_engine::Session;

use crate::check::{self, Rows};
use crate::datagen;
use crate::suite::{Query, Suite};

/// The engines `tessera bench` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// Tessera itself.
    Tessera,
    /// Tessera in the same process with the GPU left out (`tessera.device = 'cpu'`).
    #[serde(rename = "tessera-cpu")]
    TesseraCpu,
    /// Plain DataFusion over the same in-memory tables.
    DataFusion,
    /// DuckDB (Python module) over the store's tables exported to Parquet, loaded into memory.
    DuckDb,
}

impl EngineKind {
    /// Parses `tessera`, `tessera-cpu`, `datafusion` or `duckdb`.
    pub fn parse(s: &str) -> Option<EngineKind> {
        match s.to_ascii_lowercase().as_str() {
            "tessera" => Some(EngineKind::Tessera),
            "tessera-cpu" => Some(EngineKind::TesseraCpu),
            "datafusion" => Some(EngineKind::DataFusion),
            "duckdb" => Some(EngineKind::DuckDb),
            _ => None,
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Tessera => "tessera",
            EngineKind::TesseraCpu => "tessera-cpu",
            EngineKind::DataFusion => "datafusion",
            EngineKind::DuckDb => "duckdb",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The suite.
    pub suite: Suite,
    /// Scale factor.
    pub sf: f64,
    /// Query names to run; empty means all.
    pub queries: Vec<String>,
    /// Warm runs per query (after one cold run).
    pub runs: usize,
    /// Engines, in the order their columns appear.
    pub engines: Vec<EngineKind>,
    /// Threads for every engine (and for data generation).
    pub threads: usize,
    /// Root data directory; the suite's data lives in `bench/<suite>-sf<sf>` under it.
    pub data_dir: PathBuf,
}

/// The outcome of checking one answer.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "status", content = "detail", rename_all = "lowercase")]
pub enum Check {
    /// Matches the reference.
    Pass,
    /// Differs from the reference (where, first).
    Fail(String),
    /// No reference to check against (why).
    Unchecked(String),
}

/// One query on one engine.
#[derive(Debug, Clone, Serialize)]
pub struct QueryRun {
    /// Query name.
    pub query: String,
    /// Engine.
    pub engine: EngineKind,
    /// Rows in the answer.
    pub rows: usize,
    /// The cold run (first in the process, table loading included), in ms.
    pub cold_ms: f64,
    /// Warm runs, in ms.
    pub warm_ms: Vec<f64>,
    /// Answer check.
    pub check: Check,
    /// The error, when the query failed.
    pub error: Option<String>,
    /// Tessera on a GPU: kernel time and the bandwidth model of the warm runs.
    pub gpu: Option<GpuFigures>,
    #[serde(skip)]
    answer: Option<Rows>,
}

/// What the GPU did in a query's warm runs (medians over the runs).
#[derive(Debug, Clone, Serialize)]
pub struct GpuFigures {
    /// GPU pipelines per run.
    pub pipelines: usize,
    /// Kernel time, all GPU pipelines of the query (CUDA events), ms.
    pub kernel_ms: f64,
    /// Host time of the GPU pipelines (lookups, launches, synchronization, fetching
    /// results), ms; the rest of the query's wall time is planning and CPU work.
    pub host_ms: f64,
    /// Bytes of source columns the kernels read (the model's input).
    pub bytes: u64,
    /// The bandwidth model: `bytes` at the read bandwidth measured in the same process, ms.
    pub model_ms: f64,
    /// That measured read bandwidth (a copy kernel), GB/s.
    pub peak_gbs: f64,
}

/// Median of a non-empty list.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// What the GPU pipelines of the query `session` just ran did, for [`gpu_figures`]:
/// (kernel ms, host ms, bytes, pipelines), None without a GPU.
fn last_gpu_run(session: &Session) -> Option<(f64, f64, u64, usize)> {
    let runs = session.executor().gpu()?.last_runs();
    Some((runs.iter().map(|r| r.kernel_ms).sum(), runs.iter().map(|r| r.host_ms).sum(), runs.iter().map(|r| r.bytes).sum(), runs.len()))
}

/// The GPU figures of Tessera's runs of one query: `runs` holds per run (kernel ms, host
/// ms, bytes, pipelines); the first (cold) run is left out when there are others.
fn gpu_figures(runs: &[(f64, f64, u64, usize)], peak_gbs: Option<f64>) -> Option<GpuFigures> {
    let warm = if runs.len() > 1 { &runs[1..] } else { runs };
    let &(_, _, bytes, pipelines) = warm.last()?;
    if pipelines == 0 {
        return None;
    }
    let peak_gbs = peak_gbs.unwrap_or(f64::NAN);
    Some(GpuFigures {
        pipelines,
        kernel_ms: median(warm.iter().map(|r| r.0).collect()),
        host_ms: median(warm.iter().map(|r| r.1).collect()),
        bytes,
        model_ms: bytes as f64 / (peak_gbs * 1e9) * 1e3,
        peak_gbs,
    })
}

impl QueryRun {
    /// Median of the warm runs (the cold run when there are none).
    pub fn median_ms(&self) -> f64 {
        median(if self.warm_ms.is_empty() { vec![self.cold_ms] } else { self.warm_ms.clone() })
    }
}

/// The machine a benchmark ran on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores.
    pub cores: usize,
    /// GPU name, when one was used.
    pub gpu: Option<String>,
    /// Operating system.
    pub os: String,
}

impl Machine {
    /// Describes this machine.
    pub fn detect() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| t.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|s| s.trim().to_string()))
            .unwrap_or_else(|| "unknown".into());
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            gpu: None,
            os: std::env::consts::OS.to_string(),
        }
    }
}

/// Everything a benchmark run produced.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Suite name.
    pub suite: String,
    /// Scale factor.
    pub sf: f64,
    /// Warm runs per query.
    pub runs: usize,
    /// Threads per engine.
    pub threads: usize,
    /// The machine.
    pub machine: Machine,
    /// Engine versions.
    pub versions: std::collections::BTreeMap<String, String>,
    /// When it ran (UTC, RFC 3339).
    pub date: String,
    /// Seconds spent generating data (0 when it was already there).
    pub generate_seconds: f64,
    /// Per query and engine.
    pub results: Vec<QueryRun>,
    /// Engines that could not run, and why.
    pub notes: Vec<String>,
}

impl BenchReport {
    /// Whether every answer that was checked passed and no query failed.
    pub fn all_passed(&self) -> bool {
        self.results.iter().all(|r| r.error.is_none() && !matches!(r.check, Check::Fail(_)))
    }
}

/// The data directory of a suite at a scale factor.
pub fn suite_dir(root: &Path, suite: Suite, sf: f64) -> PathBuf {
    root.join("bench").join(format!("{suite}-sf{sf}"))
}

/// Opens the suite's store, generating the data when a table is missing.
pub fn prepare(opts: &BenchOptions, progress: &(dyn Fn(u64) + Sync)) -> Result<(Session, f64)> {
    let session = Session::open(suite_dir(&opts.data_dir, opts.suite, opts.sf))?;
    let manifest = session.store().manifest()?;
    let missing = opts.suite.tables().iter().any(|t| manifest.table(t).is_none_or(|m| m.rows == 0));
    let mut seconds = 0.0;
    if missing {
        let start = Instant::now();
        datagen::generate_into_store(opts.suite, opts.sf, opts.threads, session.store(), progress)?;
        seconds = start.elapsed().as_secs_f64();
    }
    Ok((session, seconds))
}

pub(crate) fn selected(opts: &BenchOptions) -> Result<Vec<&'static Query>> {
    if opts.queries.is_empty() {
        return Ok(opts.suite.queries().iter().collect());
    }
    opts.queries
        .iter()
        .map(|name| {
            opts.suite
                .query(name)
                .ok_or_else(|| TesseraError::Plan(format!("{} has no query '{name}'", opts.suite)))
        })
        .collect()
}

/// Runs the benchmark.
pub async fn run(opts: &BenchOptions, progress: &(dyn Fn(u64) + Sync)) -> Result<BenchReport> {
    let queries = selected(opts)?;
    let (session, generate_seconds) = prepare(opts, progress)?;
    let mut versions = std::collections::BTreeMap::new();
    versions.insert("tessera".to_string(), env!("CARGO_PKG_VERSION").to_string());
    versions.insert("datafusion".to_string(), datafusion::DATAFUSION_VERSION.to_string());
    let mut results = Vec::new();
    let mut notes = Vec::new();
    // With both, Tessera with and without the GPU take turns, one run each (see
    // `time_alternating`).
    let alternate = opts.engines.contains(&EngineKind::Tessera) && opts.engines.contains(&EngineKind::TesseraCpu);
    for engine in &opts.engines {
        match engine {
            EngineKind::Tessera | EngineKind::TesseraCpu if alternate => {
                if *engine == EngineKind::TesseraCpu {
                    continue;
                }
                // A second connection to the same database, its device setting made once
                // (a SET clears a connection's cached plans).
                let cpu_session = Session::connect(session.database())?;
                cpu_session.execute("SET tessera.device = 'cpu'").await?;
                let peak = session.executor().gpu().and_then(|g| g.bandwidth_gbs());
                for q in &queries {
                    let per_run = std::sync::Mutex::new(Vec::new());
                    let sql = q.sql.trim().trim_end_matches(';');
                    let with_gpu = || -> RunFuture<'_> {
                        Box::pin(async {
                            let start = Instant::now();
                            let out = session.execute(sql).await?;
                            let ms = start.elapsed().as_secs_f64() * 1e3;
                            if let (Some(run), Ok(mut v)) = (last_gpu_run(&session), per_run.lock()) {
                                v.push(run);
                            }
                            Ok((check::to_rows(&out.batches)?, ms))
                        })
                    };
                    let without = || -> RunFuture<'_> {
                        Box::pin(async {
                            let start = Instant::now();
                            let out = cpu_session.execute(sql).await?;
                            let ms = start.elapsed().as_secs_f64() * 1e3;
                            Ok((check::to_rows(&out.batches)?, ms))
                        })
                    };
                    let mut runs = time_alternating(q, opts.runs, &[(EngineKind::Tessera, &with_gpu), (EngineKind::TesseraCpu, &without)]).await;
                    if let Some(with_gpu) = runs.first_mut() {
                        with_gpu.gpu = per_run.lock().ok().and_then(|v| gpu_figures(&v, peak));
                    }
                    results.extend(runs);
                }
            }
            EngineKind::Tessera => {
                let peak = session.executor().gpu().and_then(|g| g.bandwidth_gbs());
                // `TESSERA_EXP_REPORT_TIMED=1`: a run's time ends after its GPU report is
                // read, as before 2026-11-28g (to compare figures with earlier ones).
                let report_timed = std::env::var("TESSERA_EXP_REPORT_TIMED").is_ok_and(|v| v == "1");
                for q in &queries {
                    // Per run: what the GPU pipelines of the query did.
                    let per_run = std::sync::Mutex::new(Vec::new());
                    let mut run = time_query(q, *engine, opts.runs, || async {
                        let out = session.execute(q.sql.trim().trim_end_matches(';')).await;
                        let end = Instant::now();
                        if tessera_common::trace::enabled() {
                            // `TESSERA_TRACE_HOST=1`: where the run's host time went.
                            eprintln!("trace {} {}", q.name, tessera_common::trace::render(&tessera_common::trace::take()));
                        }
                        let out = out?;
                        if let (Some(run), Ok(mut v)) = (last_gpu_run(&session), per_run.lock()) {
                            v.push(run);
                        }
                        Ok((out.batches, if report_timed { Instant::now() } else { end }))
                    })
                    .await;
                    run.gpu = per_run.lock().ok().and_then(|v| gpu_figures(&v, peak));
                    results.push(run);
                }
            }
            EngineKind::TesseraCpu => {
                // The same session under `tessera.device = 'cpu'`: the GPU present but
                // left out, in the process that times Tessera with it (two processes
                // differ by up to a fifth on the same CPU-backend queries: see
                // `benchmarks/results/gpu-h200-2026-11-25h/README.md`).
                session.execute("SET tessera.device = 'cpu'").await?;
                for q in &queries {
                    results.push(time_query(q, *engine, opts.runs, || async {
                        let out = session.execute(q.sql.trim().trim_end_matches(';')).await?;
                        Ok((out.batches, Instant::now()))
                    }).await);
                }
                session.execute("SET tessera.device = 'auto'").await?;
            }
            EngineKind::DataFusion => {
                let ctx = datafusion_peer(&session, opts)?;
                for q in &queries {
                    results.push(time_query(q, *engine, opts.runs, || async {
                        let df = ctx.sql(q.sql).await.map_err(tessera_engine::error::from_df)?;
                        Ok((df.collect().await.map_err(tessera_engine::error::from_df)?, Instant::now()))
                    }).await);
                }
            }
            EngineKind::DuckDb => match run_duckdb(&session, opts, &queries) {
                Ok((version, runs)) => {
                    versions.insert("duckdb".to_string(), version);
                    results.extend(runs);
                }
                Err(e) => notes.push(format!("duckdb did not run: {e}")),
            },
        }
    }
    check_answers(opts, &mut results);
    let mut machine = Machine::detect();
    if opts.engines.contains(&EngineKind::Tessera) {
        machine.gpu = session.executor().gpu().map(|g| g.device().name().to_string());
    }
    Ok(BenchReport {
        suite: opts.suite.to_string(),
        sf: opts.sf,
        runs: opts.runs,
        threads: opts.threads,
        machine,
        versions,
        date: utc_now(),
        generate_seconds,
        results,
        notes,
    })
}

/// One timed run of a query: its rows and the milliseconds the query itself took.
type RunFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = Result<(Rows, f64)>> + 'a>>;

/// Times `q` on several engines of one process taking turns: a cold run of each, then
/// `runs` rounds of one run each. Run one engine's passes after another's and whatever
/// drifts in the process (its allocator's state, the clocks, the other engine's
/// leftovers) falls on one engine only: TPC-H SF 1 on the H200 (2026-11-26) had q11 23.7
/// vs 16.4 ms with the GPU present run first, 16.5 vs 17.0 with the CPU engine first,
/// its pipelines on the CPU backend both ways.
async fn time_alternating<'a>(q: &Query, runs: usize, engines: &[(EngineKind, &dyn Fn() -> RunFuture<'a>)]) -> Vec<QueryRun> {
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(runs + 1); engines.len()];
    let mut answers: Vec<Option<Rows>> = vec![None; engines.len()];
    let mut errors: Vec<Option<String>> = vec![None; engines.len()];
    for _ in 0..=runs {
        for (i, (_, run)) in engines.iter().enumerate() {
            if errors[i].is_some() {
                continue;
            }
            match run().await {
                Ok((rows, ms)) => {
                    times[i].push(ms);
                    answers[i] = Some(rows);
                }
                Err(e) => errors[i] = Some(e.to_string()),
            }
        }
    }
    engines
        .iter()
        .zip(times.into_iter().zip(answers).zip(errors))
        .map(|((engine, _), ((times, answer), error))| query_run(q, *engine, times, answer, error))
        .collect()
}

/// Times `runs` + 1 runs of `q` (the first cold) on one engine. A run's time ends when the
/// engine hands back its result batches (`run` returns them with that instant); reading
/// the run's GPU report comes after, as in `time_alternating`'s runs (the harness's work,
/// not the engine's). The batches of the last run are rendered as text for the check,
/// once, after all the runs: rendered after each run (`TESSERA_EXP_ROWS_EACH_RUN=1`, as
/// before 2026-11-29b), the harness's strings for hundreds of groups stood between one
/// run and the next, in the caches the next run's host steps use.
async fn time_query<F, Fut>(q: &Query, engine: EngineKind, runs: usize, run: F) -> QueryRun
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<arrow::record_batch::RecordBatch>, Instant)>>,
{
    let each_run = std::env::var("TESSERA_EXP_ROWS_EACH_RUN").is_ok_and(|v| v == "1");
    let mut times = Vec::with_capacity(runs + 1);
    let mut last = None;
    let mut answer = None;
    let mut error = None;
    for _ in 0..=runs {
        let start = Instant::now();
        let got = run().await;
        let got = got.and_then(|(batches, end)| {
            let ms = end.duration_since(start).as_secs_f64() * 1e3;
            if each_run {
                answer = Some(check::to_rows(&batches)?);
            } else {
                last = Some(batches);
            }
            Ok(ms)
        });
        match got {
            Ok(ms) => times.push(ms),
            Err(e) => {
                error = Some(e.to_string());
                break;
            }
        }
    }
    if let Some(batches) = last {
        match check::to_rows(&batches) {
            Ok(rows) => answer = Some(rows),
            Err(e) => error = Some(e.to_string()),
        }
    }
    query_run(q, engine, times, answer, error)
}

/// The record of `q`'s runs on `engine`: the first time is the cold run's, the rest warm.
fn query_run(q: &Query, engine: EngineKind, times: Vec<f64>, answer: Option<Rows>, error: Option<String>) -> QueryRun {
    QueryRun {
        query: q.name.to_string(),
        engine,
        rows: answer.as_ref().map_or(0, |a| a.len()),
        cold_ms: times.first().copied().unwrap_or(f64::NAN),
        warm_ms: times.into_iter().skip(1).collect(),
        check: Check::Unchecked("not run".into()),
        error,
        gpu: None,
        answer,
    }
}

/// Plain DataFusion over the same tables, loaded into memory as DataFusion's MemTables.
fn datafusion_peer(session: &Session, opts: &BenchOptions) -> Result<SessionContext> {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(opts.threads.max(1)));
    let store = session.store();
    let manifest = store.manifest()?;
    for table in opts.suite.tables() {
        let meta = manifest
            .table(table)
            .ok_or_else(|| TesseraError::Internal(format!("table {table} missing after loading")))?;
        let loaded = store.load(meta)?;
        let parts = loaded.logical_partitions(opts.threads, None)?;
        let mem = MemTable::try_new(Arc::clone(&loaded.schema), parts).map_err(tessera_engine::error::from_df)?;
        ctx.register_table(*table, Arc::new(mem)).map_err(tessera_engine::error::from_df)?;
    }
    Ok(ctx)
}

#[derive(serde::Deserialize)]
struct DuckOut {
    error: Option<String>,
    version: Option<String>,
    queries: Option<Vec<DuckQuery>>,
}

#[derive(serde::Deserialize)]
struct DuckQuery {
    name: String,
    times_ms: Vec<f64>,
    error: Option<String>,
    rows: Option<Rows>,
}

/// Rows per Parquet file of a table exported for DuckDB (files are written in parallel).
const EXPORT_FILE_ROWS: usize = 8 << 20;

/// The Parquet files of `table` as the store holds it now, written once per table
/// version under `<store>/export/` (the store's own files are tiles, which DuckDB does
/// not read): the same rows DuckDB then loads into its memory.
fn parquet_export(session: &Session, meta: &tessera_storage::TableMeta) -> Result<Vec<PathBuf>> {
    let store = session.store();
    let dir = store.dir().join("export").join(format!("{}-v{}", meta.name, meta.version));
    let done = dir.join("DONE");
    let batch_rows = store.load(meta)?.batch_rows().to_vec();
    // Files of consecutive batches, about EXPORT_FILE_ROWS rows each.
    let mut groups: Vec<std::ops::Range<usize>> = Vec::new();
    let (mut start, mut rows) = (0, 0);
    for (i, n) in batch_rows.iter().enumerate() {
        rows += n;
        if rows >= EXPORT_FILE_ROWS || i + 1 == batch_rows.len() {
            groups.push(start..i + 1);
            (start, rows) = (i + 1, 0);
        }
    }
    let files: Vec<PathBuf> = (0..groups.len()).map(|k| dir.join(format!("part-{k:04}.parquet"))).collect();
    if done.exists() {
        return Ok(files);
    }
    // Exports of this table's earlier versions are stale.
    if let Ok(entries) = std::fs::read_dir(store.dir().join("export")) {
        let prefix = format!("{}-v", meta.name);
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    std::fs::create_dir_all(&dir).map_err(|e| TesseraError::io(format!("creating {}", dir.display()), e))?;
    let loaded = store.load(meta)?;
    let write = |k: usize| -> Result<()> {
        let f = std::fs::File::create(&files[k]).map_err(|e| TesseraError::io(format!("creating {}", files[k].display()), e))?;
        let props = parquet::file::properties::WriterProperties::builder().set_compression(parquet::basic::Compression::SNAPPY).build();
        let err = |e: parquet::errors::ParquetError| TesseraError::Execution(format!("writing {}: {e}", files[k].display()));
        let mut w = parquet::arrow::ArrowWriter::try_new(f, Arc::clone(&loaded.schema), Some(props)).map_err(err)?;
        for i in groups[k].clone() {
            w.write(&loaded.logical_batch(i, None)?).map_err(err)?;
        }
        w.close().map_err(err)?;
        Ok(())
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..groups.len()).map(|k| s.spawn(move || write(k))).collect();
        handles.into_iter().try_for_each(|h| h.join().unwrap_or_else(|_| Err(TesseraError::Internal("an export thread failed".into()))))
    })?;
    std::fs::write(&done, b"").map_err(|e| TesseraError::io(format!("writing {}", done.display()), e))?;
    Ok(files)
}

/// Runs the queries in DuckDB through its Python module, over the store's tables
/// exported to Parquet ([`parquet_export`]).
fn run_duckdb(session: &Session, opts: &BenchOptions, queries: &[&Query]) -> std::result::Result<(String, Vec<QueryRun>), String> {
    use std::io::Write;
    let manifest = session.store().manifest().map_err(|e| e.to_string())?;
    let mut tables = serde_json::Map::new();
    for t in opts.suite.tables() {
        let meta = manifest.table(t).ok_or_else(|| format!("table {t} missing"))?;
        let files: Vec<String> = parquet_export(session, meta).map_err(|e| e.to_string())?.iter().map(|f| f.display().to_string()).collect();
        tables.insert(t.to_string(), serde_json::json!(files));
    }
    let spec = serde_json::json!({
        "threads": opts.threads,
        "runs": opts.runs,
        "tables": tables,
        "queries": queries.iter().map(|q| serde_json::json!({"name": q.name, "sql": q.sql})).collect::<Vec<_>>(),
    });
    let python = std::env::var("TESSERA_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut child = std::process::Command::new(&python)
        .args(["-c", include_str!("duckdb.py")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {python}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(spec.to_string().as_bytes()).map_err(|e| e.to_string())?;
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        // The status says what stderr cannot when the process was killed (e.g. by the
        // kernel's OOM killer: "signal: 9 (SIGKILL)").
        return Err(format!("{python} failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    // The JSON is the last line; anything before it is chatter we do not want to fail on.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let parsed: DuckOut = serde_json::from_str(last).map_err(|e| format!("unreadable DuckDB output: {e}"))?;
    if let Some(e) = parsed.error {
        return Err(e);
    }
    let runs = parsed
        .queries
        .unwrap_or_default()
        .into_iter()
        .map(|q| QueryRun {
            query: q.name,
            engine: EngineKind::DuckDb,
            rows: q.rows.as_ref().map_or(0, |r| r.len()),
            cold_ms: q.times_ms.first().copied().unwrap_or(f64::NAN),
            warm_ms: q.times_ms.iter().skip(1).copied().collect(),
            check: Check::Unchecked("not run".into()),
            error: q.error,
            gpu: None,
            answer: q.rows,
        })
        .collect();
    Ok((parsed.version.unwrap_or_default(), runs))
}

/// Checks every answer against the SF 1 answers, or at other scale factors against
/// DuckDB's answer (else DataFusion's).
fn check_answers(opts: &BenchOptions, results: &mut [QueryRun]) {
    let reference_engine = if results.iter().any(|r| r.engine == EngineKind::DuckDb && r.answer.is_some()) {
        Some(EngineKind::DuckDb)
    } else if results.iter().any(|r| r.engine == EngineKind::DataFusion && r.answer.is_some()) {
        Some(EngineKind::DataFusion)
    } else {
        None
    };
    let peer_answers: std::collections::HashMap<String, Rows> = results
        .iter()
        .filter(|r| Some(r.engine) == reference_engine)
        .filter_map(|r| r.answer.clone().map(|a| (r.query.clone(), a)))
        .collect();
    for r in results.iter_mut() {
        let Some(answer) = &r.answer else {
            r.check = Check::Fail(r.error.clone().unwrap_or_else(|| "no answer".into()));
            continue;
        };
        let expected: std::result::Result<Rows, String> = if opts.sf == 1.0 {
            match opts.suite.query(&r.query) {
                Some(q) => check::parse_csv(q.answer_sf1).map_err(|e| e.to_string()),
                None => Err("unknown query".into()),
            }
        } else if Some(r.engine) == reference_engine {
            r.check = Check::Unchecked(format!("reference engine at SF {}", opts.sf));
            continue;
        } else if let Some(a) = peer_answers.get(&r.query) {
            Ok(a.clone())
        } else {
            r.check = Check::Unchecked(format!("no answer at SF {}; add --engine duckdb to check", opts.sf));
            continue;
        };
        r.check = match expected {
            Ok(e) => match check::compare(answer, &e) {
                Ok(()) => Check::Pass,
                Err(d) => Check::Fail(d),
            },
            Err(e) => Check::Fail(format!("cannot read the expected answer: {e}")),
        };
    }
}

fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    arrow::temporal_conversions::timestamp_s_to_datetime(secs as i64)
        .map_or_else(|| "1970-01-01T00:00:00Z".to_string(), |t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(query: &str, engine: EngineKind, warm: Vec<f64>, gpu: Option<GpuFigures>) -> QueryRun {
        QueryRun { query: query.into(), engine, rows: 1, cold_ms: 9.0, warm_ms: warm, check: Check::Pass, error: None, gpu, answer: None }
    }

    /// Every run is timed; the answer is the last run's rows, rendered once; a failing run
    /// ends the runs with its error and keeps the times before it.
    #[test]
    fn time_query_times_every_run_and_keeps_the_last_answer() {
        let q = Query { name: "q", sql: "SELECT 1", answer_sf1: "" };
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let calls = std::sync::atomic::AtomicI64::new(0);
        let batch = |v: i64| {
            let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new("x", arrow::datatypes::DataType::Int64, false)]));
            arrow::record_batch::RecordBatch::try_new(schema, vec![std::sync::Arc::new(arrow::array::Int64Array::from(vec![v]))]).unwrap()
        };
        let run = rt.block_on(time_query(&q, EngineKind::Tessera, 3, || {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move { Ok((vec![batch(n)], Instant::now())) }
        }));
        assert_eq!((run.warm_ms.len(), run.error.as_deref()), (3, None));
        assert_eq!(run.answer, Some(vec![vec!["3".to_string()]]));
        calls.store(0, std::sync::atomic::Ordering::Relaxed);
        let failing = rt.block_on(time_query(&q, EngineKind::Tessera, 3, || {
            let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move { if n == 2 { Err(tessera_common::TesseraError::Execution("boom".into())) } else { Ok((vec![batch(n)], Instant::now())) } }
        }));
        assert_eq!(failing.warm_ms.len(), 1);
        assert!(failing.error.as_deref().is_some_and(|e| e.contains("boom")), "{:?}", failing.error);
        assert_eq!(failing.answer, Some(vec![vec!["1".to_string()]]));
    }

    #[test]
    fn gpu_figures_leave_out_the_cold_run_and_take_medians() {
        // (kernel ms, host ms, bytes, pipelines) per run; the first run compiled.
        let runs = [(50.0, 400.0, 4_000_000_000, 2), (1.0, 1.5, 4_000_000_000, 2), (3.0, 2.5, 4_000_000_000, 2), (2.0, 9.0, 4_000_000_000, 2)];
        let g = gpu_figures(&runs, Some(4000.0)).unwrap();
        assert_eq!((g.kernel_ms, g.host_ms, g.pipelines), (2.0, 2.5, 2));
        // 4 GB at 4000 GB/s is 1 ms.
        assert!((g.model_ms - 1.0).abs() < 1e-9, "{}", g.model_ms);
        // No GPU pipelines, no figures.
        assert!(gpu_figures(&[(0.0, 0.0, 0, 0)], Some(4000.0)).is_none());
        assert!(gpu_figures(&[], None).is_none());
    }

    #[test]
    fn the_table_shows_kernels_beside_the_model() {
        let g = GpuFigures { pipelines: 2, kernel_ms: 0.75, host_ms: 0.2, bytes: 2_000_000_000, model_ms: 0.5, peak_gbs: 4000.0 };
        let report = BenchReport {
            suite: "ssb".into(),
            sf: 20.0,
            runs: 3,
            threads: 16,
            machine: Machine { cpu: "cpu".into(), cores: 16, gpu: Some("NVIDIA H200".into()), os: "linux".into() },
            versions: Default::default(),
            date: String::new(),
            generate_seconds: 0.0,
            results: vec![
                run("q1.1", EngineKind::Tessera, vec![1.0, 1.2, 1.1], Some(g)),
                run("q1.1", EngineKind::DuckDb, vec![40.0, 44.0, 42.0], None),
            ],
            notes: Vec::new(),
        };
        let text = crate::report::table(&report);
        assert!(text.contains("GPU kernels ms") && text.contains("kernels / model"), "{text}");
        assert!(text.contains("0.750") && text.contains("1.50×"), "{text}");
        assert!(text.contains("38.18×"), "duckdb / tessera ratio: {text}");
        assert!(text.contains("÷ 4000 GB/s"), "{text}");
    }
}
