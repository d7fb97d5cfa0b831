//! COPY over the wire with a real PostgreSQL client (tokio-postgres): `copy_in`
//! (`COPY … FROM STDIN`) and `copy_out` (`COPY … TO STDOUT`) round trip every type,
//! NULLs and exact decimals, in the text and CSV formats; a COPY that fails (a bad
//! value, a CopyFail, a client gone, too much data) leaves the table unchanged.

use std::error::Error;
use std::net::SocketAddr;

use bytes::Bytes;
use chrono::{NaiveDate, NaiveDateTime};
use futures::{SinkExt, StreamExt};
use tessera_server::ServerOptions;
use tokio::task::JoinHandle;
use tokio_postgres::{Client, NoTls};

mod common;
use common::{TestResult, start};

/// A client and the task driving its connection (abort it to drop the socket).
async fn connect(addr: SocketAddr) -> Result<(Client, JoinHandle<()>), tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(&format!("host={} port={} user=tester", addr.ip(), addr.port()), NoTls).await?;
    let task = tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok((client, task))
}

fn code(e: &tokio_postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_else(|| format!("no SQLSTATE: {e:?}"))
}

/// Sends `data` with `COPY … FROM STDIN` (`sql`) in two pieces; the rows loaded.
async fn copy_in(client: &Client, sql: &str, data: &str) -> Result<u64, tokio_postgres::Error> {
    let sink = client.copy_in::<_, Bytes>(sql).await?;
    futures::pin_mut!(sink);
    let (a, b) = data.as_bytes().split_at(data.len() / 2);
    sink.send(Bytes::copy_from_slice(a)).await?;
    sink.send(Bytes::copy_from_slice(b)).await?;
    sink.as_mut().finish().await
}

/// What `COPY … TO STDOUT` (`sql`) sends, as text.
async fn copy_out(client: &Client, sql: &str) -> Result<String, Box<dyn Error>> {
    let stream = client.copy_out(sql).await?;
    futures::pin_mut!(stream);
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk?);
    }
    Ok(String::from_utf8(out)?)
}

async fn count(client: &Client, table: &str) -> Result<i64, tokio_postgres::Error> {
    Ok(client.query_one(&format!("SELECT count(*) FROM {table}"), &[]).await?.get(0))
}

const COLUMNS: &str =
    "id INT NOT NULL, name VARCHAR, price DECIMAL(12,2), d DATE, ts TIMESTAMP, ok BOOLEAN, f DOUBLE, r REAL, big BIGINT, small SMALLINT, b BYTEA";

/// Rows in PostgreSQL's text format, each value as PostgreSQL writes it, so that COPY
/// TO sends back these very bytes: escapes (tab, newline, backslash) in a string, an
/// empty string, `\N` in every nullable column, exact decimals, the extremes of the
/// integers, bytea in hex (its backslash escaped).
const TEXT_ROWS: &str = concat!(
    "1\tA\\tB\\nC\\\\D é\t12345.67\t2024-02-29\t2024-02-29 13:05:00.25\tt\t0.1\t1.5\t9223372036854775807\t-32768\t\\\\x00ff\n",
    "2\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n",
    "3\t\t-0.05\t1969-12-31\t1970-01-01 00:00:00\tf\t-1e+300\t-2.5\t-9223372036854775808\t7\t\\\\x\n",
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_in_and_out_round_trip_every_type() -> TestResult {
    let (addr, _dir) = start(ServerOptions::default()).await?;
    let (client, _task) = connect(addr).await?;
    client.batch_execute(&format!("CREATE TABLE t ({COLUMNS}); CREATE TABLE t2 ({COLUMNS})")).await?;

    // Text format, PostgreSQL's default.
    assert_eq!(copy_in(&client, "COPY t FROM STDIN", TEXT_ROWS).await?, 3);
    let row = client.query_one("SELECT id, name, price::VARCHAR, d, ts, ok, f, r, big, small, b FROM t WHERE id = 1", &[]).await?;
    assert_eq!(row.get::<_, String>(1), "A\tB\nC\\D é");
    assert_eq!(row.get::<_, String>(2), "12345.67");
    assert_eq!(row.get::<_, NaiveDate>(3), NaiveDate::from_ymd_opt(2024, 2, 29).ok_or("date")?);
    assert_eq!(row.get::<_, NaiveDateTime>(4), NaiveDateTime::parse_from_str("2024-02-29 13:05:00.25", "%Y-%m-%d %H:%M:%S%.f")?);
    assert!(row.get::<_, bool>(5));
    assert_eq!(row.get::<_, f64>(6), 0.1);
    assert_eq!(row.get::<_, f32>(7), 1.5);
    assert_eq!(row.get::<_, i64>(8), i64::MAX);
    assert_eq!(row.get::<_, i16>(9), i16::MIN);
    assert_eq!(row.get::<_, Vec<u8>>(10), vec![0u8, 255]);
    let nulls: i64 = client
        .query_one(
            "SELECT count(*) FROM t WHERE id = 2 AND name IS NULL AND price IS NULL AND d IS NULL AND ts IS NULL AND ok IS NULL
             AND f IS NULL AND r IS NULL AND big IS NULL AND small IS NULL AND b IS NULL",
            &[],
        )
        .await?
        .get(0);
    assert_eq!(nulls, 1, "\\N is NULL in every column");
    let row = client.query_one("SELECT name, price::VARCHAR, big, b FROM t WHERE id = 3", &[]).await?;
    assert_eq!(row.get::<_, String>(0), "", "an empty string is not NULL in the text format");
    assert_eq!(row.get::<_, String>(1), "-0.05");
    assert_eq!(row.get::<_, i64>(2), i64::MIN);
    assert_eq!(row.get::<_, Vec<u8>>(3), Vec::<u8>::new());

    // Back out: the same bytes; and in again, the same rows.
    let out = copy_out(&client, "COPY (SELECT * FROM t ORDER BY id) TO STDOUT").await?;
    assert_eq!(out, TEXT_ROWS);
    assert_eq!(copy_in(&client, "COPY t2 FROM STDIN", &out).await?, 3);
    let differ: i64 = client.query_one("SELECT count(*) FROM (SELECT * FROM t EXCEPT SELECT * FROM t2)", &[]).await?.get(0);
    assert_eq!(differ, 0);

    // A table with a column list, and options: a delimiter and a NULL text.
    let out = copy_out(&client, "COPY t (id, name, price) TO STDOUT WITH (DELIMITER '|', NULL 'NA')").await?;
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["1|A\\tB\\nC\\\\D é|12345.67", "2|NA|NA", "3||-0.05"]);

    // CSV with a header, out and in.
    let out = copy_out(&client, "COPY (SELECT id, name, price, d FROM t ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)").await?;
    assert_eq!(out, "id,name,price,d\n1,\"A\tB\nC\\D é\",12345.67,2024-02-29\n2,,,\n3,\"\",-0.05,1969-12-31\n");
    client.batch_execute("CREATE TABLE c (id INT, name VARCHAR, price DECIMAL(12,2), d DATE)").await?;
    assert_eq!(copy_in(&client, "COPY c FROM STDIN WITH (FORMAT csv, HEADER)", &out).await?, 3);
    let rows = client.query("SELECT id, name, price::VARCHAR, d FROM c ORDER BY id", &[]).await?;
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].get::<_, Option<String>>(1).as_deref(), Some("A\tB\nC\\D é"));
    assert_eq!(rows[0].get::<_, Option<String>>(2).as_deref(), Some("12345.67"));
    assert_eq!(rows[1].get::<_, Option<String>>(1), None);
    assert_eq!(rows[1].get::<_, Option<NaiveDate>>(3), None);
    assert_eq!(rows[2].get::<_, Option<String>>(2).as_deref(), Some("-0.05"));
    // A column list, psql's spelling of the options, another delimiter, quotes.
    let n = copy_in(&client, "COPY c (name, id) FROM STDIN DELIMITER ';' CSV HEADER", "name;id\n\"x;\"\"y\"\"\";4\nz;5\n").await?;
    assert_eq!(n, 2);
    let row = client.query_one("SELECT name, price::VARCHAR FROM c WHERE id = 4", &[]).await?;
    assert_eq!(row.get::<_, Option<String>>(0).as_deref(), Some("x;\"y\""));
    assert_eq!(row.get::<_, Option<String>>(1), None, "columns not copied are NULL");
    assert_eq!(count(&client, "c").await?, 5);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_copy_leaves_the_table_unchanged() -> TestResult {
    let (addr, _dir) = start(ServerOptions { max_result_bytes: 64 * 1024, ..ServerOptions::default() }).await?;
    let (client, _task) = connect(addr).await?;
    client.batch_execute("CREATE TABLE t (a INT NOT NULL, b DECIMAL(5,2)); INSERT INTO t VALUES (1, 1.00), (2, 2.00)").await?;

    // A value that does not parse, on the last line: nothing of the COPY is loaded.
    let e = copy_in(&client, "COPY t FROM STDIN", "3\t3.00\n4\t4.00\n5\tfive\n").await.err().ok_or("a bad value was loaded")?;
    assert_eq!(code(&e), "22P02", "{e:?}");
    let message = e.as_db_error().map(|d| d.message().to_string()).unwrap_or_default();
    assert!(message.contains("line 3") && message.contains("'b'") && message.contains("five"), "{message}");
    assert_eq!(count(&client, "t").await?, 2);
    // Too many fields, a NOT NULL column without a value, a value out of range.
    for (data, why) in [("3\t3.00\t9\n", "fields"), ("\\N\t1.00\n", "NULL"), ("3\t1000.00\n", "range")] {
        let e = copy_in(&client, "COPY t FROM STDIN", data).await.err().ok_or(why)?;
        assert!(e.code().is_some(), "{why}: {e:?}");
    }
    assert_eq!(count(&client, "t").await?, 2);

    // The client gives up (CopyFail): the connection goes on, nothing loaded.
    let mut sink = Box::pin(client.copy_in::<_, Bytes>("COPY t FROM STDIN").await?);
    sink.send(Bytes::from_static(b"7\t7.00\n")).await?;
    drop(sink);
    assert_eq!(count(&client, "t").await?, 2);

    // More data than the server holds: 54000, nothing loaded, the connection goes on.
    let row = "8\t8.00\n".repeat(20_000);
    let e = copy_in(&client, "COPY t FROM STDIN", &row).await.err().ok_or("the limit was not enforced")?;
    assert_eq!(code(&e), "54000", "{e:?}");
    assert_eq!(count(&client, "t").await?, 2);

    // A client gone in the middle of a COPY.
    let (other, task) = connect(addr).await?;
    let mut sink = Box::pin(other.copy_in::<_, Bytes>("COPY t FROM STDIN").await?);
    sink.send(Bytes::from_static(b"9\t9.00\n")).await?;
    task.abort();
    let _ = task.await;
    drop(other);
    assert_eq!(count(&client, "t").await?, 2);

    // Refused before any data: the binary format, a table or column that is not there,
    // and COPY FROM STDIN followed by another statement in one query string.
    let e = client.copy_in::<_, Bytes>("COPY t FROM STDIN (FORMAT binary)").await.err().ok_or("binary accepted")?;
    assert_eq!(code(&e), "0A000", "{e:?}");
    let e = client.copy_out("COPY t TO STDOUT WITH (FORMAT binary)").await.err().ok_or("binary accepted")?;
    assert_eq!(code(&e), "0A000", "{e:?}");
    let e = client.copy_in::<_, Bytes>("COPY nosuch FROM STDIN").await.err().ok_or("no table, no error")?;
    assert_eq!(code(&e), "42P01", "{e:?}");
    let e = client.copy_in::<_, Bytes>("COPY t (a, zz) FROM STDIN").await.err().ok_or("no column, no error")?;
    assert!(e.code().is_some(), "{e:?}");
    let e = client.simple_query("COPY t FROM STDIN; SELECT 1").await.err().ok_or("COPY in the middle accepted")?;
    assert_eq!(code(&e), "0A000", "{e:?}");

    // And a good COPY still works, with its count.
    assert_eq!(copy_in(&client, "COPY t FROM STDIN", "3\t3.50\n\\.\n").await?, 1);
    assert_eq!(copy_out(&client, "COPY (SELECT a, b FROM t ORDER BY a) TO STDOUT (FORMAT csv)").await?, "1,1.00\n2,2.00\n3,3.50\n");
    // A result over the limit is refused for COPY TO as for a query.
    let e = copy_out(&client, "COPY (SELECT x FROM generate_series(1, 100000) AS g(x)) TO STDOUT").await.err().ok_or("no limit")?;
    assert!(format!("{e:?}").contains("54000"), "{e:?}");
    Ok(())
}
