//! Python's ADBC Flight SQL driver against `tessera serve --flight-listen` (the script is
//! tests/adbc_client.py). Without adbc-driver-flightsql and pyarrow installed the test
//! says so and passes, unless TESSERA_REQUIRE_CLIENTS=1 (set by .ci/run, which installs
//! them) makes that a failure.

use std::process::Command;

use tessera_engine::Database;
use tessera_server::auth::Users;
use tessera_server::{FlightServer, ServerOptions};

fn required() -> bool {
    std::env::var("TESSERA_REQUIRE_CLIENTS").is_ok_and(|v| v == "1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adbc_reads_and_writes_arrow() -> Result<(), Box<dyn std::error::Error>> {
    let present = Command::new("python3").args(["-c", "import adbc_driver_flightsql.dbapi, pyarrow"]).output().is_ok_and(|o| o.status.success());
    if !present {
        assert!(!required(), "adbc-driver-flightsql is not installed (pip install adbc-driver-flightsql pyarrow) and TESSERA_REQUIRE_CLIENTS=1");
        eprintln!("skipped: adbc-driver-flightsql is not installed (pip install adbc-driver-flightsql pyarrow)");
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let options = ServerOptions { listen: "127.0.0.1:0".parse()?, users: Users::parse("alice:s3cret!\n")?, ..ServerOptions::default() };
    let server = FlightServer::bind(Database::open(dir.path())?, options).await?;
    let port = server.local_addr()?.port();
    tokio::spawn(server.run());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/adbc_client.py");
    let out = tokio::task::spawn_blocking(move || Command::new("python3").arg(script).arg(port.to_string()).output()).await??;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ADBC script failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("ok"), "{stdout}");
    Ok(())
}
