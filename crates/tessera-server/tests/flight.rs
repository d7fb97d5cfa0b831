//! Arrow Flight SQL against `tessera serve --flight-listen` over loopback, with
//! arrow-flight's own `FlightSqlServiceClient`: authentication, exact Arrow types,
//! DDL and DML, prepared statements, errors with their gRPC codes, catalog metadata.

use std::net::SocketAddr;
use std::sync::Arc;

use arrow::array::{Array, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, Int64Type, Schema};
use arrow_flight::error::FlightError;
use arrow_flight::sql::client::FlightSqlServiceClient;
use arrow_flight::sql::{CommandGetDbSchemas, CommandGetTables, SqlInfo};
use arrow_flight::{FlightInfo, IpcMessage};
use futures::TryStreamExt;
use tessera_engine::Database;
use tessera_server::auth::Users;
use tessera_server::{FlightServer, ServerOptions};
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A Flight SQL server over a new database in `dir`, serving on a task.
async fn start(dir: &std::path::Path, options: ServerOptions) -> Result<SocketAddr, Box<dyn std::error::Error>> {
    let server = FlightServer::bind(Database::open(dir)?, ServerOptions { listen: "127.0.0.1:0".parse()?, ..options }).await?;
    let addr = server.local_addr()?;
    tokio::spawn(server.run());
    Ok(addr)
}

async fn connect(addr: SocketAddr) -> Result<FlightSqlServiceClient<Channel>, Box<dyn std::error::Error>> {
    let channel = Endpoint::from_shared(format!("http://{addr}"))?.connect().await?;
    Ok(FlightSqlServiceClient::new(channel))
}

/// Every batch of every endpoint of `info`.
async fn fetch(client: &mut FlightSqlServiceClient<Channel>, info: FlightInfo) -> Result<Vec<RecordBatch>, FlightError> {
    let mut batches = Vec::new();
    for endpoint in info.endpoint {
        let ticket = endpoint.ticket.ok_or_else(|| FlightError::protocol("endpoint without a ticket"))?;
        let stream = client.do_get(ticket).await?;
        batches.extend(stream.try_collect::<Vec<_>>().await?);
    }
    Ok(batches)
}

async fn query(client: &mut FlightSqlServiceClient<Channel>, sql: &str) -> Result<Vec<RecordBatch>, FlightError> {
    let info = client.execute(sql.to_string(), None).await?;
    fetch(client, info).await
}

/// The gRPC status of a failed call.
fn status<T>(result: Result<T, FlightError>) -> Option<tonic::Status> {
    match result {
        Err(FlightError::Tonic(status)) => Some(*status),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_checks_the_password() -> TestResult {
    let dir = tempfile::tempdir()?;
    let users = Users::parse("alice:s3cret\n")?;
    let addr = start(dir.path(), ServerOptions { users, ..ServerOptions::default() }).await?;

    let mut client = connect(addr).await?;
    let refused = client.handshake("alice", "wrong").await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("password authentication failed for user"), "{message}");
    assert!(client.handshake("mallory", "s3cret").await.is_err());
    // Without a token every call is refused.
    assert_eq!(status(client.execute("SELECT 1".into(), None).await).map(|s| s.code()), Some(Code::Unauthenticated));
    client.set_token("made-up".into());
    assert_eq!(status(client.execute("SELECT 1".into(), None).await).map(|s| s.code()), Some(Code::Unauthenticated));
    client.clear_token();

    client.handshake("alice", "s3cret").await?;
    assert!(client.token().is_some());
    let batches = query(&mut client, "SELECT 41 + 1 AS answer").await?;
    assert_eq!(batches[0].column(0).as_primitive::<Int64Type>().value(0), 42);
    // The session lasts across calls: a setting made in one call holds in the next.
    client.execute_update("SET datafusion.execution.batch_size = 1234".into(), None).await?;
    let batches = query(&mut client, "SHOW datafusion.execution.batch_size").await?;
    let value = batches[0].column(1).as_string::<i32>().value(0).to_string();
    assert_eq!(value, "1234");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_writes_prepared_statements_and_errors() -> TestResult {
    let dir = tempfile::tempdir()?;
    let addr = start(dir.path(), ServerOptions::default()).await?;
    let mut client = connect(addr).await?;

    // DDL and DML through DoPut; INSERT reports its row count.
    let created = client
        .execute_update("CREATE TABLE t (id BIGINT NOT NULL, price DECIMAL(18,4), d DATE, name VARCHAR, f DOUBLE, ok BOOLEAN)".into(), None)
        .await?;
    assert_eq!(created, -1);
    let inserted = client
        .execute_update(
            "INSERT INTO t VALUES (1, 12345678901234.5678, DATE '2024-02-29', 'åbc', 0.1, true), \
             (2, -0.0001, DATE '1900-01-01', NULL, CAST('-2.5e-300' AS DOUBLE), false), (3, NULL, NULL, 'it''s', NULL, NULL)"
                .into(),
            None,
        )
        .await?;
    assert_eq!(inserted, 3);

    // The rows are visible, read back in their exact Arrow types.
    let info = client.execute("SELECT id, price, d, name, f, ok FROM t ORDER BY id".into(), None).await?;
    let announced = info.clone().try_decode_schema()?;
    let batches = fetch(&mut client, info).await?;
    let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches)?;
    let types: Vec<DataType> = batch.schema().fields().iter().map(|f| f.data_type().clone()).collect();
    assert_eq!(
        types,
        [DataType::Int64, DataType::Decimal128(18, 4), DataType::Date32, DataType::Utf8, DataType::Float64, DataType::Boolean]
    );
    assert_eq!(batch.schema().as_ref(), &announced, "DoGet sends the schema GetFlightInfo announced");
    assert_eq!(batch.num_rows(), 3);
    assert_eq!(batch.column(0).as_primitive::<Int64Type>().values().to_vec(), [1, 2, 3]);
    let price = batch.column(1).as_primitive::<Decimal128Type>();
    assert_eq!((price.value(0), price.value(1), price.is_null(2)), (123456789012345678, -1, true));
    let date = batch.column(2).as_primitive::<Date32Type>();
    assert_eq!((date.value(0), date.value(1), date.is_null(2)), (19782, -25567, true));
    let name = batch.column(3).as_string::<i32>();
    assert_eq!((name.value(0), name.is_null(1), name.value(2)), ("åbc", true, "it's"));
    let f = batch.column(4).as_primitive::<Float64Type>();
    assert_eq!((f.value(0), f.value(1), f.is_null(2)), (0.1, -2.5e-300, true));
    let ok = batch.column(5).as_boolean();
    assert_eq!((ok.value(0), ok.value(1), ok.is_null(2)), (true, false, true));

    // A prepared query with a parameter, bound from an Arrow batch.
    let mut prepared = client.prepare("SELECT name FROM t WHERE id = $1".into(), None).await?;
    assert_eq!(prepared.parameter_schema()?.field(0).data_type(), &DataType::Int64);
    assert_eq!(prepared.dataset_schema()?.field(0).data_type(), &DataType::Utf8);
    let params = Arc::new(Schema::new(vec![arrow::datatypes::Field::new("$1", DataType::Int64, false)]));
    prepared.set_parameters(RecordBatch::try_new(Arc::clone(&params), vec![Arc::new(Int64Array::from(vec![3]))])?)?;
    let info = prepared.execute().await?;
    let batches = fetch(&mut client, info).await?;
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    assert_eq!(batches[0].column(0).as_string::<i32>().value(0), "it's");
    let closed = prepared.clone();
    prepared.close().await?;
    let mut closed = closed;
    assert_eq!(status(closed.execute().await).map(|s| s.code()), Some(Code::NotFound));

    // A prepared update, one run per row of the bound batch.
    let mut insert = client.prepare("INSERT INTO t (id, name) VALUES ($1, $2)".into(), None).await?;
    let params = Arc::new(Schema::new(vec![
        arrow::datatypes::Field::new("$1", DataType::Int64, false),
        arrow::datatypes::Field::new("$2", DataType::Utf8, true),
    ]));
    let rows = RecordBatch::try_new(params, vec![Arc::new(Int64Array::from(vec![10, 11])), Arc::new(StringArray::from(vec![Some("x"), None]))])?;
    insert.set_parameters(rows)?;
    assert_eq!(insert.execute_update().await?, 2);
    let batches = query(&mut client, "SELECT count(*) AS n, count(name) AS named FROM t WHERE id >= 10").await?;
    assert_eq!(batches[0].column(0).as_primitive::<Int64Type>().value(0), 2);
    assert_eq!(batches[0].column(1).as_primitive::<Int64Type>().value(0), 1);

    // DDL and DML sent as queries (as ADBC's cursor.execute does) run at GetFlightInfo,
    // which answers with no endpoints to fetch.
    let info = client.execute("CREATE TABLE u AS SELECT 1 AS x".into(), None).await?;
    assert!(info.endpoint.is_empty());
    let info = client.execute("INSERT INTO u VALUES (2)".into(), None).await?;
    assert!(info.endpoint.is_empty());
    let batches = query(&mut client, "SELECT sum(x) FROM u").await?;
    assert_eq!(batches[0].column(0).as_primitive::<Int64Type>().value(0), 3);

    // Errors: the SQL's own are InvalidArgument with the engine's message and SQLSTATE.
    let missing = status(client.execute("SELECT * FROM missing_table".into(), None).await).ok_or("no error for a missing table")?;
    assert_eq!(missing.code(), Code::InvalidArgument);
    assert!(missing.message().contains("missing_table"), "{}", missing.message());
    assert_eq!(missing.metadata().get("x-tessera-sqlstate").and_then(|v| v.to_str().ok()), Some("42P01"));
    let syntax = status(client.execute("SELEKT 1".into(), None).await).ok_or("no error for bad syntax")?;
    assert_eq!(syntax.code(), Code::InvalidArgument);
    let zero = status(query(&mut client, "SELECT 1 / (id - id) FROM t").await).ok_or("no error for a division by zero")?;
    assert_eq!(zero.code(), Code::InvalidArgument, "{zero:?}");
    let update = status(client.execute_update("INSERT INTO missing_table VALUES (1)".into(), None).await).ok_or("no error")?;
    assert_eq!(update.code(), Code::InvalidArgument);

    // Catalog metadata, as ADBC's get_objects asks for it.
    let info = client
        .get_tables(CommandGetTables {
            catalog: None,
            db_schema_filter_pattern: Some("public".into()),
            table_name_filter_pattern: Some("t".into()),
            table_types: vec![],
            include_schema: true,
        })
        .await?;
    let batches = fetch(&mut client, info).await?;
    let tables = arrow::compute::concat_batches(&batches[0].schema(), &batches)?;
    assert_eq!(tables.num_rows(), 1, "{tables:?}");
    let column = |name: &str| tables.column_by_name(name).map(|c| c.as_string::<i32>().value(0).to_string());
    assert_eq!(column("catalog_name").as_deref(), Some("tessera"));
    assert_eq!(column("table_name").as_deref(), Some("t"));
    assert_eq!(column("table_type").as_deref(), Some("TABLE"));
    let schema_bytes = tables.column_by_name("table_schema").ok_or("no table_schema")?.as_binary::<i32>().value(0).to_vec();
    let schema = Schema::try_from(IpcMessage(schema_bytes.into()))?;
    assert_eq!(schema.field(1).data_type(), &DataType::Decimal128(18, 4));

    let info = client.get_catalogs().await?;
    let catalogs = fetch(&mut client, info).await?;
    assert_eq!(catalogs[0].column(0).as_string::<i32>().value(0), "tessera");
    let info = client.get_db_schemas(CommandGetDbSchemas { catalog: Some("tessera".into()), db_schema_filter_pattern: None }).await?;
    let schemas = fetch(&mut client, info).await?;
    let names: Vec<&str> = schemas.iter().flat_map(|b| b.column(1).as_string::<i32>().iter().flatten()).collect();
    assert_eq!(names, ["pg_catalog", "public"]);
    let info = client.get_table_types().await?;
    let kinds = fetch(&mut client, info).await?;
    assert!(kinds[0].column(0).as_string::<i32>().iter().any(|k| k == Some("TABLE")));
    let info = client.get_sql_info(vec![SqlInfo::FlightSqlServerName, SqlInfo::FlightSqlServerReadOnly]).await?;
    let sql_info = fetch(&mut client, info).await?;
    assert_eq!(sql_info[0].num_rows(), 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_over_the_limit_are_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let addr = start(dir.path(), ServerOptions { max_result_bytes: 1_000_000, ..ServerOptions::default() }).await?;
    let mut client = connect(addr).await?;
    let small = query(&mut client, "SELECT * FROM generate_series(1, 10)").await?;
    assert_eq!(small.iter().map(|b| b.num_rows()).sum::<usize>(), 10);
    let large = status(query(&mut client, "SELECT * FROM generate_series(1, 1000000)").await).ok_or("no error for a large result")?;
    assert_eq!(large.code(), Code::ResourceExhausted);
    assert!(large.message().contains("--max-result-bytes"), "{}", large.message());
    Ok(())
}
