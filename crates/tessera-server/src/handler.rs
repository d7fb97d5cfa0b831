//! The PostgreSQL protocol's handlers over a Tessera [`Database`]: each client
//! connection gets its own [`Session`] (settings, plan cache) of the shared database.
//!
//! - Simple queries run each statement of the text in order, stopping at the first
//!   error (as PostgreSQL does outside a transaction block).
//! - Extended queries: Parse plans the statement (DataFusion types its `$n`
//!   placeholders and its result), Bind reads the parameters in the client's formats,
//!   Execute binds the values into the logical plan and runs it.
//! - A statement runs on a blocking thread of the runtime (the CPU backend and GPU
//!   launches block their thread), so other connections, cancel requests and
//!   `statement_timeout` are served meanwhile. A canceled or timed-out statement stops
//!   at its next await point; a write stopped that way commits nothing.
//! - `COPY … FROM STDIN` and `COPY … TO STDOUT` run the COPY sub-protocol
//!   ([`crate::copy`]).
//! - `BEGIN`/`COMMIT`/`ROLLBACK` are accepted, but each statement commits on its own
//!   (Tessera has no multi-statement transactions): a `ROLLBACK` after writes in the
//!   block warns that they stay.
//! - PostgreSQL settings that clients set (`application_name`, `extra_float_digits`,
//!   `DateStyle`, …) are kept per connection and shown by `SHOW`; `statement_timeout`
//!   takes effect; `datafusion.*` and `tessera.*` settings go to the session.

// An ErrorInfo (all of PostgreSQL's error fields) is large, but a statement's result is
// built once per statement, never in a loop over rows.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt64Type};
use datafusion::common::ScalarValue;
use futures::{Sink, SinkExt, StreamExt, stream};
use pgwire::api::portal::{Format, Portal};
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::results::{FieldInfo, QueryResponse, Response, Tag};
use pgwire::api::stmt::QueryParser;
use pgwire::api::store::PortalStore;
use pgwire::api::{ClientInfo, ClientPortalStore, Type};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;
use pgwire::messages::response::{NoticeResponse, TransactionStatus};
use tessera_engine::{Database, QueryOutput, Session, split_statements};

use crate::errors::{self, error, from_tessera, user_error};
use crate::pgtypes;

/// The version reported to clients (`server_version`): the PostgreSQL protocol and
/// catalog behaviour Tessera follows, then its own.
pub const SERVER_VERSION: &str = concat!("16.6 (Tessera ", env!("CARGO_PKG_VERSION"), ")");

/// Limits a server puts on each statement.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest result (Arrow bytes in memory) a statement may return; a larger one is
    /// an error (SQLSTATE 54000) instead of a server holding it for a slow client. It
    /// bounds the data one `COPY … FROM STDIN` may send as well (held until CopyDone).
    pub max_result_bytes: usize,
}

/// One client connection: its session and the PostgreSQL settings it made.
pub(crate) struct Connection {
    pub(crate) session: Arc<Session>,
    settings: Mutex<HashMap<String, String>>,
    pub(crate) statement_timeout: Mutex<Option<Duration>>,
    /// Statements that wrote since the last BEGIN (for ROLLBACK's warning).
    pub(crate) writes_in_block: AtomicU64,
    /// The `COPY … FROM STDIN` whose data the client is sending, if any.
    pub(crate) copy_in: Mutex<Option<crate::copy::Incoming>>,
}

/// The handlers of every connection of one server.
pub struct Backend {
    pub(crate) db: Arc<Database>,
    pub(crate) limits: Limits,
    parser: Arc<Parser>,
}

impl Backend {
    /// Handlers over `db`.
    pub fn new(db: Arc<Database>, limits: Limits) -> Backend {
        Backend { parser: Arc::new(Parser { db: Arc::clone(&db) }), db, limits }
    }
}

/// Marks a connection whose startup (and authentication) completed; set by the
/// server's startup handler.
pub struct Authenticated;

/// The connection state of `client`, made at its first statement — only for a client
/// that completed startup (a backstop: a failed startup closes the connection).
pub(crate) fn connection<C: ClientInfo>(db: &Arc<Database>, client: &C) -> PgWireResult<Arc<Connection>> {
    let extensions = client.session_extensions();
    if extensions.get::<Authenticated>().is_none() {
        return Err(errors::fatal("28000", "the connection has not authenticated"));
    }
    if let Some(c) = extensions.get::<Connection>() {
        return Ok(c);
    }
    let session = db.connect().map_err(|e| PgWireError::UserError(Box::new(from_tessera(&e))))?;
    extensions.insert(Connection {
        session: Arc::new(session),
        settings: Mutex::new(HashMap::new()),
        statement_timeout: Mutex::new(None),
        writes_in_block: AtomicU64::new(0),
        copy_in: Mutex::new(None),
    });
    extensions.get::<Connection>().ok_or_else(|| user_error("XX000", "connection state lost"))
}

/// What a statement is, as far as the server handles it itself.
#[derive(Debug, PartialEq)]
enum Command {
    Begin,
    Commit,
    Rollback,
    /// `SET name = value` of a PostgreSQL setting (None: `RESET name` or `SET … TO DEFAULT`).
    Set(String, Option<String>),
    ResetAll,
    /// `SHOW name` of a PostgreSQL setting.
    Show(String),
    /// Anything else: the session runs it.
    Statement,
}

/// Settings `SHOW` answers without a `SET` first, with their values.
fn default_setting(name: &str) -> Option<&'static str> {
    Some(match name {
        "server_version" => SERVER_VERSION,
        "server_version_num" => "160006",
        "server_encoding" | "client_encoding" => "UTF8",
        "datestyle" => "ISO, MDY",
        "timezone" => "UTC",
        "integer_datetimes" | "standard_conforming_strings" => "on",
        "transaction_isolation" | "default_transaction_isolation" => "read committed",
        "transaction_read_only" | "default_transaction_read_only" => "off",
        "statement_timeout" => "0",
        "search_path" => "public",
        "max_identifier_length" => "63",
        "intervalstyle" => "postgres",
        "application_name" => "",
        _ => return None,
    })
}

/// Names that belong to the session (DataFusion's and Tessera's settings).
fn is_session_setting(name: &str) -> bool {
    name.starts_with("datafusion.") || name.starts_with("tessera.")
}

fn unquote(v: &str) -> String {
    let v = v.trim().trim_end_matches(';').trim();
    if v.len() >= 2 && (v.starts_with('\'') && v.ends_with('\'') || v.starts_with('"') && v.ends_with('"')) {
        v[1..v.len() - 1].replace("''", "'")
    } else {
        v.to_string()
    }
}

fn classify(sql: &str, known: &HashMap<String, String>) -> Command {
    let text = without_leading_comments(sql).trim().trim_end_matches(';').trim();
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    match words.as_slice() {
        ["begin", ..] | ["start", "transaction", ..] => Command::Begin,
        ["commit", ..] | ["end", ..] => Command::Commit,
        ["rollback", ..] | ["abort", ..] => Command::Rollback,
        ["reset", "all"] | ["discard", "all"] => Command::ResetAll,
        ["reset", name] if !is_session_setting(name) => Command::Set(name.to_string(), None),
        ["show", name] if !is_session_setting(name) && (default_setting(name).is_some() || known.contains_key(*name)) => {
            Command::Show(name.to_string())
        }
        ["set", rest @ ..] if !rest.is_empty() => {
            // SET [SESSION | LOCAL] name {= | TO} value, SET TIME ZONE value.
            let start = text.len() - lower.trim_start_matches("set").len();
            let mut rest = text[start..].trim_start();
            for scope in ["session ", "local "] {
                if rest.to_ascii_lowercase().starts_with(scope) {
                    rest = rest[scope.len()..].trim_start();
                }
            }
            if rest.to_ascii_lowercase().starts_with("time zone") {
                return Command::Set("timezone".into(), Some(unquote(&rest["time zone".len()..])));
            }
            let end = rest.find(|c: char| c.is_whitespace() || c == '=').unwrap_or(rest.len());
            let name = rest[..end].to_ascii_lowercase();
            if is_session_setting(&name) {
                return Command::Statement;
            }
            let value = rest[end..].trim_start();
            let value = if let Some(v) = value.strip_prefix('=') {
                v
            } else if value.to_ascii_lowercase().starts_with("to ") {
                &value[3..]
            } else {
                value
            };
            let value = unquote(value);
            Command::Set(name, (!value.eq_ignore_ascii_case("default")).then_some(value))
        }
        _ => Command::Statement,
    }
}

/// `statement_timeout`'s value: milliseconds by default, or with a unit (`5s`, `1min`).
fn parse_timeout(value: &str) -> Option<Option<Duration>> {
    let v = value.trim().to_ascii_lowercase();
    let split = v.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(v.len());
    let (number, unit) = v.split_at(split);
    let n: f64 = number.parse().ok()?;
    let ms = match unit.trim() {
        "" | "ms" => n,
        "s" => n * 1e3,
        "min" => n * 60e3,
        "h" => n * 3600e3,
        "d" => n * 86_400e3,
        _ => return None,
    };
    if ms <= 0.0 {
        return Some(None);
    }
    Duration::try_from_secs_f64(ms / 1e3).ok().map(Some)
}

/// The statement without its leading comments (`-- …` lines, `/* … */` blocks).
fn without_leading_comments(sql: &str) -> &str {
    let mut rest = sql.trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |i| &r[i + 1..]).trim_start();
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]).trim_start();
        } else {
            return rest;
        }
    }
}

/// Whether a statement changes the store (for ROLLBACK's warning).
fn writes(sql: &str) -> bool {
    let first = without_leading_comments(sql).split_whitespace().next().unwrap_or_default().to_ascii_uppercase();
    matches!(first.as_str(), "INSERT" | "COPY" | "CREATE" | "DROP" | "DELETE" | "UPDATE")
}

/// A statement's outcome for the protocol, with a notice to send before it.
struct Outcome {
    response: Response,
    notice: Option<ErrorInfo>,
}

impl From<Response> for Outcome {
    fn from(response: Response) -> Outcome {
        Outcome { response, notice: None }
    }
}

impl Backend {
    /// Runs one statement for `client` (parameters bound for an extended query) and
    /// turns its result into a protocol response, rows in `format`.
    async fn run<C: ClientInfo>(
        &self,
        client: &C,
        sql: &str,
        params: Option<Vec<ScalarValue>>,
        format: &Format,
    ) -> Result<Outcome, ErrorInfo> {
        let conn = connection(&self.db, client).map_err(|e| error("08006", e.to_string()))?;
        let known = conn.settings.lock().map(|s| s.clone()).unwrap_or_default();
        let command = classify(sql, &known);
        if client.transaction_status() == TransactionStatus::Error && !matches!(command, Command::Commit | Command::Rollback) {
            return Err(error(errors::IN_FAILED_TRANSACTION, "current transaction is aborted, commands ignored until end of transaction block"));
        }
        match command {
            Command::Begin => {
                conn.writes_in_block.store(0, Ordering::Relaxed);
                Ok(Response::TransactionStart(Tag::new("BEGIN")).into())
            }
            Command::Commit => {
                let tag = if client.transaction_status() == TransactionStatus::Error { "ROLLBACK" } else { "COMMIT" };
                Ok(Response::TransactionEnd(Tag::new(tag)).into())
            }
            Command::Rollback => {
                let n = conn.writes_in_block.swap(0, Ordering::Relaxed);
                let notice = (n > 0 && client.transaction_status() != TransactionStatus::Idle).then(|| {
                    ErrorInfo::new(
                        "WARNING".into(),
                        "01000".into(),
                        format!("the {n} statement(s) of this block that wrote were committed as each ran: Tessera has no multi-statement transactions, ROLLBACK undoes nothing"),
                    )
                });
                Ok(Outcome { response: Response::TransactionEnd(Tag::new("ROLLBACK")), notice })
            }
            Command::Set(name, value) => {
                if name == "statement_timeout" {
                    let timeout = match &value {
                        Some(v) => parse_timeout(v).ok_or_else(|| {
                            error(errors::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"statement_timeout\": \"{v}\""))
                        })?,
                        None => None,
                    };
                    *conn.statement_timeout.lock().map_err(|_| error("XX000", "poisoned"))? = timeout;
                }
                if let Ok(mut settings) = conn.settings.lock() {
                    match value {
                        Some(v) => settings.insert(name, v),
                        None => settings.remove(&name),
                    };
                }
                Ok(Response::Execution(Tag::new("SET")).into())
            }
            Command::ResetAll => {
                if let Ok(mut settings) = conn.settings.lock() {
                    settings.clear();
                }
                if let Ok(mut t) = conn.statement_timeout.lock() {
                    *t = None;
                }
                Ok(Response::Execution(Tag::new(if sql.trim_start().to_ascii_lowercase().starts_with("discard") { "DISCARD ALL" } else { "RESET" })).into())
            }
            Command::Show(name) => {
                let value = known.get(&name).cloned().or_else(|| default_setting(&name).map(str::to_string)).unwrap_or_default();
                let schema = Schema::new(vec![Field::new(&name, DataType::Utf8, false)]);
                let batch = datafusion::arrow::array::RecordBatch::try_new(
                    Arc::new(schema.clone()),
                    vec![Arc::new(datafusion::arrow::array::StringArray::from(vec![value]))],
                )
                .map_err(|e| error("XX000", e.to_string()))?;
                self.rows(QueryOutput { schema: Arc::new(schema), batches: vec![batch] }, format).map(Into::into)
            }
            Command::Statement => {
                let timeout = conn.statement_timeout.lock().map(|t| *t).unwrap_or(None);
                if let Some(copy) = crate::copy::parse(sql).map_err(|e| from_tessera(&e))? {
                    let has_params = params.as_ref().is_some_and(|p| !p.is_empty());
                    return self.start_copy(&conn, copy, has_params, timeout).await.map(Into::into);
                }
                let output = self.execute(&conn, sql, params, timeout).await?;
                if writes(sql) && client.transaction_status() != TransactionStatus::Idle {
                    conn.writes_in_block.fetch_add(1, Ordering::Relaxed);
                }
                self.respond(sql, output, format).map(Into::into)
            }
        }
    }

    /// Runs a statement of the session on a blocking thread, giving up at `timeout`.
    pub(crate) async fn execute(&self, conn: &Connection, sql: &str, params: Option<Vec<ScalarValue>>, timeout: Option<Duration>) -> Result<QueryOutput, ErrorInfo> {
        let running = crate::statement::spawn(Arc::clone(&conn.session), sql.to_string(), params);
        self.wait(running, writes(sql), timeout).await
    }

    /// Waits for a running statement, giving up at `timeout`: a write is told to stop
    /// and then awaited, so the client learns whether it committed.
    pub(crate) async fn wait(&self, running: crate::statement::Running, is_write: bool, timeout: Option<Duration>) -> Result<QueryOutput, ErrorInfo> {
        let crate::statement::Running { task, stop } = running;
        let wait = async { task.await.map_err(|e| error("XX000", format!("statement thread failed: {e}"))) };
        tokio::pin!(wait);
        let result = match timeout {
            Some(t) => match tokio::time::timeout(t, &mut wait).await {
                Ok(r) => r?,
                // A write is told to stop and then awaited, so the client learns whether
                // it committed (it may have passed its last await point); a read answers
                // at once.
                Err(_) if is_write => {
                    drop(stop);
                    match wait.await? {
                        Some(Ok(output)) => return Ok(output),
                        Some(Err(e)) => return Err(from_tessera(&e)),
                        None => return Err(error(errors::QUERY_CANCELED, "canceling statement due to statement timeout")),
                    }
                }
                Err(_) => return Err(error(errors::QUERY_CANCELED, "canceling statement due to statement timeout")),
            },
            None => wait.await?,
        };
        drop(stop);
        match result {
            Some(Ok(output)) => Ok(output),
            Some(Err(e)) => Err(from_tessera(&e)),
            None => Err(error(errors::QUERY_CANCELED, "canceling statement due to user request")),
        }
    }

    /// A statement's result as a response: a command tag for statements that return no
    /// rows (with the row count of INSERT and COPY), rows otherwise.
    fn respond(&self, sql: &str, output: QueryOutput, format: &Format) -> Result<Response, ErrorInfo> {
        let words: Vec<String> = without_leading_comments(sql).split_whitespace().take(2).map(|w| w.trim_end_matches(';').to_ascii_uppercase()).collect();
        let first = words.first().map(String::as_str).unwrap_or_default();
        match first {
            "INSERT" | "COPY" | "DELETE" | "UPDATE" if !output.is_status_only() => {
                let n = row_count(&output).ok_or_else(|| error("XX000", format!("{first} returned no row count")))?;
                let tag = if first == "INSERT" { Tag::new("INSERT 0").with_rows(n as usize) } else { Tag::new(first).with_rows(n as usize) };
                Ok(Response::Execution(tag))
            }
            _ if output.is_status_only() => {
                let tag = match first {
                    "CREATE" | "DROP" => words.join(" "),
                    "" => return Ok(Response::EmptyQuery),
                    other => other.to_string(),
                };
                Ok(Response::Execution(Tag::new(&tag)))
            }
            _ => self.rows(output, format),
        }
    }

    /// Refuses a result larger than the server's limit (SQLSTATE 54000).
    pub(crate) fn check_result_size(&self, output: &QueryOutput) -> Result<(), ErrorInfo> {
        let bytes: usize = output.batches.iter().map(|b| b.get_array_memory_size()).sum();
        if bytes > self.limits.max_result_bytes {
            return Err(error(
                errors::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "the result ({bytes} bytes, {} rows) exceeds the server's limit of {} bytes (tessera serve --max-result-bytes); aggregate or LIMIT it",
                    output.num_rows(),
                    self.limits.max_result_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Rows as a query response (encoded as the client reads them).
    fn rows(&self, output: QueryOutput, format: &Format) -> Result<Response, ErrorInfo> {
        self.check_result_size(&output)?;
        let fields = Arc::new(pgtypes::fields(&output.schema, format));
        let encode_fields = Arc::clone(&fields);
        let rows = stream::iter(output.batches).flat_map(move |batch| {
            let rows = pgtypes::encode_batch(&batch, &encode_fields).map_err(|e| PgWireError::UserError(Box::new(from_tessera(&e))));
            stream::iter(match rows {
                Ok(rows) => rows.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(e) => vec![Err(e)],
            })
        });
        Ok(Response::Query(QueryResponse::new(fields, rows)))
    }
}

/// The row count of an INSERT or COPY (its one `count` row).
pub(crate) fn row_count(output: &QueryOutput) -> Option<u64> {
    let b = output.batches.first()?;
    (output.schema.fields().len() == 1 && output.schema.field(0).name() == "count" && b.num_rows() == 1)
        .then(|| b.column(0).as_primitive_opt::<UInt64Type>().map(|a| a.value(0)))
        .flatten()
}

async fn send_notice<C>(client: &mut C, notice: Option<ErrorInfo>) -> PgWireResult<()>
where
    C: Sink<PgWireBackendMessage> + Unpin + Send,
    C::Error: Debug,
    PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
{
    if let Some(n) = notice {
        client.send(PgWireBackendMessage::NoticeResponse(NoticeResponse::from(n))).await?;
    }
    Ok(())
}

#[async_trait]
impl SimpleQueryHandler for Backend {
    async fn do_query<C>(&self, client: &mut C, query: &str) -> PgWireResult<Vec<Response>>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let mut responses = Vec::new();
        let statements = split_statements(query);
        for (i, statement) in statements.iter().enumerate() {
            match self.run(client, statement, None, &Format::UnifiedText).await {
                // The client sends the rows of COPY FROM STDIN after the responses:
                // nothing may follow it in the same query string.
                Ok(Outcome { response: Response::CopyIn(_), .. }) if i + 1 < statements.len() => {
                    if let Ok(conn) = connection(&self.db, client)
                        && let Ok(mut pending) = conn.copy_in.lock()
                    {
                        *pending = None;
                    }
                    responses.push(Response::Error(Box::new(error(
                        errors::FEATURE_NOT_SUPPORTED,
                        "COPY FROM STDIN must be the last statement of a query string",
                    ))));
                    break;
                }
                Ok(outcome) => {
                    send_notice(client, outcome.notice).await?;
                    responses.push(outcome.response);
                }
                Err(e) => {
                    responses.push(Response::Error(Box::new(e)));
                    break;
                }
            }
        }
        if responses.is_empty() {
            responses.push(Response::EmptyQuery);
        }
        Ok(responses)
    }
}

/// A statement parsed for the extended protocol: its text, its placeholders' types
/// and the schema of its rows.
#[derive(Debug, Clone)]
pub struct Prepared {
    sql: String,
    parameters: Vec<Option<DataType>>,
    schema: SchemaRef,
}

/// Plans statements for the extended protocol (Parse and Describe).
pub struct Parser {
    db: Arc<Database>,
}

#[async_trait]
impl QueryParser for Parser {
    type Statement = Arc<Prepared>;

    async fn parse_sql<C>(&self, client: &C, sql: &str, _types: &[Option<Type>]) -> PgWireResult<Option<Self::Statement>>
    where
        C: ClientInfo + Unpin + Send + Sync,
    {
        let conn = connection(&self.db, client)?;
        let known = conn.settings.lock().map(|s| s.clone()).unwrap_or_default();
        let (parameters, schema) = match classify(sql, &known) {
            Command::Statement => {
                let d = conn.session.describe(sql).await.map_err(|e| PgWireError::UserError(Box::new(from_tessera(&e))))?;
                (d.parameters, d.schema)
            }
            Command::Show(name) => (Vec::new(), Arc::new(Schema::new(vec![Field::new(name, DataType::Utf8, false)]))),
            _ => (Vec::new(), Arc::new(Schema::empty())),
        };
        Ok(Some(Arc::new(Prepared { sql: sql.to_string(), parameters, schema })))
    }

    fn get_parameter_types(&self, stmt: &Self::Statement) -> PgWireResult<Vec<Type>> {
        Ok(stmt.parameters.iter().map(|t| pgtypes::parameter_type(t.as_ref())).collect())
    }

    fn get_result_schema(&self, stmt: &Self::Statement, format: Option<&Format>) -> PgWireResult<Vec<FieldInfo>> {
        Ok(pgtypes::fields(&stmt.schema, format.unwrap_or(&Format::UnifiedText)))
    }
}

/// The values of a portal's parameters, read in the types the statement declared
/// (the client's own where it gave them, else the placeholders' types).
fn parameters(portal: &Portal<Arc<Prepared>>, parser: &Parser) -> Result<Vec<ScalarValue>, ErrorInfo> {
    let stmt = &portal.statement;
    let declared = parser.get_parameter_types(&stmt.statement).map_err(|e| error("XX000", e.to_string()))?;
    (0..portal.parameter_len())
        .map(|i| {
            let ty = stmt.parameter_types.get(i).cloned().flatten().or_else(|| declared.get(i).cloned()).unwrap_or(Type::TEXT);
            let target = stmt.statement.parameters.get(i).cloned().flatten();
            let bytes = portal.parameters.get(i).cloned().flatten();
            pgtypes::read_parameter(bytes.as_deref(), &ty, portal.parameter_format.is_binary(i), target.as_ref())
                .map_err(|e| error("22P02", format!("${}: {e}", i + 1)))
        })
        .collect()
}

#[async_trait]
impl ExtendedQueryHandler for Backend {
    type Statement = Arc<Prepared>;
    type QueryParser = Parser;

    fn query_parser(&self) -> Arc<Self::QueryParser> {
        Arc::clone(&self.parser)
    }

    async fn do_query<C>(&self, client: &mut C, portal: &Portal<Self::Statement>, _max_rows: usize) -> PgWireResult<Response>
    where
        C: ClientInfo + ClientPortalStore + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::PortalStore: PortalStore<Statement = Self::Statement>,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        // Errors are returned (not sent as responses) so that pgwire discards the rest of
        // the pipeline up to Sync, as PostgreSQL does.
        let params = parameters(portal, &self.parser).map_err(|e| PgWireError::UserError(Box::new(e)))?;
        let params = (!params.is_empty() || !portal.statement.statement.parameters.is_empty()).then_some(params);
        match self.run(client, &portal.statement.statement.sql, params, &portal.result_column_format).await {
            Ok(outcome) => {
                send_notice(client, outcome.notice).await?;
                Ok(outcome.response)
            }
            Err(e) => Err(PgWireError::UserError(Box::new(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_the_server_handles() {
        let none = HashMap::new();
        assert_eq!(classify("BEGIN", &none), Command::Begin);
        assert_eq!(classify("start transaction isolation level read committed", &none), Command::Begin);
        assert_eq!(classify("COMMIT;", &none), Command::Commit);
        assert_eq!(classify("rollback", &none), Command::Rollback);
        assert_eq!(classify("SET extra_float_digits = 3", &none), Command::Set("extra_float_digits".into(), Some("3".into())));
        assert_eq!(classify("SET SESSION statement_timeout TO '5s'", &none), Command::Set("statement_timeout".into(), Some("5s".into())));
        assert_eq!(classify("SET TIME ZONE 'UTC'", &none), Command::Set("timezone".into(), Some("UTC".into())));
        assert_eq!(classify("set application_name to default", &none), Command::Set("application_name".into(), None));
        assert_eq!(classify("SET tessera.device = 'cpu'", &none), Command::Statement);
        assert_eq!(classify("SHOW server_version", &none), Command::Show("server_version".into()));
        assert_eq!(classify("SHOW TABLES", &none), Command::Statement);
        assert_eq!(classify("SHOW datafusion.execution.batch_size", &none), Command::Statement);
        assert_eq!(classify("DISCARD ALL", &none), Command::ResetAll);
        assert_eq!(classify("SELECT 1", &none), Command::Statement);
        assert_eq!(classify("/* driver */ -- note\n BEGIN", &none), Command::Begin);
        assert!(writes("-- load\n/* x */ INSERT INTO t VALUES (1)"));
    }

    #[test]
    fn statement_timeouts() {
        assert_eq!(parse_timeout("0"), Some(None));
        assert_eq!(parse_timeout("1500"), Some(Some(Duration::from_millis(1500))));
        assert_eq!(parse_timeout("5s"), Some(Some(Duration::from_secs(5))));
        assert_eq!(parse_timeout("2min"), Some(Some(Duration::from_secs(120))));
        assert_eq!(parse_timeout("soon"), None);
        assert_eq!(parse_timeout("99999999999999999999999999"), None, "too large: an error, not a panic");
    }
}
