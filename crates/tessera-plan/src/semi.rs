//! Semi and anti joins moved below inner joins.
//!
//! DataFusion leaves the semi join of an `IN`/`EXISTS` subquery above the inner joins
//! of the outer query: TPC-H q18 keeps the orders whose lineitems sum over 300 only
//! after joining every order to its lineitems (6 million rows at SF 1 for 57 orders).
//! A semi or anti join keeps or drops each row by that row's own columns, so it can
//! filter the input of an inner join those columns come from, before the join, which
//! then works on the rows kept. It is moved into that input when the input's largest
//! stored table is no larger than the other input's — the smaller side of a
//! key–foreign-key join, whose rows the join's output repeats — so the filter runs
//! over fewer rows, never more. Through a projection of plain columns it moves only
//! when it can then go into the inner join below.
//!
//! The same reasoning shrinks a grouped subquery a join reads (a decorrelated scalar
//! subquery, TPC-H q17's average quantity per part): groups whose key the other side
//! never has are thrown away by the join, so the aggregation's input is first semi
//! joined to the filtered relation that key comes from (q17's 0.1% of parts, q20's
//! partsupp rows of the 1% of parts named 'forest%') — the
//! rewrite DuckDB's decorrelation gets from its delim join. It applies when that
//! relation is filtered and its largest table at most a quarter of the aggregation's
//! input's, so the extra semi join is cheap beside the rows it saves.

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, JoinType};
use datafusion::logical_expr::{
    Aggregate, Expr, Join, LogicalPlan, LogicalPlanBuilder, Projection, SubqueryAlias, TableScan,
};

/// A grouped subquery's input is reduced only when the relation its key comes from has
/// a largest table at most 1/this of the input's (so the semi join probes a small
/// table) — see the module documentation.
const REDUCER_MAX_FRACTION: u64 = 4;

/// `root` with every semi and anti join moved as far below inner joins as the rule
/// above allows, or None when none moves. `rows` gives a stored table's rows.
pub(crate) fn push_semi_joins(root: &LogicalPlan, rows: &dyn Fn(&TableScan) -> Option<u64>) -> Option<LogicalPlan> {
    let moved = root.clone().transform_down(|node| Ok(push_one(node, rows))).ok()?;
    let reduced = moved.data.transform_down(|node| Ok(reduce_grouped_side(node, rows))).ok()?;
    (moved.transformed || reduced.transformed).then_some(reduced.data)
}

/// The columns of the semi join's left side it reads (keys and its filter's).
fn left_columns(semi: &Join) -> Vec<Column> {
    let mut columns: Vec<Column> = semi.on.iter().flat_map(|(l, _)| l.column_refs()).cloned().collect();
    if let Some(f) = &semi.filter {
        columns.extend(f.column_refs().into_iter().filter(|c| semi.left.schema().has_column(c)).cloned());
    }
    columns
}

fn is_semi(node: &LogicalPlan) -> Option<&Join> {
    match node {
        LogicalPlan::Join(j) if matches!(j.join_type, JoinType::LeftSemi | JoinType::LeftAnti) => Some(j),
        _ => None,
    }
}

/// The largest stored table under `plan`; None when it reads anything else.
fn largest_table(plan: &LogicalPlan, rows: &dyn Fn(&TableScan) -> Option<u64>) -> Option<u64> {
    match plan {
        LogicalPlan::TableScan(s) => rows(s),
        other => {
            let inputs = other.inputs();
            if inputs.is_empty() {
                return None;
            }
            inputs.into_iter().map(|i| largest_table(i, rows)).try_fold(0, |m, r| r.map(|r| m.max(r)))
        }
    }
}

/// `semi` with `input` as its left side (its output is that side's rows).
fn semi_over(semi: &Join, input: Arc<LogicalPlan>) -> LogicalPlan {
    let schema = Arc::clone(input.schema());
    LogicalPlan::Join(Join { left: input, schema, ..semi.clone() })
}

/// `inner` with `semi` applied to one of its inputs, if the rule allows.
fn into_inner(semi: &Join, inner: &Join, columns: &[Column], rows: &dyn Fn(&TableScan) -> Option<u64>) -> Option<LogicalPlan> {
    if inner.join_type != JoinType::Inner {
        return None;
    }
    let (l, r) = (largest_table(&inner.left, rows)?, largest_table(&inner.right, rows)?);
    let has_all = |p: &LogicalPlan| columns.iter().all(|c| p.schema().has_column(c));
    let (left, right) = if has_all(&inner.left) && l <= r {
        (Arc::new(semi_over(semi, Arc::clone(&inner.left))), Arc::clone(&inner.right))
    } else if has_all(&inner.right) && r <= l {
        (Arc::clone(&inner.left), Arc::new(semi_over(semi, Arc::clone(&inner.right))))
    } else {
        return None;
    };
    // The inputs keep their schemas, so the join's does not change.
    Some(LogicalPlan::Join(Join { left, right, ..inner.clone() }))
}

fn push_one(node: LogicalPlan, rows: &dyn Fn(&TableScan) -> Option<u64>) -> Transformed<LogicalPlan> {
    let Some(semi) = is_semi(&node) else { return Transformed::no(node) };
    let columns = left_columns(semi);
    let moved = match semi.left.as_ref() {
        LogicalPlan::Join(inner) => into_inner(semi, inner, &columns, rows),
        LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))) => match p.input.as_ref() {
            LogicalPlan::Join(inner) if columns.iter().all(|c| p.input.schema().has_column(c)) => {
                into_inner(semi, inner, &columns, rows)
                    .and_then(|joined| Projection::try_new(p.expr.clone(), Arc::new(joined)).ok())
                    .map(LogicalPlan::Projection)
            }
            _ => None,
        },
        _ => None,
    };
    match moved {
        Some(plan) => Transformed::yes(plan),
        None => Transformed::no(node),
    }
}

/// The filtered relation the values of `column` (of `plan`) come from, through
/// projections of plain columns and inner joins, and the column there.
fn key_source(plan: &LogicalPlan, column: &Column) -> Option<(LogicalPlan, Column)> {
    match plan {
        LogicalPlan::Projection(p) => {
            let i = p.schema.index_of_column(column).ok()?;
            match p.expr.get(i)? {
                Expr::Column(c) => key_source(&p.input, c),
                _ => None,
            }
        }
        LogicalPlan::Join(j) if j.join_type == JoinType::Inner => {
            if j.left.schema().has_column(column) {
                key_source(&j.left, column)
            } else {
                key_source(&j.right, column)
            }
        }
        // A filter, or a semi join (which filters its left side): the relation stops here.
        LogicalPlan::Filter(_) => Some((plan.clone(), column.clone())),
        LogicalPlan::Join(j) if j.join_type == JoinType::LeftSemi && j.left.schema().has_column(column) => {
            Some((plan.clone(), column.clone()))
        }
        _ => None,
    }
}

/// `plan` — aliases and projections over a grouped aggregation with `column` one of
/// its plain group keys — with the aggregation's input semi joined to `source` on
/// that key equal to `source_column`.
fn reduce_grouped(plan: &LogicalPlan, column: &Column, source: &LogicalPlan, source_column: &Column) -> Option<LogicalPlan> {
    match plan {
        LogicalPlan::SubqueryAlias(a) => {
            let i = a.schema.index_of_column(column).ok()?;
            let inner = Column::from(a.input.schema().qualified_field(i));
            let input = reduce_grouped(&a.input, &inner, source, source_column)?;
            SubqueryAlias::try_new(Arc::new(input), a.alias.clone()).ok().map(LogicalPlan::SubqueryAlias)
        }
        LogicalPlan::Projection(p) => {
            let i = p.schema.index_of_column(column).ok()?;
            let Expr::Column(inner) = p.expr.get(i)? else { return None };
            let input = reduce_grouped(&p.input, inner, source, source_column)?;
            Projection::try_new(p.expr.clone(), Arc::new(input)).ok().map(LogicalPlan::Projection)
        }
        LogicalPlan::Aggregate(agg) => {
            let i = agg.schema.index_of_column(column).ok()?;
            let Expr::Column(key) = agg.group_expr.get(i)? else { return None };
            let input = LogicalPlanBuilder::from(agg.input.as_ref().clone())
                .join(source.clone(), JoinType::LeftSemi, (vec![key.clone()], vec![source_column.clone()]), None)
                .and_then(|b| b.build())
                .ok()?;
            Aggregate::try_new(Arc::new(input), agg.group_expr.clone(), agg.aggr_expr.clone()).ok().map(LogicalPlan::Aggregate)
        }
        _ => None,
    }
}

/// An inner or semi join whose right side is a grouped subquery, with its input
/// reduced to the keys the left side can have (see the module documentation).
fn reduce_grouped_side(node: LogicalPlan, rows: &dyn Fn(&TableScan) -> Option<u64>) -> Transformed<LogicalPlan> {
    let LogicalPlan::Join(j) = &node else { return Transformed::no(node) };
    // A grouped side whose aggregation reads a semi join was reduced already.
    let Some(aggregate) = grouped_aggregate(&j.right) else { return Transformed::no(node) };
    if !matches!(j.join_type, JoinType::Inner | JoinType::LeftSemi) || is_semi(&aggregate.input).is_some() {
        return Transformed::no(node);
    }
    for (l, r) in &j.on {
        let (Expr::Column(l), Expr::Column(r)) = (l, r) else { continue };
        let Some((source, source_column)) = key_source(&j.left, l) else { continue };
        // The source is planned a second time: it must give the same rows both times.
        if is_volatile(&source) {
            continue;
        }
        let (Some(small), Some(large)) = (largest_table(&source, rows), largest_table(&aggregate.input, rows)) else { continue };
        if small.saturating_mul(REDUCER_MAX_FRACTION) > large {
            continue;
        }
        if let Some(right) = reduce_grouped(&j.right, r, &source, &source_column) {
            return Transformed::yes(LogicalPlan::Join(Join { right: Arc::new(right), ..j.clone() }));
        }
    }
    Transformed::no(node)
}

/// The aggregation of a grouped side: under aliases and projections.
fn grouped_aggregate(plan: &LogicalPlan) -> Option<&Aggregate> {
    match plan {
        LogicalPlan::SubqueryAlias(a) => grouped_aggregate(&a.input),
        LogicalPlan::Projection(p) => grouped_aggregate(&p.input),
        LogicalPlan::Aggregate(agg) => Some(agg),
        _ => None,
    }
}

/// Whether any expression of `plan` or below it is volatile (`random()`).
fn is_volatile(plan: &LogicalPlan) -> bool {
    plan.expressions().iter().any(|e| e.is_volatile()) || plan.inputs().into_iter().any(is_volatile)
}
