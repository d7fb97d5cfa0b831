//! How kernels are generated: the tile's shape, how literals reach a kernel, and the
//! experiment switches (read from the environment in one place, [`Experiments::from_env`]).

/// Threads per block (and the block the bit-packed columns' layout is laid out for:
/// `layout::BITS_GROUP_ROWS`).
pub const BLOCK_THREADS: u32 = 128;

/// Threads per block for pipelines with two or more probes whose tables stay in L2 and
/// whose grouped sums go to global arrays (`codegen::block_threads`): the same resident
/// warps an SM in a quarter of the blocks, each walking tiles four times as long.
///
/// A probe of SSB q3.1's shape over generated data read its keys 4–7% faster with 512 or
/// 1024 threads a block than with 128 at the same occupancy (`tessera bench probes`,
/// `gpu-2026-11-30b` run 5). Every generated kernel at 512 (run 6, H200, SSB SF 20 in
/// turns): q3.1's kernels 0.451 → 0.441 ms, q3.2's 0.342 → 0.289, q4.2's 0.470 → 0.439,
/// q4.3's 0.345 → 0.334, but q4.1's (a direct table in shared memory) 0.561 → 0.590, the
/// lean q1.x probes 2–4% slower and TPC-H SF 10's kernels 47.1 → 49.5 ms: hence the rule.
/// A kernel tile of 512 threads stays within two zones of the zone bitmap (at most 4 items
/// a thread: 2,048 rows); kernels reading packed columns keep 128, and those reading
/// bit-packed or run columns (laid out for [`BLOCK_THREADS`]) read each tile in parts of
/// 128 threads (`Experiments::compact_wide`). `TESSERA_EXP_WIDE_BLOCKS=0` keeps 128
/// everywhere.
pub const WIDE_BLOCK_THREADS: u32 = 512;

/// The fewest items a thread for which a column of runs keeps its directory words one a
/// lane (`Experiments::runs_lanes`). SSB SF 20 over compact columns on an H200
/// (2026-11-30e run 5, 3 rounds in turns): the lean q1.x probes (8 items, 72 registers
/// instead of 94) took 0.342 / 0.274 / 0.222 ms against 0.358 / 0.276 / 0.243 with the
/// pairs in every lane; the star joins (2 items: 4 registers held, against 1) did not
/// gain, and the shuffles cost q3.1 0.529 → 0.590 ms and q4.2 0.589 → 0.625.
pub const RUNS_LANES_MIN_ITEMS: u32 = 4;

/// Rows per thread per tile for pipelines with at most one probe (Crystal's 128 × 4 tile).
///
/// From sweeps of 1–4 items on an H200 (SSB SF 20): the one-probe scans ran fastest with
/// 4, every pipeline with two or more probes with 2 — each probe keeps a slot, a flag and
/// its payload per item alive from stage to stage, so more items cost registers, and with
/// them resident warps, faster than they add loads in flight. Re-measured with kernel
/// parameters in the constant bank and with whole tiles: still per pipeline
/// (`benchmarks/results/README.md`, "Items per thread").
pub const ITEMS_PER_THREAD: u32 = 4;

/// Rows per thread per tile for pipelines with two or more probes (see
/// [`ITEMS_PER_THREAD`]).
pub const ITEMS_PER_THREAD_MANY_PROBES: u32 = 2;

/// Rows per thread per tile for lean pipelines: at most one probe, which reads no build
/// column (a membership bit only), ending in one group (an aggregate without GROUP BY),
/// so an item holds little beyond its loaded values and more items fit the registers.
///
/// SSB q1.x's probes wait on their date bitmap's lookups (2026-11-27j run 13: a third of
/// q1.1's stalls on the bitmap word's test, 10 blocks an SM by registers); twice the
/// items keep twice those lookups in flight. On an H200 (2026-11-28 runs 1–2, EXPLAIN
/// ANALYZE of SSB SF 20): q1.1 0.341 → 0.280 ms, q1.2 0.246 → 0.229, q1.3 0.165 →
/// 0.146; TPC-H SF 10's kernels within 0.05 ms per query, except q19 (one probe reading
/// part's columns for its residual) 0.32 → 0.42 ms, which the rule's "reads no build
/// column" leaves out. 8 for every single-probe pipeline had made TPC-H's grouped scans
/// slower (q01 2.75 → 4.26 ms; 2026-11-27i runs 8–9).
pub const ITEMS_PER_THREAD_LEAN: u32 = 8;

/// The most items per thread a kernel may hold (their variables live in registers).
pub const MAX_ITEMS_PER_THREAD: u32 = 16;

/// The most rows a scan's kernel counts in 32-bit integers (`Experiments::index32`):
/// its tile loop then steps and compares rows with one instruction where 64 bits take
/// two or three, and holds them in one register instead of two. On the H200 (SSB SF 20,
/// 2026-11-28g run 2, 10 rounds in turns) the 13 queries' kernels took 4.25 against
/// 4.30 ms: q4.3's probe 0.430 → 0.350 ms (NVRTC's 48 registers a thread → 40), q4.2
/// 0.482 → 0.458, q2.1 0.397 → 0.390, but q3.2 0.316 → 0.354 (not for its occupancy:
/// `TESSERA_EXP_BLOCKS_PER_SM`, run 5) and the lean q1.x probes
/// slower (those keep 64 bits: `generate_with`); TPC-H SF 10's kernels about 0.2 ms
/// fewer (q15 0.62 → 0.52, q03 3.41 → 3.34; q09 6.99 → 7.13). The largest row a loop
/// computes is a tile past the last plus a grid's stride (at most `16 × 132 SMs × 2,048`
/// rows ≈ 4.3 M), so 2^30 leaves room below 2^31. Kernels over more rows, or over an
/// intermediate result (whose rows are only estimated), count in 64 bits; the executor
/// refuses to run a 32-bit kernel over more rows (`Kernel::rows_limit`).
pub const INDEX32_MAX_ROWS: u64 = 1 << 30;

/// How the query's literals reach a kernel.
///
/// Inlined literals let NVRTC fold them into compares and ranges, but every distinct
/// query text is a new kernel to compile (tens of ms, once per text thanks to the kernel
/// cache). As parameters, queries that differ only in their constants share one kernel;
/// each literal is read once per thread. Structural values — hash-table ranges, group
/// domains, type bounds — stay inlined in both modes. On an H200 the SSB kernels ran as
/// fast with parameters as inlined, while a new constant cost a ~70 ms compile inlined
/// and nothing as a parameter, so parameters are the default
/// (`benchmarks/results/README.md`, "Literals"). `SET tessera.kernel_literals =
/// 'parameters' | 'inline'`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Literals {
    /// Written into the source.
    Inline,
    /// Passed as kernel parameters (`Kernel::literals`).
    #[default]
    Parameters,
}

/// Switches for measuring alternatives on the device (`benchmarks/device/gpu-suite.sh`,
/// section `exp`); the defaults are what was measured best.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Experiments {
    /// `TESSERA_EXP_EAGER_SECTORS`: see [`super::scan::EAGER_MIN_SECTORS`].
    pub eager_min_sectors: f64,
    /// `TESSERA_EXP_DEFER_PASS`: see [`super::defer::DEFER_MAX_PASS`].
    pub defer_max_pass: f64,
    /// `TESSERA_EXP_PREFETCH=0` turns off loading the next tile's eager columns early
    /// (see `print.rs`).
    pub prefetch: bool,
    /// `TESSERA_EXP_WHOLE_TILES=0` runs every tile with per-item row tests (see
    /// `print.rs`).
    pub whole_tiles: bool,
    /// `TESSERA_EXP_STAGE_LATE=1` issues the next tile's staged copies of packed columns
    /// after this tile's values are decoded instead of before (see `print.rs`).
    pub stage_late: bool,
    /// `TESSERA_EXP_ZONES=0` generates kernels without the zone bitmap
    /// ([`super::Param::Zones`]): no tile is skipped.
    pub zones: bool,
    /// `TESSERA_EXP_CMP32=0` compares 32-bit values widened to 64 bits, as before
    /// comparisons of two 32-bit values were made in 32 bits (`filter.rs`).
    pub compares_32: bool,
    /// `TESSERA_EXP_MIN_BLOCKS=N` asks NVRTC for at least N resident blocks an SM
    /// (`__launch_bounds__`' second argument, which caps registers a thread at 65 536 /
    /// (N × 128)); 0, the default, leaves registers to the compiler (64 a thread: 8
    /// blocks, half of the SM's warps, in SSB's probe kernels).
    pub min_blocks: u32,
    /// `TESSERA_EXP_PACKED_ITEMS=N`: items per thread of every pipeline with two or more
    /// probes that reads packed columns (0, the default: 4 where its tables stay in L2,
    /// else 2; see `codegen::L2_RESIDENT_TABLE_BYTES`).
    pub packed_items: u32,
    /// Narrowed 1- and 2-byte columns a kernel reads up front are loaded a word a lane
    /// and their values handed out by warp shuffles (`tessera_word_pick`, `tiles.cuh`);
    /// `TESSERA_EXP_NARROW_WORDS=0` loads them one narrow load an item, as before. A
    /// byte load moves 32 bytes a warp: on the H200 the narrowed kernels were
    /// latency-bound at half of DRAM's bandwidth, and SSB q1.1's probe took 398 µs
    /// against 343 µs with words (444 µs plain); TPC-H SF 10's kernels 61.5-61.8 ms
    /// against 42.4-42.6 (2026-11-27h runs 1-2).
    pub narrow_words: bool,
    /// Far more selective probes are tested before the pipeline's filters
    /// (`probe::early`); `TESSERA_EXP_EARLY_PROBES=0` tests them after, in plan order.
    pub early_probes: bool,
    /// A warp none of whose items is still selected skips a tile's remaining stages
    /// where that is likely (`print::warp_skips`); `TESSERA_EXP_WARP_SKIP=0` runs every
    /// stage's per-item tests, as before.
    pub warp_skip: bool,
    /// `TESSERA_EXP_SEL_BOOL=1` declares a tile's selection flags `bool`, as before
    /// (`print::sel_decl`: `int` by default).
    pub sel_bool: bool,
    /// Items a thread for pipelines with at most one probe (0: [`ITEMS_PER_THREAD`]);
    /// `TESSERA_EXP_SINGLE_ITEMS=N`. 8 made SSB SF 20's kernels 4.85 → 4.77–4.83 ms on
    /// an H200 (q1.1 0.34 → 0.28 in EXPLAIN ANALYZE) but TPC-H SF 10's 41.8 → 48.2 (q01
    /// 2.75 → 4.26, q20 0.60 → 1.10; 2026-11-27i runs 8–9): the default stays 4.
    pub single_items: u32,
    /// `TESSERA_EXP_COLUMN_LOADS=N` reads the scanned columns with a cache policy
    /// (`tessera_col` in `tiles.cuh`): 1 streaming (`ld.global.cs`), 2 not allocated in
    /// L1, 3 evicted from L1 first; 0, the default, as plain loads. A column is read
    /// once, while the probes' bitmaps and payloads it looks up are read again and
    /// again: SSB q1.1's and q3.1's probes wait on those lookups (2026-11-27j run 13,
    /// L1 hit rates 28% and 74%).
    pub column_loads: u32,
    /// `TESSERA_EXP_LEAN_ITEMS=N`: items a thread for lean pipelines (see
    /// [`ITEMS_PER_THREAD_LEAN`], the default); 0 gives them the single-probe
    /// pipelines' items, as before.
    pub lean_items: u32,
    /// Tiles and rows counted in 32-bit integers in kernels over a table of at most
    /// [`INDEX32_MAX_ROWS`] rows (`print.rs`); `TESSERA_EXP_INDEX32=0` counts them in 64
    /// bits everywhere, as before.
    pub index32: bool,
    /// `TESSERA_EXP_DIRECT_MAX_BYTES=N`: the most shared memory a block's direct group
    /// table may take (its slots × copies × bytes a slot): fewer copies of a small domain's
    /// table, and a larger domain aggregates with global atomics. 0, the default, leaves
    /// [`super::SHARED_AGG_BYTES`]. To
    /// measure whether a direct table (and the warp queue it brings) costs a probe
    /// pipeline the L1 its bitmaps need: SSB q3.1 grouped by `c_nation, s_nation` (625
    /// slots, 7.5 KiB) took 0.92 ms against 0.47 grouped by 150 slots (2026-11-28h).
    pub direct_max_bytes: u32,
    /// `TESSERA_EXP_DIRECT_DOMAIN_BYTES=N`: the most shared memory a direct table of a
    /// domain of 32 slots or more may take; 0, the default, leaves
    /// [`super::DIRECT_DOMAIN_MAX_BYTES`] (16384 gives the rule before it: the whole
    /// [`super::SHARED_AGG_BYTES`]).
    pub direct_domain_bytes: u32,
    /// `TESSERA_EXP_WARP_COMBINE=1`: a grouped aggregation's lanes that add into the same
    /// group (`__match_any_sync`) combine their values in registers, and one of them adds
    /// the total with one atomic (`aggregate::combined`). For groupings with few groups
    /// present, whose atomics land on a few hot addresses: on an H200 (2026-11-28i, SSB
    /// SF 20) q3.1's joins grouped by `c_nation, s_nation` (25 of 625 direct slots
    /// present) 0.90 → 0.50–0.52 ms, but q3.1 0.49 → 0.55 and the 13 SSB probes 2.6%
    /// slower in total (the match costs where lanes rarely share a group). Off until the
    /// planner estimates the groups present.
    pub warp_combine: bool,
    /// `TESSERA_EXP_GLOBAL_COPIES=N`: copies of a grouped aggregation's global arrays
    /// that blocks add into (block `b` into copy `b % N`, N a power of two), folded into
    /// the first by one launch after the kernel, for every aggregation that can take
    /// them (`aggregate::global_copies`); 1 none; 0, the default, where its rule says.
    pub global_copies: u32,
    /// Global arrays in copies leave the seen flags to the fold where an accumulator shows
    /// the groups present (`aggregate::presence`); `TESSERA_EXP_PRESENCE=0` marks them
    /// row by row, as before (SSB q3.1's kernels 0.449–0.453 ms against 0.469–0.475 on an
    /// H200, `gpu-2026-11-29e` run 1).
    pub presence: bool,
    /// Blocks of [`WIDE_BLOCK_THREADS`] where `codegen::block_threads` says;
    /// `TESSERA_EXP_WIDE_BLOCKS=0` keeps [`BLOCK_THREADS`] for every kernel, as before.
    pub wide_blocks: bool,
    /// `TESSERA_EXP_CARRY=1`: a whole tile's last stage runs in the next tile's
    /// iteration where it may (`print::carried`). On an H200 (SSB SF 20,
    /// `gpu-2026-11-29e` run 4, 8 rounds in turns) q3.2's kernels took 0.344 → 0.296 ms,
    /// but q2.1's 0.393 → 0.819, q3.3's, q3.4's, q4.2's and q4.3's 3–6% longer and q3.1's
    /// the same: off until a rule tells those apart.
    pub carry: bool,
    /// A kernel summing into global group arrays runs its last stage (the group number
    /// and the atomics) in the stage before it, item by item after that item's payload
    /// and late-column loads, instead of after every item's loads
    /// (`codegen::merge_last_stage`): the items' loaded payloads are then not all live at
    /// once, and SSB q3.1's probe takes 32 registers instead of 39–40, 93% of the warps
    /// active instead of 70%. On an H200 (`gpu-2026-11-30c` run 9, SSB SF 20, 15 warm
    /// runs x 4 rounds in turns) q3.2's kernels 0.286 → 0.262 ms, q4.2's 0.436 → 0.414,
    /// q4.3's 0.332 → 0.307, q3.1's 0.437 → 0.432, q2.1's 0.394 → 0.400; TPC-H SF 10's
    /// 47.06–47.16 → 46.71–46.80 ms. `TESSERA_EXP_MERGE_SINK=0` keeps the stages apart.
    pub merge_sink: bool,
    /// Hash tables built on the GPU keep payload columns of at least this many bits
    /// whose values lie in a known range (dictionary codes, or a range the statistics
    /// know) as 1-, 2- or 4-byte distances from its start (`build::payload_form`): 64,
    /// the default, 64-bit ones only; 32 every one; 0 none, as before
    /// (`TESSERA_EXP_NARROW_PAYLOADS=N`). On an H200 (2026-11-29f runs 1–3) narrowing
    /// every payload made TPC-H SF 10's kernels 49.0 → 46.9 ms, but SSB's 32-bit payloads
    /// gained nothing (q3.1's probe 0.449 ms either way) and cost q2.1 a fifth (0.391 →
    /// 0.473 ms). Its probe then compiles to 32 registers instead of 40 and misses more in
    /// L1 (Nsight Compute: 451 µs against 372), but neither its occupancy (a grid of 12
    /// blocks an SM, as at 40 registers: 0.50 ms) nor where its arrays land (the narrow
    /// arrays padded to their width's bytes: 0.50 ms) brings it back (runs 6–8); the cause
    /// is in the compiled code, not yet found.
    pub narrow_payloads: u32,
    /// A column of runs loaded up front by a kernel of at least [`RUNS_LANES_MIN_ITEMS`]
    /// items a thread keeps a warp's directory words for a tile one word a lane
    /// (`tessera_runs_dir_lane`), each item's pair shuffled out where its values are
    /// read, instead of every lane holding every item's pair (2 registers an item: 16 of
    /// SSB q1.1's 94 over compact columns). `TESSERA_EXP_RUNS_LANES=0` keeps the pairs in
    /// every lane, as before.
    pub runs_lanes: bool,
    /// A column of runs loaded up front keeps the next tile's distances in its registers,
    /// the reference added where the tile takes them (`print.rs`), so the sum does not
    /// wait for the loads. `TESSERA_EXP_RUNS_DISTANCES=0` adds it as they are read, as
    /// before.
    pub runs_distances: bool,
    /// Kernels reading bit-packed columns or columns of runs may take wide blocks
    /// (`codegen::block_threads`), each group of [`BLOCK_THREADS`] threads reading its
    /// part of a tile as a block of that many would (`tessera_part`). SSB SF 20 over
    /// compact columns on an H200 (2026-11-30e run 6, 3 rounds in turns): q3.1's kernels
    /// 0.581 → 0.536 ms and q4.2's 0.595 → 0.578, but q3.2's 0.367 → 0.379 and q4.3's
    /// 0.361 → 0.389; the 13 queries' 4.949 → 4.912 ms. `TESSERA_EXP_COMPACT_WIDE=0` keeps
    /// them at [`BLOCK_THREADS`], as before.
    pub compact_wide: bool,
    /// A stage ends before a row-at-a-time load of a column of runs that the rejections
    /// before it make likely to find a warp's rows all dropped, so the warp votes and
    /// skips its decoding (`passes::cut_before_compact_loads`);
    /// `TESSERA_EXP_COMPACT_CUTS=0` leaves the load in its stage, as before.
    pub compact_cuts: bool,
    /// In a kernel over `int` rows (`index32`) an item's row is an `int` in the stages
    /// too, so a row of a compact column read alone is found in 32 bits
    /// (`tessera_bits_get`, `tessera_runs_get`: SSB q4.2's compact probe spent about 25
    /// instructions a bit-packed row in 64, 17 in 32). SSB SF 100 over compact columns
    /// on an H200: q2.2 1.336 → 1.262 ms, q3.3 and q3.4 1.216 → 1.14; SF 20 unchanged
    /// (2026-11-30i runs 1–2). Not in the lean kernels, which count in 64 bits: there it
    /// made SSB q1.3's compact probe slower (0.218 → 0.231 ms at SF 20, run 4), its
    /// cheaper late reads predicated for every item. `TESSERA_EXP_INT_ROWS=0` keeps
    /// `long long` rows and turns `stream_steps` off too, as before.
    pub int_rows: bool,
    /// Over a table of at most [`INDEX32_MAX_ROWS`] rows (with `int_rows`), compact
    /// columns loaded up front find their next tile's words from a count of the tile's
    /// value of their streams (`kq`, advanced a grid's stride a tile) instead of from the
    /// tile. SSB over compact columns on an H200, with `int_rows`: SF 20's kernels
    /// 4.613 → 4.516 ms (q3.2 0.352 → 0.322), SF 100's 21.25 → 21.23 (2026-11-30i runs
    /// 1–2). `TESSERA_EXP_STREAM_STEPS=0` finds them from the tile, as before.
    pub stream_steps: bool,
    /// With `compact_cuts`, a kernel of at least [`ITEMS_PER_THREAD_LEAN`] items a thread
    /// also ends a stage before a bit-packed row read alone after selective tests, so a
    /// warp with no row left skips it (SSB q1.3's compact probe read its discounts
    /// predicated for every item, about 25 instructions each): on an H200 its kernels
    /// 0.209 → 0.203 ms at SF 20 and 0.933 → 0.899 at SF 100, no other SSB query's
    /// kernel changed (2026-11-30i run 5). Kernels of fewer items keep bit-packed loads
    /// in their stage (see `codegen::assemble`). `TESSERA_EXP_LEAN_BIT_CUTS=0` leaves
    /// them in their stage, as before.
    pub lean_bit_cuts: bool,
    /// A kernel skipping tiles by a zone bitmap tests each tile's zone once, a tile ahead,
    /// and carries the answer to the iteration that runs the tile (`zt`, `zn`, and `zu`
    /// for the tile after next where it loads a column of runs: `print.rs`). Before, SSB
    /// q1.1's probe tested the tile, the next and the one after, four times an iteration
    /// over compact columns, three over narrowed ones (its loop 649 → 529 SASS
    /// instructions compact). On an H200 (2026-12-01 runs 1–2), SSB SF 100: q1.1 1.348 →
    /// 1.290 ms byte-narrowed and 1.624 → 1.534 compact, q1.2 compact 1.192 → 1.147, q1.3
    /// compact 0.897 → 0.873, q1.2 byte-narrowed 0.966 → 0.984; SF 20 within the rounds'
    /// spread. `TESSERA_EXP_ZONE_CARRY=0` tests them where they are used, as before.
    pub zone_carry: bool,
    /// With `zone_carry`, a tile lying in one zone (its rows dividing 2048) has one bit
    /// read instead of its first and last rows' (`tessera_zone_pass`' `ONE`;
    /// `TESSERA_EXP_ZONE_ONE=1`). Off: on an H200 it made SSB q1.3's byte-narrowed probe,
    /// whose source is otherwise the same, 0.149 → 0.167 ms at SF 20 and 0.631 → 0.708
    /// at SF 100 (ptxas issued two of its eight date loads after the first bitmap probe),
    /// and gained nothing elsewhere beyond the rounds' spread (2026-12-01 run 2).
    pub zone_one: bool,
    /// A scalar aggregation's rows that pass its first selective row test finish in full
    /// warps (`defer::plan`'s scalar case): the probes and columns after it run on a warp
    /// queue, one row a lane. `TESSERA_EXP_SCALAR_QUEUE=0` runs them in place, as before.
    pub scalar_queue: bool,
    /// A grouped aggregation's rows queue the same way, after its first selective row
    /// test, where `defer::early_split` allows it (a shared direct table, or compact
    /// columns read after the test and few queued rows reaching the global arrays);
    /// `TESSERA_EXP_GROUPED_QUEUE=0` queues them (into a shared direct table only) after
    /// the last test, as before.
    pub grouped_queue: bool,
    /// Entries each lane takes from a scalar aggregation's warp queue in a drain
    /// ([`super::defer::Deferral::drain`]), their loads in flight together, where the
    /// drained stages read no compact column (those take one: `defer::plan_early`);
    /// `TESSERA_EXP_DRAIN_ITEMS`.
    pub drain_items: u32,
    /// The same where the drained stages read a compact column at the row
    /// (`TESSERA_EXP_COMPACT_DRAIN_ITEMS`; see `defer::plan_early`). One: with two, the
    /// grouped SSB probes queued over compact columns took 48 registers instead of 32
    /// and were slower (SF 20 q4.2 0.445 → 0.581 ms, q4.1 0.516 → 0.606, q3.2 0.278 →
    /// 0.320; H200, 2026-12-01c run 6), as the scalar q1.1's was (2026-12-01b run 3).
    pub compact_drain_items: u32,
    /// A warp queue holds its rows' numbers as `int`s where the scanned table's rows fit
    /// 32 bits ([`super::defer::Deferral::row32`]), so the drained stages read compact
    /// columns at the row in 32 bits, as `int_rows` kernels' stages do. On an H200
    /// (2026-12-01d run 2, in turns): SSB SF 100's compact kernels 20.12 → 19.84 ms
    /// (q1.1 1.248 → 1.167, q3.2 1.377 → 1.276, q4.2 2.354 → 2.268; q1.2 0.892 → 0.926),
    /// SF 20's 4.043 → 4.011; byte-narrowed SF 100 18.92 → 18.81 ms (q1.2 0.846 → 0.790,
    /// q1.1 1.274 → 1.308), SF 20 the same, TPC-H SF 10 the same (45.03 against 45.04).
    /// `TESSERA_EXP_QUEUE_ROWS32=0` queues `long long` rows, as before.
    pub queue_rows32: bool,
    /// A warp queue taking at most this estimated share of the rows keeps its drain loop
    /// (`while (tq_n >= 32)`) marked `#pragma unroll 1` (`defer::ROLLED_DRAIN_MAX_SHARE`;
    /// 0: none). `TESSERA_EXP_ROLLED_DRAIN_MAX=S`; `TESSERA_EXP_DRAIN_ROLLED=1` rolls every
    /// drain loop (infinity). Every drain rolled, on an H200 (2026-12-01d run 4): SSB
    /// q1.1's compact probe, whose queue drains often (13% of the rows), slower (SF 100
    /// 1.171 → 1.393 ms) and q1.2's, whose queue seldom drains, faster (0.931 → 0.875);
    /// SF 100's compact kernels 20.03 → 20.28 ms in all.
    pub rolled_drain_max: f64,
    /// What a membership test over a bitmap read from L2 costs against one over a bitmap
    /// in L1, in the order hoisted tests run (`probe::L2_BITMAP_COST`); 1 orders them by
    /// selectivity alone. `TESSERA_EXP_BITMAP_COST=N`.
    pub bitmap_cost: u32,
}

/// Entries each lane takes from a scalar aggregation's warp queue in a drain (see
/// `Experiments::drain_items`). One a lane leaves each drain a chain of dependent loads
/// (the row's columns, then the probe's bit) with nothing else in flight.
pub const DRAIN_ITEMS: u32 = 2;

impl Default for Experiments {
    fn default() -> Self {
        Experiments { eager_min_sectors: super::scan::EAGER_MIN_SECTORS, defer_max_pass: super::defer::DEFER_MAX_PASS, prefetch: true, whole_tiles: true, stage_late: false, zones: true, compares_32: true, min_blocks: 0, packed_items: 0, narrow_words: true, early_probes: true, warp_skip: true, sel_bool: false, single_items: 0, column_loads: 0, lean_items: ITEMS_PER_THREAD_LEAN, index32: true, direct_max_bytes: 0, direct_domain_bytes: 0, warp_combine: false, global_copies: 0, presence: true, carry: false, merge_sink: true, narrow_payloads: 64, wide_blocks: true, runs_lanes: true, runs_distances: true, compact_wide: true, compact_cuts: true, int_rows: true, stream_steps: true, lean_bit_cuts: true, zone_carry: true, zone_one: false, scalar_queue: true, grouped_queue: true, drain_items: DRAIN_ITEMS, compact_drain_items: 1, queue_rows32: true, rolled_drain_max: super::defer::ROLLED_DRAIN_MAX_SHARE, bitmap_cost: super::probe::L2_BITMAP_COST }
    }
}

impl Experiments {
    /// The defaults, overridden by the `TESSERA_EXP_*` variables that are set: the one
    /// place they are read, once a process (a session sets its kernel options on every
    /// statement; reading the 14 variables each time took microseconds of each query).
    pub fn from_env() -> Self {
        static READ: std::sync::OnceLock<Experiments> = std::sync::OnceLock::new();
        *READ.get_or_init(Self::read_env)
    }

    fn read_env() -> Self {
        let var = |name: &str| std::env::var(name).ok();
        let d = Experiments::default();
        Experiments {
            eager_min_sectors: var("TESSERA_EXP_EAGER_SECTORS").and_then(|v| v.parse().ok()).unwrap_or(d.eager_min_sectors),
            defer_max_pass: var("TESSERA_EXP_DEFER_PASS").and_then(|v| v.parse().ok()).unwrap_or(d.defer_max_pass),
            prefetch: var("TESSERA_EXP_PREFETCH").map_or(d.prefetch, |v| v != "0"),
            whole_tiles: var("TESSERA_EXP_WHOLE_TILES").map_or(d.whole_tiles, |v| v != "0"),
            stage_late: var("TESSERA_EXP_STAGE_LATE").map_or(d.stage_late, |v| v == "1"),
            zones: var("TESSERA_EXP_ZONES").map_or(d.zones, |v| v != "0"),
            compares_32: var("TESSERA_EXP_CMP32").map_or(d.compares_32, |v| v != "0"),
            min_blocks: var("TESSERA_EXP_MIN_BLOCKS").and_then(|v| v.parse().ok()).unwrap_or(d.min_blocks),
            packed_items: var("TESSERA_EXP_PACKED_ITEMS").and_then(|v| v.parse().ok()).unwrap_or(d.packed_items),
            narrow_words: var("TESSERA_EXP_NARROW_WORDS").map_or(d.narrow_words, |v| v != "0"),
            early_probes: var("TESSERA_EXP_EARLY_PROBES").map_or(d.early_probes, |v| v != "0"),
            warp_skip: var("TESSERA_EXP_WARP_SKIP").map_or(d.warp_skip, |v| v != "0"),
            sel_bool: var("TESSERA_EXP_SEL_BOOL").map_or(d.sel_bool, |v| v == "1"),
            single_items: var("TESSERA_EXP_SINGLE_ITEMS").and_then(|v| v.parse().ok()).unwrap_or(d.single_items),
            lean_items: var("TESSERA_EXP_LEAN_ITEMS").and_then(|v| v.parse().ok()).unwrap_or(d.lean_items),
            index32: var("TESSERA_EXP_INDEX32").map_or(d.index32, |v| v != "0"),
            direct_max_bytes: var("TESSERA_EXP_DIRECT_MAX_BYTES").and_then(|v| v.parse().ok()).unwrap_or(d.direct_max_bytes),
            direct_domain_bytes: var("TESSERA_EXP_DIRECT_DOMAIN_BYTES").and_then(|v| v.parse().ok()).unwrap_or(d.direct_domain_bytes),
            warp_combine: var("TESSERA_EXP_WARP_COMBINE").map_or(d.warp_combine, |v| v == "1"),
            global_copies: var("TESSERA_EXP_GLOBAL_COPIES").and_then(|v| v.parse().ok()).unwrap_or(d.global_copies),
            presence: var("TESSERA_EXP_PRESENCE").map_or(d.presence, |v| v != "0"),
            carry: var("TESSERA_EXP_CARRY").map_or(d.carry, |v| v == "1"),
            merge_sink: var("TESSERA_EXP_MERGE_SINK").map_or(d.merge_sink, |v| v != "0"),
            wide_blocks: var("TESSERA_EXP_WIDE_BLOCKS").map_or(d.wide_blocks, |v| v != "0"),
            narrow_payloads: var("TESSERA_EXP_NARROW_PAYLOADS").and_then(|v| v.parse().ok()).unwrap_or(d.narrow_payloads),
            runs_lanes: var("TESSERA_EXP_RUNS_LANES").map_or(d.runs_lanes, |v| v != "0"),
            runs_distances: var("TESSERA_EXP_RUNS_DISTANCES").map_or(d.runs_distances, |v| v != "0"),
            compact_wide: var("TESSERA_EXP_COMPACT_WIDE").map_or(d.compact_wide, |v| v != "0"),
            compact_cuts: var("TESSERA_EXP_COMPACT_CUTS").map_or(d.compact_cuts, |v| v != "0"),
            int_rows: var("TESSERA_EXP_INT_ROWS").map_or(d.int_rows, |v| v != "0"),
            stream_steps: var("TESSERA_EXP_STREAM_STEPS").map_or(d.stream_steps, |v| v != "0"),
            lean_bit_cuts: var("TESSERA_EXP_LEAN_BIT_CUTS").map_or(d.lean_bit_cuts, |v| v != "0"),
            zone_carry: var("TESSERA_EXP_ZONE_CARRY").map_or(d.zone_carry, |v| v != "0"),
            zone_one: var("TESSERA_EXP_ZONE_ONE").map_or(d.zone_one, |v| v == "1"),
            scalar_queue: var("TESSERA_EXP_SCALAR_QUEUE").map_or(d.scalar_queue, |v| v != "0"),
            grouped_queue: var("TESSERA_EXP_GROUPED_QUEUE").map_or(d.grouped_queue, |v| v != "0"),
            drain_items: var("TESSERA_EXP_DRAIN_ITEMS").and_then(|v| v.parse().ok()).filter(|&n| (1..=8).contains(&n)).unwrap_or(d.drain_items),
            compact_drain_items: var("TESSERA_EXP_COMPACT_DRAIN_ITEMS").and_then(|v| v.parse().ok()).filter(|&n| (1..=8).contains(&n)).unwrap_or(d.compact_drain_items),
            queue_rows32: var("TESSERA_EXP_QUEUE_ROWS32").map_or(d.queue_rows32, |v| v != "0"),
            rolled_drain_max: if var("TESSERA_EXP_DRAIN_ROLLED").is_some_and(|v| v != "0") {
                f64::INFINITY
            } else {
                var("TESSERA_EXP_ROLLED_DRAIN_MAX").and_then(|v| v.parse().ok()).filter(|s: &f64| (0.0..=1.0).contains(s)).unwrap_or(d.rolled_drain_max)
            },
            bitmap_cost: var("TESSERA_EXP_BITMAP_COST").and_then(|v| v.parse().ok()).filter(|&n| (1..=64).contains(&n)).unwrap_or(d.bitmap_cost),
            column_loads: var("TESSERA_EXP_COLUMN_LOADS").and_then(|v| v.parse().ok()).filter(|&n| n <= 3).unwrap_or(d.column_loads),
        }
    }
}

/// How kernels are generated (`tessera.kernel_literals`, `tessera.gpu_items_per_thread`,
/// and the experiment switches).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelOptions {
    /// How literals reach the kernel.
    pub literals: Literals,
    /// Rows each thread holds per tile: how many loads it keeps in flight at once. None
    /// chooses per pipeline ([`ITEMS_PER_THREAD`], [`ITEMS_PER_THREAD_MANY_PROBES`]).
    pub items_per_thread: Option<u32>,
    /// The experiment switches.
    pub experiments: Experiments,
}

impl Default for KernelOptions {
    /// Literals as parameters, items per thread per pipeline, and the experiment
    /// switches from the environment ([`Experiments::from_env`]).
    fn default() -> Self {
        KernelOptions { literals: Literals::default(), items_per_thread: None, experiments: Experiments::from_env() }
    }
}
