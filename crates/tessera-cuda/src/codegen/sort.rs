//! ORDER BY on the GPU, for now only over a GPU aggregation's groups: the records of the
//! present groups are ranked by the sort keys (the runtime's `tessera_rank_records`) and
//! come back in order, so the sort pipeline that follows only applies its LIMIT. With a
//! LIMIT, more groups than the rank sort takes are first narrowed to those the LIMIT can
//! keep ([`GpuSort::limit`]). A sort pipeline of its own is not generated yet
//! ([`Reason::Sort`]; next: radix sort).

use tessera_ir::{Expr, Operator, Pipeline, Sink};

use super::abi::Kernel;
use super::aggregate::Accumulator;
use super::hash::KeyPack;
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
    /// The aggregation's group key columns (before its aggregates): a key's column below
    /// this is a group key, a perfect hash's slot; above, an accumulator.
    pub group_keys: usize,
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
    /// an aggregation with group `keys` (perfect hash) or keys packed as `hashed`, and
    /// `accumulators`.
    pub fn descriptors(&self, keys: &[KeyLayout], hashed: Option<&KeyPack>, accumulators: &[Accumulator]) -> Vec<i64> {
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
            if let Some(key) = keys.get(k.column).filter(|_| k.column < self.group_keys) {
                let stride: usize = keys[..k.column].iter().map(|x| x.slots).product();
                out.extend([0, stride as i64, key.slots as i64, flags]);
            } else if let Some(part) = hashed.and_then(|h| h.parts.get(k.column)).filter(|_| k.column < self.group_keys) {
                // The packed keys are the record's last word (after every accumulator's).
                out.extend([6, off, i64::from(part.shift) | (i64::from(part.bits()) << 8), flags]);
            } else {
                let j = k.column - self.group_keys;
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
    let (Sink::Sort(s), SinkLayout::Aggregate { keys, accumulators, hashed, value_dicts, .. }) = (&sort.sink, &aggregation.sink) else {
        return why("not a sort of an aggregation's groups");
    };
    // With dependent group keys the kernel's columns are the reduced form's: the
    // independent keys, the aggregates, then the dependent keys (MINs of each group's one
    // value; those of strings are codes, which order like the strings only in a sorted
    // dictionary, not as row numbers: they are left out).
    let reduced = agg.reduced_form();
    let group_keys = reduced.as_ref().map_or(agg.group_by.len(), |(r, _)| r.group_by.len());
    let kernel_column = |index: usize| -> Result<usize, Reason> {
        match &reduced {
            None => Ok(index),
            Some((_, order)) => {
                let k = *order.get(index).ok_or_else(|| Reason::SortKeys(format!("sort key #{index} out of range")))?;
                let codes = k >= group_keys && value_dicts.get(k - group_keys).is_some_and(|d| d.is_some());
                if k >= group_keys + agg.aggregates.len() && codes {
                    return Err(Reason::SortKeys("sort by a string group key the others determine".into()));
                }
                Ok(k)
            }
        }
    };
    if keys.is_empty() && hashed.is_none() {
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
        if let (true, Some(pack)) = (index < group_keys, hashed) {
            // Records hold a hashed group's keys packed: offsets from each key's smallest,
            // which order like the keys, except NULL's, and row numbers standing for strings.
            let part = pack.parts.get(index).ok_or_else(|| Reason::SortKeys(format!("sort key #{index} out of range")))?;
            if part.nullable || part.dictionary.is_some_and(|d| d.by_row) {
                return why("sort by a hash aggregation's group key that may be NULL or is a string without a dictionary");
            }
        }
        if index >= group_keys {
            match accumulators.get(index - group_keys) {
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
    Ok(GpuSort { pipeline: sort.id, keys: out, group_keys, limit: s.fetch.map(|f| f.saturating_add(s.skip)) })
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
            group_keys: 2,
            limit: None,
        };
        assert_eq!(sort.descriptors(&keys, None, &accumulators), vec![0, 8, 26, 2, 1, 4, 0, 1, 0, 1, 8, 0]);
    }

    #[test]
    fn sort_keys_of_hashed_groups_read_their_packed_offsets() {
        use crate::codegen::hash::KeyPart;
        use tessera_ir::Type;
        let part = |shift, span| KeyPart { min: 0, span, shift, dictionary: None, ty: Type::Int32, nullable: false };
        // Keys packed as a 20-bit offset from bit 0, then a 12-bit one from bit 20.
        let pack = KeyPack { parts: vec![part(0, (1 << 20) - 1), part(20, 4000)] };
        // Records: group number, a SUM (2 words), then the packed keys at word 3.
        let accumulators = [Accumulator::Sum(SumRepr::I128)];
        let sort = GpuSort {
            pipeline: 3,
            keys: vec![GpuSortKey { column: 2, descending: true, nulls_first: false }, GpuSortKey { column: 1, descending: false, nulls_first: false }],
            group_keys: 2,
            limit: Some(10),
        };
        assert_eq!(sort.descriptors(&[], Some(&pack), &accumulators), vec![1, 1, 0, 1, 6, 3, 20 | (12 << 8), 0]);
    }
}
