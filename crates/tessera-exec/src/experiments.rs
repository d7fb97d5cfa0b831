//! The executor's experiment switches: `TESSERA_EXP_*` variables that turn a measured
//! choice back to what it replaced (or move a threshold), to measure both on the device
//! (`benchmarks/device/gpu-suite.sh`). Read from the environment once a process
//! ([`ExecExperiments::get`]); the defaults are what was measured best. The code
//! generator's switches are `tessera_cuda::codegen::Experiments`.

use std::sync::OnceLock;

use crate::gpu::{GPU_MIN_ROWS, PLAIN_STRINGS_MAX_ROWS, SMALL_RECORDS_MAX_GROUPS, SMALL_SORT_MAX_GROUPS};

/// The switches, each with what it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecExperiments {
    /// `TESSERA_EXP_GPU_MIN_ROWS` (rows): [`GPU_MIN_ROWS`] or another threshold to
    /// measure.
    pub gpu_min_rows: u64,
    /// `TESSERA_EXP_MANY_GROUPS_ON_GPU=1` turns the rule of
    /// [`crate::gpu::too_many_groups`] off (to measure the GPU's side).
    pub many_groups_on_gpu: bool,
    /// Whether integer columns go up narrowed to byte widths where their values allow
    /// (`codegen::Narrow`; the default), or at their widths (`TESSERA_EXP_NARROW=0`).
    /// Narrowed alone the kernels were no faster for reading fewer bytes (2026-11-26f and
    /// 2026-11-27g, H200: SSB SF 20 6.51-6.58 ms against 6.40-6.43 plain, TPC-H SF 10
    /// 61.5-62.0 against 62.0-62.1): a byte load moves a quarter of the bytes a warp that a
    /// 4-byte load does, and the kernels were latency-bound at 50% of DRAM. Loaded a word a
    /// lane and handed out by shuffles (`codegen::Experiments::narrow_words`), they are:
    /// SSB SF 20 6.34-6.39 ms against 6.42-6.43 plain, TPC-H SF 10 **42.4-42.6 against
    /// 61.3-61.4** (bench medians in turns, 2026-11-27h run 1). They also take less GPU
    /// memory (SSB's columns read 0.72x, TPC-H's 0.42x of their plain bytes) and the bytes
    /// an upload moves.
    pub narrow: bool,
    /// Which narrowed columns go below whole bytes: distances bit-packed at one width for
    /// the whole column (`codegen::Narrow::Bits`) where the form they replace has at least
    /// this many bits (8: any; 32: only those that would take 4 bytes) and they take at
    /// most `codegen::layout::BITS_MAX_SHARE` of them; 0: none (the default; a compact
    /// table's columns, one over half the GPU memory limit, take 8: `gpu::compact_table`).
    /// `TESSERA_EXP_NARROW_BITS=N`. A memory-saving mode: SSB SF 100's columns take 0.52x
    /// of their plain bytes with 8 (0.78x narrowed to bytes, 0.44x in packed tiles), but
    /// SSB SF 20's kernels 4.68 ms against 4.10 and TPC-H SF 10's 53.8 against 47.1 (H200,
    /// `benchmarks/results/gpu-2026-11-29g/`, lane-interleaved; the first layout, whose
    /// values were taken out by shuffles, 5.90 against 4.70 in `gpu-2026-11-28b/`): each
    /// bit-packed column finds its words and shift once a tile, and SSB's multi-probe
    /// kernels share that between 2 items.
    pub narrow_bits: u32,
    /// Whether narrowed columns whose stored tiles show runs of repeated values (an
    /// order's lines repeating its date and customer) go up as runs
    /// (`codegen::Narrow::Runs`: a run's value once, a directory of two words a 32 rows):
    /// 1 where that takes at most `codegen::layout::RUNS_MAX_SHARE` of the bits a row of
    /// the form they replace, 2 wherever the values allow (to test them), 0 never (the
    /// default; a compact table's columns take 1: `gpu::compact_table`).
    /// `TESSERA_EXP_NARROW_RUNS=N`. A memory-saving mode: with bit-packing
    /// (`narrow_bits` 8) SSB SF 100's columns take 0.489x of their plain bytes (0.67x
    /// with runs alone), but SSB SF 20's kernels 5.33 ms against 4.12 (5.24 with runs
    /// alone): the directory's and the run values' loads and their registers (H200,
    /// `benchmarks/results/gpu-2026-11-29h/`).
    pub narrow_runs: u32,
    /// Whether stored integer columns go up to the GPU in their bit-packed tiles, decoded
    /// where the kernels load them (`TESSERA_EXP_PACKED=1`), or decoded on the host into
    /// plain arrays (the default). Off by default because it is slower as it stands. SSB SF
    /// 20's kernels on the H200, packed against plain (6.6 ms):
    /// - a row's decoder per load (2026-11-26b): 15.2 ms, a 3.7 ms bandwidth model;
    /// - a warp's decoder (its words loaded once, shared by shuffles), tiles of runs (a 2.8
    ///   ms model): 23.3 ms; pipelined over tiles (words a tile ahead): 34.5 ms, its tile
    ///   headers in registers limiting occupancy to 4 blocks an SM; headers prefetched into
    ///   L1 and read where used, 32-bit math: 23.4 ms; a tile's decoder read once a tile:
    ///   21.9 ms (2026-11-26d, `benchmarks/results/gpu-h200-2026-11-26d/`);
    /// - the columns loaded up front staged in shared memory a tile ahead (`cp.async`) and
    ///   decoded there: 16.6 ms; with a tile's kind tested outside the loop over its items
    ///   and every packed column loaded up front: 19.1 ms (the latter undone); with each
    ///   column's copy by one warp: 14.9 ms; with the header copied beside the words: 14.6
    ///   ms, 14.9 with the next tile's copies issued after the decode instead of before
    ///   (2026-11-26e, `benchmarks/results/gpu-h200-2026-11-26e/`).
    ///
    /// Nsight Compute on q1.1 counts about 150 warp instructions per 32 rows (330 with the
    /// warp decoder) at 0.66 issued a cycle per scheduler: instructions, not memory, bound
    /// these kernels (plain q1.1 runs at its bandwidth, 0.46 ms; packed 0.82 ms). TPC-H SF
    /// 10 is faster packed (50.9 ms of kernels against 66.0).
    pub packed: bool,
    /// Whether GPU aggregations' results that pipelines read on the GPU stay there (see
    /// `gpu::result_layout`); `TESSERA_EXP_KEEP_RESULTS=0` turns it off (the results then
    /// come back to the host, and only builds read them on the GPU, after an upload), to
    /// measure what keeping them saves.
    pub keep_results: bool,
    /// Whether a cached plan's placement is looked up by the plan's number and a
    /// statement's pipelines check their tables against one manifest read (the default);
    /// `TESSERA_EXP_SHORT_LOOKUPS=0` looks placements up by the plan's text and reads the
    /// manifest for each pipeline, as before 2026-11-27j, to measure what they save.
    pub short_lookups: bool,
    /// Whether the chain of kernels after an aggregation skips the two copies it queued
    /// before 2026-11-27j: zeroing the records' count (the compaction writes it) and
    /// uploading the rank sort's keys (passed by value, `SortKeys`).
    /// `TESSERA_EXP_SHORT_CHAIN=0` queues them again, to measure what they cost.
    pub short_chain: bool,
    /// Whether a chain gathers its accumulators into the records in one launch
    /// (`tessera_gather_many`) rather than one launch an array; `TESSERA_EXP_GATHER_MANY=0`
    /// launches one an array, as before 2026-11-28.
    pub gather_many: bool,
    /// `TESSERA_EXP_SMALL_RECORDS_MAX=N`: [`SMALL_RECORDS_MAX_GROUPS`] or another bound
    /// (0: never one block).
    pub small_records_max_groups: usize,
    /// `TESSERA_EXP_SMALL_SORT_MAX=N`: [`SMALL_SORT_MAX_GROUPS`] or another bound on the
    /// domains whose chain to an ORDER BY is one launch (0: never; the chain then takes
    /// its launches one after the other, as before 2026-11-28e).
    pub small_sort_max_groups: usize,
    /// The most group slots of an aggregation feeding an ORDER BY whose arrays come back
    /// whole and are sorted by the CPU backend, rather than compacted and ranked on the
    /// GPU (`fetch_groups`). `TESSERA_EXP_HOST_SORT_MAX_GROUPS`, default 0: never (the
    /// host's sort pipeline measured slower than the chain, 2026-11-27j run 3).
    pub host_sort_max_groups: usize,
    /// Which pipelines' sink arrays are set up at admission with one fill for them all
    /// (`GpuRuntime::preset_sinks`): 2 only hash-table builds' (the default), 1 every
    /// pipeline's that may, 0 none (each pipeline's arrays with a fill launch of its own
    /// just before its kernel, as before 2026-11-28c). `TESSERA_EXP_QUERY_FILL=N`.
    ///
    /// On an H200, SSB SF 20, 15 warm runs x 6 rounds in turns (2026-11-28c run 4): wall
    /// beside the kernels (median of the rounds) 1.15 ms with 2, 1.27 with 1, 1.38 with 0;
    /// kernels 4.59-4.67 ms with 2 and 0 but 4.69-4.79 with 1, whose aggregations' arrays,
    /// set long before their kernels, made q3.1's probe take 0.47-0.63 ms by process
    /// (0.47 with 0 and 2: Nsight Compute counted the same work and hit rates either way).
    /// 2 against 0 on two more machines (runs 6 and 10, 8 rounds each): 6.26 against 6.27
    /// ms and 5.82 against 6.03 (pooled medians), kernels unchanged.
    pub query_fill: u8,
    /// Whether hash tables built from stored tables are kept between queries and taken
    /// by later runs of the same build (`crate::build_cache`; the default);
    /// `TESSERA_EXP_BUILD_CACHE=0` builds every table in every run, as before
    /// 2026-11-28d.
    pub build_cache: bool,
    /// Whether an aggregation's pipeline keeps its sink arrays between runs, set again
    /// behind the copies that read them (`gpu::SpareSink`; the default), so that a warm
    /// run launches its kernel with no allocation or fill before it;
    /// `TESSERA_EXP_SPARE_SINKS=0` allocates and fills them every run, as before
    /// 2026-11-28e.
    pub spare_sinks: bool,
    /// Whether a query takes the tables its builds find in the build cache at admission,
    /// and skips those builds' runs (`GpuRuntime::take_cached_builds`; the default);
    /// `TESSERA_EXP_ADMISSION_BUILDS=0` takes each in its build's run, as before
    /// 2026-11-28f. On an H200, SSB SF 20, 15 warm runs in turns on one machine
    /// (2026-11-28f runs 5–6): 5.119 against 5.206 ms pooled over 20 rounds, 5.213
    /// against 5.252 over 14; TPC-H SF 10's kernels unchanged.
    pub admission_builds: bool,
    /// `TESSERA_EXP_PLAIN_STRINGS_MAX=N`: [`PLAIN_STRINGS_MAX_ROWS`] or another bound on
    /// the rows of a stored dictionary's codes made plain strings when they come back from
    /// the GPU (0: always a dictionary array, as before 2026-11-28f). On an H200, SSB SF
    /// 20, 15 warm runs x 10 rounds in turns (2026-11-28f run 8): 5.169 ms pooled against
    /// 5.252 with 0 (lower in 7 of 10 rounds), and 5.367 with 0 and
    /// `TESSERA_EXP_ADMISSION_BUILDS=0` (lower in 9 of 10).
    pub plain_strings_max_rows: usize,
    /// `TESSERA_EXP_BLOCKS_PER_SM=N`: a pipeline kernel's grid is at most N blocks an SM
    /// (fewer resident blocks, each walking more tiles); 0, the default, one wave of as
    /// many as the occupancy calculator allows (`GpuRuntime::grid`). To measure whether a
    /// probe kernel is slowed by its lookups' cache traffic at high occupancy: SSB q3.2's
    /// probe (32 registers a thread with 32-bit rows, 16 blocks an SM) was not, 0.353 ms at
    /// 12 blocks an SM against 0.357 at 16, while q2.2, q3.3 and q3.4 slowed by a fifth
    /// and every query at 8 (H200, SSB SF 20, 2026-11-28g run 5).
    pub blocks_per_sm: u32,
    /// Whether a warm run of a cached plan (an aggregation over the arrays its pipeline
    /// kept, nothing to fill first) launches its kernel, the fold of its group copies if
    /// any (since 2026-11-30d), and their two timing events as one CUDA graph
    /// (`tessera_cuda::graph::TimedKernel`, `TESSERA_EXP_KERNEL_GRAPH=1`) instead of a
    /// driver call each (the default). Off: on an H200 host the graph queues a kernel in
    /// 4.3 µs against 7.3 (`tessera bench launches`; its event nodes cost most of that, a
    /// graph without them 1.7 µs), but SSB SF 20 took 5.215 ms with it against 5.220
    /// without (15 warm runs x 8 rounds in turns, 2026-11-29 run 4), and with the folds
    /// in it 4.808 against 4.704 pooled, kernels 3.940-3.948 ms a round either way, q3.1's
    /// 0.434 against 0.431 (4 rounds, 2026-11-30d run 2). Its events time the kernels
    /// alone: the plain start event, recorded before the launch calls, also counts their
    /// queueing while the GPU idles (SSB's probes 0.005-0.013 ms less with the graph in
    /// 2026-11-29; q3.1's probe and fold no less in 2026-11-30d).
    pub kernel_graph: bool,
    /// Whether an aggregation's key and SUM columns are made directly from its groups'
    /// slots and totals (`crate::group_columns`; the default), or through Option
    /// iterators, a 64-bit division a key a group and a cast, as before 2026-11-29b
    /// (`TESSERA_EXP_LEAN_RESULTS=0`).
    pub lean_results: bool,
    /// Whether a warm query whose one kernel is an aggregation over cached columns and
    /// tables, with the arrays its last run kept, launches that kernel as soon as its
    /// stream is admitted (`GpuRuntime::admit`, [`crate::gpu`]'s `EarlyLaunch`), the
    /// executor's per-pipeline steps running on the host while it does; off
    /// (`TESSERA_EXP_EARLY_LAUNCH=0`), it launches when the executor reaches its pipeline.
    pub early_launch: bool,
    /// Whether an aggregation over more group slots than `small_sort_max_groups` that
    /// feeds a GPU sort (without a LIMIT) has its chain in two launches — its seen groups
    /// listed by each block's range of slots (`tessera_list_seen`), then made and ranked
    /// from those lists (`tessera_listed_sorted_records`) — instead of the compaction's
    /// two, the gathers' and the rank's; `TESSERA_EXP_LISTED_CHAIN=0` the four. It ranks
    /// only as many records as a block's shared memory holds (1,706 of three words); the
    /// rank sort took up to `GPU_SORT_MAX_ROWS` (4,096), so between the two the host sorts
    /// them now (SSB's results have at most 800 groups).
    pub listed_chain: bool,
}

impl Default for ExecExperiments {
    fn default() -> Self {
        ExecExperiments {
            gpu_min_rows: GPU_MIN_ROWS,
            many_groups_on_gpu: false,
            narrow: true,
            narrow_bits: 0,
            narrow_runs: 0,
            packed: false,
            keep_results: true,
            short_lookups: true,
            short_chain: true,
            gather_many: true,
            small_records_max_groups: SMALL_RECORDS_MAX_GROUPS,
            small_sort_max_groups: SMALL_SORT_MAX_GROUPS,
            host_sort_max_groups: 0,
            query_fill: 2,
            build_cache: true,
            spare_sinks: true,
            admission_builds: true,
            plain_strings_max_rows: PLAIN_STRINGS_MAX_ROWS,
            blocks_per_sm: 0,
            kernel_graph: false,
            lean_results: true,
            early_launch: true,
            listed_chain: true,
        }
    }
}

impl ExecExperiments {
    /// The defaults, overridden by the variables that are set, read once a process.
    pub fn get() -> &'static ExecExperiments {
        static READ: OnceLock<ExecExperiments> = OnceLock::new();
        READ.get_or_init(|| Self::read(|name| std::env::var(name).ok()))
    }

    /// The defaults overridden by what `var` gives for each variable's name.
    fn read(var: impl Fn(&str) -> Option<String>) -> ExecExperiments {
        let d = ExecExperiments::default();
        // On unless set to "0"; off unless set to "1"; a number, or the default.
        let on = |name: &str, default: bool| var(name).map_or(default, |v| if default { v != "0" } else { v == "1" });
        let num = |name: &str| var(name).and_then(|v| v.parse().ok());
        ExecExperiments {
            gpu_min_rows: num("TESSERA_EXP_GPU_MIN_ROWS").unwrap_or(d.gpu_min_rows),
            many_groups_on_gpu: on("TESSERA_EXP_MANY_GROUPS_ON_GPU", d.many_groups_on_gpu),
            narrow: on("TESSERA_EXP_NARROW", d.narrow),
            narrow_bits: num("TESSERA_EXP_NARROW_BITS").map_or(d.narrow_bits, |n: u64| n.min(64) as u32),
            narrow_runs: num("TESSERA_EXP_NARROW_RUNS").map_or(d.narrow_runs, |n: u64| n.min(2) as u32),
            packed: on("TESSERA_EXP_PACKED", d.packed),
            keep_results: on("TESSERA_EXP_KEEP_RESULTS", d.keep_results),
            short_lookups: on("TESSERA_EXP_SHORT_LOOKUPS", d.short_lookups),
            short_chain: on("TESSERA_EXP_SHORT_CHAIN", d.short_chain),
            gather_many: on("TESSERA_EXP_GATHER_MANY", d.gather_many),
            small_records_max_groups: num("TESSERA_EXP_SMALL_RECORDS_MAX").map_or(d.small_records_max_groups, |n: u64| n as usize),
            small_sort_max_groups: num("TESSERA_EXP_SMALL_SORT_MAX").map_or(d.small_sort_max_groups, |n: u64| n as usize),
            host_sort_max_groups: num("TESSERA_EXP_HOST_SORT_MAX_GROUPS").map_or(d.host_sort_max_groups, |n: u64| n as usize),
            query_fill: num("TESSERA_EXP_QUERY_FILL").map_or(d.query_fill, |n: u64| n.min(2) as u8),
            build_cache: on("TESSERA_EXP_BUILD_CACHE", d.build_cache),
            spare_sinks: on("TESSERA_EXP_SPARE_SINKS", d.spare_sinks),
            admission_builds: on("TESSERA_EXP_ADMISSION_BUILDS", d.admission_builds),
            plain_strings_max_rows: num("TESSERA_EXP_PLAIN_STRINGS_MAX").map_or(d.plain_strings_max_rows, |n: u64| n as usize),
            blocks_per_sm: num("TESSERA_EXP_BLOCKS_PER_SM").map_or(d.blocks_per_sm, |n: u64| n.min(64) as u32),
            kernel_graph: on("TESSERA_EXP_KERNEL_GRAPH", d.kernel_graph),
            lean_results: on("TESSERA_EXP_LEAN_RESULTS", d.lean_results),
            early_launch: on("TESSERA_EXP_EARLY_LAUNCH", d.early_launch),
            listed_chain: on("TESSERA_EXP_LISTED_CHAIN", d.listed_chain),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unset, the defaults; a boolean switch flips only on its own value ("0" for one on
    /// by default, "1" for one off by default); a number that does not parse is ignored.
    #[test]
    fn switches_read_as_their_docs_say() {
        let env = |pairs: &'static [(&'static str, &'static str)]| move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
        assert_eq!(ExecExperiments::read(env(&[])), ExecExperiments::default());
        let set = ExecExperiments::read(env(&[
            ("TESSERA_EXP_NARROW", "0"),
            ("TESSERA_EXP_PACKED", "1"),
            ("TESSERA_EXP_GATHER_MANY", "yes"),
            ("TESSERA_EXP_MANY_GROUPS_ON_GPU", "true"),
            ("TESSERA_EXP_SMALL_RECORDS_MAX", "0"),
            ("TESSERA_EXP_SMALL_SORT_MAX", "0"),
            ("TESSERA_EXP_GPU_MIN_ROWS", "many"),
            ("TESSERA_EXP_NARROW_BITS", "32"),
            ("TESSERA_EXP_QUERY_FILL", "0"),
            ("TESSERA_EXP_BUILD_CACHE", "0"),
            ("TESSERA_EXP_SPARE_SINKS", "0"),
            ("TESSERA_EXP_ADMISSION_BUILDS", "0"),
            ("TESSERA_EXP_PLAIN_STRINGS_MAX", "0"),
            ("TESSERA_EXP_KERNEL_GRAPH", "1"),
            ("TESSERA_EXP_LEAN_RESULTS", "0"),
            ("TESSERA_EXP_EARLY_LAUNCH", "0"),
            ("TESSERA_EXP_LISTED_CHAIN", "0"),
            ("TESSERA_EXP_NARROW_RUNS", "1"),
        ]));
        assert!(!set.narrow && set.packed && set.gather_many && !set.many_groups_on_gpu && set.query_fill == 0 && !set.build_cache && !set.spare_sinks && !set.admission_builds && set.kernel_graph && !set.lean_results && !set.early_launch && !set.listed_chain && set.narrow_runs == 1);
        assert_eq!((set.small_records_max_groups, set.small_sort_max_groups, set.gpu_min_rows, set.narrow_bits, set.plain_strings_max_rows), (0, 0, GPU_MIN_ROWS, 32, 0));
    }
}
