//! Several sessions of one database: they see each other's committed writes, keep their
//! own settings, and write at the same time without losing a row.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use arrow::array::AsArray;
use arrow::datatypes::Int64Type;
use tessera_engine::{Database, Session};

/// The single BIGINT value of a one-row result.
async fn scalar(session: &Session, sql: &str) -> i64 {
    let out = session.execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(out.num_rows(), 1, "{sql}");
    out.batches.iter().find(|b| b.num_rows() == 1).unwrap().column(0).as_primitive::<Int64Type>().value(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sessions_share_the_database_and_keep_their_own_settings() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let a = db.connect().unwrap();
    let b = db.connect().unwrap();
    a.execute("CREATE TABLE t (k BIGINT NOT NULL, s VARCHAR NOT NULL)").await.unwrap();
    a.execute("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x')").await.unwrap();
    assert_eq!(scalar(&b, "SELECT CAST(SUM(k) AS BIGINT) FROM t").await, 6);
    // b's plan of that query is cached; a's next write must still show in it.
    a.execute("INSERT INTO t VALUES (10, 'z')").await.unwrap();
    assert_eq!(scalar(&b, "SELECT CAST(SUM(k) AS BIGINT) FROM t").await, 16);
    // A setting is the session's: a bad device in a leaves b working.
    a.execute("SET tessera.device = 'nowhere'").await.unwrap();
    let err = a.execute("SELECT COUNT(*) FROM t").await.unwrap_err().to_string();
    assert!(err.contains("tessera.device"), "{err}");
    assert_eq!(scalar(&b, "SELECT COUNT(*) FROM t").await, 4);
    // Both are sessions of the same database.
    assert!(Arc::ptr_eq(a.database(), b.database()));
}

/// Eight sessions insert at once (one row a statement; half of them by INSERT … SELECT
/// over a stored table, a write that awaits a query while it holds the write lock) on
/// two worker threads, while another session reads: every committed row is there at the
/// end, and the counts read on the way only grow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let setup = db.connect().unwrap();
    setup.execute("CREATE TABLE log (writer BIGINT NOT NULL, n BIGINT NOT NULL)").await.unwrap();
    setup.execute("CREATE TABLE one AS SELECT CAST(1 AS BIGINT) AS x").await.unwrap();
    const WRITERS: i64 = 8;
    const ROWS: i64 = 15;
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let db = Arc::clone(&db);
        tasks.push(tokio::spawn(async move {
            let s = db.connect().unwrap();
            for n in 0..ROWS {
                let sql = if w % 2 == 0 { format!("INSERT INTO log VALUES ({w}, {n})") } else { format!("INSERT INTO log SELECT x * {w} AS writer, x * {n} AS n FROM one") };
                s.execute(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
        }));
    }
    let reader = {
        let db = Arc::clone(&db);
        tokio::spawn(async move {
            let s = db.connect().unwrap();
            let mut last = 0;
            for _ in 0..20 {
                let n = scalar(&s, "SELECT COUNT(*) FROM log").await;
                assert!(n >= last && n <= WRITERS * ROWS, "{n} after {last}");
                last = n;
            }
        })
    };
    for t in tasks {
        t.await.unwrap();
    }
    reader.await.unwrap();
    assert_eq!(scalar(&setup, "SELECT COUNT(*) FROM log").await, WRITERS * ROWS);
    assert_eq!(scalar(&setup, "SELECT COUNT(DISTINCT writer * 1000 + n) FROM log").await, WRITERS * ROWS);
}
