//! The store's tables seen through DataFusion's catalog traits, so that all of
//! DataFusion's SQL works over them.
//!
//! [`StoreSchema`] lists the store's tables and hands out a [`StoreTable`] for each; a
//! scan loads the table into memory on first use (cached by the store, keyed by table
//! version) and serves its batches. Views and external tables created in a session are
//! kept in the session only (they are not persisted).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{SchemaProvider, Session, TableProvider};
use datafusion::datasource::memory::MemorySourceConfig;
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use tessera_storage::{Store, TableMeta};

/// Name of the catalog the store's tables live in.
pub const CATALOG: &str = "tessera";
/// Name of the schema the store's tables live in.
pub const SCHEMA: &str = "public";

/// The store's tables, plus session-only views and external tables.
#[derive(Debug)]
pub struct StoreSchema {
    store: Arc<Store>,
    session_tables: RwLock<HashMap<String, Arc<dyn TableProvider>>>,
}

impl StoreSchema {
    /// A schema provider over `store`.
    pub fn new(store: Arc<Store>) -> Self {
        StoreSchema { store, session_tables: RwLock::new(HashMap::new()) }
    }

    /// The store whose tables it lists.
    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    /// The session's own tables (views, external tables), by name.
    pub fn session_tables(&self) -> Vec<(String, Arc<dyn TableProvider>)> {
        self.session_tables.read().map(|s| s.iter().map(|(n, t)| (n.clone(), Arc::clone(t))).collect()).unwrap_or_default()
    }

    fn session_table(&self, name: &str) -> Option<Arc<dyn TableProvider>> {
        self.session_tables.read().ok()?.get(name).cloned()
    }
}

fn to_df(e: tessera_common::TesseraError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}

#[async_trait]
impl SchemaProvider for StoreSchema {
    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .store
            .manifest()
            .map(|m| m.tables.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default();
        if let Ok(s) = self.session_tables.read() {
            names.extend(s.keys().cloned());
        }
        names
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = self.session_table(name) {
            return Ok(Some(t));
        }
        let manifest = self.store.manifest().map_err(to_df)?;
        match manifest.table(name) {
            Some(meta) => Ok(Some(Arc::new(StoreTable::new(Arc::clone(&self.store), meta.clone()).map_err(to_df)?))),
            None => Ok(None),
        }
    }

    fn register_table(&self, name: String, table: Arc<dyn TableProvider>) -> Result<Option<Arc<dyn TableProvider>>> {
        if self.store.manifest().map_err(to_df)?.table(&name).is_some() {
            return datafusion::common::plan_err!("table '{name}' already exists");
        }
        let mut s = self
            .session_tables
            .write()
            .map_err(|_| DataFusionError::Internal("session table lock poisoned".into()))?;
        Ok(s.insert(name, table))
    }

    fn deregister_table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        let mut s = self
            .session_tables
            .write()
            .map_err(|_| DataFusionError::Internal("session table lock poisoned".into()))?;
        Ok(s.remove(name))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.session_table(name).is_some()
            || self.store.manifest().map(|m| m.table(name).is_some()).unwrap_or(false)
    }
}

/// One table of the store, as of the manifest version it was looked up in.
#[derive(Debug)]
pub struct StoreTable {
    store: Arc<Store>,
    meta: TableMeta,
    schema: SchemaRef,
}

impl StoreTable {
    /// The table described by `meta`.
    pub fn new(store: Arc<Store>, meta: TableMeta) -> tessera_common::Result<Self> {
        let schema = meta.schema()?;
        Ok(StoreTable { store, meta, schema })
    }

    /// The table's manifest entry (files, statistics).
    pub fn meta(&self) -> &TableMeta {
        &self.meta
    }
}

#[async_trait]
impl TableProvider for StoreTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let loaded = self.store.load(&self.meta).map_err(to_df)?;
        let parts = loaded
            .logical_partitions(state.config().target_partitions(), projection.map(|p| p.as_slice()))
            .map_err(to_df)?;
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => Arc::clone(&self.schema),
        };
        Ok(MemorySourceConfig::try_new_exec(&parts, projected, None)?)
    }
}

/// The SQL name of an Arrow type as Tessera's DDL spells it.
pub fn sql_type_name(dt: &datafusion::arrow::datatypes::DataType) -> String {
    use datafusion::arrow::datatypes::DataType as T;
    match dt {
        T::Boolean => "BOOLEAN".into(),
        T::Int8 => "TINYINT".into(),
        T::Int16 => "SMALLINT".into(),
        T::Int32 => "INTEGER".into(),
        T::Int64 => "BIGINT".into(),
        T::UInt8 => "TINYINT UNSIGNED".into(),
        T::UInt16 => "SMALLINT UNSIGNED".into(),
        T::UInt32 => "INTEGER UNSIGNED".into(),
        T::UInt64 => "BIGINT UNSIGNED".into(),
        T::Float32 => "REAL".into(),
        T::Float64 => "DOUBLE".into(),
        T::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        T::Date32 => "DATE".into(),
        T::Timestamp(_, None) => "TIMESTAMP".into(),
        T::Timestamp(_, Some(_)) => "TIMESTAMPTZ".into(),
        T::Utf8 | T::LargeUtf8 | T::Utf8View => "VARCHAR".into(),
        T::Binary | T::LargeBinary | T::BinaryView => "BYTEA".into(),
        other => other.to_string(),
    }
}

/// `CREATE TABLE` text for a stored table (the shell's `.schema`).
pub fn create_table_sql(store: &Store, name: &str) -> tessera_common::Result<String> {
    let manifest = store.manifest()?;
    let Some(meta) = manifest.table(name) else {
        return tessera_common::plan_err!("table '{name}' does not exist");
    };
    let schema = meta.schema()?;
    let columns: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| {
            let not_null = if f.is_nullable() { "" } else { " NOT NULL" };
            format!("  {} {}{not_null}", f.name(), sql_type_name(f.data_type()))
        })
        .collect();
    Ok(format!("CREATE TABLE {} (\n{}\n);", meta.name, columns.join(",\n")))
}

/// Tells the planner which scans read stored tables, with their statistics.
#[derive(Debug, Clone, Copy)]
pub struct StoreCatalog;

impl tessera_plan::Catalog for StoreCatalog {
    fn table(&self, scan: &datafusion::logical_expr::TableScan) -> Option<tessera_plan::TableInfo> {
        let provider = datafusion::catalog::default_table_source::source_as_provider(&scan.source).ok()?;
        let table = provider.downcast_ref::<StoreTable>()?;
        let meta = table.meta();
        let columns = meta
            .columns
            .iter()
            .zip(table.schema.fields())
            .map(|(c, f)| {
                let parse = |s: &Option<String>| s.as_deref().and_then(|s| stat_as_i64(s, f.data_type()));
                tessera_plan::ColumnInfo {
                    min: parse(&c.stats.min),
                    max: parse(&c.stats.max),
                    distinct: c.stats.distinct_estimate,
                    dictionary: c.stats.dictionary,
                }
            })
            .collect();
        // Whether a column is a key is read from the data, when the planner asks: the
        // table is then loaded at planning rather than by the query's first scan of it.
        let (store, key_meta) = (Arc::clone(&table.store), meta.clone());
        let keys = tessera_plan::KeyCheck::new(move |c| store.load(&key_meta).is_ok_and(|t| t.is_unique(c)));
        Some(tessera_plan::TableInfo { name: meta.name.clone(), version: meta.version, rows: meta.rows, columns, keys })
    }
}

/// A min/max statistic of an integer, date or decimal column as an integer (days for
/// dates; a decimal's unscaled value, as the GPU holds it, when it fits 64 bits).
fn stat_as_i64(s: &str, dt: &datafusion::arrow::datatypes::DataType) -> Option<i64> {
    use datafusion::arrow::datatypes::DataType as T;
    match dt {
        T::Int8 | T::Int16 | T::Int32 | T::Int64 | T::UInt8 | T::UInt16 | T::UInt32 => s.parse().ok(),
        T::Decimal128(precision, scale) if *precision <= 18 => {
            let v = datafusion::arrow::compute::kernels::cast_utils::parse_decimal::<datafusion::arrow::datatypes::Decimal128Type>(s, *precision, *scale).ok()?;
            i64::try_from(v).ok()
        }
        T::Date32 => {
            let mut it = s.splitn(3, '-');
            let y: i64 = it.next()?.parse().ok()?;
            let m: i64 = it.next()?.parse().ok()?;
            let d: i64 = it.next()?.parse().ok()?;
            Some(days_from_civil(y, m, d))
        }
        _ => None,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the era-based inverse of
/// `tessera_ir::civil_from_days`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_and_decimal_statistics_become_integers() {
        use datafusion::arrow::datatypes::DataType;
        assert_eq!(stat_as_i64("1992-01-01", &DataType::Date32), Some(8035));
        assert_eq!(stat_as_i64("1998-12-31", &DataType::Date32), Some(10591));
        assert_eq!(stat_as_i64("-5", &DataType::Int32), Some(-5));
        // Decimals of at most 18 digits unscaled, as the GPU holds them.
        assert_eq!(stat_as_i64("1.5", &DataType::Decimal128(5, 1)), Some(15));
        assert_eq!(stat_as_i64("-1.50", &DataType::Decimal128(15, 2)), Some(-150));
        assert_eq!(stat_as_i64("1.50", &DataType::Decimal128(38, 2)), None);
        for days in [-1000, 0, 11016, 20000] {
            let (y, m, d) = tessera_ir::civil_from_days(days);
            assert_eq!(days_from_civil(y, m as i64, d as i64), days);
        }
    }
}
