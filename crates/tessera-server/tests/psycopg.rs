//! Python's psycopg against `tessera serve` (the script is tests/psycopg_client.py).
//! Without psycopg installed the test says so and passes, unless
//! TESSERA_REQUIRE_CLIENTS=1 (set by .ci/run, which installs it) makes that a failure.

use std::process::Command;

use tessera_engine::Database;
use tessera_server::{Server, ServerOptions};

fn required() -> bool {
    std::env::var("TESSERA_REQUIRE_CLIENTS").is_ok_and(|v| v == "1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psycopg_reads_and_writes_every_type() -> Result<(), Box<dyn std::error::Error>> {
    let present = Command::new("python3").args(["-c", "import psycopg"]).output().is_ok_and(|o| o.status.success());
    if !present {
        assert!(!required(), "psycopg is not installed (pip install 'psycopg[binary]') and TESSERA_REQUIRE_CLIENTS=1");
        eprintln!("skipped: psycopg is not installed (pip install 'psycopg[binary]')");
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let server = Server::bind(Database::open(dir.path())?, ServerOptions { listen: "127.0.0.1:0".parse()?, ..ServerOptions::default() }).await?;
    let port = server.local_addr()?.port();
    tokio::spawn(server.run());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/psycopg_client.py");
    let out = tokio::task::spawn_blocking(move || Command::new("python3").arg(script).arg(port.to_string()).output()).await??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "psycopg script failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
    Ok(())
}
