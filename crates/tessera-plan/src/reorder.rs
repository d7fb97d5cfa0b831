//! Join order from statistics, not as the query lists its tables.
//!
//! DataFusion keeps inner joins in the order the query writes them, so a query whose
//! selective tables come last joins the big ones first (a 7-table query built a
//! billion-row intermediate that way). The planner takes each maximal tree of inner
//! equi-joins apart ([`region`]) into its *relations* — scans with their filters,
//! subqueries, outer, semi, anti and cross joins: anything that is not such a join, and
//! which stays as written — and the equalities and join conditions between them. It plans
//! every relation (which estimates its rows after its filters), orders the joins with
//! [`greedy`], rebuilds them as DataFusion joins ([`JoinRegion::build`]) and projects the
//! columns back to the order of the query's tree.
//!
//! [`greedy`] is greedy operator ordering, what DuckDB's join-order optimizer falls back
//! to for large queries: join the two connected parts whose estimated cost — the
//! result plus the smaller input, which is built into a hash table — is smallest, until
//! one part is left. A star join comes out as the fact table joined first to its
//! most selective dimension and then to each next one; a snowflake's filtered outer
//! dimension joins its dimension first. Which side of a join builds is the planner's
//! usual rule: the side whose input is smaller, so the fact table's pipeline keeps
//! probing the chain of dimension hash tables.

use std::sync::Arc;

use datafusion::common::{Column, DFSchema, JoinType, NullEquality};
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr as DfExpr, Join, JoinConstraint, LogicalPlan, Projection};

/// Most relations a region holds: sets of relations are bits of a `u64`.
const MAX_RELATIONS: usize = 64;

/// A join whose estimated result exceeds this many times its larger input multiplies
/// rows (many to many, as two dimensions joined on a shared attribute such as a region);
/// it waits while any other join is possible, by which time its equality is usually one
/// more key of a join through the fact table. Twice rather than once, because distinct
/// counts are HyperLogLog estimates a few percent off, which can put a key–foreign-key
/// join slightly above its larger input.
const EXPANDING: f64 = 2.0;

/// One side of an equi-join predicate.
#[derive(Debug, Clone)]
pub(crate) struct Key {
    /// The relation it reads.
    pub relation: usize,
    /// The expression, over that relation's columns.
    pub expr: DfExpr,
    /// The relation's column it is (through casts), to look up distinct values.
    pub column: Option<usize>,
}

/// An equi-join predicate `keys[0] = keys[1]` between two relations.
#[derive(Debug, Clone)]
pub(crate) struct Edge {
    /// Its two sides.
    pub keys: [Key; 2],
}

/// A join condition that is not such an equality (kept as a join filter).
#[derive(Debug, Clone)]
struct Condition {
    /// The relations it reads (bits), two or more.
    relations: u64,
    /// The condition.
    expr: DfExpr,
}

/// What a predicate reads: relations (bits) and columns (positions in the region's
/// schema). A column stays until every predicate reading it is applied.
#[derive(Debug, Clone)]
struct Use {
    relations: u64,
    columns: Vec<usize>,
}

/// The shape of a join order: a binary tree over relation indices.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum JoinTree {
    /// One relation.
    Relation(usize),
    /// Two parts joined.
    Join(Box<JoinTree>, Box<JoinTree>),
}

/// A maximal tree of inner equi-joins, taken apart.
#[derive(Debug)]
pub(crate) struct JoinRegion<'a> {
    /// The relations, in the order the query lists them.
    pub relations: Vec<&'a LogicalPlan>,
    /// The equalities between them.
    pub edges: Vec<Edge>,
    /// The other join conditions.
    conditions: Vec<Condition>,
    /// The relations' columns, one relation after the other.
    pub schema: DFSchema,
    /// Where each relation's columns start in `schema`.
    offsets: Vec<usize>,
    /// The tree's output columns, in its order (positions in `schema`).
    output: Vec<usize>,
    /// The columns of every edge and condition.
    uses: Vec<Use>,
    /// The order the query wrote.
    pub written: JoinTree,
}

/// A join order rebuilt as DataFusion joins, for the planner to plan.
#[derive(Debug)]
pub(crate) enum Built {
    /// One relation.
    Relation(usize),
    /// A join of two parts.
    Join {
        /// The join; its left input is `probe`, its right `build`.
        join: Join,
        /// The part with the larger input.
        probe: Box<Built>,
        /// The other part.
        build: Box<Built>,
        /// The join's columns to keep, in their new order (None: all of them).
        keep: Option<Vec<usize>>,
    },
}

/// What [`greedy`] orders by.
#[derive(Debug, Clone)]
pub(crate) struct Estimates {
    /// Each relation's estimated rows, after its filters.
    pub rows: Vec<f64>,
    /// Each edge's two keys' distinct values, where known.
    pub distinct: Vec<[Option<f64>; 2]>,
}

/// `node` if it is a join this module reorders: inner, on equalities, nulls unequal.
fn reorderable(node: &LogicalPlan) -> Option<&Join> {
    match node {
        LogicalPlan::Join(j)
            if j.join_type == JoinType::Inner
                && !j.on.is_empty()
                && !j.null_aware
                && j.null_equality == NullEquality::NullEqualsNothing =>
        {
            Some(j)
        }
        _ => None,
    }
}

/// The join below a projection of plain columns (it only drops columns, which the
/// rebuilt joins drop too), or `node` itself.
fn through_column_projection(node: &LogicalPlan) -> &LogicalPlan {
    match node {
        LogicalPlan::Projection(p)
            if reorderable(&p.input).is_some() && p.expr.iter().all(|e| matches!(e, DfExpr::Column(_))) =>
        {
            &p.input
        }
        other => other,
    }
}

/// Takes the tree at `node` apart; returns its shape.
fn collect<'a>(node: &'a LogicalPlan, relations: &mut Vec<&'a LogicalPlan>, joins: &mut Vec<&'a Join>) -> JoinTree {
    match reorderable(node) {
        Some(j) => {
            joins.push(j);
            let left = collect(through_column_projection(&j.left), relations, joins);
            let right = collect(through_column_projection(&j.right), relations, joins);
            JoinTree::Join(Box::new(left), Box::new(right))
        }
        None => {
            relations.push(node);
            JoinTree::Relation(relations.len() - 1)
        }
    }
}

/// The one field of `schema` that `c` names (DataFusion's lookup takes the first match).
fn position(schema: &DFSchema, c: &Column) -> Option<usize> {
    let mut found = schema
        .iter()
        .enumerate()
        .filter(|(_, (q, f))| {
            f.name() == &c.name
                && match (&c.relation, q) {
                    (Some(r), Some(q)) => r.resolved_eq(q),
                    (Some(_), None) => false,
                    (None, _) => true,
                }
        })
        .map(|(i, _)| i);
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// The tree of inner equi-joins rooted at `root`, if it joins three or more relations
/// (two join in the only order there is) and nothing about it is unexpected: every
/// column names one field, every key reads one relation, every condition two or more,
/// nothing is volatile, and the equalities connect all the relations.
pub(crate) fn region(root: &LogicalPlan) -> Option<JoinRegion<'_>> {
    reorderable(root)?;
    let (mut relations, mut joins) = (Vec::new(), Vec::new());
    let written = collect(root, &mut relations, &mut joins);
    if relations.len() < 3 || relations.len() > MAX_RELATIONS {
        return None;
    }
    let schema = relations.iter().try_fold(DFSchema::empty(), |acc, r| acc.join(r.schema())).ok()?;
    for i in 0..schema.fields().len() {
        if position(&schema, &Column::from(schema.qualified_field(i)))? != i {
            return None;
        }
    }
    let mut offsets = Vec::with_capacity(relations.len());
    relations.iter().fold(0, |start, r| {
        offsets.push(start);
        start + r.schema().fields().len()
    });
    let output = root.schema().columns().iter().map(|c| position(&schema, c)).collect::<Option<Vec<_>>>()?;
    let mut region = JoinRegion {
        relations,
        edges: Vec::new(),
        conditions: Vec::new(),
        schema,
        offsets,
        output,
        uses: Vec::new(),
        written,
    };
    for j in joins {
        for (l, r) in &j.on {
            let ((left, mut reads), (right, right_reads)) = (region.key(l)?, region.key(r)?);
            if left.relation == right.relation {
                return None;
            }
            reads.relations |= right_reads.relations;
            reads.columns.extend(right_reads.columns);
            region.uses.push(reads);
            region.edges.push(Edge { keys: [left, right] });
        }
        if let Some(f) = &j.filter {
            let reads = region.reads(f)?;
            if reads.relations.count_ones() < 2 {
                return None;
            }
            region.conditions.push(Condition { relations: reads.relations, expr: f.clone() });
            region.uses.push(reads);
        }
    }
    region.connected().then_some(region)
}

impl JoinRegion<'_> {
    /// The relations and columns `e` reads; None for anything volatile or unknown.
    fn reads(&self, e: &DfExpr) -> Option<Use> {
        if e.is_volatile() {
            return None;
        }
        let mut reads = Use { relations: 0, columns: Vec::new() };
        for c in e.column_refs() {
            let p = position(&self.schema, c)?;
            reads.relations |= 1 << self.relation_at(p);
            reads.columns.push(p);
        }
        Some(reads)
    }

    /// The relation whose columns include position `p`.
    fn relation_at(&self, p: usize) -> usize {
        self.offsets.partition_point(|&start| start <= p).saturating_sub(1)
    }

    /// A join key, an expression over exactly one relation, and what it reads.
    fn key(&self, e: &DfExpr) -> Option<(Key, Use)> {
        let reads = self.reads(e)?;
        if reads.relations.count_ones() != 1 {
            return None;
        }
        let relation = reads.relations.trailing_zeros() as usize;
        let column = key_column(e).and_then(|c| position(&self.schema, c)).map(|p| p - self.offsets[relation]);
        Some((Key { relation, expr: e.clone(), column }, reads))
    }

    /// Whether the equalities connect every relation (an order is grown along them).
    fn connected(&self) -> bool {
        let all = (1u64 << (self.relations.len() - 1) << 1).wrapping_sub(1);
        let mut reached = 1u64;
        loop {
            let before = reached;
            for [a, b] in self.ends() {
                let both = (1u64 << a) | (1u64 << b);
                if reached & both != 0 {
                    reached |= both;
                }
            }
            if reached == before {
                return reached == all;
            }
        }
    }

    /// The two relations of each edge.
    pub(crate) fn ends(&self) -> Vec<[usize; 2]> {
        self.edges.iter().map(|e| [e.keys[0].relation, e.keys[1].relation]).collect()
    }

    /// The join conditions, to check that they have an IR form.
    pub(crate) fn conditions(&self) -> impl Iterator<Item = &DfExpr> {
        self.conditions.iter().map(|c| &c.expr)
    }

    /// `tree` as DataFusion joins: each join on the equalities between its two parts and
    /// with the conditions its two parts complete, the part holding the larger input
    /// (by `rows`) on the left to probe, and columns nobody reads any more dropped after
    /// it. The last join keeps the query tree's columns, in its order.
    pub(crate) fn build(&self, tree: &JoinTree, rows: &[f64]) -> Option<Built> {
        let JoinTree::Join(..) = tree else { return None };
        Some(self.part(tree, rows, true)?.built)
    }

    fn part(&self, tree: &JoinTree, rows: &[f64], root: bool) -> Option<Part> {
        let (a, b) = match tree {
            JoinTree::Relation(i) => {
                let start = *self.offsets.get(*i)?;
                let plan = (*self.relations.get(*i)?).clone();
                return Some(Part {
                    built: Built::Relation(*i),
                    columns: (start..start + plan.schema().fields().len()).collect(),
                    plan,
                    relations: 1 << i,
                    largest: *rows.get(*i)?,
                });
            }
            JoinTree::Join(a, b) => (self.part(a, rows, false)?, self.part(b, rows, false)?),
        };
        let (probe, build) = if b.largest > a.largest { (b, a) } else { (a, b) };
        let relations = probe.relations | build.relations;
        let join = Join::try_new(
            Arc::new(probe.plan),
            Arc::new(build.plan),
            self.equalities(probe.relations, build.relations)?,
            self.completed_conditions(probe.relations, build.relations),
            JoinType::Inner,
            JoinConstraint::On,
            NullEquality::NullEqualsNothing,
            false,
        )
        .ok()?;
        let columns: Vec<usize> = probe.columns.iter().chain(&build.columns).copied().collect();
        let keep: Vec<usize> = if root {
            self.output.iter().map(|p| columns.iter().position(|c| c == p)).collect::<Option<_>>()?
        } else {
            let needed = self.needed_after(relations);
            (0..columns.len()).filter(|&i| needed[columns[i]]).collect()
        };
        let (plan, kept) = if keep.len() == columns.len() && !root {
            (LogicalPlan::Join(join.clone()), None)
        } else {
            let exprs = keep.iter().map(|&i| DfExpr::Column(Column::from(join.schema.qualified_field(i)))).collect();
            let projection = Projection::try_new(exprs, Arc::new(LogicalPlan::Join(join.clone()))).ok()?;
            (LogicalPlan::Projection(projection), Some(keep))
        };
        let columns = match &kept {
            Some(keep) => keep.iter().map(|&i| columns[i]).collect(),
            None => columns,
        };
        Some(Part {
            built: Built::Join { join, probe: Box::new(probe.built), build: Box::new(build.built), keep: kept },
            plan,
            columns,
            relations,
            largest: probe.largest,
        })
    }

    /// The equalities between two parts, each as (left part's side, right part's side);
    /// None when there are none (a cross product is never built).
    fn equalities(&self, left: u64, right: u64) -> Option<Vec<(DfExpr, DfExpr)>> {
        let mut on = Vec::new();
        for [x, y] in self.edges.iter().map(|e| &e.keys) {
            let (bx, by) = (1u64 << x.relation, 1u64 << y.relation);
            if left & bx != 0 && right & by != 0 {
                on.push((x.expr.clone(), y.expr.clone()));
            } else if left & by != 0 && right & bx != 0 {
                on.push((y.expr.clone(), x.expr.clone()));
            }
        }
        (!on.is_empty()).then_some(on)
    }

    /// The conditions that joining two parts completes: all their relations joined now,
    /// and not before.
    fn completed_conditions(&self, left: u64, right: u64) -> Option<DfExpr> {
        let both = left | right;
        conjunction(
            self.conditions
                .iter()
                .filter(|c| c.relations & !both == 0 && c.relations & !left != 0 && c.relations & !right != 0)
                .map(|c| c.expr.clone()),
        )
    }

    /// Which columns (by position) are still read once the relations `joined` are joined:
    /// the output's, and those of predicates that reach a relation not joined yet.
    fn needed_after(&self, joined: u64) -> Vec<bool> {
        let mut needed = vec![false; self.schema.fields().len()];
        for &p in &self.output {
            needed[p] = true;
        }
        for u in self.uses.iter().filter(|u| u.relations & !joined != 0) {
            for &p in &u.columns {
                needed[p] = true;
            }
        }
        needed
    }
}

/// A part of a join order being rebuilt.
struct Part {
    built: Built,
    /// Its DataFusion plan (for the schema the join above it sees).
    plan: LogicalPlan,
    /// Its columns, as positions in the region's schema.
    columns: Vec<usize>,
    relations: u64,
    /// The estimated rows of its largest relation: the probe side's input.
    largest: f64,
}

/// The column a join key reads, through casts.
fn key_column(e: &DfExpr) -> Option<&Column> {
    match e {
        DfExpr::Column(c) => Some(c),
        DfExpr::Cast(c) => key_column(&c.expr),
        DfExpr::TryCast(c) => key_column(&c.expr),
        _ => None,
    }
}

/// Estimated rows of joining part `a` (relations as bits, estimated rows) with part `b`:
/// the textbook |A| |B| / max(d_A, d_B) for the most selective equality between them,
/// where a key's distinct values are at most the rows of its relation and of its part,
/// and a key of unknown distinct values is taken as unique in its relation. Further
/// equalities between the same parts are taken as implied by that one rather than
/// independent: they usually are correlated (the two columns of a composite key, as
/// lineitem to partsupp, or a region equality between relations already joined by their
/// keys), and multiplying them made TPC-H q9's lineitem ⋈ partsupp look 2,500 times
/// smaller than it is. None when no equality connects them.
fn join_rows(ends: &[[usize; 2]], est: &Estimates, a: (u64, f64), b: (u64, f64)) -> Option<f64> {
    let distinct = |edge: usize, side: usize, part_rows: f64| {
        let own = est.rows[ends[edge][side]];
        let d = est.distinct.get(edge).and_then(|d| d[side]).unwrap_or(own);
        d.min(own).min(part_rows).max(1.0)
    };
    let mut divisor: Option<f64> = None;
    for (edge, &[x, y]) in ends.iter().enumerate() {
        let (side_a, side_b) = if (a.0 >> x) & 1 == 1 && (b.0 >> y) & 1 == 1 {
            (0, 1)
        } else if (a.0 >> y) & 1 == 1 && (b.0 >> x) & 1 == 1 {
            (1, 0)
        } else {
            continue;
        };
        let d = distinct(edge, side_a, a.1).max(distinct(edge, side_b, b.1));
        divisor = Some(divisor.map_or(d, |max: f64| max.max(d)));
    }
    divisor.map(|d| (a.1 * b.1 / d).max(1.0))
}

/// Greedy operator ordering: starting from the relations, join the two connected parts
/// whose estimated result plus smaller input (the side built) is smallest — a join
/// that multiplies rows (see [`EXPANDING`])
/// only when no other is left — until one part remains. None when the equalities leave
/// parts unconnected.
pub(crate) fn greedy(ends: &[[usize; 2]], est: &Estimates) -> Option<JoinTree> {
    let mut parts: Vec<(u64, f64, JoinTree)> =
        est.rows.iter().enumerate().map(|(i, &r)| (1u64 << i, r.max(1.0), JoinTree::Relation(i))).collect();
    while parts.len() > 1 {
        let mut best: Option<((bool, f64), usize, usize, f64)> = None;
        for i in 0..parts.len() {
            for j in i + 1..parts.len() {
                let (a, b) = (&parts[i], &parts[j]);
                let Some(rows) = join_rows(ends, est, (a.0, a.1), (b.0, b.1)) else { continue };
                // A join costs its result and the hash table built on its smaller input:
                // of two joins with results alike, the one that builds a dimension goes
                // before the one that builds a fact table (TPC-H q7: orders joins its
                // few customers before lineitem meets it, rather than being built whole).
                let cost = (rows > EXPANDING * a.1.max(b.1), rows + a.1.min(b.1));
                if best.as_ref().is_none_or(|(c, ..)| cost < *c) {
                    best = Some((cost, i, j, rows));
                }
            }
        }
        let (_, i, j, rows) = best?;
        let b = parts.remove(j);
        let a = parts.remove(i);
        parts.insert(i, (a.0 | b.0, rows, JoinTree::Join(Box::new(a.2), Box::new(b.2))));
    }
    parts.pop().map(|(_, _, tree)| tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relation sets of a tree's joins, bottom-up.
    fn joins(tree: &JoinTree, out: &mut Vec<u64>) -> u64 {
        match tree {
            JoinTree::Relation(i) => 1 << i,
            JoinTree::Join(a, b) => {
                let set = joins(a, out) | joins(b, out);
                out.push(set);
                set
            }
        }
    }

    fn sets(tree: &JoinTree) -> Vec<u64> {
        let mut out = Vec::new();
        joins(tree, &mut out);
        out
    }

    /// SSB at SF 1, dimensions listed first: customer 0, supplier 1, part 2, date 3
    /// (one month), lineorder 4; customer and supplier also joined on their region.
    fn star() -> (Vec<[usize; 2]>, Estimates) {
        let ends = vec![[0, 1], [4, 0], [4, 1], [4, 2], [4, 3]];
        let est = Estimates {
            rows: vec![30_000.0, 2_000.0, 200_000.0, 2_556.0 / 84.0, 6_000_000.0],
            distinct: vec![
                [Some(5.0), Some(5.0)],
                [Some(20_000.0), Some(30_000.0)],
                [Some(2_000.0), Some(2_000.0)],
                [Some(200_000.0), Some(200_000.0)],
                [Some(2_406.0), Some(2_556.0)],
            ],
        };
        (ends, est)
    }

    /// TPC-H q7 at SF 1, its nations folded into their tables: lineitem 0 (two years),
    /// supplier 1 and customer 3 of two nations, orders 2. Joining lineitem to its
    /// suppliers and then to orders keeps every result near 144 thousand rows but
    /// builds all 1.5 million orders; orders joins its 12 thousand customers first.
    #[test]
    fn a_large_relation_meets_its_filtered_dimension_before_it_is_built() {
        let ends = vec![[0, 1], [0, 2], [2, 3]];
        let est = Estimates {
            rows: vec![1_800_000.0, 800.0, 1_500_000.0, 12_000.0],
            distinct: vec![
                [Some(10_000.0), Some(800.0)],
                [Some(1_500_000.0), Some(1_500_000.0)],
                [Some(100_000.0), Some(12_000.0)],
            ],
        };
        let tree = greedy(&ends, &est).unwrap();
        assert!(sets(&tree).contains(&((1 << 2) | (1 << 3))), "{tree:?}");
    }

    #[test]
    fn a_star_joins_the_fact_table_to_its_most_selective_dimension_first() {
        let (ends, est) = star();
        let tree = greedy(&ends, &est).unwrap();
        let sets = sets(&tree);
        assert_eq!(sets[0], (1 << 4) | (1 << 3), "{tree:?}");
        // Left-deep over lineorder: every join includes it, so customer and supplier
        // never join on their region alone.
        assert!(sets.iter().all(|s| s & (1 << 4) != 0), "{tree:?}");
        assert_eq!(sets.len(), 4);
    }

    #[test]
    fn a_filtered_snowflake_dimension_joins_its_dimension_first() {
        // lineorder 0, customer 1, nation 2 (one of 25), date 3 (one year of seven).
        let ends = vec![[0, 1], [1, 2], [0, 3]];
        let est = Estimates {
            rows: vec![6_000_000.0, 30_000.0, 1.0, 365.0],
            distinct: vec![[Some(20_000.0), Some(30_000.0)], [Some(25.0), Some(25.0)], [Some(2_406.0), Some(2_556.0)]],
        };
        let tree = greedy(&ends, &est).unwrap();
        assert_eq!(sets(&tree)[0], (1 << 1) | (1 << 2), "{tree:?}");
    }

    #[test]
    fn many_to_many_joins_wait_but_are_made_when_nothing_else_is_left() {
        // Three relations joined only on low-cardinality attributes.
        let ends = vec![[0, 1], [1, 2]];
        let est = Estimates { rows: vec![100.0, 100.0, 100.0], distinct: vec![[Some(2.0), Some(2.0)]; 2] };
        let tree = greedy(&ends, &est).unwrap();
        assert_eq!(sets(&tree).len(), 2);
        // Unconnected relations have no order.
        assert!(greedy(&[[0, 1]], &est).is_none());
    }

    #[test]
    fn join_estimates_follow_the_distinct_values() {
        let (ends, est) = star();
        // lineorder ⋈ date: 6M × 30.4 / max(2406, 30.4).
        let rows = join_rows(&ends, &est, (1 << 4, est.rows[4]), (1 << 3, est.rows[3])).unwrap();
        assert!((rows - 6_000_000.0 * est.rows[3] / 2_406.0).abs() < 1e-6);
        // Customer ⋈ supplier on their region: many to many.
        let rows = join_rows(&ends, &est, (1, 30_000.0), (2, 2_000.0)).unwrap();
        assert_eq!(rows, 12_000_000.0);
        assert!(join_rows(&ends, &est, (1 << 2, 1.0), (1 << 3, 1.0)).is_none());
        // Lineorder with customer, then supplier: the key equality counts, the region
        // equality beside it is taken as implied.
        let lc = (1 << 4) | 1;
        let rows = join_rows(&ends, &est, (lc, 6_000_000.0), (1 << 1, 2_000.0)).unwrap();
        assert_eq!(rows, 6_000_000.0);
    }

    #[test]
    fn a_composite_key_is_not_taken_as_two_independent_ones() {
        // TPC-H q9's core: lineitem 0, partsupp 1 (on partkey and suppkey), part 2 (a
        // quarter of it by a LIKE). Joined to part first, then partsupp.
        let ends = vec![[0, 1], [0, 1], [0, 2]];
        let est = Estimates {
            rows: vec![6_000_000.0, 800_000.0, 50_000.0],
            distinct: vec![[Some(10_000.0), Some(10_000.0)], [Some(200_000.0), Some(200_000.0)], [Some(200_000.0), Some(200_000.0)]],
        };
        let tree = greedy(&ends, &est).unwrap();
        assert_eq!(sets(&tree)[0], 1 | (1 << 2), "{tree:?}");
    }
}
