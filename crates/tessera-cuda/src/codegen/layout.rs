//! What a kernel reads and writes: column widths, dictionaries, the shapes of probed
//! tables and the sink's arrays. The executor allocates and fills these; the generator
//! reads them.

use tessera_ir::Type;

use super::aggregate::{Accumulator, GroupTable};
use super::hash::KeyPack;
use super::options::{BLOCK_THREADS, MAX_ITEMS_PER_THREAD};

/// Storage width of a column on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Width {
    /// `int32_t` (8/16/32-bit integers, dates, dictionary codes).
    I32,
    /// `int64_t` (64-bit integers, decimals of at most 18 digits).
    I64,
    /// A string column without a dictionary, as Arrow keeps it: `int64_t` offsets, one
    /// more than rows (`col{i}`), into UTF-8 bytes (`col{i}_bytes`). Only string
    /// functions read it (`LIKE`); it is never a value of the row layout.
    Str,
}

impl Width {
    /// The C type of a value.
    pub fn c(self) -> &'static str {
        match self {
            Width::I32 => "int32_t",
            Width::I64 | Width::Str => "int64_t",
        }
    }

    /// The unsigned C type of a value's width (distances from a reference are taken in
    /// it, so they never overflow).
    pub fn unsigned_c(self) -> &'static str {
        match self {
            Width::I32 => "uint32_t",
            Width::I64 | Width::Str => "unsigned long long",
        }
    }

    /// The kernel IR's type of a value.
    pub fn ctype(self) -> super::ir::CType {
        match self {
            Width::I32 => super::ir::CType::Int32,
            Width::I64 | Width::Str => super::ir::CType::Int64,
        }
    }

    /// Bytes per value.
    pub fn bytes(self) -> usize {
        match self {
            Width::I32 => 4,
            Width::I64 | Width::Str => 8,
        }
    }
}

/// The width of values of an IR type on the GPU (None: not supported there yet).
pub fn width_of(ty: Type) -> Option<Width> {
    match ty {
        Type::Int8 | Type::Int16 | Type::Int32 | Type::Date32 | Type::Utf8 => Some(Width::I32),
        Type::Int64 => Some(Width::I64),
        Type::Decimal { precision, .. } if precision <= 18 => Some(Width::I64),
        // As order keys (see `float_order_key`).
        Type::Float64 => Some(Width::I64),
        _ => None,
    }
}

// Doubles travel in kernels as their order keys (`tessera_ir::float_order_key`).
pub use tessera_ir::{float_from_order_key, float_order_key};

/// A double literal's order key as kernels can write it: None for the one key (a NaN's)
/// that is -2^63, which does not parse as a C literal.
pub fn float_literal_key(v: f64) -> Option<i64> {
    Some(float_order_key(v)).filter(|&k| k != i64::MIN)
}

/// The width of a value an expression computes: a column's width, and 64 bits for
/// decimals of more than 18 digits. SQL's decimal result types grow with each operation
/// (TPC-H's `l_extendedprice * (1 - l_discount)` is DECIMAL(38,4)) while the values rarely
/// outgrow 64 bits, so kernels compute them in 128 bits and check the result against the
/// 64-bit range ([`value_bounds`]): a value beyond raises the overflow flag, and the query
/// runs again on the CPU backend, which is exact in 128 bits.
pub fn value_width(ty: Type) -> Option<Width> {
    match ty {
        Type::Decimal { precision, .. } if precision > 18 => Some(Width::I64),
        t => width_of(t),
    }
}

/// The range a computed value of type `ty` is checked against (see [`value_width`]).
pub fn value_bounds(ty: Type) -> Option<(i128, i128)> {
    match ty {
        Type::Decimal { precision, .. } if precision > 18 => Some((i64::MIN as i128 + 1, i64::MAX as i128)),
        t => bounds(t),
    }
}

/// Range of an integer-like IR type as stored (decimals: ±(10^p − 1)).
pub fn bounds(ty: Type) -> Option<(i128, i128)> {
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

/// A dictionary whose codes a column holds: its size, and an id the executor uses to
/// find its values again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DictRef {
    /// Entries.
    pub size: usize,
    /// The executor's id for it.
    pub id: usize,
    /// The codes are row numbers of a stored string column without a dictionary, whose
    /// values may repeat: they can be carried (through projections, build payloads and
    /// as a dependent group key, see `tessera_ir::ReducedKeys`) and turned back into the
    /// strings when results come back, but never compared, grouped by or sorted on.
    pub by_row: bool,
}

/// A column of the pipeline's source as it lives on the GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuColumn {
    /// Storage width.
    pub width: Width,
    /// The dictionary when the column holds dictionary codes.
    pub dictionary: Option<DictRef>,
    /// The column lies in bit-packed tiles (`tiles.cuh`), decoded where it is loaded;
    /// else one plain array of its width.
    pub packed: bool,
    /// Its data holds NULLs: a validity bitmap goes with it (`col{i}_valid`, one bit a
    /// row, Arrow's order: bit `r & 31` of word `r >> 5` set when row `r` is not NULL),
    /// and where a row is NULL its value means nothing. A nullable column whose data has
    /// no NULL goes without one. Never packed (tiles with NULLs have no packed form).
    pub nullable: bool,
    /// The column lies narrowed: each value less a reference (`col{i}_ref`), in fewer
    /// bytes than its width (see [`Narrow`]). Never packed nor nullable.
    pub narrow: Option<Narrow>,
}

/// A column narrowed to a byte width: frame of reference over the whole column, each
/// value stored as its distance from the column's smallest (`col{i}_ref`), in the fewest
/// whole bytes that hold the largest distance. Loading it is the narrow load and one add
/// (bit-packed tiles read fewer bytes still but were measured instruction-bound); 1- and
/// 2-byte columns loaded up front are loaded a word a lane (`Experiments::narrow_words`).
/// TPC-H's decimals and keys are 64-bit values of 1–4 bytes; SSB's quantities, discounts
/// and dates are 32-bit values of 1–2. The default (`TESSERA_EXP_NARROW=0` turns it
/// off; see `ExecExperiments::narrow` in `tessera-exec`).
///
/// [`Narrow::Bits`] goes below whole bytes: the distances bit-packed at one width for the
/// whole column (no tiles, no headers), lane-interleaved for the kernels' blocks
/// ([`BITS_GROUP_ROWS`], [`pack_bits`]): row `g × 32B + v × B + t` (`B` =
/// [`BLOCK_THREADS`]) is value `v` of stream `t` of group `g`, whose words are a block's
/// thread `t`'s. A kernel thread's items of a tile are then consecutive values of its own
/// stream: the columns a kernel loads up front are loaded as the words holding them,
/// coalesced, and each value is taken out by shifts that are constants of the kernel
/// (`tessera_bits_base`, `tessera_bits_take` in `tiles.cuh`); other loads read the one or
/// two words of their row (`tessera_bits_get`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Narrow {
    /// `uint8_t` distances.
    U8,
    /// `uint16_t` distances.
    U16,
    /// `uint32_t` distances (a 64-bit column's).
    U32,
    /// Distances bit-packed `w` bits a row (1 to 31) into `uint32_t` words.
    Bits(u8),
    /// Runs of repeated values: each run's distance once, in `value` bytes (1, 2 or 4),
    /// and a directory of two `uint32_t` words a 32 rows saying which run holds each
    /// row ([`fill_runs`]). `per_run` is the column's rows a run as estimated when the
    /// form was chosen (at most 255), for the bytes a row it takes.
    Runs {
        /// Bytes of a run's distance.
        value: u8,
        /// Estimated rows a run (at least 1; at least 2 where chosen for its bytes).
        per_run: u8,
    },
}

/// Runs ([`Narrow::Runs`]) are chosen over the form they replace (bit-packed, a byte
/// form or the width) where they take at most this share of its bits a row: a row read
/// costs a directory word (shared by a warp's 32 rows) and a run's value that depends on
/// it. SSB's `lo_custkey` and `lo_orderdate` (an order's 1–7 lines, 4 on average, share
/// them) take 10 and 6 bits a row of 32 and 16. The runs a column holds are estimated from
/// its stored tiles (`LoadedTable::column_runs`: run-length tiles' runs). Chosen, not
/// swept.
pub const RUNS_MAX_SHARE: (u32, u32) = (1, 2);

/// The directory bits a row of a column of runs: two words a 32 rows.
pub const RUNS_DIRECTORY_BITS: u32 = 2;

/// Zero words after a column of runs' directory: a kernel loading a tile's directory
/// words up front loads every item's (a tile of at most [`MAX_ITEMS_PER_THREAD`] ×
/// [`BLOCK_THREADS`] rows) once the tile's first row exists, without a test an item.
/// Their run is run 0.
pub const RUNS_DIRECTORY_PAD: usize = 2 * (MAX_ITEMS_PER_THREAD * BLOCK_THREADS / 32) as usize;

/// A bit-packed form ([`Narrow::Bits`]) is chosen over the form it replaces (the byte
/// form, else the column's width) only where it takes at most this share of that form's
/// bits (its values cost their tile's words' address, a funnel shift and a mask more than
/// a byte form's):
/// SSB's 24-bit prices and 17- to 22-bit keys (of 32), 4- and 6-bit discounts and
/// quantities (of 8) qualify; its `yyyymmdd` date keys (16 bits of 16) and a 13-bit value
/// of 16 do not. Chosen, not swept.
pub const BITS_MAX_SHARE: (u32, u32) = (3, 4);

impl Narrow {
    /// The C type of a stored distance (of a word of bit-packed distances).
    pub fn c(self) -> &'static str {
        match self {
            Narrow::U8 => "uint8_t",
            Narrow::U16 => "uint16_t",
            Narrow::U32 | Narrow::Bits(_) => "uint32_t",
            Narrow::Runs { value, .. } => Narrow::byte_form(value).map_or("uint32_t", Narrow::c),
        }
    }

    /// The byte form of `bytes` bytes (1, 2 or 4).
    fn byte_form(bytes: u8) -> Option<Narrow> {
        match bytes {
            1 => Some(Narrow::U8),
            2 => Some(Narrow::U16),
            4 => Some(Narrow::U32),
            _ => None,
        }
    }

    /// The narrowest byte form holding distances up to `span`.
    fn byte_form_for(span: u64) -> Option<Narrow> {
        match span {
            s if s <= u64::from(u8::MAX) => Some(Narrow::U8),
            s if s <= u64::from(u16::MAX) => Some(Narrow::U16),
            s if s <= u64::from(u32::MAX) => Some(Narrow::U32),
            _ => None,
        }
    }

    /// Bits per stored value (a run's, for runs).
    pub fn bits(self) -> u32 {
        match self {
            Narrow::U8 => 8,
            Narrow::U16 => 16,
            Narrow::U32 => 32,
            Narrow::Bits(w) => u32::from(w),
            Narrow::Runs { value, .. } => 8 * u32::from(value),
        }
    }

    /// Bits a row takes, rounded up: a value's, or for runs the directory's share and a
    /// run's value over its estimated rows.
    pub fn row_bits(self) -> u32 {
        match self {
            Narrow::Runs { per_run, .. } => RUNS_DIRECTORY_BITS + self.bits().div_ceil(u32::from(per_run.max(1))),
            _ => self.bits(),
        }
    }

    /// The largest distance the form holds.
    pub fn max_distance(self) -> u64 {
        (1u64 << self.bits()) - 1
    }

    /// Bytes per value of a byte form (a bit-packed one's rounded up).
    pub fn bytes(self) -> usize {
        self.bits().div_ceil(8) as usize
    }

    /// The narrowest form for distances up to `span` (the largest value less the
    /// smallest) of a column of `width`, when it is narrower than the width; bit-packed
    /// ([`Narrow::Bits`]) where the form it replaces (a byte form, else the width) has at
    /// least `bits_from` bits (0: never bit-packed), the value takes at most 31 and
    /// [`BITS_MAX_SHARE`] of them.
    pub fn for_span(span: u64, width: Width, bits_from: u32) -> Option<Narrow> {
        if width == Width::Str {
            return None;
        }
        let bytes = Narrow::byte_form_for(span).filter(|n| n.bytes() < width.bytes());
        let replaced = bytes.map_or(width.bytes() as u32 * 8, Narrow::bits);
        let need = (64 - span.leading_zeros()).max(1);
        let (num, den) = BITS_MAX_SHARE;
        if bits_from > 0 && replaced >= bits_from && need <= 31 && need * den <= replaced * num {
            return Some(Narrow::Bits(need as u8));
        }
        bytes
    }

    /// [`Narrow::for_span`]'s form, or runs ([`Narrow::Runs`]) where the column's `rows`
    /// hold at most `runs` runs and those take at most [`RUNS_MAX_SHARE`] of that form's
    /// bits a row: with `runs_mode` 1; 0 never, 2 always (to test them; run values of
    /// at most 4 bytes and run numbers of 32 bits in any case).
    pub fn for_column(span: u64, width: Width, bits_from: u32, runs_mode: u32, rows: usize, runs: usize) -> Option<Narrow> {
        let single = Narrow::for_span(span, width, bits_from);
        let few = runs > 0 && rows >= 2 * runs;
        if runs_mode == 0 || (runs_mode == 1 && !few) || rows == 0 || u32::try_from(rows).is_err() || width == Width::Str {
            return single;
        }
        let Some(value) = Narrow::byte_form_for(span) else { return single };
        let runs_form = Narrow::Runs { value: value.bytes() as u8, per_run: (rows / runs.max(1)).clamp(1, 255) as u8 };
        let replaced = single.map_or(width.bytes() as u32 * 8, Narrow::row_bits);
        let (num, den) = RUNS_MAX_SHARE;
        if runs_mode == 2 || runs_form.row_bits() * den <= replaced * num { Some(runs_form) } else { single }
    }

    /// The 32-bit words of a bit-packed column of `rows` rows `w` bits a row: whole
    /// groups of [`BITS_GROUP_ROWS`] rows, `w` words a stream, and one spare word a stream
    /// (a kernel loading a tile's words may read one word past its values).
    pub fn bit_words(rows: usize, w: u32) -> usize {
        (rows.div_ceil(BITS_GROUP_ROWS) * w as usize + 1) * BLOCK_THREADS as usize
    }
}

/// Rows of a group of a bit-packed column ([`Narrow::Bits`]): 32 values of each of a
/// block's [`BLOCK_THREADS`] streams, so that a stream's values fill whole words and a
/// kernel tile (a power of two of items a thread, at most 32) lies in one group.
pub const BITS_GROUP_ROWS: usize = 32 * BLOCK_THREADS as usize;

/// The word and bit at which row `r`'s distance starts in a column bit-packed `w` bits a
/// row (see [`Narrow::Bits`]): value `v` of stream `t` of group `g` starts at bit
/// `v × w` of the stream, whose word `j` is word `g × B × w + j × B + t` of the column.
fn bit_place(r: usize, w: u32) -> (usize, u32) {
    let b = BLOCK_THREADS as usize;
    let (g, v, t) = (r / BITS_GROUP_ROWS, (r / b) % 32, r % b);
    let bit = v * w as usize;
    (g * b * w as usize + (bit / 32) * b + t, (bit % 32) as u32)
}

/// Packs `values` into `out`, `w` bits a value (1 ≤ w ≤ 31; see [`Narrow::Bits`]), `out`
/// holding at least [`Narrow::bit_words`] words and zeroed; the first value wider than
/// `w` bits, if any, is returned (and packed cut to its low `w` bits). A chunk of a column
/// that starts at a multiple of [`BITS_GROUP_ROWS`] rows packs into its own words (from
/// `start / BITS_GROUP_ROWS × BLOCK_THREADS × w`), so chunks pack in parallel.
///
/// Each stream's bits are gathered in a register and each of its words written once.
/// Or-ing each value into its words (at [`bit_place`]) packed a column of 600 M rows in
/// 0.27–0.33 s on the H200's 16-core host (SSB SF 100's first query, `gpu-2026-12-01f`
/// run 4).
pub fn pack_bits(values: &[u32], w: u32, out: &mut [u32]) -> Option<u32> {
    debug_assert!((1..=31).contains(&w));
    let (b, wu) = (BLOCK_THREADS as usize, w as usize);
    let mask = (1u64 << w) - 1;
    let mut wide = None;
    for (g, group) in values.chunks(BITS_GROUP_ROWS).enumerate() {
        let words = &mut out[g * b * wu..(g + 1) * b * wu];
        for t in 0..b.min(group.len()) {
            // Stream t: the group's rows t, t + b, t + 2b, … (at most 32 of them).
            let (mut acc, mut held, mut j) = (0u64, 0u32, 0usize);
            for &v in group[t..].iter().step_by(b) {
                if u64::from(v) > mask && wide.is_none() {
                    wide = Some(v);
                }
                acc |= (u64::from(v) & mask) << held;
                held += w;
                if held >= 32 {
                    words[j * b + t] = acc as u32;
                    acc >>= 32;
                    held -= 32;
                    j += 1;
                }
            }
            if held > 0 {
                words[j * b + t] = acc as u32;
            }
        }
    }
    wide
}

/// Row `r`'s distance in words packed by [`pack_bits`] (what `tessera_bits_get` reads).
pub fn unpack_bit(words: &[u32], w: u32, r: usize) -> u32 {
    let (k, s) = bit_place(r, w);
    let lo = u64::from(words[k]) >> s;
    let hi = if s + w > 32 { u64::from(words[k + BLOCK_THREADS as usize]) << (32 - s) } else { 0 };
    ((lo | hi) & ((1u64 << w) - 1)) as u32
}

/// Runs starting in `rows`, a part of a column starting at a multiple of 32 rows whose
/// row before is `prev` (None at the column's start): see [`Narrow::Runs`].
pub fn count_runs<T: PartialEq>(rows: &[T], prev: Option<&T>) -> usize {
    let first = rows.first().is_some_and(|v| prev != Some(v));
    usize::from(first) + rows.windows(2).filter(|w| w[0] != w[1]).count()
}

/// Lays out part `rows` of a column of runs ([`Narrow::Runs`], read by `tessera_runs_get`
/// in `tiles.cuh`; [`count_runs`] gives the part's runs): `runs_before` runs start
/// before it, `prev` is the row before it. Writes the part's directory (two words a 32
/// rows: bit `j` of the first set where row `j` of the 32, `j ≥ 1`, starts a run; the
/// second the number of the run holding row 0 of the 32) and the values of the runs
/// starting in it, in order; row `j` of 32 is then run `second + popcount(first & (2^(j+1)
/// − 1))`. `rows` must start at a multiple of 32 rows, `directory` hold `2 ×
/// ceil(rows / 32)` words (zero), `values` the part's runs.
pub fn fill_runs<T: Copy + PartialEq>(rows: &[T], prev: Option<&T>, runs_before: u32, directory: &mut [u32], values: &mut [T]) {
    // Runs started so far in this part. Each row's value is written at the slot of the
    // run it would start, whether or not it starts one (the next start overwrites it), and
    // a block's starts are gathered in a register: the loop does not branch on where runs
    // start (SSB SF 100's dates start one every 4 rows or so). Counting and laying out
    // such a column of 600 M rows a row at a time took 0.29–0.33 s on the H200's 16-core
    // host (`gpu-2026-12-01f` run 4).
    let mut started = 0usize;
    let mut last = prev.copied();
    for (k, block) in rows.chunks(32).enumerate() {
        let at_start = started;
        let mut starts = 0u32;
        for (j, &v) in block.iter().enumerate() {
            let new = last != Some(v);
            if let Some(slot) = values.get_mut(started) {
                *slot = v;
            }
            started += usize::from(new);
            starts |= u32::from(new) << j;
            last = Some(v);
        }
        // The run holding the block's first row (wrapping: the column's first row starts
        // run 0), then where the block's other rows start one.
        directory[2 * k + 1] = runs_before.wrapping_add((at_start + (starts & 1) as usize) as u32).wrapping_sub(1);
        directory[2 * k] = starts & !1;
    }
}

/// A column's `distances` as runs ([`Narrow::Runs`]): the directory (two words a 32
/// rows, then [`RUNS_DIRECTORY_PAD`] zero words) and each run's value (at least one), laid out in parts of whole
/// 32 rows on up to `threads` threads: the parts' runs counted ([`count_runs`]), then
/// laid out ([`fill_runs`]). An error where run numbers would pass 32 bits.
pub fn runs_of<T: Copy + PartialEq + Default + Send + Sync>(distances: &[T], threads: usize) -> Result<(Vec<u32>, Vec<T>), String> {
    let part = distances.len().div_ceil(threads.max(1)).div_ceil(32).max(1) * 32;
    let parts: Vec<&[T]> = distances.chunks(part).collect();
    let prev = |k: usize| if k == 0 { None } else { distances.get(k * part - 1) };
    let counts: Vec<usize> = std::thread::scope(|s| {
        let counters: Vec<_> = parts.iter().enumerate().map(|(k, p)| s.spawn(move || count_runs(p, prev(k)))).collect();
        counters.into_iter().map(|c| c.join().map_err(|_| "a run-counting thread panicked".to_string())).collect::<Result<_, _>>()
    })?;
    let runs: usize = counts.iter().sum();
    if u32::try_from(runs).is_err() {
        return Err(format!("{runs} runs, more than 32-bit run numbers hold"));
    }
    let mut directory = vec![0u32; 2 * distances.len().div_ceil(32) + RUNS_DIRECTORY_PAD];
    let mut values = vec![T::default(); runs.max(1)];
    std::thread::scope(|s| {
        let (mut dir, mut vals, mut before) = (directory.as_mut_slice(), values.as_mut_slice(), 0usize);
        let mut fillers = Vec::with_capacity(parts.len());
        for (k, (p, &n)) in parts.iter().zip(&counts).enumerate() {
            let (dn, vn) = ((2 * p.len().div_ceil(32)).min(dir.len()), n.min(vals.len()));
            let (d, rest) = std::mem::take(&mut dir).split_at_mut(dn);
            let (v, more) = std::mem::take(&mut vals).split_at_mut(vn);
            (dir, vals) = (rest, more);
            let first = before as u32;
            fillers.push(s.spawn(move || fill_runs(p, prev(k), first, d, v)));
            before += n;
        }
        fillers.into_iter().try_for_each(|f| f.join().map_err(|_| "a run-laying thread panicked".to_string()))
    })?;
    Ok((directory, values))
}

/// Row `r` of a column of runs laid out by [`fill_runs`] (what `tessera_runs_get` reads).
pub fn run_value<T: Copy>(directory: &[u32], values: &[T], r: usize) -> T {
    let (bits, head) = (directory[2 * (r / 32)], directory[2 * (r / 32) + 1]);
    let upto = u32::MAX >> (31 - r % 32);
    values[head as usize + (bits & upto).count_ones() as usize]
}

/// The words a kernel thread loads for a tile's `items` values of a column bit-packed `w`
/// bits a row (`tessera_bits_loads` in `tiles.cuh`): enough for them from any bit a
/// tile's values can start at (a multiple of `gcd(items × w, 32)`).
pub fn bit_loads(w: u32, items: u32) -> u32 {
    let bits = items * w;
    let g = 1u32 << bits.trailing_zeros().min(5);
    if g == 32 { bits / 32 } else { (32 - g + bits - 1) / 32 + 1 }
}

impl GpuColumn {
    /// A plain column of `width`, with its dictionary if any, without NULLs.
    pub fn plain(width: Width, dictionary: Option<DictRef>) -> GpuColumn {
        GpuColumn { width, dictionary, packed: false, nullable: false, narrow: None }
    }

    /// Bits a row takes where the column lies (a packed column's are judged by its
    /// width: see `scan::sector_share`).
    pub fn stored_bits(&self) -> usize {
        self.narrow.map_or(self.width.bytes() * 8, |n| n.row_bits() as usize)
    }

    /// The bits a value of a column bit-packed narrowed ([`Narrow::Bits`]); None for any
    /// other column (one in packed tiles is never narrowed).
    pub fn bit_width(&self) -> Option<u32> {
        match self.narrow {
            Some(Narrow::Bits(w)) if !self.packed => Some(u32::from(w)),
            _ => None,
        }
    }

    /// Whether the column lies in runs ([`Narrow::Runs`]; one in packed tiles never does).
    pub fn in_runs(&self) -> bool {
        !self.packed && matches!(self.narrow, Some(Narrow::Runs { .. }))
    }

    /// [`GpuColumn::plain`] with a validity bitmap (its data holds NULLs).
    pub fn nullable(width: Width, dictionary: Option<DictRef>) -> GpuColumn {
        GpuColumn { nullable: true, ..GpuColumn::plain(width, dictionary) }
    }
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

/// A hash table built on the GPU: dense (slot = key − `min`, a membership bitmap) or,
/// when `hashed`, open addressing over packed keys (`cuda/hash.cuh`); with one row per
/// key, or chains of rows (`chain`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuTable {
    /// Smallest key (dense tables).
    pub min: i64,
    /// Slots (a power of two when hashed).
    pub slots: usize,
    /// How the keys pack, for an open-addressing table.
    pub hashed: Option<KeyPack>,
    /// Payload columns (build pipeline's sink-input layout order, all of them). A
    /// narrowed one ([`GpuColumn::narrow`], a byte form) holds each value less its
    /// reference in [`GpuTable::payload_refs`], a constant of the kernels.
    pub payload: Vec<GpuColumn>,
    /// Per payload column, the reference its narrowed values are distances from (0 for
    /// one kept at its width).
    pub payload_refs: Vec<i64>,
    /// Estimated share of the build side's table that is in the table, per mille: the
    /// share of probe rows a foreign-key join lets through. Orders the probes.
    pub pass_permille: u32,
    /// A membership table: one entry per distinct key however often the build side
    /// repeats it, no payload; only semi/anti probes without a residual may read it.
    pub membership: bool,
    /// A table of repeated keys (a 1:N join's build side): the build source's rows. Its
    /// payload arrays are indexed by build row (that many long), and each key's rows
    /// form a chain: `heads[slot]` holds its last row, `next[row]` the row before it,
    /// −1 ends it (`cuda/hash.cuh`). None: one row per key, payload indexed by slot.
    pub chain: Option<usize>,
}

/// The arrays a sink writes (the kernel's `Out` parameters, see `abi.rs`).
#[derive(Debug, Clone, PartialEq)]
pub enum SinkLayout {
    /// Dense: `rows` then one array per payload column, `slots` long, then the
    /// membership bitmap, `uint32_t[bitmap_words(slots)]`. Hashed: the keys
    /// (`uint64_t[slots]`, all `EMPTY_KEY` before the launch), then the payload arrays.
    /// Chained (`table.chain`): hashed tables' keys, then `int32_t heads[slots + 1]`
    /// and `int32_t next[rows]` (heads all −1 before the launch), then the payload
    /// arrays, `rows` long.
    Build {
        /// The table's shape.
        table: GpuTable,
    },
    /// Per aggregate one array of `groups` accumulators, then `uint32_t seen[groups]`;
    /// with a hash table, then its keys (`uint64_t[groups]`, all `EMPTY_KEY` before).
    Aggregate {
        /// Group slots (1 for a scalar aggregate).
        groups: usize,
        /// Per aggregate its accumulator kind.
        accumulators: Vec<Accumulator>,
        /// Per group key of a perfect hash, in mixed-radix order (first key varies
        /// fastest); empty with a hash table.
        keys: Vec<KeyLayout>,
        /// A hash table's key packing (its slots are the groups).
        hashed: Option<KeyPack>,
        /// Where blocks accumulate before merging into the global arrays.
        table: GroupTable,
        /// Copies of the global arrays blocks add into (1: none), each `groups` long,
        /// folded into the first after the kernel (`aggregate::global_copies`).
        global_copies: usize,
        /// With copies: the array (aggregate by aggregate, each's `Accumulator::arrays`
        /// in order) from which the fold sets the seen flags, nonzero exactly for the
        /// groups present; the kernel then leaves them alone (`aggregate::presence`).
        seen_from: Option<usize>,
        /// Per aggregate, the dictionary of its values when they are codes: a dependent
        /// group key's (a MIN of them, see `tessera_ir::ReducedKeys`), or a MIN/MAX of a
        /// dictionary-encoded string (sorted dictionaries: codes compare like strings).
        value_dicts: Vec<Option<DictRef>>,
    },
    /// `uint32_t marks[rows]`, zero before the launch: nonzero where a build row of the
    /// table a mark sink reads was matched (see `mark.rs`).
    Marks {
        /// The table's build rows (the length of its chain arrays).
        rows: usize,
    },
    /// `unsigned long long count`, then per column of the sink's input an array as long
    /// as the input: the rows that reach the sink, compacted, in no particular order.
    Materialize {
        /// The columns' widths and dictionaries.
        columns: Vec<GpuColumn>,
    },
}
