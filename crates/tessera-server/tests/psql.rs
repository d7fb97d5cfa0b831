//! The real `psql` (PostgreSQL's command-line client) against `tessera serve`: a
//! script creates, loads and queries a table, then psql's describe commands (`\dt`,
//! `\d`, `\d TABLE`, `\d+ TABLE`, `\dv`, `\dn`, `\l`) read the PostgreSQL catalogs
//! Tessera provides (`tessera_engine::pg_catalog`), an error shows its SQLSTATE, and
//! `\copy` loads and writes files on the client's side (COPY FROM STDIN / TO STDOUT).
//!
//! psql comes from Debian's postgresql-client (.ci/run installs it). Without it the
//! tests say so and pass, unless TESSERA_REQUIRE_CLIENTS=1 (set by .ci/run) makes that
//! a failure, as for the psycopg test.

use std::error::Error;
use std::path::Path;
use std::process::{Command, Output};

use tessera_engine::Database;
use tessera_server::{Server, ServerOptions};

type TestResult = Result<(), Box<dyn Error>>;

/// Whether psql is there; when it is not, says so, and fails the test if clients are
/// required (TESSERA_REQUIRE_CLIENTS=1).
fn psql_present() -> bool {
    let found = Command::new("psql").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        let required = std::env::var("TESSERA_REQUIRE_CLIENTS").is_ok_and(|v| v == "1");
        assert!(!required, "psql is not installed and TESSERA_REQUIRE_CLIENTS=1 (Debian/Ubuntu: apt-get install postgresql-client)");
        eprintln!("skipped: psql is not installed (Debian/Ubuntu: apt-get install postgresql-client)");
    }
    found
}

/// A server over a fresh data directory on a free loopback port: its port and directory.
async fn start() -> Result<(u16, tempfile::TempDir), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let server = Server::bind(Database::open(dir.path())?, ServerOptions { listen: "127.0.0.1:0".parse()?, ..ServerOptions::default() }).await?;
    let port = server.local_addr()?.port();
    tokio::spawn(server.run());
    Ok((port, dir))
}

/// Runs `script` with psql (no .psqlrc, stopping at the first error), on a blocking thread.
async fn psql(port: u16, script: &Path) -> Result<Output, Box<dyn Error>> {
    let mut command = Command::new("psql");
    command
        .args(["-X", "-h", "127.0.0.1", "-p", &port.to_string(), "-U", "tester", "-d", "tessera", "-v", "ON_ERROR_STOP=1", "-f"])
        .arg(script)
        .env("PGCONNECT_TIMEOUT", "10")
        .env("PGSSLMODE", "disable")
        .env_remove("PGOPTIONS")
        .env_remove("PGSERVICE");
    Ok(tokio::task::spawn_blocking(move || command.output()).await??)
}

/// The lines of psql's output with each table cell trimmed (`a | integer |` for
/// ` a      | integer   | `), so that checks do not depend on column widths.
fn cells(text: &str) -> Vec<String> {
    text.lines().map(|l| l.split('|').map(str::trim).collect::<Vec<_>>().join("|")).collect()
}

/// Asserts that `lines` has each of `expected`, in order (other lines between them).
fn assert_in_order(lines: &[String], expected: &[&str], output: &str) {
    let mut at = 0;
    for want in expected {
        match lines[at..].iter().position(|l| l == want) {
            Some(i) => at += i + 1,
            None => panic!("psql's output lacks the line {want:?} (in this order):\n{output}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_loads_queries_and_describes_tables() -> TestResult {
    if !psql_present() {
        return Ok(());
    }
    let (port, dir) = start().await?;
    let csv = dir.path().join("more_orders.csv");
    std::fs::write(&csv, "id,customer,amount,placed,shipped,weight,qty,small,rush\n3,cy,7.25,2024-02-01,,2.5,1,2,false\n")?;
    let script = dir.path().join("describe.sql");
    std::fs::write(
        &script,
        format!(
            r"CREATE TABLE orders (id INTEGER NOT NULL, customer VARCHAR NOT NULL, amount DECIMAL(12,2), placed DATE, shipped TIMESTAMP, weight DOUBLE, qty BIGINT NOT NULL, small SMALLINT, rush BOOLEAN);
INSERT INTO orders VALUES (1, 'ann', 12.50, '2024-01-02', '2024-01-03 10:00:00', 1.5, 3, 1, true), (2, 'bob', NULL, NULL, NULL, NULL, 4, NULL, false);
COPY orders FROM '{}';
SELECT id, customer, amount, placed FROM orders ORDER BY id;
CREATE VIEW big_orders AS SELECT id, amount FROM orders WHERE amount > 10;
\echo == dt
\dt
\echo == d
\d
\echo == d orders
\d orders
\echo == d+ orders
\d+ orders
\echo == dv
\dv
\echo == dn
\dn
\echo == l
\l
\echo == information_schema
SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name;
SELECT column_name, is_nullable FROM information_schema.columns WHERE table_name = 'orders' ORDER BY ordinal_position;
",
            csv.display()
        ),
    )?;
    let out = psql(port, &script).await?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let output = format!("{stdout}\n--- stderr ---\n{stderr}");
    assert!(out.status.success(), "psql failed:\n{output}");
    let lines = cells(&stdout);
    assert_in_order(
        &lines,
        &[
            // The rows, from INSERT and COPY.
            "CREATE TABLE",
            "INSERT 0 2",
            "COPY 1",
            "id|customer|amount|placed",
            "1|ann|12.50|2024-01-02",
            "2|bob||",
            "3|cy|7.25|2024-02-01",
            "(3 rows)",
            "== dt",
            "Schema|Name|Type|Owner",
            "public|orders|table|tessera",
            "(1 row)",
            "== d",
            "public|big_orders|view|tessera",
            "public|orders|table|tessera",
            "(2 rows)",
            "== d orders",
            "Table \"public.orders\"",
            "Column|Type|Collation|Nullable|Default",
            "id|integer||not null|",
            "customer|text||not null|",
            "amount|numeric(12,2)|||",
            "placed|date|||",
            "shipped|timestamp without time zone|||",
            "weight|double precision|||",
            "qty|bigint||not null|",
            "small|smallint|||",
            "rush|boolean|||",
            "== d+ orders",
            "Column|Type|Collation|Nullable|Default|Storage|Compression|Stats target|Description",
            "id|integer||not null||plain|||",
            "customer|text||not null||extended|||",
            "Access method: tessera",
            "== dv",
            "public|big_orders|view|tessera",
            "== dn",
            "Name|Owner",
            "public|tessera",
            "(1 row)",
            "== l",
            "tessera|tessera|UTF8|C|C||libc|",
            "== information_schema",
            "big_orders",
            "orders",
            "id|NO",
            "customer|NO",
            "amount|YES",
            "qty|NO",
        ],
        &output,
    );
    // Nothing of pg_catalog or information_schema in the lists of relations.
    assert!(!stdout.contains("pg_class") && !stdout.contains("information_schema |"), "{output}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_shows_the_sqlstate_of_an_error() -> TestResult {
    if !psql_present() {
        return Ok(());
    }
    let (port, dir) = start().await?;
    let script = dir.path().join("error.sql");
    std::fs::write(&script, "\\set VERBOSITY verbose\nSELECT * FROM nosuch;\nSELECT 'not reached';\n")?;
    let out = psql(port, &script).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // ON_ERROR_STOP: psql stops at the error and exits with 3.
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(stderr.contains("ERROR:  42P01: ") && stderr.contains("nosuch"), "{stderr}");
    assert!(!stdout.contains("not reached"), "{stdout}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn psql_copies_through_the_client() -> TestResult {
    if !psql_present() {
        return Ok(());
    }
    let (port, dir) = start().await?;
    // Files on the client's side: psql reads and writes them, the server never sees them.
    let local = dir.path().join("local.csv");
    std::fs::write(&local, "id,name,score,joined\n1,ann,91.50,2020-01-15\n2,\"b, c\",,2021-03-30\n3,,-0.05,\n")?;
    let text = dir.path().join("more.txt");
    std::fs::write(&text, "4\tdee\\tx\t7.25\t2024-02-29\n")?;
    let out_csv = dir.path().join("out.csv");
    let out_txt = dir.path().join("out.txt");
    let script = dir.path().join("copy.sql");
    std::fs::write(
        &script,
        format!(
            r"CREATE TABLE people (id INTEGER NOT NULL, name VARCHAR, score DECIMAL(5,2), joined DATE);
\copy people FROM '{}' CSV HEADER
\copy people FROM '{}'
SELECT count(*) AS loaded FROM people;
\copy (SELECT id, name, score, joined FROM people ORDER BY id) TO '{}' CSV
\copy people (id, name) TO '{}'
",
            local.display(),
            text.display(),
            out_csv.display(),
            out_txt.display()
        ),
    )?;
    let out = psql(port, &script).await?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let output = format!("{stdout}\n--- stderr ---\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "psql failed:\n{output}");
    assert_in_order(&cells(&stdout), &["CREATE TABLE", "COPY 3", "COPY 1", "loaded", "4", "COPY 4", "COPY 4"], &output);
    assert_eq!(
        std::fs::read_to_string(&out_csv)?,
        "1,ann,91.50,2020-01-15\n2,\"b, c\",,2021-03-30\n3,,-0.05,\n4,dee\tx,7.25,2024-02-29\n"
    );
    let mut lines: Vec<String> = std::fs::read_to_string(&out_txt)?.lines().map(str::to_string).collect();
    lines.sort();
    assert_eq!(lines, ["1\tann", "2\tb, c", "3\t\\N", "4\tdee\\tx"]);

    // A bad value: psql reports the error with its SQLSTATE, the table is unchanged.
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "5,eve,1.00,2024-01-01\n6,fay,lots,2024-01-02\n")?;
    let script = dir.path().join("bad.sql");
    std::fs::write(&script, format!("\\set VERBOSITY verbose\n\\copy people FROM '{}' (FORMAT csv)\n", bad.display()))?;
    let out = psql(port, &script).await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("22P02") && stderr.contains("lots"), "{stderr}");
    let script = dir.path().join("count.sql");
    std::fs::write(&script, "SELECT count(*) AS still FROM people;\n")?;
    let out = psql(port, &script).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_in_order(&cells(&stdout), &["still", "4"], &stdout);
    Ok(())
}
