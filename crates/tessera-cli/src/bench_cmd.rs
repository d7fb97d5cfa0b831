//! `tessera gen` and `tessera bench`: thin command-line wrappers over `tessera-bench`.

use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};
use tessera_bench::bench::{self, BenchOptions, EngineKind};
use tessera_bench::datagen::{self, FileFormat};
use tessera_bench::{Suite, report};
use tessera_engine::Session;

/// Arguments of `tessera gen`.
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    /// `ssb` or `tpch`.
    suite: String,
    /// Scale factor.
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Directory to write `<table>.<format>` files into.
    #[arg(long)]
    out: Option<PathBuf>,
    /// File format: parquet, csv or tbl (dbgen's text).
    #[arg(long, default_value = "parquet")]
    format: String,
    /// Load the tables into the store (replacing tables of the same names).
    #[arg(long)]
    load: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

/// Arguments of `tessera bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// `ssb` or `tpch`; or `joins`: the GPU's no-partition hash join against radix-partitioned
    /// ones, over build sides from inside L2 to far beyond it; or `launches`: the host time
    /// of queueing a query's kernels one launch at a time against one CUDA graph; or
    /// `probes`: a probe of SSB q3.1's shape with its bitmaps in global or shared memory.
    suite: String,
    /// Scale factor.
    #[arg(long, default_value_t = 1.0)]
    sf: f64,
    /// Comma-separated query names (default: all), e.g. q1.1,q2.1.
    #[arg(long, value_delimiter = ',')]
    queries: Vec<String>,
    /// Warm runs per query, after one cold run.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Engines to run: tessera, tessera-cpu (the same process with the GPU left out:
    /// `tessera.device = 'cpu'`), datafusion, duckdb (repeat the flag for several).
    #[arg(long = "engine", default_value = "tessera")]
    engines: Vec<String>,
    /// Threads for every engine (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Write the results as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Draw a bar chart (SVG).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Instead: run the queries through `tessera serve` from this many concurrent
    /// clients (comma-separated counts, e.g. 1,2,4,8,16), reporting queries/s and latency.
    #[arg(long, value_delimiter = ',')]
    clients: Vec<usize>,
    /// Seconds measured per client count (with --clients).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// With `joins`: build sides to measure, in rows (comma-separated; default 2^18 to 2^26).
    #[arg(long, value_delimiter = ',')]
    build_rows: Vec<usize>,
    /// With `joins`: probe rows (default 2^28); with `probes`: rows probed (default SSB SF
    /// 20's lineorder, 119,994,608).
    #[arg(long)]
    probe_rows: Option<usize>,
}

fn threads(n: Option<usize>) -> usize {
    n.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)).max(1)
}

fn suite(name: &str) -> Result<Suite, String> {
    Suite::parse(name).ok_or_else(|| format!("unknown suite '{name}' (ssb, tpch, joins, launches, probes)"))
}

/// A progress bar over `total` rows; hidden when stderr is not a terminal.
fn progress_bar(total: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {human_pos}/{human_len} rows, {per_sec}, eta {eta}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

fn total_rows(suite: Suite, sf: f64) -> u64 {
    suite.tables().iter().map(|t| datagen::estimated_rows(suite, t, sf).max(0) as u64).sum()
}

/// `tessera gen`.
pub fn generate(session: &Session, args: &GenArgs) -> Result<(), String> {
    let suite = suite(&args.suite)?;
    let format = FileFormat::parse(&args.format).ok_or_else(|| format!("unknown format '{}' (parquet, csv, tbl)", args.format))?;
    if args.out.is_none() && !args.load {
        return Err("say where the data goes: --out DIR and/or --load".into());
    }
    let threads = threads(args.threads);
    let start = std::time::Instant::now();
    let mut rows = 0u64;
    if let Some(dir) = &args.out {
        let bar = progress_bar(total_rows(suite, args.sf), &format!("{suite} SF {} → {}", args.sf, dir.display()));
        let reports = datagen::generate_files(suite, args.sf, threads, dir, format, &|n| bar.inc(n)).map_err(|e| e.to_string())?;
        bar.finish_and_clear();
        rows = reports.iter().map(|r| r.rows).sum();
        for r in &reports {
            eprintln!("{:>10} {:>12} rows {:>8.2} s", r.table, r.rows, r.seconds);
        }
    }
    if args.load {
        let bar = progress_bar(total_rows(suite, args.sf), &format!("{suite} SF {} → store", args.sf));
        let reports = datagen::generate_into_store(suite, args.sf, threads, session.store(), &|n| bar.inc(n))
            .map_err(|e| e.to_string())?;
        bar.finish_and_clear();
        rows = reports.iter().map(|r| r.rows).sum();
        for r in &reports {
            eprintln!("{:>10} {:>12} rows {:>8.2} s (loaded)", r.table, r.rows, r.seconds);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!("{suite} SF {}: {rows} rows in {secs:.2} s ({:.2} M rows/s, {threads} threads)", args.sf, rows as f64 / secs / 1e6);
    Ok(())
}

/// `tessera bench`.
pub async fn bench(data_dir: &Path, args: &BenchArgs) -> Result<(), String> {
    if args.suite == "joins" {
        return joins(args);
    }
    if args.suite == "launches" {
        return launches(args);
    }
    if args.suite == "probes" {
        return probes(args);
    }
    let suite = suite(&args.suite)?;
    let engines = args
        .engines
        .iter()
        .flat_map(|e| e.split(','))
        .map(|e| EngineKind::parse(e).ok_or_else(|| format!("unknown engine '{e}' (tessera, tessera-cpu, datafusion, duckdb)")))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = BenchOptions {
        suite,
        sf: args.sf,
        queries: args.queries.clone(),
        runs: args.runs,
        engines,
        threads: threads(args.threads),
        data_dir: data_dir.to_path_buf(),
    };
    let bar = progress_bar(total_rows(suite, args.sf), &format!("generating {suite} SF {}", args.sf));
    if !args.clients.is_empty() {
        if args.clients.contains(&0) {
            return Err("--clients counts must be at least 1".into());
        }
        let report = tessera_bench::clients::run(&opts, &args.clients, args.seconds, &|n| bar.inc(n)).await.map_err(|e| e.to_string())?;
        bar.finish_and_clear();
        println!("{}", tessera_bench::clients::table(&report));
        if let Some(p) = &args.json {
            let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            std::fs::write(p, text).map_err(|e| format!("writing {}: {e}", p.display()))?;
        }
        let errors: u64 = report.points.iter().map(|p| p.errors).sum();
        let wrong: u64 = report.points.iter().map(|p| p.wrong).sum();
        return match (errors, wrong) {
            (0, 0) => Ok(()),
            _ => Err(format!("{errors} queries failed, {wrong} answers differed from the CPU backend's")),
        };
    }
    let report = bench::run(&opts, &|n| bar.inc(n)).await.map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    println!("{}", report::table(&report));
    if let Some(p) = &args.json {
        report::write_json(&report, p).map_err(|e| e.to_string())?;
    }
    if let Some(p) = &args.plot {
        report::write_svg(&report, p).map_err(|e| e.to_string())?;
    }
    if report.all_passed() { Ok(()) } else { Err("some answers did not check out (✗ above)".into()) }
}

/// `tessera bench launches`: `--runs` below the default's 500 timed queries a way count
/// as the default (the suites' default of 5 is far too few for medians of µs).
fn launches(args: &BenchArgs) -> Result<(), String> {
    use tessera_bench::launches;
    let studies = launches::run(&launches::DEFAULT_KERNELS, args.runs.max(launches::DEFAULT_RUNS)).map_err(|e| e.to_string())?;
    println!("{}", launches::table(&studies));
    if let Some(p) = &args.json {
        launches::write_json(&studies, p).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `tessera bench probes`: `--runs` below the default's 10 count as the default.
fn probes(args: &BenchArgs) -> Result<(), String> {
    use tessera_bench::probes;
    let study = probes::run(args.probe_rows.unwrap_or(probes::DEFAULT_ROWS), args.runs.max(probes::DEFAULT_RUNS)).map_err(|e| e.to_string())?;
    println!("{}", probes::table(&study));
    if let Some(p) = &args.json {
        probes::write_json(&study, p).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// `tessera bench joins`.
fn joins(args: &BenchArgs) -> Result<(), String> {
    use tessera_bench::joins;
    let build_rows = if args.build_rows.is_empty() { joins::DEFAULT_BUILD_ROWS.to_vec() } else { args.build_rows.clone() };
    let studies = joins::run(&build_rows, args.probe_rows.unwrap_or(joins::DEFAULT_PROBE_ROWS), args.runs).map_err(|e| e.to_string())?;
    println!("{}", joins::table(&studies));
    if let Some(p) = &args.json {
        joins::write_json(&studies, p).map_err(|e| e.to_string())?;
    }
    Ok(())
}
