//! The printer: the kernel IR as CUDA C++, once, at the end.
//!
//! Blocks walk tiles grid-stride (the launch sizes the grid to one wave of resident
//! blocks, so per-block setup and merges happen once per block). Each thread holds
//! `ITEMS` rows of a tile, striped (item `i` of thread `t` is row `tile + t + i × T`,
//! `T` the block's threads, `Shape::threads`, so a warp's loads are coalesced), with a
//! selection flag each; every stage is one unrolled loop over the items still selected.
//!
//! Over a stored table of at most 2^30 rows, tiles and rows are `int`s (`Shape::index32`).
//!
//! Whole tiles run in a loop of their own without per-item row tests: every flag starts
//! `true`, the tests fold away and the first stage needs no branch; the partial last
//! tile runs in a copy of the body after it. On an H200 this made the 13 SSB SF 20
//! kernels 7.52 → 6.45 ms (`benchmarks/results/README.md`, "Whole tiles").
//!
//! With columns loaded up front, their loads for the next tile are issued into `n…`
//! registers before the current tile's later stages run, so their latency overlaps the
//! probes' chain (software pipelining over tiles; a deeper ring in shared memory with
//! `cp.async` was measured slower, same section of the results README). Packed columns
//! loaded up front are instead staged in shared memory a tile ahead and decoded there
//! ([`staged`], `tiles.cuh`). Narrowed 1- and 2-byte columns loaded up front go into
//! registers as words, a word a lane covering C rows of a warp, and each item's value is
//! taken from its lane's word by a shuffle ([`words_of`]): a warp's byte loads moved 32
//! bytes each, too few in flight. Bit-packed ones (`Narrow::Bits`, lane-interleaved) go
//! into registers as the words of the thread's own stream holding its items, and each
//! item's value is taken out of one or two of them by constant shifts ([`bit_words_of`]).
//!
//! A kernel with a zone bitmap ([`Param::Zones`]) runs no stage of a tile the bitmap
//! rules out, and issues no eager load for it. It tests the tile around the stages and
//! leaves the flags alone: flags starting `false` in ruled-out tiles kept whole tiles'
//! tests from folding away (TPC-H SF 10 q12 3.87 → 4.25 ms, q20 2.54 → 3.19 on the
//! H200, 2026-11-26f run 4). Each tile's zone is tested once, a tile ahead where its
//! columns are loaded, and carried (`Shape::zone_carry`).

use std::collections::BTreeSet;
use std::fmt::Write;

use super::abi::{KERNEL_NAME, Param};
use super::defer::{Deferral, Expansion};
use super::ir::{CExpr, KernelIr, Load, Piece, Scope, Stage, Stmt};
use super::layout::{GpuColumn, Narrow, bit_loads};
use super::options::BLOCK_THREADS;

/// Which items of a tile are still selected: `int`, not `bool`. NVRTC keeps an unrolled
/// `bool` array as bytes and moves each in and out with a byte permute (PRMT) at every
/// test and update: 18.6% of the warp instructions SSB q1.3's probe kernel executed on
/// the H200 (2026-11-27i run 2). As `int` the whole-tile loops of SSB SF 20's probe
/// kernels have 2–21% fewer SASS instructions where they change (12 of the 34 kernels
/// of SF 20; a q2.x probe 155 → 122, q1.3's 443 → 414).
/// (`TESSERA_EXP_SEL_BOOL=1` declares it `bool` in the tile loops, as before, to
/// compare; a warp queue's drain, one item a lane, keeps `int`.)
fn sel_decl(shape: &Shape<'_>) -> &'static str {
    if shape.sel_bool { "bool sel[ITEMS];" } else { "int sel[ITEMS];" }
}

/// What the printer needs besides the IR.
pub struct Shape<'a> {
    /// The pipeline's id (a comment in the source).
    pub pipeline: usize,
    /// The kernel's parameters.
    pub params: &'a [Param],
    /// The source columns.
    pub cols: &'a [GpuColumn],
    /// Items per thread.
    pub items: u32,
    /// Whether the first stage (the eager loads) is prefetched a tile ahead.
    pub prefetch: bool,
    /// Whether whole tiles run without row tests.
    pub whole_tiles: bool,
    /// Whether the next tile's staged copies are issued after this tile's values are
    /// decoded, not before (`TESSERA_EXP_STAGE_LATE`).
    pub stage_late: bool,
    /// Whether tiles are skipped by the zone bitmap ([`Param::Zones`]): a skipped tile
    /// runs no stage, and the eager loads for it are not issued.
    pub zones: bool,
    /// With `zones`, whether each tile's zone is tested once and carried
    /// (`Experiments::zone_carry`; see `kernel`).
    pub zone_carry: bool,
    /// Whether a tile lying in one zone has one bit read (`Experiments::zone_one`).
    pub zone_one: bool,
    /// Resident blocks an SM the kernel asks registers to allow (0: no minimum;
    /// `TESSERA_EXP_MIN_BLOCKS`).
    pub min_blocks: u32,
    /// Whether narrowed 1- and 2-byte columns loaded up front are loaded a word a lane
    /// (`Experiments::narrow_words`, see [`words_of`]).
    pub narrow_words: bool,
    /// Whether a warp with no item left selected skips a tile's remaining stages where
    /// that is likely (`Experiments::warp_skip`, see `warp_skips`).
    pub warp_skip: bool,
    /// `Experiments::sel_bool` (see `sel_decl`).
    pub sel_bool: bool,
    /// `Experiments::column_loads`: 0, or the cache policy of the column loads
    /// (`TESSERA_COLUMN_LOADS`, defined before the header is included).
    pub column_loads: u32,
    /// Whether tiles and rows are counted in 32 bits (`int` tiles and rows, compared
    /// with `nrows`; see `options::INDEX32_MAX_ROWS`). Signed, not `unsigned`: an `int`
    /// cannot wrap, so NVRTC folds item `i`'s offset into its loads' addresses, where
    /// `unsigned` rows made SSB q1.3's probe loop 558 → 672 SASS instructions and its
    /// kernel 0.140 → 0.185 ms on the H200 (2026-11-28g run 1).
    pub index32: bool,
    /// Whether, over `int` rows, each row's number `r` in the stages is an `int` too
    /// (`Experiments::int_rows`); else a `long long` (the same value).
    pub int_rows: bool,
    /// Whether compact columns loaded up front find their words from the count of the
    /// tile's value of their streams (`Experiments::stream_steps`): over a table of at
    /// most `options::INDEX32_MAX_ROWS` rows, whether or not its rows are `int`s.
    pub stream_steps: bool,
    /// Whether a column of runs loaded up front keeps a warp's directory words one word
    /// a lane (`Experiments::runs_lanes`): set where the kernel has from
    /// `options::RUNS_LANES_MIN_ITEMS` to 16 items a thread (2 words an item, 32 lanes).
    pub runs_lanes: bool,
    /// Whether a column of runs loaded up front keeps distances in its registers, the
    /// reference added where a tile takes them (`Experiments::runs_distances`).
    pub runs_distances: bool,
    /// A warp queue taking at most this share of the rows keeps its drain loop rolled
    /// (`Experiments::rolled_drain_max`).
    pub rolled_drain_max: f64,
    /// Whether the kernel, of more than `BLOCK_THREADS` threads a block, splits each tile
    /// among its groups of `BLOCK_THREADS` (`tessera_part`): set where such a kernel
    /// reads a bit-packed column or one of runs, which are laid out for such groups.
    pub parts: bool,
    /// Threads a block: [`BLOCK_THREADS`], or `options::WIDE_BLOCK_THREADS` where
    /// `codegen::block_threads` says (with bit-packed or run columns, whose layout is laid
    /// out for [`BLOCK_THREADS`], read in parts: see `parts`).
    pub threads: u32,
    /// Whether a whole tile's last stage may run in the next tile's iteration
    /// (`Experiments::carry`, see [`carried`]).
    pub carry: bool,
}

/// The values a whole tile's last stage reads from the stage before it, when that stage
/// may run one iteration late (`Experiments::carry`): tile `t`'s last stage then runs in
/// iteration `t + 1`, after the stages before the last two of tile `t + 1` and before
/// its second-to-last, which overwrites the values it carries. The loads that stage
/// issues for the few rows still selected (a late column, the payloads a group key
/// needs) are then read an iteration later, their latency spent on the next tile's
/// lookups instead of waited out (software pipelining over tiles, as the eager loads
/// are; SSB q3.1 reads `lo_revenue` for 3% of its rows).
///
/// Only where the last stage reads nothing of earlier stages but that stage's values,
/// no row number, and the stage before it loads a column; None otherwise.
pub fn carried(ir: &KernelIr, stages: &[Stage]) -> Option<Vec<super::ir::ValueId>> {
    let [.., prev, last] = stages else { return None };
    let defined = |st: &Stage| -> Vec<super::ir::ValueId> {
        st.iter().filter_map(|s| match s { Stmt::Def { value, .. } => Some(*value), _ => None }).collect()
    };
    let (in_prev, in_last) = (defined(prev), defined(last));
    let loads_column = prev.iter().any(|s| matches!(s, Stmt::Def { load: Some(Load::Column { .. }), .. }));
    if !loads_column || last.iter().any(|s| s.uses(super::ir::Use::Row) || matches!(s, Stmt::Expand { .. })) {
        return None;
    }
    let mut read = Vec::new();
    let mut foreign = false;
    for s in last {
        s.for_each_use(&mut |u| {
            if let super::ir::Use::Value(v) = u {
                if ir.value(v).scope != Scope::Item || in_last.contains(&v) {
                    return;
                }
                if in_prev.contains(&v) {
                    if !read.contains(&v) {
                        read.push(v);
                    }
                } else {
                    foreign = true;
                }
            }
        });
    }
    (!foreign && !read.is_empty()).then_some(read)
}

/// Which tiles a tile loop's body is written for.
#[derive(Clone, Copy, PartialEq)]
enum TileKind {
    /// Any tile: each item tests its row, and so does each item of the next tile.
    Any,
    /// A whole tile: no item tests its row; the next tile's only when it is partial.
    Whole,
    /// The partial last tile: its items test their rows; no tile follows.
    Last,
}

/// The kernel's CUDA source: `stages` (the head, with a queue) and `tail` (run on queued
/// rows).
pub fn kernel(ir: &KernelIr, shape: &Shape<'_>, stages: &[Stage], deferral: Option<&Deferral>, tail: &[Stage]) -> String {
    let items = shape.items;
    let mut src = String::new();
    if shape.column_loads != 0 {
        let _ = writeln!(src, "#define TESSERA_COLUMN_LOADS {}", shape.column_loads);
    }
    src.push_str("#include \"tessera.cuh\"\nusing namespace tessera;\n");
    let _ = writeln!(src, "\n// Pipeline {}: generated by tessera-cuda.", shape.pipeline);
    let params: Vec<String> = shape.params.iter().map(Param::declaration).collect();
    let threads = shape.threads;
    let bounds = if shape.min_blocks > 0 { format!("{threads}, {}", shape.min_blocks) } else { threads.to_string() };
    let _ = writeln!(src, "extern \"C\" __global__ void __launch_bounds__({bounds}) {KERNEL_NAME}({}) {{", params.join(", "));
    let tile_items = threads * items;
    let _ = writeln!(src, "    constexpr int ITEMS = {items};");
    // Set by a checked result out of its type's range (`tessera_checked`), written to the
    // flags once after the last tile (a kernel with no checks drops both).
    let _ = writeln!(src, "    bool overflow = false;");
    src.push_str(&ir.prologue);
    // The tile loop's integers: `tile` and `next` of type `tt`, literals with suffix
    // `ll`, and the rows they are compared with.
    let (tt, ll, nrows) = if shape.index32 { ("int", "", "nrows") } else { ("long long", "LL", "rows") };
    // An item's row in the stages (see [`write_stages`]).
    let rt = if shape.int_rows { "int" } else { "long long" };
    if shape.index32 {
        let _ = writeln!(src, "    const int nrows = (int)rows;");
    }
    // Bit-packed columns and columns of runs are laid out for blocks of `BLOCK_THREADS`: a
    // kernel of larger blocks reading them (`Shape::parts`) splits each tile among its
    // groups of that many threads, each group's items its part's rows as a block of
    // `BLOCK_THREADS` would take them (`tessera_part`); `lb` is the threads a tile or
    // part is striped over.
    let parts = shape.parts;
    let lb = if parts { BLOCK_THREADS } else { threads };
    let part = |tile: &str| if parts { format!("tessera_part<{lb}, ITEMS>({tile})") } else { tile.to_string() };
    // The helpers' flag for a kernel read in parts (`tessera_thread_in`).
    let pt = if parts { ", true" } else { "" };
    // Over a table of at most `INDEX32_MAX_ROWS` rows a kernel reading compact columns up
    // front keeps its tile's value of their streams (`kq`: its part's first row over
    // `BLOCK_THREADS`, a whole number where a tile's rows are) and adds a grid's
    // stride's to it each tile (`tessera_stream_value`); a bit-packed column's words and
    // shift and a column of runs' directory words are found from it
    // (`tessera_bits_word`, `tessera_runs_pairs_at`, `tessera_runs_word_at`) instead of
    // from the tile: SSB q4.2's compact probe spent about 20 of its 138 warp
    // instructions a tile finding them. One count for every column: one a column took
    // q3.4's and q4.3's probes from 32 registers to 36 and 40 (NVRTC, sm_90).
    let steps = shape.stream_steps && lb == BLOCK_THREADS && tile_items % BLOCK_THREADS == 0;
    // An item's row from `tile`, counted in 32 bits where `int` says (an `int` tile).
    let row_in = |tile: &str, int: bool| match (parts, int) {
        (false, true) => format!("{tile} + (int)threadIdx.x + i * {threads}"),
        (false, false) => format!("{tile} + threadIdx.x + (long long)i * {threads}"),
        (true, true) => format!("{} + (int)(threadIdx.x % {lb}u) + i * {lb}", part(tile)),
        (true, false) => format!("{} + (long long)(threadIdx.x % {lb}u) + (long long)i * {lb}", part(tile)),
    };
    let row = |tile: &str| row_in(tile, shape.index32);
    let stride = format!("({tt})gridDim.x * {tile_items}{ll}");
    if let Some(d) = deferral {
        let warps = threads / 32;
        for v in &d.live {
            let v = ir.value(*v);
            let _ = writeln!(src, "    __shared__ {} tq_{}[{warps}][{}];", v.ty.c(), v.name, d.capacity);
        }
        if d.row {
            let _ = writeln!(src, "    __shared__ {} tq_row[{warps}][{}];", d.row_type(), d.capacity);
        }
        let _ = writeln!(src, "    int tq_n = 0;  // rows in this warp's queue (the same in every lane)");
        let _ = writeln!(src, "    const int tq_w = threadIdx.x >> 5;");
        let _ = writeln!(src, "    const unsigned int tq_lane = threadIdx.x & 31u;");
    }
    // The eager loads (the first stage) as (value name, source column), when prefetched.
    let eager: Vec<(String, usize)> = match stages.first() {
        Some(first) if shape.prefetch => first
            .iter()
            .filter_map(|s| match s {
                Stmt::Def { value, load: Some(Load::Column { column, .. }), .. } => Some((ir.value(*value).name.clone(), *column)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let body_stages: &[Stage] = if shape.prefetch { stages.get(1..).unwrap_or(&[]) } else { stages };
    let packed = |c: &usize| shape.cols[*c].packed;
    // Packed columns decode a warp's rows together (`tiles.cuh`), in two steps pipelined
    // over tiles like the plain loads: a tile's words are loaded one tile ahead (`pw`)
    // and its values decoded in the tile; the tile headers both steps read are
    // prefetched into L1 two tiles ahead. The columns a later stage loads (only the rows
    // still selected) have their headers prefetched the same way. A staged column's
    // header is prefetched by the warp that copies its tiles (`tessera_stage`).
    let (mut plain_eager, packed_eager): (Vec<_>, Vec<_>) = eager.iter().cloned().partition(|(_, c)| !packed(c));
    // Narrowed columns loaded a word a lane (`Shape::narrow_words`), as (value name,
    // column, distances a word, the word's C type, a distance's).
    let word_eager: Vec<(String, usize, u32, &str, &str)> = plain_eager
        .iter()
        .filter(|_| shape.narrow_words)
        .filter_map(|(n, c)| words_of(&shape.cols[*c], items).map(|(per, w, t)| (n.clone(), *c, per, w, t)))
        .collect();
    // Bit-packed columns (`Narrow::Bits`) loaded as the words of the thread's stream, as
    // (value name, column, bits a value, words a thread loads).
    let bit_eager: Vec<(String, usize, u32, u32)> = plain_eager
        .iter()
        .filter(|_| shape.narrow_words)
        .filter_map(|(n, c)| bit_words_of(&shape.cols[*c], items).map(|(w, loads)| (n.clone(), *c, w, loads)))
        .collect();
    plain_eager.retain(|(_, c)| !word_eager.iter().any(|w| w.1 == *c) && !bit_eager.iter().any(|b| b.1 == *c));
    // Columns of runs (`Narrow::Runs`) pipelined two tiles deep: a row's value depends on
    // its directory words, so each iteration reads the next tile's values from the
    // directory words loaded an iteration before (`nd`) and loads those of the tile after
    // it; read a row alone in the prefetch, the dependent loads stalled every tile.
    let (runs_eager, rest): (Vec<_>, Vec<_>) = plain_eager.into_iter().partition(|(_, c)| shape.cols[*c].in_runs());
    plain_eager = rest;
    // Those that fit are staged in shared memory instead, a tile ahead (see `staged`).
    let (staged, packed_eager) = staged(packed_eager, shape.cols, tile_items);
    // Whether any column loaded up front is prefetched into registers.
    let registers = !plain_eager.is_empty() || !packed_eager.is_empty() || !word_eager.is_empty() || !bit_eager.is_empty() || !runs_eager.is_empty();
    // Whether the kernel keeps the count `kq` (see `steps`): it loads a compact column up front.
    let counts = steps && !(bit_eager.is_empty() && runs_eager.is_empty());
    // Whether the zone bitmap lets the tile at `tile` run (see `Shape::zones`).
    let zone_test = |tile: &str| {
        // One bit where a tile lies in one of the bitmap's 2048-row zones.
        let one = if shape.zone_one && 2048 % tile_items == 0 { ", true" } else { "" };
        format!("tessera_zone_pass<{tile_items}{one}>(zones, {tile}, rows)")
    };
    // Whether each tile's zone is tested once and carried (`Shape::zone_carry`): `zt`
    // says whether the tile an iteration runs may hold rows, `zn` the next tile (tested
    // where its columns are loaded, then `zt` of the next iteration), `zu` the tile after
    // it where a column of runs loads its directory words two tiles ahead (then `zn`).
    let zone_carried = shape.zones && shape.zone_carry && shape.prefetch && registers;
    // The values of the runs columns' rows at `tile` from the directory words in `nd`
    // (`first`: read alone, the loop's first tile), then the directory words of the tile
    // a grid's stride after it, where it exists: a warp's item shares one pair of words
    // (`tessera_runs_dirs`), past the column's end the directory's zero padding
    // (`RUNS_DIRECTORY_PAD`); rows in a tile's items lie a whole number of 32 apart, so
    // each lane's mask of the rows of its 32 up to its own is the same for every item
    // (`rl`).
    // (Held one word a lane where `Shape::runs_lanes`: a warp's 2 × ITEMS words.)
    // With `steps` the words of the tile at `after` are found from its value of the
    // streams (`kq + kstep`: `after` is a stride past the tile `kq` counts).
    let runs_loads = |indent: &str, tile: &str, first: bool| -> String {
        if runs_eager.is_empty() {
            return String::new();
        }
        let reads: String = runs_eager
            .iter()
            .map(|(n, c)| {
                let read = if first {
                    // The loop's first tile: read alone.
                    format!("tessera_runs_get(col{c}, col{c}_runs, r)")
                } else if shape.runs_lanes {
                    format!("tessera_runs_value_lane(col{c}_runs, nd{n}, i, rl)")
                } else {
                    format!("tessera_runs_value(col{c}_runs, nd{n}[i], rl)")
                };
                let read = if shape.runs_distances { read } else { format!("{}{read})", super::scan::reference_add(*c, &shape.cols[*c])) };
                if first { format!(" if (r < rows) n{n}[i] = {read};") } else { format!(" n{n}[i] = {read};") }
            })
            .collect();
        let r = if first { format!(" const {rt} r = {};", row(tile)) } else { String::new() };
        // A tile the zone bitmap skips reads no values, and the directory words of one
        // it will skip are not loaded (its values are never read).
        let zr = if zone_carried { (if first { "zt" } else { "zn" }).to_string() } else { zone_test(tile) };
        let (open_zone, close_zone) = if shape.zones { (format!("{{ const bool zr = {zr};\n{indent}"), " }".to_string()) } else { (String::new(), String::new()) };
        let reads = if shape.zones { format!(" if (zr) {{{reads} }}") } else { reads };
        let after_zone = if shape.zones { format!(" && {}", zone_test("after")) } else { String::new() };
        let dirs: String = runs_eager
            .iter()
            .map(|(n, c)| {
                // The tile at `after`, by the count or as a row, and the helper taking it.
                let (at, lane_word, pairs) = if steps { ("kq + kstep".to_string(), "tessera_runs_word_at", "tessera_runs_pairs_at") } else { (part("after"), "tessera_runs_dir_lane", "tessera_runs_dirs") };
                if shape.runs_lanes {
                    return format!("{indent}    nd{n} = {lane_word}<ITEMS, {}{pt}>(col{c}, {at});\n", lb / 32);
                }
                format!(
                    "{indent}    const uint2* __restrict__ rd{n} = {pairs}<{lb}{pt}>(col{c}, {at});\n{indent}    #pragma unroll\n{indent}    for (int i = 0; i < ITEMS; ++i) nd{n}[i] = __ldg(rd{n} + i * {});\n",
                    lb / 32
                )
            })
            .collect();
        let loop_reads = format!("{open_zone}#pragma unroll\n{indent}for (int i = 0; i < ITEMS; ++i) {{{r}{reads} }}{close_zone}");
        if zone_carried {
            return format!("{loop_reads}\n{indent}{{ const {tt} after = {tile} + {stride}; zu = after < {nrows}{after_zone}; if (zu) {{\n{dirs}{indent}}} }}");
        }
        format!("{loop_reads}\n{indent}if (const {tt} after = {tile} + {stride}; after < {nrows}{after_zone}) {{\n{dirs}{indent}}}")
    };
    // Each column's copy by a warp in turn (`tessera_stage`), of the tile at `at` into
    // buffer `buffer`.
    let warps = (threads / 32) as usize;
    let stage_calls = |indent: &str, at: &str, buffer: &str| -> String {
        let calls: String = staged
            .iter()
            .enumerate()
            .map(|(j, (_, c))| {
                let w = j % warps;
                format!(" tessera_stage<{tile_items}>(col{c}, {at}, rows, st{c}[{buffer}], {w}u);")
            })
            .collect();
        format!("{indent}if ({at} < rows) {{{calls} }}\n{indent}tessera_stage_commit();\n")
    };
    let headed: BTreeSet<usize> =
        packed_eager.iter().map(|(_, c)| *c).chain(body_stages.iter().flatten().filter_map(|s| warp_decoded(ir, shape.cols, s).map(|(_, c)| c))).collect();
    let prefetch_loads: String = plain_eager
        .iter()
        .map(|(n, c)| {
            let (open, close) = super::scan::load_parts(*c, &shape.cols[*c], shape.column_loads != 0);
            format!(" n{n}[i] = {open}r{close};")
        })
        .collect();
    // Plain columns load for the rows that exist (`if (r < rows)`); every lane takes part
    // in a packed column's words and says whether its row exists (`want`).
    let word_loads = |want: &str| -> String {
        packed_eager.iter().map(|(n, c)| format!(" pw{n}[i] = tessera_dec_words{}(dn{c}, r, {want});", bits_of(&shape.cols[*c]))).collect()
    };
    // The decoders of the packed eager columns' tiles holding row `at` (`dn`: the tile
    // whose words are loaded; row 0's where there is no such tile, and no lane wants).
    let decoders = |indent: &str, name: &str, at: &str, guard: bool| -> String {
        let at = if guard { format!("{at} < rows ? {at} : 0") } else { at.to_string() };
        packed_eager.iter().map(|(_, c)| format!("{indent}const TileDec {name}{c} = tessera_tile_dec(col{c}, {at});\n")).collect()
    };
    let word_type = |c: usize| if bits_of(&shape.cols[c]) == 32 { "unsigned int" } else { "unsigned long long" };
    // A tile the zone bitmap skips has its plain columns' loads left out (`zn`: whether it
    // may hold rows, see `Shape::zones`).
    let zoned = |cond: &str| if shape.zones { format!("{cond} && zn") } else { cond.to_string() };
    // The word-a-lane loads of the narrowed columns at `tile` (load k of a column: see
    // `tessera_word_row`), testing that the word's first row exists where `guard`
    // (`tessera_word_load` then reads no row past the column's end).
    let lane_words = |tile: &str, guard: bool| -> String {
        let loads: String = word_eager
            .iter()
            .flat_map(|(n, c, per, w, _)| {
                (0..items / per).map(move |k| {
                    let r = format!("{} + {}{ll} + tessera_word_row<{per}, {lb}{pt}>()", part(tile), k * per * lb);
                    if guard {
                        format!(" {{ const long long r = {r}; nw{n}[{k}] = r < rows ? tessera_word_load<{w}>(col{c}, r, rows) : 0u; }}")
                    } else {
                        let ld = if shape.column_loads != 0 { "tessera_col" } else { "__ldg" };
                        format!(" nw{n}[{k}] = (unsigned int){ld}((const {w}*)(col{c} + {r}));")
                    }
                })
            })
            .collect();
        // A bit-packed column's words of this thread's items: word k is B words past word
        // k - 1 of its stream (the column's spare words keep a tile that exists in bounds;
        // where `guard`, none is loaded for a tile past the column's end).
        let bits: String = bit_eager
            .iter()
            .map(|(n, c, w, loads)| {
                let loads: String = (0..*loads).map(|k| format!(" nb{n}[{k}] = __ldg(bw + {});", k * BLOCK_THREADS)).collect();
                let word = if steps { format!("tessera_bits_word<{BLOCK_THREADS}{pt}>(col{c}, kq * {w}u)") } else { format!("tessera_bits_base<{w}, {BLOCK_THREADS}{pt}>(col{c}, {})", part(tile)) };
                let body = format!(" {{ const unsigned int* __restrict__ bw = {word};{loads} }}");
                if guard { format!(" if ({tile} < rows){body}") } else { body }
            })
            .collect();
        let loads = loads + &bits;
        if loads.is_empty() || !shape.zones { loads } else { format!(" if (zn) {{{loads} }}") }
    };
    let guarded_loads = |tile: &str| -> String {
        let plain = if prefetch_loads.is_empty() { String::new() } else { format!(" if ({}) {{{prefetch_loads} }}", zoned("r < rows")) };
        format!("for (int i = 0; i < ITEMS; ++i) {{ const {rt} r = {};{plain}{} }}{}", row(tile), word_loads("r < rows"), lane_words(tile, true))
    };
    let header_prefetch = |indent: &str, at: &str| -> String {
        let loads: String = headed.iter().map(|c| format!(" tessera_tile_prefetch(col{c}, {at});")).collect();
        format!("{indent}if ({at} < rows) {{{loads} }}\n")
    };
    let _ = writeln!(src, "    {tt} tile = ({tt})blockIdx.x * {tile_items}{ll};");
    if !headed.is_empty() {
        src.push_str(&header_prefetch("    ", &format!("tile + {stride}")));
    }
    if shape.prefetch {
        for (n, c) in &plain_eager {
            let _ = writeln!(src, "    {} n{n}[ITEMS] = {{}};", shape.cols[*c].width.c());
        }
        for (n, c) in &packed_eager {
            let _ = writeln!(src, "    {} pw{n}[ITEMS];", word_type(*c));
        }
        for (n, _, per, _, _) in &word_eager {
            let _ = writeln!(src, "    unsigned int nw{n}[{}] = {{}};", items / per);
        }
        for (n, _, w, _) in &bit_eager {
            // One word more than the values span (`tessera_bits_take` reads it, as 0).
            let _ = writeln!(src, "    unsigned int nb{n}[{}] = {{}};", (items * w).div_ceil(32) + 1);
        }
        // A column of runs' registers hold the next tile's distances, its reference added
        // where the tile takes them: added as they were read, the sum waited for the loads
        // at once (SSB SF 20 q1.1's probe over compact columns spent 15% of its stall
        // samples on it, 2026-11-30g run 2).
        for (n, c) in &runs_eager {
            let width = shape.cols[*c].width;
            let _ = writeln!(src, "    {} n{n}[ITEMS] = {{}};", if shape.runs_distances { width.unsigned_c() } else { width.c() });
            if shape.runs_lanes {
                let _ = writeln!(src, "    unsigned int nd{n} = 0u;");
            } else {
                let _ = writeln!(src, "    uint2 nd{n}[ITEMS] = {{}};");
            }
        }
        if counts {
            let _ = writeln!(src, "    unsigned int kq = tessera_stream_value<{BLOCK_THREADS}>({});  // the tile's value of the compact columns' streams", part("tile"));
            let _ = writeln!(src, "    const unsigned int kstep = gridDim.x * {}u;", tile_items / BLOCK_THREADS);
        }
        if !packed_eager.is_empty() {
            let _ = writeln!(src, "    {{");
            src.push_str(&decoders("    ", "dn", "tile", true));
        }
        if registers {
            if zone_carried {
                let _ = writeln!(src, "    bool zt = {};  // whether the zone bitmap lets this tile run", zone_test("tile"));
                if !runs_eager.is_empty() {
                    let _ = writeln!(src, "    bool zu = false;  // the same of the tile a stride on");
                }
                let _ = writeln!(src, "    {{\n    const bool zn = zt;");
            } else if shape.zones {
                let _ = writeln!(src, "    {{\n    const bool zn = {};", zone_test("tile"));
            }
            let _ = writeln!(src, "    #pragma unroll");
            let _ = writeln!(src, "    {}", guarded_loads("tile"));
            if shape.zones {
                let _ = writeln!(src, "    }}");
            }
            if !runs_eager.is_empty() {
                let _ = writeln!(src, "    const unsigned int rl = tessera_lanemask_le();");
                let _ = writeln!(src, "    {}", runs_loads("    ", "tile", true));
            }
        }
        if !packed_eager.is_empty() {
            let _ = writeln!(src, "    }}");
        }
        for (_, c) in &staged {
            let _ = writeln!(src, "    __shared__ __align__(16) unsigned long long st{c}[2][tessera_stage_words({tile_items}, {})];", bits_of(&shape.cols[*c]));
        }
        if !staged.is_empty() {
            let _ = writeln!(src, "    int sb = 0;  // the staging buffer of this tile (the next tile's: sb ^ 1)");
            src.push_str(&stage_calls("    ", "tile", "0"));
        }
    }
    let decls = declarations(ir);
    // A whole tile's last stage one iteration late (see [`carried`]): the values it reads
    // and its selection flags (`psel`) live across iterations.
    let carry = if shape.carry && deferral.is_none() && !shape.zones && shape.whole_tiles { carried(ir, body_stages) } else { None };
    let sel_type = if shape.sel_bool { "bool" } else { "int" };
    let carried_decls: Vec<String> = carry
        .iter()
        .flatten()
        .map(|v| {
            let v = ir.value(*v);
            format!("{} {}[ITEMS];", v.ty.c(), v.name)
        })
        .collect();
    if carry.is_some() {
        let _ = writeln!(src, "    // Tile t's last stage runs in iteration t + 1: what it reads, and its flags.");
        for d in &carried_decls {
            let _ = writeln!(src, "    {d}");
        }
        let _ = writeln!(src, "    {sel_type} psel[ITEMS] = {{}};");
    }
    // The last stage over the previous tile's items (`psel`), as `sel` in a scope of its
    // own; `declare` declares the values it defines there.
    let late_stage = |src: &mut String, skips: &[bool], indent: &str, declare: bool| {
        let last = &body_stages[body_stages.len() - 1..];
        let _ = writeln!(src, "{indent}{{");
        let _ = writeln!(src, "{indent}{sel_type} (&sel)[ITEMS] = psel;");
        if declare {
            for st in last.iter().flatten() {
                if let Stmt::Def { value, .. } = st {
                    let v = ir.value(*value);
                    if v.scope == Scope::Item {
                        let _ = writeln!(src, "{indent}{} {}[ITEMS];", v.ty.c(), v.name);
                    }
                }
            }
        }
        write_stages(src, ir, last, (&row("tile"), rt), indent, Some(shape.cols), skips);
        let _ = writeln!(src, "{indent}}}");
    };
    let tile_body = |src: &mut String, kind: TileKind| {
        let _ = writeln!(src, "        {}", sel_decl(shape));
        for d in &decls {
            if kind == TileKind::Whole && carried_decls.contains(d) {
                continue;
            }
            let _ = writeln!(src, "        {d}");
        }
        let _ = writeln!(src, "        #pragma unroll");
        if kind == TileKind::Whole {
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) sel[i] = true;");
        } else {
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) sel[i] = {} < {nrows};", row("tile"));
        }
        if kind != TileKind::Last && !shape.prefetch && !headed.is_empty() {
            let _ = writeln!(src, "        const {tt} next = tile + {stride};");
            src.push_str(&header_prefetch("        ", &format!("next + {stride}")));
        }
        if shape.prefetch {
            if !staged.is_empty() {
                // This tile's copies are done, and every thread is done with the buffer
                // the next tile's go to.
                let _ = writeln!(src, "        tessera_stage_wait();");
                let _ = writeln!(src, "        __syncthreads();");
            }
            for (n, c) in &packed_eager {
                let _ = writeln!(src, "        {} w{n}[ITEMS];", word_type(*c));
            }
            let picks = word_eager.iter().map(|(n, c, per, _, t)| {
                let value = super::scan::reference_add(*c, &shape.cols[*c]);
                format!(" {n}[i] = {value}tessera_word_pick<{t}, {per}>(nw{n}[i / {per}], i % {per}));")
            });
            let bit_picks = bit_eager.iter().map(|(n, c, _, _)| {
                let value = super::scan::reference_add(*c, &shape.cols[*c]);
                format!(" {n}[i] = {value}db{n}[i]);")
            });
            let take: String = plain_eager
                .iter()
                .map(|(n, _)| format!(" {n}[i] = n{n}[i];"))
                .chain(runs_eager.iter().map(|(n, c)| {
                    if shape.runs_distances {
                        format!(" {n}[i] = {}n{n}[i]);", super::scan::reference_add(*c, &shape.cols[*c]))
                    } else {
                        format!(" {n}[i] = n{n}[i];")
                    }
                }))
                .chain(packed_eager.iter().map(|(n, _)| format!(" w{n}[i] = pw{n}[i];")))
                .chain(picks)
                .chain(bit_picks)
                .collect();
            if registers {
                for (n, _, w, _) in &bit_eager {
                    if steps {
                        let _ = writeln!(src, "        unsigned int db{n}[ITEMS]; tessera_bits_take<{w}, ITEMS>(nb{n}, (kq * {w}u) & 31u, db{n});");
                        continue;
                    }
                    let _ = writeln!(
                        src,
                        "        unsigned int db{n}[ITEMS]; tessera_bits_take<{w}, ITEMS>(nb{n}, tessera_bits_shift<{w}, {BLOCK_THREADS}>({}), db{n});",
                        part("tile")
                    );
                }
                let _ = writeln!(src, "        #pragma unroll");
                let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) {{{take} }}");
                if counts && kind != TileKind::Last {
                    // What follows loads the next tile's words, a stride on.
                    let _ = writeln!(src, "        kq += kstep;");
                }
            }
            let guarded = format!("        {}", guarded_loads("next"));
            if kind != TileKind::Last {
                let _ = writeln!(src, "        const {tt} next = tile + {stride};");
                if zone_carried && !runs_eager.is_empty() {
                    let _ = writeln!(src, "        const bool zn = zu;");
                } else if zone_carried {
                    let _ = writeln!(src, "        const bool zn = next < {nrows} && {};", zone_test("next"));
                } else if shape.zones && registers {
                    let _ = writeln!(src, "        const bool zn = {};", zone_test("next"));
                }
                if !headed.is_empty() {
                    src.push_str(&header_prefetch("        ", &format!("next + {stride}")));
                }
                src.push_str(&decoders("        ", "dn", "next", true));
                if !staged.is_empty() && !shape.stage_late {
                    src.push_str(&stage_calls("        ", "next", "sb ^ 1"));
                }
            }
            match kind {
                _ if !registers => {}
                TileKind::Any => {
                    let _ = writeln!(src, "        #pragma unroll");
                    let _ = writeln!(src, "{guarded}");
                }
                TileKind::Whole => {
                    let _ = writeln!(src, "        if (next + {tile_items}{ll} <= {nrows}) {{");
                    let _ = writeln!(src, "            #pragma unroll");
                    let plain = if shape.zones && !prefetch_loads.is_empty() { format!(" if (zn) {{{prefetch_loads} }}") } else { prefetch_loads.clone() };
                    let _ = writeln!(src, "            for (int i = 0; i < ITEMS; ++i) {{ const {rt} r = {};{plain}{} }}{}", row("next"), word_loads("true"), lane_words("next", false));
                    let _ = writeln!(src, "        }} else {{");
                    let _ = writeln!(src, "            #pragma unroll");
                    let _ = writeln!(src, "    {guarded}");
                    let _ = writeln!(src, "        }}");
                }
                TileKind::Last => {}
            }
            if kind != TileKind::Last && !runs_eager.is_empty() {
                let _ = writeln!(src, "        {}", runs_loads("        ", "next", false));
            }
            if !packed_eager.is_empty() {
                let want = if kind == TileKind::Whole { "true" } else { "r < rows" };
                let decode: String = packed_eager
                    .iter()
                    .map(|(n, c)| format!(" {n}[i] = ({})tessera_dec_value{}(dc{c}, w{n}[i], {want});", shape.cols[*c].width.c(), bits_of(&shape.cols[*c])))
                    .collect();
                src.push_str(&decoders("        ", "dc", "tile", false));
                let _ = writeln!(src, "        #pragma unroll");
                let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) {{ const long long r = {};{decode} }}", row("tile"));
            }
            if !staged.is_empty() {
                // Each column's tile is of runs or of single values: tested once, outside
                // the loop over the items.
                let _ = writeln!(src, "        {{");
                for (n, c) in &staged {
                    let col = &shape.cols[*c];
                    let (ty, bits) = (col.width.c(), bits_of(col));
                    let _ = writeln!(src, "        const unsigned long long* sp{c} = st{c}[sb];");
                    let _ = writeln!(src, "        const StageDec sd{c} = tessera_stage_dec<{tile_items}, {threads}>(sp{c}, tile);");
                    let each = |kind: &str| format!("for (int i = 0; i < ITEMS; ++i) {n}[i] = ({ty})tessera_staged_{kind}{bits}(sd{c}, i);");
                    let _ = writeln!(src, "        if (sd{c}.runs) {{");
                    let _ = writeln!(src, "            #pragma unroll");
                    let _ = writeln!(src, "            {}", each("run"));
                    let _ = writeln!(src, "        }} else {{");
                    let _ = writeln!(src, "            #pragma unroll");
                    let _ = writeln!(src, "            {}", each("single"));
                    let _ = writeln!(src, "        }}");
                }
                let _ = writeln!(src, "        }}");
                if kind != TileKind::Last {
                    if shape.stage_late {
                        src.push_str(&stage_calls("        ", "next", "sb ^ 1"));
                    }
                    let _ = writeln!(src, "        sb ^= 1;");
                }
            }
        }
        // A tile the zone bitmap rules out runs no stage (the test is the same for the
        // whole block; the flags stay constant, so whole tiles' tests still fold away).
        if shape.zones {
            let _ = writeln!(src, "        if ({}) {{", if zone_carried { "zt".to_string() } else { zone_test("tile") });
        }
        let skips = if shape.warp_skip { warp_skips(body_stages, items) } else { Vec::new() };
        if let (Some(_), TileKind::Whole) = (&carry, kind) {
            // The stages before the last two; the previous tile's last stage; this
            // tile's second-to-last (under a warp's skip if any stage before it was).
            let n = body_stages.len();
            let skip = |k: usize| skips.get(k).copied().unwrap_or(false);
            write_stages(src, ir, &body_stages[..n - 2], (&row("tile"), rt), "        ", Some(shape.cols), &skips[..skips.len().min(n - 2)]);
            late_stage(src, &[(0..n).any(skip)], "        ", false);
            write_stages(src, ir, &body_stages[n - 2..n - 1], (&row("tile"), rt), "        ", Some(shape.cols), &[(0..n - 1).any(skip)]);
            let _ = writeln!(src, "        #pragma unroll");
            let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) psel[i] = sel[i];");
        } else {
            write_stages(src, ir, body_stages, (&row("tile"), rt), "        ", Some(shape.cols), &skips);
        }
        if let Some(d) = deferral {
            // A lean kernel's row queued as an `int` (`Deferral::row32`), counted in 32
            // bits from its 64-bit tile.
            let queued_row = if d.row32 && !shape.index32 { row_in("(int)tile", true) } else { row("tile") };
            write_queue(src, ir, d, &decls, tail, &queued_row, items, d.share <= shape.rolled_drain_max);
        }
        if shape.zones {
            let _ = writeln!(src, "        }}");
        }
        if zone_carried && kind != TileKind::Last {
            let _ = writeln!(src, "        zt = zn;");
        }
    };
    if shape.whole_tiles {
        let _ = writeln!(src, "    for (; tile + {tile_items}{ll} <= {nrows}; tile += {stride}) {{");
        tile_body(&mut src, TileKind::Whole);
        src.push_str("    }\n");
        if carry.is_some() {
            let _ = writeln!(src, "    // The last whole tile's last stage.");
            let skip = shape.warp_skip && warp_skips(body_stages, items).contains(&true);
            late_stage(&mut src, &[skip], "    ", true);
        }
        let _ = writeln!(src, "    // The last tile, partial: no tile follows it.");
        let _ = writeln!(src, "    if (tile < {nrows}) {{");
        tile_body(&mut src, TileKind::Last);
        src.push_str("    }\n");
    } else {
        let _ = writeln!(src, "    for (; tile < {nrows}; tile += {stride}) {{");
        tile_body(&mut src, TileKind::Any);
        src.push_str("    }\n");
    }
    if let Some(d) = deferral {
        let _ = writeln!(src, "    // The rows still queued.");
        let _ = writeln!(src, "    if (tq_n > 0)");
        write_drain(&mut src, ir, d, &decls, tail, "0", Some("tq_n"), "    ");
    }
    let _ = writeln!(src, "    if (overflow) flags[0] = 1ull;");
    src.push_str(&ir.epilogue);
    src.push_str("}\n");
    src
}

/// How narrowed column `col`, loaded up front with `items` items a thread, is loaded a
/// word a lane (`Experiments::narrow_words`, `tessera_word_load` in `tiles.cuh`): the
/// distances a word holds (C, the items one load covers: a word is 32 or 16 bits, so C
/// is 4 or 2 and divides the items), the word's C type and a distance's. None for a
/// column loaded an item at a time: not narrowed below 4 bytes, or an odd number of
/// items a thread.
fn words_of(col: &GpuColumn, items: u32) -> Option<(u32, &'static str, &'static str)> {
    let narrow = col.narrow.filter(|_| !col.packed)?;
    let bytes = match narrow {
        Narrow::U8 => 1,
        Narrow::U16 => 2,
        Narrow::U32 | Narrow::Bits(_) | Narrow::Runs { .. } => return None,
    };
    let per = [4 / bytes, 2].into_iter().find(|&per| items % per == 0)?;
    Some((per, if per * bytes == 4 { "unsigned int" } else { "unsigned short" }, narrow.c()))
}

/// How bit-packed column `col` (`Narrow::Bits`), loaded up front with `items` items a
/// thread, is loaded as the words of the thread's stream holding its items
/// (`tessera_bits_base`, `tessera_bits_take` in `tiles.cuh`): its bits a value and the
/// words a thread loads ([`bit_loads`]). None for other columns, and where the items do
/// not divide 32 (a tile would straddle two groups of the column's streams): those
/// columns are read a row at a time (`tessera_bits_get`).
fn bit_words_of(col: &GpuColumn, items: u32) -> Option<(u32, u32)> {
    let w = col.bit_width()?;
    (32 % items == 0).then(|| (w, bit_loads(w, items)))
}

/// After a tile's stages: each warp queues what the rest of the pipeline needs of its
/// rows still selected (`row`: their row numbers), and runs the rest (`tail`) on 32
/// queued rows at a time, after every `Deferral::chunk` of the thread's `items`.
#[allow(clippy::too_many_arguments)]
fn write_queue(src: &mut String, ir: &KernelIr, d: &Deferral, decls: &[String], tail: &[Stage], row: &str, items: u32, rolled: bool) {
    if let Some(e) = &d.expand {
        write_expansion(src, ir, d, e, decls, tail, row);
        return;
    }
    let push = queue_push(ir, d, row);
    // The items in chunks of `d.chunk`, the queue drained after each (one chunk: all).
    let chunked = d.chunk < items;
    let ind = if chunked { "            " } else { "        " };
    if chunked {
        let _ = writeln!(src, "        #pragma unroll");
        let _ = writeln!(src, "        for (int i0 = 0; i0 < ITEMS; i0 += {}) {{", d.chunk);
    }
    let _ = writeln!(src, "{ind}#pragma unroll");
    if chunked {
        let _ = writeln!(src, "{ind}for (int i = i0; i < i0 + {}; ++i) {{", d.chunk);
    } else {
        let _ = writeln!(src, "{ind}for (int i = 0; i < ITEMS; ++i) {{");
    }
    let _ = writeln!(src, "{ind}    const unsigned int m = __ballot_sync(0xffffffffu, sel[i]);");
    let _ = writeln!(src, "{ind}    if (sel[i]) {{ const int at = tq_n + __popc(m & ((1u << tq_lane) - 1u));{push} }}");
    let _ = writeln!(src, "{ind}    tq_n += __popc(m);");
    let _ = writeln!(src, "{ind}}}");
    if rolled {
        let _ = writeln!(src, "{ind}#pragma unroll 1");
    }
    let _ = writeln!(src, "{ind}while (tq_n >= {}) {{", 32 * d.drain);
    let _ = writeln!(src, "{ind}    tq_n -= {};", 32 * d.drain);
    write_drain(src, ir, d, decls, tail, "tq_n", None, &format!("{ind}    "));
    let _ = writeln!(src, "{ind}}}");
    if chunked {
        let _ = writeln!(src, "        }}");
    }
}

/// After a tile's stages, at a 1:N join: each warp's lanes walk their items' chains of
/// matches together, one step a round (a ballot), queueing an entry (the values the rest
/// needs, the match) per step, and run the rest on 32 entries whenever the queue holds
/// that many (see `defer.rs`). A LEFT OUTER join's item without a match is queued once,
/// its match −2 (−1 ends a walk).
fn write_expansion(src: &mut String, ir: &KernelIr, d: &Deferral, e: &Expansion, decls: &[String], tail: &[Stage], row: &str) {
    let push = queue_push(ir, d, row);
    let first = expr(ir, &e.first);
    let (start, walking, step) = if e.outer {
        (format!("sel[i] ? (({first}) >= 0 ? ({first}) : -2) : -1"), "tq_m != -1", format!("tq_m = tq_m >= 0 ? __ldg(&{}[tq_m]) : -1;", e.next))
    } else {
        (format!("sel[i] ? {first} : -1"), "tq_m >= 0", format!("tq_m = __ldg(&{}[tq_m]);", e.next))
    };
    let _ = writeln!(src, "        #pragma unroll");
    let _ = writeln!(src, "        for (int i = 0; i < ITEMS; ++i) {{");
    let _ = writeln!(src, "            int tq_m = {start};");
    let _ = writeln!(src, "            while (true) {{");
    let _ = writeln!(src, "                const unsigned int m = __ballot_sync(0xffffffffu, {walking});");
    let _ = writeln!(src, "                if (m == 0u) break;");
    let _ = writeln!(src, "                if ({walking}) {{ const int at = tq_n + __popc(m & ((1u << tq_lane) - 1u));{push} {step} }}");
    let _ = writeln!(src, "                tq_n += __popc(m);");
    let _ = writeln!(src, "                if (tq_n >= 32) {{");
    let _ = writeln!(src, "                    tq_n -= 32;");
    write_drain(src, ir, d, decls, tail, "tq_n", None, "                    ");
    let _ = writeln!(src, "                }}");
    let _ = writeln!(src, "            }}");
    let _ = writeln!(src, "        }}");
}

/// The stores that queue item `i` at entry `at` of its warp's queue: each live value
/// (an expansion's match from the walk's `tq_m`), then the row number `row` if needed.
fn queue_push(ir: &KernelIr, d: &Deferral, row: &str) -> String {
    let matched = d.expand.as_ref().map(|e| e.matched);
    let mut push: String = d
        .live
        .iter()
        .map(|v| {
            let n = &ir.value(*v).name;
            if Some(*v) == matched { format!(" tq_{n}[tq_w][at] = tq_m;") } else { format!(" tq_{n}[tq_w][at] = {n}[i];") }
        })
        .collect();
    if d.row {
        let _ = write!(push, " tq_row[tq_w][at] = {row};");
    }
    push
}

/// The tile-scope declarations of the per-item values: `T name[ITEMS];`.
fn declarations(ir: &KernelIr) -> Vec<String> {
    ir.values.iter().filter(|v| v.scope == Scope::Item).map(|v| format!("{} {}[ITEMS];", v.ty.c(), v.name)).collect()
}

/// An expression in C.
fn expr(ir: &KernelIr, e: &CExpr) -> String {
    let mut s = String::new();
    for p in &e.0 {
        match p {
            Piece::Text(t) => s.push_str(t),
            Piece::Value(v) => {
                let v = ir.value(*v);
                match v.scope {
                    Scope::Item => {
                        let _ = write!(s, "{}[i]", v.name);
                    }
                    Scope::Local => s.push_str(&v.name),
                }
            }
            Piece::Row => s.push('r'),
            Piece::Branch(b) => {
                // Evaluated for the item by a lambda: only the branch taken runs.
                let body: String = b.stmts.iter().map(|st| format!("{} ", stmt(ir, st))).collect();
                match &b.over {
                    None => {
                        let _ = write!(s, "([&]() -> long long {{ {body} return {}; }}())", expr(ir, &b.result));
                    }
                    // Along a chain of matches, until one makes it hold.
                    Some(c) => {
                        let (m, next) = (&c.var, &c.next);
                        let _ = write!(
                            s,
                            "([&]() -> bool {{ for (int {m} = {}; {m} >= 0; {m} = __ldg(&{next}[{m}])) {{ {body}if ({}) return true; }} return false; }}())",
                            expr(ir, &c.first),
                            expr(ir, &b.result)
                        );
                    }
                }
            }
        }
    }
    s
}

/// A statement in C.
fn stmt(ir: &KernelIr, s: &Stmt) -> String {
    match s {
        Stmt::Def { value, expr: e, .. } => {
            let v = ir.value(*value);
            match v.scope {
                Scope::Item => format!("{}[i] = {};", v.name, expr(ir, e)),
                Scope::Local => format!("const {} {} = {};", v.ty.c(), v.name, expr(ir, e)),
            }
        }
        Stmt::Reject { cond, flag: None, .. } => format!("if ({}) {{ sel[i] = false; continue; }}", expr(ir, cond)),
        Stmt::Reject { cond, flag: Some(f), .. } => format!("if ({}) {{ flags[{f}] = 1ull; sel[i] = false; continue; }}", expr(ir, cond)),
        Stmt::Effect(e) => expr(ir, e),
        // Printed as the warp queue's expansion (`write_queue`).
        Stmt::Cut | Stmt::Expand { .. } => String::new(),
    }
}

/// Before a stage, a warp whose items are all dropped skips the tile's remaining stages
/// (`tessera_warp_any`) where the estimated share of warps with no row left selected is
/// at least this: SSB q1.3's probe kernel went on through four stages of per-item tests
/// (`if (!sel[i]) continue;`) for the 70% of its warps' tiles whose 128 rows all failed
/// the date test (one row in 364 passes), issuing about 50 warp instructions per 32
/// rows (2026-11-27i run 2). Below it the vote costs more than it skips.
const WARP_SKIP_MIN_SHARE: f64 = 0.1;

/// Whether, with an estimated share `pass` of the rows still selected (taken as
/// independent), a warp's 32 × `items` rows are all dropped often enough for a vote
/// ([`WARP_SKIP_MIN_SHARE`]).
pub(super) fn warp_skip_likely(pass: f64, items: u32) -> bool {
    (1.0 - pass).powi((32 * items) as i32) >= WARP_SKIP_MIN_SHARE
}

/// Per stage of a tile body, whether a warp with no item left selected skips it and
/// the stages after it (see [`WARP_SKIP_MIN_SHARE`]): when, by the rejections before
/// it, a warp's 32 × `items` rows are all dropped often enough (rows taken as
/// independent), and a rejection came since the last vote.
fn warp_skips(stages: &[Stage], items: u32) -> Vec<bool> {
    // The share selected after the rejections so far, and at the last vote.
    let (mut pass, mut voted) = (1.0f64, 1.0f64);
    stages
        .iter()
        .map(|st| {
            let skip = pass < voted && warp_skip_likely(pass, items);
            if skip {
                voted = pass;
            }
            for s in st {
                if let Stmt::Reject { flag: None, pass: p, .. } = s {
                    pass = pass.min(*p);
                }
            }
            skip
        })
        .collect()
}

/// Writes `stages`, each an unrolled loop over the items still selected; `row` is the C
/// expression of item `i`'s row number.
///
/// `striped`: the source columns, where the items are a tile's striped rows (a warp's
/// lanes hold 32 consecutive rows).
/// A stage's loads of packed columns then leave its loop for one of their own after it,
/// where the whole warp decodes its rows together (`tiles.cuh`) for the items still
/// selected. Moving them to the stage's end is safe: a stage ends before the first use
/// of a value loaded in it ([`super::passes::stages`]); and rows the stage rejects are
/// not loaded.
///
/// Before a stage whose `skips` entry is set ([`warp_skips`]), the warp votes and runs
/// that stage and the rest only if an item is still selected (the braces close after the
/// last stage).
///
/// An item's row is declared `rt`: `int` in a kernel over `int` rows (`Shape::index32`),
/// so that a row read alone is found in 32 bits (`tessera_bits_get`, `tessera_runs_get`).
fn write_stages(src: &mut String, ir: &KernelIr, stages: &[Stage], (row, rt): (&str, &str), indent: &str, striped: Option<&[GpuColumn]>, skips: &[bool]) {
    let mut open = 0;
    for (k, st) in stages.iter().enumerate() {
        if skips.get(k).copied().unwrap_or(false) {
            let _ = writeln!(src, "{indent}if (tessera_warp_any(sel)) {{");
            open += 1;
        }
        let warp_decoded = |s: &Stmt| striped.and_then(|cols| warp_decoded(ir, cols, s));
        let warp: Vec<(String, usize)> = st.iter().filter_map(warp_decoded).collect();
        let rest: Vec<&Stmt> = st.iter().filter(|s| warp_decoded(s).is_none()).collect();
        if !rest.is_empty() {
            let _ = writeln!(src, "{indent}#pragma unroll");
            let _ = writeln!(src, "{indent}for (int i = 0; i < ITEMS; ++i) {{");
            let _ = writeln!(src, "{indent}    if (!sel[i]) continue;");
            if rest.iter().any(|s| s.uses(super::ir::Use::Row)) {
                let _ = writeln!(src, "{indent}    const {rt} r = {row};");
            }
            for s in &rest {
                let _ = writeln!(src, "{indent}    {}", stmt(ir, s));
            }
            let _ = writeln!(src, "{indent}}}");
        }
        if let (false, Some(cols)) = (warp.is_empty(), striped) {
            // The tile's decoder of each column, then its rows (`tile`: the tile's first row).
            let _ = writeln!(src, "{indent}{{");
            for (_, c) in &warp {
                let _ = writeln!(src, "{indent}    const TileDec d{c} = tessera_tile_dec(col{c}, tile);");
            }
            let loads: String = warp.iter().map(|(n, c)| format!(" {n}[i] = ({})tessera_dec_unpack{}(d{c}, r, sel[i]);", cols[*c].width.c(), bits_of(&cols[*c]))).collect();
            let _ = writeln!(src, "{indent}    #pragma unroll");
            let _ = writeln!(src, "{indent}    for (int i = 0; i < ITEMS; ++i) {{ const long long r = {row};{loads} }}");
            let _ = writeln!(src, "{indent}}}");
        }
    }
    for _ in 0..open {
        let _ = writeln!(src, "{indent}}}");
    }
}

/// Rows of a stored tile (`tessera_storage::tiles::TILE_ROWS`): a kernel tile that
/// divides it lies inside one, as staging needs.
pub(super) const STORAGE_TILE_ROWS: u32 = 2048;

/// The most words a stored tile's run values take (`tessera_storage::packed`).
pub(super) const RUN_VALUE_WORDS: u32 = 256;

/// Words a staging buffer starts with: the tile's header (`STAGE_HEADER_WORDS` in
/// tiles.cuh).
pub(super) const STAGE_HEADER_WORDS: u32 = 2;

/// Most of a block's shared memory staged columns may take (their two buffers each):
/// with a shared-memory aggregation (at most `aggregate::SHARED_AGG_BYTES`) and a warp
/// queue, a block stays within the 48 KiB of static shared memory, and at 24 KiB five
/// blocks of a 228 KiB SM still fit beside each other.
const STAGE_BYTES: u32 = 24 << 10;

/// A load of a source column into a per-item value: (value, column).
type ColumnLoad = (String, usize);

/// Which packed columns loaded up front are staged in shared memory (`tiles.cuh`,
/// `tessera_stage`) and which a warp decodes from its words (the rest): staged, in
/// order, as long as their buffers fit [`STAGE_BYTES`] and a kernel tile of
/// `tile_rows` lies inside a stored tile.
///
/// Staging decodes a value in a few instructions where the warp decoder took tens, the
/// kernels measured instruction-bound (`gpu.rs`, `packed_columns`).
fn staged(packed: Vec<ColumnLoad>, cols: &[GpuColumn], tile_rows: u32) -> (Vec<ColumnLoad>, Vec<ColumnLoad>) {
    if !STORAGE_TILE_ROWS.is_multiple_of(tile_rows) {
        return (Vec::new(), packed);
    }
    // The buffer's words: `tessera_stage_words` in tiles.cuh.
    let mut bytes = 0;
    packed.into_iter().partition(|(_, c)| {
        let words = STAGE_HEADER_WORDS + (tile_rows * bits_of(&cols[*c]) / 64 + 2).max(tile_rows / 32 + RUN_VALUE_WORDS);
        bytes += 2 * 8 * words;
        bytes <= STAGE_BYTES
    })
}

/// The width of a packed column's decoder (`tiles.cuh`): `32` or `64`.
fn bits_of(col: &GpuColumn) -> u32 {
    8 * col.width.bytes() as u32
}

/// A top-level load of a packed source column into a per-item value: (value, column).
fn warp_decoded(ir: &KernelIr, cols: &[GpuColumn], s: &Stmt) -> Option<(String, usize)> {
    match s {
        Stmt::Def { value, load: Some(Load::Column { column, .. }), .. } if ir.value(*value).scope == Scope::Item && cols[*column].packed => {
            Some((ir.value(*value).name.clone(), *column))
        }
        _ => None,
    }
}

/// A warp's drain of its queue: each lane takes `Deferral::drain` entries, from entry
/// `base` on (entry `base + lane + 32 i` is its item i), and runs the rest of the
/// pipeline (`tail`) on them, their loads in flight together; `limit`: the entries
/// queued from `base`, where fewer than a full drain's may be (after the last tile).
#[allow(clippy::too_many_arguments)]
fn write_drain(src: &mut String, ir: &KernelIr, d: &Deferral, decls: &[String], tail: &[Stage], base: &str, limit: Option<&str>, indent: &str) {
    let _ = writeln!(src, "{indent}{{");
    let ind = format!("{indent}    ");
    let _ = writeln!(src, "{ind}constexpr int ITEMS = {};", d.drain);
    let _ = writeln!(src, "{ind}int sel[ITEMS];");
    for l in decls {
        let _ = writeln!(src, "{ind}{l}");
    }
    let rt = d.row_type();
    if d.row {
        let _ = writeln!(src, "{ind}{rt} tq_r[ITEMS];");
    }
    let at = format!("{base} + (int)tq_lane + 32 * i");
    let mut take: String = d.live.iter().map(|v| format!(" {n}[i] = tq_{n}[tq_w][{at}];", n = ir.value(*v).name)).collect();
    if d.row {
        let _ = write!(take, " tq_r[i] = tq_row[tq_w][{at}];");
    }
    let cond = match limit {
        None => "true".to_string(),
        Some(n) => format!("(int)tq_lane + 32 * i < {n}"),
    };
    let _ = writeln!(src, "{ind}__syncwarp();");
    let _ = writeln!(src, "{ind}#pragma unroll");
    let _ = writeln!(src, "{ind}for (int i = 0; i < ITEMS; ++i) {{ sel[i] = {cond}; if (sel[i]) {{{take} }} }}");
    // The entries are read before any lane queues the next tile's rows over them.
    let _ = writeln!(src, "{ind}__syncwarp();");
    write_stages(src, ir, tail, ("tq_r[i]", rt), &ind, None, &[]);
    let _ = writeln!(src, "{indent}}}");
}
