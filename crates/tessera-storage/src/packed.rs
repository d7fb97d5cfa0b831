//! A column's tiles as one array a reader decodes any row of by itself: every tile
//! frame-of-reference bit-packed. This is the form GPU kernels read (`tiles.cuh` in
//! tessera-cuda decodes it where a kernel loads a column), made from the stored tiles:
//! Constant and Bitpack tiles are copied as stored, Delta and Rle tiles (whose rows
//! depend on the rows before) are re-packed, and so is a file's last partial tile when
//! another file follows (the form's tile `t` holds rows `[t * 2048, (t + 1) * 2048)`).
//!
//! Layout, in 64-bit words: `2 × tiles` header words, then the tiles' data:
//!
//! - `words[2t]`: tile `t`'s frame of reference (an `i64`);
//! - `words[2t + 1]`: `offset << 20 | data words << 8 | RUNS? | bits`: the offset (in
//!   words, from the array's start) of the tile's data, how many words that data takes
//!   (at most 2049, so that a kernel can copy a tile's data without reading anything
//!   else), whether its values are runs ([`RUNS`], 0x80) and their width (0 to 64; a
//!   tile of 0 bits, all its rows the reference, points at word 0 and takes none);
//! - each tile's data starts on an even word (a word of padding before it where needed),
//!   so that a GPU kernel copies it 16 bytes at a time;
//! - the data of a tile of single values: value `i` is `bits` wide at bit `i × bits` of
//!   its words, LSB first; one spare word follows;
//! - the data of a tile of runs (chosen where it is smaller: keys repeated over an
//!   order's lines, dates of an order): [`CHUNKS`] chunk words, one per 32 rows (bit
//!   `j` of the low half set where row `j` of the chunk starts a run, `j` ≥ 1; the high
//!   half the run holding the chunk's first row), then the runs' values packed as above,
//!   in at most [`RUN_VALUE_WORDS`] words. Row `j` of a chunk is run
//!   `high + popcount(low & (2^(j+1) − 1))`;
//! - [`PAD_WORDS`] zero words at the end.

use tessera_common::Result;

use crate::tiles::{self, FLAG_NULLS, Scheme, TILE_ROWS, TileHeader};

/// The flag of a tile of runs in the low byte of its header's second word.
pub const RUNS: u64 = 0x80;

/// Chunk words of a tile of runs: one per 32 rows of a full tile (a partial last tile
/// keeps them all, so its runs' values start at the same place).
pub const CHUNKS: usize = TILE_ROWS / 32;

/// The most words a tile's run values may take (with their spare word): a kernel copies
/// all of them into shared memory for each part of the tile it reads (`tiles.cuh`,
/// `tessera_stage`), so the bound sizes its buffers. An order's repeated keys or dates
/// take far less (SSB's `lo_custkey` at SF 100: about 512 runs of 22 bits, 177 words); a
/// tile whose runs would take more is packed as single values.
pub const RUN_VALUE_WORDS: usize = 256;

/// Where a tile's data offset starts in its header's second word, and where its word
/// count does (12 bits).
pub const OFFSET_SHIFT: u32 = 20;
/// See [`OFFSET_SHIFT`].
pub const WORDS_SHIFT: u32 = 8;

/// Spare words at the end of the packed form: a GPU warp loads the 32-bit words of its
/// 32 rows whole (up to 64 of them), also past a column's last row.
pub const PAD_WORDS: usize = 32;

/// A column in the packed form (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedColumn {
    /// Header words, then packed values.
    pub words: Vec<u64>,
    /// Rows of the column.
    pub rows: usize,
}

impl PackedColumn {
    /// Tiles of the column.
    pub fn tiles(&self) -> usize {
        self.rows.div_ceil(TILE_ROWS)
    }

    /// Row `row`, decoded the way a GPU kernel decodes it (`tessera_unpack`).
    pub fn get(&self, row: usize) -> i64 {
        let t = row / TILE_ROWS;
        let reference = self.words[2 * t] as i64;
        let meta = self.words[2 * t + 1];
        let bits = (meta & 0x7f) as u32;
        let offset = meta >> OFFSET_SHIFT;
        let (at, index) = if meta & RUNS != 0 {
            let o = row % TILE_ROWS;
            let chunk = self.words[offset as usize + o / 32];
            let upto = ((2u64 << (o % 32)) - 1) as u32;
            (offset + CHUNKS as u64, (chunk >> 32) + (chunk as u32 & upto).count_ones() as u64)
        } else {
            (offset, (row % TILE_ROWS) as u64)
        };
        let pos = index * bits as u64;
        let w = (at + (pos >> 6)) as usize;
        let off = (pos & 63) as u32;
        let mut v = self.words[w] >> off;
        if off + bits > 64 {
            v |= self.words[w + 1] << (64 - off);
        }
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        reference.wrapping_add((v & mask) as i64)
    }
}

/// Whether a stored tile can be part of a packed column: integers (or dates, decimals)
/// without NULLs; not raw values (floats, 128-bit decimals) nor strings.
pub fn packable(h: &TileHeader) -> bool {
    h.scheme != Scheme::Plain && h.flags & (FLAG_NULLS | tiles::FLAG_CODES | tiles::FLAG_LENGTHS) == 0
}

/// A stored tile: its first row in the column, its header and its bytes.
pub type StoredTile<'a> = (usize, TileHeader, &'a [u8]);

/// Builds the packed form from a column's stored tiles (in row order, covering rows
/// `0..rows`); `None` when a tile cannot be packed (it has NULLs, or raw values: floats,
/// 128-bit decimals, strings). The form's tiles are made in parallel, a thread a core.
pub fn pack_column(stored: &[StoredTile<'_>], rows: usize) -> Result<Option<PackedColumn>> {
    if !stored.iter().all(|(_, h, _)| packable(h)) {
        return Ok(None);
    }
    let covered = stored.iter().try_fold(0usize, |at, (start, h, _)| (*start == at).then_some(at + h.rows as usize));
    if covered != Some(rows) {
        return Err(corrupt(format!("the tiles of a column of {rows} rows do not cover it")));
    }
    let tiles = rows.div_ceil(TILE_ROWS);
    let threads = std::thread::available_parallelism().map(|t| t.get()).unwrap_or(1).clamp(1, tiles.max(1));
    let per = tiles.div_ceil(threads).max(1);
    // Each thread packs a run of windows into its own data; offsets are fixed up after.
    let parts: Vec<Result<(Vec<Window>, Vec<u64>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..tiles)
            .step_by(per)
            .map(|first| s.spawn(move || pack_windows(stored, rows, first..(first + per).min(tiles))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(corrupt("a packing thread failed".into())))).collect()
    });
    let base = 2 * tiles as u64;
    let mut words = Vec::with_capacity(2 * tiles);
    let mut data = Vec::new();
    for part in parts {
        let (headers, part_data) = part?;
        let shift = base + data.len() as u64;
        for Window { reference, offset, words: n, bits } in headers {
            words.push(reference as u64);
            // A tile of no bits reads no value word: point it at word 0, which exists.
            let at = if bits == 0 { 0 } else { shift + offset };
            words.push(at << OFFSET_SHIFT | (n as u64) << WORDS_SHIFT | bits as u64);
        }
        data.extend(part_data);
    }
    words.extend(data);
    words.extend([0; PAD_WORDS]);
    Ok(Some(PackedColumn { words, rows }))
}

/// A packed window's header entry: its frame of reference, the offset and length (in
/// words) of its data, and its width (with [`RUNS`] for runs).
struct Window {
    reference: i64,
    offset: u64,
    words: u16,
    bits: u8,
}

/// Packs windows `windows` (each `TILE_ROWS` rows of the column, the last maybe fewer):
/// a window that is one stored Constant or Bitpack tile is copied as stored, any other
/// is decoded from the tiles covering it and packed.
fn pack_windows(stored: &[StoredTile<'_>], rows: usize, windows: std::ops::Range<usize>) -> Result<(Vec<Window>, Vec<u64>)> {
    let mut headers = Vec::with_capacity(windows.len());
    let mut data = Vec::new();
    let mut values: Vec<i64> = Vec::with_capacity(2 * TILE_ROWS);
    for w in windows {
        let (lo, hi) = (w * TILE_ROWS, ((w + 1) * TILE_ROWS).min(rows));
        // The first stored tile holding row `lo`.
        let mut k = stored.partition_point(|(start, h, _)| start + h.rows as usize <= lo);
        let (start, h, bytes) = stored[k];
        // Each window's data starts on an even word (see the module doc): the part's own
        // data starts on one, as does the array's first (after `2 × tiles` header words).
        if data.len() % 2 == 1 {
            data.push(0);
        }
        if start == lo && start + h.rows as usize == hi && matches!(h.scheme, Scheme::Constant | Scheme::Bitpack) {
            let bits = if h.scheme == Scheme::Constant { 0 } else { h.bits };
            let n = hi - lo;
            let nwords = if bits == 0 { 0 } else { (n * bits as usize).div_ceil(64) + 1 };
            headers.push(Window { reference: h.reference, offset: data.len() as u64, words: nwords as u16, bits });
            let raw = bytes.get(..nwords * 8).ok_or_else(|| corrupt("truncated packed values".into()))?;
            data.extend(raw.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])));
            continue;
        }
        values.clear();
        let mut first = start;
        while first < hi {
            let (start, h, bytes) = stored[k];
            tiles::decode_ints(&h, bytes, &mut values)?;
            first = start + h.rows as usize;
            k += 1;
        }
        // `values` holds rows from the first covering tile's start on.
        let skip = lo - start;
        headers.push(pack_window(&values[skip..skip + (hi - lo)], &mut data));
    }
    if data.len() % 2 == 1 {
        data.push(0);
    }
    Ok((headers, data))
}

fn corrupt(what: String) -> tessera_common::TesseraError {
    tessera_common::TesseraError::Execution(format!("corrupt data file: {what}"))
}

/// Packs one window of values (frame of reference, as single values or as runs,
/// whichever takes fewer words, runs only within [`RUN_VALUE_WORDS`]); returns its header
/// entry.
fn pack_window(values: &[i64], data: &mut Vec<u64>) -> Window {
    let min = values.iter().copied().min().unwrap_or(0);
    let max = values.iter().copied().max().unwrap_or(0);
    let range = max.wrapping_sub(min) as u64;
    let bits = (64 - range.leading_zeros()) as u8;
    let offset = data.len() as u64;
    if bits == 0 {
        return Window { reference: min, offset, words: 0, bits: 0 };
    }
    let single_words = (values.len() * bits as usize).div_ceil(64) + 1;
    let runs = 1 + values.windows(2).filter(|w| w[0] != w[1]).count();
    let run_words = (runs * bits as usize).div_ceil(64) + 1;
    if runs_allowed() && CHUNKS + run_words < single_words && run_words <= RUN_VALUE_WORDS {
        // Chunk words: where runs start, and the run holding each chunk's first row.
        let mut chunk_words = vec![0u64; CHUNKS];
        let mut run = 0u64;
        for i in 0..values.len() {
            if i > 0 && values[i] != values[i - 1] {
                run += 1;
                if i % 32 != 0 {
                    chunk_words[i / 32] |= 1 << (i % 32);
                }
            }
            if i % 32 == 0 {
                chunk_words[i / 32] |= run << 32;
            }
        }
        data.extend(chunk_words);
        let mut run_values = values.to_vec();
        run_values.dedup();
        pack_bits(run_values.into_iter(), min, bits, data);
        Window { reference: min, offset, words: (CHUNKS + run_words) as u16, bits: bits | RUNS as u8 }
    } else {
        pack_bits(values.iter().copied(), min, bits, data);
        Window { reference: min, offset, words: single_words as u16, bits }
    }
}

/// Whether tiles may be packed as runs: `TESSERA_EXP_RUNS=0` packs every tile as single
/// values, to measure what runs cost the kernels that decode them against the bytes they
/// save.
fn runs_allowed() -> bool {
    static RUNS_ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RUNS_ALLOWED.get_or_init(|| std::env::var("TESSERA_EXP_RUNS").map_or(true, |v| v != "0"))
}

/// Appends `values` less `min`, `bits` wide each, LSB first, and a spare word.
fn pack_bits(values: impl ExactSizeIterator<Item = i64>, min: i64, bits: u8, data: &mut Vec<u64>) {
    let start = data.len();
    data.resize(start + (values.len() * bits as usize).div_ceil(64) + 1, 0);
    let b = bits as usize;
    for (i, v) in values.enumerate() {
        let x = v.wrapping_sub(min) as u64;
        let (w, off) = (start + i * b / 64, (i * b) % 64);
        data[w] |= x << off;
        if off + b > 64 {
            data[w + 1] |= x >> (64 - off);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(parts: &[Vec<i64>]) -> Vec<(TileHeader, Vec<u8>)> {
        parts
            .iter()
            .map(|p| {
                let mut out = Vec::new();
                let mut h = tiles::encode_ints(p, None, &mut out);
                h.offset = 0;
                (h, out)
            })
            .collect()
    }

    fn with_starts(tiles: &[(TileHeader, Vec<u8>)]) -> Vec<StoredTile<'_>> {
        let mut at = 0;
        tiles
            .iter()
            .map(|(h, d)| {
                at += h.rows as usize;
                (at - h.rows as usize, *h, d.as_slice())
            })
            .collect()
    }

    fn check(parts: &[Vec<i64>]) -> PackedColumn {
        let tiles = stored(parts);
        let all: Vec<i64> = parts.iter().flatten().copied().collect();
        let p = pack_column(&with_starts(&tiles), all.len()).unwrap().unwrap();
        for (row, &v) in all.iter().enumerate() {
            assert_eq!(p.get(row), v, "row {row}");
        }
        // Each tile's header says exactly where its data lies: the tiles' data follow one
        // another, each from an even word, up to the spare words at the end; runs' values
        // stay within bounds.
        let mut at = 2 * p.tiles() as u64;
        for t in 0..p.tiles() {
            let meta = p.words[2 * t + 1];
            let (offset, words) = (meta >> OFFSET_SHIFT, (meta >> WORDS_SHIFT) & 0xfff);
            if meta & 0x7f == 0 {
                assert_eq!((offset, words), (0, 0), "tile {t} of no bits");
                continue;
            }
            at += at % 2;
            assert_eq!(offset, at, "tile {t}'s data");
            if meta & RUNS != 0 {
                assert!(words as usize <= CHUNKS + RUN_VALUE_WORDS, "tile {t}: {words} words of runs");
            }
            at += words;
        }
        assert_eq!((at + at % 2) as usize, p.words.len() - PAD_WORDS);
        p
    }

    #[test]
    fn every_scheme_and_partial_tiles_pack() {
        let full = TILE_ROWS as i64;
        let bitpack: Vec<i64> = (0..full).map(|i| (i * 7919) % 1000 - 500).collect();
        let delta: Vec<i64> = (0..full).map(|i| 10_000 + 3 * i).collect();
        let rle: Vec<i64> = (0..full).map(|i| i / 500).collect();
        let constant = vec![42; TILE_ROWS];
        let extremes: Vec<i64> = (0..full).map(|i| if i % 3 == 0 { i64::MIN } else { i64::MAX }).collect();
        let p = check(&[bitpack.clone(), delta.clone(), rle.clone(), constant.clone(), extremes.clone(), vec![1, 2, 3]]);
        assert_eq!(p.tiles(), 6);
        // A partial tile between files: later windows straddle the stored tiles.
        check(&[bitpack.clone(), vec![5; 100], delta.clone(), rle, vec![9; 7]]);
        check(&[vec![i64::MAX; 10], vec![i64::MIN; 3000 - TILE_ROWS], constant]);
        check(&[]);
    }

    /// Windows of repeated values become runs where that is smaller, decoded row by row
    /// like any other: runs across chunk boundaries, a run starting at a chunk's first
    /// row, runs of one row, 64-bit values, a partial last tile.
    #[test]
    fn repeated_values_pack_as_runs() {
        let mut rng = tiles::Rng(11);
        let mut orders = Vec::new();
        while orders.len() < 3 * TILE_ROWS + 100 {
            let (key, lines) = ((rng.next() % 3_000_000) as i64, 1 + rng.next() % 7);
            orders.extend(std::iter::repeat_n(key, lines as usize));
        }
        orders.truncate(3 * TILE_ROWS + 100);
        // As stored: tiles of TILE_ROWS rows, the last partial.
        let orders: Vec<Vec<i64>> = orders.chunks(TILE_ROWS).map(<[i64]>::to_vec).collect();
        let every_32: Vec<i64> = (0..TILE_ROWS as i64).map(|i| i / 32).collect();
        let extremes: Vec<i64> = (0..TILE_ROWS as i64).map(|i| if i / 5 % 2 == 0 { i64::MIN } else { i64::MAX }).collect();
        let all_runs_of_one: Vec<i64> = (0..TILE_ROWS as i64).map(|i| i % 2).collect();
        for parts in [orders, vec![every_32, extremes.clone(), all_runs_of_one], vec![(0..700i64).map(|i| (i / 50) * 1_000_000_007).collect()]] {
            let p = check(&parts);
            let runs = (0..p.tiles()).filter(|t| p.words[2 * t + 1] & RUNS != 0).count();
            let singles = (0..p.tiles()).filter(|t| p.words[2 * t + 1] & RUNS == 0).count();
            // Runs where they save words, single values where they do not (runs of one).
            assert!(runs >= 1, "{runs} tiles of runs, {singles} of single values");
        }
        let p = check(&[(0..TILE_ROWS as i64).map(|i| i % 2).collect()]);
        assert_eq!(p.words[1] & RUNS, 0, "runs of one row are single values");
    }

    #[test]
    fn tiles_with_nulls_or_raw_values_do_not_pack() {
        let mut out = Vec::new();
        let h = tiles::encode_ints(&[1, 2, 3], Some(&[true, false, true]), &mut out);
        assert!(pack_column(&[(0, h, out.as_slice())], 3).unwrap().is_none());
        let mut out = Vec::new();
        let h = tiles::encode_plain(&[0u8; 16], 64, 2, None, &mut out);
        assert!(pack_column(&[(0, h, out.as_slice())], 2).unwrap().is_none());
        // Tiles that leave a gap are an error.
        let mut out = Vec::new();
        let h = tiles::encode_ints(&[1, 2, 3], None, &mut out);
        assert!(pack_column(&[(0, h, out.as_slice()), (5, h, out.as_slice())], 6).is_err());
    }
}
