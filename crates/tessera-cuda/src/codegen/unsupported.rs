//! Why a pipeline does not run on the GPU: typed, with the part of the pipeline it
//! concerns, and all of them (a pipeline's operators are checked one by one, so EXPLAIN
//! can say everything that keeps it on the CPU, not only the first thing found).

use std::fmt;

use tessera_ir::{JoinKind, Type};

/// The part of a pipeline a reason concerns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// The pipeline's source (its columns).
    Source,
    /// Operator `index` (in pipeline order), of the kind named.
    Operator {
        /// Position among the pipeline's operators.
        index: usize,
        /// `filter`, `project` or `probe`.
        kind: &'static str,
    },
    /// The sink, of the kind named.
    Sink(&'static str),
    /// The kernel as a whole (its tile, its parameters).
    Kernel,
    /// The executor's placement (not the generator's).
    Placement,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Site::Source => write!(f, "source"),
            Site::Operator { index, kind } => write!(f, "{kind} #{index}"),
            Site::Sink(kind) => write!(f, "{kind}"),
            Site::Kernel => write!(f, "kernel"),
            Site::Placement => write!(f, "placement"),
        }
    }
}

/// What is not supported.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// A column of a type the GPU does not hold.
    ColumnType {
        /// The column.
        column: String,
        /// Its type.
        ty: Type,
    },
    /// A string column without a dictionary read other than by `LIKE`.
    RawString,
    /// A LIKE the GPU does not match (ILIKE, an escape character, a non-column operand).
    Like(String),
    /// A source column whose data holds NULLs in a form kernels do not read (bit-packed
    /// tiles).
    NullableColumn {
        /// The column.
        column: String,
    },
    /// A value that may be NULL (a nullable source column, a LEFT OUTER join's build
    /// column) where the kernel does not carry NULLs: a group key the other keys
    /// determine (carried as a MIN of its values, see `tessera_ir::ReducedKeys`).
    NullableValue(String),
    /// An expression the generator does not lower, as the IR prints it.
    Expression(String),
    /// A literal the generator does not lower.
    Literal(String),
    /// A string comparison that is not over a dictionary.
    StringComparison,
    /// Arithmetic the generator does not lower (operator or rescaling).
    Arithmetic(String),
    /// A cast the generator does not lower.
    Cast {
        /// From.
        from: Type,
        /// To.
        to: Type,
    },
    /// A CASE of a type the generator does not lower, or without ELSE (NULL).
    Case(String),
    /// A value of a type the operator cannot compute on the GPU.
    ValueType(Type),
    /// A probe with NULL semantics (`NOT IN`, `IS NOT DISTINCT FROM` keys).
    ProbeShape,
    /// A join kind not probed on the GPU.
    JoinKind(JoinKind),
    /// A probe of a table built on the CPU.
    TableOnCpu,
    /// A probed table larger than kernels address.
    TableSlots(usize),
    /// Hash keys the generator cannot pack into one word.
    HashKey(String),
    /// A chained table (a 1:N build) of more rows than 32-bit row numbers take.
    ChainRows(u64),
    /// A second 1:N inner probe in one pipeline (a kernel expands its rows once).
    SecondExpansion,
    /// A sink after a 1:N inner probe that needs at most one output per input row.
    ExpandedSink(&'static str),
    /// A 1:N expansion whose queued rows need more shared memory than a block has.
    ExpansionQueue(usize),
    /// A build whose NULL keys match each other.
    NullEqualBuild,
    /// A DISTINCT aggregate.
    DistinctAggregate,
    /// A group key that is computed, not a column.
    ComputedGroupKey,
    /// A boolean group key.
    BooleanGroupKey,
    /// A dictionary group key whose dictionary is unknown.
    UnknownDictionary,
    /// More group slots than kernels address.
    GroupSlots(Option<usize>),
    /// A sort (not on the GPU yet, see `sort.rs`).
    Sort,
    /// A semi or anti join run from its other side whose build rows have no table of
    /// their keys on the GPU to mark (see `mark.rs`).
    MarkBuild,
    /// A build whose rows a pipeline on the GPU marks: they stay on the host, where the
    /// marked ones are taken (see `mark.rs`).
    MarkedOnGpu,
    /// LIMIT/OFFSET without ORDER BY: which rows is up to the order, and blocks append
    /// in whatever order they finish.
    LimitWithoutOrder,
    /// Rows per thread outside what a kernel may hold.
    ItemsPerThread(u32),
    /// More kernel parameters than a launch takes.
    Parameters(usize),
    /// Input too small for a launch to pay off.
    SmallInput(u64),
    /// A pipeline that only filters, computes or materializes the rows of a result that
    /// lies on the host: the CPU backend reads them there, where the GPU would first
    /// receive them and then send back what passes.
    HostRows,
    /// An aggregation expecting so many groups that the host's share (downloading them
    /// and building Arrow columns) costs more than the CPU's aggregation.
    ManyGroups {
        /// Estimated groups.
        groups: u64,
        /// Rows aggregated.
        rows: u64,
    },
    /// A build whose probes run on the CPU (its table must be on the CPU too).
    ProbedOnCpu,
    /// A scalar subquery's value of a type kernels do not take as a parameter (floats,
    /// strings).
    Subquery(Type),
    /// An ORDER BY the GPU does not rank.
    SortKeys(String),
    /// A HAVING the GPU does not apply to an aggregation's groups.
    Having(String),
    /// The pipeline and the columns given for it disagree (a bug).
    Inconsistent(String),
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::ColumnType { column, ty } => write!(f, "column {column} of type {ty}"),
            Reason::ChainRows(n) => write!(f, "a 1:N table of {n} build rows (at most 2^31 - 1)"),
            Reason::SecondExpansion => write!(f, "a second 1:N join in one pipeline"),
            Reason::ExpandedSink(what) => write!(f, "{what} after a 1:N join"),
            Reason::ExpansionQueue(bytes) => write!(f, "a 1:N join whose queued rows take {bytes} bytes of shared memory"),
            Reason::RawString => write!(f, "a string column without a dictionary read other than by LIKE"),
            Reason::Like(what) => write!(f, "{what} on the GPU"),
            Reason::NullableValue(what) => write!(f, "{what}, which may be NULL, as a group key the other keys determine on the GPU"),
            Reason::NullableColumn { column } => write!(f, "nullable column {column} in bit-packed tiles on the GPU"),
            Reason::Expression(e) => write!(f, "{e} on the GPU"),
            Reason::Literal(l) => write!(f, "literal {l} on the GPU"),
            Reason::StringComparison => write!(f, "string comparison that is not over a dictionary"),
            Reason::Arithmetic(what) => write!(f, "{what} on the GPU"),
            Reason::Cast { from, to } => write!(f, "CAST from {from} to {to} on the GPU"),
            Reason::Case(what) => write!(f, "{what} on the GPU"),
            Reason::ValueType(ty) => write!(f, "a value of type {ty} on the GPU"),
            Reason::ProbeShape => write!(f, "probe with NULL semantics (NOT IN, IS NOT DISTINCT FROM) on the GPU"),
            Reason::JoinKind(k) => write!(f, "{k:?} probe on the GPU"),
            Reason::TableOnCpu => write!(f, "probes a table built on the CPU"),
            Reason::TableSlots(n) => write!(f, "a probed table of {n} slots (at most {} on the GPU)", super::probe::MAX_TABLE_SLOTS),
            Reason::HashKey(what) => write!(f, "hash key {what} on the GPU"),
            Reason::NullEqualBuild => write!(f, "NULL-equal build on the GPU"),
            Reason::DistinctAggregate => write!(f, "DISTINCT aggregate on the GPU"),
            Reason::ComputedGroupKey => write!(f, "computed group key"),
            Reason::BooleanGroupKey => write!(f, "boolean group key on the GPU"),
            Reason::UnknownDictionary => write!(f, "dictionary group key without a known dictionary"),
            Reason::GroupSlots(Some(n)) => write!(f, "{n} group slots on the GPU (at most {})", super::aggregate::MAX_GROUP_SLOTS),
            Reason::GroupSlots(None) => write!(f, "group domain too large"),
            Reason::Sort => write!(f, "sort on the GPU (next: radix sort)"),
            Reason::MarkBuild => write!(f, "marking build rows (a semi/anti join from its other side) without the build's keys on the GPU"),
            Reason::LimitWithoutOrder => write!(f, "LIMIT/OFFSET without ORDER BY on the GPU (which rows is up to the order)"),
            Reason::ItemsPerThread(n) => write!(f, "{n} items per thread (1 to {})", super::options::MAX_ITEMS_PER_THREAD),
            Reason::Parameters(n) => write!(f, "{n} kernel parameters (at most {})", super::abi::MAX_KERNEL_PARAMS),
            Reason::SmallInput(rows) => write!(f, "input below {rows} rows"),
            Reason::HostRows => write!(f, "only filters or materializes a result that lies on the host (read there, not sent to the GPU and back)"),
            Reason::ManyGroups { groups, rows } => {
                write!(f, "~{groups} groups from {rows} rows: bringing that many groups back to the host costs more than aggregating on the CPU")
            }
            Reason::ProbedOnCpu => write!(f, "a pipeline probing its table runs on the CPU"),
            Reason::MarkedOnGpu => write!(f, "its rows stay on the host, where a GPU pipeline's marks pick them (the GPU holds only their keys)"),
            Reason::Subquery(ty) => write!(f, "a scalar subquery's value of type {ty} in a kernel"),
            Reason::SortKeys(why) | Reason::Having(why) => write!(f, "{why}"),
            Reason::Inconsistent(what) => write!(f, "internal: {what}"),
        }
    }
}

/// One thing that keeps a pipeline off the GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported {
    /// Where in the pipeline.
    pub site: Site,
    /// What.
    pub reason: Reason,
}

impl Unsupported {
    /// `reason` at `site`.
    pub fn new(site: Site, reason: Reason) -> Self {
        Unsupported { site, reason }
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.site, self.reason)
    }
}

/// All the reasons of a pipeline, as EXPLAIN prints them (`; ` between).
pub fn describe(reasons: &[Unsupported]) -> String {
    reasons.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("; ")
}
