//! Code generation: one IR pipeline → one fused CUDA kernel.
//!
//! The kernel reads like a hand-written SSB query (Crystal): each thread block takes a
//! tile of `BLOCK_THREADS × items_per_thread` rows; each thread holds its items in a
//! striped (coalesced) order with a selection flag per item, and the pipeline runs as a
//! sequence of *stages*, each one unrolled loop over the thread's selected items. A stage
//! ends after every global-memory load (a column, a hash-table slot, a payload), so a
//! thread issues the load for all its items before any item waits for its value — the
//! thread keeps `items_per_thread` loads in flight, as Crystal's `BlockLoad` →
//! `BlockPred` does, instead of walking a chain of dependent loads item by item. Columns
//! needed later are loaded only for items still selected (the seed's `BlockLoadSel`);
//! per-item values live in register arrays, so nothing between operators touches global
//! memory. Blocks walk tiles grid-stride (one wave of resident blocks), so per-block work
//! — setting up and merging shared group tables, the final atomics — is paid once per
//! block. Scalar aggregates stay in registers and are reduced per warp (shuffles) with one
//! atomic per warp at the end; grouped aggregates accumulate in a shared-memory table per
//! block ([`GroupTable`]) merged into a perfect-hash group array in global memory; builds
//! write a dense array; materializations compact the surviving rows into column arrays
//! with one atomic per warp.
//!
//! Literals are passed at launch by default ([`Literals::Parameters`]), so queries that
//! differ only in constants share one kernel; [`Literals::Inline`] writes them into the
//! source, one compile per query text (see [`Literals`] for the measured trade-off). Dictionary predicates arrive as code lists already (see [`GpuColumn`]).
//!
//! What this generator supports is checked by [`generate`], which returns `Err(reason)`
//! for anything else; that pipeline then runs on the CPU backend.
//!
//! Kernel ABI (all generated kernels):
//! `extern "C" __global__ void tessera_pipeline(const void* const* cols, long long rows,
//! const void* const* tabs, void* const* outs, unsigned long long* flags,
//! const long long* params)`
//! - `cols[i]`: source column `i` as `int32_t` or `int64_t` (see [`Width`]);
//! - `tabs`: per probe, in operator order: `int32_t* rows` (build row + 1, 0 = empty),
//!   one array per payload column, then `uint32_t* bits` (bit `s` set when slot `s` holds
//!   a row: what probes test);
//! - `outs`: the sink's arrays ([`SinkLayout`]);
//! - `flags[0]`: arithmetic overflow, `flags[1]`: a build key outside its range,
//!   `flags[2]`: a duplicate build key (one array per query, read when a result
//!   comes back);
//! - `params`: the literal values with [`Literals::Parameters`] (unused otherwise).

use std::collections::HashMap;
use std::fmt::Write;

use tessera_ir::{AggFunc, ArithOp, BuildStrategy, CmpOp, Expr, GroupStrategy, JoinKind, KeyDomain, Operator, Pipeline, Scalar, Sink, Source, Type};

/// Threads per block.
pub const BLOCK_THREADS: u32 = 128;
/// Rows per thread per tile for pipelines with at most one probe (Crystal's 128 × 4 tile).
///
/// Chosen from a sweep on an H200 (SSB SF 20, 2026-11-23, kernels of the 13 queries with
/// 1, 2 and 4 items per thread; `benchmarks/results/gpu-h200-2026-11-23b/`): the
/// one-probe scans q1.x ran fastest with 4 (0.59–0.69 ms against 0.75–0.80 with 2), every
/// query with two or more probes with 2 (q3.1 1.13 ms against 1.40 with 4, q4.1 1.36
/// against 1.73). Each probe keeps a slot, a flag and its payload per item alive from
/// stage to stage, so more items cost registers, and with them resident warps, faster
/// than they add loads in flight.
pub const ITEMS_PER_THREAD: u32 = 4;

/// Rows per thread per tile for pipelines with two or more probes (see
/// [`ITEMS_PER_THREAD`]).
pub const ITEMS_PER_THREAD_MANY_PROBES: u32 = 2;

/// Storage width of a column on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// `int32_t` (8/16/32-bit integers, dates, dictionary codes).
    I32,
    /// `int64_t` (64-bit integers, decimals of at most 18 digits).
    I64,
}

impl Width {
    fn c(self) -> &'static str {
        match self {
            Width::I32 => "int32_t",
            Width::I64 => "int64_t",
        }
    }

    /// Bytes per value.
    pub fn bytes(self) -> usize {
        match self {
            Width::I32 => 4,
            Width::I64 => 8,
        }
    }
}

/// The width of values of an IR type on the GPU (None: not supported there yet).
pub fn width_of(ty: Type) -> Option<Width> {
    match ty {
        Type::Int8 | Type::Int16 | Type::Int32 | Type::Date32 | Type::Utf8 => Some(Width::I32),
        Type::Int64 => Some(Width::I64),
        Type::Decimal { precision, .. } if precision <= 18 => Some(Width::I64),
        _ => None,
    }
}

/// A dictionary whose codes a column holds: its size, and an id the executor uses to
/// find its values again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DictRef {
    /// Entries.
    pub size: usize,
    /// The executor's id for it.
    pub id: usize,
}

/// A column of the pipeline's source as it lives on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuColumn {
    /// Storage width.
    pub width: Width,
    /// The dictionary when the column holds dictionary codes.
    pub dictionary: Option<DictRef>,
}

/// One group key of a perfect-hash aggregation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLayout {
    /// Slots, including slot 0 for NULL.
    pub slots: usize,
    /// Value of slot 1.
    pub min: i64,
    /// The dictionary when the key is dictionary codes.
    pub dictionary: Option<DictRef>,
}

/// A dense hash table built on the GPU: slot = key − `min`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuTable {
    /// Smallest key.
    pub min: i64,
    /// Slots.
    pub slots: usize,
    /// Payload columns (build pipeline's sink-input layout order, all of them).
    pub payload: Vec<GpuColumn>,
    /// Estimated share of the build side's table that is in the table, per mille: the
    /// share of probe rows a foreign-key join lets through. Orders the probes.
    pub pass_permille: u32,
}

/// The arrays a sink writes, in `outs` order.
#[derive(Debug, Clone, PartialEq)]
pub enum SinkLayout {
    /// `rows` then one array per payload column, `slots` long, then the membership
    /// bitmap, `uint32_t[slots.div_ceil(32)]`.
    Build {
        /// The table's shape.
        table: GpuTable,
    },
    /// Per aggregate one array of `groups` accumulators, then `uint32_t seen[groups]`.
    Aggregate {
        /// Group slots (1 for a scalar aggregate).
        groups: usize,
        /// Per aggregate its accumulator kind.
        accumulators: Vec<Accumulator>,
        /// Per group key, in mixed-radix order (first key varies fastest).
        keys: Vec<KeyLayout>,
        /// Where blocks accumulate before merging into the global arrays.
        table: GroupTable,
    },
    /// `unsigned long long count`, then per column of the sink's input an array as long
    /// as the input: the rows that reach the sink, compacted, in no particular order.
    Materialize {
        /// The columns' widths and dictionaries.
        columns: Vec<GpuColumn>,
    },
}

/// Where a grouped aggregation accumulates inside a thread block.
///
/// Per-row atomics on a few hot global addresses serialize in L2 (SSB q4.1 has 35
/// groups among 120 M rows), so each block first accumulates into a shared-memory table
/// and merges it into the global arrays once, at the end of its tiles (the kernel walks
/// tiles grid-stride with about one wave of blocks, so merges are few).
///
/// A shared open-addressing table for larger domains was tried and measured on an H200
/// (SSB SF 20, 2026-11-23, `benchmarks/results/gpu-h200-2026-11-23/log3-group-table.txt`):
/// its per-row probing and contended shared atomics made the q2.x–q4.x kernels 1.5–6×
/// slower than global atomics (13 kernels 23.3 ms against 9.8 ms), so domains that do not
/// fit a direct table use the global arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupTable {
    /// Per-row atomics on the global arrays (the group slots' accumulators do not fit
    /// even a small shared table).
    ///
    /// Spreading these atomics over 32 copies of the arrays (block `b` adding into copy
    /// `b % 32`, the copies folded after the kernel) was tried on an H200 (SSB SF 20,
    /// 2026-11-23, `benchmarks/results/gpu-h200-2026-11-23b/`) on the guess that atomics
    /// queued per L2 line: q3.1 (4 M rows into 150 groups) did not get faster (1.13 ms
    /// without, 1.24 ms with, within the runs' 8% spread), so the arrays stay single.
    Global,
    /// A shared array indexed by the group number itself: the whole domain fits.
    Direct {
        /// Slots (= groups).
        slots: usize,
    },
}

/// Shared memory a block spends on its group table. 16 KiB keeps 12 blocks of 128
/// threads resident per SM (H100/H200: 228 KiB of shared memory per SM), enough
/// warps in flight to keep HBM busy.
pub const SHARED_AGG_BYTES: usize = 16 << 10;

/// Shared bytes per group slot: the accumulators plus a 4-byte seen flag.
fn slot_bytes(accumulators: &[Accumulator]) -> usize {
    4 + accumulators
        .iter()
        .map(|a| match a {
            Accumulator::Sum => 16,
            Accumulator::SumCount => 24,
            Accumulator::Count | Accumulator::Min | Accumulator::Max => 8,
        })
        .sum::<usize>()
}

/// The block-level table for `groups` group slots (see [`GroupTable`]).
pub fn group_table(groups: usize, accumulators: &[Accumulator]) -> GroupTable {
    let per_slot = slot_bytes(accumulators);
    if groups.saturating_mul(per_slot) <= SHARED_AGG_BYTES { GroupTable::Direct { slots: groups } } else { GroupTable::Global }
}

/// One aggregate's accumulator array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accumulator {
    /// `Int128` sum.
    Sum,
    /// `uint64_t` count.
    Count,
    /// `Int128` sum followed by a `uint64_t` count array (AVG).
    SumCount,
    /// `int64_t` minimum (initialized to i64::MAX).
    Min,
    /// `int64_t` maximum (initialized to i64::MIN).
    Max,
}

/// A generated kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// CUDA C++ source.
    pub source: String,
    /// The kernel's `params` array: the query's literals when they are not inlined
    /// ([`Literals::Parameters`]), then the lookup tables the kernel reads (`consts`).
    pub params: Vec<i64>,
    /// What the sink's `outs` hold.
    pub sink: SinkLayout,
    /// Rows per thread per tile (the launch sizes its grid in tiles of
    /// `BLOCK_THREADS × items_per_thread` rows).
    pub items_per_thread: u32,
}

/// How the query's literals reach a kernel.
///
/// Inlined literals let NVRTC fold them into compares and ranges (the fastest code), but
/// every distinct query text is a new kernel to compile (tens to hundreds of ms, once per
/// text thanks to the kernel cache). As parameters, queries that differ only in their
/// constants share one kernel: each literal is read once per thread into a register.
/// Structural values — hash-table ranges, group domains, type bounds — stay inlined in
/// both modes. `SET tessera.kernel_literals = 'parameters' | 'inline'`.
///
/// Measured on an H200 (SSB SF 20, 2026-11-23): the 13 kernels took 23.4 ms with
/// parameters and 23.5 ms inlined, while a new constant cost a 68 ms compile inlined and
/// nothing as a parameter — so parameters are the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Literals {
    /// Written into the source.
    Inline,
    /// Passed in the kernel's `params` array.
    #[default]
    Parameters,
}

/// How kernels are generated (`tessera.kernel_literals`, `tessera.gpu_items_per_thread`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KernelOptions {
    /// How literals reach the kernel.
    pub literals: Literals,
    /// Rows each thread holds per tile: how many loads it keeps in flight at once. None
    /// chooses per pipeline ([`ITEMS_PER_THREAD`], [`ITEMS_PER_THREAD_MANY_PROBES`]).
    pub items_per_thread: Option<u32>,
}

/// The most items per thread a kernel may hold (their variables live in registers).
pub const MAX_ITEMS_PER_THREAD: u32 = 16;

/// The most slots of a dense hash table a kernel probes (slots are `int` in kernels).
pub const MAX_TABLE_SLOTS: usize = i32::MAX as usize;

/// The most group slots of a perfect-hash aggregation on the GPU (group numbers are `int`
/// in kernels; the planner's perfect-hash limit, 4 Mi, is far below).
pub const MAX_GROUP_SLOTS: usize = i32::MAX as usize;

/// IN lists longer than this test a bitmap instead of comparing with each value. String
/// predicates over a dictionary become IN lists of codes (TPC-H's `NOT LIKE` over a
/// comment dictionary: about 15 000 codes), and a chain of that many compares made a
/// 300 KB kernel that NVRTC had not compiled after 5 minutes (2026-11-23); a bitmap is one
/// load whatever the list's length.
pub const IN_LIST_MAX_COMPARES: usize = 8;

/// IN lists spanning more values than this (max − min) keep the compares: the bitmap
/// travels with every launch (2^20 bits are 128 KiB).
pub const IN_LIST_MAX_BITMAP_BITS: u64 = 1 << 20;

/// The kernel's name in every generated module.
pub const KERNEL_NAME: &str = "tessera_pipeline";

struct Gen<'a> {
    cols: &'a [GpuColumn],
    /// Per current layout column: a C expression for its value and whether it is loaded.
    layout: Vec<Val>,
    /// Per current layout column: its dictionary size when it holds codes.
    dicts: Vec<Option<DictRef>>,
    /// Source columns loaded so far (variables `c{i}`).
    loaded: Vec<usize>,
    /// With [`Literals::Parameters`]: the literal values so far (variables `p{k}`).
    params: Option<Vec<i64>>,
    /// Lookup tables the kernel reads from `consts` (the launch parameters after the
    /// literals), e.g. the bitmaps of long IN lists.
    consts: Vec<i64>,
    /// Tile-scope declarations of per-item variables (`T name[ITEMS_PER_THREAD];`).
    decls: String,
    /// Finished stages, each the body of one loop over the thread's items.
    stages: Vec<String>,
    /// The stage being written.
    body: String,
    /// Inside a CASE branch (a lambda evaluated for one item): variables are plain
    /// locals and there are no stages.
    branch: bool,
    tmp: usize,
}

#[derive(Clone)]
enum Val {
    /// A source column not yet loaded: index into `cols`.
    Source(usize),
    /// A local variable (a C expression naming it) with its width.
    Local(String, Width),
}

impl<'a> Gen<'a> {
    fn line(&mut self, s: &str) {
        self.body.push_str(s);
        self.body.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.tmp += 1;
        format!("{prefix}{}", self.tmp)
    }

    /// Ends the current stage: the next statements go into a new loop over the items.
    /// Called after every global-memory load, so that a load is issued for all of a
    /// thread's items before any of them waits for its value (Crystal's `BlockLoad`
    /// before `BlockPred`): each thread keeps `ITEMS_PER_THREAD` loads in flight instead
    /// of one, which is what keeps HBM busy.
    fn stage(&mut self) {
        if !self.branch && !self.body.is_empty() {
            let body = std::mem::take(&mut self.body);
            self.stages.push(body);
        }
    }

    /// A new per-item variable `{prefix}N` of C type `ty` set to `value`; returns the C
    /// expression naming it for the current item.
    fn var(&mut self, ty: &str, prefix: &str, value: &str) -> String {
        let name = self.fresh(prefix);
        self.named_var(ty, &name, value)
    }

    fn named_var(&mut self, ty: &str, name: &str, value: &str) -> String {
        if self.branch {
            self.line(&format!("const {ty} {name} = {value};"));
            name.to_string()
        } else {
            let _ = writeln!(self.decls, "{ty} {name}[ITEMS];");
            self.line(&format!("{name}[i] = {value};"));
            format!("{name}[i]")
        }
    }

    /// Drops the current item when `cond` holds (it takes part in no later stage).
    fn reject_if(&mut self, cond: &str) {
        self.line(&format!("if ({cond}) {{ sel[i] = false; continue; }}"));
    }

    /// Drops the current item when `cond` holds, raising error flag `flag`.
    fn reject_flagged(&mut self, cond: &str, flag: usize) {
        self.line(&format!("if ({cond}) {{ flags[{flag}] = 1ull; sel[i] = false; continue; }}"));
    }

    /// The variable holding layout column `i`, loading it on first use.
    fn column(&mut self, i: usize) -> Result<(String, Width), String> {
        match self.layout.get(i).cloned() {
            Some(Val::Local(v, w)) => Ok((v, w)),
            Some(Val::Source(c)) => Ok((self.load_source(c)?, self.cols[c].width)),
            None => Err(format!("column #{i} out of range")),
        }
    }

    /// The variable holding source column `c`, loaded here if it is not yet; every
    /// layout position still naming the unloaded column now names the variable.
    fn load_source(&mut self, c: usize) -> Result<String, String> {
        let w = self.cols.get(c).ok_or_else(|| format!("source column #{c} out of range"))?.width;
        let name = format!("c{c}");
        let v = if self.branch { name.clone() } else { format!("{name}[i]") };
        let mut loaded = true;
        for slot in self.layout.iter_mut() {
            if matches!(slot, Val::Source(x) if *x == c) {
                *slot = Val::Local(v.clone(), w);
                loaded = false;
            }
        }
        if !loaded && !self.loaded.contains(&c) {
            self.named_var(w.c(), &name, &format!("col{c}[r]"));
            self.stage();
        }
        self.loaded.push(c);
        Ok(v)
    }

    /// A query literal: inlined, or the next kernel parameter.
    fn literal(&mut self, v: i64) -> String {
        match &mut self.params {
            Some(params) => {
                params.push(v);
                format!("lit{}", params.len() - 1)
            }
            None => format!("{v}LL"),
        }
    }

    /// A C expression of type `long long` (integers) or `bool` (predicates).
    fn expr(&mut self, e: &Expr, input: &[tessera_ir::Field]) -> Result<String, String> {
        Ok(match e {
            Expr::Column { index, .. } => self.column(*index)?.0,
            Expr::Literal { value, ty } => match value {
                Scalar::Int(v) => self.literal(*v),
                Scalar::Date32(d) => self.literal(i64::from(*d)),
                Scalar::Decimal(d) if width_of(*ty) == Some(Width::I64) => {
                    self.literal(i64::try_from(*d).map_err(|_| format!("decimal literal {d} wider than 64 bits"))?)
                }
                Scalar::Boolean(b) => b.to_string(),
                other => return Err(format!("literal {other:?} on the GPU")),
            },
            Expr::Cmp { op, left, right } => {
                let (lt, rt) = (left.ty(input), right.ty(input));
                if lt == Type::Utf8 || rt == Type::Utf8 {
                    return Err("string comparison that is not over a dictionary".into());
                }
                let (l, r) = (self.expr(left, input)?, self.expr(right, input)?);
                let op = match op {
                    CmpOp::Eq | CmpOp::NotDistinct => "==",
                    CmpOp::NotEq | CmpOp::Distinct => "!=",
                    CmpOp::Lt => "<",
                    CmpOp::LtEq => "<=",
                    CmpOp::Gt => ">",
                    CmpOp::GtEq => ">=",
                };
                format!("((long long)({l}) {op} (long long)({r}))")
            }
            Expr::And(a, b) => format!("({} && {})", self.expr(a, input)?, self.expr(b, input)?),
            Expr::Or(a, b) => format!("({} || {})", self.expr(a, input)?, self.expr(b, input)?),
            Expr::Not(a) => format!("(!{})", self.expr(a, input)?),
            Expr::IsNull(_) => "false".into(),
            Expr::IsNotNull(_) => "true".into(),
            Expr::InList { expr, list, negated } => {
                let x = self.expr(expr, input)?;
                let mut vals = Vec::new();
                for s in list {
                    match s {
                        Scalar::Int(v) => vals.push(*v),
                        Scalar::Date32(d) => vals.push(*d as i64),
                        other => return Err(format!("IN list item {other:?} on the GPU")),
                    }
                }
                vals.sort_unstable();
                vals.dedup();
                let test = if vals.is_empty() {
                    "false".to_string()
                } else if vals.last().copied().unwrap_or(0) - vals[0] == vals.len() as i64 - 1 {
                    let (lo, hi) = (self.literal(vals[0]), self.literal(vals[vals.len() - 1]));
                    format!("((long long)({x}) >= {lo} && (long long)({x}) <= {hi})")
                } else if vals.len() > IN_LIST_MAX_COMPARES && (vals[vals.len() - 1] as i128 - vals[0] as i128) < IN_LIST_MAX_BITMAP_BITS as i128 {
                    self.in_bitmap(&x, &vals)
                } else {
                    let t = self.var("long long", "in", &x);
                    let alts: Vec<String> = vals.iter().map(|&v| format!("{t} == {}", self.literal(v))).collect();
                    format!("({})", alts.join(" || "))
                };
                if *negated { format!("(!{test})") } else { test }
            }
            Expr::Arith { op, left, right, ty } => {
                let (lt, rt) = (left.ty(input), right.ty(input));
                let scale = |t: Type| match t {
                    Type::Decimal { scale, .. } => Some(scale),
                    t if t.is_integer() => Some(0),
                    _ => None,
                };
                let (Some(ls), Some(rs), Some(os)) = (scale(lt), scale(rt), scale(*ty)) else {
                    return Err(format!("arithmetic on {lt} and {rt} on the GPU"));
                };
                let (l, r) = (self.expr(left, input)?, self.expr(right, input)?);
                let pow = |k: i8| 10i128.pow(k.max(0) as u32);
                let value = match op {
                    ArithOp::Add | ArithOp::Sub => {
                        if ls.max(rs) != os {
                            return Err("decimal add/sub with a rescaled result".into());
                        }
                        let sym = if *op == ArithOp::Add { "+" } else { "-" };
                        format!("((__int128)({l}) * {} {sym} (__int128)({r}) * {})", pow(os - ls), pow(os - rs))
                    }
                    ArithOp::Mul => {
                        if ls + rs != os {
                            return Err("decimal multiplication with a rescaled result".into());
                        }
                        format!("((__int128)({l}) * (__int128)({r}))")
                    }
                    _ => return Err(format!("{op} on the GPU")),
                };
                let (lo, hi) = bounds(*ty).ok_or_else(|| format!("result type {ty} on the GPU"))?;
                self.var("long long", "a", &format!("tessera_checked({value}, {lo}LL, {hi}LL, flags)"))
            }
            Expr::Negate(x) => {
                let v = self.expr(x, input)?;
                format!("(-(long long)({v}))")
            }
            Expr::Cast { expr, ty } => {
                let from = expr.ty(input);
                let v = self.expr(expr, input)?;
                match (from, *ty) {
                    (f, t) if f == t => v,
                    (f, t) if f.is_integer() && t.is_integer() => {
                        let (lo, hi) = bounds(t).ok_or("cast bounds")?;
                        self.var("long long", "k", &format!("tessera_checked((__int128)({v}), {lo}LL, {hi}LL, flags)"))
                    }
                    (f, Type::Decimal { scale, .. }) if f.is_integer() || matches!(f, Type::Decimal { .. }) => {
                        let fs = match f {
                            Type::Decimal { scale, .. } => scale,
                            _ => 0,
                        };
                        if scale < fs {
                            return Err("decimal cast that drops digits".into());
                        }
                        let (lo, hi) = bounds(*ty).ok_or("cast bounds")?;
                        let value = format!("tessera_checked((__int128)({v}) * {}, {lo}LL, {hi}LL, flags)", 10i128.pow((scale - fs) as u32));
                        self.var("long long", "k", &value)
                    }
                    (f, t) => return Err(format!("CAST from {f} to {t} on the GPU")),
                }
            }
            Expr::DatePart { part: tessera_ir::DatePart::Year, expr } => {
                let v = self.expr(expr, input)?;
                format!("tessera_year((long long)({v}))")
            }
            Expr::Case { when_then, otherwise, ty } => {
                if width_of(*ty).is_none() || *ty == Type::Utf8 {
                    return Err(format!("CASE of type {ty} on the GPU"));
                }
                // The conditional operator evaluates only the branch taken, as SQL does.
                let mut s = match otherwise {
                    Some(o) => {
                        let mut sub = self.sub();
                        let v = sub.expr(o, input)?;
                        self.inline_sub(sub, &v)
                    }
                    None => return Err("CASE without ELSE (NULL) on the GPU".into()),
                };
                for (w, t) in when_then.iter().rev() {
                    let c = self.expr(w, input)?;
                    let mut sub = self.sub();
                    let v = sub.expr(t, input)?;
                    let v = self.inline_sub(sub, &v);
                    s = format!("(({c}) ? (long long)({v}) : (long long)({s}))");
                }
                s
            }
            other => return Err(format!("{other} on the GPU")),
        })
    }

    /// Membership of `x` in the sorted, distinct `vals` as a bitmap over `vals[0] ..=
    /// vals[last]` in `consts`: its first word, its length in bits, then the bits.
    fn in_bitmap(&mut self, x: &str, vals: &[i64]) -> String {
        let (lo, hi) = (vals[0], vals[vals.len() - 1]);
        let bits = (hi - lo) as usize + 1;
        let mut words = vec![0u64; bits.div_ceil(64)];
        for &v in vals {
            let d = (v - lo) as usize;
            words[d / 64] |= 1u64 << (d % 64);
        }
        let base = self.consts.len();
        self.consts.push(lo);
        self.consts.push(bits as i64);
        self.consts.extend(words.iter().map(|&w| w as i64));
        let d = self.var("long long", "in", &format!("(long long)({x}) - consts[{base}]"));
        format!("((unsigned long long)({d}) < (unsigned long long)consts[{}] && ((consts[{} + ({d} >> 6)] >> ({d} & 63)) & 1LL) != 0)", base + 1, base + 2)
    }

    /// A generator for a branch: statements it needs become a lambda.
    fn sub(&self) -> Gen<'a> {
        Gen {
            cols: self.cols,
            layout: self.layout.clone(),
            dicts: self.dicts.clone(),
            loaded: self.loaded.clone(),
            params: self.params.clone(),
            consts: self.consts.clone(),
            decls: String::new(),
            stages: Vec::new(),
            body: String::new(),
            branch: true,
            tmp: self.tmp + 1000,
        }
    }

    fn inline_sub(&mut self, sub: Gen<'a>, value: &str) -> String {
        self.tmp = sub.tmp;
        // The branch's literals are parameters of the kernel too.
        self.params = sub.params;
        self.consts = sub.consts;
        if sub.body.is_empty() {
            value.to_string()
        } else {
            format!("([&]() -> long long {{ {} return {value}; }}())", sub.body.replace('\n', " "))
        }
    }
}

/// Range of an integer-like IR type as stored (decimals: ±(10^p − 1)).
fn bounds(ty: Type) -> Option<(i128, i128)> {
    Some(match ty {
        Type::Int8 => (i8::MIN as i128, i8::MAX as i128),
        Type::Int16 => (i16::MIN as i128, i16::MAX as i128),
        Type::Int32 | Type::Date32 => (i32::MIN as i128, i32::MAX as i128),
        // -2^63 does not parse as a literal; one more than the minimum is safe.
        Type::Int64 => (i64::MIN as i128 + 1, i64::MAX as i128),
        Type::Decimal { precision, .. } if precision <= 18 => {
            let m = 10i128.pow(precision as u32) - 1;
            (-m, m)
        }
        _ => return None,
    })
}

/// The estimated share of a build pipeline's source rows that reach its table.
fn pass_permille(estimated_rows: u64, build: &Pipeline) -> u32 {
    match &build.source {
        Source::Scan(scan) if scan.rows > 0 => ((estimated_rows.min(scan.rows) * 1000) / scan.rows) as u32,
        _ => 1000,
    }
}

/// A probe whose key is a source column as loaded: its membership test can run before
/// the probes written ahead of it.
struct Hoisted {
    probe: usize,
    column: usize,
    anti: bool,
}

/// Probes (by operator order) whose single key is an unchanged source column; see
/// [`hoist_probes`].
fn hoistable_probes(pipeline: &Pipeline, tables: &[GpuTable]) -> Vec<Hoisted> {
    let mut fields = pipeline.source_fields().to_vec();
    // Per layout column: the source column it is, unchanged.
    let mut source: Vec<Option<usize>> = (0..fields.len()).map(Some).collect();
    let mut out = Vec::new();
    let mut probe = 0usize;
    for op in &pipeline.operators {
        match op {
            Operator::Filter(_) => {}
            Operator::Project { exprs, .. } => {
                source = exprs
                    .iter()
                    .map(|e| match e {
                        Expr::Column { index, .. } => source.get(*index).copied().flatten(),
                        _ => None,
                    })
                    .collect();
            }
            Operator::Probe(p) => {
                let simple = p.residual.is_none() && !p.null_aware && !p.nulls_equal && p.keys.len() == 1;
                let kind_ok = matches!(p.kind, JoinKind::Inner | JoinKind::Semi | JoinKind::Anti);
                if let ([Expr::Column { index, .. }], true, true, true) = (p.keys.as_slice(), simple, kind_ok, probe < tables.len()) {
                    if let Some(c) = source.get(*index).copied().flatten() {
                        out.push(Hoisted { probe, column: c, anti: p.kind == JoinKind::Anti });
                    }
                }
                let before = fields.len();
                fields = op.output_fields(&fields);
                source.extend(std::iter::repeat_n(None, fields.len().saturating_sub(before)));
                probe += 1;
            }
        }
        if let Operator::Project { fields: f, .. } = op {
            fields = f.clone();
        }
    }
    out
}

/// Runs the membership tests of hoistable probes first, the most selective first (as a
/// hand-written SSB kernel orders its probes): rows that some dimension filters out stop
/// before they load the other keys or touch the other tables. The probes themselves still
/// run in plan order for their payloads, reusing the slot found here (returned per probe)
/// instead of testing again.
fn hoist_probes(g: &mut Gen<'_>, hoisted: &[Hoisted], tables: &[GpuTable]) -> Result<HashMap<usize, String>, String> {
    let mut slots = HashMap::new();
    if hoisted.len() < 2 {
        return Ok(slots);
    }
    let mut order: Vec<&Hoisted> = hoisted.iter().collect();
    order.sort_by_key(|h| (tables[h.probe].pass_permille, h.probe));
    for h in order {
        let t = &tables[h.probe];
        let v = g.load_source(h.column)?;
        let (s, found) = lookup(g, t, &format!("h{}_bits", h.probe), &v);
        g.reject_if(&if h.anti { found } else { format!("!{found}") });
        slots.insert(h.probe, s);
    }
    Ok(slots)
}

/// The slot of `key` in dense table `t` (-1 outside its range) and whether a build row is
/// there, from the table's membership bitmap `bits_var` (the lookup is a global load, so
/// the stage ends after it); returns the two variables.
///
/// The bitmap has one bit per slot, 32× smaller than the table's row array: SSB's part
/// table at SF 20 (1 M slots) is a 128 KiB bitmap that stays in L1, where its 4 MiB row
/// array sends every probe of 120 M fact rows to L2. Slots are `int`: tables have at most
/// [`MAX_TABLE_SLOTS`] of them, and 32-bit per-item variables leave more registers for
/// items in flight.
fn lookup(g: &mut Gen<'_>, t: &GpuTable, bits_var: &str, key: &str) -> (String, String) {
    let d = format!("((long long)({key}) - {}LL)", t.min);
    let s = g.var("int", "s", &format!("({d} >= 0 && {d} < {}LL) ? (int){d} : -1", t.slots));
    let found = g.var("bool", "f", &format!("{s} >= 0 && ((__ldg(&{bits_var}[{s} >> 5]) >> ({s} & 31)) & 1u) != 0"));
    g.stage();
    (s, found)
}

/// Scalar aggregates: per-thread registers over all the thread's rows, reduced per warp
/// at the end with one atomic per warp and accumulator.
fn scalar_aggregate(g: &mut Gen<'_>, accumulators: &[Accumulator], values: &[String], thread_init: &mut String, epilogue: &mut String) {
    for (j, (acc, v)) in accumulators.iter().zip(values).enumerate() {
        match acc {
            Accumulator::Count => {
                let _ = writeln!(thread_init, "    unsigned long long t{j} = 0;");
                g.line(&format!("t{j} += 1ull;"));
                let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum(t{j}); if ((threadIdx.x & 31) == 0 && t{j} != 0) atomicAdd(&out_a{j}[0], t{j});");
            }
            Accumulator::Sum | Accumulator::SumCount => {
                let _ = writeln!(thread_init, "    Int128 t{j} = make_int128(0ull, 0ull); unsigned long long n{j} = 0;");
                g.line(&format!("{{ Int128 x = tessera_i128({v}); unsigned long long lo = t{j}.lo + x.lo; t{j}.hi = t{j}.hi + x.hi + (lo < t{j}.lo ? 1ull : 0ull); t{j}.lo = lo; n{j} += 1ull; }}"));
                let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum(t{j}); n{j} = tessera_warp_sum(n{j});");
                let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomic_add_i128(&out_a{j}[0], t{j});");
                if *acc == Accumulator::SumCount {
                    let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomicAdd(&out_c{j}[0], n{j});");
                }
            }
            Accumulator::Min | Accumulator::Max => {
                let (f, init, warp, cmp) = min_max(*acc);
                let _ = writeln!(thread_init, "    long long t{j} = {init};");
                g.line(&format!("if ({v} {cmp} t{j}) t{j} = {v};"));
                let _ = writeln!(epilogue, "    t{j} = {warp}(t{j}); if ((threadIdx.x & 31) == 0 && t{j} != {init}) {f}(&out_a{j}[0], t{j});");
            }
        }
    }
    let _ = writeln!(thread_init, "    bool any = false;");
    g.line("any = true;");
    let _ = writeln!(epilogue, "    if (__any_sync(0xffffffffu, any) && (threadIdx.x & 31) == 0) out_seen[0] = 1u;");
}

/// Materialization: each row reaching the sink takes the next output position with one
/// atomic per warp (`warp_append` in `compact.cuh`), then writes its values.
fn materialize(g: &mut Gen<'_>, fields: &[tessera_ir::Field], out_decls: &mut String) -> Result<SinkLayout, String> {
    out_decls.push_str("    unsigned long long* __restrict__ out_count = (unsigned long long*)outs[0];\n");
    let mut columns = Vec::new();
    let mut writes = String::new();
    for (i, f) in fields.iter().enumerate() {
        if f.nullable {
            return Err(format!("nullable column {} materialized on the GPU", f.name));
        }
        let dictionary = g.dicts.get(i).copied().flatten();
        if width_of(f.ty).is_none() || (f.ty == Type::Utf8 && dictionary.is_none()) {
            return Err(format!("column {} of type {} materialized on the GPU", f.name, f.ty));
        }
        let (v, w) = g.column(i)?;
        let _ = writeln!(out_decls, "    {}* __restrict__ out_m{i} = ({}*)outs[{}];", w.c(), w.c(), i + 1);
        let _ = write!(writes, " out_m{i}[pos] = {v};");
        columns.push(GpuColumn { width: w, dictionary });
    }
    g.line(&format!("{{ const unsigned long long pos = warp_append(out_count);{writes} }}"));
    Ok(SinkLayout::Materialize { columns })
}

/// Atomic, initial value, warp reduction and comparison of MIN or MAX.
fn min_max(acc: Accumulator) -> (&'static str, &'static str, &'static str, &'static str) {
    if acc == Accumulator::Min {
        ("atomicMin", "9223372036854775807LL", "tessera_warp_min", "<")
    } else {
        ("atomicMax", "(-9223372036854775807LL - 1)", "tessera_warp_max", ">")
    }
}

/// Statements adding the row's `values` to accumulators `{prefix}a{j}[{index}]` (and
/// `{prefix}c{j}` for AVG's counts), with atomics (shared or global alike).
fn accumulate(accumulators: &[Accumulator], values: &[String], prefix: &str, index: &str) -> String {
    let mut s = String::new();
    for (j, (acc, v)) in accumulators.iter().zip(values).enumerate() {
        let _ = match acc {
            Accumulator::Count => write!(s, "atomicAdd(&{prefix}a{j}[{index}], 1ull); "),
            Accumulator::Sum => write!(s, "atomic_add_i128(&{prefix}a{j}[{index}], tessera_i128({v})); "),
            Accumulator::SumCount => write!(s, "atomic_add_i128(&{prefix}a{j}[{index}], tessera_i128({v})); atomicAdd(&{prefix}c{j}[{index}], 1ull); "),
            Accumulator::Min | Accumulator::Max => write!(s, "{}(&{prefix}a{j}[{index}], {v}); ", min_max(*acc).0),
        };
    }
    s
}

/// Grouped aggregates: per row into the block's shared table (or the global arrays, see
/// [`GroupTable`]); at the end each block merges its table into the global arrays.
fn grouped_aggregate(g: &mut Gen<'_>, accumulators: &[Accumulator], values: &[String], grp: &str, table: GroupTable, thread_init: &mut String, epilogue: &mut String) {
    let slots = match table {
        GroupTable::Global => {
            // The seen flag is read before it is written: a store from every row would
            // queue on the few hot addresses in L2 like an atomic.
            g.line(&format!("{}if (out_seen[{grp}] == 0u) out_seen[{grp}] = 1u;", accumulate(accumulators, values, "out_", grp)));
            return;
        }
        GroupTable::Direct { slots } => slots,
    };
    // Shared arrays and their initialization.
    let mut init = String::new();
    for (j, acc) in accumulators.iter().enumerate() {
        match acc {
            Accumulator::Count => {
                let _ = writeln!(thread_init, "    __shared__ unsigned long long sh_a{j}[{slots}];");
                let _ = write!(init, "sh_a{j}[s] = 0ull; ");
            }
            Accumulator::Sum | Accumulator::SumCount => {
                let _ = writeln!(thread_init, "    __shared__ Int128 sh_a{j}[{slots}];");
                let _ = write!(init, "sh_a{j}[s] = make_int128(0ull, 0ull); ");
                if *acc == Accumulator::SumCount {
                    let _ = writeln!(thread_init, "    __shared__ unsigned long long sh_c{j}[{slots}];");
                    let _ = write!(init, "sh_c{j}[s] = 0ull; ");
                }
            }
            Accumulator::Min | Accumulator::Max => {
                let _ = writeln!(thread_init, "    __shared__ long long sh_a{j}[{slots}];");
                let _ = write!(init, "sh_a{j}[s] = {}; ", min_max(*acc).1);
            }
        }
    }
    let _ = writeln!(thread_init, "    __shared__ unsigned int sh_seen[{slots}];");
    init.push_str("sh_seen[s] = 0u;");
    let _ = writeln!(thread_init, "    for (int s = threadIdx.x; s < {slots}; s += {BLOCK_THREADS}) {{ {init} }}");
    let _ = writeln!(thread_init, "    __syncthreads();");
    // Per row.
    let sl = g.var("int", "sl", &format!("(int)({grp})"));
    let shared = accumulate(accumulators, values, "sh_", &sl);
    g.line(&format!("{shared}sh_seen[{sl}] = 1u;"));
    // Merge.
    let _ = writeln!(epilogue, "    __syncthreads();");
    let _ = writeln!(epilogue, "    for (int s = threadIdx.x; s < {slots}; s += {BLOCK_THREADS}) {{");
    let _ = writeln!(epilogue, "        const int grp = s;");
    let _ = writeln!(epilogue, "        if (sh_seen[s] == 0u) continue;");
    for (j, acc) in accumulators.iter().enumerate() {
        let _ = match acc {
            Accumulator::Count => writeln!(epilogue, "        if (sh_a{j}[s] != 0ull) atomicAdd(&out_a{j}[grp], sh_a{j}[s]);"),
            Accumulator::Sum | Accumulator::SumCount => {
                let _ = writeln!(epilogue, "        {{ const Int128 x = sh_a{j}[s]; if ((x.lo | x.hi) != 0ull) atomic_add_i128(&out_a{j}[grp], x); }}");
                if *acc == Accumulator::SumCount {
                    writeln!(epilogue, "        if (sh_c{j}[s] != 0ull) atomicAdd(&out_c{j}[grp], sh_c{j}[s]);")
                } else {
                    Ok(())
                }
            }
            Accumulator::Min | Accumulator::Max => {
                let (f, init, _, _) = min_max(*acc);
                writeln!(epilogue, "        if (sh_a{j}[s] != {init}) {f}(&out_a{j}[grp], sh_a{j}[s]);")
            }
        };
    }
    let _ = writeln!(epilogue, "        if (out_seen[grp] == 0u) out_seen[grp] = 1u;");
    let _ = writeln!(epilogue, "    }}");
}

const PRELUDE: &str = r#"#include "tessera.cuh"
using namespace tessera;

// The value of an exact integer computation, or a flagged overflow.
__device__ __forceinline__ long long tessera_checked(__int128 v, long long lo, long long hi, unsigned long long* flags) {
    if (v < (__int128)lo || v > (__int128)hi) { flags[0] = 1ull; return 0; }
    return (long long)v;
}

// Calendar year of a day number (days since 1970-01-01), proleptic Gregorian.
__device__ __forceinline__ long long tessera_year(long long days) {
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    long long m = mp < 10 ? mp + 3 : mp - 9;
    return yoe + era * 400 + (m <= 2 ? 1 : 0);
}

__device__ __forceinline__ Int128 tessera_i128(long long v) {
    return make_int128((unsigned long long)v, v < 0 ? ~0ull : 0ull);
}

// Sum of a 128-bit value over the warp (lane 0 gets the total).
__device__ __forceinline__ Int128 tessera_warp_sum(Int128 v) {
    for (int d = 16; d > 0; d /= 2) {
        unsigned long long lo = __shfl_down_sync(0xffffffffu, v.lo, d);
        unsigned long long hi = __shfl_down_sync(0xffffffffu, v.hi, d);
        unsigned long long nlo = v.lo + lo;
        v.hi = v.hi + hi + (nlo < v.lo ? 1ull : 0ull);
        v.lo = nlo;
    }
    return v;
}

__device__ __forceinline__ unsigned long long tessera_warp_sum(unsigned long long v) {
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__device__ __forceinline__ long long tessera_warp_min(long long v) {
    for (int d = 16; d > 0; d /= 2) { long long o = __shfl_down_sync(0xffffffffu, v, d); v = o < v ? o : v; }
    return v;
}

__device__ __forceinline__ long long tessera_warp_max(long long v) {
    for (int d = 16; d > 0; d /= 2) { long long o = __shfl_down_sync(0xffffffffu, v, d); v = o > v ? o : v; }
    return v;
}
"#;

/// Whether generated statements name the row index `r` (as an identifier of its own).
fn mentions_row(body: &str) -> bool {
    let b = body.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    (0..b.len()).any(|k| b[k] == b'r' && (k == 0 || !ident(b[k - 1])) && (k + 1 == b.len() || !ident(b[k + 1])))
}

/// Generates the kernel of `pipeline`, whose source columns live on the GPU as `cols`
/// and whose probes read `tables` (per probe, in operator order), with literals inlined
/// and the default tile.
pub fn generate(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable]) -> Result<Kernel, String> {
    generate_with(pipeline, cols, tables, KernelOptions { literals: Literals::Inline, ..KernelOptions::default() })
}

/// [`generate`] with a choice of how literals reach the kernel and of the tile shape.
pub fn generate_with(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable], options: KernelOptions) -> Result<Kernel, String> {
    let probes = pipeline.operators.iter().filter(|o| matches!(o, Operator::Probe(_))).count();
    let items = options.items_per_thread.unwrap_or(if probes <= 1 { ITEMS_PER_THREAD } else { ITEMS_PER_THREAD_MANY_PROBES });
    if !(1..=MAX_ITEMS_PER_THREAD).contains(&items) {
        return Err(format!("{items} items per thread (1 to {MAX_ITEMS_PER_THREAD})"));
    }
    if let Some(t) = tables.iter().find(|t| t.slots > MAX_TABLE_SLOTS) {
        return Err(format!("a probed table of {} slots (at most {MAX_TABLE_SLOTS} on the GPU)", t.slots));
    }
    let fields0 = pipeline.source_fields().to_vec();
    if fields0.len() != cols.len() {
        return Err("source columns and GPU columns differ".into());
    }
    if fields0.iter().any(|f| f.nullable) {
        return Err("nullable columns are not on the GPU yet".into());
    }
    let mut g = Gen {
        cols,
        layout: (0..cols.len()).map(Val::Source).collect(),
        dicts: cols.iter().map(|c| c.dictionary).collect(),
        loaded: Vec::new(),
        params: (options.literals == Literals::Parameters).then(Vec::new),
        consts: Vec::new(),
        decls: String::new(),
        stages: Vec::new(),
        body: String::new(),
        branch: false,
        tmp: 0,
    };
    let mut fields = fields0;
    let mut probe_no = 0usize;
    let mut tab_index = 0usize;
    let mut tab_decls = String::new();
    let hoisted = hoistable_probes(pipeline, tables);
    let mut hoisted_slots = HashMap::new();
    for op in &pipeline.operators {
        if matches!(op, Operator::Probe(_)) && probe_no == 0 {
            hoisted_slots = hoist_probes(&mut g, &hoisted, tables)?;
        }
        match op {
            Operator::Filter(p) => {
                // One test per conjunct, so the columns of later conjuncts are loaded
                // only for the items earlier ones let through.
                for c in p.conjuncts() {
                    let c = g.expr(c, &fields)?;
                    g.reject_if(&format!("!({c})"));
                }
            }
            Operator::Project { exprs, fields: out } => {
                let mut vals = Vec::new();
                let mut dicts = Vec::new();
                for (e, f) in exprs.iter().zip(out) {
                    dicts.push(match e {
                        Expr::Column { index, .. } => g.dicts.get(*index).copied().flatten(),
                        _ => None,
                    });
                    match e {
                        Expr::Column { index, .. } => vals.push(g.layout.get(*index).cloned().ok_or("bad column")?),
                        e => {
                            let w = width_of(f.ty).filter(|_| f.ty != Type::Utf8).ok_or_else(|| format!("projection to {} on the GPU", f.ty))?;
                            let v = g.expr(e, &fields)?;
                            let n = g.var(w.c(), "p", &format!("({})({v})", w.c()));
                            vals.push(Val::Local(n, w));
                        }
                    }
                }
                g.layout = vals;
                g.dicts = dicts;
                fields = out.clone();
            }
            Operator::Probe(p) => {
                let t = tables.get(probe_no).ok_or("probe without a GPU table")?;
                if p.residual.is_some() || p.null_aware || p.nulls_equal || p.keys.len() != 1 {
                    return Err("probe with residual, NULL semantics or several keys on the GPU".into());
                }
                // tabs: the row array (read by no probe: the bitmap answers membership), the
                // payload columns, the membership bitmap.
                let bits_var = format!("h{probe_no}_bits");
                let _ = writeln!(tab_decls, "    const uint32_t* __restrict__ {bits_var} = (const uint32_t*)tabs[{}];", tab_index + 1 + t.payload.len());
                tab_index += 1;
                // A hoisted probe's membership test has run already; only its payload is
                // left to read.
                let (s, found) = match hoisted_slots.get(&probe_no) {
                    Some(s) => (s.clone(), None),
                    None => {
                        let k = g.expr(&p.keys[0], &fields)?;
                        let (s, found) = lookup(&mut g, t, &bits_var, &k);
                        (s, Some(found))
                    }
                };
                match (p.kind, found) {
                    (JoinKind::Inner | JoinKind::Semi, Some(found)) => g.reject_if(&format!("!{found}")),
                    (JoinKind::Anti, Some(found)) => g.reject_if(&found),
                    (JoinKind::Inner | JoinKind::Semi | JoinKind::Anti, None) => {}
                    (other, _) => return Err(format!("{other:?} probe on the GPU")),
                }
                if p.kind == JoinKind::Inner {
                    for (j, pc) in t.payload.iter().enumerate() {
                        let arr = format!("h{probe_no}_p{j}");
                        let _ = writeln!(tab_decls, "    const {}* __restrict__ {arr} = (const {}*)tabs[{tab_index}];", pc.width.c(), pc.width.c());
                        tab_index += 1;
                        let v = g.var(pc.width.c(), "b", &format!("{arr}[{s}]"));
                        g.layout.push(Val::Local(v, pc.width));
                        g.dicts.push(pc.dictionary);
                    }
                    g.stage();
                } else {
                    tab_index += t.payload.len();
                }
                tab_index += 1;
                fields = op.output_fields(&fields);
                probe_no += 1;
            }
        }
    }
    let mut out_decls = String::new();
    let mut epilogue = String::new();
    let mut thread_init = String::new();
    let sink = match &pipeline.sink {
        Sink::HashBuild(b) => {
            let (BuildStrategy::Perfect { min, max }, [key]) = (&b.strategy, b.keys.as_slice()) else {
                return Err("only perfect-hash builds on one key run on the GPU".into());
            };
            if b.nulls_equal {
                return Err("NULL-equal build on the GPU".into());
            }
            let slots = (max - min + 1) as usize;
            let k = g.expr(key, &fields)?;
            out_decls.push_str("    int32_t* __restrict__ out_rows = (int32_t*)outs[0];\n");
            let mut payload = Vec::new();
            let s = g.var("long long", "s", &format!("(long long)({k}) - {min}LL"));
            g.reject_flagged(&format!("{s} < 0 || {s} >= {slots}LL"), 1);
            g.reject_flagged(&format!("atomicCAS((int*)&out_rows[{s}], 0, (int)(r + 1)) != 0"), 2);
            let _ = writeln!(out_decls, "    uint32_t* __restrict__ out_bits = (uint32_t*)outs[{}];", b.payload.len() + 1);
            g.line(&format!("atomicOr(&out_bits[{s} >> 5], 1u << ({s} & 31));"));
            for (j, &col) in b.payload.iter().enumerate() {
                let (v, w) = g.column(col)?;
                let _ = writeln!(out_decls, "    {}* __restrict__ out_p{j} = ({}*)outs[{}];", w.c(), w.c(), j + 1);
                g.line(&format!("out_p{j}[{s}] = {v};"));
                let dictionary = g.dicts.get(col).copied().flatten();
                payload.push(GpuColumn { width: w, dictionary });
            }
            SinkLayout::Build { table: GpuTable { min: *min, slots, payload, pass_permille: pass_permille(b.estimated_rows, pipeline) } }
        }
        Sink::Aggregate(a) => {
            // Group number.
            let mut keys = Vec::new();
            let mut grp = None;
            let groups = match &a.strategy {
                GroupStrategy::Scalar => 1usize,
                GroupStrategy::Perfect { domains } => {
                    let mut stride = 1usize;
                    let mut terms = Vec::new();
                    for (k, d) in a.group_by.iter().zip(domains) {
                        let Expr::Column { index, .. } = k else { return Err("computed group key".into()) };
                        let (v, _) = g.column(*index)?;
                        let (slots, min, dictionary) = match d {
                            KeyDomain::Range { min, max } => ((max - min + 2) as usize, *min, None),
                            KeyDomain::Dictionary { .. } => {
                                let dict = g
                                    .dicts
                                    .get(*index)
                                    .copied()
                                    .flatten()
                                    .ok_or("dictionary group key without a known dictionary")?;
                                (dict.size + 1, 0, Some(dict))
                            }
                            KeyDomain::Boolean => return Err("boolean group key on the GPU".into()),
                        };
                        terms.push(format!("((long long)({v}) - {min}LL + 1) * {stride}LL"));
                        keys.push(KeyLayout { slots, min, dictionary });
                        stride = stride.checked_mul(slots).ok_or("group domain too large")?;
                    }
                    if stride > MAX_GROUP_SLOTS {
                        return Err(format!("{stride} group slots on the GPU (at most {MAX_GROUP_SLOTS})"));
                    }
                    grp = Some(g.var("int", "grp", &format!("(int)({})", terms.join(" + "))));
                    stride
                }
                GroupStrategy::Hash { .. } => return Err("hash-table aggregation on the GPU (next: global hash table)".into()),
            };
            let scalar = matches!(a.strategy, GroupStrategy::Scalar);
            let mut accumulators = Vec::new();
            for agg in &a.aggregates {
                if agg.distinct {
                    return Err("DISTINCT aggregate on the GPU".into());
                }
                accumulators.push(match agg.func {
                    AggFunc::CountStar | AggFunc::Count => Accumulator::Count,
                    AggFunc::Sum => Accumulator::Sum,
                    AggFunc::Avg => Accumulator::SumCount,
                    AggFunc::Min => Accumulator::Min,
                    AggFunc::Max => Accumulator::Max,
                });
            }
            let privatized = if scalar { GroupTable::Global } else { group_table(groups, &accumulators) };
            // Declarations of the global accumulators.
            let mut out_i = 0usize;
            for (j, acc) in accumulators.iter().enumerate() {
                match acc {
                    Accumulator::Count => {
                        let _ = writeln!(out_decls, "    unsigned long long* __restrict__ out_a{j} = (unsigned long long*)outs[{out_i}];");
                    }
                    Accumulator::Sum | Accumulator::SumCount => {
                        let _ = writeln!(out_decls, "    Int128* __restrict__ out_a{j} = (Int128*)outs[{out_i}];");
                        if *acc == Accumulator::SumCount {
                            out_i += 1;
                            let _ = writeln!(out_decls, "    unsigned long long* __restrict__ out_c{j} = (unsigned long long*)outs[{out_i}];");
                        }
                    }
                    Accumulator::Min | Accumulator::Max => {
                        let _ = writeln!(out_decls, "    long long* __restrict__ out_a{j} = (long long*)outs[{out_i}];");
                    }
                }
                out_i += 1;
            }
            let _ = writeln!(out_decls, "    uint32_t* __restrict__ out_seen = (uint32_t*)outs[{out_i}];");
            // The values, computed once per row.
            let mut values = Vec::new();
            for (j, agg) in a.aggregates.iter().enumerate() {
                let value = match &agg.arg {
                    Some(e) => {
                        let at = e.ty(&fields);
                        if width_of(at).is_none() || at == Type::Utf8 {
                            return Err(format!("aggregate over {at} on the GPU"));
                        }
                        g.expr(e, &fields)?
                    }
                    None => "1LL".into(),
                };
                values.push(g.named_var("long long", &format!("v{j}"), &format!("(long long)({value})")));
            }
            match grp {
                None => scalar_aggregate(&mut g, &accumulators, &values, &mut thread_init, &mut epilogue),
                Some(grp) => grouped_aggregate(&mut g, &accumulators, &values, &grp, privatized, &mut thread_init, &mut epilogue),
            }
            SinkLayout::Aggregate { groups, accumulators, keys, table: privatized }
        }
        Sink::Sort(_) => return Err("sort on the GPU (next: radix sort)".into()),
        Sink::Materialize { skip, fetch, .. } => {
            if *skip > 0 || fetch.is_some() {
                // Blocks append in whatever order they finish; the CPU keeps input order.
                return Err("LIMIT/OFFSET without ORDER BY on the GPU (which rows is up to the order)".into());
            }
            materialize(&mut g, &fields, &mut out_decls)?
        }
    };
    let mut col_decls = String::new();
    for (i, c) in cols.iter().enumerate() {
        let _ = writeln!(col_decls, "    const {}* __restrict__ col{i} = (const {}*)cols[{i}];", c.width.c(), c.width.c());
    }
    let mut src = String::new();
    src.push_str(PRELUDE);
    let _ = writeln!(src, "\n// Pipeline {}: generated by tessera-cuda.", pipeline.id);
    let _ = writeln!(
        src,
        "extern \"C\" __global__ void __launch_bounds__({BLOCK_THREADS}) {KERNEL_NAME}(const void* const* cols, long long rows, const void* const* tabs, void* const* outs, unsigned long long* flags, const long long* __restrict__ params) {{"
    );
    let tile_items = BLOCK_THREADS * items;
    let _ = writeln!(src, "    constexpr int ITEMS = {items};");
    let mut params = g.params.take().unwrap_or_default();
    for k in 0..params.len() {
        let _ = writeln!(src, "    const long long lit{k} = params[{k}];");
    }
    if !g.consts.is_empty() {
        let _ = writeln!(src, "    const long long* __restrict__ consts = params + {};", params.len());
        params.extend_from_slice(&g.consts);
    }
    src.push_str(&col_decls);
    src.push_str(&tab_decls);
    src.push_str(&out_decls);
    src.push_str(&thread_init);
    // Grid-stride over tiles: the launch sizes the grid to one wave of resident blocks,
    // so per-block setup and merges happen once per block, not once per tile.
    // Each thread holds ITEMS rows of the tile (striped: item i of thread t is row
    // tile + t + i * BLOCK_THREADS, so a warp's loads are coalesced) with a selection
    // flag each; every stage is one unrolled loop over the items still selected.
    let _ = writeln!(src, "    for (long long tile = (long long)blockIdx.x * {tile_items}LL; tile < rows; tile += (long long)gridDim.x * {tile_items}LL) {{");
    let _ = writeln!(src, "        bool sel[ITEMS];");
    for d in g.decls.lines() {
        let _ = writeln!(src, "        {d}");
    }
    let _ = writeln!(src, "        #pragma unroll");
    let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) sel[i] = tile + threadIdx.x + (long long)i * {BLOCK_THREADS} < rows;");
    g.stage();
    for body in &g.stages {
        let _ = writeln!(src, "        #pragma unroll");
        let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) {{");
        let _ = writeln!(src, "            if (!sel[i]) continue;");
        if mentions_row(body) {
            let _ = writeln!(src, "            const long long r = tile + threadIdx.x + (long long)i * {BLOCK_THREADS};");
        }
        for l in body.lines() {
            let _ = writeln!(src, "            {l}");
        }
        let _ = writeln!(src, "        }}");
    }
    src.push_str("    }\n");
    src.push_str(&epilogue);
    src.push_str("}\n");
    Ok(Kernel { source: src, params, sink, items_per_thread: items })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tessera_ir::{AggExpr, Aggregate, Device, Field, Scan, Source};

    fn int_col() -> GpuColumn {
        GpuColumn { width: Width::I32, dictionary: None }
    }

    /// `SELECT k, sum(v) FROM t WHERE v < 10 GROUP BY k` with `k` in `[0, max]`.
    fn grouped(max: i64, func: AggFunc) -> Pipeline {
        let fields = vec![Field::new("k", Type::Int32, false), Field::new("v", Type::Int64, false)];
        let ty = Type::Int64;
        Pipeline {
            id: 1,
            source: Source::Scan(Scan {
                table: "t".into(),
                version: 1,
                columns: vec![0, 1],
                fields: fields.clone(),
                dictionary: vec![false, false],
                rows: 1000,
            }),
            operators: vec![Operator::Filter(Expr::Cmp {
                op: CmpOp::Lt,
                left: Box::new(Expr::col(1, "v")),
                right: Box::new(Expr::lit(Scalar::Int(10), Type::Int64)),
            })],
            sink: Sink::Aggregate(Aggregate {
                result: 0,
                group_by: vec![Expr::col(0, "k")],
                aggregates: vec![AggExpr { func, arg: Some(Expr::col(1, "v")), distinct: false, ty, name: "a".into() }],
                strategy: GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max }] },
                fields: vec![Field::new("k", Type::Int32, false), Field::new("a", ty, true)],
            }),
            device: Device::Gpu,
            device_reason: None,
        }
    }

    fn cols() -> Vec<GpuColumn> {
        vec![int_col(), GpuColumn { width: Width::I64, dictionary: None }]
    }

    #[test]
    fn group_table_choice_follows_the_shared_budget() {
        let sum = [Accumulator::Sum];
        // 20 bytes a slot: 819 slots fit in 16 KiB directly.
        assert_eq!(group_table(800, &sum), GroupTable::Direct { slots: 800 });
        // SSB q2.1's 8 008-slot domain: global atomics (measured faster than a shared
        // hash table).
        assert_eq!(group_table(8008, &sum), GroupTable::Global);
        // Many wide accumulators leave too few slots to be worth it.
        let wide = [Accumulator::SumCount; 8];
        assert_eq!(group_table(100_000, &wide), GroupTable::Global);
    }

    #[test]
    fn long_in_lists_test_a_bitmap_passed_with_the_launch() {
        // `v IN (0, 3, 6, …, 297)`: 100 values, too many to compare one by one.
        let with = |step: i64, literals| {
            let mut p = grouped(9, AggFunc::Sum);
            let list = (0..100).map(|k| Scalar::Int(k * step)).collect();
            p.operators = vec![Operator::Filter(Expr::InList { expr: Box::new(Expr::col(1, "v")), list, negated: false })];
            generate_with(&p, &cols(), &[], KernelOptions { literals, ..KernelOptions::default() }).unwrap()
        };
        let k = with(3, Literals::Parameters);
        assert!(k.source.contains("const long long* __restrict__ consts = params + 0;"), "{}", k.source);
        assert!(!k.source.contains("== 297"), "{}", k.source);
        // consts: the first value, the bitmap's length in bits, then its words.
        let bits = 298usize;
        assert_eq!(k.params.len(), 2 + bits.div_ceil(64));
        assert_eq!((k.params[0], k.params[1]), (0, bits as i64));
        let words: Vec<u64> = k.params[2..].iter().map(|&w| w as u64).collect();
        for v in 0..bits {
            assert_eq!(words[v / 64] >> (v % 64) & 1 == 1, v % 3 == 0, "bit {v}");
        }
        // Another list of the same shape shares the kernel; inlined literals still pass the
        // bitmap as a parameter.
        assert_eq!(with(2, Literals::Parameters).source, k.source);
        let inline = with(3, Literals::Inline);
        assert_eq!(inline.params, k.params);
        for k in [&k, &inline] {
            if crate::test_support::nvrtc_or_skip("long IN list kernel compiles") {
                if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                    panic!("{e}\n{}", k.source);
                }
            }
        }
        // Short lists keep their compares.
        let mut p = grouped(9, AggFunc::Sum);
        p.operators = vec![Operator::Filter(Expr::InList { expr: Box::new(Expr::col(1, "v")), list: vec![Scalar::Int(1), Scalar::Int(5)], negated: false })];
        let short = generate(&p, &cols(), &[]).unwrap();
        assert!(short.params.is_empty() && short.source.contains("== 5LL"), "{}", short.source);
    }

    #[test]
    fn literals_as_parameters_share_one_kernel_across_constants() {
        let with = |v: i64, literals| {
            let mut p = grouped(9, AggFunc::Sum);
            p.operators = vec![Operator::Filter(Expr::Cmp {
                op: CmpOp::Lt,
                left: Box::new(Expr::col(1, "v")),
                right: Box::new(Expr::lit(Scalar::Int(v), Type::Int64)),
            })];
            generate_with(&p, &cols(), &[], KernelOptions { literals, ..KernelOptions::default() }).unwrap()
        };
        let (a, b) = (with(10, Literals::Parameters), with(77, Literals::Parameters));
        assert_eq!(a.source, b.source);
        assert_eq!((a.params.clone(), b.params.clone()), (vec![10], vec![77]));
        assert!(a.source.contains("const long long lit0 = params[0];"), "{}", a.source);
        assert!(a.source.contains("< (long long)(lit0)"), "{}", a.source);
        // Inlined, the constant is in the source and there are no parameters.
        let (c, d) = (with(10, Literals::Inline), with(77, Literals::Inline));
        assert_ne!(c.source, d.source);
        assert!(c.params.is_empty() && c.source.contains("(long long)(10LL)"), "{}", c.source);
    }

    #[test]
    fn materialization_compacts_with_one_atomic_per_warp() {
        let mut p = grouped(9, AggFunc::Sum);
        p.sink = Sink::Materialize { result: 0, skip: 0, fetch: None };
        let k = generate(&p, &cols(), &[]).unwrap();
        let SinkLayout::Materialize { columns } = &k.sink else { panic!("not a materialization") };
        assert_eq!(columns.iter().map(|c| c.width).collect::<Vec<_>>(), vec![Width::I32, Width::I64]);
        assert!(k.source.contains("const unsigned long long pos = warp_append(out_count);"), "{}", k.source);
        assert!(k.source.contains("out_m0[pos] = c0[i]; out_m1[pos] = c1[i];"), "{}", k.source);
        // LIMIT without ORDER BY keeps input order: the CPU's job.
        p.sink = Sink::Materialize { result: 0, skip: 0, fetch: Some(5) };
        assert!(generate(&p, &cols(), &[]).is_err());
    }

    #[test]
    fn kernels_walk_tiles_grid_stride() {
        let k = generate(&grouped(9, AggFunc::Sum), &cols(), &[]).unwrap();
        assert!(k.source.contains("tile += (long long)gridDim.x * 512LL"), "{}", k.source);
    }

    #[test]
    fn small_domains_aggregate_in_a_direct_shared_table() {
        let k = generate(&grouped(9, AggFunc::Sum), &cols(), &[]).unwrap();
        let SinkLayout::Aggregate { groups, table, .. } = &k.sink else { panic!("not an aggregate") };
        // Slot 0 is NULL's, then 0..=9.
        assert_eq!(*groups, 11);
        assert_eq!(*table, GroupTable::Direct { slots: 11 });
        assert!(k.source.contains("__shared__ Int128 sh_a0[11];"), "{}", k.source);
        assert!(k.source.contains("atomic_add_i128(&sh_a0[sl2[i]], tessera_i128(v0[i]));"), "{}", k.source);
        // Merged once per block, not per row.
        assert!(k.source.contains("atomic_add_i128(&out_a0[grp], x);"), "{}", k.source);
    }

    #[test]
    fn large_domains_aggregate_with_global_atomics() {
        let k = generate(&grouped(99_999, AggFunc::Min), &cols(), &[]).unwrap();
        let SinkLayout::Aggregate { table, .. } = &k.sink else { panic!("not an aggregate") };
        assert_eq!(*table, GroupTable::Global);
        assert!(!k.source.contains("__shared__"), "{}", k.source);
        assert!(k.source.contains("atomicMin(&out_a0[grp1[i]], v0[i]); if (out_seen[grp1[i]] == 0u) out_seen[grp1[i]] = 1u;"), "{}", k.source);
    }

    /// A star join's probe pipeline: `SELECT d.year, sum(f.v) FROM f JOIN d ON f.dk = d.k
    /// JOIN s ON f.sk = s.k GROUP BY d.year` over fact columns (dk, sk, v), with table 1
    /// (s) more selective than table 0 (d).
    fn star() -> (Pipeline, Vec<GpuColumn>, Vec<GpuTable>) {
        let fields = vec![Field::new("dk", Type::Int32, false), Field::new("sk", Type::Int32, false), Field::new("v", Type::Int64, false)];
        let probe = |table: usize, key: usize, build_fields: Vec<Field>| {
            Operator::Probe(tessera_ir::Probe {
                table,
                kind: JoinKind::Inner,
                keys: vec![Expr::col(key, "k")],
                build_fields,
                residual: None,
                nulls_equal: false,
                null_aware: false,
            })
        };
        let p = Pipeline {
            id: 3,
            source: Source::Scan(Scan {
                table: "f".into(),
                version: 1,
                columns: vec![0, 1, 2],
                fields: fields.clone(),
                dictionary: vec![false; 3],
                rows: 1000,
            }),
            operators: vec![probe(0, 0, vec![Field::new("year", Type::Int32, false)]), probe(1, 1, vec![])],
            sink: Sink::Aggregate(Aggregate {
                result: 0,
                group_by: vec![Expr::col(3, "year")],
                aggregates: vec![AggExpr { func: AggFunc::Sum, arg: Some(Expr::col(2, "v")), distinct: false, ty: Type::Int64, name: "a".into() }],
                strategy: GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 1992, max: 1998 }] },
                fields: vec![Field::new("year", Type::Int32, false), Field::new("a", Type::Int64, true)],
            }),
            device: Device::Gpu,
            device_reason: None,
        };
        let cols = vec![int_col(), int_col(), GpuColumn { width: Width::I64, dictionary: None }];
        let tables = vec![
            GpuTable { min: 0, slots: 3000, payload: vec![int_col()], pass_permille: 1000 },
            GpuTable { min: 0, slots: 100, payload: vec![], pass_permille: 200 },
        ];
        (p, cols, tables)
    }

    /// The loop over items (a stage) in which `needle` first appears.
    fn stage_of(source: &str, needle: &str) -> usize {
        let at = source.find(needle).unwrap_or_else(|| panic!("{needle} not in {source}"));
        source[..at].matches("for (int i = 0; i < ITEMS; ++i) {").count()
    }

    #[test]
    fn loads_are_issued_for_all_items_before_any_item_uses_them() {
        let (p, cols, tables) = star();
        let k = generate(&p, &cols, &tables).unwrap();
        let src = &k.source;
        // The more selective probe (table 1, on column 1) is tested first; its key is
        // loaded in a stage of its own, the slot looked up in the next, tested after.
        let load_sk = stage_of(src, "c1[i] = col1[r];");
        let lookup_sk = stage_of(src, "h1_bits[s");
        let test_sk = stage_of(src, "if (!f");
        assert!(load_sk < lookup_sk && lookup_sk < test_sk, "{src}");
        // The other key is loaded only after that test, for the items it kept.
        let load_dk = stage_of(src, "c0[i] = col0[r];");
        assert!(load_dk >= test_sk, "{src}");
        // Each table's membership bitmap is read once: the probes reuse the hoisted tests'
        // slots. Probes never read the row arrays.
        assert_eq!(src.matches("h0_bits[").count(), 1, "{src}");
        assert_eq!(src.matches("h1_bits[").count(), 1, "{src}");
        assert!(!src.contains("h0_rows") && !src.contains("h1_rows"), "{src}");
        // The tables' arrays: rows, payload, bits for table 0; rows, bits for table 1.
        assert!(src.contains("h0_p0 = (const int32_t*)tabs[1]") && src.contains("h0_bits = (const uint32_t*)tabs[2]"), "{src}");
        assert!(src.contains("h1_bits = (const uint32_t*)tabs[4]"), "{src}");
        // The payload and the value are loaded before the stage that aggregates them.
        assert!(stage_of(src, "h0_p0[") < stage_of(src, "atomic_add_i128"), "{src}");
        assert!(stage_of(src, "c2[i] = col2[r];") < stage_of(src, "atomic_add_i128"), "{src}");
        // Items dropped in a stage take part in no later one.
        assert!(src.contains("{ sel[i] = false; continue; }"), "{src}");
    }

    #[test]
    fn builds_write_rows_payload_and_a_membership_bitmap() {
        let mut p = grouped(9, AggFunc::Sum);
        p.operators.clear();
        p.sink = Sink::HashBuild(tessera_ir::HashBuild {
            table: 0,
            keys: vec![Expr::col(0, "k")],
            payload: vec![1],
            strategy: BuildStrategy::Perfect { min: 5, max: 104 },
            nulls_equal: false,
            estimated_rows: 100,
        });
        let k = generate(&p, &cols(), &[]).unwrap();
        let SinkLayout::Build { table } = &k.sink else { panic!("not a build") };
        assert_eq!((table.min, table.slots, table.payload.len()), (5, 100, 1));
        // outs: rows, the payload column, the bitmap; a bit is set for each row stored.
        assert!(k.source.contains("out_p0 = (int64_t*)outs[1]") && k.source.contains("out_bits = (uint32_t*)outs[2]"), "{}", k.source);
        assert!(k.source.contains("atomicOr(&out_bits[s1[i] >> 5], 1u << (s1[i] & 31));"), "{}", k.source);
        // Out-of-range keys and duplicates raise their flags.
        assert!(k.source.contains("flags[1] = 1ull") && k.source.contains("flags[2] = 1ull"), "{}", k.source);
    }

    #[test]
    fn tile_shape_follows_the_options() {
        let (p, cols, tables) = star();
        let k = generate_with(&p, &cols, &tables, KernelOptions { literals: Literals::Parameters, items_per_thread: Some(8) }).unwrap();
        assert_eq!(k.items_per_thread, 8);
        assert!(k.source.contains("constexpr int ITEMS = 8;") && k.source.contains("gridDim.x * 1024LL"), "{}", k.source);
        assert!(generate_with(&p, &cols, &tables, KernelOptions { literals: Literals::Parameters, items_per_thread: Some(0) }).is_err());
        // By default: two probes, two items; no probe, four.
        assert_eq!(generate(&p, &cols, &tables).unwrap().items_per_thread, ITEMS_PER_THREAD_MANY_PROBES);
        assert_eq!(generate(&grouped(9, AggFunc::Sum), &self::cols(), &[]).unwrap().items_per_thread, ITEMS_PER_THREAD);
    }

    #[test]
    fn star_join_kernels_compile_with_nvrtc() {
        if !crate::test_support::nvrtc_or_skip("star join kernels compile with NVRTC") {
            return;
        }
        let (p, cols, tables) = star();
        for items in [1, 4, 8, 16] {
            for literals in [Literals::Inline, Literals::Parameters] {
                let k = generate_with(&p, &cols, &tables, KernelOptions { literals, items_per_thread: Some(items) }).unwrap();
                if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                    panic!("{items} items, {literals:?}: {e}\n{}", k.source);
                }
            }
        }
    }

    /// The whole generated source of one pipeline, compared with a checked-in copy so
    /// that every change to generated code shows up in review. Regenerate with
    /// `TESSERA_BLESS=1 cargo test -p tessera-cuda golden`.
    #[test]
    fn golden_grouped_sum_kernel() {
        let k = generate(&grouped(9, AggFunc::Sum), &cols(), &[]).unwrap();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/grouped_sum.cu");
        if std::env::var_os("TESSERA_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &k.source).unwrap();
        }
        let want = std::fs::read_to_string(&path).unwrap();
        assert_eq!(k.source, want, "generated source changed; rerun with TESSERA_BLESS=1 and review the diff");
    }
}
