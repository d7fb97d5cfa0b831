//! The `tessera` command-line program: an interactive SQL shell, one-shot queries,
//! script files and a demo.
//!
//! ```text
//! tessera                       interactive shell
//! tessera -c "SELECT 1"         run SQL and print the results
//! tessera sql FILE.sql          run a script
//! tessera demo                  create a small table in the data directory and query it
//! tessera gen ssb --sf 1 --load  generate benchmark data (files or the store)
//! tessera bench ssb --sf 1       run a suite, check answers, compare engines
//! tessera serve                  serve the data directory over PostgreSQL's protocol
//!                                (and Arrow Flight SQL with --flight-listen ADDR)
//! ```

mod bench_cmd;
mod demo;
mod output;
mod shell;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tessera_engine::Session;

use crate::output::Format;

/// Tessera: a GPU-first analytical SQL engine.
#[derive(Parser, Debug)]
#[command(name = "tessera", version, about)]
struct Cli {
    /// Data directory of the embedded store (created on first use).
    #[arg(long, global = true, default_value = "./tessera-data", env = "TESSERA_DATA_DIR")]
    data_dir: PathBuf,
    /// Output format of query results (before any subcommand: `tessera --format csv sql F`).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Run this SQL (one or more statements separated by ';') and exit.
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    command: Option<String>,
    #[command(subcommand)]
    subcommand: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the SQL statements of a file.
    Sql {
        /// The script to run.
        file: PathBuf,
    },
    /// Create a small demo table in the data directory and run a few queries over it.
    Demo,
    /// Generate SSB or TPC-H data, to files or into the store.
    Gen(bench_cmd::GenArgs),
    /// Run a query suite, check every answer, and time Tessera beside its peers.
    Bench(bench_cmd::BenchArgs),
    /// Serve the data directory to PostgreSQL clients (psql, drivers, BI tools), and to
    /// Arrow Flight SQL clients (ADBC, JDBC) with --flight-listen.
    Serve(ServeArgs),
    /// Run random queries on the GPU, the CPU backend and plain DataFusion, and compare
    /// the answers (stores for it are made in a temporary folder under the data directory).
    Difftest {
        /// Seed of the random tables and queries.
        #[arg(long, default_value_t = tessera_bench::difftest::DEFAULT_SEED)]
        seed: u64,
        /// Fail unless a GPU is present and runs at least half of the queries (also set by
        /// the environment variable TESSERA_REQUIRE_GPU=1).
        #[arg(long)]
        require_gpu: bool,
    },
}

/// `tessera serve`'s options.
#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// Address and port of the PostgreSQL protocol. Without users only a loopback address
    /// is allowed.
    #[arg(long, default_value = "127.0.0.1:5433")]
    listen: std::net::SocketAddr,
    /// Also serve Arrow Flight SQL (gRPC) on this address, e.g. 127.0.0.1:50051: the same
    /// database, users, result limit and TLS files. Off unless given.
    #[arg(long, value_name = "ADDR")]
    flight_listen: Option<std::net::SocketAddr>,
    /// File of `name:password` lines: clients authenticate with SCRAM-SHA-256.
    #[arg(long, value_name = "FILE")]
    users: Option<PathBuf>,
    /// One user, whose password is read from the environment variable TESSERA_PASSWORD.
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
    /// Connections served at once; more are refused (SQLSTATE 53300). Also the Flight SQL
    /// sessions kept (a new one replaces the one unused longest).
    #[arg(long, default_value_t = tessera_server::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Largest result of one statement, in bytes of Arrow data (SQLSTATE 54000 above it).
    #[arg(long, default_value_t = tessera_server::DEFAULT_MAX_RESULT_BYTES)]
    max_result_bytes: usize,
    /// TLS certificate chain (PEM); with --tls-key, clients may connect with TLS.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

/// `tessera serve`: one database for the data directory, served until interrupted.
async fn serve(session: Session, args: &ServeArgs) -> Result<(), String> {
    let mut users = match &args.users {
        Some(path) => tessera_server::auth::Users::from_file(path).map_err(|e| e.to_string())?,
        None => tessera_server::auth::Users::none(),
    };
    if let Some(name) = &args.user {
        let password = std::env::var("TESSERA_PASSWORD").map_err(|_| format!("--user {name} needs its password in TESSERA_PASSWORD"))?;
        users.add(name, &password).map_err(|e| e.to_string())?;
    }
    let options = tessera_server::ServerOptions {
        listen: args.listen,
        users,
        max_connections: args.max_connections,
        max_result_bytes: args.max_result_bytes,
        tls: match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => Some(tessera_server::TlsFiles { cert: cert.clone(), key: key.clone() }),
            _ => None,
        },
    };
    let users_given = !options.users.is_empty();
    let auth = if users_given { "SCRAM-SHA-256" } else { "no password (loopback only)" };
    let auth = if options.tls.is_some() { format!("{auth}, TLS offered") } else { auth.to_string() };
    let db = std::sync::Arc::clone(session.database());
    drop(session);
    let flight = match args.flight_listen {
        Some(listen) => {
            let options = tessera_server::ServerOptions { listen, ..options.clone() };
            let server = tessera_server::FlightServer::bind(std::sync::Arc::clone(&db), options).await.map_err(|e| e.to_string())?;
            let addr = server.local_addr().map_err(|e| e.to_string())?;
            let (scheme, auth) = match (args.tls_cert.is_some(), users_given) {
                (false, false) => ("grpc", "no password (loopback only)"),
                (false, true) => ("grpc", "basic authentication, then a bearer token"),
                (true, false) => ("grpc+tls", "TLS, no password (loopback only)"),
                (true, true) => ("grpc+tls", "TLS, basic authentication, then a bearer token"),
            };
            eprintln!("tessera serve: Arrow Flight SQL on {addr} ({auth}); connect with: {scheme}://{addr}");
            Some(server)
        }
        None => None,
    };
    let server = tessera_server::Server::bind(db, options).await.map_err(|e| e.to_string())?;
    let addr = server.local_addr().map_err(|e| e.to_string())?;
    eprintln!("tessera serve: listening on {addr} ({auth}); connect with: psql -h {} -p {}", addr.ip(), addr.port());
    let flight = async {
        match flight {
            Some(f) => f.run().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = server.run() => r.map_err(|e| e.to_string()),
        r = flight => r.map_err(|e| e.to_string()),
        _ = tokio::signal::ctrl_c() => {
            eprintln!("tessera serve: interrupted, stopping");
            Ok(())
        }
    }
}

/// mimalloc: faster than the system allocator for many threads allocating morsel-sized
/// buffers, and it reuses freed large blocks instead of unmapping them (see the
/// workspace's Cargo.toml).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("Error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> ExitCode {
    let session = match Session::open(&cli.data_dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("Error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match (&cli.command, &cli.subcommand) {
        (Some(_), Some(_)) => Err("-c cannot be combined with a subcommand".to_string()),
        (Some(sql), None) => run_script(&session, sql, cli.format).await,
        (None, Some(Command::Sql { file })) => match std::fs::read_to_string(file) {
            Ok(sql) => run_script(&session, &sql, cli.format).await,
            Err(e) => Err(format!("cannot read {}: {e}", file.display())),
        },
        (None, Some(Command::Serve(args))) => serve(session, args).await,
        (None, Some(Command::Demo)) => demo::run(&session, cli.format).await,
        (None, Some(Command::Gen(args))) => bench_cmd::generate(&session, args),
        (None, Some(Command::Bench(args))) => bench_cmd::bench(&cli.data_dir, args).await,
        (None, Some(Command::Difftest { seed, require_gpu })) => {
            let require = *require_gpu || std::env::var("TESSERA_REQUIRE_GPU").is_ok_and(|v| v == "1");
            difftest(&cli.data_dir, *seed, require).await
        }
        (None, None) => shell::run(&session, cli.format).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("Error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `tessera difftest`: runs the randomized comparison in a fresh folder under the data
/// directory, removed afterwards.
async fn difftest(data_dir: &std::path::Path, seed: u64, require_gpu: bool) -> Result<(), String> {
    let dir = data_dir.join(format!("difftest-{seed}-{}", std::process::id()));
    let report = tessera_bench::difftest::run_all(&dir, seed, &mut |line| println!("{line}")).await;
    let _ = std::fs::remove_dir_all(&dir);
    let problems = report?.problems(require_gpu);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("{} problem(s):\n\n{}", problems.len(), problems.join("\n\n")))
    }
}

/// Runs every statement of `sql`, printing each result; stops at the first error.
async fn run_script(session: &Session, sql: &str, format: Format) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    for statement in tessera_engine::split_statements(sql) {
        let out = session.execute(&statement).await.map_err(|e| e.to_string())?;
        output::print(&mut stdout, &out, format).map_err(|e| e.to_string())?;
    }
    Ok(())
}
