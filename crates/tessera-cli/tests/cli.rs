//! End-to-end tests of the `tessera` binary: non-interactive modes, output formats,
//! exit codes, persistence across processes, and a process killed in the middle of a
//! COPY.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn tessera(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tessera"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .output()
        .expect("run tessera")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn command_prints_a_table_and_data_persists_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, "id,name\n1,one\n2,two\n3,three\n").unwrap();
    let data = dir.path().join("db");

    let o = tessera(&data, &["-c", "CREATE TABLE t (id INTEGER, name VARCHAR)"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let copy = format!("COPY t FROM '{}'", csv.display());
    let o = tessera(&data, &["-c", &copy]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains('3'), "{}", stdout(&o));

    // A new process sees the data.
    let o = tessera(&data, &["-c", "SELECT id, name FROM t WHERE id >= 2 ORDER BY id"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("two") && out.contains("three") && !out.contains("one"), "{out}");
    assert!(out.lines().next().is_some_and(|l| l.contains('┌') || l.contains('+')), "a table border: {out}");
}

#[test]
fn explain_prints_the_plan() {
    let dir = tempfile::tempdir().unwrap();
    let o = tessera(dir.path(), &["-c", "CREATE TABLE x (a INTEGER); EXPLAIN SELECT a FROM x WHERE a > 1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("logical_plan") && out.contains("TableScan: x") && out.contains("FilterExec"), "{out}");
}

#[test]
fn output_formats_csv_json_and_arrow() {
    let dir = tempfile::tempdir().unwrap();
    let q = "SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, NULL ORDER BY a";
    let o = tessera(dir.path(), &["--format", "csv", "-c", q]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a,b\n1,x\n2,\n");

    let o = tessera(dir.path(), &["--format", "json", "-c", q]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), r#"[{"a":1,"b":"x"},{"a":2}]"#);

    let o = tessera(dir.path(), &["--format", "arrow", "-c", q]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(o.stdout), None).unwrap();
    let batches: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 2);
    assert_eq!(batches[0].schema().field(0).name(), "a");
}

#[test]
fn sql_file_runs_every_statement() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.sql");
    std::fs::write(
        &script,
        "-- a script\nCREATE TABLE s (v INTEGER);\nINSERT INTO s VALUES (4), (5);\nSELECT sum(v) AS total FROM s;\n",
    )
    .unwrap();
    let o = tessera(&dir.path().join("db"), &["--format", "csv", "sql", script.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "count\n2\ntotal\n9\n");
}

#[test]
fn errors_exit_with_code_1_and_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let o = tessera(dir.path(), &["-c", "SELECT * FROM missing_table"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing_table"), "{}", stderr(&o));

    let o = tessera(dir.path(), &["-c", "SELECT 1/0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).to_lowercase().contains("divi"), "{}", stderr(&o));

    let o = tessera(dir.path(), &["sql", "/nonexistent/script.sql"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot read /nonexistent/script.sql"), "{}", stderr(&o));

    // Statements before the failing one stay committed; the failing one changes nothing.
    let o = tessera(dir.path(), &["-c", "CREATE TABLE k (a INTEGER); INSERT INTO k VALUES (1); INSERT INTO k VALUES (1/0)"]);
    assert_eq!(o.status.code(), Some(1));
    let o = tessera(dir.path(), &["--format", "csv", "-c", "SELECT count(*) AS n FROM k"]);
    assert_eq!(stdout(&o), "n\n1\n");
}

#[test]
fn shell_reads_statements_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .arg("--data-dir")
        .arg(dir.path())
        .env("HOME", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let script = "CREATE TABLE sh (a INTEGER);\nINSERT INTO sh\n  VALUES (7), (8);\n.mode csv\n.timer off\nSELECT\n sum(a) AS s FROM sh;\n.tables\n.schema sh\n.nonsense\n.quit\n";
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let out = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.contains("s\n15\n"), "{out}");
    assert!(out.contains("\nsh\n"), ".tables lists the table: {out}");
    assert!(out.contains("CREATE TABLE sh (\n  a INTEGER\n);"), ".schema: {out}");
    assert!(stderr(&o).contains("unknown or incomplete command '.nonsense'"), "{}", stderr(&o));
}

#[test]
fn gen_writes_dbgen_text_and_loads_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ssb");
    let o = tessera(&dir.path().join("db"), &["gen", "ssb", "--sf", "0.01", "--out", out.to_str().unwrap(), "--format", "tbl", "--load"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let part = std::fs::read_to_string(out.join("part.tbl")).unwrap();
    let reference = include_str!("../../tessera-bench/tests/data/ssb-sf1-reference/part.head.tbl");
    assert_eq!(part.lines().next(), reference.lines().next());
    assert_eq!(part.lines().count(), 2000);
    let o = tessera(&dir.path().join("db"), &["--format", "csv", "-c", "SELECT count(*) AS n FROM part"]);
    assert_eq!(stdout(&o), "n\n2000\n", "{}", stderr(&o));
    let o = tessera(&dir.path().join("db"), &["gen", "ssb", "--sf", "0.01"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--out DIR and/or --load"), "{}", stderr(&o));
}

#[test]
fn demo_runs() {
    let dir = tempfile::tempdir().unwrap();
    let o = tessera(dir.path(), &["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("EUROPE") && out.contains("revenue"), "{out}");
    // The demo can run again on the same data directory.
    let o = tessera(dir.path(), &["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Lists the data files in the store and the ones its manifest references.
#[test]
fn serve_refuses_flight_sql_on_a_public_address_without_users() -> std::io::Result<()> {
    let dir = tempfile::tempdir()?;
    let o = tessera(&dir.path().join("db"), &["serve", "--listen", "127.0.0.1:0", "--flight-listen", "0.0.0.0:0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("needs users with passwords"), "{}", stderr(&o));
    Ok(())
}

fn data_files(data: &Path) -> (Vec<String>, Vec<String>) {
    let mut on_disk: Vec<String> = std::fs::read_dir(data.join("data"))
        .map(|d| d.flatten().map(|e| format!("data/{}", e.file_name().to_string_lossy())).collect())
        .unwrap_or_default();
    on_disk.sort();
    let manifest = std::fs::read_to_string(data.join("manifest.json")).unwrap_or_default();
    let mut referenced: Vec<String> = manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("\"path\": \""))
        .map(|p| p.trim_end_matches(['"', ',']).to_string())
        .collect();
    referenced.sort();
    (on_disk, referenced)
}

#[test]
fn killed_mid_copy_leaves_old_or_new_state() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("big.csv");
    let rows = 1_500_000u64;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
        writeln!(f, "id,name,amount,day").unwrap();
        for i in 0..rows {
            writeln!(f, "{i},name{},{}.{:02},2020-01-{:02}", i % 1000, i % 9973, i % 100, 1 + i % 28).unwrap();
        }
    }
    let data = dir.path().join("db");
    let o = tessera(
        &data,
        &["-c", "CREATE TABLE big (id BIGINT, name VARCHAR, amount DECIMAL(12,2), day DATE); INSERT INTO big VALUES (-1, 'seed', 0, DATE '2020-01-01')"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let copy = format!("COPY big FROM '{}'", csv.display());

    let mut saw_old = false;
    for delay_ms in [30u64, 150, 400, 900, 1600, 2500] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tessera"))
            .arg("--data-dir")
            .arg(&data)
            .args(["-c", &copy])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let finished = child.try_wait().unwrap().is_some();
        child.kill().ok(); // SIGKILL: no cleanup runs in the child
        child.wait().unwrap();

        let o = tessera(&data, &["--format", "csv", "-c", "SELECT count(*) AS n FROM big"]);
        assert!(o.status.success(), "store readable after kill at {delay_ms} ms: {}", stderr(&o));
        let n: u64 = stdout(&o).lines().nth(1).unwrap().parse().unwrap();
        // Either the COPY is not visible at all, or all of it is (each completed COPY adds `rows`).
        assert_eq!((n - 1) % rows, 0, "partial COPY visible after kill at {delay_ms} ms: {n} rows");
        if n == 1 {
            saw_old = true;
        }
        if finished {
            assert!(n > 1, "a COPY that finished before the kill is visible");
        }
        // Opening the store removed whatever the killed process left behind.
        let (on_disk, referenced) = data_files(&data);
        assert_eq!(on_disk, referenced, "orphan files after kill at {delay_ms} ms");
        assert!(!data.join("manifest.json.tmp").exists());
    }
    assert!(saw_old, "at least one kill interrupted the COPY before it committed");

    // An uninterrupted COPY commits all rows.
    let before: u64 = stdout(&tessera(&data, &["--format", "csv", "-c", "SELECT count(*) AS n FROM big"]))
        .lines()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let o = tessera(&data, &["-c", &copy]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = tessera(&data, &["--format", "csv", "-c", "SELECT count(*) AS n, sum(id) AS s FROM big WHERE id >= 0"]);
    let line = stdout(&o).lines().nth(1).unwrap().to_string();
    let n: u64 = line.split(',').next().unwrap().parse().unwrap();
    assert_eq!(n, before - 1 + rows);
}
