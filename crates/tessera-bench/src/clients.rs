//! Concurrent clients through `tessera serve` (`tessera bench SUITE --clients 1,2,4`):
//! a server over the suite's store on a loopback port, and for each client count that
//! many PostgreSQL connections (tokio-postgres) running the suite's queries round-robin,
//! each client starting at another query, for a fixed time. Reports queries per second
//! and latency percentiles per client count: where one query leaves the machine (the
//! GPU) underused, throughput rises with clients.
//!
//! Every query is run once through a session first, so the figures are warm (columns
//! resident, kernels compiled), as the single-stream benchmark's warm runs are. Each
//! answer a client gets is compared with the query's answer from the CPU backend (one
//! connection under `tessera.device = 'cpu'`, before the clients start): concurrent GPU
//! queries, each on its own CUDA stream, must not disturb each other's results. The
//! process's resident memory (server and clients) is sampled after each point.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tessera_common::{Result, TesseraError};
use tessera_server::{Server, ServerOptions};

use crate::bench::{BenchOptions, prepare, selected};

/// Figures for one client count.
#[derive(Debug, Clone, Serialize)]
pub struct ClientsPoint {
    /// Concurrent clients.
    pub clients: usize,
    /// Queries completed.
    pub queries: u64,
    /// Wall time of the measurement, seconds.
    pub seconds: f64,
    /// Queries per second over all clients.
    pub qps: f64,
    /// Median latency of one query, ms.
    pub median_ms: f64,
    /// 95th percentile latency, ms.
    pub p95_ms: f64,
    /// Queries that failed (should be 0).
    pub errors: u64,
    /// Answers that differed from the CPU backend's (should be 0).
    pub wrong: u64,
    /// The process's resident memory after the point, MiB (`VmRSS`).
    pub rss_mib: f64,
    /// The most resident memory the process has had so far, MiB (`VmHWM`).
    pub peak_rss_mib: f64,
}

/// The whole concurrency benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct ClientsReport {
    /// Suite and scale factor.
    pub suite: String,
    /// Scale factor.
    pub sf: f64,
    /// Queries each client cycles through.
    pub queries: Vec<String>,
    /// Seconds measured per client count.
    pub seconds_per_point: f64,
    /// Whether a GPU ran the pipelines.
    pub gpu: Option<String>,
    /// One entry per client count.
    pub points: Vec<ClientsPoint>,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs the suite's queries from each number of concurrent clients in `clients`.
pub async fn run(opts: &BenchOptions, clients: &[usize], seconds: f64, progress: &(dyn Fn(u64) + Sync)) -> Result<ClientsReport> {
    let queries = selected(opts)?;
    let (session, _) = prepare(opts, progress)?;
    for q in &queries {
        session.execute(q.sql.trim().trim_end_matches(';')).await.map_err(|e| e.context(format!("warming {}", q.name)))?;
    }
    let gpu = session.executor().gpu().map(|g| g.device().name().to_string());
    let db = Arc::clone(session.database());
    let most = clients.iter().copied().max().unwrap_or(1);
    let options = ServerOptions { listen: "127.0.0.1:0".parse().map_err(|e| TesseraError::Internal(format!("{e}")))?, max_connections: most + 1, ..ServerOptions::default() };
    let server = Server::bind(db, options).await?;
    let addr = server.local_addr()?;
    let serving = tokio::spawn(server.run());
    let sqls: Arc<Vec<String>> = Arc::new(queries.iter().map(|q| q.sql.trim().trim_end_matches(';').to_string()).collect());
    let expected = Arc::new(cpu_answers(addr, &sqls).await?);
    let mut points = Vec::new();
    for &n in clients {
        let mut connections = Vec::with_capacity(n);
        for _ in 0..n {
            let (client, connection) = tokio_postgres::connect(&conninfo(addr), tokio_postgres::NoTls)
                .await
                .map_err(|e| TesseraError::Execution(format!("connecting to the server: {e}")))?;
            tokio::spawn(connection);
            connections.push(client);
        }
        let started = Instant::now();
        let deadline = started + Duration::from_secs_f64(seconds);
        let mut tasks = Vec::with_capacity(n);
        for (c, client) in connections.into_iter().enumerate() {
            let (sqls, expected) = (Arc::clone(&sqls), Arc::clone(&expected));
            tasks.push(tokio::spawn(async move {
                let (mut latencies, mut errors, mut wrong, mut i) = (Vec::new(), 0u64, 0u64, c);
                while Instant::now() < deadline {
                    let q = i % sqls.len();
                    let t = Instant::now();
                    match client.simple_query(&sqls[q]).await {
                        Ok(messages) => {
                            latencies.push(t.elapsed().as_secs_f64() * 1e3);
                            if rows_of(&messages) != expected[q] {
                                wrong += 1;
                                eprintln!("WRONG ANSWER from a client for query #{q}: {}", sqls[q]);
                            }
                        }
                        Err(_) => errors += 1,
                    }
                    i += 1;
                }
                (latencies, errors, wrong)
            }));
        }
        let (mut latencies, mut errors, mut wrong) = (Vec::new(), 0, 0);
        for t in tasks {
            let (l, e, w) = t.await.map_err(|e| TesseraError::Internal(format!("client task: {e}")))?;
            latencies.extend(l);
            errors += e;
            wrong += w;
        }
        let elapsed = started.elapsed().as_secs_f64();
        latencies.sort_by(f64::total_cmp);
        let point = ClientsPoint {
            clients: n,
            queries: latencies.len() as u64,
            seconds: elapsed,
            qps: latencies.len() as f64 / elapsed,
            median_ms: percentile(&latencies, 0.5),
            p95_ms: percentile(&latencies, 0.95),
            errors,
            wrong,
            rss_mib: memory_mib("VmRSS:"),
            peak_rss_mib: memory_mib("VmHWM:"),
        };
        eprintln!(
            "{n:>3} clients: {:>6} queries in {:.1} s, {:>8.1} queries/s, median {:.2} ms, p95 {:.2} ms, {} errors, {} wrong answers, RSS {:.0} MiB (peak {:.0})",
            point.queries, point.seconds, point.qps, point.median_ms, point.p95_ms, point.errors, point.wrong, point.rss_mib, point.peak_rss_mib
        );
        points.push(point);
    }
    serving.abort();
    Ok(ClientsReport {
        suite: opts.suite.to_string(),
        sf: opts.sf,
        queries: queries.iter().map(|q| q.name.to_string()).collect(),
        seconds_per_point: seconds,
        gpu,
        points,
    })
}

/// How a benchmark client reaches the server at `addr`.
fn conninfo(addr: std::net::SocketAddr) -> String {
    format!("host={} port={} user=bench", addr.ip(), addr.port())
}

/// A query's rows as text, sorted (rows that tie under a query's ORDER BY may come in
/// either order).
fn rows_of(messages: &[tokio_postgres::SimpleQueryMessage]) -> Vec<Vec<Option<String>>> {
    let mut rows: Vec<Vec<Option<String>>> = messages
        .iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => Some((0..row.len()).map(|i| row.get(i).map(str::to_string)).collect()),
            _ => None,
        })
        .collect();
    rows.sort();
    rows
}

/// Each query's answer from the CPU backend, through one connection of the server at
/// `addr`: what every client's answer is checked against.
async fn cpu_answers(addr: std::net::SocketAddr, sqls: &[String]) -> Result<Vec<Vec<Vec<Option<String>>>>> {
    let fail = |e: tokio_postgres::Error| TesseraError::Execution(format!("the CPU backend's answers: {e}"));
    let (client, connection) = tokio_postgres::connect(&conninfo(addr), tokio_postgres::NoTls).await.map_err(fail)?;
    let driving = tokio::spawn(connection);
    client.simple_query("SET tessera.device = 'cpu'").await.map_err(fail)?;
    let mut answers = Vec::with_capacity(sqls.len());
    for sql in sqls {
        answers.push(rows_of(&client.simple_query(sql).await.map_err(fail)?));
    }
    drop(client);
    let _ = driving.await;
    Ok(answers)
}

/// A figure of this process's memory from `/proc/self/status` (`field` like "VmRSS:"),
/// MiB; 0 where the file is not there.
fn memory_mib(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The report as a table.
pub fn table(report: &ClientsReport) -> String {
    let mut t = comfy_table::Table::new();
    t.set_header(vec!["clients", "queries/s", "median ms", "p95 ms", "queries", "errors", "wrong", "RSS MiB", "peak RSS MiB"]);
    for p in &report.points {
        t.add_row(vec![
            p.clients.to_string(),
            format!("{:.1}", p.qps),
            format!("{:.2}", p.median_ms),
            format!("{:.2}", p.p95_ms),
            p.queries.to_string(),
            p.errors.to_string(),
            p.wrong.to_string(),
            format!("{:.0}", p.rss_mib),
            format!("{:.0}", p.peak_rss_mib),
        ]);
    }
    format!(
        "{} SF {} through tessera serve, {} queries round-robin, {:.0} s per point, {}\n{t}",
        report.suite,
        report.sf,
        report.queries.len(),
        report.seconds_per_point,
        report.gpu.as_deref().map_or("no GPU".to_string(), |g| format!("GPU {g}"))
    )
}
