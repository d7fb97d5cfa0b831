//! HAVING on the GPU: a filter over an aggregation's results, applied to its groups
//! before they leave the GPU, so that only the groups that pass cross PCIe and become
//! Arrow on the host (TPC-H q18: 624 of 15 M groups at SF 10).
//!
//! The planner puts HAVING at the head of the pipeline that reads the aggregation's
//! result (`Read r0 -> Filter sum(..) > 300 -> ...`). [`plan_having`] takes from that
//! filter the conjuncts that compare an aggregate (SUM, COUNT, MIN, MAX) with a constant;
//! the runtime's `tessera_having` kernel (`records.cuh`) clears the `seen` flag of every
//! group failing one of them, before the groups are compacted for download. The pipeline
//! reading the result still runs its whole filter on the CPU over the groups that come
//! back: the GPU only drops groups the filter would drop, so any conjunct it cannot
//! evaluate (an AVG, a computed value, an OR) is simply left to the CPU.

use tessera_ir::{AggFunc, CmpOp, Expr, Operator, Pipeline, Scalar, Sink, Type};

use super::aggregate::Accumulator;
use super::unsupported::Reason;

/// The most conjuncts one aggregation's HAVING applies on the GPU (one pass over the
/// groups tests them all; more are left to the CPU's filter).
pub const MAX_HAVING_TERMS: usize = 8;

/// The part of a HAVING the GPU applies to an aggregation's groups (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuHaving {
    /// The pipeline whose filter this is (it reads the aggregation's result).
    pub pipeline: usize,
    /// Conjuncts: a group is kept when all hold.
    pub terms: Vec<HavingTerm>,
}

/// `aggregate op value`, over one aggregate's result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HavingTerm {
    /// Which aggregate of the aggregation (0 = the first after the group keys).
    pub aggregate: usize,
    /// The comparison (`=`, `<>`, `<`, `<=`, `>`, `>=`).
    pub op: CmpOp,
    /// The constant, in the aggregate result's units (a decimal's unscaled value, days of
    /// a date).
    pub value: i128,
}

impl GpuHaving {
    /// The terms as `tessera_having` reads them, six words each: the accumulator array's
    /// kind (1: signed 128-bit, 2: unsigned 64-bit, 3: signed 64-bit, 4: a SplitSum's
    /// two halves), its device address (`arrays`: each accumulator array's, in parameter
    /// order), its words per group, the comparison (0 `<`, 1 `<=`, 2 `>`, 3 `>=`, 4 `=`,
    /// 5 `<>`) and the constant's low and high words. None when a term is not one the
    /// kernel can test.
    ///
    /// Terms are over SUM, COUNT, MIN and MAX only ([`plan_having`] refuses AVG), so a
    /// sum with counts (`SumCount`) here is a SUM of values that may be NULL: its sum is
    /// read. A group without a non-NULL value (sum 0, MIN/MAX at their start) is NULL, which
    /// fails every comparison: the kernel dropping it is right, and keeping it leaves it to
    /// the CPU's filter, which drops it.
    pub fn descriptors(&self, accumulators: &[Accumulator], arrays: &[u64]) -> Option<Vec<i64>> {
        let mut first = Vec::with_capacity(accumulators.len());
        let mut at = 0usize;
        for acc in accumulators {
            first.push(at);
            at += acc.arrays().len();
        }
        let mut out = Vec::with_capacity(6 * self.terms.len());
        for t in &self.terms {
            let acc = *accumulators.get(t.aggregate)?;
            let words = acc.arrays().first()?.0 as i64;
            let op = match t.op {
                CmpOp::Lt => 0,
                CmpOp::LtEq => 1,
                CmpOp::Gt => 2,
                CmpOp::GtEq => 3,
                CmpOp::Eq => 4,
                CmpOp::NotEq => 5,
                CmpOp::NotDistinct | CmpOp::Distinct => return None,
            };
            let ptr = *arrays.get(first[t.aggregate])?;
            out.extend([acc.record_kind(), ptr as i64, words, op, t.value as u64 as i64, (t.value >> 64) as i64]);
        }
        Some(out)
    }
}

/// The [`GpuHaving`] of `reader`, the only pipeline reading the result of the
/// aggregation `agg` (the caller checks that nothing else reads it): the conjuncts of
/// its leading filter that compare a SUM, COUNT, MIN or MAX of an integer, decimal or
/// date with a constant of the same type. An error when there is none.
pub fn plan_having(reader: &Pipeline, agg: &Pipeline) -> Result<GpuHaving, Reason> {
    let why = |s: &str| Err(Reason::Having(s.to_string()));
    let Sink::Aggregate(a) = &agg.sink else { return why("not an aggregation's result") };
    if a.group_by.is_empty() {
        return why("a HAVING over an aggregation without GROUP BY (one row)");
    }
    let Some(Operator::Filter(predicate)) = reader.operators.first() else { return why("no filter over the groups") };
    let mut conjuncts = Vec::new();
    split_and(predicate, &mut conjuncts);
    let terms: Vec<HavingTerm> =
        conjuncts.into_iter().filter_map(|c| term(c, a.group_by.len(), &a.aggregates, &a.fields)).take(MAX_HAVING_TERMS).collect();
    if terms.is_empty() {
        return why("no conjunct of the HAVING compares a SUM, COUNT, MIN or MAX with a constant");
    }
    Ok(GpuHaving { pipeline: reader.id, terms })
}

fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::And(l, r) => {
            split_and(l, out);
            split_and(r, out);
        }
        other => out.push(other),
    }
}

/// A conjunct as a [`HavingTerm`], if it is `aggregate op constant` (either way round).
fn term(e: &Expr, keys: usize, aggregates: &[tessera_ir::AggExpr], fields: &[tessera_ir::Field]) -> Option<HavingTerm> {
    let Expr::Cmp { op, left, right } = e else { return None };
    let (column, literal, op) = match (left.as_ref(), right.as_ref()) {
        (Expr::Column { index, .. }, Expr::Literal { value, ty }) => (*index, (value, *ty), *op),
        (Expr::Literal { value, ty }, Expr::Column { index, .. }) => (*index, (value, *ty), flip(*op)?),
        _ => return None,
    };
    let aggregate = column.checked_sub(keys)?;
    let spec = aggregates.get(aggregate)?;
    if spec.distinct || !matches!(spec.func, AggFunc::Sum | AggFunc::Count | AggFunc::CountStar | AggFunc::Min | AggFunc::Max) {
        return None;
    }
    let ty = fields.get(column)?.ty;
    let exact = matches!(ty, Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 | Type::Decimal { .. } | Type::Date32);
    if !exact || literal.1 != ty {
        return None;
    }
    let value = match literal.0 {
        Scalar::Int(v) => i128::from(*v),
        Scalar::Decimal(v) => *v,
        Scalar::Date32(d) => i128::from(*d),
        _ => return None,
    };
    match op {
        CmpOp::NotDistinct | CmpOp::Distinct => None,
        op => Some(HavingTerm { aggregate, op, value }),
    }
}

/// `a op b` as `b flip(op) a`.
fn flip(op: CmpOp) -> Option<CmpOp> {
    Some(match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::LtEq => CmpOp::GtEq,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::GtEq => CmpOp::LtEq,
        CmpOp::Eq | CmpOp::NotEq => op,
        CmpOp::NotDistinct | CmpOp::Distinct => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::aggregate::SumRepr;
    use tessera_ir::{AggExpr, Aggregate, Device, Field, GroupStrategy, Source};

    fn col(index: usize) -> Box<Expr> {
        Box::new(Expr::Column { index, name: format!("c{index}") })
    }

    fn lit(value: Scalar, ty: Type) -> Box<Expr> {
        Box::new(Expr::Literal { value, ty })
    }

    fn field(name: &str, ty: Type) -> Field {
        Field { name: name.into(), ty, nullable: false }
    }

    const DEC: Type = Type::Decimal { precision: 25, scale: 2 };

    /// GROUP BY k: SUM(decimal), AVG, COUNT(*), MAX(date); and a reader filtering it.
    fn pipelines(predicate: Expr) -> (Pipeline, Pipeline) {
        let aggregate = |func, ty| AggExpr { func, arg: None, distinct: false, ty, name: format!("{func:?}") };
        let fields = vec![field("k", Type::Int64), field("s", DEC), field("a", Type::Float64), field("n", Type::Int64), field("d", Type::Date32)];
        let agg = Pipeline {
            id: 1,
            source: Source::Result { id: 9, fields: vec![field("k", Type::Int64)] },
            operators: vec![],
            sink: Sink::Aggregate(Aggregate {
                result: 0,
                group_by: vec![*col(0)],
                aggregates: vec![aggregate(AggFunc::Sum, DEC), aggregate(AggFunc::Avg, Type::Float64), aggregate(AggFunc::CountStar, Type::Int64), aggregate(AggFunc::Max, Type::Date32)],
                strategy: GroupStrategy::Hash { estimated_groups: 1000, key_ranges: vec![None] },
                fields: fields.clone(),
                reduced: None,
                value_ranges: Vec::new(),
            }),
            device: Device::Cpu,
            device_reason: None,
        };
        let reader = Pipeline {
            id: 2,
            source: Source::Result { id: 0, fields },
            operators: vec![Operator::Filter(predicate)],
            sink: Sink::Materialize { result: 1, skip: 0, fetch: None },
            device: Device::Cpu,
            device_reason: None,
        };
        (reader, agg)
    }

    #[test]
    fn takes_the_conjuncts_comparing_aggregates_with_constants() {
        // s > 300.00 AND 5 <= n AND a > 1.5 (AVG: left to the CPU) AND k = 3 (a group key:
        // left to the CPU) AND d < 1994-01-01.
        let p = Expr::And(
            Box::new(Expr::And(
                Box::new(Expr::Cmp { op: CmpOp::Gt, left: col(1), right: lit(Scalar::Decimal(30000), DEC) }),
                Box::new(Expr::Cmp { op: CmpOp::LtEq, left: lit(Scalar::Int(5), Type::Int64), right: col(3) }),
            )),
            Box::new(Expr::And(
                Box::new(Expr::And(
                    Box::new(Expr::Cmp { op: CmpOp::Gt, left: col(2), right: lit(Scalar::Float(1.5), Type::Float64) }),
                    Box::new(Expr::Cmp { op: CmpOp::Eq, left: col(0), right: lit(Scalar::Int(3), Type::Int64) }),
                )),
                Box::new(Expr::Cmp { op: CmpOp::Lt, left: col(4), right: lit(Scalar::Date32(8766), Type::Date32) }),
            )),
        );
        let (reader, agg) = pipelines(p);
        let h = plan_having(&reader, &agg).unwrap();
        assert_eq!(
            h.terms,
            vec![
                HavingTerm { aggregate: 0, op: CmpOp::Gt, value: 30000 },
                HavingTerm { aggregate: 2, op: CmpOp::GtEq, value: 5 },
                HavingTerm { aggregate: 3, op: CmpOp::Lt, value: 8766 },
            ]
        );
        assert_eq!(h.pipeline, 2);
        // Accumulator arrays: SUM (I128: 1 array), AVG (sum and count: 2), COUNT (1), MAX (1).
        let accs = [Accumulator::Sum(SumRepr::I128), Accumulator::SumCount(SumRepr::I64), Accumulator::Count, Accumulator::Max];
        let arrays = [100, 200, 300, 400, 500];
        let d = h.descriptors(&accs, &arrays).unwrap();
        assert_eq!(d, vec![1, 100, 2, 2, 30000, 0, 2, 400, 1, 3, 5, 0, 3, 500, 1, 0, 8766, 0]);
        // A negative constant's high word is all ones.
        let neg = GpuHaving { pipeline: 2, terms: vec![HavingTerm { aggregate: 0, op: CmpOp::NotEq, value: -7 }] };
        assert_eq!(neg.descriptors(&accs, &arrays).unwrap(), vec![1, 100, 2, 5, -7, -1]);
    }

    #[test]
    fn refuses_filters_without_a_comparison_it_can_test() {
        // OR, an AVG, a computed side, a NULL constant: nothing for the GPU.
        let or = Expr::Or(
            Box::new(Expr::Cmp { op: CmpOp::Gt, left: col(1), right: lit(Scalar::Decimal(1), DEC) }),
            Box::new(Expr::Cmp { op: CmpOp::Gt, left: col(3), right: lit(Scalar::Int(1), Type::Int64) }),
        );
        let avg = Expr::Cmp { op: CmpOp::Gt, left: col(2), right: lit(Scalar::Float(1.0), Type::Float64) };
        let null = Expr::Cmp { op: CmpOp::Gt, left: col(3), right: lit(Scalar::Null, Type::Int64) };
        for p in [or, avg, null] {
            let (reader, agg) = pipelines(p);
            assert!(plan_having(&reader, &agg).is_err());
        }
        // A term over a sum with counts (a SUM of values that may be NULL) reads the sum.
        let h = GpuHaving { pipeline: 2, terms: vec![HavingTerm { aggregate: 1, op: CmpOp::Gt, value: 1 }] };
        assert_eq!(h.descriptors(&[Accumulator::Count, Accumulator::SumCount(SumRepr::I64)], &[1, 2, 3]), Some(vec![3, 2, 1, 2, 1, 0]));
    }
}
