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

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, JoinType};
use datafusion::logical_expr::{Expr, Join, LogicalPlan, Projection, TableScan};

/// `root` with every semi and anti join moved as far below inner joins as the rule
/// above allows, or None when none moves. `rows` gives a stored table's rows.
pub(crate) fn push_semi_joins(root: &LogicalPlan, rows: &dyn Fn(&TableScan) -> Option<u64>) -> Option<LogicalPlan> {
    let moved = root.clone().transform_down(|node| Ok(push_one(node, rows))).ok()?;
    moved.transformed.then_some(moved.data)
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
