//! Lightweight encodings of one tile of integers: the unit the store's column files are
//! made of (see [`crate::colfile`]).
//!
//! A tile holds up to [`TILE_ROWS`] values of one column, encoded with the smallest of:
//!
//! - **Constant**: every value equal (the header's reference; no data);
//! - **Bitpack** (frame of reference + bit-packing): `value = reference + packed[i]`,
//!   each packed value `bits` wide, LSB first in little-endian 64-bit words: any row is
//!   one shift and mask away, which is what a GPU thread decoding its own item needs;
//! - **Delta**: sorted or nearly sorted keys, `value[i] = value[i-1] + base + packed[i-1]`
//!   (the deltas themselves frame-of-reference bit-packed);
//! - **Rle**: runs, with the run values bit-packed against the reference and each run's
//!   end as a `u16`;
//! - **Plain**: raw little-endian values (floats, 128-bit decimals).
//!
//! Every tile keeps the minimum and maximum of its non-NULL values in its header (a zone
//! map) and, when it has NULLs, a validity bitmap (Arrow's layout) after its values. The
//! encoder picks by encoded size; ties go to Bitpack, whose rows decode independently.

use tessera_common::{Result, TesseraError};

/// Rows of a full tile: 2048, a multiple of every GPU kernel tile (128 threads × 1 to
/// 16 items a thread) and 1/32 of a loaded batch (64 Ki rows), so tiles never straddle
/// either. A 64-byte header per 2048 rows costs a quarter bit a row.
pub const TILE_ROWS: usize = 2048;

/// Size of a serialized [`TileHeader`].
pub const HEADER_BYTES: usize = 64;

/// How a tile's values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Scheme {
    /// All values equal to the reference.
    Constant = 0,
    /// Frame of reference + bit-packing.
    Bitpack = 1,
    /// First value, then frame-of-reference bit-packed deltas.
    Delta = 2,
    /// Run-length: bit-packed run values and `u16` run ends.
    Rle = 3,
    /// Raw values `bits` wide (8, 16, 32, 64 or 128).
    Plain = 4,
}

impl Scheme {
    /// The scheme's name, as the storage report shows it.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Constant => "constant",
            Scheme::Bitpack => "bitpack",
            Scheme::Delta => "delta",
            Scheme::Rle => "rle",
            Scheme::Plain => "plain",
        }
    }

    fn from_u8(v: u8) -> Result<Scheme> {
        Ok(match v {
            0 => Scheme::Constant,
            1 => Scheme::Bitpack,
            2 => Scheme::Delta,
            3 => Scheme::Rle,
            4 => Scheme::Plain,
            _ => return Err(corrupt(format!("unknown tile scheme {v}"))),
        })
    }

    /// All schemes, in their number's order.
    pub const ALL: [Scheme; 5] = [Scheme::Constant, Scheme::Bitpack, Scheme::Delta, Scheme::Rle, Scheme::Plain];
}

/// Header flag: a validity bitmap follows the values.
pub const FLAG_NULLS: u8 = 1;
/// Header flag: no value is valid (min and max mean nothing).
pub const FLAG_ALL_NULL: u8 = 2;
/// Header flag: min and max are not kept (floats, 128-bit values).
pub const FLAG_NO_ZONE: u8 = 4;
/// Header flag (strings): the values are codes into the file's dictionary.
pub const FLAG_CODES: u8 = 8;
/// Header flag (strings): the values are lengths, and the strings' bytes follow.
pub const FLAG_LENGTHS: u8 = 16;
/// Header flag (strings, with [`FLAG_LENGTHS`]): the strings' bytes after the lengths
/// (and the validity bitmap) are one zstd frame, which decompresses to exactly the
/// lengths' sum (format 3 on; see `colfile`). The lengths themselves stay bit-packed.
pub const FLAG_ZSTD: u8 = 32;
/// Every flag a tile header may carry: a header with another bit is not understood.
const FLAGS_KNOWN: u8 = FLAG_NULLS | FLAG_ALL_NULL | FLAG_NO_ZONE | FLAG_CODES | FLAG_LENGTHS | FLAG_ZSTD;

/// The fixed-size description of one tile, stored in an array before the tiles' data so
/// that a reader (or a GPU kernel) finds any tile without parsing the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileHeader {
    /// Encoding of the values.
    pub scheme: Scheme,
    /// Bit width of the packed values (Bitpack, Delta, Rle) or of a raw value (Plain).
    pub bits: u8,
    /// `FLAG_*` bits.
    pub flags: u8,
    /// Rows in the tile (at most [`TILE_ROWS`]).
    pub rows: u32,
    /// Rle: the number of runs.
    pub runs: u32,
    /// Start of the tile's data, relative to the column segment.
    pub offset: u64,
    /// Bytes of the tile's data (values, bitmap, string bytes).
    pub len: u64,
    /// Constant: the value; Bitpack, Rle: the frame of reference; Delta: the first value.
    pub reference: i64,
    /// Delta: the smallest delta, added to every packed delta.
    pub delta_base: i64,
    /// Smallest non-NULL value (zone map).
    pub min: i64,
    /// Largest non-NULL value (zone map).
    pub max: i64,
}

impl TileHeader {
    /// The header as stored (little-endian).
    pub fn to_bytes(&self) -> [u8; HEADER_BYTES] {
        let mut b = [0u8; HEADER_BYTES];
        b[0] = self.scheme as u8;
        b[1] = self.bits;
        b[2] = self.flags;
        b[4..8].copy_from_slice(&self.rows.to_le_bytes());
        b[8..12].copy_from_slice(&self.runs.to_le_bytes());
        b[16..24].copy_from_slice(&self.offset.to_le_bytes());
        b[24..32].copy_from_slice(&self.len.to_le_bytes());
        b[32..40].copy_from_slice(&self.reference.to_le_bytes());
        b[40..48].copy_from_slice(&self.delta_base.to_le_bytes());
        b[48..56].copy_from_slice(&self.min.to_le_bytes());
        b[56..64].copy_from_slice(&self.max.to_le_bytes());
        b
    }

    /// Reads a header; errors when its fields cannot belong to a tile.
    pub fn from_bytes(b: &[u8]) -> Result<TileHeader> {
        if b.len() < HEADER_BYTES {
            return Err(corrupt("truncated tile header".into()));
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(w)
        };
        let h = TileHeader {
            scheme: Scheme::from_u8(b[0])?,
            bits: b[1],
            flags: b[2],
            rows: u32_at(4),
            runs: u32_at(8),
            offset: u64_at(16),
            len: u64_at(24),
            reference: u64_at(32) as i64,
            delta_base: u64_at(40) as i64,
            min: u64_at(48) as i64,
            max: u64_at(56) as i64,
        };
        let bits_ok = match h.scheme {
            Scheme::Constant => true,
            Scheme::Plain => matches!(h.bits, 8 | 16 | 32 | 64 | 128),
            _ => h.bits <= 64,
        };
        let flags_ok = h.flags & !FLAGS_KNOWN == 0 && (h.flags & FLAG_ZSTD == 0 || h.flags & FLAG_LENGTHS != 0);
        if h.rows as usize > TILE_ROWS || !bits_ok || h.runs as usize > TILE_ROWS || !flags_ok {
            return Err(corrupt(format!("impossible tile header {h:?}")));
        }
        Ok(h)
    }

    /// Bytes of the encoded values (before the validity bitmap; for strings stored as
    /// lengths, the lengths).
    pub fn values_bytes(&self) -> usize {
        let rows = self.rows as usize;
        match self.scheme {
            Scheme::Constant => 0,
            Scheme::Bitpack => packed_bytes(rows, self.bits),
            Scheme::Delta => packed_bytes(rows.saturating_sub(1), self.bits),
            Scheme::Rle => packed_bytes(self.runs as usize, self.bits) + pad8(self.runs as usize * 2),
            Scheme::Plain => pad8(rows * self.bits as usize / 8),
        }
    }

    /// Bytes of the validity bitmap (0 without NULLs).
    pub fn bitmap_bytes(&self) -> usize {
        if self.flags & FLAG_NULLS != 0 { pad8((self.rows as usize).div_ceil(8)) } else { 0 }
    }
}

fn corrupt(what: String) -> TesseraError {
    TesseraError::Execution(format!("corrupt data file: {what}"))
}

/// `n` rounded up to a multiple of 8.
pub fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Bytes of `n` values packed `bits` wide, plus one spare word so that a decoder may
/// always read the word after a value's first (no branch at the end).
fn packed_bytes(n: usize, bits: u8) -> usize {
    if bits == 0 || n == 0 { 0 } else { ((n * bits as usize).div_ceil(64) + 1) * 8 }
}

/// Bits needed for unsigned values up to `range`.
fn bits_for(range: u64) -> u8 {
    (64 - range.leading_zeros()) as u8
}

/// Packs `values` (each below 2^bits) LSB first into little-endian words.
fn pack(values: impl Iterator<Item = u64>, n: usize, bits: u8, out: &mut Vec<u8>) {
    if bits == 0 || n == 0 {
        return;
    }
    let mut words = vec![0u64; packed_bytes(n, bits) / 8];
    let b = bits as usize;
    for (i, v) in values.enumerate() {
        let pos = i * b;
        let (w, off) = (pos / 64, pos % 64);
        words[w] |= v << off;
        if off + b > 64 {
            words[w + 1] |= v >> (64 - off);
        }
    }
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// Reads the packed words of a tile's data.
fn words(data: &[u8], n: usize, bits: u8) -> Result<Vec<u64>> {
    let bytes = packed_bytes(n, bits);
    let d = data.get(..bytes).ok_or_else(|| corrupt("truncated packed values".into()))?;
    Ok(d.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect())
}

/// Value `i` of values packed `bits` (1 to 64) wide.
#[inline(always)]
fn unpack_one(words: &[u64], i: usize, bits: u8) -> u64 {
    let b = bits as usize;
    let pos = i * b;
    let (w, off) = (pos / 64, pos % 64);
    let mask = if b == 64 { u64::MAX } else { (1u64 << b) - 1 };
    let lo = words[w] >> off;
    // The spare word makes words[w + 1] always readable; a shift by 64 is avoided.
    let hi = if off == 0 { 0 } else { words[w + 1] << (64 - off) };
    (lo | hi) & mask
}

/// Appends `n` values packed `bits` (1 to 64) wide, each plus `reference`: 64 values at a
/// time (exactly `bits` words) by a loop the compiler unrolls for each width, the rest
/// one by one.
fn unpack(words: &[u64], n: usize, bits: u8, reference: i64, out: &mut Vec<i64>) {
    macro_rules! widths {
        ($($b:literal)*) => {
            match bits {
                $($b => unpack_fixed::<$b>(words, n, reference, out),)*
                _ => out.extend((0..n).map(|i| reference.wrapping_add(unpack_one(words, i, bits) as i64))),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
            33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64);
}

#[inline(always)]
fn unpack_fixed<const B: usize>(words: &[u64], n: usize, reference: i64, out: &mut Vec<i64>) {
    let mask = if B == 64 { u64::MAX } else { (1u64 << B) - 1 };
    let groups = n / 64;
    for g in 0..groups {
        // 64 values of B bits are B words; the word after them always exists (the next
        // group's first, or the spare word).
        let w = &words[g * B..g * B + B + 1];
        let mut block = [0i64; 64];
        for (i, v) in block.iter_mut().enumerate() {
            let pos = i * B;
            let (k, off) = (pos / 64, pos % 64);
            let lo = w[k] >> off;
            let hi = if off != 0 && off + B > 64 { w[k + 1] << (64 - off) } else { 0 };
            *v = reference.wrapping_add(((lo | hi) & mask) as i64);
        }
        out.extend_from_slice(&block);
    }
    out.extend((groups * 64..n).map(|i| reference.wrapping_add(unpack_one(words, i, B as u8) as i64)));
}

/// Encodes one tile of integers (`valid[i]` false for NULLs, whose value is ignored) and
/// appends its data to `out`; returns the header with `offset` and `len` set from `out`.
pub fn encode_ints(values: &[i64], valid: Option<&[bool]>, out: &mut Vec<u8>) -> TileHeader {
    let n = values.len();
    debug_assert!(n <= TILE_ROWS);
    let is_valid = |i: usize| valid.is_none_or(|v| v[i]);
    let (mut min, mut max, mut any) = (i64::MAX, i64::MIN, false);
    for (i, &v) in values.iter().enumerate() {
        if is_valid(i) {
            min = min.min(v);
            max = max.max(v);
            any = true;
        }
    }
    if !any {
        min = 0;
        max = 0;
    }
    let has_nulls = valid.is_some_and(|v| v.iter().any(|&x| !x));
    // NULLs take the minimum, so they widen neither the range nor the runs much.
    let v: Vec<i64> = if has_nulls { (0..n).map(|i| if is_valid(i) { values[i] } else { min }).collect() } else { values.to_vec() };
    let mut h = TileHeader {
        scheme: Scheme::Constant,
        bits: 0,
        flags: if any { 0 } else { FLAG_ALL_NULL } | if has_nulls { FLAG_NULLS } else { 0 },
        rows: n as u32,
        runs: 0,
        offset: out.len() as u64,
        len: 0,
        reference: min,
        delta_base: 0,
        min,
        max,
    };
    if min != max {
        // Candidates by size; Bitpack first, so that it wins ties.
        let range = max.wrapping_sub(min) as u64;
        let for_bits = bits_for(range);
        let for_bytes = packed_bytes(n, for_bits);
        let (mut dmin, mut dmax) = (i64::MAX, i64::MIN);
        let mut delta_ok = true;
        for w in v.windows(2) {
            match w[1].checked_sub(w[0]) {
                Some(d) => {
                    dmin = dmin.min(d);
                    dmax = dmax.max(d);
                }
                None => delta_ok = false,
            }
        }
        let delta_bits = if delta_ok && n > 1 { dmax.checked_sub(dmin).map(|r| bits_for(r as u64)) } else { None };
        let delta_bytes = delta_bits.map(|b| packed_bytes(n - 1, b));
        let runs = 1 + v.windows(2).filter(|w| w[0] != w[1]).count();
        let rle_bytes = packed_bytes(runs, for_bits) + pad8(runs * 2);
        let best = [Some(for_bytes), delta_bytes, Some(rle_bytes)];
        let pick = (0..3).filter(|&k| best[k].is_some()).min_by_key(|&k| best[k].unwrap_or(usize::MAX)).unwrap_or(0);
        match pick {
            1 => {
                let b = delta_bits.unwrap_or(64);
                h.scheme = Scheme::Delta;
                h.bits = b;
                h.reference = v[0];
                h.delta_base = dmin;
                pack(v.windows(2).map(|w| (w[1] - w[0]).wrapping_sub(dmin) as u64), n - 1, b, out);
            }
            2 => {
                h.scheme = Scheme::Rle;
                h.bits = for_bits;
                h.runs = runs as u32;
                let mut ends = Vec::with_capacity(runs);
                let mut starts = Vec::with_capacity(runs);
                starts.push(0usize);
                for i in 1..n {
                    if v[i] != v[i - 1] {
                        ends.push(i as u16);
                        starts.push(i);
                    }
                }
                ends.push(n as u16);
                pack(starts.iter().map(|&s| v[s].wrapping_sub(min) as u64), runs, for_bits, out);
                for e in &ends {
                    out.extend_from_slice(&e.to_le_bytes());
                }
                out.resize(out.len() + pad8(runs * 2) - runs * 2, 0);
            }
            _ => {
                h.scheme = Scheme::Bitpack;
                h.bits = for_bits;
                pack(v.iter().map(|&x| x.wrapping_sub(min) as u64), n, for_bits, out);
            }
        }
    }
    if has_nulls {
        push_bitmap(n, |i| is_valid(i), out);
    }
    h.len = out.len() as u64 - h.offset;
    h
}

/// Encodes one tile of raw values `bits` wide (floats, 128-bit decimals): `bytes` holds
/// them little-endian, NULLs included.
pub fn encode_plain(bytes: &[u8], bits: u8, rows: usize, valid: Option<&[bool]>, out: &mut Vec<u8>) -> TileHeader {
    let offset = out.len() as u64;
    out.extend_from_slice(bytes);
    out.resize(offset as usize + pad8(bytes.len()), 0);
    let has_nulls = valid.is_some_and(|v| v.iter().any(|&x| !x));
    let any = valid.is_none_or(|v| v.iter().any(|&x| x)) && rows > 0;
    if has_nulls {
        let valid = valid.unwrap_or(&[]);
        push_bitmap(rows, |i| valid[i], out);
    }
    TileHeader {
        scheme: Scheme::Plain,
        bits,
        flags: FLAG_NO_ZONE | if has_nulls { FLAG_NULLS } else { 0 } | if any { 0 } else { FLAG_ALL_NULL },
        rows: rows as u32,
        runs: 0,
        offset,
        len: out.len() as u64 - offset,
        reference: 0,
        delta_base: 0,
        min: 0,
        max: 0,
    }
}

fn push_bitmap(n: usize, valid: impl Fn(usize) -> bool, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + pad8(n.div_ceil(8)), 0);
    for i in 0..n {
        if valid(i) {
            out[start + i / 8] |= 1 << (i % 8);
        }
    }
}

/// Decodes a tile of integers (any scheme but Plain) from `data` (the tile's bytes),
/// appending its values to `out`; NULL rows get the minimum.
pub fn decode_ints(h: &TileHeader, data: &[u8], out: &mut Vec<i64>) -> Result<()> {
    let n = h.rows as usize;
    out.reserve(n);
    match h.scheme {
        Scheme::Constant => out.extend(std::iter::repeat_n(h.reference, n)),
        Scheme::Bitpack => {
            if h.bits == 0 {
                out.extend(std::iter::repeat_n(h.reference, n));
            } else {
                let w = words(data, n, h.bits)?;
                unpack(&w, n, h.bits, h.reference, out);
            }
        }
        Scheme::Delta => {
            if n > 0 {
                // The deltas (each plus the smallest), then their running sum.
                let mut deltas = Vec::with_capacity(n - 1);
                if h.bits == 0 {
                    deltas.resize(n - 1, h.delta_base);
                } else {
                    unpack(&words(data, n - 1, h.bits)?, n - 1, h.bits, h.delta_base, &mut deltas);
                }
                let mut v = h.reference;
                out.push(v);
                for d in deltas {
                    v = v.wrapping_add(d);
                    out.push(v);
                }
            }
        }
        Scheme::Rle => {
            let runs = h.runs as usize;
            let vals_bytes = packed_bytes(runs, h.bits);
            let w = if h.bits == 0 { Vec::new() } else { words(data, runs, h.bits)? };
            let ends = data.get(vals_bytes..vals_bytes + runs * 2).ok_or_else(|| corrupt("truncated run ends".into()))?;
            let mut at = 0usize;
            for r in 0..runs {
                let end = u16::from_le_bytes([ends[2 * r], ends[2 * r + 1]]) as usize;
                if end < at || end > n {
                    return Err(corrupt("run ends out of order".into()));
                }
                let v = h.reference.wrapping_add(if h.bits == 0 { 0 } else { unpack_one(&w, r, h.bits) } as i64);
                out.extend(std::iter::repeat_n(v, end - at));
                at = end;
            }
            if at != n {
                return Err(corrupt("runs do not cover the tile".into()));
            }
        }
        Scheme::Plain => return Err(corrupt("a plain tile where integers were expected".into())),
    }
    Ok(())
}

/// The validity of a tile's rows (`None` when it has no NULLs), appended to `out` as
/// booleans.
pub fn decode_validity(h: &TileHeader, data: &[u8]) -> Result<Option<Vec<bool>>> {
    if h.flags & FLAG_NULLS == 0 {
        return Ok(None);
    }
    let start = h.values_bytes();
    let n = h.rows as usize;
    let bitmap = data.get(start..start + n.div_ceil(8)).ok_or_else(|| corrupt("truncated validity bitmap".into()))?;
    Ok(Some((0..n).map(|i| bitmap[i / 8] & (1 << (i % 8)) != 0).collect()))
}

/// A small deterministic generator (xorshift) for this crate's unit tests, so failures
/// reproduce.
#[cfg(test)]
pub(crate) struct Rng(pub(crate) u64);

#[cfg(test)]
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `len` random printable ASCII characters.
    pub(crate) fn ascii(&mut self, len: usize) -> String {
        (0..len).map(|_| (b' ' + (self.next() % 95) as u8) as char).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(values: &[i64], valid: Option<&[bool]>) -> TileHeader {
        let mut out = vec![0u8; 24]; // a tile's data need not start the buffer
        let h = encode_ints(values, valid, &mut out);
        assert_eq!(h.offset, 24);
        assert_eq!(h.len as usize, out.len() - 24);
        assert_eq!(h.values_bytes() + h.bitmap_bytes(), h.len as usize, "{h:?}");
        let back = TileHeader::from_bytes(&h.to_bytes()).unwrap();
        assert_eq!(back, h);
        let data = &out[h.offset as usize..];
        let mut got = Vec::new();
        decode_ints(&h, data, &mut got).unwrap();
        let validity = decode_validity(&h, data).unwrap();
        assert_eq!(got.len(), values.len());
        for i in 0..values.len() {
            let is_valid = valid.is_none_or(|v| v[i]);
            assert_eq!(validity.as_ref().is_none_or(|v| v[i]), is_valid, "row {i}");
            if is_valid {
                assert_eq!(got[i], values[i], "row {i} of {h:?}");
                assert!(h.min <= values[i] && values[i] <= h.max);
            }
        }
        h
    }

    #[test]
    fn adversarial_tiles_round_trip() {
        let full = TILE_ROWS;
        assert_eq!(round_trip(&[], None).scheme, Scheme::Constant);
        assert_eq!(round_trip(&vec![7; full], None).scheme, Scheme::Constant);
        assert_eq!(round_trip(&[i64::MIN], None).scheme, Scheme::Constant);
        let extremes: Vec<i64> = (0..full).map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX }).collect();
        let h = round_trip(&extremes, None);
        assert_eq!((h.scheme, h.bits), (Scheme::Bitpack, 64));
        let sorted: Vec<i64> = (0..full as i64).map(|i| 1_000_000_000 + 3 * i).collect();
        let h = round_trip(&sorted, None);
        assert_eq!((h.scheme, h.bits), (Scheme::Delta, 0));
        let runs: Vec<i64> = (0..full).map(|i| (i / 300) as i64 * 1_000_003).collect();
        assert_eq!(round_trip(&runs, None).scheme, Scheme::Rle);
        let small: Vec<i64> = (0..full).map(|i| (i * 7919 % 50) as i64 - 25).collect();
        let h = round_trip(&small, None);
        assert_eq!((h.scheme, h.bits), (Scheme::Bitpack, 6));
        // Deltas that overflow i64 cannot be delta-encoded.
        round_trip(&[i64::MAX, i64::MIN, i64::MAX], None);
        round_trip(&[i64::MIN, i64::MAX], None);
        // NULLs: all, none, runs of them, at the ends; partial tiles.
        let all_null = vec![false; 100];
        let h = round_trip(&vec![5; 100], Some(&all_null));
        assert!(h.flags & FLAG_ALL_NULL != 0);
        let some: Vec<bool> = (0..777).map(|i| !(100..300).contains(&i) && i != 0 && i != 776).collect();
        let vals: Vec<i64> = (0..777).map(|i| i64::MAX - i as i64).collect();
        round_trip(&vals, Some(&some));
        round_trip(&vals, Some(&vec![true; 777]));
    }

    #[test]
    fn random_tiles_round_trip() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..2000 {
            let n = match case % 4 {
                0 => TILE_ROWS,
                1 => 1 + (rng.next() % TILE_ROWS as u64) as usize,
                2 => 1 + (rng.next() % 17) as usize,
                _ => TILE_ROWS - 1,
            };
            let bits = (rng.next() % 65) as u32;
            let base = rng.next() as i64;
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let shape = case % 5;
            let mut values: Vec<i64> = (0..n).map(|_| base.wrapping_add((rng.next() & mask) as i64)).collect();
            if shape == 1 {
                values.sort_unstable();
            }
            if shape == 2 {
                for i in 1..n {
                    if rng.next() % 8 != 0 {
                        values[i] = values[i - 1];
                    }
                }
            }
            let valid: Option<Vec<bool>> = (shape >= 3).then(|| (0..n).map(|_| rng.next() % 4 != 0).collect());
            round_trip(&values, valid.as_deref());
        }
    }

    #[test]
    fn plain_tiles_keep_their_bytes_and_bitmap() {
        let vals: Vec<f64> = vec![1.5, f64::NAN, -0.0, f64::INFINITY];
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let valid = [true, false, true, true];
        let mut out = Vec::new();
        let h = encode_plain(&bytes, 64, 4, Some(&valid), &mut out);
        assert_eq!(h.values_bytes() + h.bitmap_bytes(), h.len as usize);
        assert_eq!(&out[..32], &bytes[..]);
        assert_eq!(decode_validity(&h, &out).unwrap().unwrap(), valid);
    }

    #[test]
    fn corrupt_headers_are_errors() {
        let mut b = TileHeader {
            scheme: Scheme::Bitpack,
            bits: 65,
            flags: 0,
            rows: 10,
            runs: 0,
            offset: 0,
            len: 0,
            reference: 0,
            delta_base: 0,
            min: 0,
            max: 0,
        }
        .to_bytes();
        assert!(TileHeader::from_bytes(&b).is_err());
        b[1] = 3;
        b[0] = 9;
        assert!(TileHeader::from_bytes(&b).is_err());
        b[0] = 1;
        // Flags: one no Tessera knows, compressed bytes without lengths.
        for flags in [64, FLAG_ZSTD, FLAG_ZSTD | FLAG_CODES] {
            b[2] = flags;
            assert!(TileHeader::from_bytes(&b).is_err(), "flags {flags}");
        }
        b[2] = FLAG_ZSTD | FLAG_LENGTHS | FLAG_NO_ZONE;
        assert!(TileHeader::from_bytes(&b).is_ok());
        b[2] = 0;
        let h = TileHeader::from_bytes(&b).unwrap();
        // Data shorter than the header says: an error, not a panic.
        assert!(decode_ints(&h, &[0u8; 4], &mut Vec::new()).is_err());
    }
}
