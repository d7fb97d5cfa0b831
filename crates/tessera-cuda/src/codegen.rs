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
//! Kernel ABI (all generated kernels): `extern "C" __global__ void tessera_pipeline(long
//! long rows, unsigned long long* flags, const long long* consts, <cols>, <tabs>, <outs>,
//! <literals>)`, every pointer and literal a parameter of its own (they live in the
//! constant bank, not in registers):
//! - `flags[0]`: arithmetic overflow, `flags[1]`: a build key outside its range,
//!   `flags[2]`: a duplicate build key (one array per query, read when a result
//!   comes back);
//! - `consts`: [`Kernel::consts`] (null when empty);
//! - cols: source column `i` as `int32_t*` or `int64_t*` (see [`Width`]);
//! - tabs: per probe, in operator order: one array per payload column, then `uint32_t*
//!   bits` (bit `s` set when slot `s` holds a row: what probes test);
//! - outs: the sink's arrays ([`SinkLayout`]);
//! - literals: [`Kernel::literals`], `long long` each.

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
/// than they add loads in flight. Re-measured after pointers moved to kernel parameters
/// (fewer registers a row, `gpu-h200-2026-11-23c/`): 4 rows for every pipeline was still
/// slower (H100 8.79 ms against 8.59; H200 without the prefetch 7.92 against 7.76).
/// With whole tiles (see `whole_tiles_enabled`, 2026-11-24, `gpu-h200-2026-11-24/`):
/// 2, 3 and 4 items for every pipeline 6.35–6.39, 6.31 and 6.60–6.73 ms; q3.1 1.40–1.42×
/// its model with each, so it stays per pipeline. Nor did more resident warps help q3.1:
/// `__launch_bounds__(128, 12)` (40 registers, 48 warps a SM instead of 40) left it at
/// 1.45× and slowed q1.x by 1.3–2.3× (`log7-*.txt`).
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
    /// bitmap, `uint32_t[bitmap_words(slots)]`.
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
    /// Later (2026-11-23, `gpu-h200-2026-11-23e/`), with q3.1's kernel at 0.65 ms: a
    /// diagnostic build without the atomics left it as fast (1.45× its model either way),
    /// without the seen flags' reads 1.40× (other ways to keep those flags: in
    /// `grouped_aggregate`).
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
            Accumulator::Sum(r) => 8 * r.words(),
            Accumulator::SumCount(r) => 8 * r.words() + 8,
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
}

/// How a SUM's running totals are kept in its accumulator array.
///
/// A grouped aggregation adds each row with an atomic. A 128-bit atomic addition needs
/// the old low word back to carry into the high word, so every row's thread waits for an
/// L2 round trip (on an H200, SSB q3.1's probe kernel spent 74% of its stalls waiting on
/// global memory). When the total provably fits fewer bits, the additions are
/// fire-and-forget reductions instead: [`SumRepr::I64`] when `rows × max |value| < 2^63`
/// (the values' bound from their types, see [`magnitude`]), else [`SumRepr::Split`] for
/// fewer than 2^32 rows, else [`SumRepr::I128`]. Scalar aggregates add in registers and
/// keep `I128`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SumRepr {
    /// `Int128` per group (two words, low first).
    I128,
    /// `int64_t` per group: cannot overflow for the kernel's rows.
    I64,
    /// `SplitSum` per group (two words): the sums of the values' low 32 bits (unsigned)
    /// and of their high 32 bits (signed); the total is `hi × 2^32 + lo`.
    Split,
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
            SumRepr::I64 => 1,
            SumRepr::I128 | SumRepr::Split => 2,
        }
    }

    /// The exact total from a group's words (`words()` of them, as downloaded).
    pub fn total(self, w: &[u64]) -> i128 {
        match self {
            SumRepr::I64 => i128::from(w[0] as i64),
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
        }
    }

    /// A statement adding `v` (a `long long`) to accumulator `at` (an lvalue).
    fn add(self, at: &str, v: &str) -> String {
        match self {
            SumRepr::I128 => format!("atomic_add_i128(&{at}, tessera_i128({v}));"),
            SumRepr::I64 => format!("atomicAdd((unsigned long long*)&{at}, (unsigned long long)({v}));"),
            SumRepr::Split => format!("atomic_add_split(&{at}, {v});"),
        }
    }

    /// A statement setting accumulator `at` to zero.
    fn zero(self, at: &str) -> String {
        match self {
            SumRepr::I128 => format!("{at} = make_int128(0ull, 0ull);"),
            SumRepr::I64 => format!("{at} = 0LL;"),
            SumRepr::Split => format!("{at}.lo = 0ull; {at}.hi = 0ull;"),
        }
    }

    /// A statement adding accumulator `from` into accumulator `to` (both of this
    /// representation) when it is not zero.
    fn merge(self, from: &str, to: &str) -> String {
        match self {
            SumRepr::I128 => format!("{{ const Int128 x = {from}; if ((x.lo | x.hi) != 0ull) atomic_add_i128(&{to}, x); }}"),
            SumRepr::I64 => format!("if ({from} != 0LL) atomicAdd((unsigned long long*)&{to}, (unsigned long long){from});"),
            SumRepr::Split => format!(
                "if ({from}.lo != 0ull) atomicAdd((unsigned long long*)&{to}.lo, (unsigned long long){from}.lo); if ({from}.hi != 0ull) atomicAdd((unsigned long long*)&{to}.hi, (unsigned long long){from}.hi);"
            ),
        }
    }
}

/// A generated kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// CUDA C++ source.
    pub source: String,
    /// The query's literals when they are not inlined ([`Literals::Parameters`]): the
    /// kernel's last parameters, in order.
    pub literals: Vec<i64>,
    /// The lookup tables the kernel reads from its `consts` array (e.g. the bitmaps of
    /// long IN lists); empty: `consts` may be null.
    pub consts: Vec<i64>,
    /// What the sink's `outs` hold.
    pub sink: SinkLayout,
    /// Rows per thread per tile (the launch sizes its grid in tiles of
    /// `BLOCK_THREADS × items_per_thread` rows).
    pub items_per_thread: u32,
    /// The most rows one launch may read: the bound its grouped sums' representations
    /// are exact for ([`SumRepr`]); `u64::MAX` when nothing bounds it.
    pub rows_limit: u64,
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
    /// Passed as kernel parameters ([`Kernel::literals`]).
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

/// The most parameters a generated kernel takes: 8 bytes each within the 4 KiB of
/// parameters every CUDA device accepts.
pub const MAX_KERNEL_PARAMS: usize = 4096 / 8;

/// Parameters of a kernel besides the fixed ones, in launch order.
#[derive(Default)]
struct KernelArgs {
    /// Per probe: its payload arrays, then its membership bitmap.
    tabs: Vec<String>,
    /// The sink's arrays ([`SinkLayout`]).
    outs: Vec<String>,
}

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
    /// Per-item variables loaded from global memory in the current stage.
    in_flight: Vec<String>,
    /// Per source column loaded, in load order: the estimated share of rows still
    /// selected when it was loaded (what decides [`EAGER_MIN_SECTORS`]).
    first_loads: Vec<(usize, f64)>,
    /// The estimated share of rows still selected at this point of the pipeline: the
    /// probes' pass rates multiplied (filters count as keeping every row: no estimate).
    pass: f64,
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
    /// Where the last row test so far ended (see [`Deferral`]).
    last_test: Option<TestPoint>,
    /// The probes' payload arrays, read at the slot a probe found (see [`Deferral`]).
    gathers: Vec<String>,
    tmp: usize,
}

/// A point in the generated stages: right after a row test.
#[derive(Debug, Clone, Copy)]
struct TestPoint {
    /// Index of the stage (in `Gen::stages`, once the current body is one).
    stage: usize,
    /// Byte offset in that stage's body.
    offset: usize,
    /// The estimated share of rows still selected after the test.
    pass: f64,
    /// Length of `Gen::decls` then: the per-item variables declared before the point.
    decls: usize,
}

#[derive(Clone)]
enum Val {
    /// A source column not yet loaded: index into `cols`.
    Source(usize),
    /// A local variable (a C expression naming it) with its width.
    Local(String, Width),
}

impl<'a> Gen<'a> {
    /// Appends a statement to the current stage, first ending the stage if the statement
    /// uses a value loaded in it (see [`Gen::stage`]).
    fn line(&mut self, s: &str) {
        if self.in_flight.iter().any(|name| mentions(s, name)) {
            self.stage();
        }
        self.body.push_str(s);
        self.body.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.tmp += 1;
        format!("{prefix}{}", self.tmp)
    }

    /// Ends the current stage: the next statements go into a new loop over the items.
    /// [`Gen::line`] calls it before the first statement that uses a value loaded from
    /// global memory in the current stage, so that a load is issued for all of a thread's
    /// items — and together with every other load that does not depend on it — before
    /// any item waits for its value (Crystal's `BlockLoad` before `BlockPred`): each
    /// thread keeps `ITEMS_PER_THREAD` times as many loads in flight, which is what keeps
    /// HBM busy.
    fn stage(&mut self) {
        self.in_flight.clear();
        if !self.branch && !self.body.is_empty() {
            let body = std::mem::take(&mut self.body);
            self.stages.push(body);
        }
    }

    /// [`Gen::named_var`] for a value loaded from global memory: the stage ends before
    /// its first use.
    fn load_var(&mut self, ty: &str, name: &str, value: &str) -> String {
        let v = self.named_var(ty, name, value);
        if !self.branch {
            self.in_flight.push(name.to_string());
        }
        v
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
    /// `pass` estimates the share of items it keeps.
    fn reject_estimated(&mut self, cond: &str, pass: f64) {
        self.pass *= pass;
        self.reject_if(cond);
    }

    /// Drops the current item when `cond` holds (it takes part in no later stage).
    fn reject_if(&mut self, cond: &str) {
        self.line(&format!("if ({cond}) {{ sel[i] = false; continue; }}"));
        if !self.branch {
            self.last_test = Some(TestPoint { stage: self.stages.len(), offset: self.body.len(), pass: self.pass, decls: self.decls.len() });
        }
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
            self.load_var(w.c(), &name, &format!("col{c}[r]"));
            self.first_loads.push((c, self.pass));
        }
        self.loaded.push(c);
        Ok(v)
    }

    /// Loads the source columns still unloaded among layout columns `columns`, in the
    /// current stage: what a sink reads, in flight together.
    fn prefetch(&mut self, columns: impl IntoIterator<Item = usize>) -> Result<(), String> {
        for i in columns {
            if let Some(Val::Source(c)) = self.layout.get(i).cloned() {
                self.load_source(c)?;
            }
        }
        Ok(())
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
            in_flight: Vec::new(),
            first_loads: Vec::new(),
            pass: self.pass,
            params: self.params.clone(),
            consts: self.consts.clone(),
            decls: String::new(),
            stages: Vec::new(),
            body: String::new(),
            branch: true,
            last_test: None,
            gathers: Vec::new(),
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

/// The largest membership bitmap that a probe looks up for rows an earlier probe's test
/// has not filtered yet (when its key is loaded up front). A bitmap this small stays in
/// L1 (256 KiB a SM on an H100/H200, shared with shared memory and the other probes'
/// bitmaps), so looking it up for every row costs little and saves a round trip; a
/// larger one is read from L2, for every row. Measured on an H200 (SSB q4.1, whose part
/// bitmap is 122 KiB at SF 20 and 171 KiB at SF 100): looked up with the customer and
/// supplier bitmaps for every row, q4.1 took 1.94–2.12× its bandwidth model at SF 100
/// (`gpu-h200-2026-11-23d/log6-sf100-sweep.txt`), and 1.40–1.43× with this limit
/// (`log8-*.txt`).
pub const BATCHED_BITMAP_MAX_BYTES: usize = 64 << 10;

/// Runs the membership tests of hoistable probes first, the most selective first (as a
/// hand-written SSB kernel orders its probes): rows that some dimension filters out stop
/// before they load the other keys or touch the other tables. Consecutive tests whose
/// keys are loaded already (eagerly, see [`EAGER_MIN_SECTORS`]) look up their bitmaps in
/// one stage and test them in the next, so those loads are in flight together (unless a
/// bitmap is larger than [`BATCHED_BITMAP_MAX_BYTES`]). The
/// probes themselves still run in
/// plan order for their payloads, reusing the slot found here (returned per probe)
/// instead of testing again.
fn hoist_probes(g: &mut Gen<'_>, hoisted: &[Hoisted], tables: &[GpuTable]) -> Result<HashMap<usize, String>, String> {
    let mut slots = HashMap::new();
    if hoisted.len() < 2 {
        return Ok(slots);
    }
    let mut order: Vec<&Hoisted> = hoisted.iter().collect();
    // Ties keep plan order. Smaller tables first among equally selective probes (their
    // bitmaps likelier in L1) was measured on an H200 and was no better: SSB SF 20 q3.1
    // 1.53× its model, q3.2 1.25×, q4.2 1.20× against 1.46–1.48×, 1.18–1.22×, 1.11–1.14×
    // (`gpu-h200-2026-11-23d/log9-final.txt`); again with whole tiles (2026-11-24,
    // `gpu-h200-2026-11-24/log10-*.txt`, `log11-*.txt`): q3.1 1.41–1.42× against
    // 1.40–1.43× at SF 20, 1.35× against 1.47× at SF 100, but q4.1 and q3.2 slower at
    // both and the 13 kernels 1–2% slower in total. Copying bitmaps of up to 16 KiB in all to
    // shared memory in each block and testing those first (cheaper lookups, no L1
    // wavefront per cache line touched) was slower: q3.1 1.72–1.77× against 1.54×, q3.2
    // 1.42–1.45× against 1.27–1.29×, q4.1 1.50–1.52× against 1.36–1.42×
    // (`gpu-h200-2026-11-23e/log4-shared-bitmaps.txt`).
    order.sort_by_key(|h| (tables[h.probe].pass_permille, h.probe));
    // Lookups issued and not tested yet.
    let mut pending: Vec<(&Hoisted, String)> = Vec::new();
    let test = |g: &mut Gen<'_>, pending: &mut Vec<(&Hoisted, String)>| {
        for (h, found) in pending.drain(..) {
            let pass = f64::from(tables[h.probe].pass_permille.min(1000)) / 1000.0;
            if h.anti {
                g.reject_estimated(&found, 1.0 - pass);
            } else {
                g.reject_estimated(&format!("!{found}"), pass);
            }
        }
    };
    for h in order {
        let large = tables[h.probe].slots.div_ceil(8) > BATCHED_BITMAP_MAX_BYTES;
        if !g.loaded.contains(&h.column) || (large && !pending.is_empty()) {
            // The key is loaded here, or the bitmap is too large to read for every row:
            // only the items the tests so far let through go on.
            test(g, &mut pending);
        }
        let v = g.load_source(h.column)?;
        let narrow = g.cols[h.column].width == Width::I32;
        let (s, found) = lookup(g, &tables[h.probe], h.probe, &v, narrow);
        pending.push((h, found));
        slots.insert(h.probe, s);
    }
    test(g, &mut pending);
    Ok(slots)
}

/// The slot of `key` in dense table `t` (`t.slots` outside its range) and whether a build
/// row is there, from the table's membership bitmap `h{probe}_bits` (a global load: the
/// stage ends before the first use of the answer); returns the two variables.
///
/// A key outside the range is clamped to slot `t.slots`, whose bit is always clear (the
/// bitmap has [`bitmap_words`] words), so the test is one unconditional load and shift
/// for every key: no predicate and no branch around the load. Against the range check
/// it replaced (`-1`, then `s >= 0 && ...`), a hand-edited SSB q3.1 probe kernel (SF 1
/// plan) went from 206 to 184 sm_90 SASS instructions per tile (NVRTC 13.0).
///
/// The bitmap has one bit per slot, 32× smaller than the table's row array: SSB's part
/// table at SF 20 (1 M slots) is a 128 KiB bitmap that stays in L1, where its 4 MiB row
/// array sends every probe of 120 M fact rows to L2. Slots are `int`: tables have at most
/// [`MAX_TABLE_SLOTS`] of them, and 32-bit per-item variables leave more registers for
/// items in flight.
///
/// Keys are placed with one unsigned subtraction and compare: for any key outside the
/// range, `key - min` modulo 2^64 is at least `slots` (below the range it wraps past
/// `max - min`, and `max` is itself a 64-bit value), so one test checks both ends. A
/// 32-bit key (`narrow`: its type holds it in `int32_t`) against a table whose whole key
/// range fits 32 bits does the same in 32 bits (modulo 2^32), for every row the probe
/// sees.
fn lookup(g: &mut Gen<'_>, t: &GpuTable, probe: usize, key: &str, narrow: bool) -> (String, String) {
    let max = i64::try_from(t.slots).ok().and_then(|n| t.min.checked_add(n - 1));
    let range_fits = max.is_some_and(|m| i32::try_from(m).is_ok());
    let s = match i32::try_from(t.min) {
        Ok(min) if narrow && range_fits => g.var("int", "s", &format!("(int)min((unsigned)({key}) - (unsigned)({min}), {}u)", t.slots)),
        _ => g.var("int", "s", &format!("(int)min((unsigned long long)({key}) - (unsigned long long)({}LL), {}ull)", t.min, t.slots)),
    };
    let name = g.fresh("f");
    let found = g.load_var("bool", &name, &format!("((__ldg(&h{probe}_bits[{s} >> 5]) >> ({s} & 31)) & 1u) != 0"));
    (s, found)
}

/// Words of a membership bitmap over `slots` slots: one bit per slot and the always-clear
/// bit `slots` that [`lookup`] sends keys outside the range to.
pub fn bitmap_words(slots: usize) -> usize {
    (slots + 1).div_ceil(32)
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
            Accumulator::Sum(_) | Accumulator::SumCount(_) => {
                let _ = writeln!(thread_init, "    Int128 t{j} = make_int128(0ull, 0ull); unsigned long long n{j} = 0;");
                g.line(&format!("{{ Int128 x = tessera_i128({v}); unsigned long long lo = t{j}.lo + x.lo; t{j}.hi = t{j}.hi + x.hi + (lo < t{j}.lo ? 1ull : 0ull); t{j}.lo = lo; n{j} += 1ull; }}"));
                let _ = writeln!(epilogue, "    t{j} = tessera_warp_sum(t{j}); n{j} = tessera_warp_sum(n{j});");
                let _ = writeln!(epilogue, "    if ((threadIdx.x & 31) == 0 && n{j} != 0) atomic_add_i128(&out_a{j}[0], t{j});");
                if matches!(acc, Accumulator::SumCount(_)) {
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
fn materialize(g: &mut Gen<'_>, fields: &[tessera_ir::Field], args: &mut KernelArgs) -> Result<SinkLayout, String> {
    args.outs.push("unsigned long long* __restrict__ out_count".into());
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
        args.outs.push(format!("{}* __restrict__ out_m{i}", w.c()));
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
            Accumulator::Sum(r) => write!(s, "{} ", r.add(&format!("{prefix}a{j}[{index}]"), v)),
            Accumulator::SumCount(r) => write!(s, "{} atomicAdd(&{prefix}c{j}[{index}], 1ull); ", r.add(&format!("{prefix}a{j}[{index}]"), v)),
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
            // queue on the few hot addresses in L2 like an atomic. Measured on an H200
            // (`gpu-h200-2026-11-23e/log5-*.txt`): an `atomicOr` from every row instead
            // took SSB SF 20 q3.1 from 1.45× its model to 2.06×. Flags in shared memory
            // instead, merged at the end, made q3.1 slower too: a shared bitmap set with a
            // shared atomic per row 1.54× (`gpu-h200-2026-11-23e/log1-*.txt`), a byte a
            // group set with plain stores 1.66× against 1.43–1.47×
            // (`gpu-h200-2026-11-24/log6-*.txt`): a block's shared memory costs L1, which
            // holds q3.1's 75 KiB customer bitmap.
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
            Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                let _ = writeln!(thread_init, "    __shared__ {} sh_a{j}[{slots}];", r.c());
                let _ = write!(init, "{} ", r.zero(&format!("sh_a{j}[s]")));
                if matches!(acc, Accumulator::SumCount(_)) {
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
            Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                let _ = writeln!(epilogue, "        {}", r.merge(&format!("sh_a{j}[s]"), &format!("out_a{j}[grp]")));
                if matches!(acc, Accumulator::SumCount(_)) {
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
    mentions(body, "r")
}

/// Whether `code` names identifier `name` (not as part of a longer identifier).
fn mentions(code: &str, name: &str) -> bool {
    occurrences(code, name) > 0
}

/// How many times `code` names identifier `name`.
fn occurrences(code: &str, name: &str) -> usize {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let b = code.as_bytes();
    code.match_indices(name)
        .filter(|&(k, _)| {
            let end = k + name.len();
            (k == 0 || !ident(b[k - 1])) && (end == b.len() || !ident(b[end]))
        })
        .count()
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
    // A first pass finds where each column is first loaded and how many rows are
    // estimated to be still selected there; columns most of whose sectors would be read
    // anyway are then loaded up front, together.
    let (kernel, first_loads) = generate_pass(pipeline, cols, tables, options, items, &[])?;
    let min_sectors = eager_min_sectors();
    let eager: Vec<usize> = first_loads
        .iter()
        .filter(|(c, pass)| sector_share(*pass, cols[*c].width) >= min_sectors)
        .map(|(c, _)| *c)
        .collect();
    if eager.len() < 2 {
        // The first column is loaded first either way.
        return Ok(kernel);
    }
    Ok(generate_pass(pipeline, cols, tables, options, items, &eager)?.0)
}

/// Columns whose estimated share of 32-byte sectors read at their first use (see
/// [`sector_share`]) is at least this are loaded in the kernel's first stage, together,
/// instead of after the predicates and probes before their use.
///
/// Loading a column only for the rows still selected saves DRAM traffic only for the
/// sectors no selected row touches, while each load that waits for a probe's answer is one
/// more round trip to memory in the thread's chain: the probe kernels of SSB at SF 20 were
/// latency-bound on an H200 (Nsight Compute: 74% of q3.1's stalls waiting on global
/// loads). Up front, all of a tile's loads are in flight at once.
///
/// Measured on an H200 (SSB SF 20, 2026-11-23, main kernels of the 13 queries,
/// `benchmarks/results/gpu-h200-2026-11-23c/`): no eager loads 8.63 ms, 0.5 7.77 ms; with
/// the next tile's prefetch 0.25 / 0.5 / 0.75 → 7.89 / 7.54 / 7.52 ms; everything up
/// front (0) was worst on an H100 (10.65 ms against 8.57 at 0.5): the selective queries
/// then read whole columns they need a few sectors of. Those runs estimated every filter
/// as keeping a quarter of the rows; with the planner's estimates from statistics
/// (`tessera-plan`'s `selectivity`), two H200 sweeps (`gpu-h200-2026-11-23d/`) gave
/// 0 / 0.1 / 0.25 / 0.5 → 8.23 / 7.09 / 7.20–7.27 / 7.41 ms, 0.1 the only value in that
/// sweep with both q3.1 and q4.1 within 1.5× of their bandwidth model (1.46×, 1.44×);
/// with [`BATCHED_BITMAP_MAX_BYTES`] later runs put 0.1 and 0.25 within 0.5% of each
/// other in total, q3.1 at 1.44–1.51× either way.
///
/// Column loads go through the read-only path and allocate in L1 like any load. Loading
/// them without allocating (`ld.global.nc.L1::no_allocate`) or evict-first (`__ldcs`), to
/// keep the probed bitmaps in L1, changed no kernel beyond the runs' spread (H200, SSB SF
/// 20, `gpu-h200-2026-11-24/log5-*.txt`: 6.45–6.59 ms against 6.46–6.48 ms in total).
pub const EAGER_MIN_SECTORS: f64 = 0.1;

/// [`EAGER_MIN_SECTORS`], or the experiment's value from `TESSERA_EXP_EAGER_SECTORS`.
fn eager_min_sectors() -> f64 {
    std::env::var("TESSERA_EXP_EAGER_SECTORS").ok().and_then(|v| v.parse().ok()).unwrap_or(EAGER_MIN_SECTORS)
}

/// The largest estimated share of rows passing a pipeline's row tests for which the rows
/// that pass are queued per warp and finished 32 at a time (see [`Deferral`]). At 0.25 a
/// warp's tile of 64 rows keeps 16 on average, half a queue's drain: above that, rows
/// finishing in place already share their warps' round trips. Not swept: SSB's deferred
/// kernels keep 2% of their rows or fewer, and forcing every pipeline that can defer to
/// (`TESSERA_EXP_DEFER_PASS=1`) changed none of SSB's kernel times by more than the runs'
/// spread (`gpu-h200-2026-11-23e/log2-defer.txt`).
pub const DEFER_MAX_PASS: f64 = 0.25;

/// Shared memory a block may spend on its warps' queues (see [`Deferral`]): 12 KiB holds
/// six 32-bit values a row at two items a thread. With a direct group table of
/// [`SHARED_AGG_BYTES`] a block then needs 29 KiB, and 7 blocks of 128 threads stay
/// resident per SM (12 with the tables SSB's queries have).
pub const DEFER_MAX_BYTES: usize = 12 << 10;

fn defer_max_pass() -> f64 {
    std::env::var("TESSERA_EXP_DEFER_PASS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFER_MAX_PASS)
}

/// Rows that pass a selective pipeline's tests finish in full warps.
///
/// After its last row test a probe pipeline reads the payloads of the slots its probes
/// found and aggregates: global loads from L2 for the few rows left. Done in place, each
/// warp waits for one L2 round trip per tile for the one or two of its 64 rows that passed
/// (SSB q3.1: 3.4% of the rows). Instead each warp appends the values that the rest of
/// the pipeline needs (slots, columns, the row number) to its queue in shared memory (a
/// ballot and a population count, no barrier), and once 32 rows are queued the warp runs
/// the rest of the pipeline on them, one a lane: one round trip for 32 rows. What is left
/// in a queue runs after the last tile.
///
/// Only for sinks that aggregate in a shared [`GroupTable::Direct`] table. Measured on an
/// H200 at SSB SF 20 (`gpu-h200-2026-11-23e/log2-defer.txt`, `log3-*.txt`): q4.1 1.31–1.33×
/// its bandwidth model against 1.40–1.44× in place, q4.2 1.06–1.13× against 1.13–1.15×;
/// but with global atomics ([`GroupTable::Global`]) slower: q3.1 1.67–1.69× against
/// 1.45–1.51×, q2.1 1.27–1.29× against 1.19–1.21× (32 lanes' atomics at once on a few
/// hot L2 lines).
#[derive(Debug, Clone)]
struct Deferral {
    /// The per-item variables the rest of the pipeline reads: (C type, name).
    live: Vec<(String, String)>,
    /// Whether the rest of the pipeline reads the row number `r`.
    row: bool,
    /// Rows a warp's queue holds: 32 per item of a thread, plus the 31 that may wait.
    capacity: usize,
}

/// Bytes of a C type of a per-item variable.
fn c_type_bytes(ty: &str) -> Option<usize> {
    Some(match ty {
        "bool" | "int8_t" | "uint8_t" => 1,
        "int16_t" | "uint16_t" => 2,
        "int" | "int32_t" | "uint32_t" | "unsigned int" | "float" => 4,
        "long long" | "int64_t" | "uint64_t" | "unsigned long long" | "double" => 8,
        "Int128" => 16,
        _ => return None,
    })
}

/// Removes loads of probe payloads that nothing reads (a probe loads every payload
/// column of its table; the plan may not use them all), so that deferred rows do not
/// queue the slots only those loads would read.
fn drop_unread_payloads(head: &mut [String], tail: &mut [String]) {
    let all = format!("{}{}", head.concat(), tail.concat());
    let unread = |line: &str| -> bool {
        let Some((lhs, rhs)) = line.trim().split_once(" = ") else { return false };
        let Some(name) = lhs.strip_suffix("[i]") else { return false };
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
        let payload = rhs
            .strip_prefix('h')
            .and_then(|r| r.split_once("_p"))
            .is_some_and(|(n, rest)| digits(n) && rest.split_once('[').is_some_and(|(j, _)| digits(j)));
        payload && occurrences(&all, name) == 1
    };
    for body in head.iter_mut().chain(tail.iter_mut()) {
        if body.lines().any(unread) {
            *body = body.lines().filter(|l| !unread(l)).map(|l| format!("{l}\n")).collect();
        }
    }
}

/// The stages before and after `at`.
fn split_stages(stages: &[String], at: TestPoint) -> (Vec<String>, Vec<String>) {
    let mut head: Vec<String> = stages.iter().take(at.stage).cloned().collect();
    let mut tail = Vec::new();
    if let Some(body) = stages.get(at.stage) {
        let (a, b) = body.split_at(at.offset.min(body.len()));
        if !a.trim().is_empty() {
            head.push(a.to_string());
        }
        if !b.trim().is_empty() {
            tail.push(b.to_string());
        }
    }
    tail.extend(stages.iter().skip(at.stage + 1).cloned());
    (head, tail)
}

/// Whether and how the rows passing `g`'s tests are queued (see [`Deferral`]): only for
/// a grouped aggregation whose rows pass the tests rarely (estimated) and then read
/// global memory at positions the probes found or load columns. With the queue, also the
/// stages before and after the point where rows join it (unread payloads dropped).
fn plan_deferral(g: &Gen<'_>, table: Option<GroupTable>, items: u32) -> Option<(Deferral, Vec<String>, Vec<String>)> {
    let at = g.last_test?;
    if !matches!(table, Some(GroupTable::Direct { .. })) || at.pass > defer_max_pass() {
        return None;
    }
    let (mut head, mut tail) = split_stages(&g.stages, at);
    drop_unread_payloads(&mut head, &mut tail);
    let rest = tail.concat();
    let row = mentions_row(&rest);
    let gathers = row || g.gathers.iter().any(|a| mentions(&rest, a));
    if !gathers {
        return None;
    }
    let mut live = Vec::new();
    for d in g.decls[..at.decls].lines() {
        let (ty, name) = d.strip_suffix("[ITEMS];")?.rsplit_once(' ')?;
        if mentions(&rest, name) {
            live.push((ty.to_string(), name.to_string()));
        }
    }
    let capacity = 32 * (items as usize + 1);
    let warps = (BLOCK_THREADS / 32) as usize;
    let per_row = live.iter().map(|(ty, _)| c_type_bytes(ty)).sum::<Option<usize>>()? + if row { 8 } else { 0 };
    (per_row * capacity * warps <= DEFER_MAX_BYTES).then_some((Deferral { live, row, capacity }, head, tail))
}

/// Writes `stages`, each an unrolled loop over the items still selected; `row` is the C
/// expression of item `i`'s row number.
fn write_stages(src: &mut String, stages: &[String], row: &str, indent: &str) {
    for body in stages {
        let _ = writeln!(src, "{indent}#pragma unroll");
        let _ = writeln!(src, "{indent}for (int i = 0; i < ITEMS; ++i) {{");
        let _ = writeln!(src, "{indent}    if (!sel[i]) continue;");
        if mentions_row(body) {
            let _ = writeln!(src, "{indent}    const long long r = {row};");
        }
        for l in body.lines() {
            let _ = writeln!(src, "{indent}    {l}");
        }
        let _ = writeln!(src, "{indent}}}");
    }
}

/// Runs the rest of the pipeline (`tail`) on one queued row a lane: entry `index` of the
/// warp's queue, for the lanes where `cond` holds.
fn write_drain(src: &mut String, d: &Deferral, decls: &str, tail: &[String], index: &str, cond: &str, indent: &str) {
    let _ = writeln!(src, "{indent}{{");
    let ind = format!("{indent}    ");
    let _ = writeln!(src, "{ind}constexpr int ITEMS = 1;");
    let _ = writeln!(src, "{ind}bool sel[ITEMS];");
    for l in decls.lines() {
        let _ = writeln!(src, "{ind}{l}");
    }
    if d.row {
        let _ = writeln!(src, "{ind}long long tq_r[ITEMS];");
    }
    let mut take: String = d.live.iter().map(|(_, n)| format!(" {n}[0] = tq_{n}[tq_w][{index}];")).collect();
    if d.row {
        let _ = write!(take, " tq_r[0] = tq_row[tq_w][{index}];");
    }
    let _ = writeln!(src, "{ind}__syncwarp();");
    let _ = writeln!(src, "{ind}sel[0] = {cond};");
    let _ = writeln!(src, "{ind}if (sel[0]) {{{take} }}");
    // The entries are read before any lane queues the next tile's rows over them.
    let _ = writeln!(src, "{ind}__syncwarp();");
    write_stages(src, tail, "tq_r[i]", &ind);
    let _ = writeln!(src, "{indent}}}");
}

/// Whether kernels with eager loads prefetch the next tile's (on unless the experiment's
/// `TESSERA_EXP_PREFETCH=0`).
fn prefetch_enabled() -> bool {
    std::env::var("TESSERA_EXP_PREFETCH").map_or(true, |v| v != "0")
}

/// Which tiles a tile loop's body is written for: whether its items test their rows
/// against the row count, and how it prefetches the next tile's eager columns.
#[derive(Clone, Copy, PartialEq)]
enum TileKind {
    /// Any tile: each item tests its row, and so does each item of the next tile.
    Any,
    /// A whole tile: no item tests its row; the next tile's only when it is partial.
    Whole,
    /// The partial last tile: its items test their rows; no tile follows.
    Last,
}

/// Whether kernels run their whole tiles in a loop of their own, without the per-item
/// row tests, and the partial last tile after it (on unless the experiment's
/// `TESSERA_EXP_WHOLE_TILES=0`).
///
/// Every item of every tile compared its 64-bit row number with the row count, and
/// every stage then began with a branch on the item's selection flag. In a whole tile
/// every item is a row, so the flags start `true`, the tests fold away and the first
/// stage needs no branch; the price is a second copy of the body, for the one partial
/// tile. SSB q3.1's probe loop (SF 1 plan, sm_90 SASS, NVRTC 13.0) went from 206 to 160
/// instructions per tile with this and [`lookup`]'s clamped slots. Measured on an H200
/// (SSB SF 20, 2026-11-24, `benchmarks/results/gpu-h200-2026-11-24/log1-*.txt`): the 13
/// main kernels 6.45–6.48 ms with whole tiles, 7.52 ms without (both with the clamped
/// slots); q2.x, q3.2–q3.4 and q4.x 10–17% faster each, q3.1 unchanged (1.39–1.52×).
fn whole_tiles_enabled() -> bool {
    std::env::var("TESSERA_EXP_WHOLE_TILES").map_or(true, |v| v != "0")
}

/// The share of a column's 32-byte sectors that hold at least one of the rows still
/// selected, when a share `pass` of the rows is, independently.
fn sector_share(pass: f64, width: Width) -> f64 {
    let per_sector = (32 / width.bytes()) as i32;
    1.0 - (1.0 - pass.clamp(0.0, 1.0)).powi(per_sector)
}

/// One generation of the kernel, loading `eager` (source columns) in the first stage;
/// returns the kernel and, per source column, the estimated share of rows still selected
/// where it was first loaded.
fn generate_pass(pipeline: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable], options: KernelOptions, items: u32, eager: &[usize]) -> Result<(Kernel, Vec<(usize, f64)>), String> {
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
        in_flight: Vec::new(),
        first_loads: Vec::new(),
        pass: 1.0,
        params: (options.literals == Literals::Parameters).then(Vec::new),
        consts: Vec::new(),
        decls: String::new(),
        stages: Vec::new(),
        body: String::new(),
        branch: false,
        last_test: None,
        gathers: Vec::new(),
        tmp: 0,
    };
    for &c in eager {
        g.load_source(c)?;
    }
    // The eager loads are the first stage, alone: the kernel issues them for the next
    // tile while it works on this one (see `prefetch` below).
    g.stage();
    let prefetch = !eager.is_empty() && prefetch_enabled();
    let mut fields = fields0;
    // Rows the kernel reads, and the most rows its grouped sums stay exact for.
    let source_rows = match &pipeline.source {
        Source::Scan(scan) => scan.rows,
        _ => u64::MAX,
    };
    let mut rows_limit = u64::MAX;
    let mut probe_no = 0usize;
    let mut args = KernelArgs::default();
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
                // Per probe: its payload columns, then its membership bitmap.
                let bits_var = format!("h{probe_no}_bits");
                for (j, pc) in t.payload.iter().enumerate() {
                    args.tabs.push(format!("const {}* __restrict__ h{probe_no}_p{j}", pc.width.c()));
                }
                args.tabs.push(format!("const uint32_t* __restrict__ {bits_var}"));
                // A hoisted probe's membership test has run already; only its payload is
                // left to read.
                let (s, found) = match hoisted_slots.get(&probe_no) {
                    Some(s) => (s.clone(), None),
                    None => {
                        let k = g.expr(&p.keys[0], &fields)?;
                        let narrow = width_of(p.keys[0].ty(&fields)) == Some(Width::I32);
                        let (s, found) = lookup(&mut g, t, probe_no, &k, narrow);
                        (s, Some(found))
                    }
                };
                let pass = f64::from(t.pass_permille.min(1000)) / 1000.0;
                match (p.kind, found) {
                    (JoinKind::Inner | JoinKind::Semi, Some(found)) => g.reject_estimated(&format!("!{found}"), pass),
                    (JoinKind::Anti, Some(found)) => g.reject_estimated(&found, 1.0 - pass),
                    (JoinKind::Inner | JoinKind::Semi | JoinKind::Anti, None) => {}
                    (other, _) => return Err(format!("{other:?} probe on the GPU")),
                }
                if p.kind == JoinKind::Inner {
                    for (j, pc) in t.payload.iter().enumerate() {
                        let arr = format!("h{probe_no}_p{j}");
                        g.gathers.push(arr.clone());
                        let name = g.fresh("b");
                        let v = g.load_var(pc.width.c(), &name, &format!("{arr}[{s}]"));
                        g.layout.push(Val::Local(v, pc.width));
                        g.dicts.push(pc.dictionary);
                    }
                }
                fields = op.output_fields(&fields);
                probe_no += 1;
            }
        }
    }
    let mut epilogue = String::new();
    let mut thread_init = String::new();
    let mut grouped_table = None;
    let sink = match &pipeline.sink {
        Sink::HashBuild(b) => {
            let (BuildStrategy::Perfect { min, max }, [key]) = (&b.strategy, b.keys.as_slice()) else {
                return Err("only perfect-hash builds on one key run on the GPU".into());
            };
            if b.nulls_equal {
                return Err("NULL-equal build on the GPU".into());
            }
            let slots = (max - min + 1) as usize;
            g.prefetch(key.columns().into_iter().chain(b.payload.iter().copied()))?;
            let k = g.expr(key, &fields)?;
            args.outs.push("int32_t* __restrict__ out_rows".into());
            let mut payload = Vec::new();
            let s = g.var("long long", "s", &format!("(long long)({k}) - {min}LL"));
            g.reject_flagged(&format!("{s} < 0 || {s} >= {slots}LL"), 1);
            g.reject_flagged(&format!("atomicCAS((int*)&out_rows[{s}], 0, (int)(r + 1)) != 0"), 2);
            g.line(&format!("atomicOr(&out_bits[{s} >> 5], 1u << ({s} & 31));"));
            for (j, &col) in b.payload.iter().enumerate() {
                let (v, w) = g.column(col)?;
                args.outs.push(format!("{}* __restrict__ out_p{j}", w.c()));
                g.line(&format!("out_p{j}[{s}] = {v};"));
                let dictionary = g.dicts.get(col).copied().flatten();
                payload.push(GpuColumn { width: w, dictionary });
            }
            args.outs.push("uint32_t* __restrict__ out_bits".into());
            SinkLayout::Build { table: GpuTable { min: *min, slots, payload, pass_permille: pass_permille(b.estimated_rows, pipeline) } }
        }
        Sink::Aggregate(a) => {
            g.prefetch(a.group_by.iter().chain(a.aggregates.iter().filter_map(|x| x.arg.as_ref())).flat_map(|e| e.columns()))?;
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
                // Scalar sums add in registers (a 128-bit atomic once per warp); grouped
                // ones per row, as narrow as the rows and the values' bound allow.
                let repr = match (&agg.arg, scalar) {
                    (Some(e), false) => {
                        let magnitude = magnitude(e, &fields);
                        let repr = SumRepr::for_rows(source_rows, magnitude);
                        let limit = match repr {
                            SumRepr::I64 => ((1u128 << 63) - 1) / magnitude.max(1),
                            SumRepr::Split => (1u128 << 32) - 1,
                            SumRepr::I128 => u128::from(u64::MAX),
                        };
                        rows_limit = rows_limit.min(u64::try_from(limit).unwrap_or(u64::MAX));
                        repr
                    }
                    _ => SumRepr::I128,
                };
                accumulators.push(match agg.func {
                    AggFunc::CountStar | AggFunc::Count => Accumulator::Count,
                    AggFunc::Sum => Accumulator::Sum(repr),
                    AggFunc::Avg => Accumulator::SumCount(repr),
                    AggFunc::Min => Accumulator::Min,
                    AggFunc::Max => Accumulator::Max,
                });
            }
            let privatized = if scalar { GroupTable::Global } else { group_table(groups, &accumulators) };
            // The global accumulators.
            for (j, acc) in accumulators.iter().enumerate() {
                match acc {
                    Accumulator::Count => {
                        args.outs.push(format!("unsigned long long* __restrict__ out_a{j}"));
                    }
                    Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                        args.outs.push(format!("{}* __restrict__ out_a{j}", r.c()));
                        if matches!(acc, Accumulator::SumCount(_)) {
                            args.outs.push(format!("unsigned long long* __restrict__ out_c{j}"));
                        }
                    }
                    Accumulator::Min | Accumulator::Max => {
                        args.outs.push(format!("long long* __restrict__ out_a{j}"));
                    }
                }
            }
            args.outs.push("uint32_t* __restrict__ out_seen".into());
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
            grouped_table = grp.is_some().then_some(privatized);
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
            g.prefetch(0..fields.len())?;
            materialize(&mut g, &fields, &mut args)?
        }
    };
    // Every pointer and literal is a kernel parameter of its own: parameters live in
    // the constant bank, which instructions read directly, so they take no registers
    // (as pointers loaded from an array in global memory did: 40 instead of 64 registers
    // a thread in SSB q3.1's probe kernel, 47 instead of 64 with spills in q4.1's).
    let mut params = vec!["long long rows".to_string(), "unsigned long long* __restrict__ flags".into(), "const long long* __restrict__ consts".into()];
    params.extend(cols.iter().enumerate().map(|(i, c)| format!("const {}* __restrict__ col{i}", c.width.c())));
    params.extend(args.tabs);
    params.extend(args.outs);
    let literals = g.params.take().unwrap_or_default();
    params.extend((0..literals.len()).map(|k| format!("const long long lit{k}")));
    if params.len() > MAX_KERNEL_PARAMS {
        return Err(format!("{} kernel parameters (at most {MAX_KERNEL_PARAMS})", params.len()));
    }
    let mut src = String::new();
    src.push_str(PRELUDE);
    let _ = writeln!(src, "\n// Pipeline {}: generated by tessera-cuda.", pipeline.id);
    let _ = writeln!(src, "extern \"C\" __global__ void __launch_bounds__({BLOCK_THREADS}) {KERNEL_NAME}({}) {{", params.join(", "));
    let tile_items = BLOCK_THREADS * items;
    let _ = writeln!(src, "    constexpr int ITEMS = {items};");
    src.push_str(&thread_init);
    // Grid-stride over tiles: the launch sizes the grid to one wave of resident blocks,
    // so per-block setup and merges happen once per block, not once per tile.
    // Each thread holds ITEMS rows of the tile (striped: item i of thread t is row
    // tile + t + i * BLOCK_THREADS, so a warp's loads are coalesced) with a selection
    // flag each; every stage is one unrolled loop over the items still selected.
    g.stage();
    let row = |tile: &str| format!("{tile} + threadIdx.x + (long long)i * {BLOCK_THREADS}");
    let stride = format!("(long long)gridDim.x * {tile_items}LL");
    let (deferral, all_stages, tail) = match plan_deferral(&g, grouped_table, items) {
        Some((d, head, tail)) => (Some(d), head, tail),
        None => {
            let mut stages = g.stages.clone();
            drop_unread_payloads(&mut stages, &mut []);
            (None, stages, Vec::new())
        }
    };
    if let Some(d) = &deferral {
        let warps = BLOCK_THREADS / 32;
        for (ty, n) in &d.live {
            let _ = writeln!(src, "    __shared__ {ty} tq_{n}[{warps}][{}];", d.capacity);
        }
        if d.row {
            let _ = writeln!(src, "    __shared__ long long tq_row[{warps}][{}];", d.capacity);
        }
        let _ = writeln!(src, "    int tq_n = 0;  // rows in this warp's queue (the same in every lane)");
        let _ = writeln!(src, "    const int tq_w = threadIdx.x >> 5;");
        let _ = writeln!(src, "    const unsigned int tq_lane = threadIdx.x & 31u;");
    }
    let stages: &[String] = if prefetch { &all_stages[1..] } else { &all_stages };
    let prefetch_loads: String = eager.iter().map(|c| format!(" nc{c}[i] = col{c}[r];")).collect();
    let _ = writeln!(src, "    long long tile = (long long)blockIdx.x * {tile_items}LL;");
    if prefetch {
        // Software pipelining over tiles: the first stage's loads (the eager columns) for
        // tile t + 1 are issued into `nc{c}` registers before tile t's later stages run, so
        // their DRAM latency overlaps the probes' chain instead of adding to it (H200, SSB
        // SF 20: the 13 main kernels 7.54 ms with it, 7.76 ms without). Copying one to
        // three tiles ahead into a ring in shared memory with `cp.async` instead (4 or 8
        // bytes an item, each thread its own items, so no registers held and no barrier)
        // was measured slower on an H200: 8.2–8.6 ms against 7.2 ms with registers
        // (`gpu-h200-2026-11-23d/log2-sweep.txt`).
        for &c in eager {
            let _ = writeln!(src, "    {} nc{c}[ITEMS] = {{}};", g.cols[c].width.c());
        }
        let _ = writeln!(src, "    #pragma unroll");
        let _ = writeln!(src, "    for (int i = 0; i < ITEMS; ++i) {{ const long long r = {}; if (r < rows) {{{prefetch_loads} }} }}", row("tile"));
    }
    // One tile's work. In a whole tile every item is a row: no item tests the row count,
    // and with no test left before the first stage its items need no branch.
    let tile_body = |src: &mut String, kind: TileKind| {
        let _ = writeln!(src, "        bool sel[ITEMS];");
        for d in g.decls.lines() {
            let _ = writeln!(src, "        {d}");
        }
        let _ = writeln!(src, "        #pragma unroll");
        if kind == TileKind::Whole {
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) sel[i] = true;");
        } else {
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) sel[i] = {} < rows;", row("tile"));
        }
        if prefetch {
            let take: String = eager.iter().map(|c| format!(" c{c}[i] = nc{c}[i];")).collect();
            let _ = writeln!(src, "        #pragma unroll");
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) {{{take} }}");
            let guarded = format!("        for (int i = 0; i < ITEMS; ++i) {{ const long long r = {}; if (r < rows) {{{prefetch_loads} }} }}", row("next"));
            if kind != TileKind::Last {
                let _ = writeln!(src, "        const long long next = tile + {stride};");
            }
            match kind {
                TileKind::Any => {
                    let _ = writeln!(src, "        #pragma unroll");
                    let _ = writeln!(src, "{guarded}");
                }
                TileKind::Whole => {
                    let _ = writeln!(src, "        if (next + {tile_items}LL <= rows) {{");
                    let _ = writeln!(src, "            #pragma unroll");
                    let _ = writeln!(src, "            for (int i = 0; i < ITEMS; ++i) {{ const long long r = {};{prefetch_loads} }}", row("next"));
                    let _ = writeln!(src, "        }} else {{");
                    let _ = writeln!(src, "            #pragma unroll");
                    let _ = writeln!(src, "    {guarded}");
                    let _ = writeln!(src, "        }}");
                }
                TileKind::Last => {}
            }
        }
        write_stages(src, stages, &row("tile"), "        ");
        if let Some(d) = &deferral {
            let mut push: String = d.live.iter().map(|(_, n)| format!(" tq_{n}[tq_w][at] = {n}[i];")).collect();
            if d.row {
                let _ = write!(push, " tq_row[tq_w][at] = {};", row("tile"));
            }
            let _ = writeln!(src, "        #pragma unroll");
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) {{");
            let _ = writeln!(src, "            const unsigned int m = __ballot_sync(0xffffffffu, sel[i]);");
            let _ = writeln!(src, "            if (sel[i]) {{ const int at = tq_n + __popc(m & ((1u << tq_lane) - 1u));{push} }}");
            let _ = writeln!(src, "            tq_n += __popc(m);");
            let _ = writeln!(src, "        }}");
            let _ = writeln!(src, "        while (tq_n >= 32) {{");
            let _ = writeln!(src, "            tq_n -= 32;");
            write_drain(src, d, &g.decls, &tail, "tq_n + (int)tq_lane", "true", "            ");
            let _ = writeln!(src, "        }}");
        }
    };
    if whole_tiles_enabled() {
        // Whole tiles in one loop, then the partial last tile (if any) in a copy of the
        // body with the row tests: see [`whole_tiles_enabled`].
        let _ = writeln!(src, "    for (; tile + {tile_items}LL <= rows; tile += {stride}) {{");
        tile_body(&mut src, TileKind::Whole);
        src.push_str("    }\n");
        let _ = writeln!(src, "    // The last tile, partial: no tile follows it.");
        let _ = writeln!(src, "    if (tile < rows) {{");
        tile_body(&mut src, TileKind::Last);
        src.push_str("    }\n");
    } else {
        let _ = writeln!(src, "    for (; tile < rows; tile += {stride}) {{");
        tile_body(&mut src, TileKind::Any);
        src.push_str("    }\n");
    }
    if let Some(d) = &deferral {
        let _ = writeln!(src, "    // The rows still queued.");
        let _ = writeln!(src, "    if (tq_n > 0)");
        write_drain(&mut src, d, &g.decls, &tail, "(int)tq_lane", "(int)tq_lane < tq_n", "    ");
    }
    src.push_str(&epilogue);
    src.push_str("}\n");
    Ok((Kernel { source: src, literals, consts: g.consts, sink, items_per_thread: items, rows_limit }, g.first_loads))
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
        let sum = [Accumulator::Sum(SumRepr::I128)];
        // 20 bytes a slot: 819 slots fit in 16 KiB directly.
        assert_eq!(group_table(800, &sum), GroupTable::Direct { slots: 800 });
        // A 64-bit sum: 12 bytes a slot.
        assert_eq!(group_table(1300, &[Accumulator::Sum(SumRepr::I64)]), GroupTable::Direct { slots: 1300 });
        // SSB q2.1's 8 008-slot domain: global atomics (measured faster than a shared
        // hash table).
        assert_eq!(group_table(8008, &sum), GroupTable::Global);
        // Many wide accumulators leave too few slots to be worth it.
        let wide = [Accumulator::SumCount(SumRepr::Split); 8];
        assert_eq!(group_table(100_000, &wide), GroupTable::Global);
    }

    #[test]
    fn sums_are_as_narrow_as_rows_and_values_allow() {
        // 120 M rows of a 32-bit value (SSB at SF 20): 64 bits hold any total.
        assert_eq!(SumRepr::for_rows(120_000_000, 1 << 31), SumRepr::I64);
        // Decimals of 18 digits: not in 64 bits, but in split halves below 2^32 rows.
        assert_eq!(SumRepr::for_rows(120_000_000, 10u128.pow(18) - 1), SumRepr::Split);
        assert_eq!(SumRepr::for_rows(1 << 32, 10u128.pow(18) - 1), SumRepr::I128);
        // Totals back from the words, negative ones included.
        assert_eq!(SumRepr::I64.total(&[(-5i64) as u64]), -5);
        assert_eq!(SumRepr::I128.total(&[u64::MAX, u64::MAX]), -1);
        // Split: lo sums the low halves unsigned, hi the high halves signed. Adding -1 and
        // 2^40 + 7: lo = 0xffff_ffff + 7, hi = -1 + 256.
        let (a, b) = (-1i64, (1i64 << 40) + 7);
        let lo = u64::from(a as u32) + u64::from(b as u32);
        let hi = ((a >> 32) + (b >> 32)) as u64;
        assert_eq!(SumRepr::Split.total(&[lo, hi]), i128::from(a) + i128::from(b));
    }

    #[test]
    fn magnitudes_follow_types_literals_and_arithmetic() {
        let fields = vec![Field::new("a", Type::Int32, false), Field::new("d", Type::Decimal { precision: 15, scale: 2 }, false)];
        let a = Expr::col(0, "a");
        assert_eq!(magnitude(&a, &fields), 1 << 31);
        let diff = Expr::Arith { op: ArithOp::Sub, left: Box::new(a.clone()), right: Box::new(a.clone()), ty: Type::Int64 };
        assert_eq!(magnitude(&diff, &fields), 1 << 32);
        let lit = Expr::lit(Scalar::Int(-3), Type::Int64);
        let prod = Expr::Arith { op: ArithOp::Mul, left: Box::new(a.clone()), right: Box::new(lit), ty: Type::Int64 };
        assert_eq!(magnitude(&prod, &fields), 3 << 31);
        // A result never exceeds its type's range: a 32-bit product stays within 2^31.
        let narrow = Expr::Arith { op: ArithOp::Mul, left: Box::new(a.clone()), right: Box::new(a), ty: Type::Int32 };
        assert_eq!(magnitude(&narrow, &fields), 1 << 31);
        assert_eq!(magnitude(&Expr::col(1, "d"), &fields), 10u128.pow(15) - 1);
    }

    #[test]
    fn grouped_sums_add_with_fire_and_forget_atomics() {
        // 1000 rows of an int32 value: 64 bits hold any total, one reduction per row
        // into the shared table, merged the same way; exact up to 2^63 / 2^31 rows.
        let mut p = grouped(9, AggFunc::Sum);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[1].ty = Type::Int32;
        let k = generate(&p, &[int_col(), int_col()], &[]).unwrap();
        assert!(k.source.contains("__shared__ long long sh_a0[11]"), "{}", k.source);
        assert!(k.source.contains("atomicAdd((unsigned long long*)&sh_a0["), "{}", k.source);
        assert!(k.source.contains("atomicAdd((unsigned long long*)&out_a0[grp], (unsigned long long)sh_a0[s])"), "{}", k.source);
        assert!(!k.source.contains("atomic_add_i128"), "{}", k.source);
        assert_eq!(k.rows_limit, (1 << 32) - 1);
        // A large domain (global arrays) of int64 values: split halves, below 2^32 rows.
        let k = generate(&grouped(99_999, AggFunc::Sum), &cols(), &[]).unwrap();
        assert!(k.source.contains("atomic_add_split(&out_a0["), "{}", k.source);
        assert!(k.source.contains("SplitSum* __restrict__ out_a0"), "{}", k.source);
        assert_eq!(k.rows_limit, (1 << 32) - 1);
        if crate::test_support::nvrtc_or_skip("split-sum kernels compile with NVRTC") {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
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
        assert!(k.source.contains("consts[0]"), "{}", k.source);
        assert!(!k.source.contains("== 297"), "{}", k.source);
        // consts: the first value, the bitmap's length in bits, then its words.
        let bits = 298usize;
        assert!(k.literals.is_empty());
        assert_eq!(k.consts.len(), 2 + bits.div_ceil(64));
        assert_eq!((k.consts[0], k.consts[1]), (0, bits as i64));
        let words: Vec<u64> = k.consts[2..].iter().map(|&w| w as u64).collect();
        for v in 0..bits {
            assert_eq!(words[v / 64] >> (v % 64) & 1 == 1, v % 3 == 0, "bit {v}");
        }
        // Another list of the same shape shares the kernel; inlined literals still pass the
        // bitmap as a parameter.
        assert_eq!(with(2, Literals::Parameters).source, k.source);
        let inline = with(3, Literals::Inline);
        assert_eq!(inline.consts, k.consts);
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
        assert!(short.literals.is_empty() && short.consts.is_empty() && short.source.contains("== 5LL"), "{}", short.source);
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
        assert_eq!((a.literals.clone(), b.literals.clone()), (vec![10], vec![77]));
        assert!(a.source.contains(", const long long lit0)"), "{}", a.source);
        assert!(a.source.contains("< (long long)(lit0)"), "{}", a.source);
        // Inlined, the constant is in the source and there are no parameters.
        let (c, d) = (with(10, Literals::Inline), with(77, Literals::Inline));
        assert_ne!(c.source, d.source);
        assert!(c.literals.is_empty() && c.source.contains("(long long)(10LL)"), "{}", c.source);
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
        // int64 values: split sums (see `grouped_sums_add_with_fire_and_forget_atomics`).
        assert!(k.source.contains("__shared__ SplitSum sh_a0[11];"), "{}", k.source);
        assert!(k.source.contains("atomic_add_split(&sh_a0[sl2[i]], v0[i]);"), "{}", k.source);
        // Merged once per block, not per row.
        assert!(k.source.contains("atomicAdd((unsigned long long*)&out_a0[grp].lo, (unsigned long long)sh_a0[s].lo);"), "{}", k.source);
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
            GpuTable { min: 0, slots: 100, payload: vec![], pass_permille: 5 },
        ];
        (p, cols, tables)
    }

    /// The loop over a kernel's whole tiles (the body every tile but a partial last one runs).
    fn whole_tile_loop(source: &str) -> &str {
        let start = source.find("for (; tile + ").unwrap_or_else(|| panic!("no whole-tile loop in {source}"));
        let end = source[start..].find("// The last tile").map_or(source.len(), |e| start + e);
        &source[start..end]
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
        let src = whole_tile_loop(&k.source);
        // The more selective probe (table 1, on column 1, 0.5% of rows pass) is tested
        // first; its key is loaded in a stage of its own, the slot looked up in the next,
        // tested after.
        let load_sk = stage_of(src, "c1[i] = col1[r];");
        let lookup_sk = stage_of(src, "h1_bits[s");
        let test_sk = stage_of(src, "if (!f");
        assert!(load_sk < lookup_sk && lookup_sk < test_sk, "{src}");
        // The other key is loaded only after that test, for the items it kept.
        let load_dk = stage_of(src, "c0[i] = col0[r];");
        assert!(load_dk >= test_sk, "{src}");
        // Each table's membership bitmap is read once: the probes reuse the hoisted tests'
        // slots. Probes never read the row arrays.
        assert_eq!(src.matches("h0_bits[s").count(), 1, "{src}");
        assert_eq!(src.matches("h1_bits[s").count(), 1, "{src}");
        assert!(!src.contains("h0_rows") && !src.contains("h1_rows"), "{src}");
        // 32-bit keys are placed with one unsigned 32-bit test (keys below the range wrap
        // above it).
        assert!(src.contains("s1[i] = (int)min((unsigned)(c1[i]) - (unsigned)(0), 100u);"), "{src}");
        // Not when the table's range ends beyond 32 bits: a key far below could wrap into it.
        let mut wide = tables.clone();
        wide[1].min = i64::from(i32::MAX) - 10;
        let kw = generate(&p, &cols, &wide).unwrap();
        assert!(kw.source.contains("s1[i] = (int)min((unsigned long long)(c1[i]) - (unsigned long long)(2147483637LL), 100ull);"), "{}", kw.source);
        // The parameters: the columns, then per table its payload and bitmap, then the
        // sink's arrays.
        let params = "const int32_t* __restrict__ col1, const int64_t* __restrict__ col2, const int32_t* __restrict__ h0_p0, \
                      const uint32_t* __restrict__ h0_bits, const uint32_t* __restrict__ h1_bits, SplitSum* __restrict__ out_a0, uint32_t* __restrict__ out_seen)";
        assert!(k.source.contains(params), "{}", k.source);
        // The payload and the value are loaded before the stage that aggregates them.
        assert!(stage_of(src, "h0_p0[") < stage_of(src, "atomic_add_split"), "{src}");
        assert!(stage_of(src, "c2[i] = col2[r];") < stage_of(src, "atomic_add_split"), "{src}");
        // Items dropped in a stage take part in no later one.
        assert!(src.contains("{ sel[i] = false; continue; }"), "{src}");
    }

    #[test]
    fn keys_outside_a_table_land_on_its_always_clear_bit() {
        // Slot `slots` (where `lookup` clamps keys outside the range) is inside the
        // bitmap, whether or not `slots` is a multiple of 32.
        for slots in [1usize, 31, 32, 33, 64, 600_000, 1 << 20] {
            assert!(bitmap_words(slots) * 32 > slots, "{slots} slots");
            assert!(bitmap_words(slots) <= slots.div_ceil(32) + 1, "{slots} slots");
        }
    }

    #[test]
    fn rows_of_selective_pipelines_finish_in_full_warps() {
        let (p, cols, tables) = star();
        let src = generate(&p, &cols, &tables).unwrap().source;
        assert!(src.contains("__shared__ int tq_s3[4][96];") && src.contains("__shared__ long long tq_row[4][96];"), "{src}");
        // 0.5% of the rows pass: each warp queues what the rest of the pipeline reads (the
        // slot for the payload, the row for the value column) after the last test...
        let body = whole_tile_loop(&src);
        let test = body.rfind("{ sel[i] = false; continue; }").unwrap();
        let push = body.find("const unsigned int m = __ballot_sync(0xffffffffu, sel[i]);").expect("queueing");
        assert!(test < push, "{src}");
        assert!(body[push..].contains("tq_row[tq_w][at] = tile + threadIdx.x + (long long)i * 128;"), "{src}");
        // ...and the payload gather, the value load and the aggregation run on 32 queued
        // rows at a time, one a lane, and on what is left after the last tile.
        let drain = body.find("while (tq_n >= 32) {").unwrap();
        assert!(push < drain, "{src}");
        let last = src.find("if (tq_n > 0)").unwrap();
        for part in [&body[drain..], &src[last..]] {
            assert!(part.contains("constexpr int ITEMS = 1;"), "{src}");
            assert!(part.contains("= h0_p0[s") && part.contains("const long long r = tq_r[i];") && part.contains("atomic_add_split("), "{src}");
        }
        assert!(!body[..push].contains("atomic_add_split(") && !body[..push].contains("= h0_p0["), "{src}");
        // When most rows pass, they finish in place.
        let mut wide = tables.clone();
        wide[1].pass_permille = 900;
        let src = generate(&p, &cols, &wide).unwrap().source;
        assert!(!src.contains("__ballot_sync") && !src.contains("tq_n"), "{src}");
    }

    #[test]
    fn columns_mostly_read_anyway_are_loaded_up_front_and_probed_together() {
        // The first probe lets 20% of the rows through: 83% of the other key's sectors
        // and 59% of the int64 value's would be read anyway.
        let (p, cols, mut tables) = star();
        tables[1].pass_permille = 200;
        let k = generate(&p, &cols, &tables).unwrap();
        let src = &k.source;
        // All three are loaded together, for the next tile while this one is probed
        // (before the tile loop for the first tile).
        // Checked against the row count before the loop and when the next tile is the
        // partial last one...
        let loads = "if (r < rows) { nc1[i] = col1[r]; nc0[i] = col0[r]; nc2[i] = col2[r]; }";
        assert_eq!(src.matches(loads).count(), 2, "{src}");
        // ...and not for a whole next tile.
        let body = whole_tile_loop(src);
        assert!(body.contains("if (next + 256LL <= rows) {"), "{src}");
        assert!(body.contains("{ const long long r = next + threadIdx.x + (long long)i * 128; nc1[i] = col1[r]; nc0[i] = col0[r]; nc2[i] = col2[r]; }"), "{src}");
        assert!(src.contains("{ c1[i] = nc1[i]; c0[i] = nc0[i]; c2[i] = nc2[i]; }"), "{src}");
        // Both membership bitmaps are read in one stage, tested in the next.
        let first = stage_of(src, "h1_bits[s");
        assert_eq!(stage_of(src, "h0_bits[s"), first, "{src}");
        assert_eq!(stage_of(src, "if (!f"), first + 1, "{src}");
        assert!(!src[src.find("h1_bits[s").unwrap()..].contains("= col"), "no column is loaded after the probes: {src}");
        // A bitmap too large for L1 is looked up only for the rows the first test keeps,
        // though its key is loaded up front.
        let mut large = tables.clone();
        large[0].slots = 1 << 20;
        let k = generate(&p, &cols, &large).unwrap();
        let src = &k.source;
        assert!(src.contains(loads), "{src}");
        assert!(src.find("h0_bits[s") > src.find("if (!f"), "{src}");
        // The estimate is what decides: at 0.5% the key waits for the first test.
        assert_eq!(sector_share(0.005, Width::I32), 1.0 - 0.995f64.powi(8));
        assert!(sector_share(0.005, Width::I32) < EAGER_MIN_SECTORS && sector_share(0.2, Width::I64) > EAGER_MIN_SECTORS);
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
        assert!(k.source.contains("int32_t* __restrict__ out_rows, int64_t* __restrict__ out_p0, uint32_t* __restrict__ out_bits)"), "{}", k.source);
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
