//! The aggregation sink: scalar aggregates in registers, reduced per warp; grouped ones
//! in a per-block shared table or straight into the global arrays ([`GroupTable`]), with
//! sums as narrow as the rows and the values' bounds allow ([`SumRepr`]). A group's
//! number is computed from the keys' ranges or dictionary codes (perfect hash) or is its
//! slot in a global open-addressing table of packed keys ([`super::hash`]).

use std::fmt::Write;

use tessera_ir::{AggFunc, Aggregate, ArithOp, Expr, GroupStrategy, KeyDomain, Scalar, Type};

use super::abi::{Out, Param};
use super::builder::{Builder, Lowered, c_long};
use super::hash::{KeyPack, table_slots};
use super::ir::{CExpr, CType, Load};
use super::layout::{KeyLayout, SinkLayout, bounds, value_width};
use super::unsupported::Reason;
use crate::cx;

/// The most group slots of a perfect-hash aggregation on the GPU (group numbers are `int`
/// in kernels; the planner's perfect-hash limit, 4 Mi, is far below).
pub const MAX_GROUP_SLOTS: usize = i32::MAX as usize;

/// Where a grouped aggregation accumulates inside a thread block.
///
/// Per-row atomics on a few hot global addresses serialize in L2 (SSB q4.1 has 35 groups
/// among 120 M rows), so each block first accumulates into a shared-memory table and
/// merges it into the global arrays once, after its last tile (blocks walk tiles
/// grid-stride, about one wave of them, so merges are few). A shared open-addressing
/// table for larger domains was measured slower on an H200 than plain global atomics
/// (`benchmarks/results/README.md`, "Group tables"); so was, again, a shared hash table of
/// group numbers (128–1,024 slots) with the warp queue on (2026-11-28h: SSB q2.1 0.38 →
/// 0.66–2.1 ms, q3.1 0.50 → 0.53–0.92). Global arrays that many rows a slot are expected
/// to reach are kept in copies, a block adding into one ([`global_copies`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupTable {
    /// Per-row atomics on the global arrays (the group slots' accumulators do not fit
    /// even a small shared table).
    Global,
    /// A shared array indexed by the group number itself: the whole domain fits.
    Direct {
        /// Slots (= groups).
        slots: usize,
        /// Copies of the table (a power of two, at most [`MAX_TABLE_COPIES`]): lane `l`
        /// of a warp adds into copy `l % copies` (see [`table_copies`]).
        copies: usize,
    },
}

/// The most copies of a direct table a block keeps: one per lane of a warp.
pub const MAX_TABLE_COPIES: usize = 32;

/// Copies of a direct table of `slots` slots of `per_slot` bytes each: one unless the
/// domain has fewer slots than a warp has lanes, else as many (a power of two, at most
/// [`MAX_TABLE_COPIES`]) as fit in `budget` bytes ([`SHARED_AGG_BYTES`] unless an experiment
/// says otherwise).
///
/// Shared atomics on one address serialize, and with fewer slots than lanes the rows of
/// a warp land on the same few addresses: TPC-H q1 (4 groups present among 6 slots, 8
/// aggregates over 59 M rows) took 13.5 ms at SF 10 on the H200 against a 0.62 ms
/// bandwidth model with one copy (`gpu-h200-2026-11-25g`), 3.2 ms with 16
/// (`gpu-h200-2026-11-25h`). With a copy per lane, lanes of a warp add into distinct
/// addresses; the copies are summed inside the block before its one merge into the
/// global arrays. Domains of a warp's lanes or more (every SSB
/// aggregation) keep one copy: their rows spread over the slots already, and a larger
/// table takes L1 from the probes' bitmaps (`benchmarks/results/README.md`, "Seen flags").
pub fn table_copies(slots: usize, per_slot: usize, budget: usize) -> usize {
    if slots >= MAX_TABLE_COPIES {
        return 1;
    }
    let mut copies = MAX_TABLE_COPIES;
    while copies > 1 && slots.saturating_mul(per_slot).saturating_mul(copies) > budget {
        copies /= 2;
    }
    copies
}

/// Shared memory a block spends on its group table. 16 KiB keeps 12 blocks of 128
/// threads resident per SM (H100/H200: 228 KiB of shared memory per SM), enough warps in
/// flight to keep HBM busy.
pub const SHARED_AGG_BYTES: usize = 16 << 10;

/// Shared bytes per group slot: the accumulators plus a 4-byte seen flag.
fn slot_bytes(accumulators: &[Accumulator]) -> usize {
    4 + accumulators
        .iter()
        .map(|a| match a {
            Accumulator::Sum(r) => 8 * r.words(),
            Accumulator::SumCount(r) => 8 * r.words() + 8,
            Accumulator::Count | Accumulator::Min | Accumulator::Max => 8,
            Accumulator::MinCount | Accumulator::MaxCount => 16,
        })
        .sum::<usize>()
}

/// The most shared memory a direct table of a warp's lanes or more slots takes (its one
/// copy); larger domains aggregate with global atomics. Such a table and the warp queue
/// that comes with it take L1 from the probes' bitmaps, which those pipelines look up
/// row by row. On an H200 (SSB SF 20, `gpu-2026-11-28h` run 4, `gpu-2026-11-28i`): q2.1's
/// joins grouped by `p_brand1` (1,001 slots, 12 KiB; a 125 KiB part bitmap) took
/// 1.86–2.49 ms in a direct table against 0.70 with global atomics, while q3.1's and
/// q4.1's joins grouped by `c_nation, s_nation` (625 slots, 7.5 KiB) took 0.90 and 0.65
/// ms direct against 1.47 and 0.81 global (25 groups present: hot global atomics).
/// 8 KiB keeps both at their faster table. `TESSERA_EXP_DIRECT_DOMAIN_BYTES=N` sets it.
pub const DIRECT_DOMAIN_MAX_BYTES: usize = 8 << 10;

/// The block-level table for `groups` group slots (see [`GroupTable`]) whose shared
/// arrays take at most `budget` bytes ([`SHARED_AGG_BYTES`] unless an experiment says
/// otherwise, `Experiments::direct_max_bytes`), and at most `domain_budget`
/// ([`DIRECT_DOMAIN_MAX_BYTES`]) for a domain of a warp's lanes or more.
pub fn group_table(groups: usize, accumulators: &[Accumulator], budget: usize, domain_budget: usize) -> GroupTable {
    let per_slot = slot_bytes(accumulators);
    let limit = if groups >= MAX_TABLE_COPIES { budget.min(domain_budget) } else { budget };
    if groups.saturating_mul(per_slot) <= limit {
        GroupTable::Direct { slots: groups, copies: table_copies(groups, per_slot, budget) }
    } else {
        GroupTable::Global
    }
}

/// Copies of a global group table's arrays that blocks add into where
/// [`global_copies`]'s rule takes them. On an H200 (SSB SF 20, `gpu-2026-11-29d` run 1) 8
/// and 16 copies took q3.1's probe to the same time (0.468–0.480 ms).
pub const GLOBAL_COPIES: usize = 8;

/// The fewest rows an aggregation is estimated to add a slot of its domain for which its
/// global arrays take copies ([`global_copies`]). Hot addresses are groups that take many
/// rows each; the planner knows the rows estimated to reach the aggregation and the
/// domain's slots, not the groups present, so rows a slot stands for rows a group (a
/// lower bound). On an H200 (SSB SF 20, `gpu-2026-11-29d` run 1), 8 copies took q3.1's
/// probe (about 4 M rows into 150 groups of 5,408 slots: some 760 rows a slot) from
/// 0.526–0.552 to 0.468–0.480 ms in every round, and made q2.1's (some 120 rows a slot)
/// 0.393 → 0.404 ms and q2.2's 0.263 → 0.272: the fold's launch and the larger fill
/// cost more than groups with a few thousand rows each lose to their atomics.
pub const GLOBAL_COPIES_MIN_ROWS_PER_SLOT: f64 = 256.0;

/// The most copies of a global group table ([`global_copies`]).
pub const MAX_GLOBAL_COPIES: usize = 64;

/// The most bytes a global group table's copies take together: filled before the kernel
/// and folded after it, they cost a pass over that many bytes each.
pub const GLOBAL_COPIES_MAX_BYTES: usize = 1 << 20;

/// Copies of a grouped aggregation's global accumulator arrays that its blocks add into:
/// block `b` adds into copy `b % copies`, and one launch after the kernel folds the
/// copies into the first (`tessera_fold_copies`, `records.cuh`), so what reads the arrays
/// afterwards sees one table. Per-row atomics on a few hot global addresses serialize in
/// L2 (SSB q3.1: about 4 M rows into 150 groups); copies spread them over that many
/// addresses. The seen flags stay one array: a group's flag is read by every row and
/// written once, and copies of it too measured no faster (q3.1 0.471 against 0.473 ms,
/// `gpu-2026-11-29d` run 2).
///
/// `asked` is what the options ask for: 0 applies the rule ([`GLOBAL_COPIES`] where
/// `estimated_rows` reach [`GLOBAL_COPIES_MIN_ROWS_PER_SLOT`] a slot, else none), another
/// number that many copies (a power of two). Only plain 64-bit adds fold so (COUNT, and
/// SUMs kept in one 64-bit word); a hash table's slots are claimed by keys, so it keeps
/// one table; and the copies take at most [`GLOBAL_COPIES_MAX_BYTES`].
pub fn global_copies(groups: usize, accumulators: &[Accumulator], hashed: bool, table: GroupTable, asked: usize, estimated_rows: Option<f64>) -> usize {
    let wanted = match asked {
        0 if estimated_rows.is_some_and(|rows| rows >= GLOBAL_COPIES_MIN_ROWS_PER_SLOT * groups as f64) => GLOBAL_COPIES,
        0 => 1,
        n => n,
    };
    let plain = accumulators.iter().all(|a| matches!(a, Accumulator::Count | Accumulator::Sum(SumRepr::I64) | Accumulator::SumCount(SumRepr::I64)));
    if wanted <= 1 || hashed || table != GroupTable::Global || !plain || accumulators.is_empty() {
        return 1;
    }
    let bytes = 8 * accumulators.iter().flat_map(|a| a.arrays()).map(|(w, _)| w).sum::<usize>();
    let mut copies = wanted;
    while copies > 1 && groups.saturating_mul(bytes).saturating_mul(copies) > GLOBAL_COPIES_MAX_BYTES {
        copies /= 2;
    }
    copies
}

/// An accumulator array that is nonzero exactly for the groups a kernel added rows to,
/// so that a group's presence can be read from it instead of from a seen flag
/// ([`presence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Presence {
    /// The aggregate it belongs to.
    pub aggregate: usize,
    /// Its place among the aggregation's arrays: aggregate by aggregate, each's
    /// [`Accumulator::arrays`] in order.
    pub array: usize,
    /// For a SUM, the sign its values must have (true: every value > 0, false: < 0), which
    /// the kernel checks row by row; None for a count.
    pub sign: Option<bool>,
}

/// The accumulator array that shows which groups are present, where there is one: a
/// count of every row (COUNT(*), or COUNT, AVG or a SUM's count over values that are
/// never NULL), else a SUM kept in 64 bits ([`SumRepr::I64`]: no total wraps) of values
/// that are never NULL and whose range (`ranges`, the planner's statistics,
/// [`Aggregate::value_ranges`](tessera_ir::Aggregate)) lies on one side of zero: a group's
/// total is then nonzero once it took a row. The statistics are a hint, so the kernel
/// tests each value's sign, and a value of the other sign sends the query to the CPU.
///
/// Global arrays in copies ([`global_copies`]) use it: every row of SSB q3.1 (about 4 M
/// at SF 20) read its group's seen flag, after the atomics, and the fold that follows
/// the kernel sets the flags from the array at no extra launch. On an H200 q3.1's
/// kernels took 0.449–0.453 ms this way against 0.469–0.475 (`gpu-2026-11-29e` run 1,
/// 8 rounds in turns). Tables without copies keep their flags: setting them from an
/// accumulator would take a launch of its own.
pub fn presence(accumulators: &[Accumulator], nullable: &[bool], ranges: &[Option<(i64, i64)>]) -> Option<Presence> {
    let mut arrays = 0;
    let mut counted = None;
    let mut summed = None;
    for (j, acc) in accumulators.iter().enumerate() {
        let never_null = !nullable.get(j).copied().unwrap_or(true);
        match acc {
            Accumulator::Count if never_null => counted = counted.or(Some(Presence { aggregate: j, array: arrays, sign: None })),
            a if a.counted() && never_null => counted = counted.or(Some(Presence { aggregate: j, array: arrays + 1, sign: None })),
            Accumulator::Sum(SumRepr::I64) if never_null => {
                let sign = match ranges.get(j).copied().flatten() {
                    Some((lo, _)) if lo > 0 => Some(true),
                    Some((_, hi)) if hi < 0 => Some(false),
                    _ => None,
                };
                if sign.is_some() {
                    summed = summed.or(Some(Presence { aggregate: j, array: arrays, sign }));
                }
            }
            _ => {}
        }
        arrays += acc.arrays().len();
    }
    counted.or(summed)
}

/// One aggregate's accumulator array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulator {
    /// A sum, kept as [`SumRepr`] says.
    Sum(SumRepr),
    /// `uint64_t` count.
    Count,
    /// A sum (as [`SumRepr`] says) followed by a `uint64_t` count array (AVG).
    SumCount(SumRepr),
    /// `int64_t` minimum (initialized to i64::MAX).
    Min,
    /// `int64_t` maximum (initialized to i64::MIN).
    Max,
    /// A [`Accumulator::Min`] of values that may be NULL, followed by a `uint64_t` count of
    /// the non-NULL ones (a group without one gets NULL).
    MinCount,
    /// A [`Accumulator::Max`] of values that may be NULL, with its count (see
    /// [`Accumulator::MinCount`]).
    MaxCount,
}

impl Accumulator {
    /// Its device arrays, in parameter order: words per group and the value they start
    /// from (None: zero).
    pub fn arrays(self) -> Vec<(usize, Option<i64>)> {
        match self {
            Accumulator::Sum(r) => vec![(r.words(), None)],
            Accumulator::SumCount(r) => vec![(r.words(), None), (1, None)],
            Accumulator::Count => vec![(1, None)],
            Accumulator::Min => vec![(1, Some(i64::MAX))],
            Accumulator::Max => vec![(1, Some(i64::MIN))],
            Accumulator::MinCount => vec![(1, Some(i64::MAX)), (1, None)],
            Accumulator::MaxCount => vec![(1, Some(i64::MIN)), (1, None)],
        }
    }

    /// How the runtime's record kernels (`records.cuh`: `tessera_record_value`) read a
    /// group's value in its first array: 1 signed 128-bit, 2 unsigned 64-bit, 3 signed
    /// 64-bit, 4 a SplitSum's two halves, 5 a double. For an AVG, its sum's.
    pub fn record_kind(self) -> i64 {
        match self {
            Accumulator::Sum(SumRepr::I128) | Accumulator::SumCount(SumRepr::I128) => 1,
            Accumulator::Count => 2,
            Accumulator::Sum(SumRepr::I64) | Accumulator::SumCount(SumRepr::I64) => 3,
            Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => 3,
            Accumulator::Sum(SumRepr::Split) | Accumulator::SumCount(SumRepr::Split) => 4,
            Accumulator::Sum(SumRepr::F64) | Accumulator::SumCount(SumRepr::F64) => 5,
        }
    }

    /// The C type of one group's accumulator.
    pub fn c(self) -> &'static str {
        match self {
            Accumulator::Count => "unsigned long long",
            Accumulator::Sum(r) | Accumulator::SumCount(r) => r.c(),
            Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => "long long",
        }
    }

    /// Whether a count of the group's non-NULL inputs follows its first array
    /// ([`Out::Counts`]).
    pub fn counted(self) -> bool {
        matches!(self, Accumulator::SumCount(_) | Accumulator::MinCount | Accumulator::MaxCount)
    }

    /// The accumulator of `func` over values that may be NULL (`nullable`), summed as `repr`.
    pub fn of(func: AggFunc, repr: SumRepr, nullable: bool) -> Accumulator {
        match (func, nullable) {
            (AggFunc::CountStar | AggFunc::Count, _) => Accumulator::Count,
            (AggFunc::Sum, false) => Accumulator::Sum(repr),
            (AggFunc::Sum, true) | (AggFunc::Avg, _) => Accumulator::SumCount(repr),
            (AggFunc::Min, false) => Accumulator::Min,
            (AggFunc::Max, false) => Accumulator::Max,
            (AggFunc::Min, true) => Accumulator::MinCount,
            (AggFunc::Max, true) => Accumulator::MaxCount,
        }
    }
}

/// How a SUM's running totals are kept in its accumulator array.
///
/// A grouped aggregation adds each row with an atomic. A 128-bit atomic addition needs
/// the old low word back to carry into the high word, so every row's thread waits for an
/// L2 round trip. When the total provably fits fewer bits, the additions are
/// fire-and-forget reductions instead: [`SumRepr::I64`] when `rows × max |value| < 2^63`
/// (the values' bound from their types, see [`magnitude`]), else [`SumRepr::Split`] for
/// fewer than 2^32 rows, else [`SumRepr::I128`]. Scalar aggregates add in registers:
/// `I64` where it holds, else `I128` (a split sum is for atomics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumRepr {
    /// `Int128` per group (two words, low first).
    I128,
    /// `int64_t` per group: cannot overflow for the kernel's rows.
    I64,
    /// `SplitSum` per group (two words): the sums of the values' low 32 bits (unsigned)
    /// and of their high 32 bits (signed); the total is `hi × 2^32 + lo`.
    Split,
    /// `double` per group: a SUM or AVG of doubles (their order keys turned back into
    /// doubles and added). Atomic additions come in no fixed order, so the last bits of a
    /// total may differ from the CPU backend's, as a parallel sum of doubles does anywhere.
    F64,
}

impl SumRepr {
    /// The representation for adding `rows` values of at most `magnitude` each.
    pub fn for_rows(rows: u64, magnitude: u128) -> SumRepr {
        if u128::from(rows.max(1)).saturating_mul(magnitude) < 1u128 << 63 {
            SumRepr::I64
        } else if rows < 1u64 << 32 {
            SumRepr::Split
        } else {
            SumRepr::I128
        }
    }

    /// 64-bit words per group.
    pub fn words(self) -> usize {
        match self {
            SumRepr::I64 | SumRepr::F64 => 1,
            SumRepr::I128 | SumRepr::Split => 2,
        }
    }

    /// The exact total from a group's words (`words()` of them, as downloaded); for
    /// [`SumRepr::F64`], whose total is a double ([`f64::from_bits`] of its word), the
    /// word as a signed integer.
    pub fn total(self, w: &[u64]) -> i128 {
        match self {
            SumRepr::I64 | SumRepr::F64 => i128::from(w[0] as i64),
            SumRepr::I128 => ((w[1] as i128) << 64) | w[0] as i128,
            SumRepr::Split => (i128::from(w[1] as i64) << 32) + i128::from(w[0]),
        }
    }

    /// The C type of one group's accumulator.
    fn c(self) -> &'static str {
        match self {
            SumRepr::I128 => "Int128",
            SumRepr::I64 => "long long",
            SumRepr::Split => "SplitSum",
            SumRepr::F64 => "double",
        }
    }

    /// A statement adding `v` (a `long long`) to accumulator `at` (an lvalue).
    fn add(self, at: CExpr, v: &CExpr) -> CExpr {
        match self {
            SumRepr::I128 => cx!["atomic_add_i128(&", at, ", tessera_i128(", v, "));"],
            SumRepr::I64 => cx!["atomicAdd((unsigned long long*)&", at, ", (unsigned long long)(", v, "));"],
            SumRepr::Split => cx!["atomic_add_split(&", at, ", ", v, ");"],
            SumRepr::F64 => cx!["atomicAdd(&", at, ", tessera_float_of_key(", v, "));"],
        }
    }

    /// A statement setting accumulator `at` to zero.
    fn zero(self, at: &str) -> String {
        match self {
            SumRepr::I128 => format!("{at} = make_int128(0ull, 0ull);"),
            SumRepr::I64 => format!("{at} = 0LL;"),
            SumRepr::Split => format!("{at}.lo = 0ull; {at}.hi = 0ull;"),
            SumRepr::F64 => format!("{at} = 0.0;"),
        }
    }

    /// A statement adding accumulator `from` into accumulator `to` (both of this
    /// representation), without atomics: `to` is a thread's own.
    fn fold(self, from: &str, to: &str) -> String {
        match self {
            SumRepr::I128 => format!(
                "{{ const unsigned long long lo = {to}.lo + {from}.lo; {to}.hi = {to}.hi + {from}.hi + (lo < {to}.lo ? 1ull : 0ull); {to}.lo = lo; }}"
            ),
            SumRepr::I64 | SumRepr::F64 => format!("{to} += {from};"),
            SumRepr::Split => format!("{to}.lo += {from}.lo; {to}.hi += {from}.hi;"),
        }
    }

    /// A statement adding accumulator `from` into accumulator `to` (both of this
    /// representation) when it is not zero.
    fn merge(self, from: &str, to: &str) -> String {
        match self {
            SumRepr::I128 => format!("{{ const Int128 x = {from}; if ((x.lo | x.hi) != 0ull) atomic_add_i128(&{to}, x); }}"),
            SumRepr::I64 => format!("if ({from} != 0LL) atomicAdd((unsigned long long*)&{to}, (unsigned long long){from});"),
            // A NaN is not 0.0 and is added; -0.0 is, and skipping it leaves the same total.
            SumRepr::F64 => format!("if ({from} != 0.0) atomicAdd(&{to}, {from});"),
            SumRepr::Split => format!(
                "if ({from}.lo != 0ull) atomicAdd((unsigned long long*)&{to}.lo, (unsigned long long){from}.lo); if ({from}.hi != 0ull) atomicAdd((unsigned long long*)&{to}.hi, (unsigned long long){from}.hi);"
            ),
        }
    }
}

/// The largest magnitude a value of `e` can have as stored (decimals as scaled
/// integers), from the types of its columns and the values of its literals: what bounds a
/// sum of it (see [`SumRepr`]). Every arithmetic result is also within its type's range
/// (checked in kernels), so a bound never exceeds that.
pub fn magnitude(e: &Expr, input: &[tessera_ir::Field]) -> u128 {
    let ty = e.ty(input);
    let of_type = bounds(ty).map_or(u128::MAX, |(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()));
    let scale = |t: Type| match t {
        Type::Decimal { scale, .. } => i32::from(scale),
        _ => 0,
    };
    let pow = |k: i32| 10u128.saturating_pow(k.max(0) as u32);
    let m = match e {
        Expr::Literal { value, .. } => match value {
            Scalar::Int(v) => u128::from(v.unsigned_abs()),
            Scalar::Date32(d) => u128::from(d.unsigned_abs()),
            Scalar::Decimal(d) => d.unsigned_abs(),
            _ => of_type,
        },
        Expr::Arith { op: ArithOp::Add | ArithOp::Sub, left, right, .. } => {
            let (l, r) = (magnitude(left, input), magnitude(right, input));
            let os = scale(ty);
            l.saturating_mul(pow(os - scale(left.ty(input)))).saturating_add(r.saturating_mul(pow(os - scale(right.ty(input)))))
        }
        Expr::Arith { op: ArithOp::Mul, left, right, .. } => magnitude(left, input).saturating_mul(magnitude(right, input)),
        Expr::Negate(x) => magnitude(x, input),
        Expr::Cast { expr, .. } => magnitude(expr, input).saturating_mul(pow(scale(ty) - scale(expr.ty(input)))),
        Expr::Case { when_then, otherwise, .. } => when_then
            .iter()
            .map(|(_, t)| magnitude(t, input))
            .chain(otherwise.iter().map(|o| magnitude(o, input)))
            .max()
            .unwrap_or(0),
        _ => of_type,
    };
    m.min(of_type)
}

/// The expression aggregate `agg` adds up on the GPU: its argument, except for an AVG of
/// integers, which DataFusion plans as `AVG(CAST(x AS DOUBLE))`: `x` itself is summed,
/// exactly, and the host divides that sum by the count in f64 (`finish_sum`). That is the
/// quotient a sum of doubles gives while its partial sums are exact (below 2^53 in
/// magnitude, as in any order of adding), and a closer one beyond, where a sum of
/// doubles depends on the order of its additions.
pub fn accumulated<'a>(agg: &'a tessera_ir::AggExpr, fields: &[tessera_ir::Field]) -> Option<&'a Expr> {
    let arg = agg.arg.as_ref()?;
    match (agg.func, arg) {
        (AggFunc::Avg, Expr::Cast { expr, ty: Type::Float64 }) if expr.ty(fields).is_integer() => Some(expr),
        _ => Some(arg),
    }
}

/// What lowering an aggregation gives: the sink's layout and the most rows its sums are
/// exact for.
pub struct Lowering {
    /// The arrays it writes.
    pub layout: SinkLayout,
    /// The most rows a launch may read.
    pub rows_limit: u64,
}

/// Lowers aggregation `a` over the current layout (`fields`) of a pipeline reading
/// `source_rows` rows.
///
/// With [`Aggregate::reduced`], the kernel groups by the independent keys alone and each
/// dependent key is a MIN of its values — codes when it is a string, which only such a
/// MIN may read (all of a group's codes are the same row's or value's). The executor puts
/// the columns back in the aggregation's order ([`Aggregate::reduced_form`]).
/// `source_rows` bounds the rows the sink may take (sums' widths); `estimated_rows` is
/// the planner's estimate of those that reach it, where known.
pub fn lower(b: &mut Builder<'_>, a: &Aggregate, fields: &[tessera_ir::Field], source_rows: u64, estimated_rows: Option<f64>) -> Lowered<Lowering> {
    let reduced = a.reduced_form();
    let (a, dependent_from) = match &reduced {
        Some((r, _)) => (r, a.aggregates.len()),
        None => (a, usize::MAX),
    };
    super::scan::prefetch(b, a.group_by.iter().chain(a.aggregates.iter().filter_map(|x| x.arg.as_ref())).flat_map(|e| e.columns()))?;
    let (groups, keys, hashed, grp) = group_number(b, a, fields, source_rows)?;
    let scalar = matches!(a.strategy, GroupStrategy::Scalar);
    let mut rows_limit = u64::MAX;
    let mut accumulators = Vec::new();
    for agg in &a.aggregates {
        if agg.distinct {
            return Err(Reason::DistinctAggregate);
        }
        // Grouped sums add per row, as narrow as the rows and the values' bound allow.
        // Scalar sums add in registers, 64-bit ones where no total of the kernel's rows
        // can leave 64 bits (two instructions a row where a 128-bit addition with its
        // carry took nine), else 128-bit; an atomic once per warp either way. Doubles add
        // as doubles.
        let repr = match accumulated(agg, fields) {
            Some(e) if e.ty(fields) == Type::Float64 => SumRepr::F64,
            Some(e) => {
                let magnitude = magnitude(e, fields);
                let repr = match SumRepr::for_rows(source_rows, magnitude) {
                    SumRepr::Split if scalar => SumRepr::I128,
                    r => r,
                };
                let limit = match repr {
                    SumRepr::I64 => ((1u128 << 63) - 1) / magnitude.max(1),
                    SumRepr::Split => (1u128 << 32) - 1,
                    SumRepr::I128 | SumRepr::F64 => u128::from(u64::MAX),
                };
                rows_limit = rows_limit.min(u64::try_from(limit).unwrap_or(u64::MAX));
                repr
            }
            None => SumRepr::I128,
        };
        // An input that may be NULL is skipped where it is; SUM, MIN and MAX count the
        // inputs they took (NULL where none).
        let nullable = accumulated(agg, fields).is_some_and(|e| super::filter::may_be_null(b, e));
        accumulators.push(Accumulator::of(agg.func, repr, nullable));
    }
    let table = if scalar { GroupTable::Global } else { group_table(groups, &accumulators, b.group_table_bytes, b.direct_domain_bytes) };
    let global_copies = if scalar { 1 } else { global_copies(groups, &accumulators, hashed.is_some(), table, b.global_copies, estimated_rows) };
    for (j, acc) in accumulators.iter().enumerate() {
        b.params.push(Param::Out(Out::Accumulators { aggregate: j, accumulator: *acc }));
        if acc.counted() {
            b.params.push(Param::Out(Out::Counts { aggregate: j }));
        }
    }
    b.params.push(Param::Out(Out::Seen));
    // The values, computed once per row, and where they may be NULL when they are not.
    let mut values = Vec::new();
    let mut valid = Vec::new();
    let mut value_dicts = Vec::new();
    for (j, agg) in a.aggregates.iter().enumerate() {
        let dict = match (accumulated(agg, fields), agg.func) {
            (Some(Expr::Column { index, .. }), _) if j >= dependent_from => b.dicts.get(*index).copied().flatten(),
            // MIN/MAX of a dictionary-encoded string: the store's dictionaries are sorted,
            // so codes compare like the strings (row numbers standing for strings do not).
            (Some(Expr::Column { index, .. }), AggFunc::Min | AggFunc::Max) => b.dicts.get(*index).copied().flatten().filter(|d| !d.by_row),
            _ => None,
        };
        value_dicts.push(dict);
        let (value, ok) = match accumulated(agg, fields) {
            // COUNT of a column reads only whether it is NULL, whatever its type.
            Some(Expr::Column { index, .. }) if agg.func == AggFunc::Count => (CExpr::text("1LL"), b.nulls.get(*index).cloned().flatten()),
            Some(e) => {
                let at = e.ty(fields);
                if value_width(at).is_none() || (at == Type::Utf8 && dict.is_none()) {
                    return Err(Reason::ValueType(at));
                }
                match (e, dict) {
                    (Expr::Column { index, .. }, Some(_)) if j >= dependent_from => (super::scan::column(b, *index)?.0, None),
                    // A dependent group key is the same in all of a group's rows.
                    _ if j >= dependent_from => (super::filter::expr(b, e, fields)?, None),
                    _ => super::filter::value(b, e, fields)?,
                }
            }
            None => (CExpr::text("1LL"), None),
        };
        let counts = accumulators[j].counted() || accumulators[j] == Accumulator::Count;
        if ok.is_some() && !counts {
            return Err(Reason::Inconsistent(format!("aggregate #{j}'s input may be NULL, its accumulator takes every row")));
        }
        values.push(b.def(CType::LongLong, format!("v{j}"), cx!["(long long)(", value, ")"], None));
        valid.push(ok.map(|ok| b.var(CType::Bool, "vn", ok)));
    }
    // With copies, the fold after the kernel marks the groups seen where an accumulator
    // shows them; a SUM that does so only while its values keep their sign is checked.
    let nullable: Vec<bool> = valid.iter().map(Option::is_some).collect();
    let seen_from = if global_copies > 1 && b.presence { presence(&accumulators, &nullable, &a.value_ranges) } else { None };
    if let Some(Presence { aggregate: j, sign: Some(positive), .. }) = seen_from {
        b.reject_flagged(cx![&values[j], if positive { " <= 0LL" } else { " >= 0LL" }], 1);
    }
    match grp {
        None => scalar_aggregate(b, &accumulators, &values, &valid),
        Some(grp) => grouped_aggregate(b, &accumulators, &values, &valid, &grp, table, (global_copies, groups), seen_from.is_none()),
    }
    if hashed.is_some() {
        b.params.push(Param::Out(Out::Keys));
    }
    let seen_from = seen_from.map(|p| p.array);
    Ok(Lowering { layout: SinkLayout::Aggregate { groups, accumulators, keys, hashed, table, global_copies, seen_from, value_dicts }, rows_limit })
}

/// The group slots, the keys' layouts (perfect hash) or packing (hash table), and the
/// item's group number (None: scalar).
type Groups = (usize, Vec<KeyLayout>, Option<KeyPack>, Option<CExpr>);

/// See [`Groups`].
fn group_number(b: &mut Builder<'_>, a: &Aggregate, fields: &[tessera_ir::Field], source_rows: u64) -> Lowered<Groups> {
    let domains = match &a.strategy {
        GroupStrategy::Scalar => return Ok((1, Vec::new(), None, None)),
        GroupStrategy::Perfect { domains } => domains,
        GroupStrategy::Hash { estimated_groups, key_ranges } => return hashed_group(b, a, key_ranges, *estimated_groups, fields, source_rows),
    };
    let mut stride = 1usize;
    let mut terms = CExpr::default();
    let mut keys = Vec::new();
    for (k, d) in a.group_by.iter().zip(domains) {
        let Expr::Column { index, .. } = k else { return Err(Reason::ComputedGroupKey) };
        let (v, _) = super::scan::value(b, *index)?;
        // Slot 0 of each key is NULL's.
        let ok = b.nulls.get(*index).cloned().flatten();
        let (slots, min, dictionary) = match d {
            KeyDomain::Range { min, max } => ((max - min + 2) as usize, *min, None),
            KeyDomain::Dictionary { .. } => {
                let dict = b.dicts.get(*index).copied().flatten().filter(|d| !d.by_row).ok_or(Reason::UnknownDictionary)?;
                (dict.size + 1, 0, Some(dict))
            }
            KeyDomain::Boolean => return Err(Reason::BooleanGroupKey),
        };
        if !terms.0.is_empty() {
            terms = cx![terms, " + "];
        }
        // The key's offset from its smallest value in unsigned arithmetic (wrapping, never
        // undefined; `min` may be i64::MIN, which C reads only as `c_long` writes it).
        let offset = format!(") - (unsigned long long){} + 1ull)) * {stride}LL", c_long(min));
        terms = match ok {
            None => cx![terms, "((long long)((unsigned long long)(", v, offset],
            Some(ok) => cx![terms, "((", ok, ") ? ((long long)((unsigned long long)(", v, offset, " : 0LL)"],
        };
        keys.push(KeyLayout { slots, min, dictionary });
        stride = stride.checked_mul(slots).ok_or(Reason::GroupSlots(None))?;
    }
    if stride > MAX_GROUP_SLOTS {
        return Err(Reason::GroupSlots(Some(stride)));
    }
    let grp = b.var(CType::Int, "grp", cx!["(int)(", terms, ")"]);
    Ok((stride, keys, None, Some(grp)))
}

/// Groups room is made for beyond the planner's estimate: the table fills up (and the
/// query goes back to the CPU) only past [`SLOTS_PER_ROW`](super::hash::SLOTS_PER_ROW)
/// times this many groups. Distinct estimates are HyperLogLog counts (about 3% off) whose
/// product over several keys overestimates, so 2× covers them and keeps the table
/// within 4× of the groups it will hold.
pub const GROUP_ESTIMATE_HEADROOM: u64 = 2;

/// A hash aggregation's group number: the slot of the row's packed keys in a global
/// table sized from the estimated groups (never more than the rows), found or claimed.
/// The key in the first slot is loaded in a stage of its own, so a thread's items look
/// their slots up together; an item finds its group there unless another group took
/// the slot first.
fn hashed_group(b: &mut Builder<'_>, a: &Aggregate, ranges: &[Option<(i64, i64)>], estimate: u64, fields: &[tessera_ir::Field], rows: u64) -> Lowered<Groups> {
    // A key that may be NULL packs NULL as an offset of its own (see `hash.rs`).
    let mut values = Vec::with_capacity(a.group_by.len());
    for k in &a.group_by {
        values.push(super::filter::value(b, k, fields)?);
    }
    let nullable: Vec<bool> = values.iter().map(|(_, ok)| ok.is_some()).collect();
    let pack = KeyPack::plan(&a.group_by, ranges, fields, &b.dicts, &nullable)?;
    let capacity = rows.min(estimate.saturating_mul(GROUP_ESTIMATE_HEADROOM).max(super::hash::MIN_SLOTS));
    let slots = usize::try_from(table_slots(capacity)).ok().filter(|&n| n <= MAX_GROUP_SLOTS).ok_or(Reason::GroupSlots(None))?;
    let (word, in_range) = super::hash::pack_nullable(b, &pack, &values);
    b.reject_flagged(cx!["!(", in_range, ")"], 1);
    let mask = slots - 1;
    // The table is written by this kernel: a plain read (a stale "empty" only sends the
    // item to the claiming loop).
    let (first, at) = super::hash::first_slot(b, &word, mask, "out_keys", false, Load::GroupKey);
    let found = cx![
        "(", at, " == ", word.clone(), ") ? (long long)", first.clone(),
        format!(" : tessera_hash_find_or_insert_from(out_keys, {mask}ull, "), word, ", ", first, ")"
    ];
    let slot = b.var(CType::LongLong, "g", found);
    b.reject_flagged(cx![&slot, " < 0LL"], 1);
    let grp = b.var(CType::Int, "grp", cx!["(int)", slot]);
    Ok((slots, Vec::new(), Some(pack), Some(grp)))
}

/// `stmt` where `valid` holds, when given (an input that may be NULL is skipped where it is).
fn where_valid(stmt: CExpr, valid: Option<&CExpr>) -> CExpr {
    match valid {
        Some(ok) => cx!["if (", ok, ") { ", stmt, " }"],
        None => stmt,
    }
}

/// Scalar aggregates: per-thread registers over all the thread's rows, reduced per warp
/// at the end with one atomic per warp and accumulator; `valid`: per aggregate, where its
/// input is not NULL when it may be.
fn scalar_aggregate(b: &mut Builder<'_>, accumulators: &[Accumulator], values: &[CExpr], valid: &[Option<CExpr>]) {
    for (j, (acc, v)) in accumulators.iter().zip(values).enumerate() {
        let (init, epilogue) = (&mut b.ir.prologue, &mut b.ir.epilogue);
        let stmt = match acc {
            Accumulator::Count => {
                let _ = writeln!(init, "    unsigned long long t{j} = 0;");
                let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum(t{j}); if ((threadIdx.x & 31) == 0 && t{j} != 0) atomicAdd(&out_a{j}[0], t{j});");
                cx![format!("t{j} += 1ull;")]
            }
            Accumulator::Sum(SumRepr::F64) | Accumulator::SumCount(SumRepr::F64) => {
                let _ = writeln!(init, "    double t{j} = 0.0; unsigned long long n{j} = 0;");
                let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum_f64(t{j}); n{j} = tessera_warp_sum(n{j});");
                let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomicAdd(&out_a{j}[0], t{j});");
                if matches!(acc, Accumulator::SumCount(_)) {
                    let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomicAdd(&out_c{j}[0], n{j});");
                }
                cx![format!("t{j} += tessera_float_of_key("), v, format!("); n{j} += 1ull;")]
            }
            // 64 or 128 bits (never split: `lower`). A sum's total of zero adds nothing, so
            // only an AVG's or a NULL-skipping SUM's count needs counting.
            Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                let t = format!("t{j}");
                let (start, warp, add) = match r {
                    SumRepr::I64 => ("0", format!("(long long)tessera_warp_sum((unsigned long long){t})"), cx![format!("{t} += "), v, ";"]),
                    _ => ("make_int128(0ull, 0ull)", format!("tessera_warp_sum({t})"), cx!["{ Int128 x = tessera_i128(", v, format!("); {} }}", r.fold("x", &t))]),
                };
                let counted = acc.counted();
                let _ = writeln!(init, "    {} {t} = {start};{}", r.c(), if counted { format!(" unsigned long long n{j} = 0;") } else { String::new() });
                let _ = writeln!(epilogue, "    {t} = {warp};");
                let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0) {{ {} }}", r.merge(&t, &format!("out_a{j}[0]")));
                if counted {
                    let _ = writeln!(epilogue, "    n{j} = tessera_warp_sum(n{j}); if ((threadIdx.x & 31) == 0 && n{j} != 0) atomicAdd(&out_c{j}[0], n{j});");
                    cx![add, format!(" n{j} += 1ull;")]
                } else {
                    add
                }
            }
            Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => {
                let (f, start, warp, cmp) = min_max(*acc);
                let _ = writeln!(init, "    long long t{j} = {start};");
                let _ = writeln!(epilogue, "    t{j} = {warp}(t{j}); if ((threadIdx.x & 31) == 0 && t{j} != {start}) {f}(&out_a{j}[0], t{j});");
                if acc.counted() {
                    let _ = writeln!(init, "    unsigned long long n{j} = 0;");
                    let _ = writeln!(epilogue, "    n{j} = tessera_warp_sum(n{j}); if ((threadIdx.x & 31) == 0 && n{j} != 0) atomicAdd(&out_c{j}[0], n{j});");
                    cx!["if (", v, format!(" {cmp} t{j}) t{j} = "), v, format!("; n{j} += 1ull;")]
                } else {
                    cx!["if (", v, format!(" {cmp} t{j}) t{j} = "), v, ";"]
                }
            }
        };
        b.effect(where_valid(stmt, valid.get(j).and_then(Option::as_ref)));
    }
    let _ = writeln!(b.ir.prologue, "    bool any = false;");
    b.effect(cx!["any = true;"]);
    let _ = writeln!(b.ir.epilogue, "    if (__any_sync(0xffffffffu, any) && (threadIdx.x & 31) == 0) out_seen[0] = 1u;");
}

/// The value of shared array `name` for slot `s` in a direct table's merge: the slot
/// itself with one copy, else a local (`m_…`) into which a loop written to `epilogue`
/// folds the slot's copies with `fold(from, to)`.
fn slot_value(epilogue: &mut String, copies: usize, name: &str, ctype: &str, fold: &dyn Fn(&str, &str) -> String) -> String {
    if copies == 1 {
        return format!("{name}[s]");
    }
    let local = format!("m_{}", name.trim_start_matches("sh_"));
    let more = fold(&format!("{name}[s * {copies} + c]"), &local);
    let _ = writeln!(epilogue, "        {ctype} {local} = {name}[s * {copies}]; for (int c = 1; c < {copies}; ++c) {{ {more} }}");
    local
}

/// Atomic, initial value, warp reduction and comparison of MIN or MAX.
fn min_max(acc: Accumulator) -> (&'static str, &'static str, &'static str, &'static str) {
    if matches!(acc, Accumulator::Min | Accumulator::MinCount) {
        ("atomicMin", "9223372036854775807LL", "tessera_warp_min", "<")
    } else {
        ("atomicMax", "(-9223372036854775807LL - 1)", "tessera_warp_max", ">")
    }
}

/// Statements adding the row's `values` to accumulators `{prefix}a{j}[index]` (and
/// `{prefix}c{j}` for counts of non-NULL inputs), with atomics (shared or global alike);
/// an input that may be NULL (`valid`) only where it is not.
fn accumulate(accumulators: &[Accumulator], values: &[CExpr], valid: &[Option<CExpr>], prefix: &str, index: &CExpr) -> CExpr {
    let mut s = CExpr::default();
    for (j, (acc, v)) in accumulators.iter().zip(values).enumerate() {
        let at = cx![format!("{prefix}a{j}["), index, "]"];
        let add = match acc {
            Accumulator::Count => cx![format!("atomicAdd(&{prefix}a{j}["), index, "], 1ull);"],
            Accumulator::Sum(r) => r.add(at, v),
            Accumulator::SumCount(r) => cx![r.add(at, v), format!(" atomicAdd(&{prefix}c{j}["), index, "], 1ull);"],
            Accumulator::Min | Accumulator::Max => cx![format!("{}(&{prefix}a{j}[", min_max(*acc).0), index, "], ", v, ");"],
            Accumulator::MinCount | Accumulator::MaxCount => {
                cx![format!("{}(&{prefix}a{j}[", min_max(*acc).0), index, "], ", v, format!("); atomicAdd(&{prefix}c{j}["), index, "], 1ull);"]
            }
        };
        s = cx![s, where_valid(add, valid.get(j).and_then(Option::as_ref)), " "];
    }
    s
}

/// Statements adding the row's `values` to accumulators `{prefix}a{j}[index]` once per
/// group present among the warp's lanes here (`Experiments::warp_combine`): the lanes
/// with the same `index` (`__match_any_sync`) combine their values by shuffles and the
/// first of them adds the totals and runs `seen`. None where an accumulator cannot be
/// combined so (128-bit, split and floating-point sums) or an input may be NULL.
///
/// An `I64` sum's partial totals cannot overflow: each is a sum of some of the rows
/// whose whole total was bounded below 2^63 ([`SumRepr::for_rows`]).
fn combined(accumulators: &[Accumulator], values: &[CExpr], valid: &[Option<CExpr>], prefix: &str, index: &CExpr, seen: &CExpr) -> Option<CExpr> {
    if valid.iter().any(Option::is_some) {
        return None;
    }
    let mut totals = CExpr::default();
    let mut adds = CExpr::default();
    for (j, (acc, v)) in accumulators.iter().zip(values).enumerate() {
        let at = cx![format!("{prefix}a{j}["), index, "]"];
        let count = cx![format!(" atomicAdd(&{prefix}c{j}["), index, "], (unsigned long long)__popc(wc_m));"];
        let total = CExpr::text(format!("wc{j}"));
        match acc {
            Accumulator::Count => adds = cx![adds, format!("atomicAdd(&{prefix}a{j}["), index, "], (unsigned long long)__popc(wc_m)); "],
            Accumulator::Sum(SumRepr::I64) | Accumulator::SumCount(SumRepr::I64) => {
                totals = cx![totals, format!("const long long wc{j} = tessera_peer_sum(wc_m, "), v, "); "];
                adds = cx![adds, SumRepr::I64.add(at, &total), if acc.counted() { count } else { CExpr::default() }, " "];
            }
            Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => {
                let (f, _, _, _) = min_max(*acc);
                let peer = if matches!(acc, Accumulator::Min | Accumulator::MinCount) { "tessera_peer_min" } else { "tessera_peer_max" };
                totals = cx![totals, format!("const long long wc{j} = {peer}(wc_m, "), v, "); "];
                adds = cx![adds, format!("{f}(&{prefix}a{j}["), index, format!("], wc{j});"), if acc.counted() { count } else { CExpr::default() }, " "];
            }
            Accumulator::Sum(_) | Accumulator::SumCount(_) => return None,
        }
    }
    Some(cx!["{ const unsigned int wc_m = __match_any_sync(__activemask(), (int)(", index, ")); ", totals, "if ((int)(threadIdx.x & 31u) == __ffs(wc_m) - 1) { ", adds, seen, " } }"])
}

/// Grouped aggregates: per row into the block's shared table (or the global arrays, see
/// [`GroupTable`]); at the end each block merges its table into the global arrays.
/// `global` is the copies of the global accumulators ([`global_copies`]) and the groups
/// of each; `mark_seen` false leaves a global table's seen flags to the fold after the
/// kernel ([`presence`]).
#[allow(clippy::too_many_arguments)]
fn grouped_aggregate(b: &mut Builder<'_>, accumulators: &[Accumulator], values: &[CExpr], valid: &[Option<CExpr>], grp: &CExpr, table: GroupTable, global: (usize, usize), mark_seen: bool) {
    let (slots, copies) = match table {
        GroupTable::Global => {
            let (copies, groups) = global;
            if copies > 1 {
                // The block's copy: each array pointer moved to it once, up front.
                for (j, acc) in accumulators.iter().enumerate() {
                    for (k, (words, _)) in acc.arrays().into_iter().enumerate() {
                        let name = if k == 0 { format!("out_a{j}") } else { format!("out_c{j}") };
                        let _ = writeln!(b.ir.prologue, "    {name} += (size_t)(blockIdx.x & {}u) * {}ull;", copies - 1, words * groups);
                    }
                }
            }
            // The seen flag is read before it is written: a store from every row would
            // queue on the few hot addresses in L2 like an atomic. An `atomicOr` from
            // every row, flags in shared memory merged at the end, and a block's shared
            // bitmap writing a group's flag only the first time were all measured slower
            // (`benchmarks/results/README.md`, "Seen flags").
            let seen = if mark_seen { cx!["if (out_seen[", grp, "] == 0u) out_seen[", grp, "] = 1u;"] } else { CExpr::default() };
            let combined = if b.warp_combine { combined(accumulators, values, valid, "out_", grp, &seen) } else { None };
            match combined {
                Some(c) => b.effect(c),
                None => b.effect(cx![accumulate(accumulators, values, valid, "out_", grp), seen]),
            }
            return;
        }
        GroupTable::Direct { slots, copies } => (slots, copies),
    };
    let cells = slots * copies;
    // Shared arrays and their initialization.
    let mut init = String::new();
    let prologue = &mut b.ir.prologue;
    for (j, acc) in accumulators.iter().enumerate() {
        match acc {
            Accumulator::Count => {
                let _ = writeln!(prologue, "    __shared__ unsigned long long sh_a{j}[{cells}];");
                let _ = write!(init, "sh_a{j}[s] = 0ull; ");
            }
            Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                let _ = writeln!(prologue, "    __shared__ {} sh_a{j}[{cells}];", r.c());
                let _ = write!(init, "{} ", r.zero(&format!("sh_a{j}[s]")));
                if matches!(acc, Accumulator::SumCount(_)) {
                    let _ = writeln!(prologue, "    __shared__ unsigned long long sh_c{j}[{cells}];");
                    let _ = write!(init, "sh_c{j}[s] = 0ull; ");
                }
            }
            Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => {
                let _ = writeln!(prologue, "    __shared__ long long sh_a{j}[{cells}];");
                let _ = write!(init, "sh_a{j}[s] = {}; ", min_max(*acc).1);
                if acc.counted() {
                    let _ = writeln!(prologue, "    __shared__ unsigned long long sh_c{j}[{cells}];");
                    let _ = write!(init, "sh_c{j}[s] = 0ull; ");
                }
            }
        }
    }
    let _ = writeln!(prologue, "    __shared__ unsigned int sh_seen[{cells}];");
    init.push_str("sh_seen[s] = 0u;");
    let _ = writeln!(prologue, "    for (int s = threadIdx.x; s < {cells}; s += blockDim.x) {{ {init} }}");
    let _ = writeln!(prologue, "    __syncthreads();");
    // Per row.
    let sl = if copies == 1 {
        b.var(CType::Int, "sl", cx!["(int)(", grp, ")"])
    } else {
        b.var(CType::Int, "sl", cx!["(int)(", grp, format!(") * {copies} + (int)(threadIdx.x & {}u)", copies - 1)])
    };
    let seen = cx!["sh_seen[", &sl, "] = 1u;"];
    // With copies a warp's lanes add into distinct addresses already.
    let combined = if b.warp_combine && copies == 1 { combined(accumulators, values, valid, "sh_", &sl, &seen) } else { None };
    match combined {
        Some(c) => b.effect(c),
        None => b.effect(cx![accumulate(accumulators, values, valid, "sh_", &sl), seen]),
    }
    // Merge: a thread per slot folds the slot's copies (if several) into locals, then
    // adds them to the global arrays.
    let epilogue = &mut b.ir.epilogue;
    let _ = writeln!(epilogue, "    __syncthreads();");
    let _ = writeln!(epilogue, "    for (int s = threadIdx.x; s < {slots}; s += blockDim.x) {{");
    let _ = writeln!(epilogue, "        const int grp = s;");
    let add = |from: &str, to: &str| format!("{to} += {from};");
    let seen = slot_value(epilogue, copies, "sh_seen", "unsigned int", &|from, to| format!("{to} |= {from};"));
    let _ = writeln!(epilogue, "        if ({seen} == 0u) continue;");
    for (j, acc) in accumulators.iter().enumerate() {
        match acc {
            Accumulator::Count => {
                let v = slot_value(epilogue, copies, &format!("sh_a{j}"), "unsigned long long", &add);
                let _ = writeln!(epilogue, "        if ({v} != 0ull) atomicAdd(&out_a{j}[grp], {v});");
            }
            Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                let v = slot_value(epilogue, copies, &format!("sh_a{j}"), r.c(), &|from, to| r.fold(from, to));
                let _ = writeln!(epilogue, "        {}", r.merge(&v, &format!("out_a{j}[grp]")));
                if matches!(acc, Accumulator::SumCount(_)) {
                    let n = slot_value(epilogue, copies, &format!("sh_c{j}"), "unsigned long long", &add);
                    let _ = writeln!(epilogue, "        if ({n} != 0ull) atomicAdd(&out_c{j}[grp], {n});");
                }
            }
            Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => {
                let (f, start, _, cmp) = min_max(*acc);
                let v = slot_value(epilogue, copies, &format!("sh_a{j}"), "long long", &|from, to| format!("if ({from} {cmp} {to}) {to} = {from};"));
                let _ = writeln!(epilogue, "        if ({v} != {start}) {f}(&out_a{j}[grp], {v});");
                if acc.counted() {
                    let n = slot_value(epilogue, copies, &format!("sh_c{j}"), "unsigned long long", &add);
                    let _ = writeln!(epilogue, "        if ({n} != 0ull) atomicAdd(&out_c{j}[grp], {n});");
                }
            }
        }
    }
    let _ = writeln!(epilogue, "        if (out_seen[grp] == 0u) out_seen[grp] = 1u;");
    let _ = writeln!(epilogue, "    }}");
}
