//! Code generation: one IR pipeline → one fused CUDA kernel.
//!
//! The kernel reads like a hand-written SSB query (Crystal): each thread block takes a
//! tile of `BLOCK_THREADS × ITEMS_PER_THREAD` rows; each thread walks its items in a
//! striped (coalesced) order and, per row, loads the columns a predicate needs, applies
//! it, probes the dense hash tables of earlier build kernels, computes expressions and
//! feeds the sink — columns needed later are loaded only for rows still alive (the
//! seed's `BlockLoadSel`), and nothing between operators touches global memory.
//! Scalar aggregates are reduced per warp (shuffles) with one atomic per warp; grouped
//! aggregates use atomics on a perfect-hash group array; builds write a dense array.
//!
//! Literals are inlined into the source (fastest code: the compiler folds them into
//! compares), so each distinct query text compiles once and is then found in the kernel
//! cache; dictionary predicates arrive as code lists already (see [`GpuColumn`]).
//!
//! What this generator supports is checked by [`generate`], which returns `Err(reason)`
//! for anything else; that pipeline then runs on the CPU backend.
//!
//! Kernel ABI (all generated kernels):
//! `extern "C" __global__ void tessera_pipeline(const void* const* cols, long long rows,
//! const void* const* tabs, void* const* outs, unsigned long long* flags)`
//! - `cols[i]`: source column `i` as `int32_t` or `int64_t` (see [`Width`]);
//! - `tabs`: per probe, in operator order: `int32_t* rows` (build row + 1, 0 = empty),
//!   then one array per payload column;
//! - `outs`: the sink's arrays ([`SinkLayout`]);
//! - `flags[0]`: arithmetic overflow, `flags[1]`: a build key outside its range,
//!   `flags[2]`: a duplicate build key.

use std::fmt::Write;

use tessera_ir::{AggFunc, ArithOp, BuildStrategy, CmpOp, Expr, GroupStrategy, JoinKind, KeyDomain, Operator, Pipeline, Scalar, Sink, Type};

/// Threads per block.
pub const BLOCK_THREADS: u32 = 128;
/// Rows per thread per tile (Crystal's 128 × 4 tile).
pub const ITEMS_PER_THREAD: u32 = 4;
/// Rows per tile.
pub const TILE_ITEMS: u32 = BLOCK_THREADS * ITEMS_PER_THREAD;

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
}

/// The arrays a sink writes, in `outs` order.
#[derive(Debug, Clone, PartialEq)]
pub enum SinkLayout {
    /// `rows` then one array per payload column, `slots` long.
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
    },
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
    /// What the sink's `outs` hold.
    pub sink: SinkLayout,
}

/// The kernel's name in every generated module.
pub const KERNEL_NAME: &str = "tessera_pipeline";

struct Gen<'a> {
    cols: &'a [GpuColumn],
    /// Per current layout column: a C expression for its value and whether it is loaded.
    layout: Vec<Val>,
    /// Per current layout column: its dictionary size when it holds codes.
    dicts: Vec<Option<DictRef>>,
    body: String,
    indent: usize,
    tmp: usize,
}

#[derive(Clone)]
enum Val {
    /// A source column not yet loaded: index into `cols`.
    Source(usize),
    /// A local variable with its width.
    Local(String, Width),
}

impl<'a> Gen<'a> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        self.body.push_str(s);
        self.body.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.tmp += 1;
        format!("{prefix}{}", self.tmp)
    }

    /// The variable holding layout column `i`, loading it on first use.
    fn column(&mut self, i: usize) -> Result<(String, Width), String> {
        match self.layout.get(i).cloned() {
            Some(Val::Local(v, w)) => Ok((v, w)),
            Some(Val::Source(c)) => {
                let w = self.cols[c].width;
                let v = format!("c{c}");
                self.line(&format!("const {} {v} = col{c}[r];", w.c()));
                self.layout[i] = Val::Local(v.clone(), w);
                Ok((v, w))
            }
            None => Err(format!("column #{i} out of range")),
        }
    }

    /// A C expression of type `long long` (integers) or `bool` (predicates).
    fn expr(&mut self, e: &Expr, input: &[tessera_ir::Field]) -> Result<String, String> {
        Ok(match e {
            Expr::Column { index, .. } => self.column(*index)?.0,
            Expr::Literal { value, ty } => match value {
                Scalar::Int(v) => format!("{v}LL"),
                Scalar::Date32(d) => format!("{d}LL"),
                Scalar::Decimal(d) if width_of(*ty) == Some(Width::I64) => format!("{d}LL"),
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
                    format!("((long long)({x}) >= {}LL && (long long)({x}) <= {}LL)", vals[0], vals[vals.len() - 1])
                } else {
                    let t = self.fresh("in");
                    self.line(&format!("const long long {t} = {x};"));
                    let alts: Vec<String> = vals.iter().map(|v| format!("{t} == {v}LL")).collect();
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
                let t = self.fresh("a");
                self.line(&format!("const long long {t} = tessera_checked({value}, {lo}LL, {hi}LL, flags);"));
                t
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
                        let n = self.fresh("k");
                        self.line(&format!("const long long {n} = tessera_checked((__int128)({v}), {lo}LL, {hi}LL, flags);"));
                        n
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
                        let n = self.fresh("k");
                        self.line(&format!(
                            "const long long {n} = tessera_checked((__int128)({v}) * {}, {lo}LL, {hi}LL, flags);",
                            10i128.pow((scale - fs) as u32)
                        ));
                        n
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

    /// A generator for a branch: statements it needs become a lambda.
    fn sub(&self) -> Gen<'a> {
        Gen { cols: self.cols, layout: self.layout.clone(), dicts: self.dicts.clone(), body: String::new(), indent: 0, tmp: self.tmp + 1000 }
    }

    fn inline_sub(&mut self, sub: Gen<'a>, value: &str) -> String {
        self.tmp = sub.tmp;
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

/// Generates the kernel of `pipeline`, whose source columns live on the GPU as `cols`
/// and whose probes read `tables` (per probe, in operator order).
pub fn generate(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable]) -> Result<Kernel, String> {
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
        body: String::new(),
        indent: 2,
        tmp: 0,
    };
    let mut fields = fields0;
    let mut probe_no = 0usize;
    let mut tab_index = 0usize;
    let mut tab_decls = String::new();
    for op in &pipeline.operators {
        match op {
            Operator::Filter(p) => {
                let c = g.expr(p, &fields)?;
                g.line(&format!("if (!({c})) continue;"));
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
                            let n = g.fresh("p");
                            g.line(&format!("const {} {n} = ({})({v});", w.c(), w.c()));
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
                let (k, _) = match &p.keys[0] {
                    key => (g.expr(key, &fields)?, ()),
                };
                let rows_var = format!("h{probe_no}_rows");
                let _ = writeln!(tab_decls, "    const int32_t* __restrict__ {rows_var} = (const int32_t*)tabs[{tab_index}];");
                tab_index += 1;
                let s = g.fresh("s");
                g.line(&format!("const long long {s} = (long long)({k}) - {}LL;", t.min));
                let hit = format!("({s} >= 0 && {s} < {}LL && {rows_var}[{s}] != 0)", t.slots);
                match p.kind {
                    JoinKind::Inner => {
                        g.line(&format!("if (!{hit}) continue;"));
                        for (j, pc) in t.payload.iter().enumerate() {
                            let arr = format!("h{probe_no}_p{j}");
                            let _ = writeln!(tab_decls, "    const {}* __restrict__ {arr} = (const {}*)tabs[{tab_index}];", pc.width.c(), pc.width.c());
                            tab_index += 1;
                            let v = g.fresh("b");
                            g.line(&format!("const {} {v} = {arr}[{s}];", pc.width.c()));
                            g.layout.push(Val::Local(v, pc.width));
                            g.dicts.push(pc.dictionary);
                        }
                    }
                    JoinKind::Semi => {
                        g.line(&format!("if (!{hit}) continue;"));
                        tab_index += t.payload.len();
                    }
                    JoinKind::Anti => {
                        g.line(&format!("if ({hit}) continue;"));
                        tab_index += t.payload.len();
                    }
                    other => return Err(format!("{other:?} probe on the GPU")),
                }
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
            let s = g.fresh("s");
            g.line(&format!("const long long {s} = (long long)({k}) - {min}LL;"));
            g.line(&format!("if ({s} < 0 || {s} >= {slots}LL) {{ flags[1] = 1ull; continue; }}"));
            g.line(&format!("if (atomicCAS((int*)&out_rows[{s}], 0, (int)(r + 1)) != 0) {{ flags[2] = 1ull; continue; }}"));
            for (j, &col) in b.payload.iter().enumerate() {
                let (v, w) = g.column(col)?;
                let _ = writeln!(out_decls, "    {}* __restrict__ out_p{j} = ({}*)outs[{}];", w.c(), w.c(), j + 1);
                g.line(&format!("out_p{j}[{s}] = {v};"));
                let dictionary = g.dicts.get(col).copied().flatten();
                payload.push(GpuColumn { width: w, dictionary });
            }
            SinkLayout::Build { table: GpuTable { min: *min, slots, payload } }
        }
        Sink::Aggregate(a) => {
            // Group number.
            let mut keys = Vec::new();
            let groups = match &a.strategy {
                GroupStrategy::Scalar => 1usize,
                GroupStrategy::Perfect { domains } => {
                    let mut stride = 1usize;
                    g.line("long long grp = 0;");
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
                        g.line(&format!("grp += ((long long)({v}) - {min}LL + 1) * {stride}LL;"));
                        keys.push(KeyLayout { slots, min, dictionary });
                        stride = stride.checked_mul(slots).ok_or("group domain too large")?;
                    }
                    stride
                }
                GroupStrategy::Hash { .. } => return Err("hash-table aggregation on the GPU (next: global hash table)".into()),
            };
            let scalar = matches!(a.strategy, GroupStrategy::Scalar);
            let mut accumulators = Vec::new();
            let mut out_i = 0usize;
            for (j, agg) in a.aggregates.iter().enumerate() {
                let acc = match agg.func {
                    AggFunc::CountStar | AggFunc::Count => Accumulator::Count,
                    AggFunc::Sum => Accumulator::Sum,
                    AggFunc::Avg => Accumulator::SumCount,
                    AggFunc::Min => Accumulator::Min,
                    AggFunc::Max => Accumulator::Max,
                };
                if agg.distinct {
                    return Err("DISTINCT aggregate on the GPU".into());
                }
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
                let v = format!("v{j}");
                g.line(&format!("const long long {v} = (long long)({value});"));
                match acc {
                    Accumulator::Count => {
                        let _ = writeln!(out_decls, "    unsigned long long* __restrict__ out_a{j} = (unsigned long long*)outs[{out_i}];");
                        out_i += 1;
                        if scalar {
                            let _ = writeln!(thread_init, "    unsigned long long t{j} = 0;");
                            g.line(&format!("t{j} += 1ull;"));
                            let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum(t{j}); if ((threadIdx.x & 31) == 0 && t{j} != 0) atomicAdd(&out_a{j}[0], t{j});");
                        } else {
                            g.line(&format!("atomicAdd(&out_a{j}[grp], 1ull);"));
                        }
                    }
                    Accumulator::Sum | Accumulator::SumCount => {
                        let _ = writeln!(out_decls, "    Int128* __restrict__ out_a{j} = (Int128*)outs[{out_i}];");
                        out_i += 1;
                        if acc == Accumulator::SumCount {
                            let _ = writeln!(out_decls, "    unsigned long long* __restrict__ out_c{j} = (unsigned long long*)outs[{out_i}];");
                            out_i += 1;
                        }
                        if scalar {
                            let _ = writeln!(thread_init, "    Int128 t{j} = make_int128(0ull, 0ull); unsigned long long n{j} = 0;");
                            g.line(&format!("{{ Int128 x = tessera_i128({v}); unsigned long long lo = t{j}.lo + x.lo; t{j}.hi = t{j}.hi + x.hi + (lo < t{j}.lo ? 1ull : 0ull); t{j}.lo = lo; n{j} += 1ull; }}"));
                            let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum(t{j}); n{j} = tessera_warp_sum(n{j});");
                            let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomic_add_i128(&out_a{j}[0], t{j});");
                            if acc == Accumulator::SumCount {
                                let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomicAdd(&out_c{j}[0], n{j});");
                            }
                        } else {
                            g.line(&format!("atomic_add_i128(&out_a{j}[grp], tessera_i128({v}));"));
                            if acc == Accumulator::SumCount {
                                g.line(&format!("atomicAdd(&out_c{j}[grp], 1ull);"));
                            }
                        }
                    }
                    Accumulator::Min | Accumulator::Max => {
                        let _ = writeln!(out_decls, "    long long* __restrict__ out_a{j} = (long long*)outs[{out_i}];");
                        out_i += 1;
                        let (f, init, warp) = if acc == Accumulator::Min {
                            ("atomicMin", "9223372036854775807LL", "tessera_warp_min")
                        } else {
                            ("atomicMax", "(-9223372036854775807LL - 1)", "tessera_warp_max")
                        };
                        if scalar {
                            let _ = writeln!(thread_init, "    long long t{j} = {init};");
                            let cmp = if acc == Accumulator::Min { "<" } else { ">" };
                            g.line(&format!("if ({v} {cmp} t{j}) t{j} = {v};"));
                            let _ = writeln!(epilogue, "    t{j} = {warp}(t{j}); if ((threadIdx.x & 31) == 0 && t{j} != {init}) {f}(&out_a{j}[0], t{j});");
                        } else {
                            g.line(&format!("{f}(&out_a{j}[grp], {v});"));
                        }
                    }
                }
                accumulators.push(acc);
            }
            let _ = writeln!(out_decls, "    uint32_t* __restrict__ out_seen = (uint32_t*)outs[{out_i}];");
            if scalar {
                let _ = writeln!(thread_init, "    bool any = false;");
                g.line("any = true;");
                let _ = writeln!(epilogue, "    if (__any_sync(0xffffffffu, any) && (threadIdx.x & 31) == 0) out_seen[0] = 1u;");
            } else {
                g.line("out_seen[grp] = 1u;");
            }
            SinkLayout::Aggregate { groups, accumulators, keys }
        }
        Sink::Sort(_) => return Err("sort on the GPU (next: radix sort)".into()),
        Sink::Materialize { .. } => return Err("materialization on the GPU (next: compaction)".into()),
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
        "extern \"C\" __global__ void __launch_bounds__({BLOCK_THREADS}) {KERNEL_NAME}(const void* const* cols, long long rows, const void* const* tabs, void* const* outs, unsigned long long* flags) {{"
    );
    src.push_str(&col_decls);
    src.push_str(&tab_decls);
    src.push_str(&out_decls);
    src.push_str(&thread_init);
    let _ = writeln!(src, "    const long long tile = (long long)blockIdx.x * {TILE_ITEMS}LL;");
    let _ = writeln!(src, "    #pragma unroll");
    let _ = writeln!(src, "    for (int i = 0; i < {ITEMS_PER_THREAD}; ++i) {{");
    let _ = writeln!(src, "        const long long r = tile + threadIdx.x + (long long)i * {BLOCK_THREADS};");
    let _ = writeln!(src, "        if (r >= rows) break;");
    src.push_str(&g.body);
    src.push_str("    }\n");
    src.push_str(&epilogue);
    src.push_str("}\n");
    Ok(Kernel { source: src, sink })
}
