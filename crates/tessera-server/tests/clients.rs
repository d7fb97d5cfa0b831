//! `tessera serve` driven by a real PostgreSQL client (tokio-postgres) over loopback:
//! both query protocols, every type read back exactly, parameters, errors with their
//! SQLSTATE, authentication, cancel, `statement_timeout`, the connection limit, and many
//! clients reading and writing at once.

use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use chrono::{NaiveDate, NaiveDateTime};
use tessera_engine::Database;
use tessera_server::auth::Users;
use tessera_server::{Server, ServerOptions};
use tokio_postgres::types::{FromSql, IsNull, ToSql, Type, to_sql_checked};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

mod common;
use common::{TestResult, connect_as, start};

async fn connect(addr: SocketAddr, auth: &str) -> Result<Client, tokio_postgres::Error> {
    connect_as(addr, "tester", auth).await
}

/// Connects, retrying for a few seconds while the server is full (53300): slots of
/// connections that just ended come back when their tasks finish.
async fn connect_when_free(addr: SocketAddr, auth: &str) -> Result<Client, tokio_postgres::Error> {
    connect_as_when_free(addr, "tester", auth).await
}

async fn connect_as_when_free(addr: SocketAddr, user: &str, auth: &str) -> Result<Client, tokio_postgres::Error> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match connect_as(addr, user, auth).await {
            Err(e) if code(&e) == "53300" && Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(20)).await,
            other => return other,
        }
    }
}

/// A numeric read as its decimal text, decoded from PostgreSQL's binary form here
/// (independently of the server's encoder).
#[derive(Debug, PartialEq)]
struct Numeric(String);

impl<'a> FromSql<'a> for Numeric {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        let word = |i: usize| i16::from_be_bytes([raw[2 * i], raw[2 * i + 1]]);
        let (ndigits, weight, sign, scale) = (word(0) as usize, word(1) as i32, word(2) as u16, word(3) as usize);
        // Digits of the integer part then of the fraction, base 10000 → base 10.
        let mut int = String::new();
        let mut frac = String::new();
        for g in 0..=weight.max(-1) {
            let d = if (g as usize) < ndigits { word(4 + g as usize) } else { 0 };
            int.push_str(&format!("{d:04}"));
        }
        for g in (weight + 1).max(0)..ndigits as i32 {
            frac.push_str(&format!("{:04}", word(4 + g as usize)));
        }
        if weight < -1 {
            frac = format!("{}{frac}", "0000".repeat((-weight - 1) as usize));
        }
        let int = int.trim_start_matches('0');
        let int = if int.is_empty() { "0" } else { int };
        let mut frac: String = frac.chars().chain(std::iter::repeat('0')).take(scale).collect();
        if scale == 0 {
            frac.clear();
        }
        let sign = if sign == 0x4000 { "-" } else { "" };
        Ok(Numeric(if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

/// A numeric parameter from decimal text (binary format), encoded here.
#[derive(Debug)]
struct NumericParam(&'static str);

impl ToSql for NumericParam {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        let (sign, digits) = match self.0.strip_prefix('-') {
            Some(d) => (0x4000u16, d),
            None => (0, self.0),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let int_pad = format!("{}{int}", "0".repeat((4 - int.len() % 4) % 4));
        let frac_pad = format!("{frac}{}", "0".repeat((4 - frac.len() % 4) % 4));
        let groups: Vec<i16> = format!("{int_pad}{frac_pad}").as_bytes().chunks(4).map(|c| std::str::from_utf8(c).unwrap_or("0").parse().unwrap_or(0)).collect();
        out.put_i16(groups.len() as i16);
        out.put_i16((int_pad.len() / 4) as i16 - 1);
        out.put_u16(sign);
        out.put_u16(frac.len() as u16);
        for g in groups {
            out.put_i16(g);
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }

    to_sql_checked!();
}

/// The severity of a server error: a refused login must be FATAL, so the server closes
/// the connection (an ERROR would leave it open, ready for queries, unauthenticated).
fn severity(e: &tokio_postgres::Error) -> Option<&str> {
    e.as_db_error().map(|d| d.severity())
}

fn code(e: &tokio_postgres::Error) -> String {
    e.code().map(|c| c.code().to_string()).unwrap_or_else(|| format!("no SQLSTATE: {e:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_parameters_and_errors() -> TestResult {
    let (addr, _dir) = start(ServerOptions::default()).await?;
    let client = connect(addr, "").await?;
    // Simple protocol: several statements, tags, text values.
    let messages = client
        .simple_query(
            "CREATE TABLE t (id INT NOT NULL, name VARCHAR, price DECIMAL(12,2), d DATE, ts TIMESTAMP, ok BOOLEAN, f DOUBLE, big BIGINT, small SMALLINT);
             INSERT INTO t VALUES (1, 'één', 12345.67, DATE '2024-02-29', TIMESTAMP '2024-02-29 13:05:00.25', true, 0.1, 9223372036854775807, -32768),
                                  (2, NULL, -0.05, DATE '1969-12-31', TIMESTAMP '1970-01-01 00:00:00', false, CAST('-1e300' AS DOUBLE), -9223372036854775808, 7);
             SELECT id, name, price, d, ts, ok, f, big, small FROM t ORDER BY id",
        )
        .await?;
    let tags: Vec<u64> = messages.iter().filter_map(|m| if let SimpleQueryMessage::CommandComplete(n) = m { Some(*n) } else { None }).collect();
    assert_eq!(tags, vec![0, 2, 2], "CREATE, INSERT 0 2, SELECT 2");
    let rows: Vec<_> = messages.iter().filter_map(|m| if let SimpleQueryMessage::Row(r) = m { Some(r) } else { None }).collect();
    let text: Vec<Option<&str>> = (0..9).map(|i| rows[0].get(i)).collect();
    assert_eq!(
        text,
        [Some("1"), Some("één"), Some("12345.67"), Some("2024-02-29"), Some("2024-02-29 13:05:00.25"), Some("t"), Some("0.1"), Some("9223372036854775807"), Some("-32768")]
    );
    assert_eq!(rows[1].get(1), None, "NULL is sent as NULL");
    assert_eq!(rows[1].get(2), Some("-0.05"));
    assert_eq!(rows[1].get(6).map(|s| s.parse::<f64>().ok()), Some(Some(-1e300)), "floats read back to the same value");

    // Extended protocol, binary results: every type exactly.
    let row = client.query_one("SELECT id, name, price, d, ts, ok, f, big, small FROM t WHERE id = $1", &[&1i32]).await?;
    assert_eq!(row.get::<_, i32>(0), 1);
    assert_eq!(row.get::<_, String>(1), "één");
    assert_eq!(row.get::<_, Numeric>(2), Numeric("12345.67".into()));
    assert_eq!(row.get::<_, NaiveDate>(3), NaiveDate::from_ymd_opt(2024, 2, 29).ok_or("date")?);
    let ts = NaiveDateTime::parse_from_str("2024-02-29 13:05:00.25", "%Y-%m-%d %H:%M:%S%.f")?;
    assert_eq!(row.get::<_, NaiveDateTime>(4), ts);
    assert!(row.get::<_, bool>(5));
    assert_eq!(row.get::<_, f64>(6), 0.1);
    assert_eq!(row.get::<_, i64>(7), i64::MAX);
    assert_eq!(row.get::<_, i16>(8), i16::MIN);
    let row = client.query_one("SELECT name, price, d, big FROM t WHERE id = 2", &[]).await?;
    assert_eq!(row.get::<_, Option<String>>(0), None);
    assert_eq!(row.get::<_, Numeric>(1), Numeric("-0.05".into()));
    assert_eq!(row.get::<_, NaiveDate>(2), NaiveDate::from_ymd_opt(1969, 12, 31).ok_or("date")?);
    assert_eq!(row.get::<_, i64>(3), i64::MIN);
    // Aggregates: COUNT is int8, SUM of a decimal is an exact numeric.
    let row = client.query_one("SELECT count(*), sum(price) FROM t", &[]).await?;
    assert_eq!(row.get::<_, i64>(0), 2);
    assert_eq!(row.get::<_, Numeric>(1), Numeric("12345.62".into()));

    // Parameterized writes: typed from the table, read back exactly; NULL parameters.
    let inserted = client
        .execute(
            "INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[&3i32, &"x'y", &NumericParam("-98765.43"), &NaiveDate::from_ymd_opt(2000, 1, 1), &ts, &Some(false), &2.5f64, &None::<i64>, &3i16],
        )
        .await?;
    assert_eq!(inserted, 1);
    let row = client.query_one("SELECT name, price, big FROM t WHERE id = $1 AND price < $2", &[&3i32, &NumericParam("0")]).await?;
    assert_eq!(row.get::<_, String>(0), "x'y");
    assert_eq!(row.get::<_, Numeric>(1), Numeric("-98765.43".into()));
    assert_eq!(row.get::<_, Option<i64>>(2), None);
    // A prepared statement runs again with other values.
    let by_id = client.prepare("SELECT name FROM t WHERE id = $1").await?;
    assert_eq!(by_id.params(), &[Type::INT4]);
    assert_eq!(client.query(&by_id, &[&2i32]).await?.len(), 1);
    assert_eq!(client.query(&by_id, &[&42i32]).await?.len(), 0);

    // Errors carry their SQLSTATE, and the connection goes on.
    let e = client.simple_query("SELECT * FROM nope").await.err().ok_or("no error")?;
    assert_eq!(code(&e), "42P01", "{e:?}");
    let e = client.query("SELECT nocolumn FROM t", &[]).await.err().ok_or("no error")?;
    assert_eq!(code(&e), "42703", "{e:?}");
    let e = client.query("SELECT id / 0 FROM t", &[]).await.err().ok_or("no error")?;
    assert_eq!(code(&e), "22012", "{e:?}");
    let e = client.query("SELEC 1", &[]).await.err().ok_or("no error")?;
    assert_eq!(code(&e), "42601", "{e:?}");
    // 70000 does not fit the SMALLINT column: an error, no row written.
    let e = client.simple_query("INSERT INTO t (id, small) VALUES (9, 70000)").await.err().ok_or("no error")?;
    assert!(e.code().is_some(), "{e:?}");
    assert_eq!(client.query_one("SELECT count(*) FROM t", &[]).await?.get::<_, i64>(0), 3);

    // Transactions blocks: accepted; an error aborts the block until its end.
    client.batch_execute("BEGIN").await?;
    assert!(client.simple_query("SELECT * FROM nope").await.is_err());
    let e = client.simple_query("SELECT 1").await.err().ok_or("no error")?;
    assert_eq!(code(&e), "25P02");
    client.batch_execute("ROLLBACK").await?;
    assert_eq!(client.query_one("SELECT 1::BIGINT", &[]).await?.get::<_, i64>(0), 1);

    // Client settings are kept and shown; SHOW of Tessera's settings still works.
    client.batch_execute("SET application_name = 'tests'; SET extra_float_digits = 3").await?;
    let row = client.query_one("SHOW application_name", &[]).await?;
    assert_eq!(row.get::<_, String>(0), "tests");
    let v = client.simple_query("SHOW server_version").await?;
    assert!(matches!(&v[1], SimpleQueryMessage::Row(r) if r.get(0).is_some_and(|s| s.starts_with("16."))));
    Ok(())
}

/// A query that runs for minutes unless stopped (10^10 rows counted).
const ENDLESS: &str = "SELECT count(*) FROM generate_series(1, 10000000000) AS g(x) WHERE x % 7 = 3";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_statement_timeout() -> TestResult {
    let (addr, _dir) = start(ServerOptions::default()).await?;
    let client = connect(addr, "").await?;
    let token = client.cancel_token();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel_query(NoTls).await
    });
    let started = Instant::now();
    let e = client.simple_query(ENDLESS).await.err().ok_or("the endless query finished")?;
    assert_eq!(code(&e), "57014", "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(20), "cancel took {:?}", started.elapsed());
    canceller.await??;
    // The connection and the server are fine afterwards.
    assert_eq!(client.query_one("SELECT 41 + 1", &[]).await?.get::<_, i64>(0), 42);

    client.batch_execute("SET statement_timeout = '300ms'").await?;
    let started = Instant::now();
    let e = client.query(ENDLESS, &[]).await.err().ok_or("the endless query finished")?;
    assert_eq!(code(&e), "57014", "{e:?}");
    assert!(format!("{e:?}").contains("statement timeout"), "{e:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    client.batch_execute("SET statement_timeout = 0").await?;
    assert_eq!(connect(addr, "").await?.query_one("SELECT 1::BIGINT", &[]).await?.get::<_, i64>(0), 1);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passwords_and_connection_limit() -> TestResult {
    let users = Users::parse("tester:correct horse\nother:battery")?;
    let (addr, _dir) = start(ServerOptions { users, max_connections: 2, ..ServerOptions::default() }).await?;
    let ok = connect(addr, "password='correct horse'").await?;
    assert_eq!(ok.query_one("SELECT 1::BIGINT", &[]).await?.get::<_, i64>(0), 1);
    // Each refused login holds a slot until its task ends: retry while the server is full.
    let e = connect_when_free(addr, "password=wrong").await.err().ok_or("a wrong password was accepted")?;
    assert_eq!(code(&e), "28P01", "{e:?}");
    assert_eq!(severity(&e), Some("FATAL"), "{e:?}");
    let e = connect_when_free(addr, "").await.err().ok_or("no password was accepted")?;
    assert!(format!("{e:?}").contains("password"), "{e:?}");
    let e = connect_as_when_free(addr, "nobody", "password=x").await.err().ok_or("an unknown user was admitted")?;
    assert_eq!(code(&e), "28P01", "{e:?}");
    assert_eq!(severity(&e), Some("FATAL"), "{e:?}");
    // The limit: two connections served, the third refused with 53300.
    let second = connect_when_free(addr, "password='correct horse'").await?;
    let e = connect(addr, "password='correct horse'").await.err().ok_or("a third connection was admitted")?;
    assert_eq!(code(&e), "53300", "{e:?}");
    assert_eq!(severity(&e), Some("FATAL"), "{e:?}");
    drop(second);
    drop(ok);
    // Slots come back when connections end.
    let again = connect_when_free(addr, "password='correct horse'").await?;
    assert_eq!(again.query_one("SELECT 2::BIGINT", &[]).await?.get::<_, i64>(0), 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_only_without_users() -> TestResult {
    let dir = tempfile::tempdir()?;
    let db = Database::open(dir.path())?;
    let e = Server::bind(Arc::clone(&db), ServerOptions { listen: "0.0.0.0:0".parse()?, ..ServerOptions::default() }).await.err().ok_or("bound to all addresses without users")?;
    assert!(e.to_string().contains("loopback"), "{e:?}");
    Ok(())
}
