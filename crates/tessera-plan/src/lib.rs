//! The planner: DataFusion's optimized `LogicalPlan` → Tessera's pipeline DAG.
//!
//! DataFusion has already pushed down projections and filters and decorrelated
//! subqueries; it keeps inner joins in the order the query lists them, so the planner
//! orders each tree of inner equi-joins itself from statistics ([`reorder`]). It walks
//! the tree bottom-up, growing one pipeline per stream of rows and cutting it at each
//! pipeline breaker: a join's build side ends in a hash-table build and the probe side
//! continues (so a star join becomes one pipeline with chained probes), an aggregation
//! or sort ends its pipeline and starts a new one over its result. A node the IR cannot
//! express becomes an [`External`] step that DataFusion runs, its inputs being the
//! results of the pipelines below it, so every query DataFusion answers is answered, and
//! the fallbacks are listed with their reason.
//!
//! Entry point: [`plan`].
#![warn(missing_docs)]

mod eager;
mod expr;
mod reorder;
mod result_table;
mod semi;
mod selectivity;
mod types;

use std::sync::Arc;

use datafusion::arrow::datatypes::{Field as ArrowField, Schema};
use datafusion::catalog::default_table_source::provider_as_source;
use datafusion::common::{Column, DFSchema, JoinType, NullEquality};
use datafusion::logical_expr::logical_plan::{FetchType, SkipType};
use datafusion::logical_expr::{Expr as DfExpr, LogicalPlan, LogicalPlanBuilder, TableScan, col};
use tessera_ir::{
    AggExpr, AggFunc, Aggregate, BuildStrategy, Device, Expr, External, Field, GroupStrategy, HashBuild, JoinKind,
    KeyDomain, MarkBuild, Operator, Pipeline, Probe, QueryPlan, ReducedKeys, ResultId, Scan, Sink, Sort, SortKey, Source, Step, Type,
};

pub use result_table::ResultTable;
pub use expr::CheckedOp;
pub use types::{arrow_type, ir_scalar, ir_type};

/// A perfect-hash join table is a dense array over the key range; it is used when the
/// range has at most this many slots (16 MiB of 4-byte row indices)…
pub const PERFECT_JOIN_MAX_SLOTS: u64 = 1 << 22;
/// …and the range is at most this many times the key column's distinct values (so the
/// array stays about as cache-friendly as an open-addressing table at load factor 0.5
/// over the whole column would be; filters are not counted, as the GPU tests a perfect
/// table's membership in a bitmap of one bit a slot, where they cost nothing).
pub const PERFECT_JOIN_MAX_SPARSITY: u64 = 32;
/// A perfect-hash aggregation indexes an array of this many groups at most: 4 Mi groups
/// of 16-byte sums is 64 MB, one array in GPU memory (SSB q4.3's 8 × 251 × 1001 domain
/// fits). The CPU backend, which keeps one array per thread, switches to its hash table
/// above 1 Mi slots (see tessera-cpu).
pub const PERFECT_AGG_MAX_GROUPS: u64 = 1 << 22;

/// A semi or anti join (not `NOT IN`) is run from its other side ([`MarkBuild`]) when
/// the side it keeps is estimated at most 1/this of the side it looks up: building
/// the small side and streaming the large one through it beats building the large
/// one (TPC-H q4 at SF 1 builds 57 thousand orders instead of 3.8 million lineitems);
/// the price is that the kept rows are materialized before the query goes on, which
/// a 4× margin on uncertain estimates keeps cheap.
pub const MARK_BUILD_MIN_RATIO: f64 = 4.0;

/// Translates a DataFusion expression whose columns refer to `schema` into the IR, or
/// says why it has no IR form.
pub fn translate_expr(e: &DfExpr, schema: &DFSchema) -> Result<Expr, String> {
    expr::translate(e, schema)
}

/// What the planner needs to know about a stored table.
#[derive(Debug, Clone)]
pub struct TableInfo {
    /// Name in the store.
    pub name: String,
    /// Version.
    pub version: u64,
    /// Rows.
    pub rows: u64,
    /// Per table column.
    pub columns: Vec<ColumnInfo>,
    /// Which columns are keys (for the group keys they determine, see [`ReducedKeys`]).
    pub keys: KeyCheck,
}

/// Tells whether a column of a stored table is a key of it: no NULL and no value twice,
/// exactly (from the data: the check may read the column, once per table version).
#[derive(Clone, Default)]
pub struct KeyCheck(Option<Arc<dyn Fn(usize) -> bool + Send + Sync>>);

impl KeyCheck {
    /// A check by `f` (given the table column's position).
    pub fn new(f: impl Fn(usize) -> bool + Send + Sync + 'static) -> KeyCheck {
        KeyCheck(Some(Arc::new(f)))
    }

    /// Whether column `c` is a key (false when nothing can check).
    pub fn is_key(&self, c: usize) -> bool {
        self.0.as_ref().is_some_and(|f| f(c))
    }
}

impl std::fmt::Debug for KeyCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "KeyCheck(data)" } else { "KeyCheck(none)" })
    }
}

/// Statistics of one stored column.
#[derive(Debug, Clone, Default)]
pub struct ColumnInfo {
    /// Smallest value, as an integer (integer and date columns; decimals of at most 18
    /// digits unscaled).
    pub min: Option<i64>,
    /// Largest value, as an integer.
    pub max: Option<i64>,
    /// Estimated distinct values.
    pub distinct: u64,
    /// Kept dictionary-encoded in memory.
    pub dictionary: bool,
}

/// Tells the planner which scans read stored tables.
pub trait Catalog {
    /// The stored table a scan reads, or None for any other table (views are already
    /// expanded; files, information_schema and session tables are DataFusion's).
    fn table(&self, scan: &TableScan) -> Option<TableInfo>;
}

/// A DataFusion subtree of a plan, with the result slots it reads.
#[derive(Debug)]
pub struct ExternalPlan {
    /// The subtree; its leaves that stand for pipeline results scan [`ResultTable`]s.
    pub plan: LogicalPlan,
    /// (result, slot) pairs to fill before running it.
    pub inputs: Vec<(ResultId, Arc<ResultTable>)>,
}

/// The planner's output.
#[derive(Debug)]
pub struct PlannedQuery {
    /// The pipeline DAG.
    pub plan: QueryPlan,
    /// DataFusion subtrees, indexed by [`External::id`].
    pub externals: Vec<ExternalPlan>,
    /// `plan`'s Debug text, made once: the executor keys its placements by it, and a
    /// cached plan runs many times (formatting SSB's plans took 17–40 µs a query).
    text: std::sync::OnceLock<String>,
    /// A number no other plan of this process has: a cached plan's runs find their
    /// placement by it without hashing the text ([`PlannedQuery::id`]).
    id: u64,
}

impl PlannedQuery {
    /// A plan and its DataFusion subtrees.
    pub fn new(plan: QueryPlan, externals: Vec<ExternalPlan>) -> PlannedQuery {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PlannedQuery { plan, externals, text: std::sync::OnceLock::new(), id }
    }

    /// This plan's number, unique in the process: what was worked out for it (the
    /// executor's GPU placement) can be kept under it. The same caveat as
    /// [`PlannedQuery::plan_text`]: a plan changed after its first run keeps its number.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `format!("{:?}", self.plan)`, formatted on the first call only: a plan changed
    /// after that call (EXPLAIN's placement marks change it before, and never run it) would
    /// keep its old text.
    pub fn plan_text(&self) -> &str {
        self.text.get_or_init(|| format!("{:?}", self.plan))
    }

    /// Whether the whole query is one DataFusion subtree (no pipeline at all).
    pub fn is_fully_external(&self) -> bool {
        self.plan.pipelines().next().is_none()
    }
}

/// Plans an optimized logical plan.
pub fn plan(root: &LogicalPlan, catalog: &dyn Catalog) -> PlannedQuery {
    plan_for(root, catalog, Target::Cpu)
}

/// The device a plan is made for. Both backends run any plan; the choices differ where
/// what is cheap differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The CPU backend: inner joins build their smaller side, small semi/anti joins are
    /// run from the large side ([`MarkBuild`]).
    Cpu,
    /// A GPU is there to run it: a GPU table of unique keys is one row a slot, cheaper to
    /// probe than a chained one (a 1:N table), so an inner join builds the side whose
    /// keys are unique when the other side's repeat (up to [`GPU_UNIQUE_BUILD_MAX_ROWS`]);
    /// and a semi/anti join always builds the side it looks rows up in (never a
    /// [`MarkBuild`], which the GPU does not run, even when that side is much the larger:
    /// TPC-H q04's and q21's lineitems): a membership table without a residual, else a
    /// table whose matches the probe walks until the residual holds.
    Gpu,
}

/// Under [`Target::Gpu`], a sort of rows a scan's filters and joins reduce this many
/// times (estimated) reads them from a result materialized on the GPU (see
/// `Planner::sorted_on_the_cpu`); less reduced, the rows would cross PCIe in bulk
/// (a whole-table ORDER BY ... LIMIT is cheaper as the CPU's top-k over the scan).
pub const GPU_SORT_SPLIT_MIN_REDUCTION: f64 = 4.0;

/// …and at most this many rows (1 Mi rows of eight 8-byte columns are 64 MB to download,
/// about 3 ms over PCIe).
pub const GPU_SORT_SPLIT_MAX_ROWS: f64 = (1u64 << 20) as f64;

/// Under [`Target::Gpu`], an inner join builds its unique-key side when it has at most
/// this many rows, even if it is the larger (TPC-H q12 builds 15 M orders rather than
/// 0.3 M lineitems with repeated order keys). A GPU table holds 2 slots a row of 8-byte
/// keys plus the payload: 64 Mi rows are about 2 GB, and an H200 builds them in a few ms.
pub const GPU_UNIQUE_BUILD_MAX_ROWS: f64 = (1u64 << 26) as f64;

/// A column whose distinct count is at least this share of its table's rows is taken
/// as unique… The count comes from a HyperLogLog sketch of 1024 registers (standard
/// error about 3%), so a unique column can read 6% or more below its rows; taking a
/// column with some repeats for unique costs only a GPU build that finds a duplicate and
/// hands the query to the CPU.
const UNIQUE_MIN_SHARE: f64 = 0.85;
/// …and one whose distinct count is below this share of its rows as repeating (TPC-H's
/// foreign keys: `l_orderkey` 0.25, `o_custkey` 0.07).
const REPEATING_MAX_SHARE: f64 = 0.5;

/// [`plan`] for `target`.
pub fn plan_for(root: &LogicalPlan, catalog: &dyn Catalog, target: Target) -> PlannedQuery {
    let mut p = Planner {
        target,
        catalog,
        steps: Vec::new(),
        externals: Vec::new(),
        next_result: 0,
        next_table: 0,
        subqueries: expr::Subqueries::default(),
        match_fraction: std::collections::HashMap::new(),
        instances: Vec::new(),
    };
    let pushed = semi::push_semi_joins(root, &|scan| catalog.table(scan).map(|t| t.rows));
    let root = pushed.as_ref().unwrap_or(root);
    let eager = eager::push_aggregates(root, catalog);
    let stream = p.node(eager.as_ref().unwrap_or(root));
    let fields = stream.fields.clone();
    let output = p.materialize(stream);
    PlannedQuery::new(QueryPlan { steps: p.steps, output, output_fields: fields }, p.externals)
}

/// What the planner knows about a column of a stream, for choosing strategies.
#[derive(Debug, Clone, Default)]
struct ColStats {
    range: Option<(i64, i64)>,
    dictionary: Option<u64>,
    distinct: Option<u64>,
    /// Whether each value is in one row (Some(false): values repeat; None: unknown).
    unique: Option<bool>,
    /// The stored column the values are from, when they are a stored column's.
    origin: Option<Origin>,
    /// The lone group key of an aggregation's result: one row a value, NULL included.
    group_key: bool,
    /// How the rows the values come from may repeat in the stream (see [`Repeats`]).
    repeats: Repeats,
}

/// What a column's rows went through that may repeat them in a stream, for proving that
/// no two rows of the stream hold the same value ([`Planner::proven_unique`]): a column
/// whose values are unique where they come from (a key of its table, a lone group key)
/// stays so through filters, projections, semi and anti joins, and through each inner or
/// LEFT OUTER join that matches each of its rows at most once.
#[derive(Debug, Clone, Default)]
struct Repeats {
    /// A LEFT OUTER join extended unmatched rows with NULLs in this column.
    always: bool,
    /// Per join that paired these rows with another side's: that side's join key
    /// columns (None: a key that is not a plain column). The rows do not repeat if one
    /// of them is proven unique there. Shared: the joins of a query nest them.
    unless: Vec<Arc<Vec<Option<ColStats>>>>,
}

/// Where a column's values come from: column `column` of the rows of scan `instance`
/// (each scan of a stored table in a query is an instance of its own). The columns of one
/// instance in a row of a stream come from one row of that table: a join pairs whole
/// rows, and filters, projections and sorts keep them whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Origin {
    instance: usize,
    column: usize,
}

/// A join of a row of instance `by` with the rows of instance `build` whose column `key`
/// equals a column of it: when that column is a key of its table (checked when used), the
/// row of `by` fixes the row of `build` (TPC-H q10's nation row by `c_nationkey`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Determines {
    build: usize,
    key: usize,
    by: usize,
}

/// A pipeline being grown: its source and operators so far, and its current layout.
struct Stream {
    source: Source,
    operators: Vec<Operator>,
    fields: Vec<Field>,
    stats: Vec<ColStats>,
    rows: f64,
    /// The joins in this stream that fix one instance's row by another's.
    determines: Vec<Determines>,
}

impl Stream {
    fn from_result(id: ResultId, fields: Vec<Field>, stats: Vec<ColStats>, rows: f64) -> Stream {
        Stream { source: Source::Result { id, fields: fields.clone() }, operators: Vec::new(), fields, stats, rows, determines: Vec::new() }
    }

    /// What is known of the values of `e`: a column's statistics; for a computed value,
    /// its range and distinct count where they follow from its operands' (an integer
    /// literal, a cast that keeps the value, a CASE choosing among such values — TPC-H
    /// q13's `CASE WHEN c IS NULL THEN 0 ELSE c END`); nothing for the rest.
    fn stats_of(&self, e: &Expr) -> ColStats {
        match e {
            Expr::Column { index, .. } => self.stats.get(*index).cloned().unwrap_or_default(),
            Expr::Literal { value: tessera_ir::Scalar::Int(v), .. } => ColStats { range: Some((*v, *v)), distinct: Some(1), ..ColStats::default() },
            Expr::Cast { expr, ty } => {
                let from = expr.ty(&self.fields);
                let keeps_value = (from.is_integer() && ty.is_integer()) || from == *ty;
                let st = self.stats_of(expr);
                ColStats { range: st.range.filter(|_| keeps_value), distinct: st.distinct, ..ColStats::default() }
            }
            Expr::Case { when_then, otherwise: Some(o), .. } => {
                let branches: Vec<ColStats> = when_then.iter().map(|(_, t)| t).chain([o.as_ref()]).map(|t| self.stats_of(t)).collect();
                let range = branches.iter().try_fold(None::<(i64, i64)>, |acc, b| {
                    let (lo, hi) = b.range?;
                    Some(Some(acc.map_or((lo, hi), |(l, h)| (l.min(lo), h.max(hi)))))
                });
                let distinct = branches.iter().try_fold(0u64, |acc, b| Some(acc.saturating_add(b.distinct?)));
                ColStats { range: range.flatten(), distinct, ..ColStats::default() }
            }
            Expr::DatePart { part, expr } if expr.ty(&self.fields) == Type::Date32 => date_part_stats(*part, &self.stats_of(expr)),
            _ => ColStats::default(),
        }
    }

    /// Replaces the layout by `exprs` (a no-op for the identity).
    fn project(&mut self, exprs: Vec<Expr>, fields: Vec<Field>) {
        let identity = exprs.len() == self.fields.len()
            && exprs.iter().enumerate().all(|(i, e)| matches!(e, Expr::Column { index, .. } if *index == i));
        if identity {
            self.fields = fields;
            return;
        }
        // A projection of plain columns after another projection folds into it.
        if let Some(Operator::Project { exprs: prev, .. }) = self.operators.last() {
            if exprs.iter().all(|e| matches!(e, Expr::Column { .. })) {
                let composed: Vec<Expr> = exprs
                    .iter()
                    .map(|e| match e {
                        Expr::Column { index, .. } => prev[*index].clone(),
                        other => other.clone(),
                    })
                    .collect();
                self.stats = exprs.iter().map(|e| self.stats_of(e)).collect();
                self.operators.pop();
                self.operators.push(Operator::Project { exprs: composed, fields: fields.clone() });
                self.fields = fields;
                return;
            }
        }
        self.stats = exprs.iter().map(|e| self.stats_of(e)).collect();
        self.operators.push(Operator::Project { exprs, fields: fields.clone() });
        self.fields = fields;
    }
}

/// The values `EXTRACT(part FROM d)` takes over a date column with stats `d`: a year
/// lies in the years of the dates' range, a quarter, month or day in its calendar range
/// (whatever the dates). TPC-H q07, q08 and q09 group by a year of a date: known, it
/// makes a small perfect-hash domain (q07's 2 × 2 × 2 groups had been estimated as
/// many as the rows joined, a table of millions of slots on the GPU).
fn date_part_stats(part: tessera_ir::DatePart, d: &ColStats) -> ColStats {
    use tessera_ir::DatePart;
    let range = match part {
        DatePart::Year => d.range.map(|(lo, hi)| (tessera_ir::civil_from_days(lo).0, tessera_ir::civil_from_days(hi).0)),
        DatePart::Quarter => Some((1, 4)),
        DatePart::Month => Some((1, 12)),
        DatePart::Day => Some((1, 31)),
    };
    let span = range.map(|(lo, hi)| (hi - lo).max(0) as u64 + 1);
    let distinct = match (span, d.distinct) {
        (Some(s), Some(n)) => Some(s.min(n)),
        (s, n) => s.or(n),
    };
    ColStats { range, distinct, ..ColStats::default() }
}

struct Planner<'a> {
    target: Target,
    catalog: &'a dyn Catalog,
    steps: Vec<Step>,
    externals: Vec<ExternalPlan>,
    next_result: ResultId,
    next_table: usize,
    /// The uncorrelated scalar subqueries planned so far.
    subqueries: expr::Subqueries,
    /// Per hash table probed by an inner join, the estimated share of probe rows that
    /// find a match (see [`match_fraction`]).
    match_fraction: std::collections::HashMap<usize, f64>,
    /// The stored table of each scan instance (see [`Origin`]).
    instances: Vec<TableInfo>,
}

/// The layout of a DataFusion schema.
fn fields_of(schema: &DFSchema) -> Result<Vec<Field>, String> {
    schema
        .iter()
        .map(|(q, f)| {
            let name = match q {
                Some(q) => format!("{q}.{}", f.name()),
                None => f.name().clone(),
            };
            Ok(Field::new(name, ir_type(f.data_type())?, f.is_nullable()))
        })
        .collect()
}

impl Planner<'_> {
    fn new_result(&mut self) -> ResultId {
        self.next_result += 1;
        self.next_result - 1
    }

    fn push_pipeline(&mut self, stream: Stream, sink: Sink) {
        let id = self.steps.iter().filter(|s| matches!(s, Step::Pipeline(_))).count();
        self.steps.push(Step::Pipeline(Pipeline {
            id,
            source: stream.source,
            operators: stream.operators,
            sink,
            device: Device::Cpu,
            device_reason: None,
        }));
    }

    /// Ends a stream in a materialized result (reusing the result it reads when it
    /// does nothing to it).
    fn materialize(&mut self, stream: Stream) -> ResultId {
        if let (Source::Result { id, .. }, true) = (&stream.source, stream.operators.is_empty()) {
            return *id;
        }
        let result = self.new_result();
        self.push_pipeline(stream, Sink::Materialize { result, skip: 0, fetch: None });
        result
    }

    /// The stream a sort reads. Under [`Target::Gpu`], the rows of a scan that filters
    /// and joins estimate at most [`GPU_SORT_SPLIT_MAX_ROWS`] of, and at most
    /// 1/[`GPU_SORT_SPLIT_MIN_REDUCTION`] of the scan's (or of a scan that small), are
    /// materialized by their own pipeline, and the sort reads that result: the GPU does
    /// not sort rows yet, and a pipeline ending in a CPU sort would keep every table it
    /// probes on the CPU with it (TPC-H q02's 8 M partsupp rows probing four tables for
    /// 100 sorted rows; q20's suppliers probing a table of 8 M partsupp rows).
    fn sorted_on_the_cpu(&mut self, s: Stream) -> Stream {
        let Source::Scan(scan) = &s.source else { return s };
        let reduced = s.rows * GPU_SORT_SPLIT_MIN_REDUCTION <= scan.rows as f64 || scan.rows as f64 <= GPU_SORT_SPLIT_MAX_ROWS;
        let few = s.rows <= GPU_SORT_SPLIT_MAX_ROWS && reduced;
        if self.target != Target::Gpu || s.operators.is_empty() || !few {
            return s;
        }
        let (fields, stats, rows) = (s.fields.clone(), s.stats.clone(), s.rows);
        let result = self.materialize(s);
        Stream::from_result(result, fields, stats, rows)
    }

    fn node(&mut self, node: &LogicalPlan) -> Stream {
        if let Some(region) = self.reorderable_region(node) {
            return self.reordered_joins(node, region);
        }
        match node {
            LogicalPlan::TableScan(scan) => match self.scan(scan) {
                Ok(s) => s,
                Err(reason) => self.external(node, Vec::new(), reason),
            },
            LogicalPlan::Projection(_)
            | LogicalPlan::Filter(_)
            | LogicalPlan::SubqueryAlias(_)
            | LogicalPlan::Aggregate(_)
            | LogicalPlan::Sort(_)
            | LogicalPlan::Limit(_)
            | LogicalPlan::Join(_) => {
                let children: Vec<Stream> = node.inputs().into_iter().map(|c| self.node(c)).collect();
                match self.check(node, &children) {
                    Ok(()) => {
                        self.plan_subqueries(&node.expressions());
                        self.apply(node, children)
                    }
                    Err(reason) => self.external(node, children, reason),
                }
            }
            other => {
                let children: Vec<Stream> = other.inputs().into_iter().map(|c| self.node(c)).collect();
                let reason = format!("{} is not in the IR yet", other.display());
                self.external(node, children, reason)
            }
        }
    }

    fn scan(&mut self, scan: &TableScan) -> Result<Stream, String> {
        let Some(info) = self.catalog.table(scan) else {
            return Err(format!("{} is not a stored table", scan.table_name));
        };
        let columns: Vec<usize> = match &scan.projection {
            Some(p) => p.clone(),
            None => (0..info.columns.len()).collect(),
        };
        let fields = fields_of(&scan.projected_schema)?;
        let instance = self.instances.len();
        self.instances.push(info.clone());
        let stats: Vec<ColStats> = columns
            .iter()
            .map(|&c| {
                let ci = info.columns.get(c).cloned().unwrap_or_default();
                let share = if info.rows == 0 { 1.0 } else { ci.distinct as f64 / info.rows as f64 };
                ColStats {
                    range: ci.min.zip(ci.max),
                    dictionary: ci.dictionary.then_some(ci.distinct),
                    distinct: Some(ci.distinct),
                    unique: if share >= UNIQUE_MIN_SHARE { Some(true) } else if share < REPEATING_MAX_SHARE { Some(false) } else { None },
                    origin: Some(Origin { instance, column: c }),
                    ..ColStats::default()
                }
            })
            .collect();
        let dictionary = columns.iter().map(|&c| info.columns.get(c).is_some_and(|ci| ci.dictionary)).collect();
        let mut stream = Stream {
            source: Source::Scan(Scan {
                table: info.name.clone(),
                version: info.version,
                columns,
                fields: fields.clone(),
                dictionary,
                rows: info.rows,
                kept_permille: tessera_ir::all_rows_permille(),
            }),
            operators: Vec::new(),
            fields,
            stats,
            rows: info.rows as f64,
            determines: Vec::new(),
        };
        let any = self.subqueries.or_any();
        for f in &scan.filters {
            expr::translate_in(f, &scan.projected_schema, &any)?;
        }
        self.plan_subqueries(&scan.filters);
        for f in &scan.filters {
            let e = expr::translate_in(f, &scan.projected_schema, &self.subqueries)?;
            stream.rows *= selectivity::selectivity(&e, &stream.stats);
            stream.operators.push(Operator::Filter(e));
        }
        Ok(stream)
    }

    /// Plans each uncorrelated scalar subquery in `exprs` not planned yet into a result
    /// of its own, which the expressions then read as [`Expr::Subquery`].
    fn plan_subqueries(&mut self, exprs: &[DfExpr]) {
        for sq in expr::Subqueries::in_exprs(exprs) {
            if self.subqueries.contains(&sq) {
                continue;
            }
            let stream = self.node(&sq.subquery);
            let result = self.materialize(stream);
            self.subqueries.add(&sq, result);
        }
    }

    /// Checks that `node` itself has an IR form (its children are planned already, its
    /// uncorrelated scalar subqueries not yet: projections, filters and sorts accept
    /// them, as [`Planner::apply`] translates those with the planned subqueries).
    fn check(&self, node: &LogicalPlan, children: &[Stream]) -> Result<(), String> {
        let _ = children;
        fields_of(node.schema())?;
        let any = self.subqueries.or_any();
        match node {
            LogicalPlan::Projection(p) => {
                for e in &p.expr {
                    expr::translate_in(e, p.input.schema(), &any)?;
                }
            }
            LogicalPlan::Filter(f) => {
                expr::translate_in(&f.predicate, f.input.schema(), &any)?;
            }
            LogicalPlan::Aggregate(a) => {
                for e in &a.group_expr {
                    expr::translate(e, a.input.schema())?;
                }
                for e in &a.aggr_expr {
                    aggregate(e, a.input.schema(), Type::Null)?;
                }
            }
            LogicalPlan::Sort(s) => {
                for k in &s.expr {
                    expr::translate_in(&k.expr, s.input.schema(), &any)?;
                }
            }
            LogicalPlan::Limit(l) => {
                limit_of(l)?;
            }
            LogicalPlan::Join(j) => {
                join_roles(j.join_type, j.null_aware)?;
                for (l, r) in &j.on {
                    expr::translate(l, j.left.schema())?;
                    expr::translate(r, j.right.schema())?;
                }
                if let Some(f) = &j.filter {
                    let both = j.left.schema().join(j.right.schema()).map_err(|e| e.to_string())?;
                    expr::translate(f, &both)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Applies a node that [`Planner::check`] accepted.
    fn apply(&mut self, node: &LogicalPlan, mut children: Vec<Stream>) -> Stream {
        let fields = fields_of(node.schema()).unwrap_or_default();
        let subqueries = self.subqueries.clone();
        let tr = |e: &DfExpr, s: &DFSchema| translated(e, s, &subqueries);
        match node {
            LogicalPlan::Projection(p) => {
                let mut s = children.remove(0);
                let exprs = p.expr.iter().map(|e| tr(e, p.input.schema())).collect();
                s.project(exprs, fields);
                s
            }
            LogicalPlan::Filter(f) => {
                let mut s = children.remove(0);
                let predicate = tr(&f.predicate, f.input.schema());
                s.rows *= selectivity::selectivity(&predicate, &s.stats);
                s.operators.push(Operator::Filter(predicate));
                s.fields = fields;
                s
            }
            LogicalPlan::SubqueryAlias(_) => {
                let mut s = children.remove(0);
                s.fields = fields;
                s
            }
            LogicalPlan::Aggregate(a) => {
                let mut s = children.remove(0);
                let group_by: Vec<Expr> = a.group_expr.iter().map(|e| tr(e, a.input.schema())).collect();
                let out_types: Vec<Type> = fields.iter().skip(group_by.len()).map(|f| f.ty).collect();
                let aggregates: Vec<AggExpr> = a
                    .aggr_expr
                    .iter()
                    .zip(out_types)
                    .filter_map(|(e, ty)| aggregate(e, a.input.schema(), ty).ok())
                    .collect();
                // A group key proven unique makes each group one row: the aggregation is a
                // projection, and the pipeline goes on (TPC-H q13's count per customer,
                // once its orders are counted per customer below the outer join).
                let one_row_groups = group_by.iter().any(|k| matches!(k, Expr::Column { .. }) && self.proven_unique(&s.stats_of(k)));
                if one_row_groups && aggregates.len() == a.aggr_expr.len() {
                    let exprs: Vec<Expr> = group_by.iter().cloned().chain(aggregates.iter().map(|agg| one_row_aggregate(agg, &s.fields))).collect();
                    s.project(exprs, fields);
                    return s;
                }
                let (strategy, mut groups) = group_strategy(&group_by, &s);
                let reduced = self.reduced_keys(&group_by, &s).map(|(r, independent_groups)| {
                    groups = groups.min(independent_groups);
                    r
                });
                // Group keys keep their statistics; dictionary encoding survives only a
                // perfect-hash aggregation (a hash table returns plain strings).
                // With the keys reduced, dependent keys come back as a MIN's plain values;
                // the other keys keep their dictionary only if both ways of grouping do (a
                // backend may group either way).
                let perfect = matches!(strategy, GroupStrategy::Perfect { .. })
                    && reduced.as_ref().is_none_or(|r| matches!(r.strategy, GroupStrategy::Perfect { .. }));
                let single_key = group_by.len() == 1;
                let key_stats: Vec<ColStats> = group_by
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let mut st = s.stats_of(e);
                        if !perfect || reduced.as_ref().is_some_and(|r| r.dependent[i]) {
                            st.dictionary = None;
                        }
                        // One group a value: a lone key is unique; of several keys each
                        // may repeat, unless it was unique already.
                        st.unique = if single_key { Some(true) } else { st.unique.filter(|&u| u) };
                        st.origin = None;
                        st.group_key = single_key;
                        st.repeats = Repeats::default();
                        st
                    })
                    .collect();
                let aggregate_stats: Vec<ColStats> = if aggregates.len() == a.aggr_expr.len() {
                    aggregates.iter().map(|agg| aggregate_stats(agg, &s, groups)).collect()
                } else {
                    Vec::new()
                };
                let value_ranges = aggregates.iter().map(|agg| value_range(agg, &s)).collect();
                let result = self.new_result();
                let rows = groups.min(s.rows.max(1.0));
                self.push_pipeline(
                    s,
                    Sink::Aggregate(Aggregate { result, group_by, aggregates, strategy, fields: fields.clone(), reduced, value_ranges }),
                );
                let mut stats = key_stats;
                stats.extend(aggregate_stats);
                stats.resize(fields.len(), ColStats::default());
                Stream::from_result(result, fields, stats, rows)
            }
            LogicalPlan::Sort(sort) => {
                let s = self.sorted_on_the_cpu(children.remove(0));
                let keys = sort
                    .expr
                    .iter()
                    .map(|k| SortKey { expr: tr(&k.expr, sort.input.schema()), descending: !k.asc, nulls_first: k.nulls_first })
                    .collect();
                let result = self.new_result();
                let (stats, rows) = (s.stats.clone(), s.rows);
                self.push_pipeline(s, Sink::Sort(Sort { result, keys, skip: 0, fetch: sort.fetch }));
                Stream::from_result(result, fields, stats, rows)
            }
            LogicalPlan::Limit(l) => {
                let s = children.remove(0);
                let (skip, fetch) = limit_of(l).unwrap_or((0, None));
                let result = self.new_result();
                let (stats, rows) = (s.stats.clone(), s.rows);
                self.push_pipeline(s, Sink::Materialize { result, skip, fetch });
                Stream::from_result(result, fields, stats, rows)
            }
            LogicalPlan::Join(j) => {
                let right = children.pop().expect("join has two inputs");
                let left = children.pop().expect("join has two inputs");
                self.join(j, left, right, fields)
            }
            _ => children.remove(0),
        }
    }

    fn join(&mut self, j: &datafusion::logical_expr::Join, left: Stream, right: Stream, fields: Vec<Field>) -> Stream {
        let (kind, probe_left) = match join_roles(j.join_type, j.null_aware) {
            Ok(r) => r,
            Err(_) => unreachable_roles(),
        };
        let (left_len, right_len) = (left.fields.len(), right.fields.len());
        let tr = |e: &DfExpr, s: &DFSchema| translated(e, s, &expr::Subqueries::default());
        let left_keys: Vec<Expr> = j.on.iter().map(|(l, _)| tr(l, j.left.schema())).collect();
        let right_keys: Vec<Expr> = j.on.iter().map(|(_, r)| tr(r, j.right.schema())).collect();
        // Inner joins build on the smaller side (estimated from statistics); for the GPU,
        // on the side whose keys are unique when the other's repeat.
        let probe_left = if kind == JoinKind::Inner {
            let (lu, ru) = (keys_unique(&left, &left_keys), keys_unique(&right, &right_keys));
            let fits = |s: &Stream| s.rows <= GPU_UNIQUE_BUILD_MAX_ROWS;
            match (self.target, lu, ru) {
                (Target::Gpu, Some(true), Some(false)) if fits(&left) => false,
                (Target::Gpu, Some(false), Some(true)) if fits(&right) => true,
                _ => left.rows >= right.rows,
            }
        } else {
            probe_left
        };
        let (mut probe, build, probe_keys, build_keys) =
            if probe_left { (left, right, left_keys, right_keys) } else { (right, left, right_keys, left_keys) };
        let probe_len = probe.fields.len();
        let residual = j.filter.as_ref().map(|f| {
            let both = j.left.schema().join(j.right.schema()).expect("checked");
            tr(f, &both).map_columns(&|k| {
                let (is_left, i) = if k < left_len { (true, k) } else { (false, k - left_len) };
                if is_left == probe_left { i } else { probe_len + i }
            })
        });

        let nulls_equal = j.null_equality == NullEquality::NullEqualsNull;
        if matches!(kind, JoinKind::Semi | JoinKind::Anti)
            // For the GPU, a semi/anti join builds the large side instead: a membership
            // table (repeated keys one entry), or with a residual a chained table.
            && self.target == Target::Cpu
            && !j.null_aware
            && !nulls_equal
            && probe.rows * MARK_BUILD_MIN_RATIO <= build.rows
        {
            // The residual reads the large side's columns first in a marking probe.
            let (kept_len, large_len) = (probe.fields.len(), build.fields.len());
            let residual = residual.map(|r| r.map_columns(&|k| if k < kept_len { large_len + k } else { k - kept_len }));
            return self.marked_join(kind == JoinKind::Anti, probe, build, probe_keys, build_keys, residual, fields);
        }

        // Build side.
        let known_match = match_fraction(&probe, &probe_keys, build.rows);
        let matched = known_match.unwrap_or(1.0);
        // A semi join keeps the rows that match, where statistics tell how many.
        let semi_kept = known_match.unwrap_or(selectivity::DEFAULT_SELECTIVITY);
        // Only whether a key is there matters: a membership table (one entry a key).
        let filtering = matches!(kind, JoinKind::Semi | JoinKind::Anti | JoinKind::Mark) && residual.is_none();
        let (build_unique, probe_unique) = (keys_unique(&build, &build_keys), keys_unique(&probe, &probe_keys));
        let key_stats = |s: &Stream, keys: &[Expr]| Arc::new(keys.iter().map(|k| matches!(k, Expr::Column { .. }).then(|| s.stats_of(k))).collect::<Vec<_>>());
        let (build_key_stats, probe_key_stats) = (key_stats(&build, &build_keys), key_stats(&probe, &probe_keys));
        let mut determines = build.determines.clone();
        if let ([Expr::Column { .. }], [Expr::Column { .. }]) = (probe_keys.as_slice(), build_keys.as_slice()) {
            if let (Some(b), Some(by)) = (build.stats_of(&build_keys[0]).origin, probe.stats_of(&probe_keys[0]).origin) {
                determines.push(Determines { build: b.instance, key: b.column, by: by.instance });
            }
        }
        let (table, build_fields, mut build_stats, build_rows) = self.build_table(build, build_keys, nulls_equal, filtering, j.null_aware);

        // Probe side: its rows repeat where build keys do, and the build's where its keys do.
        if kind == JoinKind::Inner || kind == JoinKind::LeftOuter {
            if build_unique != Some(true) {
                probe.stats.iter_mut().for_each(|s| s.unique = s.unique.filter(|u| !u));
            }
            if probe_unique != Some(true) {
                build_stats.iter_mut().for_each(|s| s.unique = s.unique.filter(|u| !u));
            }
            // Each probe row is repeated once per matching build row, and each build
            // row once per matching probe row (plus, outer, NULLs for unmatched ones).
            probe.stats.iter_mut().for_each(|s| s.repeats.unless.push(Arc::clone(&build_key_stats)));
            for s in &mut build_stats {
                if kind == JoinKind::LeftOuter {
                    s.repeats.always = true;
                } else {
                    s.repeats.unless.push(Arc::clone(&probe_key_stats));
                }
            }
        }
        // The share of the scanned rows that reaches the stream's first probe, through the
        // filters before it (the GPU tests a far more selective probe's keys before them:
        // `Scan::kept_permille`).
        if !probe.operators.iter().any(|op| matches!(op, Operator::Probe(_))) {
            let rows = probe.rows;
            if let Source::Scan(scan) = &mut probe.source
                && scan.rows > 0
            {
                scan.kept_permille = (rows / scan.rows as f64 * 1000.0).ceil().clamp(0.0, 1000.0) as u32;
            }
        }
        probe.operators.push(Operator::Probe(Probe {
            table,
            kind,
            keys: probe_keys,
            build_fields: build_fields.clone(),
            residual,
            nulls_equal,
            null_aware: j.null_aware,
        }));
        match kind {
            JoinKind::Inner | JoinKind::LeftOuter => {
                let outer = kind == JoinKind::LeftOuter;
                probe.fields.extend(build_fields.iter().map(|f| Field { nullable: f.nullable || outer, ..f.clone() }));
                probe.stats.extend(build_stats);
                probe.determines.extend(determines);
                if kind == JoinKind::Inner {
                    probe.rows = probe.rows.max(build_rows.min(probe.rows));
                }
                if !probe_left {
                    // Back to DataFusion's column order: left columns, then right.
                    let exprs: Vec<Expr> = (0..left_len)
                        .map(|i| Expr::col(right_len + i, probe.fields[right_len + i].name.clone()))
                        .chain((0..right_len).map(|i| Expr::col(i, probe.fields[i].name.clone())))
                        .collect();
                    probe.project(exprs, fields.clone());
                }
            }
            JoinKind::Semi => probe.rows *= semi_kept,
            JoinKind::Anti => probe.rows *= selectivity::DEFAULT_SELECTIVITY,
            JoinKind::Mark => {
                probe.fields.push(Field::new("mark", Type::Boolean, j.null_aware));
                probe.stats.push(ColStats::default());
            }
        }
        match kind {
            JoinKind::Inner => {
                self.match_fraction.insert(table, matched);
            }
            JoinKind::Semi | JoinKind::Anti if filtering => {
                let kept = if kind == JoinKind::Semi { matched } else { 1.0 - matched };
                self.hoist_filtering_probe(&mut probe, kept);
            }
            _ => {}
        }
        probe.fields = fields;
        probe
    }

    /// Moves the semi or anti probe just added (the stream's last operator, without a
    /// residual) ahead of the inner probes before it, through projections of plain
    /// columns, when it keeps a smaller share of the rows than such a probe does: each
    /// probe costs about one lookup a row it sees, so the more selective goes first
    /// (TPC-H q18 keeps 624 of 15 million orders by its `IN` before looking up their
    /// customers, instead of after). It moves only as far as its keys' columns exist.
    fn hoist_filtering_probe(&self, stream: &mut Stream, kept: f64) {
        let Some(Operator::Probe(semi)) = stream.operators.last() else { return };
        let mut semi = semi.clone();
        let source_fields = match &stream.source {
            Source::Scan(s) => s.fields.clone(),
            Source::Result { fields, .. } => fields.clone(),
        };
        // The layout entering each operator.
        let mut layouts = vec![source_fields];
        for op in &stream.operators {
            let next = op.output_fields(layouts.last().expect("one layout an operator"));
            layouts.push(next);
        }
        let last = stream.operators.len() - 1;
        let (mut at, mut best) = (last, None);
        let mut keys = semi.keys.clone();
        while at > 0 {
            match &stream.operators[at - 1] {
                Operator::Probe(p) if p.kind == JoinKind::Inner => {
                    let before = layouts[at - 1].len();
                    let passes = self.match_fraction.get(&p.table).is_some_and(|&m| kept < m);
                    if !passes || keys.iter().any(|k| k.columns().iter().any(|&c| c >= before)) {
                        break;
                    }
                    best = Some((at - 1, keys.clone()));
                }
                Operator::Project { exprs, .. } => {
                    // Through the projection when every key column is a plain column.
                    let source = |c: usize| match exprs.get(c) {
                        Some(Expr::Column { index, .. }) => Some(*index),
                        _ => None,
                    };
                    if keys.iter().flat_map(|k| k.columns()).any(|c| source(c).is_none()) {
                        break;
                    }
                    keys = keys.iter().map(|k| k.map_columns(&|c| source(c).unwrap_or(c))).collect();
                }
                _ => break,
            }
            at -= 1;
        }
        if let Some((position, keys)) = best {
            stream.operators.pop();
            semi.keys = keys;
            stream.operators.insert(position, Operator::Probe(semi));
        }
    }

    /// Whether the column of `o` is a key of its table (no NULL, no value twice), checked
    /// in the data. The HyperLogLog count first: a column far from one value a row is no
    /// key, and the exact check (which reads the column) is not worth making.
    fn is_key(&self, o: Origin) -> bool {
        self.instances.get(o.instance).is_some_and(|t| {
            let distinct = t.columns.get(o.column).map_or(0, |c| c.distinct) as f64;
            t.rows > 0 && distinct >= UNIQUE_MIN_SHARE * t.rows as f64 && t.keys.is_key(o.column)
        })
    }

    /// Whether no two rows of the stream hold the same value of a column with statistics
    /// `st` (NULLs counted equal), proven rather than estimated: its values are unique
    /// where they come from (a key of its table, or the lone group key of an
    /// aggregation), and every join since matched each of its rows at most once — the
    /// other side's join keys included a column proven unique there (see [`Repeats`]).
    fn proven_unique(&self, st: &ColStats) -> bool {
        let at_source = st.group_key || st.origin.is_some_and(|o| self.is_key(o));
        at_source
            && !st.repeats.always
            && st.repeats.unless.iter().all(|keys| keys.iter().flatten().any(|k| self.proven_unique(k)))
    }

    /// The group keys of an aggregation over `s` that the others determine (see
    /// [`ReducedKeys`]). A key column that is a key of its table (exactly, from the data)
    /// fixes its instance's row, and through joins on keys the rows of further
    /// instances; every group key from a fixed instance but one such key a row needs is
    /// dependent. Only plain columns take part. Also the estimated groups of the
    /// independent keys.
    fn reduced_keys(&self, keys: &[Expr], s: &Stream) -> Option<(ReducedKeys, f64)> {
        if keys.len() < 2 {
            return None;
        }
        let origins: Vec<Option<Origin>> = keys
            .iter()
            .map(|k| match k {
                Expr::Column { .. } => s.stats_of(k).origin,
                _ => None,
            })
            .collect();
        let fixed_by = |roots: &[usize]| {
            let mut fixed: Vec<usize> = roots.iter().filter_map(|&i| origins[i].map(|o| o.instance)).collect();
            loop {
                let before = fixed.len();
                for d in &s.determines {
                    if fixed.contains(&d.by) && !fixed.contains(&d.build) && self.is_key(Origin { instance: d.build, column: d.key }) {
                        fixed.push(d.build);
                    }
                }
                if fixed.len() == before {
                    return fixed;
                }
            }
        };
        // Roots: key columns, one an instance.
        let mut roots: Vec<usize> = Vec::new();
        for (i, o) in origins.iter().enumerate() {
            if let Some(o) = o {
                if !roots.iter().any(|&r| origins[r].map(|x| x.instance) == Some(o.instance)) && self.is_key(*o) {
                    roots.push(i);
                }
            }
        }
        // A root whose row the other roots fix is dependent too (q18's `c_custkey` is
        // not: its orders row does not fix the customer without a join on a key).
        let mut i = 0;
        while i < roots.len() {
            let others: Vec<usize> = roots.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, &r)| r).collect();
            let instance = origins[roots[i]].map(|o| o.instance);
            if instance.is_some_and(|x| fixed_by(&others).contains(&x)) {
                roots.remove(i);
            } else {
                i += 1;
            }
        }
        let fixed = fixed_by(&roots);
        let dependent: Vec<bool> =
            (0..keys.len()).map(|i| !roots.contains(&i) && origins[i].is_some_and(|o| fixed.contains(&o.instance))).collect();
        if !dependent.contains(&true) {
            return None;
        }
        let independent: Vec<Expr> = keys.iter().zip(&dependent).filter(|(_, d)| !**d).map(|(k, _)| k.clone()).collect();
        let (strategy, groups) = group_strategy(&independent, s);
        Some((ReducedKeys { dependent, strategy }, groups))
    }

    /// Ends `build` in a hash table on `keys` that keeps every column as payload — or,
    /// as a `membership` table (for semi/anti probes without a residual), only answers
    /// whether a key is there and keeps none; returns the table and what the stream was:
    /// its columns, their statistics and its rows.
    fn build_table(&mut self, build: Stream, keys: Vec<Expr>, nulls_equal: bool, membership: bool, null_aware: bool) -> (usize, Vec<Field>, Vec<ColStats>, f64) {
        let table = self.next_table;
        self.next_table += 1;
        let strategy = build_strategy(&keys, &build);
        let (fields, stats, rows) = (build.fields.clone(), build.stats.clone(), build.rows);
        let payload: Vec<usize> = if membership { Vec::new() } else { (0..fields.len()).collect() };
        let estimated_rows = rows.max(0.0) as u64;
        let repeated_keys = keys_unique(&build, &keys) == Some(false);
        let payload_ranges = payload.iter().map(|&c| known_range(&Expr::col(c, fields[c].name.clone()), &build)).collect();
        let sink = HashBuild { table, keys, payload, strategy, nulls_equal, estimated_rows, membership, repeated_keys, null_aware, payload_ranges };
        self.push_pipeline(build, Sink::HashBuild(sink));
        (table, fields, stats, rows)
    }

    /// A semi (anti) join run from its other side (see [`MarkBuild`]): `kept` — the
    /// side whose rows the join keeps — is built into a table, `large` probes it and
    /// marks the rows it matches, and the rows marked (not marked) are the result the
    /// stream goes on from. `residual` reads `large`'s columns, then `kept`'s.
    #[allow(clippy::too_many_arguments)]
    fn marked_join(
        &mut self,
        anti: bool,
        kept: Stream,
        large: Stream,
        kept_keys: Vec<Expr>,
        large_keys: Vec<Expr>,
        residual: Option<Expr>,
        fields: Vec<Field>,
    ) -> Stream {
        let (table, kept_fields, stats, rows) = self.build_table(kept, kept_keys, false, false, false);
        let result = self.new_result();
        self.push_pipeline(
            large,
            Sink::MarkBuild(MarkBuild { table, keys: large_keys, residual, anti, result, fields: kept_fields }),
        );
        Stream::from_result(result, fields, stats, rows * selectivity::DEFAULT_SELECTIVITY)
    }

    /// The tree of inner equi-joins at `root` taken apart (see [`reorder`]), if it has
    /// three or more relations and its outputs, keys and conditions have an IR form.
    fn reorderable_region<'p>(&self, root: &'p LogicalPlan) -> Option<reorder::JoinRegion<'p>> {
        let region = reorder::region(root)?;
        fields_of(root.schema()).ok()?;
        fields_of(&region.schema).ok()?;
        for key in region.edges.iter().flat_map(|e| &e.keys) {
            expr::translate(&key.expr, region.relations.get(key.relation)?.schema()).ok()?;
        }
        for condition in region.conditions() {
            expr::translate(condition, &region.schema).ok()?;
        }
        Some(region)
    }

    /// Plans the relations of a join tree and joins them in the order
    /// [`reorder::greedy`] picks from their estimates (the query's order if that cannot
    /// be built), with `root`'s columns at the end.
    fn reordered_joins(&mut self, root: &LogicalPlan, region: reorder::JoinRegion<'_>) -> Stream {
        let mut streams: Vec<Option<Stream>> = region.relations.iter().map(|r| Some(self.node(r))).collect();
        let estimates = reorder::Estimates {
            rows: streams.iter().map(|s| s.as_ref().map_or(1.0, |s| s.rows)).collect(),
            distinct: region
                .edges
                .iter()
                .map(|e| {
                    e.keys.each_ref().map(|k| {
                        let stats = &streams.get(k.relation)?.as_ref()?.stats;
                        stats.get(k.column?)?.distinct.map(|d| d as f64)
                    })
                })
                .collect(),
        };
        let built = reorder::greedy(&region.ends(), &estimates)
            .and_then(|tree| region.build(&tree, &estimates.rows))
            .or_else(|| region.build(&region.written, &estimates.rows));
        match built.and_then(|b| self.joined(b, &mut streams)) {
            Some(mut stream) => {
                stream.fields = fields_of(root.schema()).unwrap_or(stream.fields);
                stream
            }
            // Not expected (the region was checked): DataFusion runs the tree as written.
            None => self.external(root, Vec::new(), "join order could not be rebuilt".into()),
        }
    }

    /// Plans joins that [`reorder`] rebuilt, over their relations' planned streams.
    fn joined(&mut self, built: reorder::Built, streams: &mut [Option<Stream>]) -> Option<Stream> {
        let (join, probe, build, keep) = match built {
            reorder::Built::Relation(i) => return streams.get_mut(i)?.take(),
            reorder::Built::Join { join, probe, build, keep } => (join, probe, build, keep),
        };
        let left = self.joined(*probe, streams)?;
        let right = self.joined(*build, streams)?;
        let fields = fields_of(&join.schema).ok()?;
        let mut stream = self.join(&join, left, right, fields);
        if let Some(keep) = keep {
            let fields: Vec<Field> = keep.iter().map(|&i| stream.fields.get(i).cloned()).collect::<Option<_>>()?;
            let exprs = keep.iter().zip(&fields).map(|(&i, f)| Expr::col(i, f.name.clone())).collect();
            stream.project(exprs, fields);
        }
        Some(stream)
    }

    /// Hands `node` to DataFusion, its children being the results of `children`.
    fn external(&mut self, node: &LogicalPlan, children: Vec<Stream>, reason: String) -> Stream {
        let fields = fields_of(node.schema()).unwrap_or_default();
        let result = self.new_result();
        let id = self.externals.len();
        let mut inputs = Vec::new();
        let mut new_children = Vec::new();
        for (child, stream) in node.inputs().into_iter().zip(children) {
            let rid = self.materialize(stream);
            match placeholder(child.schema(), rid) {
                Ok((plan, slot)) => {
                    inputs.push((rid, slot));
                    new_children.push(plan);
                }
                Err(_) => {
                    new_children.push(child.clone());
                }
            }
        }
        let plan = if new_children.is_empty() {
            node.clone()
        } else {
            node.with_new_exprs(node.expressions(), new_children).unwrap_or_else(|_| {
                // Could not splice: DataFusion runs the whole subtree (its pipelines'
                // results are then unused, but the answer is right).
                inputs.clear();
                node.clone()
            })
        };
        let input_ids = inputs.iter().map(|(r, _)| *r).collect();
        self.externals.push(ExternalPlan { plan, inputs });
        let operator = node.display().to_string();
        let operator = operator.split(':').next().unwrap_or("").to_string();
        self.steps.push(Step::External(External {
            id,
            result,
            inputs: input_ids,
            fields: fields.clone(),
            operator,
            reason,
        }));
        let stats = vec![ColStats::default(); fields.len()];
        Stream::from_result(result, fields, stats, 1000.0)
    }
}

/// An expression [`Planner::check`] already translated successfully; a failure here
/// cannot happen, and would only leave a placeholder column that the executor's type
/// checks reject.
fn translated(e: &DfExpr, s: &DFSchema, subqueries: &expr::Subqueries) -> Expr {
    expr::translate_in(e, s, subqueries).unwrap_or(Expr::Column { index: 0, name: "?".into() })
}

/// A DataFusion plan reading result `rid` with exactly the (qualified) columns of `schema`.
fn placeholder(schema: &DFSchema, rid: ResultId) -> datafusion::error::Result<(LogicalPlan, Arc<ResultTable>)> {
    let arrow_fields: Vec<ArrowField> = schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| ArrowField::new(format!("c{i}"), f.data_type().clone(), true))
        .collect();
    let slot = Arc::new(ResultTable::new(Arc::new(Schema::new(arrow_fields))));
    let source = provider_as_source(Arc::clone(&slot) as _);
    let exprs: Vec<DfExpr> = schema
        .iter()
        .enumerate()
        .map(|(i, (q, f))| col(Column::new_unqualified(format!("c{i}"))).alias_qualified(q.cloned(), f.name()))
        .collect();
    let plan = LogicalPlanBuilder::scan(format!("__tessera_r{rid}"), source, None)?.project(exprs)?.build()?;
    Ok((plan, slot))
}

/// Whether `keys` are unique in `s`: some key column is (Some(true)); a single key
/// column whose values repeat (Some(false)); else unknown.
fn keys_unique(s: &Stream, keys: &[Expr]) -> Option<bool> {
    let u: Vec<Option<bool>> = keys.iter().map(|k| s.stats_of(k).unique).collect();
    if u.contains(&Some(true)) {
        Some(true)
    } else if u == [Some(false)] {
        Some(false)
    } else {
        None
    }
}

/// The estimated share of `probe`'s rows that find a match among `build_rows` rows when
/// joined on `keys`: the build side's rows over the probe key's distinct values (a
/// foreign key into an unfiltered table matches always, into a filtered one as often
/// as the filter keeps); over several keys, over the most distinct values one of them
/// has (the pairs are at least that many: TPC-H q02's `(ps_partkey, ps_supplycost)`
/// against one cheapest cost per part); None when statistics do not tell.
fn match_fraction(probe: &Stream, keys: &[Expr], build_rows: f64) -> Option<f64> {
    let distinct = keys.iter().map(|k| probe.stats_of(k).distinct).collect::<Option<Vec<u64>>>()?.into_iter().max()?;
    (distinct > 0).then(|| (build_rows / distinct as f64).clamp(0.0, 1.0))
}

fn unreachable_roles() -> (JoinKind, bool) {
    (JoinKind::Inner, true)
}

/// The IR join kind of a DataFusion join type, and whether the left input probes.
/// How a table built on `keys` over `build` addresses them: a perfect hash for one
/// integer key whose range is small and dense enough, else open addressing.
fn build_strategy(keys: &[Expr], build: &Stream) -> BuildStrategy {
    let hashed = || BuildStrategy::Hash { key_ranges: key_ranges(keys, build) };
    match keys {
        [Expr::Column { index, .. }] if build.fields[*index].ty.is_integer() || build.fields[*index].ty == Type::Date32 => {
            match build.stats[*index].range {
                Some((min, max)) if max >= min => {
                    let slots = (max - min) as u64 + 1;
                    // The key column's density, not the filtered rows': a filter on
                    // the build side leaves the keys where they were.
                    let distinct = (build.rows as u64).max(build.stats[*index].distinct.unwrap_or(0)).max(1);
                    if slots <= PERFECT_JOIN_MAX_SLOTS && slots <= distinct.saturating_mul(PERFECT_JOIN_MAX_SPARSITY).max(1 << 16) {
                        BuildStrategy::Perfect { min, max }
                    } else {
                        hashed()
                    }
                }
                _ => hashed(),
            }
        }
        _ => hashed(),
    }
}

fn join_roles(t: JoinType, null_aware: bool) -> Result<(JoinKind, bool), String> {
    if null_aware && t != JoinType::LeftAnti {
        return Err(format!("null-aware {t} join is not in the IR yet"));
    }
    Ok(match t {
        JoinType::Inner => (JoinKind::Inner, true),
        JoinType::Left => (JoinKind::LeftOuter, true),
        JoinType::Right => (JoinKind::LeftOuter, false),
        JoinType::LeftSemi => (JoinKind::Semi, true),
        JoinType::RightSemi => (JoinKind::Semi, false),
        JoinType::LeftAnti => (JoinKind::Anti, true),
        JoinType::RightAnti => (JoinKind::Anti, false),
        // EXISTS / IN inside OR: every left row, with whether it has a match.
        JoinType::LeftMark => (JoinKind::Mark, true),
        other => return Err(format!("{other} join is not in the IR yet")),
    })
}

fn limit_of(l: &datafusion::logical_expr::Limit) -> Result<(usize, Option<usize>), String> {
    let skip = match l.get_skip_type().map_err(|e| e.to_string())? {
        SkipType::Literal(s) => s,
        SkipType::UnsupportedExpr => return Err("OFFSET that is not a constant".into()),
    };
    let fetch = match l.get_fetch_type().map_err(|e| e.to_string())? {
        FetchType::Literal(f) => f,
        FetchType::UnsupportedExpr => return Err("LIMIT that is not a constant".into()),
    };
    Ok((skip, fetch))
}

/// An aggregate expression; `ty` is its output type from the plan's schema.
fn aggregate(e: &DfExpr, schema: &DFSchema, ty: Type) -> Result<AggExpr, String> {
    let (inner, name) = match e {
        DfExpr::Alias(a) => (a.expr.as_ref(), a.name.clone()),
        e => (e, e.schema_name().to_string()),
    };
    let DfExpr::AggregateFunction(f) = inner else {
        return Err(format!("aggregate {} is not in the IR yet", inner.variant_name()));
    };
    let p = &f.params;
    if p.filter.is_some() {
        return Err("aggregate FILTER is not in the IR yet".into());
    }
    if !p.order_by.is_empty() {
        return Err("ordered aggregates are not in the IR yet".into());
    }
    if p.distinct {
        return Err("DISTINCT aggregates are not in the IR yet".into());
    }
    let fname = f.func.name().to_ascii_lowercase();
    let arg = match p.args.as_slice() {
        [a] => a,
        _ => return Err(format!("{fname} with {} arguments is not in the IR yet", p.args.len())),
    };
    let count_star = matches!(arg, DfExpr::Literal(v, _) if !v.is_null());
    let func = match fname.as_str() {
        "count" if count_star => AggFunc::CountStar,
        "count" => AggFunc::Count,
        "sum" => AggFunc::Sum,
        "avg" | "mean" => AggFunc::Avg,
        "min" => AggFunc::Min,
        "max" => AggFunc::Max,
        other => return Err(format!("aggregate {other} is not in the IR yet")),
    };
    let arg = if func == AggFunc::CountStar { None } else { Some(expr::translate(arg, schema)?) };
    if let Some(a) = &arg {
        let at = a.ty(&fields_of(schema)?);
        let ok = match func {
            AggFunc::Sum | AggFunc::Avg => at.is_numeric(),
            _ => true,
        };
        if !ok {
            return Err(format!("{fname} over {at} is not in the IR yet"));
        }
    }
    Ok(AggExpr { func, arg, distinct: false, ty, name })
}

/// What is known of the values aggregate `agg` gives over stream `s` in `groups` groups:
/// a MIN or MAX is one of its argument's values (the argument's range and distinct
/// count, when the types match); a COUNT's groups sum to the rows counted, and d distinct
/// counts need 1 + 2 + … + d ≤ rows, so there are at most √(2 · rows) of them (√(8 ·
/// rows): the rows are an estimate; TPC-H q13's orders per customer at SF 10 have 46
/// values for 1.5 M customers, where the group estimate alone would size a table of
/// millions of slots).
fn aggregate_stats(agg: &AggExpr, s: &Stream, groups: f64) -> ColStats {
    let groups = groups.max(1.0) as u64;
    match (agg.func, &agg.arg) {
        (AggFunc::Min | AggFunc::Max, Some(arg)) if !agg.distinct && arg.ty(&s.fields) == agg.ty => {
            let st = s.stats_of(arg);
            ColStats { range: st.range, distinct: st.distinct.map(|d| d.min(groups)), ..ColStats::default() }
        }
        (AggFunc::Count | AggFunc::CountStar, _) => {
            let counts = (8.0 * s.rows.max(1.0)).sqrt() as u64 + 1;
            ColStats { distinct: Some(counts.min(groups)), ..ColStats::default() }
        }
        _ => ColStats::default(),
    }
}

/// The value of `agg` over a group of one row, over that row's columns `fields`: a
/// COUNT(*) is 1, a COUNT 0 or 1 as its argument is NULL or not, and SUM, AVG, MIN and
/// MAX are the argument itself in the aggregate's type (a SUM or AVG of decimals
/// widens, exactly).
fn one_row_aggregate(agg: &AggExpr, fields: &[Field]) -> Expr {
    let int = |v: i64| Expr::lit(tessera_ir::Scalar::Int(v), agg.ty);
    // Only COUNT(*) has no argument.
    let Some(arg) = &agg.arg else { return int(1) };
    match agg.func {
        AggFunc::CountStar => int(1),
        AggFunc::Count => Expr::Case {
            when_then: vec![(Expr::IsNull(Box::new(arg.clone())), int(0))],
            otherwise: Some(Box::new(int(1))),
            ty: agg.ty,
        },
        AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max if arg.ty(fields) == agg.ty => arg.clone(),
        AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max => Expr::Cast { expr: Box::new(arg.clone()), ty: agg.ty },
    }
}

/// Perfect hash when every key is a column with a small known domain, else hashing;
/// also the estimated number of groups.
fn group_strategy(keys: &[Expr], s: &Stream) -> (GroupStrategy, f64) {
    if keys.is_empty() {
        return (GroupStrategy::Scalar, 1.0);
    }
    let mut domains = Vec::new();
    let mut slots: u64 = 1;
    let mut perfect = true;
    let mut distinct_product: f64 = 1.0;
    for k in keys {
        let stats = s.stats_of(k);
        distinct_product *= stats.distinct.map(|d| d.max(1) as f64).unwrap_or(s.rows.max(1.0));
        let ty = k.ty(&s.fields);
        let domain = match (k, ty, &stats) {
            (Expr::Column { .. }, Type::Boolean, _) => Some((KeyDomain::Boolean, 2)),
            (Expr::Column { .. }, Type::Utf8, ColStats { dictionary: Some(est), .. }) => {
                Some((KeyDomain::Dictionary { estimate: *est }, (*est).max(1)))
            }
            (Expr::Column { .. }, t, ColStats { range: Some((min, max)), .. })
                if (t.is_integer() || t == Type::Date32) && max >= min && ((max - min) as u64) < PERFECT_AGG_MAX_GROUPS =>
            {
                Some((KeyDomain::Range { min: *min, max: *max }, (max - min) as u64 + 1))
            }
            _ => None,
        };
        match domain {
            Some((d, n)) => {
                // One more slot for NULL.
                slots = slots.saturating_mul(n + 1);
                domains.push(d);
            }
            None => perfect = false,
        }
    }
    if perfect && slots <= PERFECT_AGG_MAX_GROUPS {
        (GroupStrategy::Perfect { domains }, (slots as f64).min(distinct_product))
    } else {
        let est = distinct_product.min(s.rows.max(1.0));
        (GroupStrategy::Hash { estimated_groups: est as u64, key_ranges: key_ranges(keys, s) }, est)
    }
}

/// The range of `e`'s values in stream `s`, when statistics know it: integers, dates
/// and decimals of up to 18 digits (their scaled values).
fn known_range(e: &Expr, s: &Stream) -> Option<(i64, i64)> {
    let ty = e.ty(&s.fields);
    let ranged = ty.is_integer() || ty == Type::Date32 || matches!(ty, Type::Decimal { precision, .. } if precision <= 18);
    s.stats_of(e).range.filter(|(min, max)| ranged && max >= min)
}

/// The range of the values aggregate `agg` takes from stream `s` ([`known_range`]), as
/// [`Aggregate::value_ranges`] carries them.
fn value_range(agg: &AggExpr, s: &Stream) -> Option<(i64, i64)> {
    known_range(agg.arg.as_ref()?, s)
}

/// Per hash key, the range of its values when statistics know it (integer, date and
/// decimal columns, decimals unscaled: TPC-H q2's `(ps_partkey, MIN(ps_supplycost))`
/// packs in 21 + 17 bits at SF 10).
fn key_ranges(keys: &[Expr], s: &Stream) -> Vec<Option<(i64, i64)>> {
    keys.iter().map(|k| known_range(k, s).filter(|_| matches!(k, Expr::Column { .. }))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_plan_has_its_own_number() {
        let empty = || PlannedQuery::new(QueryPlan { steps: Vec::new(), output: 0, output_fields: Vec::new() }, Vec::new());
        let (a, b) = (empty(), empty());
        // The same plan made twice: the same text, different numbers (a placement kept
        // under one number is never found for another plan).
        assert_eq!(a.plan_text(), b.plan_text());
        assert_ne!(a.id(), b.id());
        assert_eq!(a.id(), a.id());
    }
}
