//! Running pipelines on the GPU: placement, binding, the GPU column cache, launches and
//! turning a kernel's outputs back into Arrow.
//!
//! Placement (for now, before the cost model): a pipeline runs on the GPU when a GPU is
//! present, the code generator supports it, every hash table it probes was built on the
//! GPU, and — under `tessera.device = 'auto'` — its source has at least
//! [`GPU_MIN_ROWS`] rows. A build pipeline stays on the GPU only if every pipeline that
//! probes its table does too; a build may read an intermediate result (uploaded when the
//! query reaches it, [`result_table`]). Everything else runs on the CPU backend, with the
//! reason.
//!
//! An aggregation's result that pipelines read on the GPU stays there: its groups become
//! device columns (`tessera_result_column`, [`ResultColumn`]) that the readers' kernels
//! take as their source, and it comes back to the host only if something there reads it
//! too (TPC-H q13's counts per customer, q16's distinct suppliers per part class).
//!
//! Binding: string predicates over a dictionary-encoded column are evaluated once over
//! the dictionary (by the CPU evaluator) and become a test on codes, which is all the
//! GPU sees of strings.
//!
//! Caches, each keyed by table version: the columns on the GPU (`ColumnCache`), and the
//! hash tables built from stored tables (`crate::build_cache`), which later runs of the
//! same build take instead of building again.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, DictionaryArray, Float64Array, Int32Array, Int64Array};
use arrow::datatypes::{DataType, Int32Type};
use tessera_common::{Result, TesseraError};
use tessera_cpu::{Chunk, Evaluator, arrow_err, cast_to};
use tessera_cuda::codegen::{self, Accumulator, DictRef, GpuColumn, GpuTable, Kernel, KernelOptions, Narrow, Out, Param, Reason, Site, SinkLayout, Unsupported, Width};
pub use tessera_cuda::codegen::having::{GpuHaving, plan_having};
pub use tessera_cuda::codegen::sort::{GPU_SORT_MAX_ROWS, GpuSort, plan_sort};
use tessera_cuda::cudarc::driver::sys::CUevent_flags;
use tessera_cuda::cudarc::driver::{CudaEvent, CudaFunction, DevicePtr, LaunchConfig, PushKernelArg};
use tessera_cuda::graph::{KernelNode, TimedKernel};
use tessera_cuda::library::{BANDWIDTH_SOURCE, FillList, GatherList, RECORDS_SOURCE, SortKeys};
use tessera_cuda::{DeviceBuffer, GpuDevice, GpuStream, KernelCache, QueryStream};
use tessera_ir::{AggFunc, Expr, HashTableId, MarkBuild, Operator, Pipeline, ResultId, Scalar, Sink, Source, Type};
use tessera_storage::LoadedTable;

use crate::build_cache::{BuildCache, BuildKey, Fingerprinted};
use crate::experiments::ExecExperiments;
use crate::group_columns;

/// Under `tessera.device = 'auto'`, smaller inputs stay on the CPU, where a pipeline
/// over a few thousand rows takes less than a launch and the download of its result.
/// 64 Ki rows: with 1 Mi rows (the value until 2026-11-27), TPC-H SF 1's 800 K partsupp
/// and 150 K customer rows stayed on the CPU, and q02, q11, q13, q16, q20 and q22 took
/// 40.6, 19.2, 6.0, 19.5, 4.9 and 16.8 ms with the GPU present against 0.9, 1.9, 1.1,
/// 5.3, 0.7 and 8.7 with 64 Ki; the 22 queries 125.9 against 37.2 ms (the CPU backend
/// 508.5 / 505.1 in the same processes), and TPC-H SF 10 took 184.3 ms with 64 Ki (H200,
/// warm, all answers checked; `benchmarks/results/gpu-2026-11-27b/` run 4). The first
/// run of a query over columns not yet on the GPU pays their upload, as a larger one does.
pub const GPU_MIN_ROWS: u64 = 1 << 16;


/// Under `tessera.device = 'auto'`, an aggregation straight over a scan (projections
/// only: its group estimate is then the grouped columns' distinct count from the
/// statistics, not a guess through filters and joins) expecting more groups than
/// 1/`GPU_MAX_GROUP_FRACTION` of its rows stays on the CPU: the GPU's groups are
/// downloaded and turned into Arrow on the host at about 55 ns a group, while the CPU
/// backend aggregates them in parallel. TPC-H SF 10 q18 on the H200 host (2026-11-25):
/// 15 M groups of `l_orderkey` from 60 M rows took 822 ms on the host after a 5.6 ms
/// kernel, the CPU backend's whole aggregation 414 ms on 16 cores. Measured again
/// (2026-11-25c, `gpu-h200-2026-11-25c/log6`, host phases in EXPLAIN ANALYZE) with the
/// records taken apart and the columns built in parallel: 397 ms of host time after a
/// 5.6 ms kernel (downloading 480 MB of records 73 ms, splitting them 72 ms, building
/// the columns 243 ms) against 279 ms for the CPU's whole aggregation — the rule stays.
/// (Filtered or joined inputs keep the GPU: their estimates run far high, e.g. q03's
/// 32 M for 114 K groups. So does an aggregation whose HAVING the GPU applies: only the
/// groups that pass come back — q18's 624 of 15 M — and when a HAVING keeps most of them
/// the cost is the measure above, about 1.4x the CPU's aggregation.)
pub const GPU_MAX_GROUP_FRACTION: u64 = 8;

/// Longest a query waits to be admitted to the GPU ([`GpuRuntime::admit`]) while running
/// queries hold the memory it needs, before it runs on the CPU backend instead. A GPU
/// query takes milliseconds to a few seconds (TPC-H SF 10's longest, q18 with its
/// uploads, about 1 s on the H200 host), so a queue of a few of them clears in this time;
/// past it the GPU is oversubscribed and the CPU's cores are better used than idle.
pub const ADMISSION_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The most group slots whose records one block makes in one launch
/// (`tessera_small_records`: compaction and gathers together), rather than
/// `tessera_count_seen`, `tessera_compact_records_ordered` and `tessera_gather_many` over
/// the whole GPU. One block walks the slots 1024 at a time. On an H200 (2026-11-28 runs
/// 3–4, EXPLAIN ANALYZE) it made the chains of domains of a few slots 5–8 µs shorter
/// (TPC-H q04 0.014 → 0.009 ms, q12 0.017 → 0.009, SSB q4.1 0.016 → 0.011) and those of
/// 4,000–8,000 slots 3–6 µs longer (SSB q2.2 0.018 → 0.024, q2.3 0.015 → 0.021): one
/// block's passes cost more than the launches they save. The experiment variable
/// `TESSERA_EXP_SMALL_RECORDS_MAX=N` sets another bound (0: never).
pub const SMALL_RECORDS_MAX_GROUPS: usize = 2048;

/// The most group slots of an aggregation feeding an ORDER BY whose whole chain (the
/// records made and ranked) is one launch of `tessera_small_sorted_records`, in which
/// every block scans the whole domain's seen flags itself and ranks its share of the records in shared memory, instead of the
/// compaction's, gathers' and rank's launches one after the other (11–23 µs of GPU time
/// for SSB's grouped queries on the H200, 2026-11-28d: each launch waits for the one
/// before). 16,384 slots are 64 KB of flags a block, read from L2; SSB q2.2's and q2.3's
/// domains are 4,000–8,000 slots (2026-11-28's runs), q4.3's 2 M. On an H200
/// (2026-11-28e runs 2 and 5, EXPLAIN ANALYZE) SSB SF 20's chains took 12 against 22 µs
/// (q3.1), 11 against 20 (q4.2), 17 against 23 (q2.1), 6–7 against 11 (q4.1).
/// `TESSERA_EXP_SMALL_SORT_MAX=N` sets another bound (0: never).
pub const SMALL_SORT_MAX_GROUPS: usize = 16384;

/// Shared memory a block of `tessera_small_sorted_records` holds its records in: 40 KiB,
/// within the 48 KiB a block takes without opting in, with the kernel's own few words
/// (1,706 records of three words; SSB's results have at most 800). More records than fit
/// come back in group-number order for the host's sort.
const SMALL_SORT_SHARED_BYTES: usize = 40 << 10;

/// Threads a block of `tessera_small_sorted_records`: 32 slots each over the largest
/// domain it takes.
const SMALL_SORT_THREADS: u32 = 512;

/// The most lists (`tessera_list_seen`'s blocks) `tessera_listed_sorted_records` takes:
/// `TESSERA_MAX_LISTS` in `records.cuh`, the starts it keeps in shared memory.
const LISTED_CHAIN_MAX_LISTS: usize = 1024;

/// The build cache (`crate::build_cache`) keeps at most 1/`BUILD_CACHE_SHARE` of the GPU
/// memory limit: enough for every SSB and TPC-H build of SF 10–20 that repeats, while
/// the cached columns, whose uploads cost far more to redo, keep the rest.
const BUILD_CACHE_SHARE: usize = 8;

/// The build cache keeps only tables built from stored tables of at most this many rows:
/// dimension-sized builds, whose cost is mostly fixed (a launch, its timing events, the
/// probe waiting for them: SSB SF 20's builds read 0.2–7 MB each beside their probes'
/// 1.4–2.4 GB), rather than builds over the large tables, whose cost is the query's own
/// work. Kept, those made a repeated query skip most of its work (2026-11-28d run 2,
/// H200: TPC-H SF 10's q21 1.38 ms against 10.85, q04 0.15 against 1.61, with
/// lineitem's and orders' tables kept), so a rerun no longer measured the query, and
/// each took hundreds of MB (q03's 33.5 M-slot orders table). 2^22 rows keeps every
/// SSB dimension to SF 100 (customer 3 M rows) and TPC-H SF 10's part (2 M), customer
/// (1.5 M), supplier, nation and region, not its orders (15 M), partsupp (8 M) or
/// lineitem.
pub const BUILD_CACHE_MAX_ROWS: u64 = 1 << 22;

/// Groups of a GPU aggregation from which its result columns are built on a thread
/// each (the same bound as a thread's share when group records are taken apart).
const PARALLEL_COLUMN_BUILD_MIN_GROUPS: usize = 1 << 16;

/// The estimated groups of `pipe` if it is such an aggregation (see
/// [`GPU_MAX_GROUP_FRACTION`]) over `rows` rows. The experiment variable
/// `TESSERA_EXP_MANY_GROUPS_ON_GPU=1` turns the rule off (to measure the GPU's side).
pub fn too_many_groups(pipe: &Pipeline, rows: u64) -> Option<u64> {
    if ExecExperiments::get().many_groups_on_gpu {
        return None;
    }
    let Sink::Aggregate(a) = &pipe.sink else { return None };
    let strategy = a.reduced.as_ref().map_or(&a.strategy, |r| &r.strategy);
    let tessera_ir::GroupStrategy::Hash { estimated_groups, .. } = strategy else { return None };
    let straight = pipe.operators.iter().all(|o| matches!(o, Operator::Project { .. }));
    (straight && *estimated_groups > rows / GPU_MAX_GROUP_FRACTION).then_some(*estimated_groups)
}

/// A column uploaded to the GPU.
pub enum GpuBuf {
    /// 32-bit values.
    I32(DeviceBuffer<i32>),
    /// 64-bit values.
    I64(DeviceBuffer<i64>),
    /// A stored column in bit-packed tiles, as stored (`tessera_storage::PackedColumn`),
    /// decoded by the kernels where they load it.
    Packed(DeviceBuffer<u64>),
    /// A column narrowed to a byte width (`codegen::Narrow`): each value less `reference`.
    Narrow {
        /// The column's smallest value (its zone map's), `col{i}_ref` to the kernels.
        reference: i64,
        /// The values' distances from it.
        distances: NarrowBuf,
    },
    /// Strings without a dictionary: offsets (rows + 1) into their UTF-8 bytes.
    Str {
        /// Row `r`'s bytes are `bytes[offsets[r]..offsets[r + 1]]`.
        offsets: DeviceBuffer<i64>,
        /// The bytes of all rows, consecutive.
        bytes: DeviceBuffer<u8>,
    },
    /// A stored column whose data holds NULLs (`GpuColumn::nullable`): its values (plain,
    /// never packed) and its validity bitmap, cached together.
    Nullable {
        /// The values (NULL rows' mean nothing).
        values: Box<GpuBuf>,
        /// One bit a row, set where the row is not NULL (see `host_validity`).
        validity: DeviceBuffer<u32>,
    },
}

/// The distances of a narrowed column, at its width.
pub enum NarrowBuf {
    /// `uint8_t` distances.
    U8(DeviceBuffer<u8>),
    /// `uint16_t` distances.
    U16(DeviceBuffer<u16>),
    /// `uint32_t` distances.
    U32(DeviceBuffer<u32>),
    /// Distances bit-packed `bits` a row (`Narrow::Bits`, `codegen::pack_bits`).
    Bits {
        /// The packed words (at least one).
        words: DeviceBuffer<u32>,
        /// Bits a row, 1 to 31.
        bits: u8,
    },
    /// Runs of repeated distances (`Narrow::Runs`, `codegen::fill_runs`).
    Runs {
        /// Two words a 32 rows (at least two): where runs start, and the run of the
        /// first of the 32.
        directory: DeviceBuffer<u32>,
        /// Each run's distance, in a byte form (at least one).
        values: Box<NarrowBuf>,
        /// The form's estimated rows a run.
        per_run: u8,
    },
}

impl NarrowBuf {
    fn form(&self) -> Narrow {
        match self {
            NarrowBuf::U8(_) => Narrow::U8,
            NarrowBuf::U16(_) => Narrow::U16,
            NarrowBuf::U32(_) => Narrow::U32,
            NarrowBuf::Bits { bits, .. } => Narrow::Bits(*bits),
            NarrowBuf::Runs { values, per_run, .. } => Narrow::Runs { value: values.form().bytes() as u8, per_run: *per_run },
        }
    }

    /// The run values of a column of runs (0 for other forms).
    fn run_values_ptr(&self, device: &GpuDevice) -> u64 {
        match self {
            NarrowBuf::Runs { values, .. } => values.ptr(device),
            _ => 0,
        }
    }

    fn ptr(&self, device: &GpuDevice) -> u64 {
        let stream = device.stream();
        match self {
            NarrowBuf::U8(b) => b.as_slice().device_ptr(stream).0,
            NarrowBuf::U16(b) => b.as_slice().device_ptr(stream).0,
            NarrowBuf::U32(b) | NarrowBuf::Bits { words: b, .. } | NarrowBuf::Runs { directory: b, .. } => b.as_slice().device_ptr(stream).0,
        }
    }

    fn num_bytes(&self) -> usize {
        match self {
            NarrowBuf::U8(b) => b.num_bytes(),
            NarrowBuf::U16(b) => b.num_bytes(),
            NarrowBuf::U32(b) | NarrowBuf::Bits { words: b, .. } => b.num_bytes(),
            NarrowBuf::Runs { directory, values, .. } => directory.num_bytes() + values.num_bytes(),
        }
    }
}

impl GpuBuf {
    fn ptr(&self, device: &GpuDevice) -> u64 {
        let stream = device.stream();
        match self {
            GpuBuf::Narrow { distances, .. } => distances.ptr(device),
            GpuBuf::I32(b) => b.as_slice().device_ptr(stream).0,
            GpuBuf::I64(b) | GpuBuf::Str { offsets: b, .. } => b.as_slice().device_ptr(stream).0,
            GpuBuf::Packed(b) => b.as_slice().device_ptr(stream).0,
            GpuBuf::Nullable { values, .. } => values.ptr(device),
        }
    }

    /// The bytes of a string column (0 for other columns).
    fn bytes_ptr(&self, device: &GpuDevice) -> u64 {
        match self {
            GpuBuf::Str { bytes, .. } if !bytes.is_empty() => bytes.as_slice().device_ptr(device.stream()).0,
            GpuBuf::Nullable { values, .. } => values.bytes_ptr(device),
            _ => 0,
        }
    }

    /// The run values of a column of runs (0 for other columns).
    fn run_values_ptr(&self, device: &GpuDevice) -> u64 {
        match self {
            GpuBuf::Narrow { distances, .. } => distances.run_values_ptr(device),
            GpuBuf::Nullable { values, .. } => values.run_values_ptr(device),
            _ => 0,
        }
    }

    /// The validity bitmap of a column with NULLs (0 for other columns).
    fn validity_ptr(&self, device: &GpuDevice) -> u64 {
        match self {
            GpuBuf::Nullable { validity, .. } => validity.as_slice().device_ptr(device.stream()).0,
            _ => 0,
        }
    }

    /// Bytes on the device, a validity bitmap's included (what the bandwidth model counts).
    fn bytes(&self) -> usize {
        match self {
            GpuBuf::I32(b) => b.num_bytes(),
            GpuBuf::I64(b) => b.num_bytes(),
            GpuBuf::Packed(b) => b.num_bytes(),
            GpuBuf::Narrow { distances, .. } => distances.num_bytes(),
            GpuBuf::Str { offsets, bytes } => offsets.num_bytes() + bytes.num_bytes(),
            GpuBuf::Nullable { values, validity } => values.bytes() + validity.num_bytes(),
        }
    }

    fn width_bytes(&self) -> usize {
        match self {
            GpuBuf::I32(_) => 4,
            GpuBuf::I64(_) | GpuBuf::Packed(_) | GpuBuf::Str { .. } => 8,
            GpuBuf::Narrow { distances, .. } => distances.form().bytes(),
            GpuBuf::Nullable { values, .. } => values.width_bytes(),
        }
    }

    /// A narrowed column's reference (0 for other columns).
    fn reference(&self) -> i64 {
        match self {
            GpuBuf::Narrow { reference, .. } => *reference,
            _ => 0,
        }
    }

    /// Whether the buffer is `col`'s form of its column: packed or not, narrowed to its
    /// width or not, with a validity bitmap or not.
    fn is_form_of(&self, col: &GpuColumn) -> bool {
        let narrow = match self {
            GpuBuf::Narrow { distances, .. } => Some(distances.form()),
            _ => None,
        };
        matches!(self, GpuBuf::Packed(_)) == col.packed && narrow == col.narrow && matches!(self, GpuBuf::Nullable { .. }) == col.nullable
    }
}

/// The GPU column cache: columns by (table, table version, column), with a use tick for
/// least-recently-used eviction under the memory limit.
#[derive(Default)]
struct ColumnCache {
    map: HashMap<(String, u64, usize), CachedColumn>,
    tick: u64,
}

impl ColumnCache {
    /// Column `key` in form `col` when cached, marked used now; a stream that may still
    /// be uploading it (`ready` not complete) makes `gs` wait for it first.
    fn hit(&mut self, key: &(String, u64, usize), col: &GpuColumn, gs: &GpuStream) -> Result<Option<Arc<GpuBuf>>> {
        self.tick += 1;
        let tick = self.tick;
        let Some(e) = self.map.get_mut(key).filter(|e| e.buf.is_form_of(col)) else { return Ok(None) };
        e.last_used = tick;
        if let Some(ready) = &e.ready {
            if ready.is_complete() {
                e.ready = None;
            } else {
                gs.wait(ready)?;
            }
        }
        Ok(Some(Arc::clone(&e.buf)))
    }
}

struct CachedColumn {
    buf: Arc<GpuBuf>,
    last_used: u64,
    /// Recorded on the uploading query's stream after the upload: other queries' streams
    /// wait for it before reading the column. None once the upload is known complete:
    /// later readers then queue nothing (a stream wait is a driver call per column and
    /// pipeline).
    ready: Option<Arc<CudaEvent>>,
}

/// The tiles the zone maps rule out for `gp`'s kernel (one with `Param::Zones` over a
/// stored table): the bitmap, and the share of rows kept (what the bandwidth model
/// counts).
fn zoned(gp: &GpuPipeline) -> Option<&(Vec<u32>, f64)> {
    match &gp.pipeline.source {
        Source::Scan(_) if gp.kernel.params.contains(&Param::Zones) => gp.zones.as_deref(),
        _ => None,
    }
}

/// A run's upload of its kernel's constants and zone bitmap, freed in stream order once
/// the kernel is queued.
struct ConstsZones {
    consts: Option<DeviceBuffer<i64>>,
    zones: Option<DeviceBuffer<u32>>,
}

impl ConstsZones {
    /// The constants' and the bitmap's addresses (0: none), and the share of `gp`'s rows
    /// the zones keep (None: no zones).
    fn ptrs(&self, dev: &GpuDevice, gp: &GpuPipeline) -> (u64, u64, Option<f64>) {
        let consts = self.consts.as_ref().map_or(0, |c| c.as_slice().device_ptr(dev.stream()).0);
        let zones = self.zones.as_ref().map_or(0, |z| z.as_slice().device_ptr(dev.stream()).0);
        (consts, zones, zoned(gp).map(|(_, kept)| *kept))
    }
}

/// A pipeline's kernel as queued ([`GpuRuntime::launch`], [`GpuRuntime::launch_early`]):
/// what the rest of its run reads.
struct Launched {
    /// Rows it reads.
    rows: usize,
    /// Its columns' buffers (None: a string column it reads only as row numbers).
    col_bufs: Vec<Option<Arc<GpuBuf>>>,
    /// Its sink's arrays (their fills queued already).
    sink: SinkArrays,
    /// What sets the arrays again for the pipeline's next run, when it keeps them.
    refill: Option<Fills>,
    keeps_spare: bool,
    /// The query's flags came with (or were made for) this run's arrays.
    spare_flags: bool,
    /// The share of its rows the zone maps keep (None: no zones).
    zoned: Option<f64>,
    /// When the run started, and when each step before the launch was done.
    started: Instant,
    found: Instant,
    allocated: Instant,
    parameters: Instant,
    filled: Instant,
    timed: Instant,
    kernel_queued: Instant,
    before: TimingEvent,
    after: TimingEvent,
    consts_zones: ConstsZones,
}

/// A query's one kernel launched at admission ([`GpuRuntime::launch_early`]), for the
/// run of its pipeline to take up ([`GpuRuntime::run`]).
struct EarlyLaunch {
    /// The pipeline's [`preset_key`].
    key: usize,
    /// The version of the table it read.
    version: u64,
    launched: Launched,
}

/// One pipeline's GPU run, for reports.
#[derive(Debug, Clone)]
pub struct GpuRun {
    /// Pipeline id.
    pub pipeline: usize,
    /// Kernel time between CUDA events recorded around the launch, ms.
    pub kernel_ms: f64,
    /// Host time of the whole pipeline: column lookups (and uploads), output
    /// allocation, launch, synchronization and fetching the result, ms.
    pub host_ms: f64,
    /// Bytes of source columns the kernel reads at most (the bandwidth model's input).
    pub bytes: u64,
    /// Rows in.
    pub rows: u64,
    /// Rows out: groups of an aggregate, slots of a hash table.
    pub rows_out: u64,
    /// Where the host time went: (phase, ms since the pipeline started) at the end of
    /// each — up to the launch for builds, through the columns built for results.
    pub phases: Vec<(&'static str, f64)>,
}

impl GpuRun {
    /// A report of pipeline `pipeline` with nothing measured yet.
    pub fn new(pipeline: usize) -> GpuRun {
        GpuRun { pipeline, kernel_ms: 0.0, host_ms: 0.0, bytes: 0, rows: 0, rows_out: 0, phases: Vec::new() }
    }
}

/// The CUDA events recorded before and after a pipeline's GPU work.
type Timing = (TimingEvent, TimingEvent);

/// A run's report and the events its kernel time is read from when the report is asked
/// for ([`GpuRuntime::last_runs`]), not while the query waits: reading an event's time
/// is a driver call of 1–3 µs on the H200's host, and a query of SSB SF 20 read one to
/// three (2026-11-28f run 8's traces: 39 µs of the 13 queries' ~5.2 ms).
struct PendingRun {
    run: GpuRun,
    timing: Option<Timing>,
}

/// The GPU side of the executor: device, kernel cache and column cache.
pub struct GpuRuntime {
    device: Arc<GpuDevice>,
    kernels: KernelCache,
    columns: Mutex<ColumnCache>,
    /// The memory limit when no `tessera.gpu_memory_limit` is set.
    default_limit: usize,
    /// Which stored tables go up compact (`tessera.gpu_compact_tables`).
    compact: Mutex<CompactTables>,
    /// Runs of the last query, their kernel times still to be read from their events
    /// ([`GpuRuntime::last_runs`]).
    last_runs: Mutex<Vec<PendingRun>>,
    /// Host time the last query spent deciding placement and generating (and finding
    /// in the kernel cache) its kernels, ms.
    pub last_placement_ms: Mutex<f64>,
    /// How kernels are generated (`tessera.kernel_literals`, `tessera.gpu_items_per_thread`).
    options: Mutex<KernelOptions>,
    /// The last query's admission: bytes reserved and ms waited for them.
    pub last_admission: Mutex<(usize, f64)>,
    bandwidth: std::sync::OnceLock<Option<f64>>,
    /// The helper kernels looked up so far, by name.
    helper_fns: Mutex<HashMap<&'static str, CudaFunction>>,
    /// Timing events no pipeline holds, for the next launches (see [`GpuRuntime::event`]).
    events: Arc<Mutex<Vec<CudaEvent>>>,
    /// Hash tables built from stored tables, kept for later runs of the same builds
    /// (`crate::build_cache`).
    builds: Mutex<BuildCache<GpuHashTable>>,
    /// Bytes of the spare sink arrays pipelines keep ([`SpareSink`]).
    spare_bytes: Arc<AtomicUsize>,
    /// The slots that have held spare sink arrays, for [`GpuRuntime::make_room`] to empty.
    spare_slots: Mutex<Vec<std::sync::Weak<Mutex<Option<SpareSink>>>>>,
}

impl std::fmt::Debug for GpuRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuRuntime").field("device", &self.device.name()).finish()
    }
}

/// The arrays a pipeline's sink starts from, each (address, 32-bit words, 64-bit
/// pattern), set by [`GpuRuntime::apply_fills`] in one launch before the pipeline's
/// kernel (a query's builds: all of theirs in one launch at admission,
/// [`GpuRuntime::preset_sinks`]). A memset apiece cost 3.6 µs of host time on the H200's host: 0.62 ms of the
/// 1.16 ms a round of SSB SF 20's 49 pipeline runs spent before their launches, 3.5
/// arrays a run (2026-11-27e run 1); with one launch, SSB SF 20 took 8.7-8.9 ms against
/// 9.6-10.3 (run 2, in turns).
#[derive(Default, Clone)]
struct Fills(Vec<(u64, u64, u64)>);

impl Fills {
    /// Bytes the fill sets.
    fn bytes(&self) -> u64 {
        self.0.iter().map(|&(_, words, _)| 4 * words).sum()
    }
}

/// A pipeline's sink arrays (see [`GpuRuntime::sink_arrays`]): what its kernel writes,
/// by what it is, and the fills that set them before it runs.
struct SinkArrays {
    /// A build's payload columns or a materialization's columns.
    out_bufs: Vec<GpuBuf>,
    /// A build's row array (dense tables: finds duplicate keys) and its index.
    build: Option<(Option<DeviceBuffer<i32>>, TableIndex)>,
    /// An aggregation's accumulator arrays (then its packed keys, when hashed), or a
    /// materialization's row count.
    accs: Vec<DeviceBuffer<u64>>,
    /// Words per group of each array in `accs` (aggregations).
    acc_words: Vec<usize>,
    /// An aggregation's seen flags.
    seen: Option<DeviceBuffer<u32>>,
    /// A mark sink's marks.
    marks_buf: Option<DeviceBuffer<u32>>,
    /// The arrays' addresses by the kernel parameter they are (see `Out`).
    out_ptrs: Vec<(OutSlot, u64)>,
    /// What a build probed by a NULL-aware anti join saw: two flags, clear.
    build_seen: Option<DeviceBuffer<u32>>,
    /// The fills not queued yet: all of them for arrays allocated when the pipeline
    /// runs, none for arrays set up at admission, unless they are large enough to be
    /// timed with the kernel ([`TIMED_FILL_MIN_BYTES`]).
    fills: Fills,
}

impl SinkArrays {
    /// No arrays.
    fn empty() -> SinkArrays {
        SinkArrays { out_bufs: Vec::new(), build: None, accs: Vec::new(), acc_words: Vec::new(), seen: None, marks_buf: None, out_ptrs: Vec::new(), build_seen: None, fills: Fills::default() }
    }

    /// Device bytes of the arrays.
    fn bytes(&self) -> usize {
        self.accs.iter().map(|a| a.num_bytes()).sum::<usize>() + self.seen.as_ref().map_or(0, |s| s.num_bytes())
    }
}

/// An aggregation's sink arrays kept for its pipeline's next run ([`GpuPipeline::spare`]),
/// set to their start values again: that run takes them and launches its kernel with no
/// allocation and no fill before it. The fill that sets them again (`refill`) is queued
/// behind the copies that bring the run's groups back, while the host waits for those
/// anyway (see [`GpuRuntime::finish`]); they go back to the pipeline when the query has
/// finished without error and its stream is done (see [`Lane`]'s drop). Before this, the
/// probe of each warm SSB SF 20 query spent ~4.5 µs of host time queuing its fill and
/// ~1.4 µs allocating its arrays just before its launch, with the GPU idle (2026-11-28d
/// run 4's traces). With spares and the one-launch sort chain ([`SMALL_SORT_MAX_GROUPS`]),
/// SSB SF 20 took 5.33 against 5.50 ms on an H200, lower in
/// 17 of 20 rounds in turns (2026-11-28e run 10; the traced fills before the probes 2.5
/// against 76 µs in all, run 8). Only arrays of at most [`SPARE_SINK_MAX_BYTES`] are kept, and at most
/// 1/[`SPARE_SINKS_SHARE`] of the memory limit in all; `TESSERA_EXP_SPARE_SINKS=0` turns
/// it off.
pub struct SpareSink {
    arrays: SinkArrays,
    /// What sets the arrays (and `flags`) to their start values.
    refill: Fills,
    /// Error flags, clear, for a query whose first GPU pipeline this is.
    flags: Option<DeviceBuffer<u64>>,
    bytes: usize,
    /// The bytes of every spare kept ([`GpuRuntime::spare_bytes`]), less these when dropped.
    count: Arc<AtomicUsize>,
}

impl SpareSink {
    /// The arrays and what sets them again, for a run taking them; the query's `flags`
    /// too, from these, when it has none yet (then true: they go back with the arrays).
    fn take_for_run(mut self, flags: &mut Option<DeviceBuffer<u64>>) -> (SinkArrays, Fills, bool) {
        let mut with_flags = false;
        if flags.is_none() {
            *flags = self.flags.take();
            with_flags = flags.is_some();
        }
        (std::mem::replace(&mut self.arrays, SinkArrays::empty()), std::mem::take(&mut self.refill), with_flags)
    }
}

impl std::fmt::Debug for SpareSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpareSink").field("bytes", &self.bytes).finish()
    }
}

impl Drop for SpareSink {
    fn drop(&mut self) {
        self.count.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Where a pipeline keeps its spare sink arrays: shared with the runs that take them.
pub type SpareSlot = Arc<Mutex<Option<SpareSink>>>;

/// The largest sink arrays (with the query's flags) a pipeline keeps between runs: every
/// SSB aggregation's (q4.3's 2 M slots of a seen flag and a two-word sum are 40 MB, whose
/// fill is ~13 µs of GPU time before its probe), not a hash aggregation's over millions
/// of groups (TPC-H q18's 15 M slots).
const SPARE_SINK_MAX_BYTES: usize = 64 << 20;

/// Spare sink arrays take at most 1/`SPARE_SINKS_SHARE` of the GPU memory limit in all.
/// Admission counts them as pinned; an allocation that needs their room drops them all
/// first ([`GpuRuntime::make_room`]): they cost a fill to make again.
const SPARE_SINKS_SHARE: usize = 32;

/// A run's sink arrays on their way back to their pipeline once the query is done.
struct PendingSpare {
    slot: SpareSlot,
    spare: SpareSink,
    /// The query's flags go back with them (the pipeline's run took or made them).
    with_flags: bool,
}

/// How a query's preset sink arrays are found again: the pipeline's address (the
/// placement's `Arc` holds it for the whole run; a mark sink's build, planned apart, is
/// another pipeline).
fn preset_key(gp: &GpuPipeline) -> usize {
    std::ptr::from_ref(gp) as usize
}

/// Fills of at least this many bytes (a large hash table's arrays) are timed with their
/// pipeline's kernel: the GPU time they take is the pipeline's (about 20 µs and more at
/// the H200's ~3 TB/s of writes). A smaller fill is not: the start event would then be
/// recorded before the fill's launch is queued, and on an idle GPU it would count the
/// host's ~5 µs of queueing it as kernel time.
const TIMED_FILL_MIN_BYTES: u64 = 64 << 20;

/// Timing events kept for reuse at most (a query's pipelines hold two each until its
/// result comes back; TPC-H's queries run up to 11 pipelines).
const KEPT_EVENTS: usize = 64;

/// A CUDA event timing a kernel (recorded before and after it): one of the runtime's
/// events, given back to them when dropped (creating and destroying a pair cost four
/// driver calls a launch), or one of a pipeline's kernel graph
/// ([`tessera_cuda::graph::TimedKernel`]), which the graph records again only once no
/// report holds it.
enum TimingEvent {
    Kept { event: Option<CudaEvent>, kept: Arc<Mutex<Vec<CudaEvent>>> },
    Graph(Arc<CudaEvent>),
}

impl std::ops::Deref for TimingEvent {
    type Target = CudaEvent;
    fn deref(&self) -> &CudaEvent {
        match self {
            // Taken only in `drop`.
            TimingEvent::Kept { event, .. } => event.as_ref().unwrap_or_else(|| unreachable!("a timing event read after its drop")),
            TimingEvent::Graph(e) => e,
        }
    }
}

impl Drop for TimingEvent {
    fn drop(&mut self) {
        // Recording it again later is safe whatever it still waits for: only the
        // latest recording counts, and nothing else holds it.
        if let TimingEvent::Kept { event, kept } = self
            && let (Some(e), Ok(mut kept)) = (event.take(), kept.lock())
            && kept.len() < KEPT_EVENTS
        {
            kept.push(e);
        }
    }
}

/// The time between two timing events, ms, read once the stream they were recorded on
/// has been waited for (after [`GpuRuntime::finish`]): one driver call, where cudarc's
/// `elapsed_ms` first waits for each event (three). Waits only if one is not done yet.
fn elapsed_ms(before: &CudaEvent, after: &CudaEvent) -> Result<f64> {
    // SAFETY: both events are alive (borrowed) and belong to the runtime's context.
    match unsafe { tessera_cuda::cudarc::driver::result::event::elapsed(before.cu_event(), after.cu_event()) } {
        Ok(ms) => Ok(f64::from(ms)),
        Err(_) => before.elapsed_ms(after).map(f64::from).map_err(|e| TesseraError::Internal(format!("kernel: {e:?}"))),
    }
}

/// A hash table built on the GPU.
pub struct GpuHashTable {
    shape: GpuTable,
    payload: Vec<GpuBuf>,
    /// For a NULL-aware anti join's table: whether the build saw a row, and a NULL key
    /// (`Out::BuildSeen`).
    seen: Option<DeviceBuffer<u32>>,
    /// What probes test.
    index: TableIndex,
}

impl GpuHashTable {
    /// Bytes on the device.
    fn bytes(&self) -> usize {
        let index = match &self.index {
            TableIndex::Bitmap(b) => b.num_bytes(),
            TableIndex::Keys(k) => k.num_bytes(),
            TableIndex::Chain { keys, heads, next } => keys.as_ref().map_or(0, |k| k.num_bytes()) + heads.num_bytes() + next.num_bytes(),
        };
        self.payload.iter().map(GpuBuf::bytes).sum::<usize>() + self.seen.as_ref().map_or(0, |s| s.num_bytes()) + index
    }
}

/// What probes of a GPU table test.
enum TableIndex {
    /// A dense table's membership bitmap: one bit per slot, set where a row is.
    Bitmap(DeviceBuffer<u32>),
    /// A hashed table's packed keys, one word per slot.
    Keys(DeviceBuffer<u64>),
    /// A chained table's (1:N) keys when hashed, its chain heads (`int32` per slot and
    /// one more, −1 where no row is: stored two a word) and its links (`int32` per build
    /// row).
    Chain { keys: Option<DeviceBuffer<u64>>, heads: DeviceBuffer<u64>, next: DeviceBuffer<i32> },
}

impl TableIndex {
    /// The bitmap or the keys (0: a dense chained table has neither).
    fn ptr(&self, device: &GpuDevice) -> u64 {
        match self {
            TableIndex::Bitmap(b) => b.as_slice().device_ptr(device.stream()).0,
            TableIndex::Keys(k) | TableIndex::Chain { keys: Some(k), .. } => k.as_slice().device_ptr(device.stream()).0,
            TableIndex::Chain { keys: None, .. } => 0,
        }
    }

    /// A chained table's heads and links (0, 0 for other tables).
    fn chain_ptrs(&self, device: &GpuDevice) -> (u64, u64) {
        match self {
            TableIndex::Chain { heads, next, .. } => (heads.as_slice().device_ptr(device.stream()).0, next.as_slice().device_ptr(device.stream()).0),
            _ => (0, 0),
        }
    }
}

/// A probed table as a kernel's parameters see it: payload arrays (and the validity
/// bitmaps of those that may be NULL, 0 for the others), bitmap or keys, chain heads and
/// links.
struct Probed {
    payload: Vec<u64>,
    payload_valid: Vec<u64>,
    seen: u64,
    index: u64,
    heads: u64,
    next: u64,
}

/// What a dictionary's codes stand for (see `DictRef`).
#[derive(Clone)]
enum DictValues {
    /// A stored column's sorted dictionary: code `i` is entry `i`.
    Values(ArrayRef),
    /// A stored string column without a dictionary: code `i` is row `i` (`DictRef::by_row`).
    Rows(Arc<LoadedTable>, usize),
    /// A string column of an intermediate result on the host, by result and column: code
    /// `i` is its row `i` (the result is known only when the query runs, see
    /// [`GpuQueryState::hold_result`]).
    ResultRows(usize, usize),
}

/// Per query: tables built on the GPU and dictionaries by id.
#[derive(Default)]
pub struct GpuQueryState {
    /// The tables built or taken from the build cache so far.
    tables: HashMap<HashTableId, Arc<GpuHashTable>>,
    /// Tables this query built that the build cache may keep, once the query's error
    /// flags have come back clean ([`GpuRuntime::finish`]).
    built: Vec<(Arc<Fingerprinted>, Arc<GpuHashTable>)>,
    /// Shared by the placement and its runs' copies ([`GpuQueryState::planned_copy`]), as
    /// are `sorts`, `havings`, `result_layouts` and `kept`: placement fills them, runs
    /// only read them.
    dictionaries: Arc<Vec<DictValues>>,
    /// The query's error flags (overflow, build key out of range, duplicate build key),
    /// shared by its kernels and read once, when a pipeline's result comes back.
    flags: Option<DeviceBuffer<u64>>,
    /// Pipelines launched but not yet waited for (hash-table builds): their reports and
    /// the CUDA events around their kernels.
    pending: Vec<PendingRun>,
    /// Sorts run with an aggregation, by the aggregation's pipeline.
    pub sorts: Arc<HashMap<usize, GpuSort>>,
    /// HAVINGs applied to an aggregation's groups on the GPU, by the aggregation's
    /// pipeline.
    pub havings: Arc<HashMap<usize, GpuHaving>>,
    /// Sort pipelines whose input came back sorted from the GPU.
    pub sorted: std::collections::HashSet<usize>,
    /// How each GPU aggregation's result reads as device columns, by result, where it
    /// can ([`result_layout`]); a pipeline reading such a result is planned over them.
    pub result_layouts: Arc<HashMap<usize, Vec<ResultColumn>>>,
    /// Results kept on the GPU for the pipelines reading them there, by result: whether
    /// the host needs them too (set by placement).
    pub kept: Arc<HashMap<usize, bool>>,
    /// The results kept on the GPU so far in this run.
    kept_results: HashMap<usize, KeptResult>,
    /// The results on the host that GPU pipelines of this run read, by result: their
    /// strings ride through kernels as row numbers (`DictValues::ResultRows`).
    result_tables: HashMap<usize, Arc<LoadedTable>>,
    /// Sink arrays set up at admission, by pipeline ([`preset_key`]), each taken by the
    /// pipeline's run.
    preset: HashMap<usize, SinkArrays>,
    /// Hash-table builds whose tables were taken from the build cache at admission, by
    /// pipeline: the executor skips their runs ([`GpuQueryState::took_build`]).
    taken: HashSet<usize>,
    /// The fill that sets a running aggregation's arrays for its pipeline's next run,
    /// queued by the next [`GpuRuntime::finish`] behind its copies ([`SpareSink`]).
    refill: Option<Fills>,
    /// The GPU memory limit when placement began (None: unknown, as for kernels planned
    /// without a GPU): a stored table taking more than half of it goes up compact
    /// ([`compact_table`]).
    pub memory_limit: Option<usize>,
    /// Which stored tables go up compact when placement began ([`compact_table`]).
    pub compact: CompactTables,
    /// The query's stream and the cached columns its kernels read (last: the tables
    /// above are freed first).
    lane: Lane,
}

/// A query's stream ([`GpuRuntime::admit`]) and the cached columns its kernels read.
#[derive(Default)]
struct Lane {
    stream: Option<Arc<QueryStream>>,
    held: Vec<Arc<GpuBuf>>,
    /// Tables taken from the build cache: freed, once evicted, on the stream that built
    /// them, so this query's kernels must be done with them first, as with `held`.
    tables: Vec<Arc<GpuHashTable>>,
    /// Sink arrays to give back to their pipelines ([`SpareSink`]) once the stream is
    /// done (their fills may still be running), if the query finished without error
    /// (`done`, [`GpuQueryState::complete`]).
    spares: Vec<PendingSpare>,
    done: bool,
    /// The kernel launched at admission, until its pipeline's run takes it up; dropped
    /// unread (the query failed first) only after the stream is done with its arrays.
    early: Option<EarlyLaunch>,
}

impl Drop for Lane {
    fn drop(&mut self) {
        // A cached column that no query holds may be evicted, and its memory freed on the
        // stream that uploaded it: this query's kernels must be done with it first.
        if let Some(stream) = &self.stream {
            if !self.held.is_empty() || !self.tables.is_empty() || !self.spares.is_empty() || self.early.is_some() {
                let synchronized = stream.synchronize().is_ok();
                tessera_common::trace::mark("stream synchronized");
                if synchronized && self.done {
                    for p in self.spares.drain(..) {
                        if let Ok(mut slot) = p.slot.lock()
                            && slot.is_none()
                        {
                            *slot = Some(p.spare);
                        }
                    }
                }
            }
        }
    }
}

impl GpuQueryState {
    /// Holds result `id`, on the host, as the table a GPU pipeline reads it as, for its
    /// strings to be found again by row number when rows come back.
    pub fn hold_result(&mut self, id: usize, table: Arc<LoadedTable>) {
        self.result_tables.insert(id, table);
    }

    /// Whether pipeline `id` is a build whose table was taken from the build cache at
    /// admission (its run has nothing to do).
    pub fn took_build(&self, id: usize) -> bool {
        self.taken.contains(&id)
    }

    /// The query finished without error: its pipelines' spare sink arrays (with its
    /// error flags, clear again after their last read) go back once its stream is done.
    pub fn complete(&mut self) {
        if let Some(p) = self.lane.spares.iter_mut().find(|p| p.with_flags) {
            p.spare.flags = self.flags.take();
            if p.spare.flags.is_none() {
                return;
            }
        }
        self.lane.done = true;
    }

    /// The query's stream: an error before [`GpuRuntime::admit`].
    fn lane(&self) -> Result<Arc<QueryStream>> {
        self.lane.stream.clone().ok_or_else(|| TesseraError::Internal("a GPU pipeline of a query not admitted to the GPU".into()))
    }

    /// What placement put here (dictionaries, GPU sorts), without what a run added.
    pub fn planned_copy(&self) -> GpuQueryState {
        GpuQueryState {
            dictionaries: Arc::clone(&self.dictionaries),
            sorts: Arc::clone(&self.sorts),
            havings: Arc::clone(&self.havings),
            result_layouts: Arc::clone(&self.result_layouts),
            kept: Arc::clone(&self.kept),
            memory_limit: self.memory_limit,
            compact: self.compact,
            ..GpuQueryState::default()
        }
    }
}

impl std::fmt::Debug for GpuQueryState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuQueryState").field("tables", &self.tables.len()).field("dictionaries", &self.dictionaries.len()).field("sorts", &self.sorts).field("havings", &self.havings).finish()
    }
}


/// One column of an aggregation's result as `tessera_result_column` (`records.cuh`)
/// makes it from the aggregation's arrays on the GPU, and as the pipelines reading it
/// hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultColumn {
    /// Where the value comes from: 0 a perfect-hash key's slot, 1 a packed hash key, 2
    /// an accumulator (the kernel's `kind`).
    kind: i64,
    /// The kernel's `a`, `b` and `c` for that kind: stride, slots and smallest value of
    /// a perfect-hash key; shift, bits and smallest value of a packed key; words per
    /// group and record kind of an accumulator.
    abc: [i64; 3],
    /// The aggregation's array read (kinds 1 and 2), as the runtime allocates them: each
    /// accumulator's arrays in order, then a hash table's keys.
    array: usize,
    /// The range of the column's type: a value outside it sends the query to the CPU.
    bounds: (i64, i64),
    /// The column as the readers' kernels hold it.
    pub column: GpuColumn,
}

/// An aggregation's result kept on the GPU: its rows and columns (see [`ResultColumn`]).
struct KeptResult {
    rows: usize,
    columns: Vec<Arc<GpuBuf>>,
}

/// How the result of `p`'s aggregation (as generated into `kernel`) reads as device
/// columns, or None where some column cannot: a scalar aggregation (one row, cheap to
/// bring back), a group key that may be NULL, an AVG (its division is the host's), a
/// SUM/MIN/MAX of values that may be NULL (a group may have none), a value whose type
/// kernels do not hold, or a SUM or MIN/MAX whose result type is not its argument's.
fn result_layout(p: &Pipeline, kernel: &Kernel) -> Option<Vec<ResultColumn>> {
    let (SinkLayout::Aggregate { accumulators, keys, hashed, value_dicts, .. }, Sink::Aggregate(full)) = (&kernel.sink, &p.sink) else {
        return None;
    };
    if keys.is_empty() && hashed.is_none() {
        return None;
    }
    // The kernel's columns: those of the reduced form when it has one (see `run`).
    let reduced = full.reduced_form();
    let (a, reorder) = match &reduced {
        Some((r, order)) => (r, Some(order)),
        None => (full, None),
    };
    let held = |ty: Type, dictionary: Option<DictRef>| -> Option<(GpuColumn, (i64, i64))> {
        if dictionary.is_some() {
            return Some((GpuColumn::plain(Width::I32, dictionary), (0, i64::from(i32::MAX))));
        }
        let width = codegen::layout::value_width(ty)?;
        let (lo, hi) = codegen::layout::value_bounds(ty)?;
        Some((GpuColumn::plain(width, None), (i64::try_from(lo).ok()?, i64::try_from(hi).ok()?)))
    };
    let mut cols = Vec::new();
    let mut stride = 1i64;
    for (i, k) in keys.iter().enumerate() {
        let field = a.fields.get(i)?;
        // A group key that may be NULL (its slot 0) comes back to the host: readers'
        // kernels take result columns without NULLs.
        if field.nullable {
            return None;
        }
        let (column, bounds) = held(field.ty, k.dictionary)?;
        let slots = i64::try_from(k.slots).ok()?;
        // Dictionary codes are the slot less one (see `run`).
        let min = if k.dictionary.is_some() { 0 } else { k.min };
        cols.push(ResultColumn { kind: 0, abc: [stride, slots, min], array: 0, bounds, column });
        stride = stride.checked_mul(slots)?;
    }
    let arrays: usize = accumulators.iter().map(|acc| acc.arrays().len()).sum();
    if let Some(pack) = hashed {
        for (i, part) in pack.parts.iter().enumerate() {
            let ty = a.fields.get(i)?.ty;
            // As above: a NULL key's group comes back to the host.
            if part.nullable || (part.dictionary.is_none() && part.ty != ty) {
                return None;
            }
            let (column, bounds) = held(ty, part.dictionary)?;
            cols.push(ResultColumn { kind: 1, abc: [i64::from(part.shift), i64::from(part.bits()), part.min], array: arrays, bounds, column });
        }
    }
    let input_fields = p.sink_input_fields();
    let mut array = 0;
    for (j, acc) in accumulators.iter().enumerate() {
        let ty = a.fields.get(a.group_by.len() + j)?.ty;
        let arg_ty = a.aggregates.get(j)?.arg.as_ref().map(|e| e.ty(&input_fields));
        let dictionary = value_dicts.get(j).copied().flatten();
        let same_value = match acc {
            Accumulator::Count => true,
            // Sums keep their argument's scale (`finish_sum`).
            Accumulator::Sum(_) => match (arg_ty, ty) {
                (Some(Type::Decimal { scale: s, .. }), Type::Decimal { scale, .. }) => s == scale,
                (Some(t), Type::Int64) => codegen::width_of(t).is_some() && !matches!(t, Type::Decimal { .. }),
                _ => false,
            },
            Accumulator::Min | Accumulator::Max => dictionary.is_some() || arg_ty == Some(ty),
            Accumulator::SumCount(_) | Accumulator::MinCount | Accumulator::MaxCount => false,
        };
        if !same_value {
            return None;
        }
        let (column, bounds) = held(ty, dictionary)?;
        let words = i64::try_from(acc.arrays().first()?.0).ok()?;
        cols.push(ResultColumn { kind: 2, abc: [words, acc.record_kind(), 0], array, bounds, column });
        array += acc.arrays().len();
    }
    if let Some(order) = reorder {
        cols = order.iter().map(|&k| cols.get(k).cloned()).collect::<Option<Vec<_>>>()?;
    }
    (cols.len() == full.fields.len()).then_some(cols)
}

/// Group domains at least this large are compacted on the GPU before download (see
/// [`GpuRuntime::fetch_groups`]); below it, downloading the whole domain costs less
/// than the extra launches (64 Ki slots of a SUM are 1 MiB, ~20 µs over PCIe 5).
pub const COMPACT_MIN_GROUPS: usize = 1 << 16;

/// Compacted groups downloaded with the first round trip; more cost a second one. SSB's
/// largest result has 800 groups; 4096 records of a few words are ~100 KB, ~2 µs of PCIe.
pub const COMPACT_HEAD_RECORDS: usize = 4096;

/// A sink array as the launcher holds it: an [`Out`] without its types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutSlot {
    BuildRows,
    BuildPayload(usize),
    BuildPayloadValid(usize),
    BuildBitmap,
    BuildSeen,
    Keys,
    Heads,
    Next,
    Accumulators(usize),
    Counts(usize),
    Seen,
    Marks,
    Count,
    Materialized(usize),
    MaterializedValid(usize),
}

impl OutSlot {
    fn of(o: &Out) -> OutSlot {
        match o {
            Out::BuildRows => OutSlot::BuildRows,
            Out::BuildPayload { column, .. } => OutSlot::BuildPayload(*column),
            Out::BuildPayloadValid { column } => OutSlot::BuildPayloadValid(*column),
            Out::BuildBitmap => OutSlot::BuildBitmap,
            Out::BuildSeen => OutSlot::BuildSeen,
            Out::Keys => OutSlot::Keys,
            Out::Heads => OutSlot::Heads,
            Out::Next => OutSlot::Next,
            Out::Accumulators { aggregate, .. } => OutSlot::Accumulators(*aggregate),
            Out::Counts { aggregate } => OutSlot::Counts(*aggregate),
            Out::Seen => OutSlot::Seen,
            Out::Marks => OutSlot::Marks,
            Out::Count => OutSlot::Count,
            Out::Materialized { column, .. } => OutSlot::Materialized(*column),
            Out::MaterializedValid { column } => OutSlot::MaterializedValid(*column),
        }
    }
}

/// The groups an aggregation saw, in group-number order (or in a [`GpuSort`]'s order),
/// with their accumulators.
struct FetchedGroups {
    order: Vec<usize>,
    /// Per accumulator array, the words of each present group (in `order`), consecutive.
    values: Vec<Vec<u64>>,
    /// Whether any row reached the sink (a scalar aggregate's NULLs).
    any: bool,
    /// Whether the groups come in the [`GpuSort`]'s order.
    sorted: bool,
    /// When each step of fetching them ended (for EXPLAIN ANALYZE's host phases).
    marks: Vec<(&'static str, Instant)>,
}

impl GpuRuntime {
    /// The GPU runtime, or None on a machine without a GPU (or NVRTC).
    pub fn open(kernel_dir: Option<std::path::PathBuf>) -> Option<GpuRuntime> {
        if !tessera_cuda::nvrtc_available() {
            return None;
        }
        let device = GpuDevice::get().ok().flatten()?;
        let default_limit = device.memory().limit();
        Some(GpuRuntime {
            device,
            kernels: KernelCache::new(kernel_dir),
            default_limit,
            compact: Mutex::new(CompactTables::default()),
            columns: Mutex::new(ColumnCache::default()),
            last_runs: Mutex::new(Vec::new()),
            last_placement_ms: Mutex::new(0.0),
            options: Mutex::new(KernelOptions::default()),
            last_admission: Mutex::new((0, 0.0)),
            bandwidth: std::sync::OnceLock::new(),
            helper_fns: Mutex::new(HashMap::new()),
            events: Arc::new(Mutex::new(Vec::new())),
            builds: Mutex::new(BuildCache::default()),
            spare_bytes: Arc::new(AtomicUsize::new(0)),
            spare_slots: Mutex::new(Vec::new()),
        })
    }

    /// The device.
    pub fn device(&self) -> &Arc<GpuDevice> {
        &self.device
    }

    /// Device-memory read bandwidth in GB/s, measured once per process by a kernel that
    /// sums 1 GiB of int64 (median of 5 runs): the peak the bandwidth model divides by.
    pub fn bandwidth_gbs(&self) -> Option<f64> {
        *self.bandwidth.get_or_init(|| self.measure_bandwidth().ok())
    }

    fn measure_bandwidth(&self) -> Result<f64> {
        let n: usize = 1 << 27;
        let dev = &self.device;
        let buf = dev.memory().alloc::<i64>(n)?;
        let out = dev.memory().alloc::<u64>(1)?;
        let module = self.kernels.load(dev, BANDWIDTH_SOURCE)?;
        let f = module.load_function("tessera_read").map_err(|e| TesseraError::Internal(format!("{e:?}")))?;
        let blocks = dev.sm_count() * 8;
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        let mut times = Vec::new();
        let len = n as i64;
        for _ in 0..6 {
            dev.synchronize()?;
            let t = Instant::now();
            let stream = dev.stream();
            let mut l = stream.launch_builder(&f);
            l.arg(buf.as_slice()).arg(&len).arg(out.as_slice());
            unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("{e:?}")))?;
            dev.synchronize()?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.remove(0);
        times.sort_by(|a, b| a.total_cmp(b));
        Ok((n * 8) as f64 / times[times.len() / 2] / 1e9)
    }

    /// Generates the kernel for `p` if it can run on the GPU (see [`plan_kernel`]).
    pub fn plan(&self, p: &Pipeline, table: Option<&Arc<LoadedTable>>, state: &mut GpuQueryState, gpu_tables: &HashMap<HashTableId, GpuTable>) -> std::result::Result<GpuPipeline, Vec<Unsupported>> {
        state.memory_limit = Some(self.device.memory().limit());
        state.compact = self.compact.lock().map(|c| *c).unwrap_or_default();
        plan_kernel(p, table, state, gpu_tables, self.kernel_options())
    }

    /// Which stored tables the next queries put up compact (`tessera.gpu_compact_tables`);
    /// whether that changed.
    pub fn set_compact_tables(&self, compact: CompactTables) -> bool {
        match self.compact.lock() {
            Ok(mut c) if *c != compact => {
                *c = compact;
                true
            }
            _ => false,
        }
    }

    /// How kernels are generated now.
    pub fn kernel_options(&self) -> KernelOptions {
        self.options.lock().map(|o| *o).unwrap_or_default()
    }

    /// How the kernels of the next queries are generated (`tessera.kernel_literals`,
    /// `tessera.gpu_items_per_thread`).
    pub fn set_kernel_options(&self, options: KernelOptions) {
        if let Ok(mut o) = self.options.lock() {
            *o = options;
        }
    }

    /// Sets the GPU memory limit (None: the default, 90% of the memory free at start),
    /// evicting cached columns, least recently used first, until the bytes in use fit.
    /// Whether the limit changed.
    pub fn set_memory_limit(&self, limit: Option<usize>) -> bool {
        let limit = limit.unwrap_or(self.default_limit);
        let pool = self.device.memory();
        if pool.limit() == limit {
            return false;
        }
        pool.set_limit(limit);
        self.make_room(0);
        true
    }

    /// Bytes of columns cached on the GPU, and how many columns.
    pub fn cached_columns(&self) -> (usize, usize) {
        self.columns.lock().map(|c| (c.map.values().map(|e| e.buf.bytes()).sum(), c.map.len())).unwrap_or((0, 0))
    }

    /// Evicts cached columns that no running query holds, least recently used first,
    /// until `bytes` more fit under the memory limit (or nothing more can be evicted).
    fn make_room(&self, bytes: usize) {
        let pool = self.device.memory();
        // Spare sink arrays go first: each costs a fill to make again.
        if pool.used().saturating_add(bytes) > pool.limit() && self.spare_bytes.load(Ordering::Relaxed) > 0 {
            self.drop_spares();
        }
        // Kept hash tables go first: one costs a build of microseconds to make again, a
        // column an upload of milliseconds.
        if pool.used().saturating_add(bytes) > pool.limit()
            && let Ok(mut builds) = self.builds.lock()
        {
            while pool.used().saturating_add(bytes) > pool.limit() && builds.evict_one() {}
        }
        let Ok(mut cache) = self.columns.lock() else { return };
        while pool.used().saturating_add(bytes) > pool.limit() {
            let victim = cache
                .map
                .iter()
                .filter(|(_, e)| Arc::strong_count(&e.buf) == 1)
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    cache.map.remove(&k);
                }
                None => break,
            }
        }
    }

    /// Column `c` of `table` on the GPU, from the cache or uploaded on the query's stream
    /// `gs` (and cached). Work queued on `gs` after this call sees the column, whichever
    /// stream uploaded it.
    fn column(&self, gs: &GpuStream, table: &LoadedTable, c: usize, col: &GpuColumn) -> Result<Arc<GpuBuf>> {
        let (width, packed) = (col.width, col.packed);
        let key = (table.name.clone(), table.version, c);
        if let Ok(mut cache) = self.columns.lock() {
            if let Some(buf) = cache.hit(&key, col, gs)? {
                return Ok(buf);
            }
            // Older versions of this column are dead: a write made a new version.
            cache.map.retain(|k, _| !(k.0 == key.0 && k.2 == key.2));
        }
        let buf = if width == Width::Str {
            self.upload_strings(gs, table, c)?
        } else if packed {
            // The tiles go up as stored (see `tessera_storage::PackedColumn`).
            let p = table.packed_column(c)?.ok_or_else(|| TesseraError::Internal(format!("column #{c} of {} has no packed form", table.name)))?;
            // An empty upload is not a buffer: keep one word so the column has an address.
            let words = if p.words.is_empty() { vec![0u64] } else { p.words };
            GpuBuf::Packed(self.upload(gs, &words)?)
        } else if let Some(n) = col.narrow {
            // The form was chosen at placement (byte-narrowed or compact, see
            // [`compact_table`]); its distances must fit it (checked as they are made).
            let (reference, _) = narrow_range(table, c, col).ok_or_else(|| TesseraError::Internal(format!("column #{c} of {} has no narrow form", table.name)))?;
            let parts = table.column(c)?;
            tessera_common::trace::mark("column read");
            let distances = match n {
                Narrow::U8 => NarrowBuf::U8(self.upload(gs, &host_distances::<u8>(&parts, reference)?)?),
                Narrow::U16 => NarrowBuf::U16(self.upload(gs, &host_distances::<u16>(&parts, reference)?)?),
                Narrow::U32 => NarrowBuf::U32(self.upload(gs, &host_distances::<u32>(&parts, reference)?)?),
                Narrow::Bits(bits) => NarrowBuf::Bits { words: self.upload(gs, &host_bits(&parts, reference, u32::from(bits))?)?, bits },
                Narrow::Runs { value: 1, per_run } => self.upload_runs(gs, host_distances::<u8>(&parts, reference)?, per_run, NarrowBuf::U8)?,
                Narrow::Runs { value: 2, per_run } => self.upload_runs(gs, host_distances::<u16>(&parts, reference)?, per_run, NarrowBuf::U16)?,
                Narrow::Runs { value: 4, per_run } => self.upload_runs(gs, host_distances::<u32>(&parts, reference)?, per_run, NarrowBuf::U32)?,
                Narrow::Runs { value, .. } => return Err(TesseraError::Internal(format!("runs of {value}-byte values"))),
            };
            tessera_common::trace::mark("narrow column up");
            GpuBuf::Narrow { reference, distances }
        } else {
            self.upload_column(gs, table, c, width)?
        };
        let buf = if col.nullable { self.with_validity(gs, table, c, buf)? } else { buf };
        let buf = Arc::new(buf);
        let ready = Arc::new(gs.record()?);
        if let Ok(mut cache) = self.columns.lock() {
            cache.tick += 1;
            let last_used = cache.tick;
            cache.map.insert(key, CachedColumn { buf: Arc::clone(&buf), last_used, ready: Some(ready) });
        }
        Ok(buf)
    }

    /// A narrowed column's `distances` uploaded on `gs` as runs (`Narrow::Runs`, laid out
    /// by `codegen::runs_of` on a thread a core), their values as `form` makes them.
    fn upload_runs<T: Copy + PartialEq + Default + Send + Sync + tessera_cuda::cudarc::driver::DeviceRepr>(
        &self,
        gs: &GpuStream,
        distances: Vec<T>,
        per_run: u8,
        form: impl Fn(DeviceBuffer<T>) -> NarrowBuf,
    ) -> Result<NarrowBuf> {
        tessera_common::trace::mark("distances made");
        let (directory, values) = codegen::runs_of(&distances, cores()).map_err(TesseraError::Internal)?;
        tessera_common::trace::mark("runs laid out");
        Ok(NarrowBuf::Runs { directory: self.upload(gs, &directory)?, values: Box::new(form(self.upload(gs, &values)?)), per_run })
    }

    /// String column `c` of `table` (no dictionary) uploaded on `gs` as offsets and bytes.
    fn upload_strings(&self, gs: &GpuStream, table: &LoadedTable, c: usize) -> Result<GpuBuf> {
        // Host copies first: the room to make is known only from the bytes.
        let (offsets, bytes) = string_column(table, c)?;
        // An empty upload is not a buffer: keep one byte so the column has an address.
        let bytes = if bytes.is_empty() { vec![0u8] } else { bytes };
        Ok(GpuBuf::Str { offsets: self.upload(gs, &offsets)?, bytes: self.upload(gs, &bytes)? })
    }

    /// `values`, column `c` of `table` on the GPU, with the column's validity bitmap.
    fn with_validity(&self, gs: &GpuStream, table: &LoadedTable, c: usize, values: GpuBuf) -> Result<GpuBuf> {
        Ok(GpuBuf::Nullable { values: Box::new(values), validity: self.upload(gs, &host_validity(&table.column(c)?))? })
    }

    /// Column `c` of `table` uploaded on `gs` as `width` (not cached): dictionary codes,
    /// dates as days, decimals as their unscaled values (which must fit 64 bits: else the
    /// query runs on the CPU), other integers widened.
    fn upload_column(&self, gs: &GpuStream, table: &LoadedTable, c: usize, width: Width) -> Result<GpuBuf> {
        Ok(match width {
            Width::I32 => GpuBuf::I32(self.upload(gs, &host_i32(&table.column(c)?)?)?),
            Width::I64 => GpuBuf::I64(self.upload(gs, &host_i64(&table.column(c)?)?)?),
            Width::Str => return Err(string_as_values()),
        })
    }

    /// `len` zeroed elements on the query's stream, after evicting cached columns no
    /// running query holds if the budget needs the room.
    fn alloc<T: tessera_cuda::cudarc::driver::DeviceRepr + tessera_cuda::cudarc::driver::ValidAsZeroBits>(&self, gs: &GpuStream, len: usize) -> Result<DeviceBuffer<T>> {
        self.make_room(len.saturating_mul(std::mem::size_of::<T>()));
        gs.memory().alloc(len)
    }

    /// As [`GpuRuntime::alloc`], uninitialised.
    ///
    /// # Safety
    /// As [`tessera_cuda::MemoryPool::alloc_uninit`]: written before read.
    unsafe fn alloc_uninit<T: tessera_cuda::cudarc::driver::DeviceRepr>(&self, gs: &GpuStream, len: usize) -> Result<DeviceBuffer<T>> {
        self.make_room(len.saturating_mul(std::mem::size_of::<T>()));
        // SAFETY: the caller writes before reading.
        unsafe { gs.memory().alloc_uninit(len) }
    }

    /// `data` copied to a new buffer on the query's stream (room made as for `alloc`).
    fn upload<T: tessera_cuda::cudarc::driver::DeviceRepr>(&self, gs: &GpuStream, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.make_room(std::mem::size_of_val(data));
        gs.upload(data)
    }

    /// Admits a query to the GPU ([`GpuDevice::admit`]) before its first pipeline: pins
    /// the cached columns its `kernels` read (no other query's room-making can evict them
    /// then; they are counted once however many queries read them), then reserves the
    /// rest of what it needs — the columns not cached yet and each pipeline's
    /// [`GpuPipeline::work_memory`] — on a stream of its own, waiting at most
    /// [`ADMISSION_WAIT`] while running queries leave too little room.
    pub fn admit<'k>(&self, state: &mut GpuQueryState, kernels: impl Iterator<Item = &'k GpuPipeline>) -> Result<()> {
        let started = Instant::now();
        let kernels: Vec<&GpuPipeline> = kernels.collect();
        self.take_cached_builds(state, &kernels);
        tessera_common::trace::mark("cached builds taken");
        let mut bytes = 0usize;
        let mut counted: HashSet<(&str, u64, usize, bool)> = HashSet::new();
        // One lock for all the lookups (a query reads 4–15 columns).
        let cache = self.columns.lock().map_err(|_| TesseraError::Internal("GPU column cache poisoned".into()))?;
        for &k in kernels.iter().filter(|k| !state.taken.contains(&k.pipeline.id)) {
            bytes = bytes.saturating_add(k.work_memory());
            let Source::Scan(scan) = &k.pipeline.source else { continue };
            for (i, (&c, gc)) in scan.columns.iter().zip(&k.columns).enumerate() {
                if gc.width == Width::Str && !k.kernel.strings.contains(&i) || !counted.insert((scan.table.as_str(), scan.version, c, gc.packed)) {
                    continue;
                }
                let found = cache.map.get(&(scan.table.clone(), scan.version, c)).filter(|e| e.buf.is_form_of(gc)).map(|e| Arc::clone(&e.buf));
                match found {
                    Some(buf) => state.lane.held.push(buf),
                    None => {
                        let per_row = gc.stored_bits() + if gc.width == Width::Str { ESTIMATED_STRING_BYTES * 8 } else { 0 };
                        bytes = bytes.saturating_add((scan.rows as usize).saturating_mul(per_row).div_ceil(8));
                        if gc.nullable {
                            bytes = bytes.saturating_add((scan.rows as usize).div_ceil(32).saturating_mul(4));
                        }
                    }
                }
            }
        }
        drop(cache);
        tessera_common::trace::mark("columns counted");
        let pinned = || self.pinned_bytes();
        state.lane.stream = Some(Arc::new(self.device.admit(bytes, ADMISSION_WAIT, &pinned)?));
        tessera_common::trace::mark("stream admitted");
        if ExecExperiments::get().early_launch {
            self.launch_early(state, &kernels)?;
        }
        if ExecExperiments::get().query_fill > 0 {
            self.preset_sinks(state, &kernels)?;
        }
        if let Ok(mut a) = self.last_admission.lock() {
            *a = (bytes, started.elapsed().as_secs_f64() * 1e3);
        }
        Ok(())
    }

    /// Launches a warm query's one kernel as soon as its stream is admitted, when nothing
    /// it reads is left to make: every other GPU pipeline of the query is a build whose
    /// table was taken from the build cache, and it is an aggregation over a stored table
    /// whose columns are cached on the GPU, with the sink arrays its last run kept
    /// ([`SpareSink`]) and no scalar subquery. Its pipeline's run then takes it up
    /// ([`GpuRuntime::run`]) instead of launching it, and the executor's steps before it
    /// (finding each pipeline, checking its table's version, loading it) run on the host
    /// while the kernel runs. The kernel is launched exactly as that run would launch it:
    /// the same columns (the cache's, by the planned table version), tables, arrays and
    /// parameters ([`kernel_params`]).
    fn launch_early(&self, state: &mut GpuQueryState, kernels: &[&GpuPipeline]) -> Result<()> {
        let started = Instant::now();
        let mut left = kernels.iter().copied().filter(|k| !state.taken.contains(&k.pipeline.id));
        let (Some(gp), None) = (left.next(), left.next()) else { return Ok(()) };
        let (p, kernel) = (&gp.pipeline, &gp.kernel);
        let (Source::Scan(scan), Sink::Aggregate(_), Some(launch)) = (&p.source, &p.sink, gp.launch.get()) else { return Ok(()) };
        let Ok(rows) = usize::try_from(scan.rows) else { return Ok(()) };
        if gp.reads_kept || gp.marks.is_some() || !kernel.subqueries.is_empty() || rows == 0 || scan.rows > kernel.rows_limit || state.flags.is_some() || !self.keeps_spare(gp, state) {
            return Ok(());
        }
        // Every table it probes taken already, every column it reads cached.
        let Ok(probed) = self.probed(p, state) else { return Ok(()) };
        let gs = state.lane()?;
        let mut col_bufs = Vec::with_capacity(scan.columns.len());
        {
            let Ok(mut cache) = self.columns.lock() else { return Ok(()) };
            for (i, (&c, gc)) in scan.columns.iter().zip(&gp.columns).enumerate() {
                if gc.width == Width::Str && !kernel.strings.contains(&i) {
                    col_bufs.push(None);
                    continue;
                }
                let Some(buf) = cache.hit(&(scan.table.clone(), scan.version, c), gc, &gs)? else { return Ok(()) };
                col_bufs.push(Some(buf));
            }
        }
        let Some(spare) = gp.spare.lock().ok().and_then(|mut s| s.take()) else { return Ok(()) };
        let found = Instant::now();
        state.lane.held.extend(col_bufs.iter().flatten().cloned());
        // The arrays and flags as `launch` takes them from a spare.
        let (sink, refill, mut spare_flags) = spare.take_for_run(&mut state.flags);
        let mut fills = Fills::default();
        if state.flags.is_none() {
            state.flags = Some(self.alloc_set::<u64>(&gs, 4, 0, &mut fills)?);
            spare_flags = true;
        }
        let allocated = Instant::now();
        let dev = &self.device;
        let flags_ptr = state.flags.as_ref().map_or(0, |f| f.as_slice().device_ptr(dev.stream()).0);
        let consts_zones = self.upload_consts_zones(&gs, gp)?;
        let (consts_ptr, zones_ptr, zoned) = consts_zones.ptrs(dev, gp);
        let params = kernel_params(kernel, rows, flags_ptr, consts_ptr, zones_ptr, &col_bufs, &probed, &sink.out_ptrs, &[], dev)?;
        let parameters = Instant::now();
        let cfg = self.pipeline_launch(launch.per_sm, scan.rows, kernel);
        let stream = gs.stream();
        self.apply_fills(&gs, fills)?;
        let filled = Instant::now();
        let before = self.event(stream)?;
        let timed = Instant::now();
        queue_kernel(stream, &launch.function, cfg, &params)?;
        self.fold_copies(stream, kernel, &sink)?;
        let kernel_queued = Instant::now();
        tessera_common::trace::mark("kernel queued");
        let after = self.event(stream)?;
        tessera_common::trace::mark("end event");
        let launched = Launched { rows, col_bufs, sink, refill: Some(refill), keeps_spare: true, spare_flags, zoned, started, found, allocated, parameters, filled, timed, kernel_queued, before, after, consts_zones };
        state.lane.early = Some(EarlyLaunch { key: preset_key(gp), version: scan.version, launched });
        Ok(())
    }

    /// Takes the tables of the query's builds that the build cache holds (complete: kept
    /// only once their flags came back clean) into `state`, held until its stream is done
    /// as if its run had taken them: those builds then read no columns, reserve no memory
    /// and are skipped by the run ([`GpuQueryState::took_build`]). A cached build had cost
    /// a warm SSB SF 20 query 2–5 µs of host time each before its probe, looking its
    /// stored table up (2026-11-28e run 8: 3–4 of them in q2.x–q4.x).
    fn take_cached_builds(&self, state: &mut GpuQueryState, kernels: &[&GpuPipeline]) {
        if !ExecExperiments::get().admission_builds {
            return;
        }
        let Ok(mut cache) = self.builds.lock() else { return };
        for &k in kernels {
            let (Some(key), Sink::HashBuild(b)) = (self.build_cache_key(k), &k.pipeline.sink) else { continue };
            let Some(t) = cache.get(key) else { continue };
            self.take_cached_table(state, k, b.table, t, Instant::now());
            state.taken.insert(k.pipeline.id);
        }
    }

    /// Build `gp`'s table `t`, complete in the build cache, becomes hash table `id` of the
    /// query, held until its stream is done, and the build's run is reported (from
    /// `started`) with nothing queued.
    fn take_cached_table(&self, state: &mut GpuQueryState, gp: &GpuPipeline, id: HashTableId, t: Arc<GpuHashTable>, started: Instant) {
        state.preset.remove(&preset_key(gp));
        state.lane.tables.push(Arc::clone(&t));
        let mut report = GpuRun { rows_out: t.shape.slots as u64, ..GpuRun::new(gp.pipeline.id) };
        report.phases.push(("table taken from the build cache", started.elapsed().as_secs_f64() * 1e3));
        state.tables.insert(id, t);
        self.report(report, started);
    }

    /// Sets up the sink arrays of the query's hash-table builds (under
    /// `TESSERA_EXP_QUERY_FILL=1` also its aggregations' and marks': every sink the plan
    /// sizes, not a materialization, sized by the rows it reads) and the query's error
    /// flags, and queues one fill for them all: each such pipeline's run then takes its
    /// arrays ([`GpuQueryState::preset`]) and launches only its kernel.
    ///
    /// A fill launch apiece cost each pipeline ~5 µs of host time before its kernel's
    /// launch (2026-11-27j's trace), while SSB's dimension builds take 6–15 µs of GPU time:
    /// the GPU waited for the host. The probe keeps its own fill, just before it: with its
    /// group arrays set at admission too, its kernel was slower (see
    /// `ExecExperiments::query_fill`). Pipelines whose arrays may take
    /// [`TIMED_FILL_MIN_BYTES`] or more (by [`GpuPipeline::work_memory`], which counts
    /// them and more) are left to their run, their fill timed with their kernel; a
    /// pipeline the query never reaches (a CPU fallback) has its arrays dropped with the
    /// query.
    fn preset_sinks(&self, state: &mut GpuQueryState, kernels: &[&GpuPipeline]) -> Result<()> {
        let gs = state.lane()?;
        let every_sink = ExecExperiments::get().query_fill == 1;
        // A build whose table the cache keeps needs no arrays (should the table be
        // evicted before the build runs, its run allocates them).
        let kept = |k: &GpuPipeline| self.build_cache_key(k).is_some_and(|key| self.builds.lock().is_ok_and(|c| c.contains(key)));
        let presets: Vec<&GpuPipeline> = kernels
            .iter()
            .copied()
            .filter(|k| !state.taken.contains(&k.pipeline.id) && state.lane.early.as_ref().is_none_or(|e| e.key != preset_key(k)))
            .filter(|&k| {
                let sized = match k.kernel.sink {
                    SinkLayout::Build { .. } => !kept(k),
                    SinkLayout::Aggregate { .. } | SinkLayout::Marks { .. } => every_sink,
                    SinkLayout::Materialize { .. } => false,
                };
                sized && k.work_memory() < TIMED_FILL_MIN_BYTES as usize
            })
            .collect();
        if presets.is_empty() {
            // The flags are set with the first pipeline's arrays.
            return Ok(());
        }
        let mut fills = Fills::default();
        if state.flags.is_none() {
            state.flags = Some(self.alloc_set::<u64>(&gs, 4, 0, &mut fills)?);
        }
        for k in presets {
            // The rows read size only a materialization's arrays.
            let mut sink = self.sink_arrays(&gs, &k.kernel, 0)?;
            if sink.fills.bytes() < TIMED_FILL_MIN_BYTES {
                fills.0.append(&mut sink.fills.0);
            }
            state.preset.insert(preset_key(k), sink);
        }
        self.apply_fills(&gs, fills)?;
        tessera_common::trace::mark("sinks preset");
        Ok(())
    }

    /// Bytes of cached columns and kept hash tables that running queries hold (and so
    /// cannot be evicted).
    fn pinned_bytes(&self) -> usize {
        let columns: usize = self.columns.lock().map(|c| c.map.values().filter(|e| Arc::strong_count(&e.buf) > 1).map(|e| e.buf.bytes()).sum()).unwrap_or(0);
        columns + self.builds.lock().map(|b| b.held_bytes()).unwrap_or(0) + self.spare_bytes.load(Ordering::Relaxed)
    }

    /// Runs a planned GPU pipeline. Aggregations return their result chunk; builds
    /// leave their table in `state`.
    ///
    /// `subqueries` holds the value of each scalar subquery the pipeline reads (by the
    /// result holding it); one that is NULL, or does not fit the kernel's 64-bit
    /// parameter, sends the query to the CPU backend ([`TesseraError::RetryOnCpu`]).
    pub fn run(&self, gp: &GpuPipeline, table: &LoadedTable, state: &mut GpuQueryState, subqueries: &HashMap<usize, Scalar>) -> Result<Option<Chunk>> {
        let (p, kernel) = (&gp.pipeline, &gp.kernel);
        let subquery_values = kernel.subqueries.iter().map(|&(rid, ty)| subquery_param(subqueries.get(&rid), rid, ty)).collect::<Result<Vec<i64>>>()?;
        let started = Instant::now();
        tessera_common::trace::mark("GPU pipeline");
        let dev = &self.device;
        let gs = state.lane()?;
        if let Some(key) = self.cached_build_key(gp, table) {
            let kept = self.builds.lock().ok().and_then(|mut c| c.get(key));
            if let (Some(t), Sink::HashBuild(b)) = (kept, &p.sink) {
                // Built by an earlier query and complete (kept only after its flags came
                // back), so nothing is queued: the probes read it as it lies.
                self.take_cached_table(state, gp, b.table, t, started);
                tessera_common::trace::mark("build cache hit");
                return Ok(None);
            }
        }
        // Launched at admission when nothing it reads is left to make ([`EarlyLaunch`]),
        // else now.
        let early = match state.lane.early.take() {
            Some(e) if e.key == preset_key(gp) => Some(e),
            other => {
                state.lane.early = other;
                None
            }
        };
        let launched = match early {
            Some(e) if e.version == table.version && e.launched.rows == table.rows => e.launched,
            Some(e) => {
                // Over another version of the table than this run's (both are the planned
                // one, so this should not happen): once its kernel is done, its arrays and
                // the flags it may have set are dropped and the pipeline runs anew.
                gs.synchronize()?;
                drop(e);
                state.flags = None;
                self.launch(gp, table, state, &subquery_values, started)?
            }
            None => self.launch(gp, table, state, &subquery_values, started)?,
        };
        let Launched { rows, col_bufs, sink, mut refill, keeps_spare, spare_flags, zoned, started, found, allocated, parameters, filled, timed, kernel_queued, before, after, consts_zones } = launched;
        let SinkArrays { out_bufs, build, accs, acc_words, seen, marks_buf, out_ptrs, build_seen, .. } = sink;
        // Freed in stream order: after the kernel has read them.
        drop(consts_zones);
        let bytes: u64 = col_bufs.iter().flatten().map(|b| b.bytes() as u64).sum();
        // Tiles the zone maps skip are not read.
        let bytes = zoned.map_or(bytes, |kept| (bytes as f64 * kept) as u64);
        let mut report = GpuRun { bytes, rows: rows as u64, ..GpuRun::new(p.id) };
        let ms = |at: Instant| at.duration_since(started).as_secs_f64() * 1e3;
        report.phases.push(("columns found", ms(found)));
        report.phases.push(("outputs allocated", ms(allocated)));
        report.phases.push(("parameters ready", ms(parameters)));
        // The launch's steps (a query's first pipeline took 35-45 µs more than the others
        // from its parameters to its launch on the H200's host, 2026-11-27i run 5).
        report.phases.push(("sink arrays' fill queued", ms(filled)));
        report.phases.push(("start event recorded", ms(timed)));
        report.phases.push(("kernel queued", ms(kernel_queued)));
        report.phases.push(("launched", ms(Instant::now())));
        if let (SinkLayout::Build { table: shape }, Sink::HashBuild(b)) = (&kernel.sink, &p.sink) {
            // A build's table stays on the GPU for the pipelines probing it, queued behind
            // it on the same stream: nothing to wait for here.
            let (rows, index) = build.ok_or_else(|| TesseraError::Internal("build arrays".into()))?;
            // The row array only finds duplicate keys during the build (probes test the
            // index): freed in stream order, after the kernel.
            drop(rows);
            let built = Arc::new(GpuHashTable { shape: shape.clone(), payload: out_bufs, seen: build_seen, index });
            if let Some(key) = self.cached_build_key(gp, table) {
                state.built.push((Arc::clone(key), Arc::clone(&built)));
            }
            state.tables.insert(b.table, built);
            report.rows_out = shape.slots as u64;
            report.host_ms = started.elapsed().as_secs_f64() * 1e3;
            state.pending.push(PendingRun { run: report, timing: Some((before, after)) });
            return Ok(None);
        }
        // The result comes back: its arrays are downloaded together with the query's
        // error flags in one wait (a kernel fault surfaces there too).
        let timing = Some((before, after));
        match (&kernel.sink, &p.sink) {
            (SinkLayout::Aggregate { groups, accumulators, keys, hashed, value_dicts, .. }, Sink::Aggregate(a)) => {
                // The kernel grouped by the independent keys when the planner found
                // dependent ones: its columns are those of the reduced form, put back in
                // order at the end.
                let reduced = a.reduced_form();
                let (a, reorder) = match &reduced {
                    Some((r, order)) => (r, Some(order)),
                    None => (a, None),
                };
                let seen = seen.ok_or_else(|| TesseraError::Internal("seen".into()))?;
                let scalar = keys.is_empty() && hashed.is_none();
                let sort = state.sorts.get(&p.id).map(|s| (s.pipeline, s.descriptors(keys, hashed.as_ref(), accumulators), s.limit));
                if let Some(h) = state.havings.get(&p.id) {
                    let arrays: Vec<u64> = accs.iter().map(|b| b.as_slice().device_ptr(dev.stream()).0).collect();
                    let terms = h.descriptors(accumulators, &arrays).ok_or_else(|| TesseraError::Internal("a HAVING term over an accumulator it cannot read".into()))?;
                    self.apply_having(&gs, &seen, *groups, &terms)?;
                }
                // Kept on the GPU for the pipelines reading it there; brought back too
                // only if the host reads it.
                if let Some(&host_too) = state.kept.get(&a.result) {
                    let layout = state.result_layouts.get(&a.result).cloned().ok_or_else(|| TesseraError::Internal(format!("result r{} has no GPU layout", a.result)))?;
                    let kept = self.keep_on_gpu(state, &seen, &accs, *groups, &layout)?;
                    report.phases.push(("kept on the GPU", ms(Instant::now())));
                    report.rows_out = kept.rows as u64;
                    state.kept_results.insert(a.result, kept);
                    if !host_too {
                        self.report_timed(report, started, timing);
                        return Ok(None);
                    }
                }
                // The arrays kept for the next run are set again behind the copies that
                // read them (the query's flags too, when this run took or made them).
                let spare_refill = if keeps_spare { refill.take() } else { None };
                if let Some(r) = &spare_refill {
                    let mut all = r.clone();
                    if let (true, Some(f)) = (spare_flags, &state.flags) {
                        all.0.push((f.as_slice().device_ptr(dev.stream()).0, (f.num_bytes() / 4) as u64, 0));
                    }
                    state.refill = Some(all);
                }
                let fetched = self.fetch_groups(state, &seen, &accs, &acc_words, *groups, scalar, sort);
                // Queued by `finish` or not at all: never after this run's arrays are gone.
                let refilled = state.refill.take().is_none();
                let groups = fetched?;
                report.phases.extend(groups.marks.iter().map(|&(name, at)| (name, ms(at))));
                if groups.sorted {
                    if let Some(s) = state.sorts.get(&p.id) {
                        state.sorted.insert(s.pipeline);
                    }
                }
                let order = &groups.order;
                let st: &GpuQueryState = state;
                // A scalar aggregate has its one row even over no input; its SUM/MIN/MAX
                // are then NULL (`present` false), its COUNT 0.
                let present = vec![!scalar || groups.any; order.len()];
                let present = &present;
                let input_fields = gp.sink_fields();
                // Each output column is built on a thread of its own (15 M groups of q18
                // make every column a pass over hundreds of MB).
                type Build<'c> = Box<dyn FnOnce() -> Result<ArrayRef> + Send + 'c>;
                let mut builds: Vec<Build<'_>> = Vec::new();
                // Each key's slots, taken apart from the group numbers at once (see
                // `group_columns`), or per key below as before 2026-11-29b.
                let lean = ExecExperiments::get().lean_results;
                let slots = if lean { group_columns::key_slots(order, &keys.iter().map(|k| k.slots).collect::<Vec<_>>()) } else { None };
                let mut slots = slots.map(Vec::into_iter);
                let mut stride = 1usize;
                for (i, k) in keys.iter().enumerate() {
                    let (k, s, ty) = (k.clone(), stride, a.fields[i].ty);
                    if let Some(key_slots) = slots.as_mut().and_then(|all| all.next()) {
                        builds.push(Box::new(move || match k.dictionary {
                            Some(d) => dictionary_column(st, d, group_columns::key_codes(&key_slots)),
                            None => group_columns::int_key_column(&key_slots, k.min, ty),
                        }));
                        stride *= k.slots;
                        continue;
                    }
                    builds.push(Box::new(move || {
                        let slot = |g: usize| (g / s) % k.slots;
                        Ok(match k.dictionary {
                            Some(d) => dictionary_column(st, d, order.iter().map(|&g| (slot(g) > 0).then(|| slot(g) as i32 - 1)).collect())?,
                            None => {
                                let v: Int64Array = order.iter().map(|&g| (slot(g) > 0).then(|| k.min + slot(g) as i64 - 1)).collect();
                                cast_to(&(Arc::new(v) as ArrayRef), ty)?
                            }
                        })
                    }));
                    stride *= k.slots;
                }
                if let Some(pack) = hashed {
                    // The packed keys came back last, one word per group.
                    let words = groups.values.last().ok_or_else(|| TesseraError::Internal("hash aggregation keys".into()))?;
                    for (i, part) in pack.parts.iter().enumerate() {
                        let ty = a.fields[i].ty;
                        builds.push(Box::new(move || {
                            // A key that may be NULL has an offset for NULL (`KeyPart::unpack`).
                            let values = words.iter().map(|&w| part.unpack(w));
                            Ok(match part.dictionary {
                                Some(d) => dictionary_column(st, d, values.map(|v| v.map(|v| v as i32)).collect())?,
                                None => int_as(&values.collect::<Int64Array>(), part.ty, ty)?,
                            })
                        }));
                    }
                }
                let mut next = groups.values.iter();
                let mut take = || next.next().ok_or_else(|| TesseraError::Internal("accumulator missing".into()));
                for (j, acc) in accumulators.iter().enumerate() {
                    let ty = a.fields[a.group_by.len() + j].ty;
                    let spec = &a.aggregates[j];
                    let arg_ty = spec.arg.as_ref().map(|e| e.ty(input_fields));
                    match acc {
                        Accumulator::Count => {
                            let c = take()?;
                            builds.push(Box::new(move || cast_to(&(Arc::new(Int64Array::from_iter_values(c.iter().map(|&x| x as i64))) as ArrayRef), ty)));
                        }
                        Accumulator::Sum(r) | Accumulator::SumCount(r) => {
                            let (r, s) = (*r, take()?);
                            let counts = if matches!(acc, Accumulator::SumCount(_)) { Some(take()?) } else { None };
                            builds.push(Box::new(move || {
                                if r == codegen::aggregate::SumRepr::F64 {
                                    return finish_float_sum(s, counts.map(|c| c.as_slice()), present, spec.func, ty);
                                }
                                let sums: Vec<i128> = s.chunks_exact(r.words()).map(|w| r.total(w)).collect();
                                let counts = counts.map(|c| c.iter().map(|&x| x as i64).collect::<Vec<_>>());
                                finish_sum(&sums, counts.as_deref(), present, spec.func, arg_ty, ty, lean)
                            }));
                        }
                        Accumulator::Min | Accumulator::Max | Accumulator::MinCount | Accumulator::MaxCount => {
                            let (m, dict) = (take()?, value_dicts.get(j).copied().flatten());
                            // A group none of whose values was non-NULL has none.
                            let counts = if acc.counted() { Some(take()?) } else { None };
                            builds.push(Box::new(move || {
                                let has = |i: usize| present[i] && counts.is_none_or(|c| c[i] > 0);
                                if let Some(d) = dict {
                                    // Codes: a dependent group key's (every group has one), or
                                    // a MIN/MAX of strings (sorted dictionaries).
                                    return dictionary_column(st, d, m.iter().enumerate().map(|(i, &x)| has(i).then_some(x as i32)).collect());
                                }
                                let v: Int64Array = m.iter().enumerate().map(|(i, &x)| has(i).then_some(x as i64)).collect();
                                int_as(&v, arg_ty.unwrap_or(ty), ty)
                            }));
                        }
                    }
                }
                // A thread per column pays off only for many groups: starting threads
                // costs tens of µs each, and SSB SF 20 q2.1's 280 groups took 0.38 ms
                // that way on the H200 host (2026-11-25e) against microseconds on this one.
                tessera_common::trace::mark("column builds made");
                let columns = if order.len() >= PARALLEL_COLUMN_BUILD_MIN_GROUPS {
                    tessera_cpu::parallel::on_threads(builds, |b| b())?
                } else {
                    builds
                        .into_iter()
                        .map(|b| {
                            let c = b();
                            tessera_common::trace::mark("column built");
                            c
                        })
                        .collect::<Result<Vec<_>>>()?
                };
                report.phases.push(("columns built", ms(Instant::now())));
                tessera_common::trace::mark("columns built");
                let rows = groups.order.len();
                let columns = match reorder {
                    Some(reorder) => reorder.iter().map(|&k| columns.get(k).cloned().ok_or_else(|| TesseraError::Internal("reduced aggregation column".into()))).collect::<Result<Vec<_>>>()?,
                    None => columns,
                };
                if let (Some(refill), true) = (spare_refill, refilled) {
                    let arrays = SinkArrays { accs, acc_words, seen: Some(seen), out_ptrs, ..SinkArrays::empty() };
                    let bytes = arrays.bytes() + if spare_flags { 32 } else { 0 };
                    self.spare_bytes.fetch_add(bytes, Ordering::Relaxed);
                    let spare = SpareSink { arrays, refill, flags: None, bytes, count: Arc::clone(&self.spare_bytes) };
                    self.keep_spare(gp, state, spare, spare_flags);
                }
                report.rows_out = rows as u64;
                self.report_timed(report, started, timing);
                Ok(Some(Chunk::new(columns, rows)))
            }
            (SinkLayout::Marks { rows }, Sink::MarkBuild(_)) => {
                // The marks come back as they are; the executor takes the host's rows
                // they pick (`tessera_cpu::marked_rows`).
                let marks = marks_buf.ok_or_else(|| TesseraError::Internal("marks".into()))?;
                let got = self.finish(state, &[(marks.as_slice().device_ptr(dev.stream()).0, rows * 4)])?;
                let marks: Vec<u32> = got[0].chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
                let matched = marks.iter().filter(|&&m| m != 0).count();
                report.rows_out = matched as u64;
                self.report_timed(report, started, timing);
                Ok(Some(Chunk::new(vec![Arc::new(arrow::array::UInt32Array::from(marks)) as ArrayRef], *rows)))
            }
            (SinkLayout::Materialize { columns: layout }, Sink::Materialize { .. }) => {
                let count = accs.first().ok_or_else(|| TesseraError::Internal("materialized row count".into()))?;
                let got = self.finish(state, &[(count.as_slice().device_ptr(dev.stream()).0, 8)])?;
                let rows = words_of(&got[0]).first().copied().unwrap_or(0) as usize;
                let fields = gp.sink_fields();
                // Every column's rows (and the validity bits of those that may be NULL,
                // in Arrow's layout already) in one more round trip.
                let mut regions: Vec<(u64, usize)> = out_bufs.iter().map(|b| (b.ptr(dev), rows * b.width_bytes())).collect();
                regions.extend(out_bufs.iter().filter(|b| b.validity_ptr(dev) != 0).map(|b| (b.validity_ptr(dev), rows.div_ceil(32) * 4)));
                let data = if rows > 0 { gs.download_regions(&regions)? } else { vec![Vec::new(); regions.len()] };
                let (data, mut validity) = data.split_at(out_bufs.len());
                let mut columns: Vec<ArrayRef> = Vec::with_capacity(layout.len());
                for (((buf, bytes), c), f) in out_bufs.iter().zip(data).zip(layout).zip(fields) {
                    let (values, nulls) = match buf {
                        GpuBuf::Nullable { values, .. } => {
                            let (bits, rest) = validity.split_first().ok_or_else(|| TesseraError::Internal("materialized validity".into()))?;
                            validity = rest;
                            let bits = arrow::buffer::BooleanBuffer::new(arrow::buffer::Buffer::from(bits.as_slice()), 0, rows);
                            (values.as_ref(), Some(arrow::buffer::NullBuffer::new(bits)))
                        }
                        b => (b, None),
                    };
                    let values: Vec<i64> = match values {
                        GpuBuf::I32(_) => bytes.chunks_exact(4).map(|w| i64::from(i32::from_le_bytes([w[0], w[1], w[2], w[3]]))).collect(),
                        GpuBuf::I64(_) => words_of(bytes).into_iter().map(|w| w as i64).collect(),
                        GpuBuf::Str { .. } => return Err(string_as_values()),
                        GpuBuf::Packed(_) | GpuBuf::Narrow { .. } | GpuBuf::Nullable { .. } => return Err(TesseraError::Internal("a packed or narrowed column as a result".into())),
                    };
                    let col: ArrayRef = match c.dictionary {
                        Some(d) => dictionary_column(state, d, Int32Array::new(values.iter().map(|&v| v as i32).collect(), nulls))?,
                        None => int_as(&Int64Array::new(values.into(), nulls), f.ty, f.ty)?,
                    };
                    columns.push(col);
                }
                report.rows_out = rows as u64;
                self.report_timed(report, started, timing);
                Ok(Some(Chunk::new(columns, rows)))
            }
            _ => Err(TesseraError::Internal("kernel and sink disagree".into())),
        }
    }

    /// The tables pipeline `p` probes (operator order, then a mark sink's): their payload
    /// arrays and index, as its kernel's parameters name them.
    fn probed(&self, p: &Pipeline, state: &GpuQueryState) -> Result<Vec<Probed>> {
        let dev = &self.device;
        // The table a mark sink reads comes after the operators' probes.
        let read = p.operators.iter().filter_map(|op| if let Operator::Probe(pr) = op { Some(pr.table) } else { None });
        let marked = if let Sink::MarkBuild(m) = &p.sink { Some(m.table) } else { None };
        read.chain(marked)
            .map(|table| {
                let t = state.tables.get(&table).ok_or_else(|| TesseraError::Internal(format!("GPU table h{table} missing")))?;
                let (heads, next) = t.index.chain_ptrs(dev);
                Ok(Probed {
                    payload: t.payload.iter().map(|b| b.ptr(dev)).collect(),
                    payload_valid: t.payload.iter().map(|b| b.validity_ptr(dev)).collect(),
                    seen: t.seen.as_ref().map_or(0, |s| s.as_slice().device_ptr(dev.stream()).0),
                    index: t.index.ptr(dev),
                    heads,
                    next,
                })
            })
            .collect()
    }

    /// `gp`'s kernel as loaded: found (and its occupancy asked for) by its first run.
    fn loaded<'g>(&self, gp: &'g GpuPipeline) -> Result<&'g Launch> {
        if let Some(l) = gp.launch.get() {
            return Ok(l);
        }
        let module = self.kernels.load(&self.device, &gp.kernel.source)?;
        let function = module.load_function(codegen::KERNEL_NAME).map_err(|e| TesseraError::Internal(format!("loading kernel: {e:?}")))?;
        let per_sm = function
            .occupancy_max_active_blocks_per_multiprocessor(gp.kernel.block_threads, 0, None)
            .map_err(|e| TesseraError::Internal(format!("occupancy: {e:?}")))?
            .max(1);
        Ok(gp.launch.get_or_init(|| Launch { _module: module, function, per_sm, graph: Mutex::new(KernelGraph::Unmade) }))
    }

    /// `gp`'s kernel's constants and the tiles its zone maps rule out, uploaded on `gs`
    /// for one run.
    fn upload_consts_zones(&self, gs: &GpuStream, gp: &GpuPipeline) -> Result<ConstsZones> {
        let kernel = &gp.kernel;
        let consts = if kernel.consts.is_empty() { None } else { Some(self.upload(gs, &kernel.consts)?) };
        let zones = match zoned(gp) {
            Some((bits, _)) => Some(self.upload(gs, bits)?),
            None => None,
        };
        Ok(ConstsZones { consts, zones })
    }

    /// Queues `gp`'s kernel over `table` on the query's stream (its columns found or
    /// uploaded, its sink arrays taken or made and set): all of [`GpuRuntime::run`] up to
    /// the launch.
    fn launch(&self, gp: &GpuPipeline, table: &LoadedTable, state: &mut GpuQueryState, subquery_values: &[i64], started: Instant) -> Result<Launched> {
        let (p, cols, kernel) = (&gp.pipeline, &gp.columns, &gp.kernel);
        let dev = &self.device;
        let gs = state.lane()?;
        // A result kept on the GPU is read where it lies (`table` is then a stand-in).
        let kept = match (&p.source, gp.reads_kept) {
            (Source::Result { id, .. }, true) => {
                let k = state.kept_results.get(id).ok_or_else(|| TesseraError::Internal(format!("result r{id} is not on the GPU")))?;
                Some((k.rows, k.columns.clone()))
            }
            _ => None,
        };
        let rows = kept.as_ref().map_or(table.rows, |(n, _)| *n);
        let columns = || -> Result<Vec<Option<Arc<GpuBuf>>>> {
            let mut col_bufs = Vec::new();
            match &p.source {
                Source::Scan(scan) => {
                    for (i, (&c, gc)) in scan.columns.iter().zip(cols).enumerate() {
                        // A string column the kernel holds only as row numbers stays on the host.
                        if gc.width == Width::Str && !kernel.strings.contains(&i) {
                            col_bufs.push(None);
                            continue;
                        }
                        col_bufs.push(Some(self.column(&gs, table, c, gc)?));
                    }
                }
                Source::Result { .. } if kept.is_some() => {
                    col_bufs.extend(kept.iter().flat_map(|(_, c)| c.iter().cloned().map(Some)));
                }
                // An intermediate result (see [`result_table`]) goes up whole each time,
                // a column that may be NULL with its validity bitmap.
                Source::Result { id, .. } => {
                    // An empty result has no columns to find (its table has no schema)
                    // nor buffers for the kernel's parameters: the CPU backend runs the
                    // query, as for a NULL the kernel does not take. (2026-11-27c: run 5's
                    // difftest failed on an empty LEFT JOIN's groups read here; the
                    // fix that uploaded nothing left the kernel's validity parameters
                    // without a value, run 7.)
                    if table.rows == 0 {
                        return Err(TesseraError::RetryOnCpu(format!("result r{id} is empty")));
                    }
                    for (c, gc) in cols.iter().enumerate() {
                        if gc.width == Width::Str {
                            // Row numbers stand for the strings (see `plan_over_result`).
                            if holds_nulls(table, c) || i32::try_from(table.rows).is_err() {
                                return Err(TesseraError::RetryOnCpu(format!("result r{id}'s string column {c} holds NULLs or more rows than 32-bit row numbers")));
                            }
                            if !kernel.strings.contains(&c) {
                                col_bufs.push(None);
                                continue;
                            }
                            col_bufs.push(Some(Arc::new(self.upload_strings(&gs, table, c)?)));
                            continue;
                        }
                        let values = self.upload_column(&gs, table, c, gc.width)?;
                        let buf = if gc.nullable {
                            self.with_validity(&gs, table, c, values)?
                        } else if holds_nulls(table, c) {
                            return Err(TesseraError::RetryOnCpu(format!("result r{id}'s column {c} holds NULLs")));
                        } else {
                            values
                        };
                        col_bufs.push(Some(Arc::new(buf)));
                    }
                }
            }
            Ok(col_bufs)
        };
        // A kernel not loaded yet (the first query of a process: from the disk cache, or
        // compiled by NVRTC) loads on a thread of its own while the columns are decoded
        // and go up: a new process's first TPC-H q01 waited for both, one after the other
        // (1.50-1.55 s when its kernels were compiled, 2026-11-26c).
        let (col_bufs, compiled) = std::thread::scope(|s| {
            let compiling = (gp.launch.get().is_none() && !self.kernels.is_loaded(&kernel.source)).then(|| s.spawn(|| self.kernels.load(dev, &kernel.source)));
            let col_bufs = columns();
            (col_bufs, compiling.map(|h| h.join()))
        });
        match compiled {
            Some(Ok(loaded)) => drop(loaded?),
            Some(Err(_)) => return Err(TesseraError::Internal("a kernel's compiling thread failed".into())),
            None => {}
        }
        let col_bufs = col_bufs?;
        let found = Instant::now();
        tessera_common::trace::mark("columns found");
        // Held until the query's stream has finished with them (see `Lane`'s drop): a
        // cached column no query holds may be evicted and freed at any time.
        state.lane.held.extend(col_bufs.iter().flatten().cloned());
        let probed = self.probed(p, state)?;
        // The sink's arrays: set up with the query's others at admission (one fill for
        // them all, see `GpuRuntime::preset_sinks`), or here.
        let preset = state.preset.remove(&preset_key(gp));
        // An aggregation whose arrays its pipeline keeps between runs: the arrays its
        // last run left set (none the first time), and what sets them again.
        let keeps_spare = preset.is_none() && self.keeps_spare(gp, state);
        let spare = if keeps_spare { gp.spare.lock().ok().and_then(|mut s| s.take()) } else { None };
        // Its arrays are those its last run left: a warm run of a cached plan.
        let reused = spare.is_some();
        let mut spare_flags = false;
        let (sink, mut refill) = match (preset, spare) {
            (Some(sink), _) => (sink, None),
            (None, Some(spare)) => {
                let (arrays, refill, with_flags) = spare.take_for_run(&mut state.flags);
                spare_flags = with_flags;
                (arrays, Some(refill))
            }
            (None, None) => (self.sink_arrays(&gs, kernel, rows)?, None),
        };
        let SinkArrays { out_bufs, build, accs, acc_words, seen, marks_buf, out_ptrs, build_seen, mut fills } = sink;
        let sink = SinkArrays { out_bufs, build, accs, acc_words, seen, marks_buf, out_ptrs, build_seen, fills: Fills::default() };
        let allocated = Instant::now();
        tessera_common::trace::mark("outputs allocated");
        if keeps_spare && refill.is_none() {
            // Made here: set again as they were set now.
            refill = Some(fills.clone());
        }
        if state.flags.is_none() {
            state.flags = Some(self.alloc_set::<u64>(&gs, 4, 0, &mut fills)?);
            spare_flags = true;
        }
        let flags_ptr = state.flags.as_ref().map_or(0, |f| f.as_slice().device_ptr(dev.stream()).0);
        let consts_zones = self.upload_consts_zones(&gs, gp)?;
        let (consts_ptr, zones_ptr, zoned) = consts_zones.ptrs(dev, gp);
        let params = kernel_params(kernel, rows, flags_ptr, consts_ptr, zones_ptr, &col_bufs, &probed, &sink.out_ptrs, subquery_values, dev)?;
        let parameters = Instant::now();
        tessera_common::trace::mark("parameters ready");
        let launch = self.loaded(gp)?;
        let function = &launch.function;
        if rows as u64 > kernel.rows_limit {
            // The kernel was generated for the planned table version's rows: its sums'
            // representations are exact, and its rows counted in 32 bits where it was
            // made so, only up to `rows_limit`.
            return Err(TesseraError::Internal(format!("pipeline {} reads {} rows; its kernel was made for at most {}", p.id, rows, kernel.rows_limit)));
        }
        if let SinkLayout::Build { table: GpuTable { chain: Some(chain_rows), .. } } = &kernel.sink {
            // A chained table's arrays are indexed by source row: sized for the planned rows.
            if rows > *chain_rows {
                let why = format!("pipeline {} reads {rows} rows; its 1:N table has room for {chain_rows}", p.id);
                // An intermediate result's rows were only estimated.
                return Err(if matches!(p.source, Source::Result { .. }) { TesseraError::RetryOnCpu(why) } else { TesseraError::Internal(why) });
            }
        }
        let cfg = self.pipeline_launch(launch.per_sm, rows as u64, kernel);
        // Kernel time from CUDA events around the launch; read once the kernel is done.
        let stream = gs.stream();
        // A warm run over the arrays its pipeline kept, with nothing to fill first: the
        // kernel and its events as one launch of the pipeline's graph.
        let fold = self.fold_node(stream, kernel, &sink)?;
        let graphed = if reused && rows > 0 && fills.0.is_empty() && ExecExperiments::get().kernel_graph {
            let mut nodes = vec![KernelNode::of_words(function, cfg, &params)];
            nodes.extend(fold.clone());
            self.launch_graph(launch, stream, &nodes)?
        } else {
            None
        };
        let (before, after, filled, timed, kernel_queued) = match graphed {
            Some((before, after)) => {
                let queued = Instant::now();
                // The plain way's last mark before the kernel runs (what `trace.py` reads).
                tessera_common::trace::mark("kernel queued");
                (before, after, queued, queued, queued)
            }
            None => {
                let timed_fill = if fills.bytes() >= TIMED_FILL_MIN_BYTES { Some(self.event(stream)?) } else { None };
                self.apply_fills(&gs, fills)?;
                let filled = Instant::now();
                tessera_common::trace::mark("fill queued");
                let before = match timed_fill {
                    Some(e) => e,
                    None => self.event(stream)?,
                };
                let timed = Instant::now();
                tessera_common::trace::mark("start event");
                if rows > 0 {
                    queue_kernel(stream, function, cfg, &params)?;
                    if let Some(fold) = &fold {
                        queue_fold(stream, fold)?;
                    }
                }
                let kernel_queued = Instant::now();
                tessera_common::trace::mark("kernel queued");
                let after = self.event(stream)?;
                tessera_common::trace::mark("end event");
                (before, after, filled, timed, kernel_queued)
            }
        };
        Ok(Launched { rows, col_bufs, sink, refill, keeps_spare, spare_flags, zoned, started, found, allocated, parameters, filled, timed, kernel_queued, before, after, consts_zones })
    }

    /// Drops every spare sink array no run holds (a run that took them gives them back
    /// only to an empty slot).
    fn drop_spares(&self) {
        let slots: Vec<_> = self.spare_slots.lock().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default();
        for slot in slots.iter().filter_map(std::sync::Weak::upgrade) {
            let spare = slot.lock().ok().and_then(|mut s| s.take());
            drop(spare);
        }
    }

    /// Keeps `spare` for `gp`'s next run once this query is done, within the spares'
    /// share of the memory limit.
    fn keep_spare(&self, gp: &GpuPipeline, state: &mut GpuQueryState, spare: SpareSink, with_flags: bool) {
        let cap = self.device.memory().limit() / SPARE_SINKS_SHARE;
        if self.spare_bytes.load(Ordering::Relaxed) > cap {
            return;
        }
        if let Ok(mut slots) = self.spare_slots.lock() {
            slots.retain(|w| w.strong_count() > 0);
            if !slots.iter().any(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(&gp.spare))) {
                slots.push(Arc::downgrade(&gp.spare));
            }
        }
        state.lane.spares.push(PendingSpare { slot: Arc::clone(&gp.spare), spare, with_flags });
    }

    /// Whether `gp`'s run keeps its sink arrays for the next ([`SpareSink`]): an
    /// aggregation whose result comes back to the host (one kept on the GPU is read from
    /// its arrays after they come back), whose arrays are small enough.
    fn keeps_spare(&self, gp: &GpuPipeline, state: &GpuQueryState) -> bool {
        let (SinkLayout::Aggregate { groups, accumulators, hashed, .. }, Sink::Aggregate(a)) = (&gp.kernel.sink, &gp.pipeline.sink) else {
            return false;
        };
        // (An aggregation's reduced form, which its run reads, keeps its result id.)
        let kept_on_gpu = state.kept.contains_key(&a.result);
        let words: usize = accumulators.iter().flat_map(|acc| acc.arrays()).map(|(w, _)| w).sum::<usize>() + usize::from(hashed.is_some());
        let bytes = groups.saturating_mul(4 + 8 * words);
        ExecExperiments::get().spare_sinks && !kept_on_gpu && !gp.kernel.params.contains(&Param::Out(Out::BuildSeen)) && bytes <= SPARE_SINK_MAX_BYTES
    }

    /// The build cache's key for `gp`'s table ([`GpuPipeline::build_key`]) when the cache
    /// is on.
    fn build_cache_key<'g>(&self, gp: &'g GpuPipeline) -> Option<&'g Arc<Fingerprinted>> {
        ExecExperiments::get().build_cache.then(|| gp.build_key()).flatten()
    }

    /// As [`GpuRuntime::build_cache_key`], when `table` is the version and size the key
    /// names.
    fn cached_build_key<'g>(&self, gp: &'g GpuPipeline, table: &LoadedTable) -> Option<&'g Arc<Fingerprinted>> {
        self.build_cache_key(gp).filter(|k| k.key().version == table.version && k.key().rows == table.rows as u64)
    }

    /// Bytes and tables in the build cache.
    pub fn cached_builds(&self) -> (usize, usize) {
        self.builds.lock().map(|c| c.size()).unwrap_or((0, 0))
    }

    /// Records a finished pipeline run for EXPLAIN ANALYZE.
    fn report(&self, run: GpuRun, started: Instant) {
        self.report_timed(run, started, None);
    }

    /// [`GpuRuntime::report`] of a run whose kernel time `timing`'s events hold.
    fn report_timed(&self, mut run: GpuRun, started: Instant, timing: Option<Timing>) {
        run.host_ms = started.elapsed().as_secs_f64() * 1e3;
        if let Ok(mut r) = self.last_runs.lock() {
            r.push(PendingRun { run, timing });
        }
    }

    /// The reports of the last query's GPU runs, their kernel times read from their
    /// events now (NaN where an event cannot be read: the query has not finished).
    pub fn last_runs(&self) -> Vec<GpuRun> {
        let Ok(mut runs) = self.last_runs.lock() else { return Vec::new() };
        for p in runs.iter_mut() {
            if let Some((before, after)) = p.timing.take() {
                p.run.kernel_ms = elapsed_ms(&before, &after).unwrap_or(f64::NAN);
            }
        }
        runs.iter().map(|p| p.run.clone()).collect()
    }

    /// Forgets the last query's runs (a query starts).
    pub fn clear_last_runs(&self) {
        if let Ok(mut r) = self.last_runs.lock() {
            r.clear();
        }
    }

    /// A pipeline's sink arrays for `kernel` over `rows` input rows, allocated on the
    /// query's stream; their fills are not yet queued (in [`SinkArrays::fills`]).
    fn sink_arrays(&self, gs: &GpuStream, kernel: &Kernel, rows: usize) -> Result<SinkArrays> {
        let dev = &self.device;
        // Accumulators are all 64-bit words (MIN/MAX hold i64 bits).
        let mut out_bufs: Vec<GpuBuf> = Vec::new();
        // A build's row array (dense tables: finds duplicate keys) and its index.
        let mut build: Option<(Option<DeviceBuffer<i32>>, TableIndex)> = None;
        let mut accs: Vec<DeviceBuffer<u64>> = Vec::new();
        // Words per group of each array in `accs` (aggregations).
        let mut acc_words: Vec<usize> = Vec::new();
        let mut seen: Option<DeviceBuffer<u32>> = None;
        let mut marks_buf: Option<DeviceBuffer<u32>> = None;
        // The sink's arrays by what they are (see `Out`).
        let mut out_ptrs: Vec<(OutSlot, u64)> = Vec::new();
        // The sink's arrays are set (zeroed, or to their start value) by one launch just
        // before the kernel's (see `Fills`).
        let mut fills = Fills::default();
        // What a build probed by a NULL-aware anti join saw: two flags, clear.
        let build_seen = if kernel.params.contains(&Param::Out(Out::BuildSeen)) {
            let seen = self.alloc_set::<u32>(gs, 2, 0, &mut fills)?;
            out_ptrs.push((OutSlot::BuildSeen, seen.as_slice().device_ptr(dev.stream()).0));
            Some(seen)
        } else {
            None
        };
        match &kernel.sink {
            SinkLayout::Build { table: shape } => {
                // Payload by slot, or by build row in a chained table.
                let len = shape.chain.map_or(shape.slots, |rows| rows.max(1));
                for (j, pc) in shape.payload.iter().enumerate() {
                    let b = match (pc.narrow, pc.width) {
                        (Some(n), _) => GpuBuf::Narrow { reference: shape.payload_refs.get(j).copied().unwrap_or(0), distances: self.alloc_narrow(gs, n, len, &mut fills)? },
                        (None, Width::I32) => GpuBuf::I32(self.alloc_set::<i32>(gs, len, 0, &mut fills)?),
                        (None, Width::I64) => GpuBuf::I64(self.alloc_set::<i64>(gs, len, 0, &mut fills)?),
                        (None, Width::Str) => return Err(string_as_values()),
                    };
                    out_bufs.push(self.sink_column(gs, b, len, pc.nullable, (OutSlot::BuildPayload(j), OutSlot::BuildPayloadValid(j)), &mut out_ptrs, &mut fills)?);
                }
                if shape.chain.is_some() {
                    let keys = match shape.hashed {
                        Some(_) => {
                            let k = self.alloc_set::<u64>(gs, shape.slots, codegen::hash::EMPTY_KEY, &mut fills)?;
                            out_ptrs.push((OutSlot::Keys, k.as_slice().device_ptr(dev.stream()).0));
                            Some(k)
                        }
                        None => None,
                    };
                    // Two int32 heads a word, all −1; one more head than slots (a dense
                    // probe's keys outside the range read the last).
                    let heads = self.alloc_set::<u64>(gs, (shape.slots + 1).div_ceil(2), codegen::hash::EMPTY_KEY, &mut fills)?;
                    out_ptrs.push((OutSlot::Heads, heads.as_slice().device_ptr(dev.stream()).0));
                    let next = self.alloc_set::<i32>(gs, len, 0, &mut fills)?;
                    out_ptrs.push((OutSlot::Next, next.as_slice().device_ptr(dev.stream()).0));
                    build = Some((None, TableIndex::Chain { keys, heads, next }));
                } else if shape.hashed.is_some() {
                    let keys = self.alloc_set::<u64>(gs, shape.slots, codegen::hash::EMPTY_KEY, &mut fills)?;
                    out_ptrs.push((OutSlot::Keys, keys.as_slice().device_ptr(dev.stream()).0));
                    build = Some((None, TableIndex::Keys(keys)));
                } else {
                    let rows = self.alloc_set::<i32>(gs, shape.slots, 0, &mut fills)?;
                    out_ptrs.push((OutSlot::BuildRows, rows.as_slice().device_ptr(dev.stream()).0));
                    let bits = self.alloc_set::<u32>(gs, tessera_cuda::codegen::bitmap_words(shape.slots), 0, &mut fills)?;
                    out_ptrs.push((OutSlot::BuildBitmap, bits.as_slice().device_ptr(dev.stream()).0));
                    build = Some((Some(rows), TableIndex::Bitmap(bits)));
                }
            }
            SinkLayout::Aggregate { groups, accumulators, hashed, global_copies, .. } => {
                for (j, acc) in accumulators.iter().enumerate() {
                    for (k, (words, fill)) in acc.arrays().into_iter().enumerate() {
                        // Copies of the array one after another, folded into the first
                        // after the kernel (`fold_copies`).
                        let buf = self.alloc_set::<u64>(gs, words * groups * global_copies, fill.unwrap_or(0) as u64, &mut fills)?;
                        let slot = if k == 0 { OutSlot::Accumulators(j) } else { OutSlot::Counts(j) };
                        out_ptrs.push((slot, buf.as_slice().device_ptr(dev.stream()).0));
                        accs.push(buf);
                        acc_words.push(words);
                    }
                }
                let s = self.alloc_set::<u32>(gs, *groups, 0, &mut fills)?;
                out_ptrs.push((OutSlot::Seen, s.as_slice().device_ptr(dev.stream()).0));
                seen = Some(s);
                if hashed.is_some() {
                    // The groups' packed keys come back after the accumulators.
                    let keys = self.alloc_set::<u64>(gs, *groups, codegen::hash::EMPTY_KEY, &mut fills)?;
                    out_ptrs.push((OutSlot::Keys, keys.as_slice().device_ptr(dev.stream()).0));
                    accs.push(keys);
                    acc_words.push(1);
                }
            }
            SinkLayout::Marks { rows } => {
                let marks = self.alloc_set::<u32>(gs, (*rows).max(1), 0, &mut fills)?;
                out_ptrs.push((OutSlot::Marks, marks.as_slice().device_ptr(dev.stream()).0));
                marks_buf = Some(marks);
            }
            SinkLayout::Materialize { columns } => {
                // Room for every input row; only the first `count` are written (and read).
                let count = self.alloc_set::<u64>(gs, 1, 0, &mut fills)?;
                out_ptrs.push((OutSlot::Count, count.as_slice().device_ptr(dev.stream()).0));
                accs.push(count);
                let capacity = rows.max(1);
                for (i, c) in columns.iter().enumerate() {
                    // SAFETY: the kernel writes positions below `count` before they are read.
                    let b = match c.width {
                        Width::I32 => GpuBuf::I32(unsafe { self.alloc_uninit::<i32>(gs, capacity) }?),
                        Width::I64 => GpuBuf::I64(unsafe { self.alloc_uninit::<i64>(gs, capacity) }?),
                        Width::Str => return Err(string_as_values()),
                    };
                    out_bufs.push(self.sink_column(gs, b, capacity, c.nullable, (OutSlot::Materialized(i), OutSlot::MaterializedValid(i)), &mut out_ptrs, &mut fills)?);
                }
            }
        }
        Ok(SinkArrays { out_bufs, build, accs, acc_words, seen, marks_buf, out_ptrs, build_seen, fills })
    }

    /// The launch of pipeline kernel `kernel` over `rows` rows, `per_sm` of its blocks
    /// resident an SM: blocks of its threads, one wave of them (the kernel walks tiles
    /// grid-stride), fewer for small inputs.
    fn pipeline_launch(&self, per_sm: u32, rows: u64, kernel: &codegen::Kernel) -> LaunchConfig {
        let per_sm = match ExecExperiments::get().blocks_per_sm {
            0 => per_sm,
            cap => per_sm.min(cap),
        };
        let tiles = rows.div_ceil(u64::from(kernel.block_threads * kernel.items_per_thread)).max(1);
        let wave = self.device.sm_count() as u64 * u64::from(per_sm);
        LaunchConfig { grid_dim: (tiles.min(wave) as u32, 1, 1), block_dim: (kernel.block_threads, 1, 1), shared_mem_bytes: 0 }
    }

    /// The device library's group-record kernels (fill, compaction, gather, rank sort:
    /// `records.cuh`), compiled once per process.
    fn helpers(&self) -> Result<Arc<tessera_cuda::cudarc::driver::CudaModule>> {
        self.kernels.load(&self.device, RECORDS_SOURCE)
    }

    /// A column a sink writes (a build's payload, a materialized column), `len` rows of
    /// `values`: with a validity bitmap, all clear, when it may be NULL (the kernel sets
    /// the bits of its non-NULL rows). Its arrays' addresses go into `out_ptrs` as the
    /// kernel's `slots` (values, validity).
    #[allow(clippy::too_many_arguments)]
    fn sink_column(&self, gs: &GpuStream, values: GpuBuf, len: usize, nullable: bool, slots: (OutSlot, OutSlot), out_ptrs: &mut Vec<(OutSlot, u64)>, fills: &mut Fills) -> Result<GpuBuf> {
        let dev = &self.device;
        let b = if nullable { GpuBuf::Nullable { values: Box::new(values), validity: self.alloc_set::<u32>(gs, len.div_ceil(32), 0, fills)? } } else { values };
        out_ptrs.push((slots.0, b.ptr(dev)));
        if nullable {
            out_ptrs.push((slots.1, b.validity_ptr(dev)));
        }
        Ok(b)
    }

    /// Queues `nodes` (`launch`'s kernel, then the fold of its group copies if any)
    /// between the pipeline's timing events as one launch of its graph (made on its
    /// first use; see [`tessera_cuda::graph`]), and returns the events. None, with
    /// nothing queued, when another run holds the graph or its events, or it cannot be
    /// made: the caller then launches the plain way.
    fn launch_graph(&self, launch: &Launch, stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>, nodes: &[KernelNode]) -> Result<Option<(TimingEvent, TimingEvent)>> {
        let Ok(mut slot) = launch.graph.try_lock() else { return Ok(None) };
        if matches!(*slot, KernelGraph::Unmade) {
            // A driver without graphs of event nodes: the plain way, every run, without
            // trying again.
            *slot = match TimedKernel::new(self.device.context(), nodes) {
                Ok(g) => KernelGraph::Made(g),
                Err(_) => KernelGraph::Failed,
            };
        }
        let KernelGraph::Made(graph) = &mut *slot else { return Ok(None) };
        Ok(graph.launch(stream, nodes)?.map(|(b, a)| (TimingEvent::Graph(b), TimingEvent::Graph(a))))
    }

    /// The launch shape of the runtime's helper kernels (`records.cuh`), grid-stride loops
    /// all: four blocks of 256 threads per SM.
    fn helper_launch(&self) -> LaunchConfig {
        LaunchConfig { grid_dim: (self.device.sm_count() * 4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }
    }

    /// A timing event recorded on `stream` now: one an earlier launch gave back, or a new
    /// one.
    fn event(&self, stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>) -> Result<TimingEvent> {
        let kept = self.events.lock().ok().and_then(|mut e| e.pop());
        let event = match kept {
            Some(e) => e,
            None => self.device.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(|e| TesseraError::Internal(format!("event: {e:?}")))?,
        };
        event.record(stream).map_err(|e| TesseraError::Internal(format!("event: {e:?}")))?;
        Ok(TimingEvent::Kept { event: Some(event), kept: Arc::clone(&self.events) })
    }

    /// The helper kernel `name` (`records.cuh`), looked up once.
    fn helper(&self, name: &'static str) -> Result<CudaFunction> {
        if let Some(f) = self.helper_fns.lock().ok().and_then(|m| m.get(name).cloned()) {
            return Ok(f);
        }
        let f = self.helpers()?.load_function(name).map_err(|e| TesseraError::Internal(format!("loading {name}: {e:?}")))?;
        if let Ok(mut m) = self.helper_fns.lock() {
            m.insert(name, f.clone());
        }
        Ok(f)
    }

    /// `len` elements on the query's stream for a pipeline's sink, set to the 64-bit
    /// pattern `value` (0: zeroed; otherwise `T` must be 64 bits wide) by `fills` before
    /// the pipeline's kernel runs ([`GpuRuntime::apply_fills`]). The fills write whole
    /// 32-bit words: an array of 1- or 2-byte elements (a narrowed build payload) is
    /// rounded up to them.
    fn alloc_set<T: tessera_cuda::cudarc::driver::DeviceRepr>(&self, gs: &GpuStream, len: usize, value: u64, fills: &mut Fills) -> Result<DeviceBuffer<T>> {
        let size = std::mem::size_of::<T>();
        if (size % 4 != 0 && 4 % size != 0) || (value != 0 && size != 8) {
            return Err(TesseraError::Internal(format!("a sink array of {size}-byte values set to {value:#x}")));
        }
        let words = (len * size).div_ceil(4);
        // SAFETY: set by `apply_fills` in stream order before the kernel that reads it.
        let buf = unsafe { self.alloc_uninit::<T>(gs, words * 4 / size) }?;
        fills.0.push((buf.as_slice().device_ptr(gs.stream()).0, words as u64, value));
        Ok(buf)
    }

    /// A zeroed array of `len` distances of byte form `n` (a narrowed build payload,
    /// `codegen::build::payload_form`).
    fn alloc_narrow(&self, gs: &GpuStream, n: Narrow, len: usize, fills: &mut Fills) -> Result<NarrowBuf> {
        Ok(match n {
            Narrow::U8 => NarrowBuf::U8(self.alloc_set::<u8>(gs, len, 0, fills)?),
            Narrow::U16 => NarrowBuf::U16(self.alloc_set::<u16>(gs, len, 0, fills)?),
            Narrow::U32 => NarrowBuf::U32(self.alloc_set::<u32>(gs, len, 0, fills)?),
            Narrow::Bits(_) | Narrow::Runs { .. } => return Err(TesseraError::Internal("a bit-packed build payload, or one of runs".into())),
        })
    }

    /// Queues the fold of `kernel`'s group copies ([`GpuRuntime::fold_node`]) the plain
    /// way; nothing for a sink without copies.
    fn fold_copies(&self, stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>, kernel: &Kernel, sink: &SinkArrays) -> Result<()> {
        match self.fold_node(stream, kernel, sink)? {
            Some(fold) => queue_fold(stream, &fold),
            None => Ok(()),
        }
    }

    /// The launch that folds the copies of an aggregation's global arrays into the first
    /// (`codegen::aggregate::global_copies`): `tessera_fold_copies`, queued right after
    /// the pipeline's kernel, inside its timing events; it also sets the seen flags where
    /// the kernel left them to it (`seen_from`). None for other sinks.
    fn fold_node(&self, stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>, kernel: &Kernel, sink: &SinkArrays) -> Result<Option<KernelNode>> {
        let SinkLayout::Aggregate { groups, global_copies, hashed, seen_from, .. } = &kernel.sink else { return Ok(None) };
        if *global_copies <= 1 {
            return Ok(None);
        }
        if hashed.is_some() || sink.accs.len() != sink.acc_words.len() {
            return Err(TesseraError::Internal("group arrays in copies that are not one accumulator array each (a hash table's keys)".into()));
        }
        let seen = sink.seen.as_ref().ok_or_else(|| TesseraError::Internal("an aggregation without seen flags".into()))?;
        let witness = match *seen_from {
            Some(k) if sink.acc_words.get(k) == Some(&1) => k as i32,
            Some(k) => return Err(TesseraError::Internal(format!("seen flags from group array {k}, which is not one word a group"))),
            None => -1,
        };
        let seen_ptr = seen.as_slice().device_ptr(stream).0;
        let arrays = group_arrays(&sink.accs, &sink.acc_words, stream);
        let list = GatherList::new(&arrays).ok_or_else(|| TesseraError::Internal(format!("{} group arrays to fold in one launch", arrays.len())))?;
        let words = groups * sink.acc_words.iter().copied().max().unwrap_or(1);
        let blocks = words.div_ceil(256).clamp(1, self.device.sm_count() as usize * 4) as u32;
        let function = self.helper("tessera_fold_copies")?;
        let (groups, copies) = (*groups as i64, *global_copies as i32);
        // The kernel's arguments (list, groups, copies, seen, witness), each as the words
        // of its value: the 32-bit ones in the low half of one.
        let args = vec![list.to_words(), vec![groups as u64], vec![u64::from(copies as u32)], vec![seen_ptr], vec![u64::from(witness as u32)]];
        let config = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        Ok(Some(KernelNode { function, config, args }))
    }

    /// Sets the arrays in `fills` on the query's stream, [`FillList::MAX`] to a launch
    /// of `tessera_fill_many`.
    fn apply_fills(&self, gs: &GpuStream, fills: Fills) -> Result<()> {
        if fills.0.is_empty() {
            return Ok(());
        }
        let f = self.helper("tessera_fill_many")?;
        for chunk in fills.0.chunks(FillList::MAX) {
            let list = FillList::new(chunk).ok_or_else(|| TesseraError::Internal("a fill list too long".into()))?;
            let mut l = gs.stream().launch_builder(&f);
            l.arg(&list);
            unsafe { l.launch(self.helper_launch()) }.map_err(|e| TesseraError::Internal(format!("fill: {e:?}")))?;
        }
        Ok(())
    }

    /// Waits for the query's kernels and downloads `regions` together with the query's
    /// error flags, in one round trip. A raised flag (overflow, duplicate or out-of-range
    /// build keys) sends the query to the CPU ([`TesseraError::RetryOnCpu`]); the builds that were
    /// not waited for are reported.
    fn finish(&self, state: &mut GpuQueryState, regions: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        let dev = &self.device;
        let mut all = Vec::with_capacity(regions.len() + 1);
        if let Some(f) = &state.flags {
            all.push((f.as_slice().device_ptr(dev.stream()).0, f.num_bytes()));
        }
        all.extend_from_slice(regions);
        tessera_common::trace::mark("download");
        // A spare's fill goes behind the copies, while the host waits for them.
        let refill = state.refill.take();
        let lane = state.lane()?;
        let mut got = lane.download_regions_then(&all, || match refill {
            Some(r) => self.apply_fills(&lane, r),
            None => Ok(()),
        })?;
        tessera_common::trace::mark("downloaded");
        if state.flags.is_some() && got.remove(0).iter().any(|&b| b != 0) {
            return Err(TesseraError::RetryOnCpu("a kernel raised an error flag (arithmetic overflow or build keys the plan did not expect)".into()));
        }
        // The builds queued so far are done and raised no flag: the cache may keep them.
        if !state.built.is_empty() {
            let cap = self.device.memory().limit() / BUILD_CACHE_SHARE;
            if let Ok(mut cache) = self.builds.lock() {
                for (key, table) in state.built.drain(..) {
                    let bytes = table.bytes();
                    cache.insert(key, table, bytes, cap);
                }
            }
        }
        // Their times are read when asked for (`PendingRun`).
        if let Ok(mut r) = self.last_runs.lock() {
            r.append(&mut state.pending);
        }
        tessera_common::trace::mark("builds' reports kept");
        Ok(got)
    }

    /// Clears the `seen` flag of each of `groups` groups failing a HAVING term (`terms`:
    /// [`GpuHaving::descriptors`]), queued behind the aggregation.
    fn apply_having(&self, gs: &GpuStream, seen: &DeviceBuffer<u32>, groups: usize, terms: &[i64]) -> Result<()> {
        let d_terms = self.upload(gs, terms)?;
        let (n, nterms) = (groups as i64, (terms.len() / 6) as i32);
        let cfg = self.helper_launch();
        let having = self.helper("tessera_having")?;
        let mut l = gs.stream().launch_builder(&having);
        l.arg(seen.as_slice()).arg(&n).arg(d_terms.as_slice()).arg(&nterms);
        unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("having: {e:?}")))?;
        // Freed in stream order, after the kernel has read it.
        drop(d_terms);
        Ok(())
    }

    /// The groups an aggregation saw, in group-number order (a hash table's slot order
    /// when it groups through one), with the words of each accumulator array (`accs`,
    /// each a whole number of words per group) for them. Small domains download `seen`
    /// and the arrays whole, in one round trip. Large ones (SSB
    /// q4.3: 2 M slots, 800 present) are compacted on the GPU into records (group number,
    /// then each array's words, in group-number order) by kernels queued behind the
    /// aggregation, so only present groups cross PCIe, and the first
    /// [`COMPACT_HEAD_RECORDS`] of them in the same round trip as the count.
    ///
    /// With a `sort` (keys as [`GpuSort::descriptors`] gives them), the records are also
    /// ranked on the GPU and come back in its order, when there are at most
    /// [`GPU_SORT_MAX_ROWS`] of them: a domain of at most [`SMALL_SORT_MAX_GROUPS`] slots
    /// in one launch, a larger one without a LIMIT in two (listed by ranges of slots,
    /// then made and ranked from the lists: `ExecExperiments::listed_chain`), others by
    /// the compaction, gathers and rank.
    #[allow(clippy::too_many_arguments)]
    fn fetch_groups(&self, state: &mut GpuQueryState, seen: &DeviceBuffer<u32>, accs: &[DeviceBuffer<u64>], words: &[usize], groups: usize, scalar: bool, sort: Option<(usize, Vec<i64>, Option<usize>)>) -> Result<FetchedGroups> {
        let gs = state.lane()?;
        let stream = gs.stream();
        if (sort.is_none() || groups <= ExecExperiments::get().host_sort_max_groups) && (scalar || groups < COMPACT_MIN_GROUPS) {
            let mut regions = vec![(seen.as_slice().device_ptr(stream).0, 4 * groups)];
            regions.extend(accs.iter().zip(words).map(|(b, &w)| (b.as_slice().device_ptr(stream).0, 8 * w * groups)));
            let got = self.finish(state, &regions)?;
            let s: Vec<u32> = got[0].chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
            let any = s.first().is_some_and(|&x| x != 0);
            let order: Vec<usize> = if scalar { vec![0] } else { (0..groups).filter(|&g| s[g] != 0).collect() };
            let values = got[1..]
                .iter()
                .zip(words)
                .map(|(bytes, &w)| {
                    let all = words_of(bytes);
                    order.iter().flat_map(|&g| all[g * w..(g + 1) * w].iter().copied()).collect()
                })
                .collect();
            return Ok(FetchedGroups { order, values, any, sorted: false, marks: vec![("downloaded", Instant::now())] });
        }
        let width = 1 + words.iter().sum::<usize>();
        // SAFETY: only the count and the records below it are ever read; the compaction
        // writes both (the count from its first block), so nothing needs setting first.
        let mut rec = unsafe { self.alloc_uninit::<u64>(&gs, 1 + groups * width) }?;
        if !ExecExperiments::get().short_chain {
            gs.copy_into(&[0u64], &mut rec)?;
        }
        let rec_ptr = rec.as_slice().device_ptr(stream).0;
        let cfg = self.helper_launch();
        let w = width as i64;
        // With a GPU sort, its report times the whole chain from here: the compaction, the
        // gathers, a LIMIT's selection and the rank (the sort pipeline's GPU work).
        let chain_start = if sort.is_some() { Some(self.event(stream)?) } else { None };
        // The accumulators gathered by one launch (`tessera_gather_many`), or a small
        // domain's records made by one (see `SMALL_RECORDS_MAX_GROUPS`).
        let list = GatherList::new(&group_arrays(accs, words, stream)).filter(|_| ExecExperiments::get().gather_many);
        // A small domain's whole chain, its rank included, in one launch (see
        // `SMALL_SORT_MAX_GROUPS`): the records it ranks at most, by its shared memory.
        let fused_cap = (SMALL_SORT_SHARED_BYTES / (8 * width)).min(GPU_SORT_MAX_ROWS);
        // A larger domain's in two (see `ExecExperiments::listed_chain`), its lists of
        // seen groups by each block's range of slots.
        let small = groups <= ExecExperiments::get().small_sort_max_groups;
        let listed = !small && ExecExperiments::get().listed_chain && cfg.grid_dim.0 as usize <= LISTED_CHAIN_MAX_LISTS && sort.as_ref().is_some_and(|(_, _, limit)| limit.is_none());
        let fused = match (&sort, list) {
            (Some((_, keys, _)), Some(list)) if (small || listed) && fused_cap > 0 => Some((list, keys)),
            _ => None,
        };
        if let Some((list, keys)) = fused {
            let by_value = SortKeys::new(keys).ok_or_else(|| TesseraError::Internal(format!("{} sort key words, more than a rank sort takes", keys.len())))?;
            let (n, nkeys, cap) = (groups as i64, (keys.len() / 4) as i32, fused_cap as i64);
            let grid = LaunchConfig { grid_dim: (self.device.sm_count(), 1, 1), block_dim: (SMALL_SORT_THREADS, 1, 1), shared_mem_bytes: (fused_cap * width * 8) as u32 };
            if small {
                let sorted_records = self.helper("tessera_small_sorted_records")?;
                let mut l = stream.launch_builder(&sorted_records);
                l.arg(seen.as_slice()).arg(&n).arg(&list).arg(&w).arg(&by_value).arg(&nkeys).arg(&cap).arg(&rec_ptr);
                unsafe { l.launch(grid) }.map_err(|e| TesseraError::Internal(format!("small sorted records: {e:?}")))?;
            } else {
                let lists = cfg.grid_dim.0 as usize;
                let per_block = groups.div_ceil(lists);
                // SAFETY: each block writes its count and the entries of its list that
                // the second kernel reads (those below its count).
                let counts = unsafe { self.alloc_uninit::<u32>(&gs, lists) }?;
                let entries = unsafe { self.alloc_uninit::<u32>(&gs, lists * per_block) }?;
                let (nlists, per) = (lists as i64, per_block as i64);
                let list_seen = self.helper("tessera_list_seen")?;
                let mut l = stream.launch_builder(&list_seen);
                l.arg(seen.as_slice()).arg(&n).arg(&per).arg(counts.as_slice()).arg(entries.as_slice());
                unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("list seen: {e:?}")))?;
                let listed_records = self.helper("tessera_listed_sorted_records")?;
                let mut l = stream.launch_builder(&listed_records);
                l.arg(entries.as_slice()).arg(counts.as_slice()).arg(&nlists).arg(&per).arg(&list).arg(&w).arg(&by_value).arg(&nkeys).arg(&cap).arg(&rec_ptr);
                unsafe { l.launch(grid) }.map_err(|e| TesseraError::Internal(format!("listed sorted records: {e:?}")))?;
                // Freed in stream order, after the kernels.
                drop((counts, entries));
            }
        } else if let Some(list) = list.filter(|_| groups <= ExecExperiments::get().small_records_max_groups) {
            let records = self.helper("tessera_small_records")?;
            let n = groups as i64;
            let mut l = stream.launch_builder(&records);
            l.arg(seen.as_slice()).arg(&n).arg(&list).arg(&rec_ptr).arg(&w);
            let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
            unsafe { l.launch(one_block) }.map_err(|e| TesseraError::Internal(format!("small records: {e:?}")))?;
        } else if let Some(list) = list {
            self.compact_groups(&gs, seen, groups, rec_ptr, width)?;
            let gather = self.helper("tessera_gather_many")?;
            let mut l = stream.launch_builder(&gather);
            l.arg(&list).arg(&rec_ptr).arg(&w);
            unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("gather: {e:?}")))?;
        } else {
            self.compact_groups(&gs, seen, groups, rec_ptr, width)?;
            let gather = self.helper("tessera_gather_records")?;
            let mut off = 1i64;
            for (buf, &aw) in accs.iter().zip(words) {
                let aw = aw as i64;
                let mut l = stream.launch_builder(&gather);
                l.arg(buf.as_slice()).arg(&aw).arg(&rec_ptr).arg(&w).arg(&off);
                unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("gather: {e:?}")))?;
                off += aw;
            }
        }
        // The rank sort writes the records in order into a second buffer.
        let mut ranked = None;
        // Under a LIMIT, of more groups than the rank sort takes only those the LIMIT can
        // keep are ranked (see `GpuSort::limit`): their count, to see whether they fit.
        let mut top: Option<DeviceBuffer<u64>> = None;
        if let (Some((pipeline, _, _)), true) = (&sort, fused.is_some()) {
            // (Recorded above whenever there is a sort.)
            let before = chain_start.ok_or_else(|| TesseraError::Internal("a GPU sort's chain has no start event".into()))?;
            let after = self.event(stream)?;
            state.pending.push(PendingRun { run: GpuRun::new(*pipeline), timing: Some((before, after)) });
        } else if let Some((pipeline, keys, limit)) = &sort {
            // By value to the rank kernel; uploaded only for a LIMIT's selection below.
            let by_value = SortKeys::new(keys).ok_or_else(|| TesseraError::Internal(format!("{} sort key words, more than a rank sort takes", keys.len())))?;
            // As before 2026-11-27j (`TESSERA_EXP_SHORT_CHAIN=0`): the keys uploaded for the rank.
            let _uploaded = if ExecExperiments::get().short_chain { None } else { Some(self.upload(&gs, keys)?) };
            let max = GPU_SORT_MAX_ROWS as i64;
            let mut src = rec_ptr;
            let mut kept = None;
            if let Some(want) = limit.filter(|&k| (1..=GPU_SORT_MAX_ROWS).contains(&k)) {
                let d_keys = self.upload(&gs, keys)?;
                let thr = self.alloc::<u64>(&gs, 2)?;
                let count = self.alloc::<u64>(&gs, 1)?;
                // SAFETY: tessera_seal_top writes the count and tessera_keep_top every record below it.
                let candidates = unsafe { self.alloc_uninit::<u64>(&gs, 1 + GPU_SORT_MAX_ROWS * width) }?;
                let (cand_ptr, thr_ptr, count_ptr) = (candidates.as_slice().device_ptr(stream).0, thr.as_slice().device_ptr(stream).0, count.as_slice().device_ptr(stream).0);
                let (want, one_block) = (want as i64, LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 });
                let select = self.helper("tessera_select_top")?;
                let mut l = stream.launch_builder(&select);
                l.arg(&rec_ptr).arg(&w).arg(d_keys.as_slice()).arg(&want).arg(&max).arg(&thr_ptr);
                unsafe { l.launch(one_block) }.map_err(|e| TesseraError::Internal(format!("select top: {e:?}")))?;
                let keep = self.helper("tessera_keep_top")?;
                let mut l = stream.launch_builder(&keep);
                l.arg(&rec_ptr).arg(&w).arg(d_keys.as_slice()).arg(&thr_ptr).arg(&max).arg(&cand_ptr).arg(&count_ptr);
                unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("keep top: {e:?}")))?;
                let seal = self.helper("tessera_seal_top")?;
                let mut l = stream.launch_builder(&seal);
                l.arg(&count_ptr).arg(&max).arg(&cand_ptr);
                unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }) }.map_err(|e| TesseraError::Internal(format!("seal top: {e:?}")))?;
                src = cand_ptr;
                kept = Some(candidates);
                top = Some(count);
            }
            let rows = if kept.is_some() { GPU_SORT_MAX_ROWS } else { groups };
            // SAFETY: the rank kernel writes the count and every record below it.
            let dst = unsafe { self.alloc_uninit::<u64>(&gs, 1 + rows * width) }?;
            let nkeys = (keys.len() / 4) as i32;
            // (Recorded above whenever there is a sort.)
            let before = chain_start.ok_or_else(|| TesseraError::Internal("a GPU sort's chain has no start event".into()))?;
            let rank = self.helper("tessera_rank_records")?;
            let mut l = stream.launch_builder(&rank);
            l.arg(&src).arg(&w).arg(&by_value).arg(&nkeys).arg(&max).arg(dst.as_slice());
            unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("rank: {e:?}")))?;
            let after = self.event(stream)?;
            let run = GpuRun::new(*pipeline);
            state.pending.push(PendingRun { run, timing: Some((before, after)) });
            ranked = Some(dst);
        }
        let mut out_ptr = ranked.as_ref().map_or(rec_ptr, |d| d.as_slice().device_ptr(stream).0);
        let head = groups.min(COMPACT_HEAD_RECORDS);
        let mut regions = vec![(out_ptr, 8 * (1 + head * width))];
        if let Some(count) = &top {
            regions.push((count.as_slice().device_ptr(stream).0, 8));
            regions.push((rec_ptr, 8));
        }
        let mut got = self.finish(state, &regions)?;
        let mut bytes = got.remove(0);
        let mut marks = vec![("kernels waited for", Instant::now())];
        let mut present = if bytes.len() >= 8 { word_at(&bytes, 0) as usize } else { 0 };
        // Ranked by the rank sort, or by the one launch of a small domain when its records
        // fit (more come back in group-number order).
        let mut ranked_all = ranked.is_some() || fused.is_some();
        let rank_max = if fused.is_some() { fused_cap } else { GPU_SORT_MAX_ROWS };
        if top.is_some() {
            // `got` is now [count of candidates, rec's count].
            let (candidates, all) = (got.first().map_or(0, |b| word_at(b, 0)) as usize, got.get(1).map_or(0, |b| word_at(b, 0)) as usize);
            if candidates > GPU_SORT_MAX_ROWS {
                // More tie with the LIMIT's last than the rank sort takes: every record,
                // unranked (the CPU backend's sort pipeline orders them).
                out_ptr = rec_ptr;
                present = all;
                ranked_all = false;
                // Downloaded below, once their count is checked.
                bytes = Vec::new();
            }
            marks.push(("groups a LIMIT can keep picked", Instant::now()));
        }
        if present > groups {
            return Err(TesseraError::Internal(format!("{present} group records counted in {groups} groups")));
        }
        if bytes.len() < 8 * (1 + present * width) {
            bytes = gs.download_regions(&[(out_ptr, 8 * (1 + present * width))])?.swap_remove(0);
            marks.push(("records downloaded", Instant::now()));
        }
        if bytes.len() < 8 * (1 + present * width) {
            return Err(TesseraError::Internal(format!("{present} group records, {} bytes downloaded", bytes.len())));
        }
        let sorted = ranked_all && present <= rank_max;
        if let (Some((pipeline, _, _)), Ok(mut runs)) = (&sort, self.last_runs.lock()) {
            // The rank kernel's report (waited for above, with the query's other kernels).
            if let Some(r) = runs.iter_mut().rev().map(|p| &mut p.run).find(|r| r.pipeline == *pipeline) {
                (r.rows, r.rows_out, r.bytes) = (present as u64, present as u64, (present * width * 8) as u64);
            }
        }
        // Records come in group-number order (a hashed group's number is its slot, in no
        // useful order), unless ranked.
        let (order, values) = split_records(&bytes[8..], present, width, words)?;
        if !sorted && (order.windows(2).any(|w| w[0] >= w[1]) || order.last().is_some_and(|&g| g >= groups)) {
            return Err(TesseraError::Internal(format!("{present} group records not in increasing group order below {groups}")));
        }
        marks.push(("records split", Instant::now()));
        tessera_common::trace::mark("records split");
        Ok(FetchedGroups { order, values, any: present > 0, sorted, marks })
    }

    /// Queues the kernels that write the numbers of the groups `seen` marks, in
    /// group-number order, as records of `width` words at `rec_ptr` (its word 0 the
    /// count, each record's first word the group number; see `records.cuh`).
    fn compact_groups(&self, gs: &GpuStream, seen: &DeviceBuffer<u32>, groups: usize, rec_ptr: u64, width: usize) -> Result<()> {
        let stream = gs.stream();
        let cfg = self.helper_launch();
        let (n, w) = (groups as i64, width as i64);
        // In group-number order: each block counts its range of groups, then writes their
        // records after the earlier blocks' ones.
        let blocks = cfg.grid_dim.0 as usize;
        let per_block = groups.div_ceil(blocks).next_multiple_of(cfg.block_dim.0 as usize) as i64;
        // SAFETY: every block writes its count before the second kernel reads them.
        let counts = unsafe { self.alloc_uninit::<u64>(gs, blocks) }?;
        let count = self.helper("tessera_count_seen")?;
        let mut l = stream.launch_builder(&count);
        l.arg(seen.as_slice()).arg(&n).arg(&per_block).arg(counts.as_slice());
        unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("count seen: {e:?}")))?;
        let compact = self.helper("tessera_compact_records_ordered")?;
        let mut l = stream.launch_builder(&compact);
        l.arg(seen.as_slice()).arg(&n).arg(&per_block).arg(counts.as_slice()).arg(&rec_ptr).arg(&w);
        unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("compact: {e:?}")))?;
        // Freed in stream order, after the kernels.
        drop(counts);
        Ok(())
    }

    /// Keeps the groups `seen` marks as the columns of an aggregation's result on the GPU
    /// (`layout`, from [`result_layout`]), for the pipelines reading it there: the
    /// groups' numbers are compacted in group-number order (the order the host's columns
    /// would have), their count comes back (with the query's error flags), and each
    /// column is made by `tessera_result_column`. A NULL key or a value beyond its type
    /// raises the error flags, read when the next result comes back.
    fn keep_on_gpu(&self, state: &mut GpuQueryState, seen: &DeviceBuffer<u32>, accs: &[DeviceBuffer<u64>], groups: usize, layout: &[ResultColumn]) -> Result<KeptResult> {
        let gs = state.lane()?;
        let dev = &self.device;
        let stream = gs.stream();
        // SAFETY: only the count and the group numbers below it are read; the compaction
        // writes both.
        let rec = unsafe { self.alloc_uninit::<u64>(&gs, 1 + groups) }?;
        let rec_ptr = rec.as_slice().device_ptr(stream).0;
        self.compact_groups(&gs, seen, groups, rec_ptr, 1)?;
        let got = self.finish(state, &[(rec_ptr, 8)])?;
        let rows = got.first().filter(|b| b.len() >= 8).map_or(0, |b| word_at(b, 0) as usize);
        if rows > groups {
            return Err(TesseraError::Internal(format!("{rows} groups counted in {groups}")));
        }
        let flags_ptr = state.flags.as_ref().map(|f| f.as_slice().device_ptr(stream).0).ok_or_else(|| TesseraError::Internal("error flags".into()))?;
        let column = self.helper("tessera_result_column")?;
        let cfg = self.helper_launch();
        let mut columns = Vec::with_capacity(layout.len());
        for c in layout {
            // SAFETY: the kernel writes every row below the count, the only rows read.
            let (buf, width) = match c.column.width {
                Width::I32 => (GpuBuf::I32(unsafe { self.alloc_uninit::<i32>(&gs, rows.max(1)) }?), 4i32),
                Width::I64 => (GpuBuf::I64(unsafe { self.alloc_uninit::<i64>(&gs, rows.max(1)) }?), 8i32),
                Width::Str => return Err(string_as_values()),
            };
            let arr = match c.kind {
                0 => 0u64,
                _ => accs.get(c.array).map(|a| a.as_slice().device_ptr(stream).0).ok_or_else(|| TesseraError::Internal("a kept result's array".into()))?,
            };
            let out = buf.ptr(dev);
            let [a, b, k] = c.abc;
            let mut l = stream.launch_builder(&column);
            l.arg(&rec_ptr).arg(&c.kind).arg(&arr).arg(&a).arg(&b).arg(&k).arg(&c.bounds.0).arg(&c.bounds.1).arg(&width).arg(&out).arg(&flags_ptr);
            unsafe { l.launch(cfg) }.map_err(|e| TesseraError::Internal(format!("result column: {e:?}")))?;
            columns.push(Arc::new(buf));
        }
        // Freed in stream order, after the column kernels.
        drop(rec);
        Ok(KeptResult { rows, columns })
    }

    /// The shape of a table built on the GPU.
    pub fn table_shape(state: &GpuQueryState, id: HashTableId) -> Option<GpuTable> {
        state.tables.get(&id).map(|t| t.shape.clone())
    }
}

/// The host's cores, asked once: `available_parallelism` reads the cgroup files on every
/// call (44–60 µs on the H200 host, measured in EXPLAIN ANALYZE of SSB's grouped queries,
/// where it was most of the time between the kernels' end and the records taken apart).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Group records of `width` words each (the group number, then each accumulator array's
/// `words`), `present` of them in `bytes`, taken apart into the group numbers and one
/// vector per accumulator array, in their order. Ranges of records go to threads of their
/// own: at TPC-H SF 10, q18's 15 M groups are 480 MB of records.
fn split_records(bytes: &[u8], present: usize, width: usize, words: &[usize]) -> Result<(Vec<usize>, Vec<Vec<u64>>)> {
    /// Records a thread takes apart at least (below it, one thread does all).
    const RECORDS_PER_THREAD: usize = 1 << 16;
    let threads = cores().min(present / RECORDS_PER_THREAD).max(1);
    let per = present.div_ceil(threads).max(1);
    let word = |i: usize| word_at(bytes, i);
    if words.contains(&0) {
        return Err(TesseraError::Internal("a group record array of no words".into()));
    }
    let mut order = vec![0usize; present];
    let mut values: Vec<Vec<u64>> = words.iter().map(|&w| vec![0u64; present * w]).collect();
    // Per range: its first record, its part of `order` and of each accumulator vector.
    type Part<'a> = (usize, &'a mut [usize], Vec<&'a mut [u64]>);
    let mut parts: Vec<Part<'_>> = order.chunks_mut(per).enumerate().map(|(k, o)| (k * per, o, Vec::new())).collect();
    for (v, &w) in values.iter_mut().zip(words) {
        for (part, chunk) in parts.iter_mut().zip(v.chunks_mut((per * w).max(1))) {
            part.2.push(chunk);
        }
    }
    tessera_cpu::parallel::on_threads(parts, |(start, order, mut accs)| {
        for (k, o) in order.iter_mut().enumerate() {
            let at = (start + k) * width;
            *o = word(at) as usize;
            let mut off = at + 1;
            for (acc, &w) in accs.iter_mut().zip(words) {
                for j in 0..w {
                    acc[k * w + j] = word(off + j);
                }
                off += w;
            }
        }
        Ok(())
    })?;
    Ok((order, values))
}

/// An intermediate result as a table a GPU pipeline reads (columns in order, never
/// cached): its chunks as batches. A NULL in a column its kernel takes as never NULL
/// sends the query to the CPU ([`GpuRuntime::run`]).
pub fn result_table(id: usize, chunks: &[Chunk]) -> Result<LoadedTable> {
    let mut batches = Vec::with_capacity(chunks.len());
    let mut schema = Arc::new(arrow::datatypes::Schema::empty());
    for chunk in chunks.iter().filter(|c| c.rows > 0) {
        let fields: Vec<arrow::datatypes::Field> =
            chunk.columns.iter().enumerate().map(|(i, c)| arrow::datatypes::Field::new(format!("c{i}"), c.data_type().clone(), true)).collect();
        schema = Arc::new(arrow::datatypes::Schema::new(fields));
        let options = arrow::array::RecordBatchOptions::new().with_row_count(Some(chunk.rows));
        batches.push(arrow::array::RecordBatch::try_new_with_options(Arc::clone(&schema), chunk.columns.clone(), &options).map_err(arrow_err)?);
    }
    Ok(LoadedTable::from_batches(format!("result r{id}"), schema, batches))
}

/// The stand-in table of a pipeline reading result `id` kept on the GPU (its rows and
/// columns are the kept result's, see [`GpuRuntime::run`]).
pub fn kept_table(id: usize) -> LoadedTable {
    LoadedTable::from_batches(format!("result r{id} (on the GPU)"), Arc::new(arrow::datatypes::Schema::empty()), Vec::new())
}

/// A column's batches as one host array of 32-bit values, as kernels read them:
/// dictionary codes, dates as days, other integers cast (see [`in_parallel`]).
fn host_i32(parts: &[ArrayRef]) -> Result<Vec<i32>> {
    in_parallel(parts, |a, out: &mut [i32]| {
        match a.data_type() {
            DataType::Dictionary(..) => out.copy_from_slice(a.as_dictionary::<Int32Type>().keys().values()),
            DataType::Date32 => out.copy_from_slice(a.as_primitive::<arrow::datatypes::Date32Type>().values()),
            _ => out.copy_from_slice(arrow::compute::cast(a, &DataType::Int32).map_err(arrow_err)?.as_primitive::<Int32Type>().values()),
        }
        Ok(())
    })
}

/// A column's batches as one host array of 64-bit values (see [`host_values`]).
fn host_i64(parts: &[ArrayRef]) -> Result<Vec<i64>> {
    in_parallel(parts, host_values)
}

/// A column's batches as their distances from `reference` in `T` (a narrowed column,
/// see [`narrow_form`] and [`narrow_range`]): a value outside `T`'s reach is an error,
/// never a wrapped one.
///
/// Integer, date and dictionary arrays are read in place ([`distances_of`]); others go
/// through their 64-bit values ([`host_values`]). Through 64-bit values (a buffer and a
/// cast a batch) a column of 600 M rows took 0.28–0.33 s on the H200's 16-core host (SSB
/// SF 100's first query, `gpu-2026-12-01f` run 4).
fn host_distances<T: Copy + Default + Send + TryFrom<u64>>(parts: &[ArrayRef], reference: i64) -> Result<Vec<T>> {
    in_parallel(parts, |a, out: &mut [T]| match distances_into(a, 0, reference, out)? {
        None => Ok(()),
        Some(v) => Err(outside_zone(v, reference)),
    })
}

/// The error for value `v` found outside its column's zone map (from `reference`).
fn outside_zone(v: i64, reference: i64) -> TesseraError {
    TesseraError::Internal(format!("value {v} outside its column's zone map (from {reference})"))
}

/// Rows `start..start + out.len()` of array `a` as their distances from `reference` in
/// `out` ([`distances_of`]), read in place from integer, date and dictionary arrays;
/// the first value out of `T`'s reach, if any.
fn distances_into<T: Copy + Default + TryFrom<u64>>(a: &ArrayRef, start: usize, reference: i64, out: &mut [T]) -> Result<Option<i64>> {
    use arrow::datatypes::{Date32Type, Int8Type, Int16Type, Int64Type, UInt8Type, UInt16Type, UInt32Type};
    let rows = start..start + out.len();
    Ok(match a.data_type() {
        DataType::Dictionary(k, _) if **k == DataType::Int32 => distances_of(&a.as_dictionary::<Int32Type>().keys().values()[rows], reference, out),
        DataType::Int32 => distances_of(&a.as_primitive::<Int32Type>().values()[rows], reference, out),
        DataType::Date32 => distances_of(&a.as_primitive::<Date32Type>().values()[rows], reference, out),
        DataType::Int64 => distances_of(&a.as_primitive::<Int64Type>().values()[rows], reference, out),
        DataType::Int16 => distances_of(&a.as_primitive::<Int16Type>().values()[rows], reference, out),
        DataType::Int8 => distances_of(&a.as_primitive::<Int8Type>().values()[rows], reference, out),
        DataType::UInt8 => distances_of(&a.as_primitive::<UInt8Type>().values()[rows], reference, out),
        DataType::UInt16 => distances_of(&a.as_primitive::<UInt16Type>().values()[rows], reference, out),
        DataType::UInt32 => distances_of(&a.as_primitive::<UInt32Type>().values()[rows], reference, out),
        _ => {
            let mut values = vec![0i64; out.len()];
            host_values(&a.slice(start, out.len()), &mut values)?;
            distances_of(&values, reference, out)
        }
    })
}

/// Writes each of `values`' distances from `reference` into `out`, in `T`; the first
/// value whose distance is negative or beyond `T` is returned (its slot holds 0). The
/// loop has no early exit, so that it stays a plain pass over the batch.
fn distances_of<V: Copy + Into<i64>, T: Copy + Default + TryFrom<u64>>(values: &[V], reference: i64, out: &mut [T]) -> Option<i64> {
    let mut outside = None;
    for (o, &v) in out.iter_mut().zip(values) {
        let v: i64 = v.into();
        match u64::try_from(i128::from(v) - i128::from(reference)).ok().and_then(|d| T::try_from(d).ok()) {
            Some(d) => *o = d,
            None => {
                outside.get_or_insert(v);
                *o = T::default();
            }
        }
    }
    outside
}

/// A column's batches as their distances from `reference` bit-packed `w` bits a row
/// (`Narrow::Bits`, `codegen::pack_bits`), ranges of whole groups of rows
/// (`codegen::BITS_GROUP_ROWS`) on threads of their own. A distance of more than `w`
/// bits is an error, never a truncated one.
///
/// A group's distances are made into a buffer of the thread's and packed from there: made
/// for the whole column first, as an array of 32-bit distances, they took 0.20–0.24 s and
/// their packing 0.16–0.22 s more for one of SSB SF 100's 600 M-row columns on the
/// H200's 16-core host (`gpu-2026-12-01f` run 6).
fn host_bits(parts: &[ArrayRef], reference: i64, w: u32) -> Result<Vec<u32>> {
    let rows: usize = parts.iter().map(|a| a.len()).sum();
    let mut words = vec![0u32; codegen::Narrow::bit_words(rows, w)];
    let group = codegen::BITS_GROUP_ROWS;
    let group_words = codegen::BLOCK_THREADS as usize * w as usize;
    let per_thread = rows.div_ceil(group).div_ceil(cores()).max(1);
    // The row each part starts at.
    let starts: Vec<usize> = parts.iter().scan(0, |at, a| Some(std::mem::replace(at, *at + a.len()))).collect();
    // Each thread's first value out of the zone map and first distance wider than `w`.
    let found: Vec<Result<(Option<i64>, Option<u32>)>> = std::thread::scope(|s| {
        let packers: Vec<_> = words
            .chunks_mut(per_thread * group_words)
            .enumerate()
            .map(|(k, out)| {
                let (parts, starts) = (parts, &starts);
                s.spawn(move || -> Result<(Option<i64>, Option<u32>)> {
                    let (mut outside, mut wide) = (None, None);
                    let mut buf = vec![0u32; group];
                    for (i, gw) in out.chunks_mut(group_words).enumerate() {
                        let lo = (k * per_thread + i) * group;
                        if lo >= rows {
                            break;
                        }
                        let hi = (lo + group).min(rows);
                        // The group's rows, part after part from the one holding row `lo`.
                        let (mut p, mut at) = (starts.partition_point(|&s| s <= lo).saturating_sub(1), lo);
                        while at < hi {
                            let (a, first) = (&parts[p], starts[p]);
                            let take = (first + a.len()).min(hi) - at;
                            if let Some(v) = distances_into(a, at - first, reference, &mut buf[at - lo..at - lo + take])? {
                                outside.get_or_insert(v);
                            }
                            at += take;
                            p += 1;
                        }
                        if let Some(d) = codegen::pack_bits(&buf[..hi - lo], w, gw) {
                            wide.get_or_insert(d);
                        }
                    }
                    Ok((outside, wide))
                })
            })
            .collect();
        packers.into_iter().map(|p| p.join().unwrap_or_else(|_| Err(TesseraError::Internal("a bit-packing thread panicked".into())))).collect()
    });
    tessera_common::trace::mark("bits packed");
    for f in found {
        match f? {
            (Some(v), _) => return Err(outside_zone(v, reference)),
            (None, Some(d)) => return Err(TesseraError::Internal(format!("distance {d} wider than {w} bits (from {reference})"))),
            (None, None) => {}
        }
    }
    Ok(words)
}

/// One array's values as 64-bit integers: dictionary codes, days, unscaled decimals
/// (which must fit 64 bits: else the query runs on the CPU), doubles' order keys, other
/// integers cast.
fn host_values(a: &ArrayRef, out: &mut [i64]) -> Result<()> {
    match a.data_type() {
        DataType::Dictionary(..) => {
            for (o, &k) in out.iter_mut().zip(a.as_dictionary::<Int32Type>().keys().values().iter()) {
                *o = i64::from(k);
            }
        }
        DataType::Decimal128(..) => {
            for (o, &x) in out.iter_mut().zip(a.as_primitive::<arrow::datatypes::Decimal128Type>().values().iter()) {
                *o = i64::try_from(x).map_err(|_| TesseraError::RetryOnCpu(format!("decimal {x} (unscaled) beyond 64 bits")))?;
            }
        }
        // Floats go up as their order keys (`codegen::layout::float_order_key`).
        DataType::Float64 => {
            for (o, &x) in out.iter_mut().zip(a.as_primitive::<arrow::datatypes::Float64Type>().values().iter()) {
                *o = codegen::layout::float_order_key(x);
            }
        }
        _ => out.copy_from_slice(arrow::compute::cast(a, &DataType::Int64).map_err(arrow_err)?.as_primitive::<arrow::datatypes::Int64Type>().values()),
    }
    Ok(())
}


/// The narrow form of column `c` of `table` as `col` would otherwise lie (plain, without
/// NULLs), bit-packed and in runs where `compact` or the experiment switches say so: its
/// distances from the reference [`narrow_range`] gives, dictionary codes from 0 by the
/// dictionary's size, other integers by the span of the column's zone map. None where
/// the column keeps its width: no zone map (an intermediate result), a span too wide.
fn narrow_form(table: &LoadedTable, c: usize, col: &GpuColumn, compact: bool) -> Option<Narrow> {
    let (lo, hi) = narrow_range(table, c, col)?;
    let span = u64::try_from(i128::from(hi) - i128::from(lo)).ok()?;
    let x = ExecExperiments::get();
    // A compact table's columns are bit-packed and in runs where those pay, unless the
    // experiment switches ask for more.
    let (bits_from, runs_mode) = if compact { (if x.narrow_bits > 0 { x.narrow_bits } else { 8 }, x.narrow_runs.max(1)) } else { (x.narrow_bits, x.narrow_runs) };
    let runs = if runs_mode > 0 { table.column_runs(c).unwrap_or(table.rows) } else { 0 };
    Narrow::for_column(span, col.width, bits_from, runs_mode, table.rows, runs)
}

/// The smallest and largest value column `c` of `table` narrows between as `col` would
/// otherwise lie (see [`narrow_form`]); its smallest is the narrow form's reference.
fn narrow_range(table: &LoadedTable, c: usize, col: &GpuColumn) -> Option<(i64, i64)> {
    if col.packed || col.nullable || col.width == Width::Str {
        return None;
    }
    match col.dictionary {
        Some(d) if d.by_row => None,
        Some(d) => Some((0, i64::try_from(d.size).ok()?.saturating_sub(1))),
        None => Some(table.column_zone(c)?.unwrap_or((0, 0))),
    }
}

/// How many times a stored table's columns, as the GPU takes them plain, may go into the
/// GPU memory limit before the table goes up compact ([`compact_table`]).
///
/// A quarter: above it, one table's byte-narrowed columns (SSB's 0.78× their plain
/// bytes) take a fifth or more of what the GPU may use, leaving room for few tables of
/// its size beside the hash tables, results and concurrent queries; compact they take
/// about half as much (SSB SF 100's 0.489×), for kernels 5–7% slower (SSB SF 20 and 100
/// compact forced, H200, `gpu-2026-12-01e` runs 2–5), which costs far less than a column
/// evicted and sent again over PCIe (SSB SF 100's `lo_custkey` byte-narrowed is 2.4 GB:
/// about 0.1 s at 25 GB/s, against its kernels' 1.4–1.6 ms). On an H200's default limit
/// (about 125 GB) SSB SF 100's `lineorder` (43 GB plain, 34%) goes up compact and SF 20's
/// (8.6 GB) byte-narrowed, as do TPC-H SF 10's tables. Half was the share until
/// 2026-12-01f, when compact kernels had come within 7% of the byte-narrowed ones (they
/// were 15–29% slower when the rule was set, 2026-11-30d).
const COMPACT_TABLE_SHARE: usize = 4;

/// Bytes `table`'s columns take on the GPU plain, as placement sends them
/// (`plan_pipeline`): dictionary codes in 32 bits, other values at their [`Width`]
/// (8/16-bit integers widened to 32, decimals in 64), strings without a dictionary their
/// 64-bit offsets (their bytes beside them are not counted); types the GPU does not take
/// count nothing.
fn plain_gpu_bytes(table: &LoadedTable) -> usize {
    let row: usize = table.physical_schema.fields().iter().map(|f| plain_gpu_width(f.data_type())).sum();
    row.saturating_mul(table.rows)
}

/// Bytes a value of a stored column of type `dt` takes on the GPU plain (see
/// [`plain_gpu_bytes`]).
fn plain_gpu_width(dt: &DataType) -> usize {
    match dt {
        DataType::Dictionary(..) => Width::I32.bytes(),
        dt => match tessera_ir::ir_type(dt) {
            Some(Type::Utf8) => Width::Str.bytes(),
            Some(t) => codegen::width_of(t).map_or(0, Width::bytes),
            None => 0,
        },
    }
}

/// Which stored tables go up compact (`tessera.gpu_compact_tables`, see [`compact_table`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CompactTables {
    /// Those whose columns take more than 1/[`COMPACT_TABLE_SHARE`] of the GPU memory
    /// limit plain.
    #[default]
    Auto,
    /// Every one: the smallest footprint, for slower kernels.
    Always,
    /// None: whole bytes, the fastest kernels, for the largest footprint.
    Never,
}

impl CompactTables {
    /// The setting's value (`auto`, `always`, `never`; case-insensitive), or None.
    pub fn parse(s: &str) -> Option<CompactTables> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(CompactTables::Auto),
            "always" => Some(CompactTables::Always),
            "never" => Some(CompactTables::Never),
            _ => None,
        }
    }
}

/// Whether `table`'s integer columns go up compact (bit-packed, in runs where those pay:
/// about half their plain bytes, SSB SF 100's 0.489×, for kernels 5–7% slower, see
/// [`COMPACT_TABLE_SHARE`] and `ExecExperiments::narrow_runs`) rather than narrowed to
/// whole bytes: as `compact` says; by default when its columns take more than
/// 1/[`COMPACT_TABLE_SHARE`] of the GPU memory `limit` plain.
fn compact_table(table: &LoadedTable, limit: Option<usize>, compact: CompactTables) -> bool {
    match compact {
        CompactTables::Auto => limit.is_some_and(|l| plain_gpu_bytes(table) > l / COMPACT_TABLE_SHARE),
        CompactTables::Always => true,
        CompactTables::Never => false,
    }
}

/// One array of every part's values in order, each part converted into its place by
/// `convert` on a thread of its own (a thread a core): a first query's uploads were
/// these loops, one value at a time on one thread (TPC-H SF 10 q01's seven lineitem
/// columns reached the GPU 1.1 s into the pipeline on the H200's host, 2026-11-26).
fn in_parallel<T: Copy + Default + Send>(parts: &[ArrayRef], convert: impl Fn(&ArrayRef, &mut [T]) -> Result<()> + Sync) -> Result<Vec<T>> {
    let rows = parts.iter().map(|a| a.len()).sum();
    let mut out = vec![T::default(); rows];
    let failed: Mutex<Option<TesseraError>> = Mutex::new(None);
    {
        let mut slots = Vec::with_capacity(parts.len());
        let mut rest = out.as_mut_slice();
        for a in parts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(a.len());
            slots.push(Mutex::new(Some((a, head))));
            rest = tail;
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let threads = cores().min(parts.len()).max(1);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    while let Some(slot) = slots.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                        let Some((a, dst)) = slot.lock().ok().and_then(|mut g| g.take()) else { continue };
                        if let Err(e) = convert(a, dst) {
                            if let Ok(mut f) = failed.lock() {
                                f.get_or_insert(e);
                            }
                        }
                    }
                });
            }
        });
    }
    match failed.into_inner() {
        Ok(None) => Ok(out),
        Ok(Some(e)) => Err(e),
        Err(_) => Err(TesseraError::Internal("a conversion thread failed".into())),
    }
}



/// Whether column `c` of `table` holds a NULL. A column with a packed form holds none
/// (tiles with NULLs have no packed form: `tessera_storage::packed::packable`), which
/// the tile headers say without decoding it; any other is decoded (as its upload does)
/// and its arrays' null counts looked at. Unknown (the column does not decode): it does.
fn holds_nulls(table: &LoadedTable, c: usize) -> bool {
    if table.packable(c) {
        return false;
    }
    table.column(c).map_or(true, |parts| parts.iter().any(|a| a.logical_null_count() > 0))
}

/// A column's validity as kernels read it (`Param::Validity`): bit `r & 31` of word
/// `r >> 5` set where row `r` is not NULL (Arrow's bit order, in 32-bit words), batches
/// one after another.
fn host_validity(parts: &[ArrayRef]) -> Vec<u32> {
    let rows: usize = parts.iter().map(|a| a.len()).sum();
    let mut bits = arrow::array::BooleanBufferBuilder::new(rows);
    for a in parts {
        match a.logical_nulls() {
            None => bits.append_n(a.len(), true),
            Some(nulls) => bits.append_buffer(nulls.inner()),
        }
    }
    let bits = bits.finish();
    // An empty upload is not a buffer: keep one word so the bitmap has an address.
    let mut words = vec![0u32; rows.div_ceil(32).max(1)];
    for (w, bytes) in words.iter_mut().zip(bits.values().chunks(4)) {
        let mut le = [0u8; 4];
        le[..bytes.len()].copy_from_slice(bytes);
        *w = u32::from_le_bytes(le);
    }
    words
}

/// Column `c` of `table` as one array of `rows + 1` offsets into one array of bytes.
fn string_column(table: &LoadedTable, c: usize) -> Result<(Vec<i64>, Vec<u8>)> {
    let mut offsets = Vec::with_capacity(table.rows + 1);
    let mut bytes = Vec::new();
    offsets.push(0i64);
    for a in table.column(c)?.iter() {
        let a = arrow::compute::cast(a, &DataType::LargeUtf8).map_err(arrow_err)?;
        let s = a.as_string::<i64>();
        let (first, last) = (s.value_offsets()[0], s.value_offsets()[s.len()]);
        let base = bytes.len() as i64 - first;
        bytes.extend_from_slice(&s.value_data()[first as usize..last as usize]);
        offsets.extend(s.value_offsets()[1..].iter().map(|&o| o + base));
    }
    Ok((offsets, bytes))
}

/// Dictionary codes downloaded from the GPU as a column of dictionary `d`'s values.
///
/// Row numbers of a string column are gathered from the table: few of them (a sorted
/// top-k, a HAVING's groups) are picked from its batches, while a result holding more
/// than [`WHOLE_COLUMN_MIN_SHARE`] of the rows becomes a dictionary array over the
/// whole column (one array made once per table version; its values may repeat), so
/// that a large result is not a copy of the strings.
fn dictionary_column(state: &GpuQueryState, d: DictRef, codes: Int32Array) -> Result<ArrayRef> {
    let (table, c) = match state.dictionaries.get(d.id) {
        // A few rows (an aggregation's groups, mostly) are made plain strings at once; a
        // dictionary array would be validated here and cast to the query's output type
        // anyway (SSB SF 20: about 9 µs a string column of 600–800 groups that way,
        // 2026-11-28f run 7).
        // Bounds checked: arrow's string `take` would panic on a code past the values.
        Some(DictValues::Values(v)) if codes.len() <= ExecExperiments::get().plain_strings_max_rows => {
            let checked = arrow::compute::TakeOptions { check_bounds: true };
            return arrow::compute::take(v.as_ref(), &codes, Some(checked)).map_err(arrow_err);
        }
        Some(DictValues::Values(v)) => return Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(codes, Arc::clone(v)).map_err(arrow_err)?)),
        Some(DictValues::Rows(table, c)) => (table, *c),
        Some(DictValues::ResultRows(id, c)) => {
            (state.result_tables.get(id).ok_or_else(|| TesseraError::Internal(format!("result r{id} is not held for its strings")))?, *c)
        }
        None => return Err(TesseraError::Internal("dictionary id".into())),
    };
    if codes.len() as f64 >= WHOLE_COLUMN_MIN_SHARE * table.rows as f64 {
        return Ok(Arc::new(DictionaryArray::<Int32Type>::try_new(codes, table.whole_column(c)?).map_err(arrow_err)?));
    }
    let rows: Vec<usize> = codes.iter().map(|x| x.unwrap_or(0).max(0) as usize).collect();
    let picked = table.gather(c, &rows)?;
    // NULL codes (a NULL group key, payload or materialized value) stay NULL.
    Ok(match codes.nulls().cloned() {
        Some(n) => arrow::array::make_array(picked.to_data().into_builder().nulls(Some(n)).build().map_err(arrow_err)?),
        None => picked,
    })
}

/// The most rows of a stored dictionary's codes coming back from the GPU that are made
/// a plain string array (their strings copied) rather than a dictionary array over the
/// dictionary's values (see [`dictionary_column`]): up to here the copy is cheaper than
/// the dictionary's validation and the cast the output needs later; beyond, a
/// dictionary spares copying many repeated strings.
pub const PLAIN_STRINGS_MAX_ROWS: usize = 1 << 16;

/// The share of a table's rows from which a string column's rows coming back from the
/// GPU are a dictionary array over the whole column rather than a copy of the strings
/// picked (see [`dictionary_column`]): a quarter, where the copy would cost about what
/// making the column one array does once.
const WHOLE_COLUMN_MIN_SHARE: f64 = 0.25;

/// Little-endian 64-bit words of downloaded bytes.
fn words_of(bytes: &[u8]) -> Vec<u64> {
    (0..bytes.len() / 8).map(|i| word_at(bytes, i)).collect()
}

/// Little-endian word `i` of `bytes` (which holds it).
fn word_at(bytes: &[u8], i: usize) -> u64 {
    let w = &bytes[8 * i..8 * i + 8];
    u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
}

/// A string column (offsets and bytes) where values were expected: the generator never
/// plans one there.
fn string_as_values() -> TesseraError {
    TesseraError::Internal("a string column without a dictionary used as values on the GPU".into())
}

/// An i64 column holding values of `arg_ty` (decimal: unscaled; double: order keys) as
/// the type `ty`.
fn int_as(v: &Int64Array, arg_ty: Type, ty: Type) -> Result<ArrayRef> {
    match arg_ty {
        Type::Decimal { precision, scale } => {
            let d = Decimal128Array::from_iter(v.iter().map(|x| x.map(|x| x as i128)))
                .with_precision_and_scale(precision, scale)
                .map_err(arrow_err)?;
            cast_to(&(Arc::new(d) as ArrayRef), ty)
        }
        Type::Date32 => {
            let d = arrow::array::Date32Array::from_iter(v.iter().map(|x| x.map(|x| x as i32)));
            cast_to(&(Arc::new(d) as ArrayRef), ty)
        }
        Type::Float64 => {
            let d = Float64Array::from_iter(v.iter().map(|x| x.map(codegen::layout::float_from_order_key)));
            cast_to(&(Arc::new(d) as ArrayRef), ty)
        }
        _ => cast_to(&(Arc::new(v.clone()) as ArrayRef), ty),
    }
}

/// SUM/AVG of doubles from each group's double total (`SumRepr::F64`, the bits of one
/// word a group) and, for an AVG or inputs that may be NULL, its count of values: NULL for
/// a group without one, an AVG the total over the count, as DataFusion divides.
fn finish_float_sum(totals: &[u64], counts: Option<&[u64]>, present: &[bool], func: AggFunc, ty: Type) -> Result<ArrayRef> {
    let v: Float64Array = (0..totals.len())
        .map(|i| {
            let n = counts.map_or(1, |c| c.get(i).copied().unwrap_or(0));
            let total = f64::from_bits(totals[i]);
            (present.get(i).copied().unwrap_or(false) && n > 0).then(|| if func == AggFunc::Avg { total / n as f64 } else { total })
        })
        .collect();
    cast_to(&(Arc::new(v) as ArrayRef), ty)
}

/// SUM/AVG results from exact 128-bit sums, as the CPU backend computes them; `counts`
/// (an AVG's, or a SUM's of values that may be NULL): the non-NULL values of each group,
/// NULL where there are none.
/// With `lean`, a SUM's column is made directly ([`group_columns::int_sums`],
/// [`group_columns::decimal_sums`]); otherwise through Option iterators, as before
/// 2026-11-29b.
#[allow(clippy::too_many_arguments)]
fn finish_sum(sums: &[i128], counts: Option<&[i64]>, present: &[bool], func: AggFunc, arg_ty: Option<Type>, ty: Type, lean: bool) -> Result<ArrayRef> {
    let has = |i: usize| present[i] && counts.is_none_or(|c| c[i] > 0);
    let in_scale = match arg_ty {
        Some(Type::Decimal { scale, .. }) => scale,
        _ => 0,
    };
    let overflow = || TesseraError::Execution("arithmetic overflow in SUM".into());
    match (func, ty) {
        (AggFunc::Avg, Type::Decimal { precision, scale }) => {
            let counts = counts.ok_or_else(|| TesseraError::Internal("AVG without counts".into()))?;
            let mul = 10i128.checked_pow((scale - in_scale).max(0) as u32).ok_or_else(overflow)?;
            let mut vals = Vec::new();
            for i in 0..sums.len() {
                vals.push(if present[i] && counts[i] > 0 { Some(sums[i].checked_mul(mul).ok_or_else(overflow)? / counts[i] as i128) } else { None });
            }
            let a = Decimal128Array::from(vals).with_precision_and_scale(precision, scale).map_err(arrow_err)?;
            a.validate_decimal_precision(precision).map_err(|e| TesseraError::Execution(format!("arithmetic overflow in AVG: {e}")))?;
            Ok(Arc::new(a))
        }
        (AggFunc::Avg, _) => {
            let counts = counts.ok_or_else(|| TesseraError::Internal("AVG without counts".into()))?;
            let v: Float64Array = (0..sums.len())
                .map(|i| (present[i] && counts[i] > 0).then(|| sums[i] as f64 / counts[i] as f64 / 10f64.powi(in_scale as i32)))
                .collect();
            cast_to(&(Arc::new(v) as ArrayRef), ty)
        }
        (_, Type::Decimal { precision, scale }) if lean => Ok(Arc::new(group_columns::decimal_sums(sums, has, precision, scale)?)),
        (_, Type::Decimal { precision, scale }) => {
            let a = Decimal128Array::from_iter((0..sums.len()).map(|i| has(i).then_some(sums[i])))
                .with_precision_and_scale(precision, scale)
                .map_err(arrow_err)?;
            a.validate_decimal_precision(precision).map_err(|e| TesseraError::Execution(format!("arithmetic overflow: {e}")))?;
            Ok(Arc::new(a))
        }
        _ if lean => cast_to(&(Arc::new(group_columns::int_sums(sums, has)?) as ArrayRef), ty),
        _ => {
            let mut v = Vec::new();
            for i in 0..sums.len() {
                v.push(if has(i) { Some(i64::try_from(sums[i]).map_err(|_| overflow())?) } else { None });
            }
            cast_to(&(Arc::new(Int64Array::from(v)) as ArrayRef), ty)
        }
    }
}

/// Binds `p` to dictionaries: every string predicate over one dictionary-encoded column —
/// in filters, projections, probe residuals and aggregate arguments, over source columns
/// or over codes a probe gathered from a build's payload — is evaluated once over the
/// dictionary (by the CPU evaluator) and becomes a test on codes. `cols` are the source
/// columns as the GPU holds them, `tables` the shapes of tables built on the GPU so far,
/// `values` a dictionary's entries.
fn bind(p: &Pipeline, cols: &[GpuColumn], tables: &HashMap<HashTableId, GpuTable>, values: &dyn Fn(DictRef) -> Option<ArrayRef>) -> Pipeline {
    let mut out = p.clone();
    let binder = DictBinder { eval: Evaluator::new(), values };
    let mut fields = p.source_fields().to_vec();
    let mut dicts: Vec<Option<DictRef>> = cols.iter().map(|c| c.dictionary).collect();
    for op in out.operators.iter_mut() {
        let next = op.output_fields(&fields);
        match op {
            Operator::Filter(e) => *e = binder.bind(e, &fields, &dicts),
            Operator::Project { exprs, .. } => {
                for e in exprs.iter_mut() {
                    *e = binder.bind(e, &fields, &dicts);
                }
                dicts = exprs.iter().map(|e| if let Expr::Column { index, .. } = e { dicts.get(*index).copied().flatten() } else { None }).collect();
            }
            Operator::Probe(pr) => {
                let payload: Vec<Option<DictRef>> = match tables.get(&pr.table) {
                    Some(t) if t.payload.len() == pr.build_fields.len() => t.payload.iter().map(|c| c.dictionary).collect(),
                    _ => vec![None; pr.build_fields.len()],
                };
                let joined_fields: Vec<_> = fields.iter().chain(&pr.build_fields).cloned().collect();
                let joined: Vec<_> = dicts.iter().chain(&payload).copied().collect();
                if let Some(r) = &mut pr.residual {
                    *r = binder.bind(r, &joined_fields, &joined);
                }
                dicts = if next.len() == joined.len() { joined } else { dicts };
            }
        }
        dicts.resize(next.len(), None);
        fields = next;
    }
    if let Sink::Aggregate(a) = &mut out.sink {
        for agg in a.aggregates.iter_mut() {
            if let Some(arg) = &mut agg.arg {
                *arg = binder.bind(arg, &fields, &dicts);
            }
        }
    }
    out
}

/// Turns string predicates over dictionary codes into code tests (see [`bind`]).
struct DictBinder<'a> {
    eval: Evaluator,
    values: &'a dyn Fn(DictRef) -> Option<ArrayRef>,
}

impl DictBinder<'_> {
    /// `e` with each largest boolean subexpression that reads one dictionary-encoded
    /// column (and is not that column) replaced by an IN list of the codes it holds for.
    /// A subexpression that is NULL for some entry stays as it is (an IN list would turn
    /// its NULL into false under NOT); the generator then refuses it with its reason.
    ///
    /// Over a column that may be NULL (its field is nullable), the IN list is NULL where
    /// the column is; a subexpression that is not NULL there (`IS NULL`, `COALESCE`, `OR`
    /// with a side that holds) becomes `c IS NULL OR c IN (...)` (TRUE for a NULL) or
    /// `c IS NOT NULL AND c IN (...)` (FALSE for one).
    fn bind(&self, e: &Expr, fields: &[tessera_ir::Field], dicts: &[Option<DictRef>]) -> Expr {
        e.rewrite(&|sub| {
            let [c] = sub.columns()[..] else { return None };
            let d = dicts.get(c).copied().flatten()?;
            if matches!(sub, Expr::Column { .. }) || sub.ty(fields) != Type::Boolean {
                return None;
            }
            let (codes, for_null) = self.codes(sub, c, d)?;
            let col = || Box::new(Expr::col(c, "codes"));
            let in_list = Expr::InList { expr: col(), list: codes, negated: false };
            let nullable = fields.get(c).is_none_or(|f| f.nullable);
            Some(match (nullable, for_null) {
                (false, _) | (true, None) => in_list,
                (true, Some(true)) => Expr::Or(Box::new(Expr::IsNull(col())), Box::new(in_list)),
                (true, Some(false)) => Expr::And(Box::new(Expr::IsNotNull(col())), Box::new(in_list)),
            })
        })
    }

    /// The codes of dictionary `d` for which `e` (reading column `c`) holds, and what `e`
    /// is where the column is NULL (None: NULL); None when it cannot be evaluated or is
    /// NULL for some entry.
    fn codes(&self, e: &Expr, c: usize, d: DictRef) -> Option<(Vec<Scalar>, Option<bool>)> {
        let values = (self.values)(d)?;
        let n = values.len();
        // The entries, then a NULL.
        let values = arrow::compute::concat(&[values.as_ref(), arrow::array::new_null_array(values.data_type(), 1).as_ref()]).ok()?;
        let mut cols: Vec<ArrayRef> = (0..=c).map(|_| arrow::array::new_null_array(&DataType::Null, n + 1)).collect();
        cols[c] = values;
        let r = self.eval.eval(e, &cols, n + 1).ok()?;
        let b = r.as_boolean_opt()?;
        if (0..n).any(|i| b.is_null(i)) {
            return None;
        }
        let for_null = b.is_valid(n).then(|| b.value(n));
        Some(((0..n).filter(|&i| b.value(i)).map(|i| Scalar::Int(i as i64)).collect(), for_null))
    }
}

/// A pipeline placed on the GPU: its bound form (dictionary predicates as code tests),
/// its source columns as the GPU holds them, and its kernel.
#[derive(Debug)]
pub struct GpuPipeline {
    /// The pipeline as bound to the table's dictionaries.
    pub pipeline: Pipeline,
    /// Its source columns on the GPU.
    pub columns: Vec<GpuColumn>,
    /// Its kernel.
    pub kernel: Kernel,
    /// It reads an aggregation's result kept on the GPU (see [`result_layout`]).
    pub reads_kept: bool,
    /// The tiles the zone maps rule out (a kernel with `Param::Zones`; None when none is):
    /// made with the placement, which is of one table version and one set of literals,
    /// rather than each run (SSB q1.1's lineorder has 1 831 batches to test).
    pub zones: Option<Arc<(Vec<u32>, f64)>>,
    /// A mark sink's table (see [`MarkTable`]).
    pub marks: Option<Box<MarkTable>>,
    /// Its kernel as loaded, from its first run on (a placement is cached with its
    /// pipelines, so later runs of the query launch it without finding it again).
    pub launch: std::sync::OnceLock<Launch>,
    /// What the build cache keys its table by, from its first run on (None: not a build
    /// the cache keeps, see [`GpuPipeline::build_key`]).
    pub build_key: std::sync::OnceLock<Option<Arc<Fingerprinted>>>,
    /// An aggregation's sink arrays as its last run left them, set again ([`SpareSink`]).
    pub spare: SpareSlot,
    /// The fields its sink reads, from its first run on ([`GpuPipeline::sink_fields`]).
    pub sink_fields: std::sync::OnceLock<Vec<tessera_ir::Field>>,
}

/// A generated kernel ready to launch: its function and how many of its blocks an SM
/// holds. Finding it each run hashed the kernel's source twice (to look the module up)
/// and asked the driver for the occupancy again: on the H200 host a launch came 11-60
/// µs after the outputs were allocated (TPC-H SF 10's EXPLAIN ANALYZE, 2026-11-27 run 2).
#[derive(Debug)]
pub struct Launch {
    /// Keeps the function's module loaded.
    _module: Arc<tessera_cuda::cudarc::driver::CudaModule>,
    function: CudaFunction,
    per_sm: u32,
    /// The kernel between its timing events as one graph, made by the first warm run
    /// ([`GpuRuntime::launch_graph`]).
    graph: Mutex<KernelGraph>,
}

/// A pipeline's kernel graph ([`Launch::graph`]): not made yet, made, or failed to be
/// made (then never tried again).
#[derive(Debug)]
enum KernelGraph {
    Unmade,
    Made(TimedKernel),
    Failed,
}

/// The GPU table a mark sink reads ([`tessera_ir::MarkBuild`], `codegen::mark`): its build
/// ran on the CPU, whose table keeps the rows. The values of that table's keys (computed
/// on the host), the columns a residual reads and, where a key may be NULL, whether none
/// is go up as an intermediate result, and `build` makes them a chained table whose rows
/// are numbered as the host's, so that the marks index the host's rows.
#[derive(Debug)]
pub struct MarkTable {
    /// The build's keys, over the host table's payload columns (all of its rows').
    pub keys: Vec<Expr>,
    /// The host table's payload columns a residual reads, in the order they go up (after
    /// the keys).
    pub read: Vec<usize>,
    /// Whether a column saying where no key is NULL goes up last.
    pub keys_valid: bool,
    /// The build of the chained table over them (its source reads [`MarkTable::RESULT`]).
    pub build: GpuPipeline,
}

impl MarkTable {
    /// The result id the key table's build reads: no plan's result has it.
    pub const RESULT: ResultId = ResultId::MAX;
}

impl GpuPipeline {
    /// The fields its pipeline's sink reads (`Pipeline::sink_input_fields`), worked out
    /// on its first run: a cached plan's later runs do not make them again (each a
    /// vector of named fields per operator).
    pub fn sink_fields(&self) -> &[tessera_ir::Field] {
        self.sink_fields.get_or_init(|| self.pipeline.sink_input_fields())
    }

    /// The build cache's key for this pipeline's table (`crate::build_cache`), as
    /// [`link_build_keys`] set it when the plan was placed: None for a pipeline it did not
    /// set, or whose table the cache does not keep ([`GpuPipeline::build_identity`],
    /// [`cache_keeps`]).
    fn build_key(&self) -> Option<&Arc<Fingerprinted>> {
        self.build_key.get().and_then(Option::as_ref)
    }

    /// Everything this pipeline's table depends on, given the identities of the tables it
    /// probes (in the order of its probes): only a hash-table build over a stored table,
    /// with no scalar subquery, makes the same table every time. Equal identities make
    /// equal tables, whether or not the cache may keep them.
    fn build_identity(&self, probed: Vec<BuildKey>) -> Option<BuildKey> {
        let (SinkLayout::Build { .. }, Sink::HashBuild(_), Source::Scan(scan)) = (&self.kernel.sink, &self.pipeline.sink, &self.pipeline.source) else {
            return None;
        };
        if !self.kernel.subqueries.is_empty() || self.reads_kept {
            return None;
        }
        Some(BuildKey {
            table: scan.table.clone(),
            version: scan.version,
            rows: scan.rows,
            source: self.kernel.source.clone(),
            literals: self.kernel.literals.clone(),
            consts: self.kernel.consts.clone(),
            layout: format!("{:?} {:?} {:?}", scan.columns, self.columns, self.kernel.sink),
            zones: self.zones.as_ref().map(|z| z.0.clone()),
            probed,
        })
    }

    /// Device memory a run of this pipeline allocates besides the stored columns it reads
    /// (the column cache keeps those, see [`GpuRuntime::admit`]), estimated from its plan:
    /// an intermediate result's columns, its hash table or group arrays (twice over for
    /// groups that are compacted or ranked into records), its materialized rows. An
    /// estimate, not a bound: the allocations themselves are checked against the memory
    /// limit.
    pub fn work_memory(&self) -> usize {
        let kernel = &self.kernel;
        let (slots, chain, groups) = match &kernel.sink {
            SinkLayout::Build { table } => (table.slots, table.chain.unwrap_or(0), 0),
            SinkLayout::Aggregate { groups, .. } => (0, 0, *groups),
            SinkLayout::Marks { .. } | SinkLayout::Materialize { .. } => (0, 0, 0),
        };
        let mut bytes = 0usize;
        let mut add = |n: usize| bytes = bytes.saturating_add(n);
        let rows = match &self.pipeline.source {
            Source::Scan(scan) => scan.rows as usize,
            // An intermediate result's rows are known only when it runs: its sink's size
            // stands in (a build over it has a slot or chain row per row). Its columns go
            // up whole for each run.
            Source::Result { .. } => {
                let rows = slots.max(chain).max(groups);
                for c in &self.columns {
                    add(rows.saturating_mul(c.width.bytes()));
                }
                rows
            }
        };
        match &kernel.sink {
            SinkLayout::Build { table } => {
                let len = table.chain.unwrap_or(table.slots);
                add(len.saturating_mul(table.payload.iter().map(|c| c.narrow.map_or(c.width.bytes(), Narrow::bytes)).sum()));
                add(len.div_ceil(8).saturating_mul(table.payload.iter().filter(|c| c.nullable).count()));
                if table.hashed.is_some() {
                    add(table.slots.saturating_mul(8));
                }
                match table.chain {
                    Some(rows) => add((table.slots + 1).saturating_mul(4).saturating_add(rows.saturating_mul(4))),
                    None if table.hashed.is_none() => add(table.slots.saturating_mul(4) + table.slots / 8),
                    None => {}
                }
            }
            SinkLayout::Aggregate { groups, accumulators, hashed, global_copies, .. } => {
                let words: usize = accumulators.iter().flat_map(|a| a.arrays()).map(|(w, _)| w).sum::<usize>() + usize::from(hashed.is_some());
                add(groups.saturating_mul(8 * words * global_copies + 4));
                add(groups.saturating_mul(8 * (1 + words)).saturating_mul(2));
            }
            SinkLayout::Marks { rows } => {
                add(rows.saturating_mul(4));
                // The table of the marked rows' keys is built for this pipeline.
                if let Some(m) = &self.marks {
                    add(m.build.work_memory());
                }
            }
            SinkLayout::Materialize { columns } => {
                add(rows.max(1).saturating_mul(columns.iter().map(|c| c.width.bytes()).sum()));
                add(rows.max(1).div_ceil(8).saturating_mul(columns.iter().filter(|c| c.nullable).count()));
            }
        }
        bytes
    }
}

/// A scalar subquery's value as a kernel parameter (`Param::Subquery`): its type's
/// 64-bit value, decimals unscaled (the subquery's result has the expression's type).
/// NULL, a value beyond 64 bits or a missing value sends the query to the CPU backend.
/// A kernel's parameters, each one 64-bit value, filled from its list of them: `rows`, the
/// query's flags, its constants and zone bitmap, its columns' buffers (None: a string
/// column it reads only as row numbers), the tables it probes and its sink's arrays.
#[allow(clippy::too_many_arguments)]
fn kernel_params(kernel: &Kernel, rows: usize, flags_ptr: u64, consts_ptr: u64, zones_ptr: u64, col_bufs: &[Option<Arc<GpuBuf>>], probed: &[Probed], out_ptrs: &[(OutSlot, u64)], subquery_values: &[i64], dev: &GpuDevice) -> Result<Vec<u64>> {
    let col_ptrs: Vec<u64> = col_bufs.iter().map(|b| b.as_ref().map_or(0, |b| b.ptr(dev))).collect();
    let byte_ptrs: Vec<u64> = col_bufs.iter().map(|b| b.as_ref().map_or(0, |b| b.bytes_ptr(dev))).collect();
    let validity_ptrs: Vec<u64> = col_bufs.iter().map(|b| b.as_ref().map_or(0, |b| b.validity_ptr(dev))).collect();
    let references: Vec<i64> = col_bufs.iter().map(|b| b.as_ref().map_or(0, |b| b.reference())).collect();
    let run_values: Vec<u64> = col_bufs.iter().map(|b| b.as_ref().map_or(0, |b| b.run_values_ptr(dev))).collect();
    let missing = |what: &str| TesseraError::Internal(format!("kernel parameter {what} has no value"));
kernel
        .params
        .iter()
        .map(|param| match param {
            Param::Rows => Ok(rows as u64),
            Param::Flags => Ok(flags_ptr),
            Param::Consts => Ok(consts_ptr),
            Param::Column { column, .. } => col_ptrs.get(*column).copied().ok_or_else(|| missing("column")),
            // Null for a string column the kernel reads only as row numbers.
            Param::Bytes { column } => byte_ptrs.get(*column).copied().filter(|&p| p != 0 || !kernel.strings.contains(column)).ok_or_else(|| missing("string bytes")),
            Param::Validity { column } => validity_ptrs.get(*column).copied().filter(|&p| p != 0).ok_or_else(|| missing("validity")),
            Param::Reference { column } => references.get(*column).map(|&r| r as u64).ok_or_else(|| missing("reference")),
            Param::RunValues { column, .. } => run_values.get(*column).copied().filter(|&p| p != 0).ok_or_else(|| missing("run values")),
            Param::Zones => Ok(zones_ptr),
            Param::Payload { probe, column, .. } => probed.get(*probe).and_then(|p| p.payload.get(*column)).copied().ok_or_else(|| missing("payload")),
            Param::PayloadValid { probe, column } => {
                probed.get(*probe).and_then(|p| p.payload_valid.get(*column)).copied().filter(|&x| x != 0).ok_or_else(|| missing("payload validity"))
            }
            Param::BuildSeen { probe } => probed.get(*probe).map(|p| p.seen).filter(|&x| x != 0).ok_or_else(|| missing("build flags")),
            Param::Bitmap { probe } => probed.get(*probe).map(|p| p.index).filter(|&x| x != 0).ok_or_else(|| missing("bitmap")),
            Param::Keys { probe } => probed.get(*probe).map(|p| p.index).filter(|&x| x != 0).ok_or_else(|| missing("keys")),
            Param::Heads { probe } => probed.get(*probe).map(|p| p.heads).filter(|&x| x != 0).ok_or_else(|| missing("chain heads")),
            Param::Next { probe } => probed.get(*probe).map(|p| p.next).filter(|&x| x != 0).ok_or_else(|| missing("chain links")),
            Param::Out(o) => {
                let slot = OutSlot::of(o);
                out_ptrs.iter().find(|(s, _)| *s == slot).map(|(_, p)| *p).ok_or_else(|| missing("output"))
            }
            Param::Literal(k) => kernel.literals.get(*k).map(|&v| v as u64).ok_or_else(|| missing("literal")),
            Param::Subquery(k) => subquery_values.get(*k).map(|&v| v as u64).ok_or_else(|| missing("subquery")),
        })
        .collect()
}

/// An aggregation's arrays as `GatherList` takes them: (device address, 64-bit words a
/// group) each.
fn group_arrays(accs: &[DeviceBuffer<u64>], words: &[usize], stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>) -> Vec<(u64, usize)> {
    accs.iter().zip(words).map(|(a, &w)| (a.as_slice().device_ptr(stream).0, w)).collect()
}

/// Queues generated kernel `function` on `stream` with `params`, each a 64-bit value.
fn queue_kernel(stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>, function: &CudaFunction, cfg: LaunchConfig, params: &[u64]) -> Result<()> {
    let mut builder = stream.launch_builder(function);
    for v in params {
        builder.arg(v);
    }
    // SAFETY: `params` are the kernel's parameters in order (`kernel_params`), each a
    // 64-bit value or a device address the query holds until its stream is done.
    unsafe { builder.launch(cfg) }.map(drop).map_err(|e| TesseraError::Internal(format!("kernel launch: {e:?}")))
}

/// Sets the build cache's key of every build among `kernels` (a placed plan's GPU
/// pipelines by id; `pipelines` the plan's, builds before the pipelines probing their
/// tables). A build that probes other tables makes a table that depends on theirs: its
/// key holds their identities ([`GpuPipeline::build_identity`], also of tables too large
/// to keep), and it has none where one of them has none (built on the CPU, or over an
/// intermediate result). Keyed by its own kernel alone, TPC-H q08's `nation` joined with
/// `region` WHERE r_name = 'AMERICA' was taken from the cache as q02's with 'EUROPE'
/// (the literal is the region build's, not the nation build's).
pub fn link_build_keys<'p>(pipelines: impl Iterator<Item = &'p Pipeline>, kernels: &HashMap<usize, Arc<GpuPipeline>>) {
    let mut keys: HashMap<HashTableId, Option<BuildKey>> = HashMap::new();
    for pipe in pipelines {
        let Sink::HashBuild(b) = &pipe.sink else { continue };
        let key = kernels.get(&pipe.id).and_then(|gp| {
            let probed: Option<Vec<BuildKey>> = gp
                .pipeline
                .operators
                .iter()
                .filter_map(|o| match o {
                    Operator::Probe(p) => Some(keys.get(&p.table).cloned().flatten()),
                    _ => None,
                })
                .collect();
            let identity = probed.and_then(|probed| gp.build_identity(probed));
            let kept = identity.clone().filter(cache_keeps);
            // Set once: a placement's pipelines are linked when it is made.
            let _ = gp.build_key.set(kept.map(|k| Arc::new(Fingerprinted::new(k))));
            identity
        });
        keys.insert(b.table, key);
    }
}

/// Whether the build cache keeps the table `key` identifies: only one built over at most
/// [`BUILD_CACHE_MAX_ROWS`] rows.
fn cache_keeps(key: &BuildKey) -> bool {
    key.rows <= BUILD_CACHE_MAX_ROWS
}

/// Queues `fold`, a launch made by [`GpuRuntime::fold_node`], on `stream`.
fn queue_fold(stream: &Arc<tessera_cuda::cudarc::driver::CudaStream>, fold: &KernelNode) -> Result<()> {
    // SAFETY: `fold_node` made the arguments `tessera_fold_copies` takes: the sink's
    // arrays, `copies` × `groups` × their words long, and its seen flags, which the query
    // holds until its stream is done.
    unsafe { tessera_cuda::graph::launch_node(stream, fold) }
}

fn subquery_param(value: Option<&Scalar>, rid: usize, ty: Type) -> Result<i64> {
    let retry = |why: String| TesseraError::RetryOnCpu(format!("scalar subquery r{rid}: {why}"));
    match value {
        None => Err(TesseraError::Internal(format!("scalar subquery r{rid} has no value at launch"))),
        Some(Scalar::Null) => Err(retry("its value is NULL, which kernels do not take".into())),
        Some(Scalar::Int(v)) => Ok(*v),
        Some(Scalar::UInt(v)) => i64::try_from(*v).map_err(|_| retry(format!("{v} is beyond 64 bits"))),
        Some(Scalar::Date32(d)) => Ok(i64::from(*d)),
        Some(Scalar::Boolean(b)) => Ok(i64::from(*b)),
        Some(Scalar::Decimal(d)) => i64::try_from(*d).map_err(|_| retry(format!("decimal {d} ({ty}) is beyond 64 bits"))),
        Some(other) => Err(TesseraError::Internal(format!("scalar subquery r{rid} of type {ty} has the value {other:?}"))),
    }
}

/// Bytes a string value is taken to have in a memory estimate (TPC-H's names and
/// comments average 15–50; only LIKE over strings without a dictionary uploads them).
const ESTIMATED_STRING_BYTES: usize = 32;

/// Generates the kernel for `p` if it can run on the GPU, or says every reason it cannot.
/// Needs no GPU (CI compiles these kernels with NVRTC alone). `gpu_tables` are the shapes
/// of tables built on the GPU so far.
pub fn plan_kernel(
    p: &Pipeline,
    table: Option<&Arc<LoadedTable>>,
    state: &mut GpuQueryState,
    gpu_tables: &HashMap<HashTableId, GpuTable>,
    options: KernelOptions,
) -> std::result::Result<GpuPipeline, Vec<Unsupported>> {
    let scan = match &p.source {
        Source::Scan(scan) => scan,
        Source::Result { fields, .. } => return plan_over_result(p, fields, state, gpu_tables, options),
    };
    let one = |site: Site, reason: Reason| vec![Unsupported::new(site, reason)];
    let mut reasons = Vec::new();
    let mut cols = Vec::new();
    let mut dict_values = Vec::new();
    let table = table.ok_or_else(|| one(Site::Source, Reason::Inconsistent("table not loaded".into())))?;
    let compact = compact_table(table, state.memory_limit, state.compact);
    for (&c, f) in scan.columns.iter().zip(&scan.fields) {
        let dict = match table.dictionary(c) {
            Ok(d) => d,
            Err(e) => {
                reasons.push(Unsupported::new(Site::Source, Reason::Inconsistent(format!("column #{c}'s dictionary: {e}"))));
                None
            }
        };
        let width = match (&dict, f.ty) {
            (Some(_), _) => Width::I32,
            // Strings without a dictionary go up as offsets and bytes, for LIKE; the
            // generator refuses any other use of them.
            (None, Type::Utf8) => Width::Str,
            (None, t) => codegen::width_of(t).unwrap_or_else(|| {
                reasons.push(Unsupported::new(Site::Source, Reason::ColumnType { column: f.name.clone(), ty: t }));
                Width::I64
            }),
        };
        let id = state.dictionaries.len() + dict_values.len();
        let dictionary = match dict {
            Some(d) => {
                let values: ArrayRef = d.values.clone();
                dict_values.push(DictValues::Values(Arc::clone(&values)));
                Some(DictRef { size: values.len(), id, by_row: false })
            }
            // A string without a dictionary can still ride through the kernel as its row
            // number (see `DictRef::by_row`).
            None if f.ty == Type::Utf8 && i32::try_from(table.rows).is_ok() => {
                dict_values.push(DictValues::Rows(Arc::clone(table), c));
                Some(DictRef { size: table.rows, id, by_row: true })
            }
            None => None,
        };
        // A nullable column whose data holds NULLs goes up with its validity bitmap.
        let nullable = f.nullable && holds_nulls(table, c);
        // Stored integer columns go up in their bit-packed tiles (see `tiles.cuh`); those
        // with NULLs have none.
        let packed = matches!(width, Width::I32 | Width::I64) && f.ty != Type::Float64 && dictionary.is_none() && !nullable && ExecExperiments::get().packed && table.packable(c);
        let mut col = GpuColumn { width, dictionary, packed, nullable, narrow: None };
        // Other integer columns go up narrowed where their values allow.
        if ExecExperiments::get().narrow && f.ty != Type::Float64 {
            col.narrow = narrow_form(table, c, &col, compact);
        }
        cols.push(col);
    }
    let mut placed = finish_plan(p, cols, dict_values, reasons, state, gpu_tables, options)?;
    if placed.kernel.params.contains(&Param::Zones) {
        placed.zones = crate::zones::tile_bitmap(table, &scan.columns, &placed.pipeline.operators).map(Arc::new);
    }
    Ok(placed)
}

/// [`plan_kernel`] for a pipeline reading an intermediate result. A GPU aggregation's
/// result that reads as device columns ([`result_layout`]) is read where it lies, by any
/// pipeline (TPC-H q13's counts per customer, built into a table; q16's distinct
/// suppliers, counted per part class); NULLs it turns out to hold send the query to the
/// CPU, so that kernel is generated for columns without them. A result on the host (a
/// CPU pipeline's, a DataFusion step's, the rows a mark sink kept) goes up whole when
/// the pipeline runs: its columns as the result has them, without dictionaries, each
/// that may be NULL with its validity bitmap (TPC-H q17's per-part averages, built into
/// a table; a derived table aggregated again). Whether that upload pays is the
/// placement's call (`tessera_exec`'s `result_rows`).
fn plan_over_result(
    p: &Pipeline,
    fields: &[tessera_ir::Field],
    state: &mut GpuQueryState,
    gpu_tables: &HashMap<HashTableId, GpuTable>,
    options: KernelOptions,
) -> std::result::Result<GpuPipeline, Vec<Unsupported>> {
    let mut without_nulls = p.clone();
    if let Source::Result { fields, .. } = &mut without_nulls.source {
        fields.iter_mut().for_each(|f| f.nullable = false);
    }
    let layout = match &p.source {
        Source::Result { id, .. } => state.result_layouts.get(id).filter(|l| l.len() == fields.len()),
        Source::Scan(_) => None,
    };
    if let Some(layout) = layout {
        let cols = layout.iter().map(|c| c.column.clone()).collect();
        let mut placed = finish_plan(&without_nulls, cols, Vec::new(), Vec::new(), state, gpu_tables, options)?;
        placed.reads_kept = true;
        return Ok(placed);
    }
    let mut reasons = Vec::new();
    let mut cols = Vec::with_capacity(fields.len());
    let mut dict_values = Vec::new();
    let result = match &p.source {
        Source::Result { id, .. } => *id,
        Source::Scan(_) => return Err(vec![Unsupported::new(Site::Source, Reason::Inconsistent("a scan planned as a result".into()))]),
    };
    for (c, f) in fields.iter().enumerate() {
        if f.ty == Type::Utf8 {
            // Strings ride as the result's row numbers (`DictRef::by_row`: carried and
            // materialized, never compared), or go up as bytes for a LIKE; a NULL among
            // them sends the query to the CPU.
            let id = state.dictionaries.len() + dict_values.len();
            dict_values.push(DictValues::ResultRows(result, c));
            cols.push(GpuColumn::plain(Width::Str, Some(DictRef { size: i32::MAX as usize, id, by_row: true })));
            continue;
        }
        // Decimals of more than 18 digits (SQL's result types of SUM and AVG) go up in 64
        // bits when their values fit (else the query runs on the CPU, see
        // `upload_column`), as kernels hold such computed values.
        let width = codegen::layout::value_width(f.ty);
        cols.push(GpuColumn { nullable: f.nullable, ..GpuColumn::plain(width.unwrap_or(Width::I64), None) });
        if width.is_none() {
            reasons.push(Unsupported::new(Site::Source, Reason::ColumnType { column: f.name.clone(), ty: f.ty }));
        }
    }
    finish_plan(p, cols, dict_values, reasons, state, gpu_tables, options)
}

/// The GPU's part of sort pipeline `p` when its operators filter its rows: the same
/// pipeline materializing them into the sort's result, which the CPU backend then sorts
/// (sorts are not on the GPU yet, `codegen/sort.rs`). Only the rows that pass come to
/// the host, and an aggregation's result the filter reads can stay on the GPU (TPC-H q11:
/// 305 K groups at SF 10 against a scalar subquery, of which none pass). None for a
/// sort without a filter, whose every row comes back either way.
pub fn split_sort(p: &Pipeline) -> Option<Pipeline> {
    let Sink::Sort(sort) = &p.sink else { return None };
    if !p.operators.iter().any(|o| matches!(o, Operator::Filter(_))) {
        return None;
    }
    let mut filtered = p.clone();
    filtered.sink = Sink::Materialize { result: sort.result, skip: 0, fetch: None };
    Some(filtered)
}

/// [`plan_kernel`] for pipeline `p`, whose sink `m` marks the rows of the table that
/// pipeline `build` builds on the CPU (see [`MarkTable`]): plans the build of their keys'
/// table over an intermediate result, then `p` reading it. `m`'s residual is rewritten
/// to read the columns that go up (the table's payload), in their order.
pub fn plan_marks(
    p: &Pipeline,
    m: &MarkBuild,
    build: &Pipeline,
    table: &Arc<LoadedTable>,
    state: &mut GpuQueryState,
    gpu_tables: &HashMap<HashTableId, GpuTable>,
    options: KernelOptions,
) -> std::result::Result<GpuPipeline, Vec<Unsupported>> {
    let inconsistent = |what: &str| vec![Unsupported::new(Site::Sink("mark build rows"), Reason::Inconsistent(what.into()))];
    let Sink::HashBuild(h) = &build.sink else { return Err(inconsistent("marked rows not built by a hash build")) };
    let kept = build.sink_input_fields();
    if h.table != m.table || h.payload != (0..kept.len()).collect::<Vec<_>>() || m.fields.len() != kept.len() {
        return Err(inconsistent("a marked table that does not hold every column of its rows"));
    }
    // The build's columns a residual reads (after the probe side's `width` columns).
    let width = p.sink_input_fields().len();
    let mut read: Vec<usize> = m.residual.iter().flat_map(|r| r.columns()).filter(|&c| c >= width).map(|c| c - width).collect();
    read.sort_unstable();
    read.dedup();
    // Up go the keys' values, the columns the residual reads and, where a key may be
    // NULL, whether none is (a row with a NULL key stays out of the table: nothing marks
    // it).
    let keys_valid = h.keys.iter().any(|k| k.nullable(&kept));
    let n = h.keys.len();
    let mut fields: Vec<tessera_ir::Field> =
        h.keys.iter().enumerate().map(|(i, k)| tessera_ir::Field::new(format!("key{i}"), k.ty(&kept), false)).collect();
    fields.extend(read.iter().map(|&c| tessera_ir::Field { nullable: false, ..kept[c].clone() }));
    let mut operators = Vec::new();
    if keys_valid {
        let valid = fields.len();
        fields.push(tessera_ir::Field::new("keys valid", Type::Int32, false));
        operators.push(Operator::Filter(Expr::Cmp {
            op: tessera_ir::CmpOp::NotEq,
            left: Box::new(Expr::col(valid, "keys valid")),
            right: Box::new(Expr::lit(Scalar::Int(0), Type::Int32)),
        }));
    }
    // Room for every row the build can keep: at most its scan's, unless a join there
    // may repeat rows (then the estimate's).
    let expands = build.operators.iter().any(|o| matches!(o, Operator::Probe(pr) if matches!(pr.kind, tessera_ir::JoinKind::Inner | tessera_ir::JoinKind::LeftOuter)));
    let estimated_rows = match &build.source {
        // `build::source_rows` makes room for twice the estimate.
        Source::Scan(scan) if !expands => scan.rows.div_ceil(2),
        _ => h.estimated_rows,
    };
    let keys_build = Pipeline {
        // Reported as part of the pipeline marking.
        id: p.id,
        source: Source::Result { id: MarkTable::RESULT, fields },
        operators,
        sink: Sink::HashBuild(tessera_ir::HashBuild {
            table: h.table,
            keys: (0..n).map(|i| Expr::col(i, format!("key{i}"))).collect(),
            payload: (n..n + read.len()).collect(),
            strategy: h.strategy.clone(),
            nulls_equal: false,
            estimated_rows,
            membership: false,
            repeated_keys: true,
            null_aware: false,
            payload_ranges: Vec::new(),
        }),
        device: tessera_ir::Device::Gpu,
        device_reason: None,
    };
    let keys_build = plan_over_result(&keys_build, keys_build.source_fields(), state, gpu_tables, options)?;
    let SinkLayout::Build { table: shape } = &keys_build.kernel.sink else { return Err(inconsistent("the marked rows' table is no build")) };
    let mut marking = p.clone();
    if let Sink::MarkBuild(mm) = &mut marking.sink {
        let at = |c: usize| if c < width { c } else { width + read.iter().position(|&x| x == c - width).unwrap_or(0) };
        mm.residual = m.residual.as_ref().map(|r| r.map_columns(&at));
        mm.fields = read.iter().map(|&c| kept[c].clone()).collect();
    }
    let mut tables = gpu_tables.clone();
    tables.insert(m.table, shape.clone());
    let mut placed = plan_kernel(&marking, Some(table), state, &tables, options)?;
    placed.marks = Some(Box::new(MarkTable { keys: h.keys.clone(), read, keys_valid, build: keys_build }));
    Ok(placed)
}

/// [`plan_kernel`] once the source columns are known: binds dictionaries, finds the
/// probed tables and generates the kernel.
fn finish_plan(
    p: &Pipeline,
    cols: Vec<GpuColumn>,
    dict_values: Vec<DictValues>,
    mut reasons: Vec<Unsupported>,
    state: &mut GpuQueryState,
    gpu_tables: &HashMap<HashTableId, GpuTable>,
    options: KernelOptions,
) -> std::result::Result<GpuPipeline, Vec<Unsupported>> {
    let known = state.dictionaries.len();
    let values = |d: DictRef| {
        let v = if d.id < known { state.dictionaries.get(d.id) } else { dict_values.get(d.id - known) };
        match v {
            Some(DictValues::Values(a)) => Some(Arc::clone(a)),
            // Row numbers: a predicate over them is the string's (LIKE), not codes'.
            _ => None,
        }
    };
    let bound = bind(p, &cols, gpu_tables, &values);
    let mut tables = Vec::new();
    for (index, o) in p.operators.iter().enumerate() {
        if let Operator::Probe(pr) = o {
            match gpu_tables.get(&pr.table) {
                Some(t) => tables.push(t.clone()),
                None => reasons.push(Unsupported::new(Site::Operator { index, kind: "probe" }, Reason::TableOnCpu)),
            }
        }
    }
    if tables.len() < p.operators.iter().filter(|o| matches!(o, Operator::Probe(_))).count() {
        // The generator reads tables by probe number: with one on the CPU, the reasons
        // so far are all there is to say.
        return Err(reasons);
    }
    // A mark sink's table (see [`plan_marks`]) comes last.
    if let Sink::MarkBuild(m) = &p.sink
        && let Some(t) = gpu_tables.get(&m.table)
    {
        tables.push(t.clone());
    }
    match codegen::generate_with(&bound, &cols, &tables, options) {
        Ok(kernel) if reasons.is_empty() => {
            Arc::make_mut(&mut state.dictionaries).extend(dict_values);
            if let Sink::Aggregate(a) = &bound.sink
                && ExecExperiments::get().keep_results
                && let Some(layout) = result_layout(&bound, &kernel)
            {
                Arc::make_mut(&mut state.result_layouts).insert(a.result, layout);
            }
            Ok(GpuPipeline { pipeline: bound, columns: cols, kernel, reads_kept: false, zones: None, marks: None, launch: std::sync::OnceLock::new(), build_key: std::sync::OnceLock::new(), spare: SpareSlot::default(), sink_fields: std::sync::OnceLock::new() })
        }
        Ok(_) => Err(reasons),
        Err(more) => Err(reasons.into_iter().chain(more).collect()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Host columns as kernels read them, batches converted in parallel into their
    /// places: codes, days and cast integers; decimals beyond 64 bits send the query to
    /// the CPU.
    #[test]
    fn host_columns_keep_every_batch_in_order() {
        use arrow::array::{Date32Array, Decimal128Array, DictionaryArray, Int16Array, Int64Array, StringArray};
        let dict: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::try_new(Int32Array::from(vec![2, 0, 1]), Arc::new(StringArray::from(vec!["a", "b", "c"]))).unwrap());
        let parts: Vec<ArrayRef> = vec![dict, Arc::new(Date32Array::from(vec![9000, -1])), Arc::new(Int32Array::from(Vec::<i32>::new())), Arc::new(Int16Array::from(vec![-7]))];
        assert_eq!(host_i32(&parts).unwrap(), [2, 0, 1, 9000, -1, -7]);
        let many: Vec<ArrayRef> = (0..100).map(|k| Arc::new(Int64Array::from_iter_values(k * 10..k * 10 + 10)) as ArrayRef).collect();
        assert_eq!(host_i64(&many).unwrap(), (0..1000).collect::<Vec<i64>>());
        let dec = |v: Vec<i128>| Arc::new(Decimal128Array::from(v).with_precision_and_scale(38, 2).unwrap()) as ArrayRef;
        assert_eq!(host_i64(&[dec(vec![1, -2]), dec(vec![i64::MAX as i128])]).unwrap(), [1, -2, i64::MAX]);
        let err = host_i64(&[dec(vec![1]), dec(vec![i64::MAX as i128 + 1])]).unwrap_err();
        assert!(matches!(err, TesseraError::RetryOnCpu(_)), "{err}");
        assert!(host_i64(&[]).unwrap().is_empty());
    }

    /// Distances from the reference, for every array type read in place and for one read
    /// through 64-bit values (decimals), batch after batch in order; a value below the
    /// reference or beyond the narrow type is an error naming the first such value.
    #[test]
    fn distances_read_every_type_in_place_and_refuse_values_out_of_reach() {
        use arrow::array::{Date32Array, Decimal128Array, Int8Array, Int16Array, UInt8Array, UInt16Array, UInt32Array};
        let dict: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::try_new(Int32Array::from(vec![2, 0, 1]), Arc::new(arrow::array::StringArray::from(vec!["a", "b", "c"]))).unwrap());
        let codes = host_distances::<u8>(&[Arc::clone(&dict), dict], 0).unwrap();
        assert_eq!(codes, [2, 0, 1, 2, 0, 1]);
        let parts: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![100, 355])),
            Arc::new(Date32Array::from(vec![101])),
            Arc::new(Int64Array::from(vec![102, 200])),
            Arc::new(Int16Array::from(vec![103])),
            Arc::new(Int8Array::from(vec![104, 127])),
            Arc::new(UInt8Array::from(vec![105])),
            Arc::new(UInt16Array::from(vec![106])),
            Arc::new(UInt32Array::from(vec![107])),
            Arc::new(Decimal128Array::from(vec![108, 300]).with_precision_and_scale(10, 2).unwrap()),
            Arc::new(Int32Array::from(Vec::<i32>::new())),
        ];
        let expected = [0, 255, 1, 2, 100, 3, 4, 27, 5, 6, 7, 8, 200];
        assert_eq!(host_distances::<u8>(&parts, 100).unwrap(), expected);
        assert_eq!(host_distances::<u16>(&parts, 100).unwrap(), expected.map(u16::from));
        assert_eq!(host_distances::<u32>(&parts, 100).unwrap(), expected.map(u32::from));
        // 355 is 256 past 99: beyond a byte; 100 is below 101.
        let err = host_distances::<u8>(&parts, 99).unwrap_err();
        assert!(err.to_string().contains("value 355 outside"), "{err}");
        let err = host_distances::<u32>(&parts, 101).unwrap_err();
        assert!(err.to_string().contains("value 100 outside"), "{err}");
        let far: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(vec![i64::MAX, i64::MIN]))];
        assert!(host_distances::<u32>(&far, i64::MIN).is_err());
        assert!(host_distances::<u32>(&far, 0).is_err());
        assert!(host_distances::<u8>(&[], 0).unwrap().is_empty());
    }

    /// Bit-packed columns as kernels read them: every batch's distances from the
    /// reference at their rows' bits, across batches of lengths that are not multiples of
    /// 32 and more rows than one packing thread takes; a value wider than the width is an
    /// error, not a truncated value; an empty column is its streams' spare words.
    #[test]
    fn bit_packed_columns_keep_every_row_and_refuse_wide_values() {
        use arrow::array::Int64Array;
        let parts: Vec<ArrayRef> = (0..40).map(|k| Arc::new(Int64Array::from_iter_values((0..(1000 + k)).map(|i| 5000 + (i * 7919 + k) % 4096))) as ArrayRef).collect();
        let values = host_i64(&parts).unwrap();
        let words = host_bits(&parts, 5000, 12).unwrap();
        assert_eq!(words.len(), codegen::Narrow::bit_words(values.len(), 12));
        for (r, v) in values.iter().enumerate() {
            assert_eq!(i64::from(codegen::unpack_bit(&words, 12, r)) + 5000, *v, "row {r}");
        }
        let err = host_bits(&parts, 5000, 11).unwrap_err();
        assert!(err.to_string().contains("wider than 11 bits"), "{err}");
        let err = host_bits(&parts, 5001, 12).unwrap_err();
        assert!(err.to_string().contains("value 5000 outside its column's zone map"), "{err}");
        assert_eq!(host_bits(&[], 0, 3).unwrap(), vec![0u32; codegen::BLOCK_THREADS as usize]);
        // Empty batches and batches of other types between them, as one column.
        let mixed: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from_iter_values((0..5000).map(|i| 7 + i % 100))),
            Arc::new(Int32Array::from(Vec::<i32>::new())),
            Arc::new(Int64Array::from_iter_values((0..3000).map(|i| 7 + (i * 3) % 100))),
            Arc::new(arrow::array::Date32Array::from_iter_values((0..4100).map(|i| 7 + (i * 7) % 100))),
            Arc::new(Int64Array::from(Vec::<i64>::new())),
        ];
        let values = host_i64(&mixed).unwrap();
        let words = host_bits(&mixed, 7, 7).unwrap();
        assert_eq!(words.len(), codegen::Narrow::bit_words(values.len(), 7));
        for (r, v) in values.iter().enumerate() {
            assert_eq!(i64::from(codegen::unpack_bit(&words, 7, r)) + 7, *v, "row {r} of the mixed batches");
        }
    }

    /// Validity bitmaps as kernels read them: bit `r & 31` of word `r >> 5` per row of the
    /// whole column, batches one after another (unaligned ones too), set where not NULL.
    #[test]
    fn validity_bitmaps_follow_rows_across_batches() {
        let parts: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])),
            Arc::new(Int32Array::from_iter_values(0..40)),
            Arc::new(Int32Array::from(vec![None::<i32>; 5])),
            Arc::new(Int32Array::from(vec![Some(9)])),
        ];
        let words = host_validity(&parts);
        assert_eq!(words.len(), 49usize.div_ceil(32));
        let bit = |r: usize| (words[r >> 5] >> (r & 31)) & 1 == 1;
        let want: Vec<bool> = [vec![true, false, true], vec![true; 40], vec![false; 5], vec![true]].concat();
        assert_eq!((0..49).map(bit).collect::<Vec<_>>(), want);
        // Nothing past the last row, and an empty column still has a word.
        assert!((49..64).all(|r| !bit(r)));
        assert_eq!(host_validity(&[]), vec![0]);
        // Rows 5..100 valid, across whole words.
        let parts: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(vec![None::<i32>; 5])), Arc::new(Int32Array::from_iter_values(0..95))];
        assert_eq!(host_validity(&parts), vec![!0u32 << 5, u32::MAX, u32::MAX, (1u32 << 4) - 1]);
    }

    /// A table's plain bytes on the GPU are its values at the widths placement sends
    /// them in: small integers widened to 32 bits, decimals in 64, dictionary codes in 32,
    /// strings' offsets in 64, types the GPU does not take nothing.
    #[test]
    fn plain_gpu_bytes_count_the_widths_placement_sends() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let widths: Vec<usize> = [DataType::Int8, DataType::Int16, DataType::Int32, DataType::Date32, DataType::Int64, DataType::Decimal128(15, 2), DataType::Decimal128(38, 2), dict, DataType::Utf8, DataType::Float64, DataType::Boolean]
            .iter()
            .map(plain_gpu_width)
            .collect();
        assert_eq!(widths, [4, 4, 4, 4, 8, 8, 0, 4, 8, 8, 0]);
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![arrow::datatypes::Field::new("a", DataType::Int16, false), arrow::datatypes::Field::new("b", DataType::Int64, false)]));
        let batch = arrow::array::RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(arrow::array::Int16Array::from(vec![1, 2, 3])), Arc::new(Int64Array::from(vec![4, 5, 6]))]).unwrap();
        let table = LoadedTable::from_batches("t".into(), schema, vec![batch]);
        assert_eq!(plain_gpu_bytes(&table), 3 * (4 + 8));
        // Over a quarter of the limit the table goes up compact; without a known limit,
        // never; always or never where the setting says so.
        let auto = CompactTables::default();
        assert!(compact_table(&table, Some(4 * 36 - 1), auto));
        assert!(!compact_table(&table, Some(4 * 36), auto));
        assert!(!compact_table(&table, None, auto));
        assert!(compact_table(&table, None, CompactTables::Always) && compact_table(&table, Some(1 << 40), CompactTables::Always));
        assert!(!compact_table(&table, Some(1), CompactTables::Never));
        let parsed: Vec<_> = ["auto", " Always ", "NEVER", "yes", ""].iter().map(|s| CompactTables::parse(s)).collect();
        assert_eq!(parsed, [Some(auto), Some(CompactTables::Always), Some(CompactTables::Never), None, None]);
    }

    /// Whether a column holds NULLs is what its data says, not its field: a nullable
    /// column without one goes to the GPU without a bitmap.
    #[test]
    fn columns_hold_nulls_when_their_data_does() {
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("a", DataType::Int32, true),
            arrow::datatypes::Field::new("b", DataType::Int32, true),
        ]));
        let batch = |a: Vec<Option<i32>>, b: Vec<i32>| {
            arrow::array::RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(Int32Array::from(a)), Arc::new(Int32Array::from(b))]).unwrap()
        };
        let table = LoadedTable::from_batches("t".into(), Arc::clone(&schema), vec![batch(vec![Some(1)], vec![1]), batch(vec![None, Some(2)], vec![2, 3])]);
        assert!(holds_nulls(&table, 0));
        assert!(!holds_nulls(&table, 1));
    }

    /// A stored dictionary's codes coming back for a few rows are plain strings at once
    /// (NULL codes NULL); for more rows than `PLAIN_STRINGS_MAX_ROWS`, a dictionary array
    /// over the same values.
    #[test]
    fn few_dictionary_codes_come_back_as_plain_strings() {
        use arrow::array::StringArray;
        let mut state = GpuQueryState::default();
        Arc::make_mut(&mut state.dictionaries).push(DictValues::Values(Arc::new(StringArray::from(vec!["ASIA", "EUROPE", "AMERICA"]))));
        let d = DictRef { size: 3, id: 0, by_row: false };
        let few = dictionary_column(&state, d, Int32Array::from(vec![Some(2), None, Some(0), Some(2)])).unwrap();
        assert_eq!(few.data_type(), &DataType::Utf8);
        assert_eq!(few.as_string::<i32>().iter().collect::<Vec<_>>(), vec![Some("AMERICA"), None, Some("ASIA"), Some("AMERICA")]);
        let n = PLAIN_STRINGS_MAX_ROWS + 1;
        let many = dictionary_column(&state, d, Int32Array::from_iter_values((0..n).map(|i| (i % 3) as i32))).unwrap();
        assert!(matches!(many.data_type(), DataType::Dictionary(..)));
        let plain = arrow::compute::cast(&many, &DataType::Utf8).unwrap();
        assert_eq!((plain.as_string::<i32>().value(0), plain.as_string::<i32>().value(n - 1)), ("ASIA", ["ASIA", "EUROPE", "AMERICA"][(n - 1) % 3]));
        // Codes outside the dictionary are an error either way, never a wrong string.
        assert!(dictionary_column(&state, d, Int32Array::from(vec![3])).is_err());
    }

    /// A SUM whose inputs may be NULL is NULL for a group that took none (its count 0).
    #[test]
    fn sums_of_nothing_but_nulls_are_null() {
        for lean in [true, false] {
            let a = finish_sum(&[5, 0, 7], Some(&[2, 0, 1]), &[true, true, false], AggFunc::Sum, Some(Type::Int64), Type::Int64, lean).unwrap();
            let a = a.as_primitive::<arrow::datatypes::Int64Type>();
            assert_eq!(a.iter().collect::<Vec<_>>(), vec![Some(5), None, None]);
            // Without counts (values that are never NULL) every group present has a sum.
            let b = finish_sum(&[5, 0], None, &[true, true], AggFunc::Sum, Some(Type::Int64), Type::Int64, lean).unwrap();
            assert_eq!(b.null_count(), 0);
        }
    }

    /// Both ways of making a SUM's column give the same array, for each result type the
    /// SUM path makes, and fail alike on overflow.
    #[test]
    fn lean_sums_match_the_old_way() {
        let sums = [12_345i128, -7, 0, 99_999, -99_999];
        let counts = [3i64, 1, 0, 2, 5];
        let present = [true, true, true, true, false];
        let decimal = Type::Decimal { precision: 5, scale: 2 };
        for (arg, ty) in [(Some(Type::Int64), Type::Int64), (Some(Type::Int32), Type::Int64), (Some(decimal), decimal), (Some(Type::Int64), Type::Float64)] {
            for counts in [None, Some(&counts[..])] {
                let lean = finish_sum(&sums, counts, &present, AggFunc::Sum, arg, ty, true).unwrap();
                let old = finish_sum(&sums, counts, &present, AggFunc::Sum, arg, ty, false).unwrap();
                assert_eq!(lean.to_data(), old.to_data(), "{arg:?} -> {ty:?}, counts {counts:?}");
            }
        }
        for lean in [true, false] {
            assert!(finish_sum(&[100_000], None, &[true], AggFunc::Sum, Some(decimal), decimal, lean).is_err());
            assert!(finish_sum(&[i128::from(i64::MAX) + 1], None, &[true], AggFunc::Sum, Some(Type::Int64), Type::Int64, lean).is_err());
        }
    }

    /// SUM/AVG of doubles come back as each group's double total: an AVG divided by its
    /// count, NULL where a group took no value or is absent; doubles' MIN/MAX and
    /// materialized values come back from their order keys bit for bit.
    #[test]
    fn doubles_come_back_from_totals_and_order_keys() {
        let totals = [1.5f64, 0.0, -7.25].map(f64::to_bits);
        let sum = finish_float_sum(&totals, Some(&[3, 0, 2]), &[true, true, true], AggFunc::Sum, Type::Float64).unwrap();
        assert_eq!(sum.as_primitive::<arrow::datatypes::Float64Type>().iter().collect::<Vec<_>>(), vec![Some(1.5), None, Some(-7.25)]);
        let avg = finish_float_sum(&totals, Some(&[3, 0, 2]), &[true, true, false], AggFunc::Avg, Type::Float64).unwrap();
        assert_eq!(avg.as_primitive::<arrow::datatypes::Float64Type>().iter().collect::<Vec<_>>(), vec![Some(0.5), None, None]);
        let values = [-0.0, f64::NAN, f64::NEG_INFINITY, 2.5, -1e-300];
        let keys: Int64Array = values.iter().map(|&v| Some(codegen::layout::float_order_key(v))).collect();
        let back = int_as(&keys, Type::Float64, Type::Float64).unwrap();
        let back = back.as_primitive::<arrow::datatypes::Float64Type>();
        for (i, v) in values.iter().enumerate() {
            assert_eq!(back.value(i).to_bits(), v.to_bits(), "{v}");
        }
    }

    /// A dictionary predicate over a column that may be NULL keeps its value for a NULL:
    /// `IS NULL` holds there, `= 'a'` is NULL there, `IS NOT NULL AND ...` is FALSE there.
    #[test]
    fn dictionary_predicates_keep_their_value_for_null() {
        use arrow::array::StringArray;
        let values = |_: DictRef| Some(Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef);
        let binder = DictBinder { eval: Evaluator::new(), values: &values };
        let d = DictRef { size: 2, id: 0, by_row: false };
        let s = || Box::new(Expr::col(0, "s"));
        let a = || Box::new(Expr::lit(Scalar::Utf8("a".into()), Type::Utf8));
        let codes = |list: Vec<i64>| Expr::InList { expr: Box::new(Expr::col(0, "codes")), list: list.into_iter().map(Scalar::Int).collect(), negated: false };
        for nullable in [true, false] {
            let fields = [tessera_ir::Field::new("s", Type::Utf8, nullable)];
            let bind = |e: Expr| binder.bind(&e, &fields, &[Some(d)]);
            let eq = Expr::Cmp { op: tessera_ir::CmpOp::Eq, left: s(), right: a() };
            assert_eq!(bind(eq.clone()), codes(vec![0]));
            let is_null = bind(Expr::Or(Box::new(Expr::IsNull(s())), Box::new(eq.clone())));
            let and_not_null = bind(Expr::And(Box::new(Expr::IsNotNull(s())), Box::new(Expr::Not(Box::new(eq)))));
            if nullable {
                assert_eq!(is_null, Expr::Or(Box::new(Expr::IsNull(Box::new(Expr::col(0, "codes")))), Box::new(codes(vec![0]))));
                assert_eq!(and_not_null, Expr::And(Box::new(Expr::IsNotNull(Box::new(Expr::col(0, "codes")))), Box::new(codes(vec![1]))));
            } else {
                assert_eq!((is_null, and_not_null), (codes(vec![0]), codes(vec![1])));
            }
        }
    }

    /// `SELECT ... FROM t JOIN d ON k = dk WHERE d.v < {limit}`'s build: d's rows with
    /// `v < limit` into a dense table of keys 1..=1000, payload v, over `rows` rows.
    fn build_of_d(limit: i64, rows: u64) -> GpuPipeline {
        use tessera_ir::{BuildStrategy, CmpOp, Device, Field, HashBuild, Scan};
        let fields = vec![Field::new("dk", Type::Int32, false), Field::new("v", Type::Int64, false)];
        let pipeline = Pipeline {
            id: 0,
            source: Source::Scan(Scan { table: "d".into(), version: 3, columns: vec![0, 1], fields, dictionary: vec![false, false], rows, kept_permille: 1000 }),
            operators: vec![Operator::Filter(Expr::Cmp {
                op: CmpOp::Lt,
                left: Box::new(Expr::col(1, "v")),
                right: Box::new(Expr::lit(Scalar::Int(limit), Type::Int64)),
            })],
            sink: Sink::HashBuild(HashBuild {
                table: 0,
                keys: vec![Expr::col(0, "dk")],
                payload: vec![1],
                strategy: BuildStrategy::Perfect { min: 1, max: 1000 },
                nulls_equal: false,
                estimated_rows: 1000,
                membership: false,
                repeated_keys: false,
                null_aware: false,
                payload_ranges: Vec::new(),
            }),
            device: Device::Gpu,
            device_reason: None,
        };
        let columns = vec![GpuColumn::plain(Width::I32, None), GpuColumn::plain(Width::I64, None)];
        let kernel = codegen::generate(&pipeline, &columns, &[]).unwrap_or_else(|e| panic!("{e:?}"));
        GpuPipeline { pipeline, columns, kernel, reads_kept: false, zones: None, marks: None, launch: std::sync::OnceLock::new(), build_key: std::sync::OnceLock::new(), spare: SpareSlot::default(), sink_fields: std::sync::OnceLock::new() }
    }

    /// The build cache keys a build over a stored table by everything its table depends
    /// on, and keeps no other build: not one over an intermediate result, nor one over a
    /// table of more than `BUILD_CACHE_MAX_ROWS` rows.
    #[test]
    fn only_builds_over_dimension_sized_stored_tables_have_a_cache_key() {
        let key = |g: &GpuPipeline| g.build_identity(Vec::new()).filter(cache_keeps);
        let a = key(&build_of_d(10, 1000)).unwrap();
        assert_eq!((a.table.as_str(), a.version, a.rows), ("d", 3, 1000));
        // The same build planned again: the same key.
        assert_eq!(key(&build_of_d(10, 1000)), Some(a.clone()));
        // Another literal (inlined into the source, or a parameter): another key.
        assert_ne!(key(&build_of_d(11, 1000)), Some(a));
        assert!(key(&build_of_d(10, BUILD_CACHE_MAX_ROWS)).is_some());
        assert_eq!(key(&build_of_d(10, BUILD_CACHE_MAX_ROWS + 1)), None);
        let mut over_result = build_of_d(10, 1000);
        over_result.pipeline.source = Source::Result { id: 7, fields: over_result.pipeline.sink_input_fields() };
        assert_eq!(key(&over_result), None);
        let mut aggregate = build_of_d(10, 1000);
        aggregate.pipeline.sink = Sink::Aggregate(tessera_ir::Aggregate {
            result: 0,
            group_by: vec![],
            aggregates: vec![tessera_ir::AggExpr { func: AggFunc::Count, arg: None, distinct: false, ty: Type::Int64, name: "n".into() }],
            strategy: tessera_ir::GroupStrategy::Perfect { domains: vec![] },
            fields: vec![tessera_ir::Field::new("n", Type::Int64, false)],
            reduced: None,
            value_ranges: Vec::new(),
        });
        assert_eq!(key(&aggregate), None);
    }

    /// A build probing another table is keyed with that table's key: two builds of the
    /// same kernel probing tables built with other literals (TPC-H q02's and q08's nation
    /// joined with region) get other keys, and one probing a table without a key (built
    /// on the CPU here) gets none.
    #[test]
    fn a_build_probing_another_table_is_keyed_with_that_tables_key() {
        use tessera_ir::{JoinKind, Probe};
        // Pipeline 0 builds table 0 from d WHERE v < limit; pipeline 1 builds table 1 from
        // d probing table 0 (its kernel is d's own: only its operators are read here).
        let pair = |limit: i64| {
            let first = build_of_d(limit, 1000);
            let mut second = build_of_d(10, 1000);
            second.pipeline.id = 1;
            if let Sink::HashBuild(b) = &mut second.pipeline.sink {
                b.table = 1;
            }
            second.pipeline.operators.push(Operator::Probe(Probe {
                table: 0,
                kind: JoinKind::Semi,
                keys: vec![Expr::col(0, "dk")],
                build_fields: Vec::new(),
                residual: None,
                nulls_equal: false,
                null_aware: false,
            }));
            (first, second)
        };
        let linked = |limit: i64, first_on_gpu: bool| {
            let (first, second) = pair(limit);
            let pipelines = [first.pipeline.clone(), second.pipeline.clone()];
            let mut kernels = HashMap::new();
            if first_on_gpu {
                kernels.insert(0, Arc::new(first));
            }
            let second = Arc::new(second);
            kernels.insert(1, Arc::clone(&second));
            link_build_keys(pipelines.iter(), &kernels);
            let first_key = kernels.get(&0).and_then(|k| k.build_key().map(|k| k.key().clone()));
            (first_key, second.build_key().map(|k| k.key().clone()))
        };
        let (a0, a1) = linked(10, true);
        let (b0, b1) = linked(11, true);
        let (a0, a1, b1) = (a0.unwrap(), a1.unwrap(), b1.unwrap());
        assert_ne!(Some(a0.clone()), b0);
        assert_eq!(a1.probed, vec![a0]);
        // The second build's own kernel is the same both times; its table is not.
        assert_eq!((&a1.source, &a1.literals), (&b1.source, &b1.literals));
        assert_ne!(a1, b1);
        assert_eq!(linked(10, true).1, Some(a1));
        assert_eq!(linked(10, false).1, None);
        // A probed table too large to keep still has an identity: the build probing it
        // is kept (as TPC-H's builds probing orders).
        let (first, second) = pair(10);
        let mut large = first;
        if let Source::Scan(scan) = &mut large.pipeline.source {
            scan.rows = BUILD_CACHE_MAX_ROWS + 1;
        }
        let pipelines = [large.pipeline.clone(), second.pipeline.clone()];
        let (large, second) = (Arc::new(large), Arc::new(second));
        link_build_keys(pipelines.iter(), &HashMap::from([(0, Arc::clone(&large)), (1, Arc::clone(&second))]));
        assert!(large.build_key().is_none());
        assert_eq!(second.build_key().map(|k| k.key().probed[0].rows), Some(BUILD_CACHE_MAX_ROWS + 1));
    }

    /// Compiles a module the runtime loads (no GPU needed) and checks that it has the
    /// kernels the runtime looks up by name.
    fn compiles_with_kernels(source: &str, kernels: &[&str]) {
        let cubin = tessera_cuda::compile_cubin(source, "sm_90").unwrap_or_else(|e| panic!("{source} does not compile: {e}"));
        for k in kernels {
            assert!(cubin.windows(k.len()).any(|w| w == k.as_bytes()), "{k} missing from the CUBIN of {source}");
        }
    }

    #[test]
    fn helper_kernels_compile_with_nvrtc() {
        if tessera_cuda::test_support::nvrtc_or_skip("helper kernels compile with NVRTC") {
            compiles_with_kernels(
                RECORDS_SOURCE,
                &[
                    "tessera_fill_many",
                    "tessera_having",
                    "tessera_count_seen",
                    "tessera_compact_records_ordered",
                    "tessera_gather_records",
                    "tessera_small_records",
                    "tessera_gather_many",
                    "tessera_rank_records",
                    "tessera_small_sorted_records",
                    "tessera_select_top",
                    "tessera_keep_top",
                    "tessera_seal_top",
                    "tessera_result_column",
                ],
            );
        }
    }

    #[test]
    fn bandwidth_kernel_compiles_with_nvrtc() {
        if tessera_cuda::test_support::nvrtc_or_skip("bandwidth kernel compiles with NVRTC") {
            compiles_with_kernels(BANDWIDTH_SOURCE, &["tessera_read"]);
        }
    }
}
