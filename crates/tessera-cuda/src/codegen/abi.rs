//! The kernel ABI: every generated kernel is `extern "C" __global__ void
//! tessera_pipeline(<params>)`, each parameter one 64-bit value (a pointer or a
//! literal) of its own, so they live in the constant bank rather than in registers. The
//! order is [`Kernel::params`]: the launcher fills them from that list.
//!
//! - `rows`; `flags` (`flags[0]`: arithmetic overflow, `flags[1]`: a build key outside
//!   its range, `flags[2]`: a duplicate build key; one array per query, read when a
//!   result comes back); `consts` ([`Kernel::consts`], null when empty);
//! - the source columns `col{i}` (plain arrays, or bit-packed tiles: `tiles.cuh`), then
//!   the bytes `col{i}_bytes` of string columns, then the validity bitmaps `col{i}_valid`
//!   of columns whose data holds NULLs ([`super::GpuColumn::nullable`]), then the
//!   references `col{i}_ref` of narrowed columns ([`super::GpuColumn::narrow`]), then
//!   the run values `col{i}_runs` of columns of runs (whose `col{i}` is their
//!   directory: [`super::layout::Narrow::Runs`]), then
//!   `zones` ([`Param::Zones`]) where the leading filters have bounds;
//! - per probe, in operator order (then the table a mark sink reads): its payload arrays `h{p}_p{j}`, each followed by its
//!   validity bitmap `h{p}_pv{j}` when it may be NULL, then its membership
//!   bitmap `h{p}_bits` (bit `s` set when slot `s` holds a row: what probes test) or, for
//!   a hashed table, its keys `h{p}_keys`, and for `NOT IN` what its build saw
//!   `h{p}_seen` ([`Param::BuildSeen`]);
//! - the sink's arrays ([`Out`], as [`super::SinkLayout`] describes them);
//! - the literals `lit{k}` ([`Kernel::literals`]).

use super::aggregate::Accumulator;
use super::layout::{Narrow, SinkLayout, Width};

/// The kernel's name in every generated module.
pub const KERNEL_NAME: &str = "tessera_pipeline";

/// The most parameters a generated kernel takes: 8 bytes each within the 4 KiB of
/// parameters every CUDA device accepts.
pub const MAX_KERNEL_PARAMS: usize = 4096 / 8;

/// One kernel parameter: what the launcher passes.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// The source's row count.
    Rows,
    /// The query's error flags.
    Flags,
    /// [`Kernel::consts`], uploaded (null when empty).
    Consts,
    /// Source column `column`.
    Column {
        /// Index among the pipeline's source columns.
        column: usize,
        /// Its width.
        width: Width,
        /// In bit-packed tiles (`const unsigned long long*`, see `tiles.cuh`).
        packed: bool,
        /// Narrowed ([`super::layout::Narrow`]): distances from `col{i}_ref`.
        narrow: Option<Narrow>,
    },
    /// The reference (smallest value) of narrowed source column `column`
    /// ([`super::layout::Narrow`]): `const long long col{i}_ref`.
    Reference {
        /// Index among the pipeline's source columns.
        column: usize,
    },
    /// The run values of source column `column`, a column of runs
    /// ([`super::layout::Narrow::Runs`]; `col{i}` is its directory): `col{i}_runs`.
    RunValues {
        /// Index among the pipeline's source columns.
        column: usize,
        /// Its form (a run value's C type).
        narrow: Narrow,
    },
    /// The UTF-8 bytes of source column `column` (a [`Width::Str`] column).
    Bytes {
        /// Index among the pipeline's source columns.
        column: usize,
    },
    /// The validity bitmap of source column `column` ([`super::GpuColumn::nullable`]):
    /// `uint32_t[ceil(rows / 32)]`, bit `r & 31` of word `r >> 5` set when row `r` is not
    /// NULL (Arrow's bit order).
    Validity {
        /// Index among the pipeline's source columns.
        column: usize,
    },
    /// The zone bitmap of a pipeline whose leading filters zone maps can decide
    /// ([`tessera_ir::zone_bounds`]): `const uint32_t* zones`, a bit per 2048 rows, set
    /// where they may hold a row the filters keep; null when no zone rules rows out.
    Zones,
    /// Payload column `column` of the table probe `probe` reads.
    Payload {
        /// The probe (operator order).
        probe: usize,
        /// Its payload column.
        column: usize,
        /// Its width.
        width: Width,
        /// Narrowed: distances from the table's reference (`GpuTable::payload_refs`).
        narrow: Option<Narrow>,
    },
    /// The validity bitmap of payload column `column` of the table probe `probe` reads,
    /// a column that may be NULL: bit `s & 31` of word `s >> 5` set where the row at slot
    /// (or build row) `s` is not NULL.
    PayloadValid {
        /// The probe (operator order).
        probe: usize,
        /// Its payload column.
        column: usize,
    },
    /// What the build of the table probe `probe` reads saw, for a NULL-aware anti join
    /// (`uint32_t[2]`, see [`Out::BuildSeen`]).
    BuildSeen {
        /// The probe (operator order).
        probe: usize,
    },
    /// The membership bitmap of the table probe `probe` reads.
    Bitmap {
        /// The probe (operator order).
        probe: usize,
    },
    /// The packed keys of the hashed table probe `probe` reads.
    Keys {
        /// The probe (operator order).
        probe: usize,
    },
    /// The chain heads of the chained table probe `probe` reads (`int32_t[slots + 1]`).
    Heads {
        /// The probe (operator order).
        probe: usize,
    },
    /// The chain links of the chained table probe `probe` reads (`int32_t[rows]`).
    Next {
        /// The probe (operator order).
        probe: usize,
    },
    /// An array the sink writes.
    Out(Out),
    /// Literal `k` ([`Kernel::literals`]).
    Literal(usize),
    /// The value of scalar subquery `k` ([`Kernel::subqueries`]), known only when the
    /// query runs: as its type's 64-bit value (decimals unscaled, dates in days).
    Subquery(usize),
}

/// An array a sink writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    /// A build's row array (`int32_t[slots]`, row + 1 or 0): finds duplicate keys.
    BuildRows,
    /// A build's payload column `column` (`slots` long).
    BuildPayload {
        /// Index among the build's payload columns.
        column: usize,
        /// Its width.
        width: Width,
        /// Narrowed: distances from its reference (`GpuTable::payload_refs`).
        narrow: Option<Narrow>,
    },
    /// The validity bitmap of a build's payload column `column` that may be NULL
    /// (`uint32_t`, as long as the payload in bits, zero before the launch): see
    /// [`Param::PayloadValid`].
    BuildPayloadValid {
        /// Index among the build's payload columns.
        column: usize,
    },
    /// A build's membership bitmap.
    BuildBitmap,
    /// What a build probed by a NULL-aware anti join saw (`uint32_t[2]`, zero before the
    /// launch): `[0]` set when a row reached it, `[1]` when one had a NULL key.
    BuildSeen,
    /// A hashed build's or a hash aggregation's keys (`uint64_t[slots]`).
    Keys,
    /// A chained build's chain heads (`int32_t[slots + 1]`, all −1 before the launch).
    Heads,
    /// A chained build's chain links (`int32_t[rows]`).
    Next,
    /// Aggregate `aggregate`'s accumulators (`groups` of them).
    Accumulators {
        /// Index among the aggregates.
        aggregate: usize,
        /// Their kind.
        accumulator: Accumulator,
    },
    /// The counts of aggregate `aggregate`'s non-NULL inputs (`unsigned long long[groups]`):
    /// an AVG's, and those of a SUM, MIN or MAX whose input may be NULL (a group without
    /// one gets NULL).
    Counts {
        /// Index among the aggregates.
        aggregate: usize,
    },
    /// The groups that saw a row (`uint32_t[groups]`).
    Seen,
    /// A mark sink's marks (`uint32_t[rows]` of the table it reads, zero before the
    /// launch; see `mark.rs`).
    Marks,
    /// The count of materialized rows (`unsigned long long`).
    Count,
    /// Materialized column `column`.
    Materialized {
        /// Index among the sink's input columns.
        column: usize,
        /// Its width.
        width: Width,
    },
    /// The validity bitmap of materialized column `column`, one that may be NULL
    /// (`uint32_t`, a bit per output row in Arrow's order, zero before the launch).
    MaterializedValid {
        /// Index among the sink's input columns.
        column: usize,
    },
}

impl Param {
    /// The parameter's declaration in the kernel's signature.
    pub fn declaration(&self) -> String {
        match self {
            Param::Rows => "long long rows".into(),
            Param::Flags => "unsigned long long* __restrict__ flags".into(),
            Param::Consts => "const long long* __restrict__ consts".into(),
            Param::Column { column, packed: true, .. } => format!("const unsigned long long* __restrict__ col{column}"),
            Param::Column { column, narrow: Some(Narrow::Runs { .. }), .. } => format!("const uint32_t* __restrict__ col{column}"),
            Param::Column { column, narrow: Some(n), .. } => format!("const {}* __restrict__ col{column}", n.c()),
            Param::RunValues { column, narrow } => format!("const {}* __restrict__ col{column}_runs", narrow.c()),
            Param::Column { column, width, .. } => format!("const {}* __restrict__ col{column}", width.c()),
            Param::Reference { column } => format!("const long long col{column}_ref"),
            Param::Zones => "const uint32_t* __restrict__ zones".into(),
            Param::Bytes { column } => format!("const unsigned char* __restrict__ col{column}_bytes"),
            Param::Validity { column } => format!("const uint32_t* __restrict__ col{column}_valid"),
            Param::Payload { probe, column, narrow: Some(n), .. } => format!("const {}* __restrict__ h{probe}_p{column}", n.c()),
            Param::Payload { probe, column, width, .. } => format!("const {}* __restrict__ h{probe}_p{column}", width.c()),
            Param::PayloadValid { probe, column } => format!("const uint32_t* __restrict__ h{probe}_pv{column}"),
            Param::BuildSeen { probe } => format!("const uint32_t* __restrict__ h{probe}_seen"),
            Param::Bitmap { probe } => format!("const uint32_t* __restrict__ h{probe}_bits"),
            Param::Keys { probe } => format!("const unsigned long long* __restrict__ h{probe}_keys"),
            Param::Heads { probe } => format!("const int* __restrict__ h{probe}_heads"),
            Param::Next { probe } => format!("const int* __restrict__ h{probe}_next"),
            Param::Out(o) => match o {
                Out::BuildRows => "int32_t* __restrict__ out_rows".into(),
                Out::BuildPayload { column, narrow: Some(n), .. } => format!("{}* __restrict__ out_p{column}", n.c()),
                Out::BuildPayload { column, width, .. } => format!("{}* __restrict__ out_p{column}", width.c()),
                Out::BuildPayloadValid { column } => format!("uint32_t* __restrict__ out_pv{column}"),
                Out::BuildBitmap => "uint32_t* __restrict__ out_bits".into(),
                Out::BuildSeen => "uint32_t* __restrict__ out_bseen".into(),
                Out::Keys => "unsigned long long* __restrict__ out_keys".into(),
                Out::Heads => "int* __restrict__ out_heads".into(),
                Out::Next => "int* __restrict__ out_next".into(),
                Out::Accumulators { aggregate, accumulator } => format!("{}* __restrict__ out_a{aggregate}", accumulator.c()),
                Out::Counts { aggregate } => format!("unsigned long long* __restrict__ out_c{aggregate}"),
                Out::Seen => "uint32_t* __restrict__ out_seen".into(),
                Out::Marks => "uint32_t* __restrict__ out_marks".into(),
                Out::Count => "unsigned long long* __restrict__ out_count".into(),
                Out::Materialized { column, width } => format!("{}* __restrict__ out_m{column}", width.c()),
                Out::MaterializedValid { column } => format!("uint32_t* __restrict__ out_v{column}"),
            },
            Param::Literal(k) => format!("const long long lit{k}"),
            Param::Subquery(k) => format!("const long long sq{k}"),
        }
    }
}

/// A generated kernel.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// CUDA C++ source.
    pub source: String,
    /// Its parameters, in order (see the module doc).
    pub params: Vec<Param>,
    /// The query's literals when they are not inlined ([`super::Literals::Parameters`]).
    pub literals: Vec<i64>,
    /// The scalar subqueries whose values parameter `sq{k}` passes: the result holding
    /// each one's row, and its type. A subquery whose value is NULL (no row) or does not
    /// fit 64 bits sends the query to the CPU backend at launch.
    pub subqueries: Vec<(tessera_ir::ResultId, tessera_ir::Type)>,
    /// The lookup tables the kernel reads from its `consts` array (e.g. the bitmaps of
    /// long IN lists); empty: `consts` may be null.
    pub consts: Vec<i64>,
    /// What the sink's arrays hold.
    pub sink: SinkLayout,
    /// Rows per thread per tile (the launch sizes its grid in tiles of
    /// `block_threads × items_per_thread` rows).
    pub items_per_thread: u32,
    /// Threads a block it is launched with (`BLOCK_THREADS`, or `WIDE_BLOCK_THREADS`
    /// where `codegen::block_threads` says).
    pub block_threads: u32,
    /// The most rows one launch may read: the bound its grouped sums' representations
    /// are exact for (`SumRepr`); `u64::MAX` when nothing bounds it.
    pub rows_limit: u64,
    /// Source string columns whose bytes it reads (`LIKE`): a string column it holds only
    /// as row numbers is not uploaded.
    pub strings: Vec<usize>,
}
