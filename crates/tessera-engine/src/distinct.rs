//! DISTINCT aggregates as plain aggregations joined on their group keys.
//!
//! DataFusion rewrites an aggregation whose DISTINCT aggregates all read one argument,
//! beside only SUM/MIN/MAX, into two aggregations (`single_distinct_aggregation_to_group_by`:
//! group by the keys and the argument, then aggregate per key). Any other aggregation
//! with a DISTINCT aggregate — `COUNT(DISTINCT a), COUNT(DISTINCT b)`, or
//! `COUNT(*), COUNT(DISTINCT a)` — would reach the pipelines as a DISTINCT aggregate,
//! which the IR does not have, and run as a DataFusion step. [`DistinctAggregates`]
//! rewrites it into aggregations the pipelines run (on the GPU too), one branch per
//! distinct argument and one for the other aggregates:
//!
//! ```text
//! SELECT k, COUNT(*), COUNT(DISTINCT a), SUM(DISTINCT b) FROM t GROUP BY k
//! =>  (SELECT k, COUNT(*) FROM t GROUP BY k)
//!     JOIN (SELECT k, COUNT(a) FROM (SELECT k, a FROM t GROUP BY k, a) GROUP BY k) USING (k)
//!     JOIN (SELECT k, SUM(b) FROM (SELECT k, b FROM t GROUP BY k, b) GROUP BY k) USING (k)
//! ```
//!
//! Each branch groups the same input rows by the same keys, so every group is in every
//! branch and inner joins lose none. A key that may be NULL joins as two that never are
//! (whether it is NULL; its value, NULL replaced by its type's default), so a NULL group
//! meets itself and the joins run on the GPU too. Without GROUP BY each branch is one row, and they are crossed. A
//! COUNT, SUM or AVG over the distinct (key, value) groups skips NULL values as the
//! DISTINCT aggregate does; MIN and MAX ignore DISTINCT and go with the other aggregates.
//! Aggregates with FILTER or ORDER BY, several arguments or grouping sets are left as
//! they are, and so is an aggregation whose input may give other rows when read again
//! (a volatile function, a LIMIT). Like `checked`, the rule does nothing on plain DataFusion (`tessera.engine =
//! 'datafusion'`), which the tests compare against.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, NullEquality, ScalarValue};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::{Aggregate, Expr as DfExpr, JoinType, LogicalPlan, LogicalPlanBuilder, col, lit, when};
use datafusion::optimizer::{ApplyOrder, OptimizerConfig, OptimizerRule};

use crate::options::plain_datafusion;

/// The optimizer rule; see the module documentation.
#[derive(Debug, Default)]
pub struct DistinctAggregates;

impl OptimizerRule for DistinctAggregates {
    fn name(&self) -> &str {
        "tessera_distinct_aggregates"
    }

    fn apply_order(&self) -> Option<ApplyOrder> {
        Some(ApplyOrder::BottomUp)
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(&self, plan: LogicalPlan, config: &dyn OptimizerConfig) -> datafusion::error::Result<Transformed<LogicalPlan>> {
        if plain_datafusion(&config.options()) {
            return Ok(Transformed::no(plan));
        }
        let LogicalPlan::Aggregate(agg) = &plan else { return Ok(Transformed::no(plan)) };
        match split(agg)? {
            Some(rewritten) => Ok(Transformed::yes(rewritten)),
            None => Ok(Transformed::no(plan)),
        }
    }
}

/// Names of the columns the branches make (kept apart from any user column by the prefix).
fn group_name(k: usize) -> String {
    format!("__tessera_g{k}")
}

fn aggregate_name(i: usize) -> String {
    format!("__tessera_a{i}")
}

fn null_name(k: usize) -> String {
    format!("__tessera_n{k}")
}

fn value_name(k: usize) -> String {
    format!("__tessera_v{k}")
}

fn branch_name(b: usize) -> String {
    format!("__tessera_b{b}")
}

/// A DISTINCT aggregate the rewrite takes: its function is one of these, over one
/// argument, without FILTER or ORDER BY (MIN and MAX DISTINCT never get here: they are
/// the plain MIN and MAX, see `split`).
fn distinct_argument(f: &AggregateFunction) -> Option<&DfExpr> {
    let name = f.func.name().to_ascii_lowercase();
    let p = &f.params;
    match p.args.as_slice() {
        [arg] if p.filter.is_none() && p.order_by.is_empty() && matches!(name.as_str(), "count" | "sum" | "avg") => Some(arg),
        _ => None,
    }
}

/// `f` over `args`, without DISTINCT.
fn plain(f: &AggregateFunction, args: Vec<DfExpr>) -> DfExpr {
    DfExpr::AggregateFunction(AggregateFunction::new_udf(Arc::clone(&f.func), args, false, None, Vec::new(), f.params.null_treatment))
}

/// The rewrite of `agg`, or None where it does not apply (see the module documentation).
fn split(agg: &Aggregate) -> datafusion::error::Result<Option<LogicalPlan>> {
    if agg.group_expr.iter().any(|g| matches!(g, DfExpr::GroupingSet(_))) {
        return Ok(None);
    }
    // Each branch reads the input again: it must give the same rows each time (nothing
    // volatile, no LIMIT, which may pick other rows).
    let varies = agg.input.exists(|node| Ok(matches!(node, LogicalPlan::Limit(_)) || node.expressions().iter().any(|e| e.is_volatile())))?;
    if varies || agg.group_expr.iter().chain(&agg.aggr_expr).any(|e| e.is_volatile()) {
        return Ok(None);
    }
    let mut functions = Vec::with_capacity(agg.aggr_expr.len());
    for e in &agg.aggr_expr {
        let DfExpr::AggregateFunction(f) = e.clone().unalias() else { return Ok(None) };
        functions.push(f);
    }
    let is_distinct = |f: &AggregateFunction| f.params.distinct && !matches!(f.func.name().to_ascii_lowercase().as_str(), "min" | "max");
    if !functions.iter().any(is_distinct) {
        return Ok(None);
    }
    // Per aggregate: its branch. The other aggregates (MIN/MAX DISTINCT among them) go
    // to one branch; each distinct argument gets one of its own.
    let mut others: Vec<usize> = Vec::new();
    let mut by_argument: Vec<(DfExpr, Vec<usize>)> = Vec::new();
    for (i, f) in functions.iter().enumerate() {
        if !is_distinct(f) {
            others.push(i);
            continue;
        }
        let Some(arg) = distinct_argument(f) else { return Ok(None) };
        match by_argument.iter_mut().find(|(a, _)| a == arg) {
            Some((_, list)) => list.push(i),
            None => by_argument.push((arg.clone(), vec![i])),
        }
    }
    let groups: Vec<DfExpr> = agg.group_expr.iter().enumerate().map(|(k, g)| g.clone().unalias().alias(group_name(k))).collect();
    let group_columns = || (0..groups.len()).map(|k| col(group_name(k))).collect::<Vec<_>>();
    let input = Arc::clone(&agg.input);
    let mut branches: Vec<(LogicalPlan, Vec<usize>)> = Vec::new();
    if !others.is_empty() {
        let exprs = others
            .iter()
            .map(|&i| {
                let f = &functions[i];
                plain(f, f.params.args.clone()).alias(aggregate_name(i))
            })
            .collect::<Vec<_>>();
        let plan = LogicalPlanBuilder::from(Arc::clone(&input)).aggregate(groups.clone(), exprs)?.build()?;
        branches.push((plan, others));
    }
    for (arg, list) in by_argument {
        const VALUE: &str = "__tessera_x";
        let mut keys = groups.clone();
        keys.push(arg.alias(VALUE));
        let exprs = list.iter().map(|&i| plain(&functions[i], vec![col(VALUE)]).alias(aggregate_name(i))).collect::<Vec<_>>();
        let plan = LogicalPlanBuilder::from(Arc::clone(&input)).aggregate(keys, Vec::<DfExpr>::new())?.aggregate(group_columns(), exprs)?.build()?;
        branches.push((plan, list));
    }
    // A NULL group key is a group, in every branch. The branches join on keys that are
    // never NULL: a key that may be NULL joins as whether it is NULL and its value with
    // NULL replaced by its type's default value (a join matching NULL to NULL does not
    // run on the GPU, and SQL's = matches no NULL).
    let nullable: Vec<usize> = (0..groups.len()).filter(|&k| agg.schema.field(k).is_nullable()).collect();
    let mut defaults = Vec::with_capacity(nullable.len());
    for &k in &nullable {
        let Ok(default) = ScalarValue::new_default(agg.schema.field(k).data_type()) else { return Ok(None) };
        defaults.push(default);
    }
    let mut join_keys: Vec<String> = (0..groups.len()).filter(|k| !nullable.contains(k)).map(group_name).collect();
    for &k in &nullable {
        join_keys.push(null_name(k));
        join_keys.push(value_name(k));
    }
    let mut owner = vec![0usize; functions.len()];
    let mut joined: Option<LogicalPlanBuilder> = None;
    for (b, (plan, list)) in branches.into_iter().enumerate() {
        for i in list {
            owner[i] = b;
        }
        let mut branch = LogicalPlanBuilder::from(plan);
        if !nullable.is_empty() {
            let mut exprs: Vec<DfExpr> = branch.schema().columns().into_iter().map(DfExpr::Column).collect();
            for (&k, default) in nullable.iter().zip(&defaults) {
                let g = col(group_name(k));
                // An integer, not a boolean (kernels hold no boolean values or keys), and
                // two tests that are not one expression (which would become a boolean
                // column of its own).
                exprs.push(when(g.clone().is_null(), lit(1i32)).otherwise(lit(0i32))?.alias(null_name(k)));
                exprs.push(when(g.clone().is_not_null(), g).otherwise(lit(default.clone()))?.alias(value_name(k)));
            }
            branch = branch.project(exprs)?;
        }
        let aliased = branch.alias(branch_name(b))?.build()?;
        joined = Some(match joined {
            None => LogicalPlanBuilder::from(aliased),
            Some(left) if groups.is_empty() => left.cross_join(aliased)?,
            Some(left) => {
                let on = |b: usize| join_keys.iter().map(|n| Column::new(Some(branch_name(b)), n.clone())).collect::<Vec<_>>();
                left.join_detailed(aliased, JoinType::Inner, (on(0), on(b)), None, NullEquality::NullEqualsNothing)?
            }
        });
    }
    let Some(joined) = joined else { return Ok(None) };
    // The aggregation's own schema back: its group keys, then its aggregates, each under
    // its name and qualifier.
    let mut exprs = Vec::with_capacity(agg.schema.fields().len());
    for k in 0..groups.len() {
        let (qualifier, field) = agg.schema.qualified_field(k);
        exprs.push(DfExpr::Column(Column::new(Some(branch_name(0)), group_name(k))).alias_qualified(qualifier.cloned(), field.name()));
    }
    for (i, &b) in owner.iter().enumerate() {
        let (qualifier, field) = agg.schema.qualified_field(groups.len() + i);
        exprs.push(DfExpr::Column(Column::new(Some(branch_name(b)), aggregate_name(i))).alias_qualified(qualifier.cloned(), field.name()));
    }
    Ok(Some(joined.project(exprs)?.build()?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use datafusion::common::tree_node::TreeNode;
    use datafusion::logical_expr::{Expr as DfExpr, LogicalPlan};

    use crate::session::Session;

    /// Whether `plan` still holds a DISTINCT aggregate.
    fn has_distinct(plan: &LogicalPlan) -> bool {
        plan.exists(|node| Ok(matches!(node, LogicalPlan::Aggregate(a) if a.aggr_expr.iter().any(|e| matches!(e.clone().unalias(), DfExpr::AggregateFunction(f) if f.params.distinct)))))
            .unwrap()
    }

    async fn optimized(session: &Session, sql: &str) -> LogicalPlan {
        let state = session.context().state();
        let plan = state.create_logical_plan(sql).await.unwrap();
        state.optimize(&plan).unwrap()
    }

    /// The rule runs right after DataFusion's single-distinct rule (a DataFusion upgrade
    /// that renames that rule would otherwise drop it silently).
    #[test]
    fn follows_the_single_distinct_rule() {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::open(dir.path()).unwrap();
        let names: Vec<String> = session.context().state().optimizers().iter().map(|r| r.name().to_string()).collect();
        let at = names.iter().position(|n| n == "tessera_distinct_aggregates").unwrap_or_else(|| panic!("{names:?}"));
        assert_eq!(names[at - 1], "single_distinct_aggregation_to_group_by");
    }

    /// Aggregations DataFusion leaves with DISTINCT aggregates are rewritten, with their
    /// schema kept; an input that may give other rows when read again is not, and plain
    /// DataFusion keeps its own plans.
    #[tokio::test]
    async fn distinct_aggregates_become_joined_aggregations() {
        let dir = tempfile::tempdir().unwrap();
        let session = Session::open(dir.path()).unwrap();
        session.sql("CREATE TABLE t (k INT, a INT NOT NULL, b VARCHAR)").await.unwrap();
        for sql in [
            "SELECT k, COUNT(DISTINCT a), COUNT(DISTINCT b) FROM t GROUP BY k",
            "SELECT k, COUNT(*), COUNT(DISTINCT a) FROM t GROUP BY k",
            "SELECT COUNT(DISTINCT a), SUM(DISTINCT a), AVG(DISTINCT k), MIN(DISTINCT b) FROM t",
            "SELECT k % 3, COUNT(DISTINCT a) AS n, COUNT(DISTINCT b) FROM t GROUP BY k % 3 HAVING COUNT(DISTINCT a) > 1",
        ] {
            let state = session.context().state();
            let before = state.create_logical_plan(sql).await.unwrap();
            let after = state.optimize(&before).unwrap();
            assert!(!has_distinct(&after), "{sql}:\n{after}");
            assert!(after.schema().logically_equivalent_names_and_types(before.schema()), "{sql}:\n{before}\n{after}");
        }
        for sql in [
            "SELECT k, COUNT(DISTINCT a), COUNT(DISTINCT b) FROM (SELECT * FROM t LIMIT 5) s GROUP BY k",
            "SELECT k, COUNT(DISTINCT a), COUNT(DISTINCT b) FROM (SELECT k + CAST(random() * 3 AS INT) AS k, a, b FROM t) s GROUP BY k",
            "SELECT k, COUNT(DISTINCT a) FILTER (WHERE a > 1), COUNT(DISTINCT b) FROM t GROUP BY k",
        ] {
            assert!(has_distinct(&optimized(&session, sql).await), "{sql}");
        }
        session.sql("SET tessera.engine = 'datafusion'").await.unwrap();
        assert!(has_distinct(&optimized(&session, "SELECT k, COUNT(DISTINCT a), COUNT(DISTINCT b) FROM t GROUP BY k").await));
    }
}
