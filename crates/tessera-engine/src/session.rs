//! A [`Database`] (one per data directory and process: the store, the executor with its
//! GPU context and caches) and its [`Session`]s (connections: settings, plan cache),
//! running SQL statements. Sessions of one database run statements at the same time;
//! writes are serialized by the store's write lock and each is atomic, so a reader sees
//! a table before or after a write, never part of one.
//!
//! Statements go to DataFusion for parsing, binding and optimization. Tessera handles
//! the ones that change the store itself — `CREATE TABLE [AS]`, `INSERT`, `COPY … FROM`,
//! `DROP TABLE` — each as one store transaction, so a statement that fails leaves the
//! store as it was. Queries are planned by DataFusion, turned into Tessera's pipeline
//! IR (`tessera-plan`) and run by `tessera-exec`; parts the IR cannot express run on
//! DataFusion inside the same plan. `SET tessera.engine = 'datafusion'` runs queries on
//! plain DataFusion instead (the reference the pipelines are tested against).

use std::path::Path;
use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, UInt64Array};
use datafusion::arrow::compute::cast_with_options;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider};
use datafusion::logical_expr::{CreateMemoryTable, DdlStatement, DmlStatement, DropTable, LogicalPlan, WriteOp};
use datafusion::logical_expr::dml::InsertOp;
use datafusion::execution::SessionStateBuilder;
use datafusion::optimizer::{Optimizer, OptimizerRule};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::common::{ParamValues, ScalarValue, TableReference};
use futures::StreamExt;
use tessera_common::{Result, TesseraError, not_impl_err};
use tessera_storage::{Store, TableWriter};

use crate::catalog::{CATALOG, SCHEMA, StoreCatalog, StoreSchema};
use crate::pg_catalog::{PG_CATALOG, PgCatalogSchema};
use crate::options::{TesseraOptions, parse_bytes};
use datafusion::arrow::array::StringArray;
use tessera_exec::{DevicePref, Executor, KernelOptions, Literals};
use crate::copy::{CopyFrom, CopyInput, parse_copy_from, parse_copy_to_stdout};
use crate::error::from_df;
use crate::split::split_statements;

/// The result of one statement: a schema and its rows. Statements that return nothing
/// (CREATE, DROP) have an empty schema; INSERT and COPY return one `count` row.
#[derive(Debug, Clone)]
pub struct QueryOutput {
    /// Schema of the rows.
    pub schema: SchemaRef,
    /// The rows.
    pub batches: Vec<RecordBatch>,
}

/// What a statement takes and returns ([`Session::describe`]).
#[derive(Debug, Clone)]
pub struct Description {
    /// The type of each placeholder, `$1` first (None: not known from the statement).
    pub parameters: Vec<Option<DataType>>,
    /// The schema of the rows it returns (empty: it returns none).
    pub schema: SchemaRef,
}

impl QueryOutput {
    fn empty() -> Self {
        QueryOutput { schema: Arc::new(Schema::empty()), batches: Vec::new() }
    }

    fn count(rows: u64) -> Self {
        let schema = Arc::new(Schema::new(vec![Field::new("count", DataType::UInt64, false)]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(UInt64Array::from(vec![rows]))]);
        QueryOutput { schema, batches: batch.into_iter().collect() }
    }

    /// Total number of rows.
    pub fn num_rows(&self) -> usize {
        self.batches.iter().map(|b| b.num_rows()).sum()
    }

    /// Whether the statement returns no result set at all (DDL).
    pub fn is_status_only(&self) -> bool {
        self.schema.fields().is_empty()
    }
}

/// One data directory opened by this process: the store and the executor (CPU backend,
/// GPU context, GPU column and kernel caches), shared by every [`Session`] of it, as
/// DuckDB's database object is by its connections.
///
/// The GPU runtime's settings (`tessera.gpu_memory_limit`, `tessera.kernel_literals`,
/// `tessera.gpu_items_per_thread`) belong to the database: each query applies its
/// session's values before it runs. EXPLAIN ANALYZE reports the executor's last runs,
/// which a query of another session running at the same time may have replaced.
pub struct Database {
    store: Arc<Store>,
    executor: Executor,
    /// Taken (waiting without blocking a thread) before a session begins a write: the
    /// store's write lock is a file lock that blocks its thread, and a write holds it
    /// across awaits (INSERT … SELECT runs a query), so the writers of this process
    /// queue here and only one at a time waits on the file lock (for other processes).
    writes: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database").field("data_dir", &self.store.dir()).finish()
    }
}

impl Database {
    /// Opens (creating if needed) the data directory.
    pub fn open(data_dir: impl AsRef<Path>) -> Result<Arc<Database>> {
        let store = Arc::new(Store::open(data_dir)?);
        let executor = Executor::new(Arc::clone(&store));
        Ok(Arc::new(Database { store, executor, writes: tokio::sync::Mutex::new(()) }))
    }

    /// The executor: CPU backend, GPU runtime (opened on first use) and their caches.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The store.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// A new session (connection) of this database, with default settings.
    pub fn connect(self: &Arc<Self>) -> Result<Session> {
        Session::connect(self)
    }

    /// Begins a store write: waits for this process's other writers (see `writes`),
    /// then for the store's write lock. The write is done when both are dropped.
    async fn begin_write(&self) -> Result<(tokio::sync::MutexGuard<'_, ()>, tessera_storage::Transaction<'_>)> {
        let writing = self.writes.lock().await;
        Ok((writing, self.store.begin()?))
    }
}

/// A connection to a [`Database`]: its own settings (`SET`) and plan cache.
pub struct Session {
    ctx: SessionContext,
    db: Arc<Database>,
    plans: PlanCache,
}

/// Planned queries by statement text, so that a repeated query skips parsing,
/// DataFusion's optimizer and pipeline planning (together about 1–3 ms for an SSB
/// query, as much as the GPU needs to run it at SF 20).
///
/// An entry is valid for the store's manifest version it was planned against (every
/// committed write bumps it, so statistics and schemas are current); any statement that
/// is not a query (`SET`, DDL, writes) clears the cache, since settings and DataFusion's
/// catalog shape plans. Only plans that run wholly as pipelines over store tables, with
/// only immutable functions, are kept: DataFusion folds `now()` while optimizing, and
/// fallback subtrees hold per-run state.
struct PlanCache {
    entries: tessera_common::TextCache<CachedPlan>,
}

impl Default for PlanCache {
    fn default() -> Self {
        PlanCache { entries: tessera_common::TextCache::new(PLAN_CACHE_ENTRIES) }
    }
}

/// Entries kept at most; the cache is cleared when full (queries repeat or they do not).
const PLAN_CACHE_ENTRIES: usize = 256;

/// Times a statement is planned and run when its tables change under it each time
/// (another session committing writes to them as fast as it can). 5 until 2026-11-29:
/// a reader among 64 clients inserting into its table in a loop lost the race 5 times
/// running, once, on the 2-core CI machine (`tessera-server`'s
/// `many_clients_read_and_write`). Reading the planned version (a snapshot) instead of
/// replanning would remove the race; until then a reader replans up to 10 times.
const STALE_PLAN_ATTEMPTS: u32 = 10;

#[derive(Clone)]
struct CachedPlan {
    manifest_version: u64,
    planned: Arc<tessera_plan::PlannedQuery>,
    schema: SchemaRef,
}

impl PlanCache {
    fn get(&self, sql: &str, manifest_version: u64) -> Option<CachedPlan> {
        self.entries.get(sql).filter(|c| c.manifest_version == manifest_version)
    }

    fn insert(&self, sql: &str, plan: CachedPlan) {
        self.entries.insert(sql.to_string(), plan);
    }

    fn clear(&self) {
        self.entries.clear();
    }
}

/// Whether a plan may be cached: no function whose result can change between runs.
fn is_repeatable(plan: &LogicalPlan) -> bool {
    use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
    use datafusion::logical_expr::{Expr, Volatility};
    let mut ok = true;
    let _ = plan.apply_with_subqueries(|node| {
        let _ = node.apply_expressions(|e| {
            let _ = e.apply(|x| {
                if let Expr::ScalarFunction(f) = x {
                    if f.func.signature().volatility != Volatility::Immutable {
                        ok = false;
                        return Ok(TreeNodeRecursion::Stop);
                    }
                }
                Ok(TreeNodeRecursion::Continue)
            });
            Ok(if ok { TreeNodeRecursion::Continue } else { TreeNodeRecursion::Stop })
        });
        Ok(if ok { TreeNodeRecursion::Continue } else { TreeNodeRecursion::Stop })
    });
    ok
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("data_dir", &self.db.store.dir()).finish()
    }
}

impl Session {
    /// Opens (creating if needed) the data directory as a database of its own and
    /// connects to it (the shell and one-shot commands).
    pub fn open(data_dir: impl AsRef<Path>) -> Result<Session> {
        Database::open(data_dir)?.connect()
    }

    /// A new session of `db`: DataFusion set up over its store.
    pub fn connect(db: &Arc<Database>) -> Result<Session> {
        let store = Arc::clone(&db.store);
        let mut config = SessionConfig::new()
            .with_information_schema(true)
            .with_default_catalog_and_schema(CATALOG, SCHEMA)
            .with_create_default_catalog_and_schema(false);
        let options = config.options_mut();
        options.extensions.insert(TesseraOptions::default());
        // Exact decimals: 0.1 is DECIMAL(1,1), not a binary float (as in PostgreSQL and DuckDB).
        options.sql_parser.parse_float_as_decimal = true;
        // VARCHAR is Utf8 in the store (dictionary-encoded when loaded), not Utf8View.
        options.sql_parser.map_string_types_to_utf8view = false;
        // Constant arithmetic is checked before DataFusion folds it (see `checked`), and
        // DISTINCT aggregates DataFusion leaves as they are become joined aggregations
        // (see `distinct`).
        let mut rules = Vec::new();
        for rule in Optimizer::new().rules {
            if rule.name() == "simplify_expressions" {
                rules.push(Arc::new(crate::checked::CheckedConstants) as Arc<dyn OptimizerRule + Send + Sync>);
            }
            let single_distinct = rule.name() == "single_distinct_aggregation_to_group_by";
            rules.push(rule);
            if single_distinct {
                rules.push(Arc::new(crate::distinct::DistinctAggregates) as Arc<dyn OptimizerRule + Send + Sync>);
            }
        }
        let state = SessionStateBuilder::new().with_config(config).with_default_features().with_optimizer_rules(rules).build();
        let ctx = SessionContext::new_with_state(state).enable_url_table();
        let catalog = MemoryCatalogProvider::new();
        let public = Arc::new(StoreSchema::new(Arc::clone(&store)));
        catalog.register_schema(SCHEMA, Arc::clone(&public) as _).map_err(from_df)?;
        catalog.register_schema(PG_CATALOG, Arc::new(PgCatalogSchema::new(Arc::clone(&public)))).map_err(from_df)?;
        ctx.register_catalog(CATALOG, Arc::new(catalog));
        crate::table_functions::register(&ctx, &store);
        crate::pg_catalog::register_functions(&ctx, &public);
        Ok(Session { ctx, db: Arc::clone(db), plans: PlanCache::default() })
    }

    /// The database this session is connected to.
    pub fn database(&self) -> &Arc<Database> {
        &self.db
    }

    /// The store this session reads and writes.
    pub fn store(&self) -> &Arc<Store> {
        &self.db.store
    }

    /// The DataFusion context (for planning and for peers in benchmarks).
    pub fn context(&self) -> &SessionContext {
        &self.ctx
    }

    /// Runs every statement of `sql` in order, stopping at the first error (statements
    /// before it stay committed, as in any SQL shell).
    pub async fn sql(&self, sql: &str) -> Result<Vec<QueryOutput>> {
        let mut out = Vec::new();
        for statement in split_statements(sql) {
            out.push(self.execute(&statement).await?);
        }
        Ok(out)
    }

    /// Runs one statement. A query whose tables another session changed between its
    /// planning and its run is planned and run again (a few times at most).
    pub async fn execute(&self, statement: &str) -> Result<QueryOutput> {
        self.execute_with(statement, None).await
    }

    /// Runs one statement with values for its placeholders `$1`, `$2`, … (a prepared
    /// statement of a client protocol). Values are bound into the logical plan, never
    /// into the text; a parameterized query is not kept in the plan cache.
    pub async fn execute_with_params(&self, statement: &str, params: Vec<ScalarValue>) -> Result<QueryOutput> {
        self.execute_with(statement, Some(ParamValues::List(params.into_iter().map(Into::into).collect()))).await
    }

    /// Loads the rows a client sent for `copy` (a `COPY … FROM STDIN` of
    /// [`parse_copy_from`]), in its text or CSV format, into its table: one store
    /// transaction, so a value that does not parse (or any other error) leaves the table
    /// as it was. Returns the `count` of rows loaded.
    pub async fn copy_from_stdin(&self, copy: &CopyFrom, data: &[u8]) -> Result<QueryOutput> {
        let (_writing, mut tx) = self.db.begin_write().await?;
        let mut writer = tx.writer(&copy.table, false)?;
        self.set_dictionary_max(&mut writer)?;
        let rows = copy.load_bytes(data, &mut writer)?;
        writer.finish()?;
        tx.commit()?;
        Ok(QueryOutput::count(rows))
    }

    /// The number of columns a `COPY … FROM` fills, after checking that its table and
    /// columns exist (before a client is asked for the rows).
    pub fn copy_columns(&self, copy: &CopyFrom) -> Result<usize> {
        let manifest = self.db.store.manifest()?;
        let Some(table) = manifest.table(&copy.table) else {
            return Err(TesseraError::Plan(format!("table '{}' does not exist", copy.table)));
        };
        copy.data_columns(&table.schema()?)
    }

    /// What a statement takes and returns, without running it: the type of each
    /// placeholder (`$1` first; None where the statement does not tell) and the schema
    /// of its rows (empty for statements that return none: DDL, DML, COPY, SET).
    pub async fn describe(&self, statement: &str) -> Result<Description> {
        // A COPY's table and columns are checked here, so that a client preparing it
        // learns of a wrong name before it starts sending rows.
        if let Some(copy) = parse_copy_from(statement)? {
            self.copy_columns(&copy)?;
            return Ok(Description { parameters: Vec::new(), schema: Arc::new(Schema::empty()) });
        }
        if parse_copy_to_stdout(statement)?.is_some() {
            return Ok(Description { parameters: Vec::new(), schema: Arc::new(Schema::empty()) });
        }
        let plan = self.logical_plan(statement).await?;
        let types = plan.get_parameter_types().map_err(from_df)?;
        let mut parameters = Vec::new();
        for (name, ty) in types {
            let index = name.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()).filter(|&n| n > 0).ok_or_else(|| {
                TesseraError::Plan(format!("placeholder {name}: only numbered placeholders $1, $2, … are supported"))
            })?;
            if parameters.len() < index {
                parameters.resize(index, None);
            }
            parameters[index - 1] = ty;
        }
        let returns_rows = !matches!(plan, LogicalPlan::Ddl(_) | LogicalPlan::Dml(_) | LogicalPlan::Statement(_) | LogicalPlan::Copy(_));
        let schema = if returns_rows { Arc::new(plan.schema().as_arrow().clone()) } else { Arc::new(Schema::empty()) };
        Ok(Description { parameters, schema })
    }

    /// The logical plan of one statement: parsed with the session's dialect, its
    /// PostgreSQL-only spellings rewritten ([`crate::pg_compat`]), then planned.
    async fn logical_plan(&self, sql: &str) -> Result<LogicalPlan> {
        let state = self.ctx.state();
        let dialect = state.config().options().sql_parser.dialect;
        let mut statement = state.sql_to_statement(sql, &dialect).map_err(from_df)?;
        crate::pg_compat::rewrite(&mut statement);
        let empty = crate::pg_compat::empty_catalog_answer(&statement);
        match (state.statement_to_plan(statement).await, empty) {
            (Ok(plan), _) => Ok(plan),
            // A catalog query DataFusion cannot plan, whose answer is known to be no rows.
            (Err(_), Some(columns)) => {
                let mut builder = datafusion::logical_expr::LogicalPlanBuilder::empty(false);
                let nulls = columns.iter().map(|c| datafusion::prelude::lit(ScalarValue::Utf8(None)).alias(c));
                builder = builder.project(nulls).map_err(from_df)?;
                builder.build().map_err(from_df)
            }
            (Err(e), None) => Err(from_df(e)),
        }
    }

    async fn execute_with(&self, statement: &str, params: Option<ParamValues>) -> Result<QueryOutput> {
        let mut attempt = 1;
        loop {
            match self.execute_once(statement, params.as_ref()).await {
                Err(TesseraError::StalePlan(_)) if attempt < STALE_PLAN_ATTEMPTS => {
                    self.plans.clear();
                    attempt += 1;
                }
                Err(TesseraError::StalePlan(m)) => {
                    return Err(TesseraError::Execution(format!("tables kept changing while the query was planned ({attempt} attempts): {m}")));
                }
                other => return other,
            }
        }
    }

    async fn execute_once(&self, statement: &str, params: Option<&ParamValues>) -> Result<QueryOutput> {
        tessera_common::trace::mark("statement");
        if let Some(copy) = parse_copy_from(statement)? {
            if params.is_some_and(|p| !matches!(p, ParamValues::List(l) if l.is_empty())) {
                return Err(TesseraError::Plan("COPY takes no parameters".into()));
            }
            if copy.input == CopyInput::Stdin {
                return not_impl_err!(
                    "COPY FROM STDIN needs a client that sends the rows (psql's \\copy, a driver's COPY API) through `tessera serve`; here, name a file"
                );
            }
            let (_writing, mut tx) = self.db.begin_write().await?;
            let mut writer = tx.writer(&copy.table, false)?;
            self.set_dictionary_max(&mut writer)?;
            let rows = copy.load(&mut writer)?;
            writer.finish()?;
            tx.commit()?;
            return Ok(QueryOutput::count(rows));
        }
        if parse_copy_to_stdout(statement)?.is_some() {
            return not_impl_err!("COPY … TO STDOUT needs a client that reads the rows (psql, a driver's COPY API) through `tessera serve`; here, name a file");
        }
        let manifest = self.db.store.manifest()?;
        let version = manifest.version;
        if let Some(hit) = self.plans.get(statement, version).filter(|_| params.is_none()) {
            tessera_common::trace::mark("cached plan found");
            let batches = self.db.executor.run_at(&hit.planned, &self.ctx, &hit.schema, self.device()?, Some(manifest)).await?;
            tessera_common::trace::mark("executor returned");
            return Ok(QueryOutput { schema: hit.schema, batches });
        }
        let mut plan = self.logical_plan(statement).await?;
        if let Some(params) = params {
            plan = plan.with_param_values(params.clone()).map_err(from_df)?;
        }
        if !is_query(&plan) {
            self.plans.clear();
        }
        match plan {
            LogicalPlan::Ddl(DdlStatement::CreateMemoryTable(create)) => self.create_table(create).await,
            LogicalPlan::Ddl(DdlStatement::DropTable(drop)) if self.is_store_table(&drop.name)? => {
                self.drop_table(drop).await
            }
            LogicalPlan::Dml(dml) if self.is_store_table(&dml.table_name)? => self.write(dml).await,
            LogicalPlan::Explain(explain) if !self.use_datafusion() => {
                let inner = self.ctx.state().optimize(&explain.plan).map_err(from_df)?;
                let mut planned = self.plan_optimized(&inner)?;
                self.db.executor.place(&mut planned.plan, self.device()?);
                let df = self.ctx.execute_logical_plan(LogicalPlan::Explain(explain)).await.map_err(from_df)?;
                let schema = Arc::new(df.schema().as_arrow().clone());
                let mut batches = df.collect().await.map_err(from_df)?;
                if schema.fields().len() == 2 {
                    let text = planned.plan.to_string();
                    let row = RecordBatch::try_new(
                        Arc::clone(&schema),
                        vec![
                            Arc::new(StringArray::from(vec!["tessera_plan"])),
                            Arc::new(StringArray::from(vec![text.trim_end()])),
                        ],
                    );
                    if let Ok(row) = row {
                        batches.push(row);
                    }
                }
                Ok(QueryOutput { schema, batches })
            }
            LogicalPlan::Analyze(analyze) if !self.use_datafusion() && is_query(&analyze.input) => {
                self.explain_analyze(analyze.input.as_ref().clone()).await
            }
            plan if is_query(&plan) && !self.use_datafusion() => {
                let cache = (is_repeatable(&plan) && params.is_none()).then_some((statement, version));
                self.run_pipelines(plan, cache).await
            }
            plan => {
                let df = self.ctx.execute_logical_plan(plan).await.map_err(from_df)?;
                let schema = Arc::new(df.schema().as_arrow().clone());
                let batches = df.collect().await.map_err(from_df)?;
                Ok(QueryOutput { schema, batches })
            }
        }
    }

    /// Whether `SET tessera.engine = 'datafusion'` is in effect.
    fn use_datafusion(&self) -> bool {
        crate::options::plain_datafusion(self.ctx.state().config().options())
    }

    /// EXPLAIN ANALYZE: runs the query through pipelines and reports the plan with its
    /// placement, the wall time, per CPU pipeline its rows and times (the parallel
    /// morsels, then the sink's finish), and per GPU pipeline its kernel time, the bytes it must
    /// read (the bandwidth model) and the achieved bandwidth against the measured peak.
    async fn explain_analyze(&self, plan: LogicalPlan) -> Result<QueryOutput> {
        let start = std::time::Instant::now();
        let optimized = self.ctx.state().optimize(&plan).map_err(from_df)?;
        let planned = self.plan_optimized(&optimized)?;
        let planning = start.elapsed().as_secs_f64() * 1e3;
        let mut placed = planned.plan.clone();
        self.db.executor.place(&mut placed, self.device()?);
        let start = std::time::Instant::now();
        let rows = if planned.is_fully_external() {
            self.run_pipelines(plan, None).await?.num_rows()
        } else {
            let schema = Arc::new(optimized.schema().as_arrow().clone());
            let batches = self.db.executor.run(&planned, &self.ctx, &schema, self.device()?).await?;
            batches.iter().map(|b| b.num_rows()).sum()
        };
        let wall = start.elapsed().as_secs_f64() * 1e3;
        let mut lines = vec![format!(
            "query: {wall:.3} ms wall to run, {rows} rows; planning {planning:.3} ms (DataFusion's optimizer and pipeline planning, with a GPU also placing both plan shapes; skipped when the plan is cached)"
        )];
        let threads = self.db.executor.cpu_threads();
        for r in self.db.executor.last_runs() {
            let run = &r.run;
            lines.push(if r.cpu {
                format!(
                    "{} [CPU]: {} rows in, {} rows out, {:.3} ms: morsels {:.3} ms on {threads} threads, sink's finish {:.3} ms",
                    r.step,
                    run.rows_in,
                    run.rows_out,
                    run.morsels_ms + run.finish_ms,
                    run.morsels_ms,
                    run.finish_ms
                )
            } else {
                format!("{} [DataFusion]: {} rows out, {:.3} ms", r.step, run.rows_out, run.morsels_ms)
            });
        }
        if let Some(gpu) = self.db.executor.gpu() {
            let peak = gpu.bandwidth_gbs();
            lines.push(format!(
                "GPU: {}, measured read bandwidth {}",
                gpu.device().name(),
                peak.map(|p| format!("{p:.0} GB/s")).unwrap_or_else(|| "unknown".into())
            ));
            let runs = gpu.last_runs();
            let mut model_ms = 0.0;
            for r in &runs {
                let gbs = if r.kernel_ms > 0.0 { r.bytes as f64 / (r.kernel_ms / 1e3) / 1e9 } else { 0.0 };
                let model = peak.map(|p| r.bytes as f64 / (p * 1e9) * 1e3).unwrap_or(0.0);
                model_ms += model;
                let phases: String = r.phases.iter().map(|(name, ms)| format!("; {name} at {ms:.3} ms")).collect();
                lines.push(format!(
                    "pipeline {} [GPU]: {} rows in, {} rows out, kernel {:.3} ms (host {:.3} ms{phases}), reads {:.1} MB (model {:.3} ms at peak), {:.0} GB/s{}",
                    r.pipeline,
                    r.rows,
                    r.rows_out,
                    r.kernel_ms,
                    r.host_ms,
                    r.bytes as f64 / 1e6,
                    model,
                    gbs,
                    peak.map(|p| format!(" = {:.0}% of peak", gbs / p * 100.0)).unwrap_or_default()
                ));
            }
            let kernels: f64 = runs.iter().map(|r| r.kernel_ms).sum();
            let host: f64 = runs.iter().map(|r| r.host_ms).sum();
            let placement = gpu.last_placement_ms.lock().map(|t| *t).unwrap_or(0.0);
            let (cached_bytes, cached_columns) = gpu.cached_columns();
            let (reserved, waited) = gpu.last_admission.lock().map(|a| *a).unwrap_or((0, 0.0));
            let (build_bytes, builds) = gpu.cached_builds();
            lines.push(format!(
                "GPU kernels: {kernels:.3} ms in total, bandwidth model {model_ms:.3} ms; GPU pipelines {host:.3} ms on the host; placement and code generation {placement:.3} ms; admitted with {:.1} MB of GPU memory reserved after {waited:.3} ms; GPU column cache {:.1} MB in {cached_columns} columns; build cache {:.1} MB in {builds} hash tables",
                reserved as f64 / 1e6,
                cached_bytes as f64 / 1e6,
                build_bytes as f64 / 1e6
            ));
        }
        let schema = Arc::new(Schema::new(vec![
            Field::new("plan_type", DataType::Utf8, false),
            Field::new("plan", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            Arc::clone(&schema),
            vec![
                Arc::new(StringArray::from(vec!["tessera_plan", "tessera_analyze"])),
                Arc::new(StringArray::from(vec![placed.to_string().trim_end().to_string(), lines.join("\n")])),
            ],
        )
        .map_err(|e| TesseraError::Internal(e.to_string()))?;
        Ok(QueryOutput { schema, batches: vec![batch] })
    }

    /// The `tessera.device` setting; also applies `tessera.gpu_memory_limit`,
    /// `tessera.gpu_compact_tables`, `tessera.kernel_literals` and
    /// `tessera.gpu_items_per_thread` to the GPU (called before every query run, so they take
    /// effect at the next query).
    /// Applies `tessera.dictionary_max_distinct` (when set) to a table being written.
    fn set_dictionary_max(&self, writer: &mut tessera_storage::TableWriter<'_, '_>) -> Result<()> {
        let state = self.ctx.state();
        let n = state.config().options().extensions.get::<TesseraOptions>().map_or(0, |o| o.dictionary_max_distinct);
        let max = tessera_storage::DICTIONARY_MAX_DISTINCT;
        if n > max {
            return Err(TesseraError::Plan(format!("tessera.dictionary_max_distinct must be at most {max} (0: that default), not {n}")));
        }
        if n > 0 {
            writer.dictionary_max_distinct(n);
        }
        Ok(())
    }

    fn device(&self) -> Result<DevicePref> {
        // Read under the lock rather than through `ctx.state()`, which clones the whole
        // session state (its function maps too) on every query.
        let options = self.ctx.state_ref().read().config().options().extensions.get::<TesseraOptions>().cloned().unwrap_or_default();
        let value = options.device;
        let device = DevicePref::parse(&value)
            .ok_or_else(|| TesseraError::Plan(format!("tessera.device must be 'auto', 'gpu' or 'cpu', not '{value}'")))?;
        let limit = options.gpu_memory_limit.trim();
        let limit = if limit.is_empty() {
            None
        } else {
            Some(parse_bytes(limit).ok_or_else(|| {
                TesseraError::Plan(format!("tessera.gpu_memory_limit must be a size such as '40GB' or '512MiB', not '{limit}'"))
            })?)
        };
        let literals = match options.kernel_literals.trim().to_ascii_lowercase().as_str() {
            "inline" => Literals::Inline,
            "parameters" => Literals::Parameters,
            other => {
                return Err(TesseraError::Plan(format!(
                    "tessera.kernel_literals must be 'inline' or 'parameters', not '{other}'"
                )));
            }
        };
        let items_per_thread = match options.gpu_items_per_thread {
            0 => None,
            n if n <= tessera_exec::MAX_ITEMS_PER_THREAD => Some(n),
            n => {
                return Err(TesseraError::Plan(format!(
                    "tessera.gpu_items_per_thread must be 0 (chosen per pipeline) or 1 to {}, not {n}",
                    tessera_exec::MAX_ITEMS_PER_THREAD
                )));
            }
        };
        let compact = tessera_exec::gpu::CompactTables::parse(&options.gpu_compact_tables).ok_or_else(|| {
            TesseraError::Plan(format!("tessera.gpu_compact_tables must be 'auto', 'always' or 'never', not '{}'", options.gpu_compact_tables))
        })?;
        if device != DevicePref::Cpu {
            self.db.executor.set_gpu_memory_limit(limit);
            self.db.executor.set_gpu_compact_tables(compact);
            self.db.executor.set_kernel_options(KernelOptions { literals, items_per_thread, ..KernelOptions::default() });
        }
        Ok(device)
    }

    /// Plans a query into pipelines (DataFusion's optimizer first) and runs it; with
    /// `cache` (its text and the manifest version it was planned against) keeps the plan
    /// for the next run of the same text where that is safe (see [`PlanCache`]).
    async fn run_pipelines(&self, plan: LogicalPlan, cache: Option<(&str, u64)>) -> Result<QueryOutput> {
        let optimized = self.ctx.state().optimize(&plan).map_err(from_df)?;
        let schema = Arc::new(optimized.schema().as_arrow().clone());
        let planned = self.plan_optimized(&optimized)?;
        if let Some((sql, manifest_version)) = cache {
            if planned.externals.is_empty() && !planned.is_fully_external() {
                let planned = Arc::new(planned);
                self.plans.insert(sql, CachedPlan { manifest_version, planned: Arc::clone(&planned), schema: Arc::clone(&schema) });
                let batches = self.db.executor.run(&planned, &self.ctx, &schema, self.device()?).await?;
                return Ok(QueryOutput { schema, batches });
            }
        }
        if planned.is_fully_external() {
            let df = self.ctx.execute_logical_plan(plan).await.map_err(from_df)?;
            let schema = Arc::new(df.schema().as_arrow().clone());
            let batches = df.collect().await.map_err(from_df)?;
            return Ok(QueryOutput { schema, batches });
        }
        let batches = self.db.executor.run(&planned, &self.ctx, &schema, self.device()?).await?;
        Ok(QueryOutput { schema, batches })
    }

    /// What plans are made for (`tessera.plan_for`): a fixed target, or None to choose
    /// per query (`auto` with a GPU the session may use).
    fn plan_target(&self) -> Result<Option<tessera_plan::Target>> {
        let state = self.ctx.state();
        let value = state.config().options().extensions.get::<TesseraOptions>().map(|o| o.plan_for.to_ascii_lowercase()).unwrap_or_default();
        Ok(match value.trim() {
            "gpu" => Some(tessera_plan::Target::Gpu),
            "cpu" => Some(tessera_plan::Target::Cpu),
            "auto" | "" if self.db.executor.gpu().is_some() && self.device()? != DevicePref::Cpu => None,
            "auto" | "" => Some(tessera_plan::Target::Cpu),
            other => return Err(TesseraError::Plan(format!("tessera.plan_for must be 'auto', 'gpu' or 'cpu', not '{other}'"))),
        })
    }

    /// The pipeline plan of an optimized logical plan. With a GPU and `tessera.plan_for =
    /// 'auto'`, the query is planned for both targets and the plan shaped for the GPU is
    /// taken when its placement puts more table rows on the GPU than the other's: a
    /// membership table or a unique-key build pays off only where the GPU builds and
    /// probes it (TPC-H q22's customers, whose phone prefixes keep them on the CPU, are
    /// marked faster than orders are built into a membership table there).
    fn plan_optimized(&self, optimized: &LogicalPlan) -> Result<tessera_plan::PlannedQuery> {
        self.plan_shaped(optimized, self.plan_target()?)
    }

    /// The pipeline plan of an optimized logical plan for `target`, or (None) for the
    /// target whose placement puts more table rows on the GPU (see [`Session::plan_optimized`]).
    fn plan_shaped(&self, optimized: &LogicalPlan, target: Option<tessera_plan::Target>) -> Result<tessera_plan::PlannedQuery> {
        Ok(match target {
            Some(target) => tessera_plan::plan_for(optimized, &StoreCatalog, target),
            None => {
                let device = self.device()?;
                let gpu = tessera_plan::plan_for(optimized, &StoreCatalog, tessera_plan::Target::Gpu);
                let cpu = tessera_plan::plan_for(optimized, &StoreCatalog, tessera_plan::Target::Cpu);
                if gpu.plan != cpu.plan && self.db.executor.gpu_rows(&gpu.plan, device) > self.db.executor.gpu_rows(&cpu.plan, device) {
                    gpu
                } else {
                    cpu
                }
            }
        })
    }

    /// The Tessera plan of a query, as EXPLAIN prints it.
    pub async fn plan_query(&self, sql: &str) -> Result<tessera_ir::QueryPlan> {
        self.placed_plan(sql, None).await
    }

    /// [`Session::plan_query`] made for `target` whatever this machine has.
    pub async fn plan_query_for(&self, sql: &str, target: tessera_plan::Target) -> Result<tessera_ir::QueryPlan> {
        self.placed_plan(sql, Some(target)).await
    }

    /// The plan of `sql` for `target` (None: as queries run), placed.
    async fn placed_plan(&self, sql: &str, target: Option<tessera_plan::Target>) -> Result<tessera_ir::QueryPlan> {
        let plan = self.logical_plan(sql).await?;
        let optimized = self.ctx.state().optimize(&plan).map_err(from_df)?;
        let target = match target {
            Some(t) => Some(t),
            None => self.plan_target()?,
        };
        let mut plan = self.plan_shaped(&optimized, target)?.plan;
        self.db.executor.place(&mut plan, self.device()?);
        Ok(plan)
    }

    /// The executor (its counters: pipelines run, DataFusion fallbacks run).
    pub fn executor(&self) -> &Executor {
        self.db.executor()
    }

    /// The unqualified name of a table in the store's schema, or an error for a name in
    /// another catalog or schema.
    fn store_name(&self, name: &TableReference) -> Result<String> {
        let ours = name.catalog().is_none_or(|c| c == CATALOG) && name.schema().is_none_or(|s| s == SCHEMA);
        if !ours {
            return not_impl_err!("tables can only be stored in {CATALOG}.{SCHEMA}, not in {name}");
        }
        Ok(name.table().to_string())
    }

    fn is_store_table(&self, name: &TableReference) -> Result<bool> {
        let table = self.store_name(name)?;
        Ok(self.db.store.manifest()?.table(&table).is_some())
    }

    async fn create_table(&self, create: CreateMemoryTable) -> Result<QueryOutput> {
        let name = self.store_name(&create.name)?;
        if !create.column_defaults.is_empty() {
            return not_impl_err!("column DEFAULT values are not supported yet (table '{name}')");
        }
        if !create.constraints.is_empty() {
            return not_impl_err!(
                "constraints (PRIMARY KEY, UNIQUE) are not enforced by Tessera yet; create '{name}' without them"
            );
        }
        if create.temporary {
            return not_impl_err!("temporary tables are not supported yet");
        }
        let is_ctas = !matches!(create.input.as_ref(), LogicalPlan::EmptyRelation(_));
        let schema = store_schema(create.input.schema().as_arrow(), is_ctas);
        let (_writing, mut tx) = self.db.begin_write().await?;
        if !tx.create_table(&name, &schema, create.if_not_exists, create.or_replace)? {
            return Ok(QueryOutput::empty());
        }
        if is_ctas {
            let mut writer = tx.writer(&name, true)?;
            self.set_dictionary_max(&mut writer)?;
            self.write_plan(create.input.as_ref().clone(), &mut writer).await?;
            writer.finish()?;
        }
        tx.commit()?;
        Ok(QueryOutput::empty())
    }

    async fn drop_table(&self, drop: DropTable) -> Result<QueryOutput> {
        let name = self.store_name(&drop.name)?;
        let (_writing, mut tx) = self.db.begin_write().await?;
        tx.drop_table(&name, drop.if_exists)?;
        tx.commit()?;
        Ok(QueryOutput::empty())
    }

    async fn write(&self, dml: DmlStatement) -> Result<QueryOutput> {
        let name = self.store_name(&dml.table_name)?;
        let overwrite = match dml.op {
            WriteOp::Insert(InsertOp::Append) => false,
            WriteOp::Insert(InsertOp::Overwrite) => true,
            WriteOp::Insert(InsertOp::Replace) => return not_impl_err!("REPLACE INTO is not supported"),
            op => return not_impl_err!("{} is not supported yet on stored tables", op.name()),
        };
        let (_writing, mut tx) = self.db.begin_write().await?;
        let mut writer = tx.writer(&name, overwrite)?;
        self.set_dictionary_max(&mut writer)?;
        let rows = self.write_plan(dml.input.as_ref().clone(), &mut writer).await?;
        writer.finish()?;
        tx.commit()?;
        Ok(QueryOutput::count(rows))
    }

    /// Executes `plan` and streams its rows into `writer`, converting them to the
    /// table's column types (a value that does not fit is an error, never truncated).
    async fn write_plan(&self, plan: LogicalPlan, writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        // Batches are built nullable; the store's writer reports NOT NULL violations.
        let target = crate::copy::nullable(writer.schema());
        let df = self.ctx.execute_logical_plan(plan).await.map_err(from_df)?;
        let mut stream = df.execute_stream().await.map_err(from_df)?;
        let mut rows = 0;
        while let Some(batch) = stream.next().await {
            let batch = batch.map_err(from_df)?;
            let mut columns = Vec::with_capacity(batch.num_columns());
            for (column, field) in batch.columns().iter().zip(target.fields()) {
                if column.data_type() == field.data_type() {
                    columns.push(Arc::clone(column));
                } else {
                    columns.push(cast_with_options(column, field.data_type(), &crate::copy::STRICT).map_err(|e| {
                        TesseraError::Execution(format!(
                            "cannot store {} value in column '{}' of type {}: {e}",
                            column.data_type(),
                            field.name(),
                            field.data_type()
                        ))
                    })?);
                }
            }
            let batch = RecordBatch::try_new(Arc::clone(&target), columns)
                .map_err(|e| TesseraError::Execution(format!("{e}")))?;
            rows += batch.num_rows() as u64;
            writer.write(&batch)?;
        }
        Ok(rows)
    }
}

/// Whether a plan is a query (rows out, nothing changed) that pipelines can run.
fn is_query(plan: &LogicalPlan) -> bool {
    matches!(
        plan,
        LogicalPlan::Projection(_)
            | LogicalPlan::Filter(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Sort(_)
            | LogicalPlan::Limit(_)
            | LogicalPlan::Join(_)
            | LogicalPlan::TableScan(_)
            | LogicalPlan::SubqueryAlias(_)
            | LogicalPlan::Union(_)
            | LogicalPlan::Window(_)
            | LogicalPlan::Distinct(_)
    )
}

/// The schema a new table is stored with: strings as `Utf8` (dictionary and view
/// encodings are chosen at load time, not stored), and for CREATE TABLE AS every column
/// nullable (a query's nullability is not a constraint the user declared).
fn store_schema(schema: &Schema, all_nullable: bool) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let dt = match f.data_type() {
                DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
                DataType::Dictionary(_, v) => match v.as_ref() {
                    DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
                    v => v.clone(),
                },
                DataType::BinaryView => DataType::Binary,
                other => other.clone(),
            };
            Field::new(f.name(), dt, all_nullable || f.is_nullable())
        })
        .collect();
    Schema::new(fields)
}
