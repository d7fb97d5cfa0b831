//! Arrow Flight SQL (`tessera serve --flight-listen ADDR`): the server's [`Database`]
//! for ADBC (`adbc_driver_flightsql`), arrow-flight's client and other Flight SQL
//! clients, results sent as the engine's Arrow record batches.
//!
//! Entry point: [`FlightServer`], bound with the same [`ServerOptions`] as the
//! PostgreSQL server (users, result limit, TLS files).
//!
//! Supported:
//! - Handshake with HTTP basic authentication, checked against the server's users (the
//!   password is salted and hashed and compared with the stored hash, never kept). The
//!   answer's `authorization: Bearer …` header names the client's own [`Session`]; every
//!   later call must carry it. At most `max_connections` sessions are kept: a new one
//!   replaces the one unused longest, whose client must then handshake again. Without
//!   users (loopback only) everyone is admitted: a client that handshakes gets its own
//!   session, one that does not runs each call in a fresh session (`SET` then does not
//!   outlive its call).
//! - `CommandStatementQuery`: GetFlightInfo plans the statement for its schema; the
//!   ticket carries that schema and the SQL, which DoGet runs. A statement that returns
//!   no rows (DDL, DML) runs at GetFlightInfo instead, which answers with no endpoints.
//!   `CommandStatementUpdate` (DoPut): DDL, DML, `COPY`, `SET`; the row count of
//!   `INSERT` and `COPY`, -1 for the others.
//! - Prepared statements: create (dataset and parameter schemas), parameters bound by a
//!   DoPut of a batch (one run per row, values converted to the placeholders' types),
//!   query, update, close. A session keeps at most 1024 open; a new one beyond replaces
//!   the one unused longest.
//! - GetSqlInfo, GetCatalogs, GetDbSchemas, GetTables (with schemas), GetTableTypes.
//! - Errors are gRPC statuses: InvalidArgument for the SQL's errors, Unimplemented,
//!   ResourceExhausted (a result over `--max-result-bytes`), NotFound (an unknown
//!   prepared statement), Unauthenticated, Internal; the message is the engine's, and
//!   the SQLSTATE the PostgreSQL server would give is in the `x-tessera-sqlstate` header.
//!
//! TLS (tonic's rustls over ring) when certificate and key files are given: clients
//! then connect with `grpc+tls://`.
//!
//! Not supported: transactions (each statement commits on its own, as over pgwire),
//! Substrait plans, bulk ingestion (`CommandStatementIngest`), cancel actions, keys and
//! XDBC type info. A call the client drops stops its statement at its next await point.

// A gRPC `Status` is large, but one is built per call, never per row.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use arrow_flight::decode::FlightRecordBatchStream;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::error::FlightError;
use arrow_flight::flight_service_server::FlightServiceServer;
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionClosePreparedStatementRequest, ActionCreatePreparedStatementRequest, ActionCreatePreparedStatementResult,
    CommandGetCatalogs, CommandGetDbSchemas, CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables,
    CommandPreparedStatementQuery, CommandPreparedStatementUpdate, CommandStatementQuery, CommandStatementUpdate,
    DoPutPreparedStatementResult, ProstMessageExt, SqlInfo, SqlNullOrdering, SqlSupportedCaseSensitivity,
    SqlSupportedTransaction, TicketStatementQuery,
};
use arrow_flight::{
    Action, FlightData, FlightDescriptor, FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse, IpcMessage,
    SchemaAsIpc, Ticket,
};
use base64::Engine;
use bytes::Bytes;
use datafusion::arrow::array::{AsArray, RecordBatch, RecordBatchOptions};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt64Type};
use datafusion::arrow::ipc::writer::IpcWriteOptions;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::TableType;
use futures::{Stream, TryStreamExt, stream};
use prost::Message;
use tessera_common::{Result, TesseraError};
use tessera_engine::{Database, QueryOutput, Session};
use tokio::net::TcpListener;
use tonic::metadata::MetadataMap;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, ServerTlsConfig};
use tonic::{Code, Request, Response, Status, Streaming};

use crate::auth::Users;
use crate::{ServerOptions, errors};

/// Prepared statements one client may hold open at once; a new one beyond it replaces
/// the one unused longest. Each holds only its text, schemas and bound values, so the
/// bound is against clients that never close theirs, not a tuning knob.
const MAX_PREPARED_PER_CLIENT: usize = 1024;

/// The stream a DoGet answers with.
type DoGetStream = Pin<Box<dyn Stream<Item = std::result::Result<FlightData, Status>> + Send + 'static>>;
/// The stream a handshake answers with.
type HandshakeStream = Pin<Box<dyn Stream<Item = std::result::Result<HandshakeResponse, Status>> + Send>>;

/// A bound Flight SQL server: [`FlightServer::run`] serves calls until the task is dropped.
pub struct FlightServer {
    listener: TcpListener,
    service: FlightSql,
    builder: tonic::transport::Server,
}

impl FlightServer {
    /// Binds `options.listen` for `db`, under the PostgreSQL server's rules: without
    /// users only a loopback address; TLS when certificate and key files are given.
    pub async fn bind(db: Arc<Database>, options: ServerOptions) -> Result<FlightServer> {
        crate::check_options(&options)?;
        let mut builder = tonic::transport::Server::builder();
        if let Some(files) = &options.tls {
            let read = |path: &std::path::PathBuf| std::fs::read(path).map_err(|e| TesseraError::io(format!("reading {}", path.display()), e));
            let identity = Identity::from_pem(read(&files.cert)?, read(&files.key)?);
            builder = builder
                .tls_config(ServerTlsConfig::new().identity(identity))
                .map_err(|e| TesseraError::Plan(format!("TLS for Flight SQL ({}, {}): {e:?}", files.cert.display(), files.key.display())))?;
        }
        let listener = TcpListener::bind(options.listen).await.map_err(|e| TesseraError::io(format!("listening on {}", options.listen), e))?;
        let service = FlightSql::new(db, options)?;
        Ok(FlightServer { listener, service, builder })
    }

    /// The address it listens on (the port chosen when bound to port 0).
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|e| TesseraError::io("reading the listening address", e))
    }

    /// Serves calls until this future is dropped.
    pub async fn run(mut self) -> Result<()> {
        let incoming = TcpIncoming::from(self.listener).with_nodelay(Some(true));
        self.builder
            .add_service(FlightServiceServer::new(self.service))
            .serve_with_incoming(incoming)
            .await
            .map_err(|e| TesseraError::Execution(format!("Flight SQL server: {e}")))
    }
}

/// The Flight SQL service: the database, who may call, and each client's state.
struct FlightSql {
    db: Arc<Database>,
    users: Arc<Users>,
    max_result_bytes: usize,
    /// Sessions kept at most (`--max-connections`).
    max_sessions: usize,
    /// Clients that completed a handshake, by their bearer token.
    clients: Mutex<HashMap<String, Arc<Client>>>,
    /// Callers without a token on a server without users: no session of their own.
    anonymous: Arc<Client>,
    sql_info: SqlInfoData,
}

/// One client: its session and its prepared statements, by handle.
struct Client {
    /// None for [`FlightSql::anonymous`]: each call gets a fresh session.
    session: Option<Arc<Session>>,
    prepared: Mutex<HashMap<Bytes, Prepared>>,
    last_used: Mutex<Instant>,
}

impl Client {
    fn new(session: Option<Arc<Session>>) -> Client {
        Client { session, prepared: Mutex::new(HashMap::new()), last_used: Mutex::new(Instant::now()) }
    }

    /// The prepared statement `handle` (a copy: statements run without holding the lock).
    fn prepared(&self, handle: &Bytes) -> std::result::Result<Prepared, Status> {
        let mut prepared = lock(&self.prepared);
        let statement = prepared.get_mut(handle).ok_or_else(|| Status::not_found("no such prepared statement (closed, or made in another session)"))?;
        statement.last_used = Instant::now();
        Ok(statement.clone())
    }

    /// Keeps a new prepared statement; at the limit, the one unused longest is dropped.
    fn add_prepared(&self, handle: Bytes, statement: Prepared) {
        let mut prepared = lock(&self.prepared);
        if prepared.len() >= MAX_PREPARED_PER_CLIENT {
            let oldest = prepared.iter().min_by_key(|(_, p)| p.last_used).map(|(h, _)| h.clone());
            if let Some(h) = oldest {
                prepared.remove(&h);
            }
        }
        prepared.insert(handle, statement);
    }
}

/// A prepared statement: its text, what it takes and returns, and the values bound.
#[derive(Clone)]
struct Prepared {
    sql: String,
    /// The placeholders' types, `$1` first (None: not known from the statement).
    parameters: Vec<Option<DataType>>,
    /// The schema of its rows (empty: it returns none).
    schema: SchemaRef,
    /// Rows of parameter values bound by the last DoPut (None: none bound yet).
    bound: Option<Vec<Vec<ScalarValue>>>,
    last_used: Instant,
}

/// A mutex's data, also after a panic elsewhere (the maps stay consistent: every
/// change is one insert or remove).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FlightSql {
    fn new(db: Arc<Database>, options: ServerOptions) -> Result<FlightSql> {
        let mut info = SqlInfoDataBuilder::new();
        info.append(SqlInfo::FlightSqlServerName, "Tessera");
        info.append(SqlInfo::FlightSqlServerVersion, env!("CARGO_PKG_VERSION"));
        info.append(SqlInfo::FlightSqlServerReadOnly, false);
        info.append(SqlInfo::FlightSqlServerSql, true);
        info.append(SqlInfo::FlightSqlServerSubstrait, false);
        info.append(SqlInfo::FlightSqlServerTransaction, SqlSupportedTransaction::None as i32);
        info.append(SqlInfo::FlightSqlServerCancel, false);
        info.append(SqlInfo::FlightSqlServerBulkIngestion, false);
        info.append(SqlInfo::FlightSqlServerStatementTimeout, 0i32);
        info.append(SqlInfo::SqlDdlCatalog, false);
        info.append(SqlInfo::SqlDdlSchema, false);
        info.append(SqlInfo::SqlDdlTable, true);
        // Unquoted names are folded to lower case, as in PostgreSQL.
        info.append(SqlInfo::SqlIdentifierCase, SqlSupportedCaseSensitivity::SqlCaseSensitivityLowercase as i32);
        info.append(SqlInfo::SqlIdentifierQuoteChar, "\"");
        // A bit mask of SupportedSqlGrammar values: the minimum and core grammars.
        info.append(SqlInfo::SqlSupportedGrammar, 0b011i32);
        info.append(SqlInfo::SqlSupportsColumnAliasing, true);
        info.append(SqlInfo::SqlAllTablesAreSelectable, true);
        // DataFusion's default: NULL is larger than every value.
        info.append(SqlInfo::SqlNullOrdering, SqlNullOrdering::SqlNullsSortedHigh as i32);
        let sql_info = info.build().map_err(|e| TesseraError::Internal(format!("Flight SQL info: {e}")))?;
        Ok(FlightSql {
            db,
            users: Arc::new(options.users),
            max_result_bytes: options.max_result_bytes,
            max_sessions: options.max_connections,
            clients: Mutex::new(HashMap::new()),
            anonymous: Arc::new(Client::new(None)),
            sql_info,
        })
    }

    /// The caller of a request: the client its bearer token names, or (on a server
    /// without users) the anonymous client.
    fn client(&self, metadata: &MetadataMap) -> std::result::Result<Arc<Client>, Status> {
        let header = metadata.get("authorization").and_then(|v| v.to_str().ok());
        if let Some(token) = header.and_then(|h| strip_prefix_ignore_case(h, "Bearer ")) {
            let client = lock(&self.clients).get(token.trim()).cloned();
            let client = client.ok_or_else(|| Status::unauthenticated("unknown or expired session token: handshake again"))?;
            *lock(&client.last_used) = Instant::now();
            return Ok(client);
        }
        if self.users.is_empty() {
            return Ok(Arc::clone(&self.anonymous));
        }
        Err(Status::unauthenticated("authenticate first: a handshake with a user name and password (HTTP basic authentication)"))
    }

    /// The session a call of `client` runs in.
    fn session(&self, client: &Client) -> std::result::Result<Arc<Session>, Status> {
        match &client.session {
            Some(s) => Ok(Arc::clone(s)),
            None => self.db.connect().map(Arc::new).map_err(|e| status(&e)),
        }
    }

    /// The caller and its session.
    fn caller(&self, metadata: &MetadataMap) -> std::result::Result<(Arc<Client>, Arc<Session>), Status> {
        let client = self.client(metadata)?;
        let session = self.session(&client)?;
        Ok((client, session))
    }

    /// Keeps a new client's state under `token`; at the limit, the client unused
    /// longest is dropped first.
    fn admit(&self, token: String, client: Client) {
        let mut clients = lock(&self.clients);
        while clients.len() >= self.max_sessions.max(1) {
            let oldest = clients.iter().min_by_key(|(_, c)| *lock(&c.last_used)).map(|(t, _)| t.clone());
            match oldest {
                Some(t) => {
                    log::info!("Flight SQL: {} sessions, dropping the one unused longest", clients.len());
                    clients.remove(&t);
                }
                None => break,
            }
        }
        clients.insert(token, Arc::new(client));
    }

    /// Checks a result against `--max-result-bytes`.
    fn check_size(&self, output: &QueryOutput) -> std::result::Result<(), Status> {
        let bytes: usize = output.batches.iter().map(|b| b.get_array_memory_size()).sum();
        if bytes > self.max_result_bytes {
            return Err(Status::resource_exhausted(format!(
                "the result ({bytes} bytes, {} rows) exceeds the server's limit of {} bytes (tessera serve --max-result-bytes); aggregate or LIMIT it",
                output.num_rows(),
                self.max_result_bytes
            )));
        }
        Ok(())
    }

    /// A query's result as a DoGet answer, in the schema GetFlightInfo announced.
    fn rows(&self, announced: &SchemaRef, output: QueryOutput) -> std::result::Result<Response<DoGetStream>, Status> {
        self.check_size(&output)?;
        let (schema, batches) = conform(announced, output)?;
        Ok(batches_response(schema, batches))
    }
}

/// `text` without `prefix` (ASCII case ignored), if it starts with it.
fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &text[prefix.len()..])
}

/// Base64 with or without padding: arrow-go (ADBC's Flight SQL driver) sends basic
/// credentials unpadded, arrow-rs and JDBC padded.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new().with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// The user and password of an `authorization: Basic …` header (None: no such header).
fn basic_credentials(metadata: &MetadataMap) -> std::result::Result<Option<(String, String)>, Status> {
    let Some(header) = metadata.get("authorization") else { return Ok(None) };
    let bad = || Status::unauthenticated("malformed authorization header: expected Basic base64(user:password)");
    let header = header.to_str().map_err(|_| bad())?;
    let Some(encoded) = strip_prefix_ignore_case(header, "Basic ") else { return Ok(None) };
    let decoded = BASE64.decode(encoded.trim()).map_err(|_| bad())?;
    let text = String::from_utf8(decoded).map_err(|_| bad())?;
    let (user, password) = text.split_once(':').ok_or_else(bad)?;
    Ok(Some((user.to_string(), password.to_string())))
}

/// A random bearer token or handle: 16 bytes from the operating system, in hex.
fn random_token() -> std::result::Result<String, Status> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Status::internal(format!("no random numbers from the OS: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A Tessera error as a gRPC status: the code from who is at fault, the engine's
/// message, and the SQLSTATE in the `x-tessera-sqlstate` header.
fn status(e: &TesseraError) -> Status {
    let sqlstate = errors::sqlstate(e);
    let code = match e {
        TesseraError::NotImplemented(_) => Code::Unimplemented,
        TesseraError::ResourcesExhausted(_) => Code::ResourceExhausted,
        TesseraError::Plan(_) | TesseraError::Execution(_) => Code::InvalidArgument,
        _ if sqlstate.starts_with("42") || sqlstate.starts_with("22") => Code::InvalidArgument,
        _ => Code::Internal,
    };
    let mut status = Status::new(code, e.to_string());
    if let Ok(value) = sqlstate.parse() {
        status.metadata_mut().insert("x-tessera-sqlstate", value);
    }
    status
}

/// A schema in the IPC form Flight SQL messages carry.
fn schema_bytes(schema: &Schema) -> std::result::Result<Bytes, Status> {
    let message = IpcMessage::try_from(SchemaAsIpc::new(schema, &IpcWriteOptions::default()))
        .map_err(|e| Status::internal(format!("encoding a schema: {e}")))?;
    Ok(message.0)
}

/// A FlightInfo with one endpoint whose ticket is `ticket`, to be read from this server.
fn flight_info(schema: &Schema, ticket: &impl ProstMessageExt, descriptor: FlightDescriptor) -> std::result::Result<Response<FlightInfo>, Status> {
    let ticket = Ticket::new(ticket.as_any().encode_to_vec());
    let info = FlightInfo::new()
        .try_with_schema(schema)
        .map_err(|e| Status::internal(format!("encoding a schema: {e}")))?
        .with_endpoint(FlightEndpoint::new().with_ticket(ticket))
        .with_descriptor(descriptor)
        .with_ordered(true);
    Ok(Response::new(info))
}

/// The FlightInfo of a statement that returns no rows and has already run: no
/// endpoints, so nothing to fetch. Such statements run at GetFlightInfo, since clients
/// executing DDL or DML as a query (ADBC's `cursor.execute`) need not call DoGet.
fn done_info(descriptor: FlightDescriptor) -> std::result::Result<Response<FlightInfo>, Status> {
    let info = FlightInfo::new()
        .try_with_schema(&Schema::empty())
        .map_err(|e| Status::internal(format!("encoding a schema: {e}")))?
        .with_descriptor(descriptor)
        .with_total_records(0);
    Ok(Response::new(info))
}

/// A statement's ticket: the schema announced for it (so that DoGet sends exactly that
/// schema) and its text, as `u32` schema length (little-endian), schema, SQL.
fn statement_ticket(schema: &Schema, sql: &str) -> std::result::Result<TicketStatementQuery, Status> {
    let schema = schema_bytes(schema)?;
    let length = u32::try_from(schema.len()).map_err(|_| Status::invalid_argument("the statement's schema is too large"))?;
    let mut handle = Vec::with_capacity(4 + schema.len() + sql.len());
    handle.extend_from_slice(&length.to_le_bytes());
    handle.extend_from_slice(&schema);
    handle.extend_from_slice(sql.as_bytes());
    Ok(TicketStatementQuery { statement_handle: handle.into() })
}

/// The schema and SQL of a [`statement_ticket`].
fn read_statement_ticket(handle: &[u8]) -> std::result::Result<(SchemaRef, String), Status> {
    let bad = || Status::invalid_argument("malformed statement ticket (it comes from this server's GetFlightInfo)");
    let length = handle.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(u32::from_le_bytes).ok_or_else(bad)?;
    let end = usize::try_from(length).ok().and_then(|n| n.checked_add(4)).ok_or_else(bad)?;
    let schema = handle.get(4..end).ok_or_else(bad)?;
    let schema = Schema::try_from(IpcMessage(Bytes::copy_from_slice(schema))).map_err(|_| bad())?;
    let sql = std::str::from_utf8(handle.get(end..).ok_or_else(bad)?).map_err(|_| bad())?;
    Ok((Arc::new(schema), sql.to_string()))
}

/// A result in the schema announced for it: columns cast where the run's types differ
/// (a dictionary-encoded or view string column), names as announced, and a field made
/// nullable where its rows hold nulls. A statement announced to return no rows (DDL,
/// DML) sends none, not its row count; a result of another shape is sent as it is.
fn conform(announced: &SchemaRef, output: QueryOutput) -> std::result::Result<(SchemaRef, Vec<RecordBatch>), Status> {
    let n = announced.fields().len();
    if n == 0 {
        return Ok((Arc::clone(announced), Vec::new()));
    }
    if output.schema.fields().len() != n || output.batches.iter().any(|b| b.num_columns() != n) {
        log::debug!("Flight SQL: a result of {} columns where {n} were announced", output.schema.fields().len());
        return Ok((output.schema, output.batches));
    }
    if output.batches.iter().all(|b| b.schema_ref() == announced) {
        return Ok((Arc::clone(announced), output.batches));
    }
    let fields: Vec<Field> = announced
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let nulls = output.batches.iter().any(|b| b.column(i).null_count() > 0);
            f.as_ref().clone().with_nullable(f.is_nullable() || nulls)
        })
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(fields, announced.metadata().clone()));
    let batches = output
        .batches
        .iter()
        .map(|b| {
            let columns = b
                .columns()
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| if c.data_type() == f.data_type() { Ok(Arc::clone(c)) } else { cast(c, f.data_type()) })
                .collect::<std::result::Result<Vec<_>, _>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
            RecordBatch::try_new_with_options(Arc::clone(&schema), columns, &options)
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Status::internal(format!("the result does not fit the schema announced for it: {e}")))?;
    Ok((schema, batches))
}

/// Batches as a DoGet answer (dictionaries sent as plain values).
fn batches_response(schema: SchemaRef, batches: Vec<RecordBatch>) -> Response<DoGetStream> {
    let data = FlightDataEncoderBuilder::new().with_schema(schema).build(stream::iter(batches.into_iter().map(Ok))).map_err(Status::from);
    Response::new(Box::pin(data))
}

/// One metadata batch as a DoGet answer.
fn batch_response<E: std::fmt::Display>(batch: std::result::Result<RecordBatch, E>) -> std::result::Result<Response<DoGetStream>, Status> {
    let batch = batch.map_err(|e| Status::internal(format!("building metadata: {e}")))?;
    Ok(batches_response(batch.schema(), vec![batch]))
}

/// The row count a write returned (`INSERT`, `COPY`: one `count` row), if any.
fn row_count(output: &QueryOutput) -> Option<i64> {
    let batch = output.batches.first()?;
    let is_count = output.schema.fields().len() == 1 && output.schema.field(0).name() == "count" && batch.num_rows() == 1;
    let n = batch.column(0).as_primitive_opt::<UInt64Type>().filter(|_| is_count)?.value(0);
    i64::try_from(n).ok()
}

/// Runs one statement on a blocking thread of the runtime (the CPU backend and GPU
/// launches block their thread), stopped at its next await point if the call is dropped.
async fn execute(session: Arc<Session>, sql: String, params: Option<Vec<ScalarValue>>) -> std::result::Result<QueryOutput, Status> {
    // The guard lives until the statement is done: a dropped call stops it.
    let crate::statement::Running { task, stop: _stop } = crate::statement::spawn(session, sql, params);
    match task.await {
        Ok(Some(Ok(output))) => Ok(output),
        Ok(Some(Err(e))) => Err(status(&e)),
        Ok(None) => Err(Status::cancelled("the statement was canceled")),
        Err(e) => Err(Status::internal(format!("statement thread failed: {e}"))),
    }
}

/// Runs a statement once per row of parameter values (once without any when `rows` is
/// None), its results together.
async fn execute_rows(session: Arc<Session>, sql: &str, rows: Option<Vec<Vec<ScalarValue>>>) -> std::result::Result<Vec<QueryOutput>, Status> {
    let Some(rows) = rows else {
        return Ok(vec![execute(session, sql.to_string(), None).await?]);
    };
    let mut outputs = Vec::with_capacity(rows.len());
    for row in rows {
        let params = (!row.is_empty()).then_some(row);
        outputs.push(execute(Arc::clone(&session), sql.to_string(), params).await?);
    }
    Ok(outputs)
}

/// The rows of parameter values a DoPut uploads, each converted to its placeholder's
/// type (None: the upload holds no batch).
async fn read_parameters(upload: PeekableFlightDataStream, types: &[Option<DataType>]) -> std::result::Result<Option<Vec<Vec<ScalarValue>>>, Status> {
    // The first message may carry only the command (no IPC message): skip such ones.
    let data = upload.try_filter(|d| futures::future::ready(!d.data_header.is_empty())).map_err(FlightError::from);
    let batches: Vec<RecordBatch> = FlightRecordBatchStream::new_from_flight_data(data).try_collect().await.map_err(|e| match e {
        FlightError::Tonic(status) => *status,
        e => Status::invalid_argument(format!("reading the parameters: {e}")),
    })?;
    if batches.is_empty() {
        return Ok(None);
    }
    let mut rows = Vec::new();
    for batch in &batches {
        if batch.num_columns() != types.len() {
            return Err(Status::invalid_argument(format!(
                "the statement takes {} parameter(s), the uploaded batch has {} column(s)",
                types.len(),
                batch.num_columns()
            )));
        }
        for row in 0..batch.num_rows() {
            let mut values = Vec::with_capacity(types.len());
            for (i, (column, ty)) in batch.columns().iter().zip(types).enumerate() {
                let bad = |e: &dyn std::fmt::Display| Status::invalid_argument(format!("parameter ${}: {e}", i + 1));
                let value = ScalarValue::try_from_array(column, row).map_err(|e| bad(&e))?;
                let value = match ty {
                    Some(ty) if ty != &value.data_type() && !ty.is_null() => value.cast_to(ty).map_err(|e| bad(&e))?,
                    _ => value,
                };
                values.push(value);
            }
            rows.push(values);
        }
    }
    Ok(Some(rows))
}

#[tonic::async_trait]
impl FlightSqlService for FlightSql {
    type FlightService = FlightSql;

    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> std::result::Result<Response<HandshakeStream>, Status> {
        let credentials = basic_credentials(request.metadata())?;
        if !self.users.is_empty() {
            let Some((user, password)) = credentials else {
                return Err(Status::unauthenticated("the handshake needs a user name and password (HTTP basic authentication)"));
            };
            // PBKDF2 takes milliseconds: off the runtime's worker threads.
            let users = Arc::clone(&self.users);
            let name = user.clone();
            let ok = tokio::task::spawn_blocking(move || users.verify(&name, &password))
                .await
                .map_err(|e| Status::internal(format!("checking the password: {e}")))?;
            if !ok {
                return Err(Status::unauthenticated(format!("password authentication failed for user \"{user}\"")));
            }
        }
        let session = self.db.connect().map_err(|e| status(&e))?;
        let token = random_token()?;
        self.admit(token.clone(), Client::new(Some(Arc::new(session))));
        let answer = HandshakeResponse { protocol_version: 0, payload: Bytes::from(token.clone()) };
        let mut response: Response<HandshakeStream> = Response::new(Box::pin(stream::iter([Ok(answer)])));
        let header = format!("Bearer {token}").parse().map_err(|_| Status::internal("token is not a valid header"))?;
        response.metadata_mut().insert("authorization", header);
        Ok(response)
    }

    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        let (_, session) = self.caller(request.metadata())?;
        if query.transaction_id.is_some() {
            return Err(Status::unimplemented("transactions are not supported: each statement commits on its own"));
        }
        let description = session.describe(&query.query).await.map_err(|e| status(&e))?;
        if description.schema.fields().is_empty() {
            execute(session, query.query, None).await?;
            return done_info(request.into_inner());
        }
        let ticket = statement_ticket(&description.schema, &query.query)?;
        flight_info(&description.schema, &ticket, request.into_inner())
    }

    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        let (_, session) = self.caller(request.metadata())?;
        let (schema, sql) = read_statement_ticket(&ticket.statement_handle)?;
        let output = execute(session, sql, None).await?;
        self.rows(&schema, output)
    }

    async fn do_put_statement_update(
        &self,
        command: CommandStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> std::result::Result<i64, Status> {
        let (_, session) = self.caller(request.metadata())?;
        if command.transaction_id.is_some() {
            return Err(Status::unimplemented("transactions are not supported: each statement commits on its own"));
        }
        let output = execute(session, command.query, None).await?;
        Ok(row_count(&output).unwrap_or(-1))
    }

    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<Action>,
    ) -> std::result::Result<ActionCreatePreparedStatementResult, Status> {
        let (client, session) = self.caller(request.metadata())?;
        if query.transaction_id.is_some() {
            return Err(Status::unimplemented("transactions are not supported: each statement commits on its own"));
        }
        let description = session.describe(&query.query).await.map_err(|e| status(&e))?;
        let parameters = Schema::new(
            description
                .parameters
                .iter()
                .enumerate()
                .map(|(i, ty)| Field::new(format!("${}", i + 1), ty.clone().unwrap_or(DataType::Null), true))
                .collect::<Vec<_>>(),
        );
        let result = ActionCreatePreparedStatementResult {
            prepared_statement_handle: Bytes::from(random_token()?),
            dataset_schema: schema_bytes(&description.schema)?,
            parameter_schema: schema_bytes(&parameters)?,
        };
        let statement =
            Prepared { sql: query.query, parameters: description.parameters, schema: description.schema, bound: None, last_used: Instant::now() };
        client.add_prepared(result.prepared_statement_handle.clone(), statement);
        Ok(result)
    }

    async fn do_action_close_prepared_statement(
        &self,
        query: ActionClosePreparedStatementRequest,
        request: Request<Action>,
    ) -> std::result::Result<(), Status> {
        let client = self.client(request.metadata())?;
        match lock(&client.prepared).remove(&query.prepared_statement_handle) {
            Some(_) => Ok(()),
            None => Err(Status::not_found("no such prepared statement (closed, or made in another session)")),
        }
    }

    async fn do_put_prepared_statement_query(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> std::result::Result<DoPutPreparedStatementResult, Status> {
        let client = self.client(request.metadata())?;
        let handle = query.prepared_statement_handle;
        let statement = client.prepared(&handle)?;
        let rows = read_parameters(request.into_inner(), &statement.parameters).await?;
        let mut prepared = lock(&client.prepared);
        let entry = prepared.get_mut(&handle).ok_or_else(|| Status::not_found("the prepared statement was closed meanwhile"))?;
        entry.bound = Some(rows.unwrap_or_default());
        Ok(DoPutPreparedStatementResult { prepared_statement_handle: Some(handle) })
    }

    async fn get_flight_info_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        let (client, session) = self.caller(request.metadata())?;
        let statement = client.prepared(&query.prepared_statement_handle)?;
        if statement.schema.fields().is_empty() {
            if statement.bound.is_none() && !statement.parameters.is_empty() {
                return Err(Status::invalid_argument(format!("the statement takes {} parameter(s): bind them first", statement.parameters.len())));
            }
            execute_rows(session, &statement.sql, statement.bound).await?;
            return done_info(request.into_inner());
        }
        flight_info(&statement.schema, &query, request.into_inner())
    }

    async fn do_get_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        let (client, session) = self.caller(request.metadata())?;
        let statement = client.prepared(&query.prepared_statement_handle)?;
        if statement.bound.is_none() && !statement.parameters.is_empty() {
            return Err(Status::invalid_argument(format!("the statement takes {} parameter(s): bind them first", statement.parameters.len())));
        }
        let outputs = execute_rows(session, &statement.sql, statement.bound).await?;
        let mut batches = Vec::new();
        let mut schema = Arc::clone(&statement.schema);
        for output in outputs {
            schema = output.schema;
            batches.extend(output.batches);
        }
        self.rows(&statement.schema, QueryOutput { schema, batches })
    }

    async fn do_put_prepared_statement_update(
        &self,
        query: CommandPreparedStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> std::result::Result<i64, Status> {
        let (client, session) = self.caller(request.metadata())?;
        let statement = client.prepared(&query.prepared_statement_handle)?;
        // Values uploaded with this call, else the ones bound before.
        let rows = read_parameters(request.into_inner(), &statement.parameters).await?.or(statement.bound);
        if rows.is_none() && !statement.parameters.is_empty() {
            return Err(Status::invalid_argument(format!("the statement takes {} parameter(s): bind them first", statement.parameters.len())));
        }
        let outputs = execute_rows(session, &statement.sql, rows).await?;
        let counts: Option<Vec<i64>> = outputs.iter().map(row_count).collect();
        Ok(counts.map_or(-1, |c| c.iter().sum()))
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        self.client(request.metadata())?;
        flight_info(&self.sql_info.schema(), &query, request.into_inner())
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        self.client(request.metadata())?;
        batch_response(query.into_builder(&self.sql_info).build())
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        self.client(request.metadata())?;
        flight_info(&query.into_builder().schema(), &query, request.into_inner())
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        let (_, session) = self.caller(request.metadata())?;
        let mut builder = query.into_builder();
        for catalog in session.context().catalog_names() {
            builder.append(catalog);
        }
        batch_response(builder.build())
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        self.client(request.metadata())?;
        flight_info(&query.clone().into_builder().schema(), &query, request.into_inner())
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        let (_, session) = self.caller(request.metadata())?;
        let mut builder = query.into_builder();
        let ctx = session.context();
        for name in ctx.catalog_names() {
            if let Some(catalog) = ctx.catalog(&name) {
                for schema in catalog.schema_names() {
                    builder.append(&name, schema);
                }
            }
        }
        batch_response(builder.build())
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        self.client(request.metadata())?;
        flight_info(&query.clone().into_builder().schema(), &query, request.into_inner())
    }

    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        let (_, session) = self.caller(request.metadata())?;
        // The builder applies the request's filters (catalog, LIKE patterns, types).
        let mut builder = query.into_builder();
        let ctx = session.context();
        for catalog_name in ctx.catalog_names() {
            let Some(catalog) = ctx.catalog(&catalog_name) else { continue };
            for schema_name in catalog.schema_names() {
                let Some(schema) = catalog.schema(&schema_name) else { continue };
                for table_name in schema.table_names() {
                    let Some(table) = schema.table(&table_name).await.map_err(|e| Status::internal(e.to_string()))? else { continue };
                    let kind = match table.table_type() {
                        TableType::Base => "TABLE",
                        TableType::View => "VIEW",
                        TableType::Temporary => "LOCAL TEMPORARY",
                    };
                    builder
                        .append(&catalog_name, &schema_name, &table_name, kind, &table.schema())
                        .map_err(|e| Status::internal(format!("building the table list: {e}")))?;
                }
            }
        }
        batch_response(builder.build())
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> std::result::Result<Response<FlightInfo>, Status> {
        self.client(request.metadata())?;
        flight_info(&query.into_builder().schema(), &query, request.into_inner())
    }

    async fn do_get_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<Ticket>,
    ) -> std::result::Result<Response<DoGetStream>, Status> {
        self.client(request.metadata())?;
        let mut builder = query.into_builder();
        for kind in ["LOCAL TEMPORARY", "TABLE", "VIEW"] {
            builder.append(kind);
        }
        batch_response(builder.build())
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statement_tickets_round_trip_and_reject_garbage() {
        let schema = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
        let ticket = statement_ticket(&schema, "SELECT 1 AS x").map(|t| t.statement_handle).unwrap_or_default();
        let read = read_statement_ticket(&ticket).ok();
        assert_eq!(read.map(|(s, q)| (s.as_ref().clone(), q)), Some((schema, "SELECT 1 AS x".to_string())));
        for garbage in [&b""[..], b"\xff\xff\xff\xff", b"\x02\x00\x00\x00ab", &ticket[..ticket.len() / 2]] {
            assert_eq!(read_statement_ticket(garbage).map(|_| ()).map_err(|s| s.code()), Err(Code::InvalidArgument));
        }
    }

    #[test]
    fn basic_credentials_parsed() {
        let mut metadata = MetadataMap::new();
        assert!(matches!(basic_credentials(&metadata), Ok(None)));
        let header = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("alice:pa:ss"));
        metadata.insert("authorization", header.parse().unwrap_or_else(|_| tonic::metadata::MetadataValue::from_static("")));
        assert_eq!(basic_credentials(&metadata).ok().flatten(), Some(("alice".into(), "pa:ss".into())));
        // Unpadded, as arrow-go sends it: "alice:nope" is "YWxpY2U6bm9wZQ==" padded.
        metadata.insert("authorization", tonic::metadata::MetadataValue::from_static("Basic YWxpY2U6bm9wZQ"));
        assert_eq!(basic_credentials(&metadata).ok().flatten(), Some(("alice".into(), "nope".into())));
        metadata.insert("authorization", tonic::metadata::MetadataValue::from_static("Basic !!!"));
        assert_eq!(basic_credentials(&metadata).map_err(|s| s.code()).err(), Some(Code::Unauthenticated));
        metadata.insert("authorization", tonic::metadata::MetadataValue::from_static("Bearer abc"));
        assert!(matches!(basic_credentials(&metadata), Ok(None)));
    }

    #[test]
    fn errors_have_grpc_codes() {
        assert_eq!(status(&TesseraError::Plan("table 'x' not found".into())).code(), Code::InvalidArgument);
        assert_eq!(status(&TesseraError::NotImplemented("window frames".into())).code(), Code::Unimplemented);
        assert_eq!(status(&TesseraError::ResourcesExhausted("GPU memory".into())).code(), Code::ResourceExhausted);
        assert_eq!(status(&TesseraError::Internal("bug".into())).code(), Code::Internal);
        let s = status(&TesseraError::Plan("table 'x' not found".into()));
        assert_eq!(s.metadata().get("x-tessera-sqlstate").and_then(|v| v.to_str().ok()), Some("42P01"));
    }
}
