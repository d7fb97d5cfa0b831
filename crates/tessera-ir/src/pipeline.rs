//! Pipelines and the query plan: a DAG of `source → operators → sink` pipelines.
//!
//! A [`QueryPlan`] is a list of [`Step`]s in dependency order: every step reads only
//! results (intermediate batches or hash tables) produced by earlier steps. A step is a
//! [`Pipeline`] run by a Tessera backend, or an [`External`] subtree that the executor
//! hands to DataFusion (for what the IR cannot express yet), exchanging Arrow batches.

use serde::{Deserialize, Serialize};

use crate::expr::Expr;
use crate::types::{Field, Type};

/// Names an intermediate result (materialized batches) within one plan.
pub type ResultId = usize;
/// Names a hash table built by one pipeline and probed by others.
pub type HashTableId = usize;

/// A whole query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryPlan {
    /// Steps in dependency order.
    pub steps: Vec<Step>,
    /// The result holding the query's answer.
    pub output: ResultId,
    /// Its columns.
    pub output_fields: Vec<Field>,
}

impl QueryPlan {
    /// The pipelines, in order.
    pub fn pipelines(&self) -> impl Iterator<Item = &Pipeline> {
        self.steps.iter().filter_map(|s| match s {
            Step::Pipeline(p) => Some(p),
            Step::External(_) => None,
        })
    }

    /// The parts handed to DataFusion.
    pub fn externals(&self) -> impl Iterator<Item = &External> {
        self.steps.iter().filter_map(|s| match s {
            Step::External(e) => Some(e),
            Step::Pipeline(_) => None,
        })
    }
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Step {
    /// A pipeline run by a Tessera backend.
    Pipeline(Pipeline),
    /// A subtree DataFusion runs.
    External(External),
}

/// A subtree of the query that the IR cannot express, run by DataFusion. Its inputs are
/// results of earlier steps; its output becomes result `result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct External {
    /// Index into the planner's list of DataFusion subtrees.
    pub id: usize,
    /// The result it produces.
    pub result: ResultId,
    /// Results it reads.
    pub inputs: Vec<ResultId>,
    /// Its columns.
    pub fields: Vec<Field>,
    /// The DataFusion operator at its root, e.g. "Window".
    pub operator: String,
    /// Why the IR could not take it.
    pub reason: String,
}

/// Where a pipeline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Device {
    /// The CPU backend.
    Cpu,
    /// The CUDA backend.
    Gpu,
}

/// `source → operators → sink`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pipeline {
    /// Position among the plan's pipelines (for display).
    pub id: usize,
    /// Where rows come from.
    pub source: Source,
    /// Non-blocking operators applied in order.
    pub operators: Vec<Operator>,
    /// Where rows go.
    pub sink: Sink,
    /// Where it runs.
    pub device: Device,
    /// Why it does not run on the GPU (when it does not).
    pub device_reason: Option<String>,
}

impl Pipeline {
    /// Every expression of its operators and sink, mutably.
    fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        let mut out: Vec<&mut Expr> = Vec::new();
        for op in &mut self.operators {
            match op {
                Operator::Filter(e) => out.push(e),
                Operator::Project { exprs, .. } => out.extend(exprs.iter_mut()),
                Operator::Probe(p) => {
                    out.extend(p.keys.iter_mut());
                    out.extend(p.residual.iter_mut());
                }
            }
        }
        match &mut self.sink {
            Sink::HashBuild(h) => out.extend(h.keys.iter_mut()),
            Sink::Aggregate(a) => {
                out.extend(a.group_by.iter_mut());
                out.extend(a.aggregates.iter_mut().filter_map(|g| g.arg.as_mut()));
            }
            Sink::Sort(s) => out.extend(s.keys.iter_mut().map(|k| &mut k.expr)),
            Sink::Materialize { .. } => {}
            Sink::MarkBuild(m) => {
                out.extend(m.keys.iter_mut());
                out.extend(m.residual.iter_mut());
            }
        }
        out
    }

    /// Every expression of its operators and sink, in the order of
    /// [`Pipeline::exprs_mut`].
    fn exprs(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = Vec::new();
        for op in &self.operators {
            match op {
                Operator::Filter(e) => out.push(e),
                Operator::Project { exprs, .. } => out.extend(exprs.iter()),
                Operator::Probe(p) => {
                    out.extend(p.keys.iter());
                    out.extend(p.residual.iter());
                }
            }
        }
        match &self.sink {
            Sink::HashBuild(h) => out.extend(h.keys.iter()),
            Sink::Aggregate(a) => {
                out.extend(a.group_by.iter());
                out.extend(a.aggregates.iter().filter_map(|g| g.arg.as_ref()));
            }
            Sink::Sort(s) => out.extend(s.keys.iter().map(|k| &k.expr)),
            Sink::Materialize { .. } => {}
            Sink::MarkBuild(m) => {
                out.extend(m.keys.iter());
                out.extend(m.residual.iter());
            }
        }
        out
    }

    /// The results of the scalar subqueries its expressions read ([`Expr::Subquery`]).
    /// (It cloned the whole pipeline to walk its expressions until 2026-11-29b. The
    /// executor asks before every pipeline's run: a warm SSB SF 20 query's probe took
    /// 4.7–8.8 µs of host time from its step's start to its GPU run on the H200's host,
    /// that clone among it, 2026-11-29b run 1.)
    pub fn subqueries(&self) -> Vec<ResultId> {
        let mut out = Vec::new();
        for e in self.exprs() {
            for r in e.subqueries() {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Replaces every [`Expr::Subquery`] with the literal `value` gives for it.
    pub fn bind_subqueries(&mut self, value: &dyn Fn(ResultId, Type) -> Expr) {
        for e in self.exprs_mut() {
            *e = e.rewrite(&|x| match x {
                Expr::Subquery { result, ty } => Some(value(*result, *ty)),
                _ => None,
            });
        }
    }

    /// The row layout after the source.
    pub fn source_fields(&self) -> &[Field] {
        match &self.source {
            Source::Scan(s) => &s.fields,
            Source::Result { fields, .. } => fields,
        }
    }

    /// The layout entering the sink.
    pub fn sink_input_fields(&self) -> Vec<Field> {
        let mut fields = self.source_fields().to_vec();
        for op in &self.operators {
            fields = op.output_fields(&fields);
        }
        fields
    }
}

/// A pipeline's source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// Rows of a stored table.
    Scan(Scan),
    /// Rows of an earlier step's result.
    Result {
        /// Which result.
        id: ResultId,
        /// Its columns.
        fields: Vec<Field>,
    },
}

/// A scan of a stored table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scan {
    /// Table name in the store.
    pub table: String,
    /// Table version the plan was made for.
    pub version: u64,
    /// Positions of the scanned columns in the table.
    pub columns: Vec<usize>,
    /// The scanned columns (the pipeline's first layout).
    pub fields: Vec<Field>,
    /// Per scanned column, whether the store keeps it dictionary-encoded.
    pub dictionary: Vec<bool>,
    /// Rows in the table (from the manifest).
    pub rows: u64,
    /// The planner's estimate of the share of those rows, per mille, that reach the
    /// pipeline's first probe through the operators before it (its filters); 1000 when
    /// there is no estimate. The GPU code generator tests a much more selective probe's
    /// keys before those filters (`tessera_cuda::codegen::probe::early`).
    #[serde(default = "all_rows_permille")]
    pub kept_permille: u32,
}

/// Every row (per mille): [`Scan::kept_permille`] when the planner gave no estimate.
pub fn all_rows_permille() -> u32 {
    1000
}

/// Join kinds a probe implements; the probe side is the row stream, the build side the
/// hash table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum JoinKind {
    /// Probe rows with each matching build row.
    Inner,
    /// Probe rows that have a match.
    Semi,
    /// Probe rows without a match.
    Anti,
    /// Every probe row, with its matches or NULLs.
    LeftOuter,
    /// Every probe row plus a boolean "has a match" column.
    Mark,
}

/// A non-blocking operator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Operator {
    /// Keeps rows where the predicate is true.
    Filter(Expr),
    /// Replaces the layout with computed columns.
    Project {
        /// One expression per output column.
        exprs: Vec<Expr>,
        /// Output columns.
        fields: Vec<Field>,
    },
    /// Looks rows up in a hash table built by an earlier pipeline.
    Probe(Probe),
}

impl Operator {
    /// The layout after this operator, given the layout before it.
    pub fn output_fields(&self, input: &[Field]) -> Vec<Field> {
        match self {
            Operator::Filter(_) => input.to_vec(),
            Operator::Project { fields, .. } => fields.clone(),
            Operator::Probe(p) => {
                let mut out = input.to_vec();
                match p.kind {
                    JoinKind::Inner => out.extend(p.build_fields.iter().cloned()),
                    JoinKind::LeftOuter => {
                        out.extend(p.build_fields.iter().map(|f| Field { nullable: true, ..f.clone() }))
                    }
                    JoinKind::Mark => out.push(Field::new("mark", Type::Boolean, p.null_aware)),
                    JoinKind::Semi | JoinKind::Anti => {}
                }
                out
            }
        }
    }
}

/// A hash-table probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    /// The table probed.
    pub table: HashTableId,
    /// Join semantics.
    pub kind: JoinKind,
    /// Probe keys over the input layout, matched in order against the build keys.
    /// Empty for a cross product with every build row.
    pub keys: Vec<Expr>,
    /// The build side's payload columns (appended for inner and left outer joins).
    pub build_fields: Vec<Field>,
    /// A condition over (input layout ++ build payload) that a key match must also meet.
    pub residual: Option<Expr>,
    /// NULL keys match each other (IS NOT DISTINCT FROM joins).
    pub nulls_equal: bool,
    /// `NOT IN` semantics for Anti/Mark: a NULL key anywhere makes "no match" unknown.
    pub null_aware: bool,
}

/// A pipeline's sink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Sink {
    /// Builds a hash table on keys, keeping payload columns.
    HashBuild(HashBuild),
    /// Groups and aggregates.
    Aggregate(Aggregate),
    /// Sorts (keeping the first `skip + fetch` rows when limited).
    Sort(Sort),
    /// Collects rows in order as a result.
    Materialize {
        /// The result produced.
        result: ResultId,
        /// Rows to skip, then keep at most `fetch`.
        skip: usize,
        /// Row limit.
        fetch: Option<usize>,
    },
    /// Probes a table and marks the build rows matched: a semi or anti join run from its
    /// other side.
    MarkBuild(MarkBuild),
}

/// A semi or anti join run from its other side, for when the side whose rows it keeps
/// is much smaller than the side it looks them up in (TPC-H q4's orders `EXISTS` in
/// lineitem): that small side is built into `table`, this pipeline's rows — the large
/// side — probe it and mark the build rows they match, and the build rows that were
/// marked (semi) or not (anti) become `result`. The large side is read once and never
/// built into a table. Not for `NOT IN` (NULL-aware) joins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkBuild {
    /// The table probed (its payload is every column of the kept side).
    pub table: HashTableId,
    /// Probe keys over the input layout.
    pub keys: Vec<Expr>,
    /// A condition a matching pair must also meet, over this pipeline's layout followed
    /// by the table's payload.
    pub residual: Option<Expr>,
    /// Keep the build rows without a match (anti join) instead of those with one.
    pub anti: bool,
    /// The result produced: the kept build rows, with the payload's columns.
    pub result: ResultId,
    /// The payload's columns.
    pub fields: Vec<Field>,
}

impl Sink {
    /// The result this sink produces, if it produces batches.
    pub fn result(&self) -> Option<ResultId> {
        match self {
            Sink::HashBuild(_) => None,
            Sink::Aggregate(a) => Some(a.result),
            Sink::Sort(s) => Some(s.result),
            Sink::Materialize { result, .. } => Some(*result),
            Sink::MarkBuild(m) => Some(m.result),
        }
    }
}

/// How a hash table addresses its keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum BuildStrategy {
    /// One integer key in `[min, max]` (from statistics): a dense array indexed by
    /// `key - min`, no hashing and no key comparisons.
    Perfect {
        /// Smallest key.
        min: i64,
        /// Largest key.
        max: i64,
    },
    /// Open addressing with linear probing.
    Hash {
        /// Per key, its values' range from statistics when known (what lets several keys
        /// pack into one word; a key outside it sends the query back to the CPU).
        key_ranges: Vec<Option<(i64, i64)>>,
    },
}

/// A hash-table build sink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HashBuild {
    /// The table built.
    pub table: HashTableId,
    /// Key expressions over the input layout.
    pub keys: Vec<Expr>,
    /// Input columns kept as payload, in order.
    pub payload: Vec<usize>,
    /// Addressing.
    pub strategy: BuildStrategy,
    /// NULL keys are kept and equal each other (for IS NOT DISTINCT FROM joins).
    pub nulls_equal: bool,
    /// Estimated rows (for sizing).
    pub estimated_rows: u64,
    /// Only semi/anti probes without a residual read the table: it answers whether a key
    /// is there, so repeated keys are one entry (and it keeps no payload).
    #[serde(default)]
    pub membership: bool,
    /// Statistics say the keys repeat (the build side of a 1:N join).
    #[serde(default)]
    pub repeated_keys: bool,
    /// A NULL-aware anti join (`NOT IN`) probes the table: whether the build side had a
    /// row at all, and one with a NULL key, decide its probe rows too.
    #[serde(default)]
    pub null_aware: bool,
    /// Per payload column, the range of its values where statistics know it (integers,
    /// dates, decimals of up to 18 digits): the GPU build may store it narrowed. A hint:
    /// a build that meets a value outside it sends the query to the CPU backend.
    #[serde(default)]
    pub payload_ranges: Vec<Option<(i64, i64)>>,
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AggFunc {
    /// `COUNT(*)`
    CountStar,
    /// `COUNT(x)` (non-NULL values)
    Count,
    /// `SUM(x)`; exact for integers and decimals, overflow of the result type is an error.
    Sum,
    /// `AVG(x)`
    Avg,
    /// `MIN(x)`
    Min,
    /// `MAX(x)`
    Max,
}

/// One aggregate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggExpr {
    /// Function.
    pub func: AggFunc,
    /// Argument (None for COUNT(*)).
    pub arg: Option<Expr>,
    /// Over distinct argument values.
    pub distinct: bool,
    /// Result type.
    pub ty: Type,
    /// Display name.
    pub name: String,
}

/// The domain of one group key in a perfect-hash aggregation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum KeyDomain {
    /// Integer values in `[min, max]`.
    Range {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// Codes of a dictionary-encoded string column (size known at run time).
    Dictionary {
        /// Distinct values estimated from statistics.
        estimate: u64,
    },
    /// true/false.
    Boolean,
}

/// How an aggregation finds a row's group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum GroupStrategy {
    /// No GROUP BY: one group.
    Scalar,
    /// Every key has a small known domain: group = mixed-radix number of the keys (one
    /// more slot per nullable key for NULL), an array index.
    Perfect {
        /// One domain per group key.
        domains: Vec<KeyDomain>,
    },
    /// A general hash table.
    Hash {
        /// Estimated number of groups (for sizing).
        estimated_groups: u64,
        /// Per key, its values' range from statistics when known (see
        /// [`BuildStrategy::Hash`]).
        key_ranges: Vec<Option<(i64, i64)>>,
    },
}

/// An aggregation sink: output is the group keys, then the aggregates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Aggregate {
    /// The result produced.
    pub result: ResultId,
    /// Group keys over the input layout.
    pub group_by: Vec<Expr>,
    /// Aggregates.
    pub aggregates: Vec<AggExpr>,
    /// Group addressing.
    pub strategy: GroupStrategy,
    /// Output columns.
    pub fields: Vec<Field>,
    /// Group keys the others determine, when the planner found some (see
    /// [`ReducedKeys`]); a backend may ignore it.
    #[serde(default)]
    pub reduced: Option<ReducedKeys>,
    /// Per aggregate, the range its argument's values lie in where statistics know it
    /// (stored integers: a decimal's scaled value, a date's days); shorter than
    /// `aggregates` (or empty) where they do not. A hint: a backend relying on it checks
    /// it (the GPU's test that a SUM's values keep one sign, `aggregate::presence` in
    /// tessera-cuda).
    #[serde(default)]
    pub value_ranges: Vec<Option<(i64, i64)>>,
}

/// Group keys that functionally depend on the other keys: TPC-H q10 groups by
/// `c_custkey, c_name, c_address, ...` and `n_name`, and `c_custkey` is unique in
/// `customer` (so it fixes the customer row and every column of it) while the nation row
/// is the one `c_nationkey` joined. Grouping by the independent keys alone gives the same
/// groups; each dependent key has one value per group, which a MIN over it returns.
/// A backend that groups by fewer, narrower keys this way skips hashing and comparing
/// long strings, and on the GPU needs no string key at all: the dependent strings ride
/// as row numbers (see `DictRef::by_row` in tessera-cuda).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReducedKeys {
    /// Per group key, whether the others determine it.
    pub dependent: Vec<bool>,
    /// How the independent keys find their group.
    pub strategy: GroupStrategy,
}

impl Aggregate {
    /// The aggregation over the independent keys when [`Aggregate::reduced`] is set:
    /// those keys, then the aggregates, then a MIN of each dependent key (its one value
    /// per group). `order[i]` is the column of that aggregation's output holding this
    /// aggregation's output column `i`.
    pub fn reduced_form(&self) -> Option<(Aggregate, Vec<usize>)> {
        let r = self.reduced.as_ref()?;
        if r.dependent.len() != self.group_by.len() || !r.dependent.contains(&true) {
            return None;
        }
        let keys: Vec<usize> = (0..self.group_by.len()).filter(|&i| !r.dependent[i]).collect();
        let deps: Vec<usize> = (0..self.group_by.len()).filter(|&i| r.dependent[i]).collect();
        let mut fields: Vec<Field> = keys.iter().map(|&i| self.fields[i].clone()).collect();
        fields.extend(self.fields[self.group_by.len()..].iter().cloned());
        fields.extend(deps.iter().map(|&i| self.fields[i].clone()));
        let mut aggregates = self.aggregates.clone();
        aggregates.extend(deps.iter().map(|&i| AggExpr {
            func: AggFunc::Min,
            arg: Some(self.group_by[i].clone()),
            distinct: false,
            ty: self.fields[i].ty,
            name: self.fields[i].name.clone(),
        }));
        // The reduced output: independent keys, aggregates, dependent keys.
        let (nk, na) = (keys.len(), self.aggregates.len());
        let mut order = vec![0; self.group_by.len()];
        keys.iter().enumerate().for_each(|(at, &i)| order[i] = at);
        deps.iter().enumerate().for_each(|(at, &i)| order[i] = nk + na + at);
        order.extend(nk..nk + na);
        let reduced = Aggregate {
            result: self.result,
            group_by: keys.iter().map(|&i| self.group_by[i].clone()).collect(),
            aggregates,
            strategy: r.strategy.clone(),
            fields,
            reduced: None,
            // The dependent keys' MINs come after the aggregates: no range for them.
            value_ranges: self.value_ranges.clone(),
        };
        Some((reduced, order))
    }
}

/// One ORDER BY key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SortKey {
    /// Key over the input layout.
    pub expr: Expr,
    /// DESC.
    pub descending: bool,
    /// NULLS FIRST.
    pub nulls_first: bool,
}

/// A sort sink; the output has the input's layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sort {
    /// The result produced.
    pub result: ResultId,
    /// Keys.
    pub keys: Vec<SortKey>,
    /// Rows to skip after sorting.
    pub skip: usize,
    /// Rows to keep after skipping (top-N).
    pub fetch: Option<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `GROUP BY a, k, b` with `a` and `b` determined by `k`, one SUM: the reduced form
    /// groups by `k`, MINs `a` then `b` after the SUM, and `order` maps each output column
    /// back.
    #[test]
    fn reduced_form_groups_by_the_independent_keys_and_maps_columns_back() {
        let f = |n: &str, ty| Field::new(n, ty, false);
        let agg = Aggregate {
            result: 3,
            group_by: vec![Expr::col(0, "a"), Expr::col(1, "k"), Expr::col(2, "b")],
            aggregates: vec![AggExpr { func: AggFunc::Sum, arg: Some(Expr::col(3, "v")), distinct: false, ty: Type::Int64, name: "s".into() }],
            strategy: GroupStrategy::Hash { estimated_groups: 10, key_ranges: vec![None; 3] },
            fields: vec![f("a", Type::Utf8), f("k", Type::Int32), f("b", Type::Date32), f("s", Type::Int64)],
            reduced: Some(ReducedKeys { dependent: vec![true, false, true], strategy: GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 9 }] } }),
            value_ranges: vec![Some((1, 99))],
        };
        let (r, order) = agg.reduced_form().unwrap();
        assert_eq!(r.group_by, vec![Expr::col(1, "k")]);
        assert_eq!(r.aggregates.iter().map(|x| (x.func, x.arg.clone())).collect::<Vec<_>>(), vec![
            (AggFunc::Sum, Some(Expr::col(3, "v"))),
            (AggFunc::Min, Some(Expr::col(0, "a"))),
            (AggFunc::Min, Some(Expr::col(2, "b"))),
        ]);
        assert_eq!(r.fields.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(), ["k", "s", "a", "b"]);
        assert_eq!(order, [2, 0, 3, 1]);
        // The SUM keeps its range; the MINs after it have none.
        assert_eq!(r.value_ranges, vec![Some((1, 99))]);
        for (i, &k) in order.iter().enumerate() {
            assert_eq!(r.fields[k], agg.fields[i]);
        }
        // Nothing dependent: no reduced form.
        let none = Aggregate { reduced: Some(ReducedKeys { dependent: vec![false; 3], strategy: GroupStrategy::Scalar }), ..agg };
        assert!(none.reduced_form().is_none());
    }

    /// The subqueries of every operator and the sink, each once, in the order of the
    /// expressions; both walks over the expressions see the same ones.
    #[test]
    fn subqueries_are_found_in_operators_and_sink() {
        let sub = |r| Expr::Subquery { result: r, ty: Type::Int64 };
        let agg = Aggregate {
            result: 9,
            group_by: vec![Expr::col(0, "k")],
            aggregates: vec![
                AggExpr { func: AggFunc::Sum, arg: Some(sub(7)), distinct: false, ty: Type::Int64, name: "s".into() },
                AggExpr { func: AggFunc::Max, arg: Some(sub(5)), distinct: false, ty: Type::Int64, name: "m".into() },
            ],
            strategy: GroupStrategy::Scalar,
            fields: vec![Field::new("k", Type::Int64, false), Field::new("s", Type::Int64, true), Field::new("m", Type::Int64, true)],
            reduced: None,
            value_ranges: Vec::new(),
        };
        let mut p = Pipeline {
            id: 2,
            source: Source::Result { id: 1, fields: vec![Field::new("k", Type::Int64, false)] },
            operators: vec![Operator::Filter(sub(5)), Operator::Project { exprs: vec![Expr::col(0, "k"), sub(6)], fields: vec![Field::new("k", Type::Int64, false), Field::new("x", Type::Int64, true)] }],
            sink: Sink::Aggregate(agg),
            device: Device::Cpu,
            device_reason: None,
        };
        assert_eq!(p.subqueries(), vec![5, 6, 7]);
        let seen: Vec<Expr> = p.exprs().into_iter().cloned().collect();
        assert_eq!(seen.len(), 6);
        assert_eq!(p.exprs_mut().into_iter().map(|e| e.clone()).collect::<Vec<_>>(), seen);
        p.bind_subqueries(&|_, ty| Expr::Literal { value: crate::Scalar::Int(1), ty });
        assert!(p.subqueries().is_empty());
    }
}
