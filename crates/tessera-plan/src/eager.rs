//! Aggregation below a join (eager aggregation, Yan and Larson).
//!
//! TPC-H q13 counts each customer's orders: `customer LEFT JOIN orders` grouped by
//! `c_custkey`. Planned as written, the 1.5 million orders (at SF 1) are built into a
//! hash table and every customer expands into its orders before they are counted. A row
//! of the join's left side meets exactly the right-side rows of its key, so when the
//! grouping keys are all left-side columns and the aggregates read only right-side
//! columns, the right side can be aggregated by its join key first, and the join then
//! combines one partial result a key: count becomes a sum of counts, sum a sum of sums,
//! min and max stay themselves. The join builds 100 thousand partial counts instead of
//! 1.5 million orders, and the grouping above it still merges left rows of one group.
//!
//! It applies to inner and left joins on plain right-side key columns without a
//! further join condition, with COUNT, COUNT(*), SUM, MIN and MAX (not DISTINCT), when
//! the right side's join key repeats (its table has at least [`MIN_ROWS_PER_KEY`] rows
//! a distinct key value, so the partial aggregation shrinks it) and the right side is
//! larger than the left (so building it was the costly part).

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, JoinType};
use datafusion::functions_aggregate::expr_fn::{count, max, min, sum};
use datafusion::logical_expr::expr::AggregateFunction;
use datafusion::logical_expr::{
    Aggregate, Expr, ExprSchemable, Join, LogicalPlan, Projection, cast, lit, when,
};

use crate::{Catalog, TableInfo};

/// The right side's key must have at least this many rows a distinct value: below it,
/// grouping the right side saves the join little and costs a hash aggregation.
const MIN_ROWS_PER_KEY: u64 = 2;

/// `root` with each aggregation over a join that the rule applies to rewritten, or None.
pub(crate) fn push_aggregates(root: &LogicalPlan, catalog: &dyn Catalog) -> Option<LogicalPlan> {
    let out = root.clone().transform_up(|node| Ok(rewrite(node, catalog))).ok()?;
    out.transformed.then_some(out.data)
}

fn rewrite(node: LogicalPlan, catalog: &dyn Catalog) -> Transformed<LogicalPlan> {
    match eager(&node, catalog) {
        Some(plan) => Transformed::yes(plan),
        None => Transformed::no(node),
    }
}

/// How one aggregate of the right side is computed from partial results.
enum Combine {
    /// COUNT(x): the sum of the partial counts, 0 for no match.
    Count,
    /// COUNT(*): the sum of the partial counts, and 1 for a left row without a match.
    CountStar,
    /// SUM(x): the sum of the partial sums, cast back to the original result type.
    Sum,
    /// MIN(x) / MAX(x) of the partial minima / maxima.
    Min,
    Max,
}

fn eager(node: &LogicalPlan, catalog: &dyn Catalog) -> Option<LogicalPlan> {
    let LogicalPlan::Aggregate(agg) = node else { return None };
    // The join, under at most one projection of plain columns (which the new plan does
    // without: the grouping reads its columns from the join directly).
    let join = match agg.input.as_ref() {
        LogicalPlan::Join(j) => j,
        LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => match p.input.as_ref() {
            LogicalPlan::Join(j) => j,
            _ => return None,
        },
        _ => return None,
    };
    if !matches!(join.join_type, JoinType::Inner | JoinType::Left) || join.filter.is_some() || join.on.is_empty() {
        return None;
    }
    let (left, right) = (join.left.schema(), join.right.schema());
    // Group keys from the left side only; aggregates over right-side columns only.
    if !agg.group_expr.iter().all(|e| matches!(e, Expr::Column(c) if left.has_column(c))) {
        return None;
    }
    let mut partials = Vec::new();
    let mut combines = Vec::new();
    for e in &agg.aggr_expr {
        let Expr::AggregateFunction(AggregateFunction { func, params }) = e else { return None };
        if params.distinct || params.filter.is_some() || !params.order_by.is_empty() || params.args.len() != 1 {
            return None;
        }
        let arg = &params.args[0];
        let (partial, combine) = match (func.name(), arg) {
            ("count", Expr::Literal(v, _)) if !v.is_null() => (count(lit(1i64)), Combine::CountStar),
            (name, Expr::Column(c)) if right.has_column(c) => match name {
                "count" => (count(arg.clone()), Combine::Count),
                "sum" => (sum(arg.clone()), Combine::Sum),
                "min" => (min(arg.clone()), Combine::Min),
                "max" => (max(arg.clone()), Combine::Max),
                _ => return None,
            },
            _ => return None,
        };
        partials.push(partial.alias(format!("__tessera_partial_{}", partials.len())));
        combines.push(combine);
    }
    // The right keys: plain columns whose values repeat in their table.
    let mut right_keys = Vec::new();
    for (_, r) in &join.on {
        let Expr::Column(c) = r else { return None };
        right_keys.push(c.clone());
    }
    let (repeats, right_rows) = key_repeats(&join.right, &right_keys[0], catalog)?;
    let left_rows = largest_table(&join.left, catalog)?;
    if !repeats || right_rows <= left_rows {
        return None;
    }

    // Right side grouped by its keys.
    let group: Vec<Expr> = right_keys.iter().map(|c| Expr::Column(c.clone())).collect();
    let partial = Aggregate::try_new(Arc::clone(&join.right), group, partials).ok()?;
    let partial = LogicalPlan::Aggregate(partial);
    let pschema = Arc::clone(partial.schema());
    let on: Vec<(Expr, Expr)> = join
        .on
        .iter()
        .zip(&right_keys)
        .map(|((l, _), k)| {
            let i = pschema.index_of_column(k).ok()?;
            Some((l.clone(), Expr::Column(Column::from(pschema.qualified_field(i)))))
        })
        .collect::<Option<_>>()?;
    let joined = Join::try_new(
        Arc::clone(&join.left),
        Arc::new(partial),
        on,
        None,
        join.join_type,
        join.join_constraint,
        join.null_equality,
        false,
    )
    .ok()?;
    let joined = LogicalPlan::Join(joined);

    // The same grouping over the join, combining the partial results.
    let partial_cols: Vec<Expr> = (0..combines.len())
        .map(|i| Expr::Column(Column::new_unqualified(format!("__tessera_partial_{i}"))))
        .collect();
    let outer_aggs: Vec<Expr> = combines
        .iter()
        .zip(&partial_cols)
        .enumerate()
        .map(|(i, (c, p))| {
            let e = match (c, join.join_type) {
                // A left row without a match is one row for COUNT(*).
                (Combine::CountStar, JoinType::Left) => sum(when(p.clone().is_null(), lit(1i64)).otherwise(p.clone()).ok()?),
                (Combine::Count | Combine::CountStar | Combine::Sum, _) => sum(p.clone()),
                (Combine::Min, _) => min(p.clone()),
                (Combine::Max, _) => max(p.clone()),
            };
            Some(e.alias(format!("__tessera_combined_{i}")))
        })
        .collect::<Option<_>>()?;
    let outer = Aggregate::try_new(Arc::new(joined), agg.group_expr.clone(), outer_aggs).ok()?;
    let outer = LogicalPlan::Aggregate(outer);

    // The original columns: group keys, then each aggregate under its own name and type.
    let mut exprs: Vec<Expr> = agg.group_expr.clone();
    for (i, c) in combines.iter().enumerate() {
        let field = agg.schema.field(agg.group_expr.len() + i);
        let combined = Expr::Column(Column::new_unqualified(format!("__tessera_combined_{i}")));
        let e = match c {
            Combine::Count | Combine::CountStar => when(combined.clone().is_null(), lit(0i64)).otherwise(combined).ok()?,
            _ => combined,
        };
        let e = if e.get_type(outer.schema()).ok()? == *field.data_type() { e } else { cast(e, field.data_type().clone()) };
        exprs.push(e.alias(field.name()));
    }
    let top = LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(outer)).ok()?);
    // The parents read these columns by name and type: anything else, keep the plan.
    let same = top.schema().fields().len() == agg.schema.fields().len()
        && top.schema().iter().zip(agg.schema.iter()).all(|((q1, f1), (q2, f2))| {
            q1 == q2 && f1.name() == f2.name() && f1.data_type() == f2.data_type()
        });
    same.then_some(top)
}

/// Whether the values of `key` (a column of `plan`) repeat in the stored table it comes
/// from (see [`MIN_ROWS_PER_KEY`]), and that table's rows.
fn key_repeats(plan: &LogicalPlan, key: &Column, catalog: &dyn Catalog) -> Option<(bool, u64)> {
    let (table, index) = column_source(plan, key, catalog)?;
    let distinct = table.columns.get(index)?.distinct.max(1);
    Some((table.rows >= distinct.saturating_mul(MIN_ROWS_PER_KEY), table.rows))
}

/// The stored table and column the values of `column` of `plan` are read from, through
/// filters, aliases and projections of plain columns.
fn column_source(plan: &LogicalPlan, column: &Column, catalog: &dyn Catalog) -> Option<(TableInfo, usize)> {
    match plan {
        LogicalPlan::TableScan(scan) => {
            let i = scan.projected_schema.index_of_column(column).ok()?;
            let index = match &scan.projection {
                Some(p) => *p.get(i)?,
                None => i,
            };
            Some((catalog.table(scan)?, index))
        }
        LogicalPlan::Filter(f) => column_source(&f.input, column, catalog),
        LogicalPlan::Projection(p) => {
            let i = p.schema.index_of_column(column).ok()?;
            match p.expr.get(i)? {
                Expr::Column(c) => column_source(&p.input, c, catalog),
                Expr::Alias(a) => match a.expr.as_ref() {
                    Expr::Column(c) => column_source(&p.input, c, catalog),
                    _ => None,
                },
                _ => None,
            }
        }
        LogicalPlan::SubqueryAlias(a) => {
            let i = a.schema.index_of_column(column).ok()?;
            let inner = Column::from(a.input.schema().qualified_field(i));
            column_source(&a.input, &inner, catalog)
        }
        _ => None,
    }
}

/// The rows of the largest stored table under `plan`; None when it reads anything else.
fn largest_table(plan: &LogicalPlan, catalog: &dyn Catalog) -> Option<u64> {
    match plan {
        LogicalPlan::TableScan(s) => catalog.table(s).map(|t| t.rows),
        other => {
            let inputs = other.inputs();
            if inputs.is_empty() {
                return None;
            }
            inputs.into_iter().map(|i| largest_table(i, catalog)).try_fold(0, |m, r| r.map(|r| m.max(r)))
        }
    }
}
