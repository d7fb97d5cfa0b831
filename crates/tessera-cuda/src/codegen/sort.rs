//! ORDER BY on the GPU, for now only over a GPU aggregation's groups: the records of the
//! present groups are ranked by the sort keys (the runtime's `tessera_rank_records`) and
//! come back in order, so the sort pipeline that follows only applies its LIMIT. With a
//! LIMIT, more groups than the rank sort takes are first narrowed to those the LIMIT can
//! keep ([`GpuSort::limit`]). A sort
//! pipeline of its own is not generated yet ([`Reason::Sort`]; next: radix sort).

use tessera_ir::{Expr, Operator, Pipeline, Sink};

use super::abi::Kernel;
use super::aggregate::Accumulator;
use super::layout::{KeyLayout, SinkLayout};
use super::unsupported::Reason;

/// The most groups a [`GpuSort`] ranks: its rank sort compares every pair of records
/// (4096 groups are 16 M comparisons, tens of µs); more groups are sorted by the CPU
/// backend's sort pipeline instead.
pub const GPU_SORT_MAX_ROWS: usize = 4096;

/// An ORDER BY over a GPU aggregation's result, ranked on the GPU before the groups are
/// downloaded. Planned by [`plan_sort`] where every sort key is a group key or a SUM,
/// COUNT, MIN or MAX.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSort {
    /// The sort pipeline this runs for (reports, EXPLAIN).
    pub pipeline: usize,
    /// The keys, in order.
    pub keys: Vec<GpuSortKey>,
    /// The rows its LIMIT can keep (OFFSET + LIMIT), when it has one: of more groups than
    /// [`GPU_SORT_MAX_ROWS`], only those whose first key is among the `limit` first are
    /// ranked and come back (`tessera_select_top` in `records.cuh`), when at most that
    /// many tie with them.
    pub limit: Option<usize>,
}

/// One key of a [`GpuSort`]: a column of the aggregation's output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuSortKey {
    /// The output column: group keys first, then aggregates.
    pub column: usize,
    /// Descending.
    pub descending: bool,
    /// NULLs first.
    pub nulls_first: bool,
}

impl GpuSort {
    /// The keys as `tessera_rank_records` reads them (four words each), for records of
    /// an aggregation with group `keys` and `accumulators`.
    pub fn descriptors(&self, keys: &[KeyLayout], accumulators: &[Accumulator]) -> Vec<i64> {
        // Record words: the group number, then each accumulator's array(s) in order.
        let mut offsets = Vec::with_capacity(accumulators.len());
        let mut off = 1i64;
        for acc in accumulators {
            offsets.push(off);
            off += acc.arrays().iter().map(|(words, _)| *words as i64).sum::<i64>();
        }
        let mut out = Vec::with_capacity(4 * self.keys.len());
        for k in &self.keys {
            let flags = i64::from(k.descending) | (i64::from(k.nulls_first) << 1);
            if let Some(key) = keys.get(k.column) {
                let stride: usize = keys[..k.column].iter().map(|x| x.slots).product();
                out.extend([0, stride as i64, key.slots as i64, flags]);
            } else {
                let j = k.column - keys.len();
                out.extend([accumulators[j].record_kind(), offsets[j], 0, flags]);
            }
        }
        out
    }
}

/// The [`GpuSort`] for sort pipeline `sort` over the result of the GPU aggregation `agg`
/// whose kernel is `aggregation`, or why it cannot run on the GPU.
pub fn plan_sort(sort: &Pipeline, agg: &tessera_ir::Aggregate, aggregation: &Kernel) -> Result<GpuSort, Reason> {
    let why = |s: &str| Err(Reason::SortKeys(s.to_string()));
    // With dependent group keys the kernel's columns are the reduced form's: the
    // independent keys, the aggregates, then the dependent keys (MINs of codes, which
    // do not order like their strings).
    let reduced = agg.reduced_form();
    let kernel_column = |index: usize| -> Result<usize, Reason> {
        match &reduced {
            None => Ok(index),
            Some((r, order)) => {
                let k = *order.get(index).ok_or_else(|| Reason::SortKeys(format!("sort key #{index} out of range")))?;
                if k >= r.group_by.len() + agg.aggregates.len() {
                    return Err(Reason::SortKeys("sort by a group key the others determine".into()));
                }
                Ok(k)
            }
        }
    };
    let (Sink::Sort(s), SinkLayout::Aggregate { keys, accumulators, hashed, .. }) = (&sort.sink, &aggregation.sink) else {
        return why("not a sort of an aggregation's groups");
    };
    if hashed.is_some() {
        return why("sort of a hash aggregation's groups (the rank sort reads perfect-hash group numbers)");
    }
    if keys.is_empty() {
        return why("sort of a scalar aggregate's one row");
    }
    // A projection that only picks columns (reorders or drops them, as a SELECT list
    // does between GROUP BY and ORDER BY) keeps the groups as they are: its sort keys are
    // the aggregation's columns it picks, and the executor picks them after the ranking.
    let picks: Option<Vec<usize>> = match sort.operators.as_slice() {
        [] => None,
        [Operator::Project { exprs, .. }] => match exprs.iter().map(|e| if let Expr::Column { index, .. } = e { Some(*index) } else { None }).collect() {
            Some(p) => Some(p),
            None => return why("sort of computed columns (a GPU sort ranks the groups as the aggregation left them)"),
        },
        _ => return why("sort of computed columns (a GPU sort ranks the groups as the aggregation left them)"),
    };
    if s.keys.len() > 8 {
        return why("more than 8 sort keys on the GPU");
    }
    let mut out = Vec::new();
    for k in &s.keys {
        let Expr::Column { index, .. } = k.expr else { return why(&format!("sort key {} is computed", k.expr)) };
        let index = match &picks {
            Some(p) => *p.get(index).ok_or_else(|| Reason::SortKeys(format!("sort key #{index} out of range")))?,
            None => index,
        };
        let index = kernel_column(index)?;
        if index >= keys.len() {
            match accumulators.get(index - keys.len()) {
                Some(Accumulator::SumCount(_)) => return why("sort by an AVG, or a SUM of values that may be NULL, on the GPU"),
                // The rank kernel compares 64-bit words as integers.
                Some(Accumulator::Sum(crate::codegen::aggregate::SumRepr::F64)) => return why("sort by a SUM of doubles on the GPU"),
                // The rank sort reads no counts: a group without a value would rank as its
                // accumulator's start, not as NULL.
                Some(Accumulator::MinCount | Accumulator::MaxCount) => return why("sort by a MIN or MAX of values that may be NULL on the GPU"),
                Some(_) => {}
                None => return why(&format!("sort key #{index} out of range")),
            }
        }
        out.push(GpuSortKey { column: index, descending: k.descending, nulls_first: k.nulls_first });
    }
    Ok(GpuSort { pipeline: sort.id, keys: out, limit: s.fetch.map(|f| f.saturating_add(s.skip)) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::aggregate::SumRepr;

    #[test]
    fn sort_keys_address_group_slots_and_accumulator_words_of_the_records() {
        let keys = [KeyLayout { slots: 8, min: 1992, dictionary: None }, KeyLayout { slots: 26, min: 0, dictionary: None }];
        // Records: group number, AVG's sum (2 words) and count (1), then a SUM (2 words).
        let accumulators = [Accumulator::SumCount(SumRepr::I128), Accumulator::Sum(SumRepr::I128)];
        let sort = GpuSort {
            pipeline: 7,
            keys: vec![
                GpuSortKey { column: 1, descending: false, nulls_first: true },
                GpuSortKey { column: 3, descending: true, nulls_first: false },
                GpuSortKey { column: 0, descending: false, nulls_first: false },
            ],
            limit: None,
        };
        assert_eq!(sort.descriptors(&keys, &accumulators), vec![0, 8, 26, 2, 1, 4, 0, 1, 0, 1, 8, 0]);
    }
}
