//! The store's data files: columns in tiles, memory-mapped, decoded column by column.
//!
//! A data file holds up to `FILE_MAX_ROWS` rows of every column of one table:
//!
//! ```text
//! "TSTILES1"                                  magic, 8 bytes
//! per column (each part 64-byte aligned):
//!     tile headers   tiles × 64 bytes          (tiles::TileHeader)
//!     tile data      each tile's values, validity bitmap, string bytes (raw or one zstd frame)
//!     dictionary     strings only: u32 offsets (count + 1), then the bytes
//!   or, for a type without a tile encoding, one Arrow IPC stream of the column
//! footer                                      JSON (Footer)
//! footer length                               u64, little-endian
//! "TSTILES1"                                  magic, 8 bytes
//! ```
//!
//! Integers, dates, times, timestamps, decimals (unscaled; 128-bit ones that do not fit
//! 64 bits as plain 16-byte values) and booleans go through the integer encodings of
//! [`crate::tiles`]; floats are plain. A string tile holds codes into the file's
//! dictionary while every value is in it (the dictionary takes new values up to
//! [`FILE_DICTIONARY_MAX`] entries), else its lengths (bit-packed) followed by its bytes:
//! one zstd frame of them ([`tiles::FLAG_ZSTD`], store format 3) when that is smaller,
//! else the bytes as they are (the only form of format 2). The frame is the tile's own, so
//! any tile still decodes alone; the lengths stay uncompressed, and nothing a GPU kernel
//! reads (integer tiles, dictionary codes) is compressed.
//! Opening a file maps it and reads the footer; nothing is decoded until a column is
//! asked for, and then only that column.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayData, ArrayRef, AsArray, BooleanArray, Int32Array, RecordBatch, StringArray, make_array};
use arrow::buffer::{Buffer, NullBuffer};
use arrow::datatypes::{DataType, Decimal128Type, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};
use tessera_common::{Result, TesseraError};

use crate::tiles::{self, FLAG_CODES, FLAG_LENGTHS, FLAG_ZSTD, HEADER_BYTES, Scheme, TILE_ROWS, TileHeader};

/// First and last eight bytes of every data file.
const MAGIC: &[u8; 8] = b"TSTILES1";
/// File-name extension of data files.
pub const EXTENSION: &str = "tiles";
/// Most values a file's string dictionary takes (the store's table-wide dictionary limit,
/// `DICTIONARY_MAX_DISTINCT`): past it, tiles with new values store their bytes.
pub const FILE_DICTIONARY_MAX: usize = 1 << 20;

/// The zstd level of string tiles' bytes: 3 (zstd's default), measured over the 4547
/// tiles of TPC-H SF 1 stored as lengths and bytes (l_comment, o_comment, ps_comment,
/// c_comment, c_address, c_name, c_phone, p_name, p_comment: 359.5 MB), one frame a
/// tile, with checksums, on one core of the 2-core build machine (2026-11-26; release
/// build; `tests/zstd_levels.rs`):
///
/// | level | MB stored | ratio | compress MB/s | decompress MB/s |
/// |------:|----------:|------:|--------------:|----------------:|
/// |    -5 |     118.8 | 3.03x |           366 |            1137 |
/// |     1 |      97.1 | 3.70x |           355 |            1127 |
/// |     3 |      91.3 | 3.94x |           313 |            1170 |
/// |     4 |      90.4 | 3.98x |           214 |            1134 |
/// |     5 |      85.8 | 4.19x |           121 |            1149 |
/// |     9 |      80.7 | 4.45x |            49 |            1272 |
/// |    19 |      72.3 | 4.97x |             3 |            1267 |
///
/// Up to 3 the speed hardly changes (the fast levels gain little on 50-250 KB tiles)
/// while the size falls; from 4 on each step costs far more time than it saves bytes
/// (level 5 is 6% smaller than 3 at 2.6x the time). At 3, compressing SF 1's strings
/// is about 1.1 s of one core, against a load of ~12 s on two. Frames of several tiles
/// would save little: 2, 8 and 32 tiles a frame store 90.0, 88.7 and 88.5 MB at level 3
/// (1.4%, 2.8% and 3.1% less), so each tile keeps its own frame and decodes alone.
pub const ZSTD_LEVEL: i32 = 3;

/// A string tile's bytes as stored: one zstd frame of `raw` (in `frame`) when that is
/// smaller, padded to 8 bytes as tiles are, else `None` (and `None` when zstd fails:
/// the bytes are then kept as they are). The frame records its content size and a
/// checksum, so a damaged frame is found when read.
fn zstd_frame<'f>(compressor: &mut Option<zstd::bulk::Compressor<'static>>, raw: &[u8], frame: &'f mut Vec<u8>) -> Option<&'f [u8]> {
    if raw.is_empty() {
        return None;
    }
    if compressor.is_none() {
        *compressor = zstd::bulk::Compressor::new(ZSTD_LEVEL)
            .and_then(|mut c| c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true)).map(|()| c))
            .ok();
    }
    let c = compressor.as_mut()?;
    frame.clear();
    // A frame that does not fit the raw bytes' room is of no use: zstd stops with an error.
    frame.reserve(raw.len());
    let n = c.compress_to_buffer(raw, frame).ok()?;
    (tiles::pad8(n) < tiles::pad8(raw.len())).then(|| &frame[..n])
}

#[cfg(test)]
thread_local! {
    /// Tests: the writers this thread makes keep string bytes uncompressed, as format 2
    /// wrote them.
    pub(crate) static WRITE_UNCOMPRESSED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether new writers compress string bytes (always, but in tests that ask otherwise).
fn compress_strings() -> bool {
    #[cfg(test)]
    {
        !WRITE_UNCOMPRESSED.with(|c| c.get())
    }
    #[cfg(not(test))]
    {
        true
    }
}

/// How a column is stored, from its Arrow type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Fixed-width integers (signed, or unsigned below 64 bits), dates, times,
    /// timestamps, durations, 32/64-bit decimals: `width` bytes each.
    Int { width: usize, signed: bool },
    /// 128-bit decimals: through the integer encodings when a tile fits 64 bits.
    Decimal128,
    /// Raw values `width` bytes wide (floats, `UInt64`).
    Plain { width: usize },
    Bool,
    Utf8,
    /// Anything else: an Arrow IPC stream.
    Ipc,
}

fn kind(dt: &DataType) -> Kind {
    use DataType::*;
    match dt {
        Int8 | Int16 | Int32 | Int64 | Date32 | Date64 | Time32(_) | Time64(_) | Timestamp(..) | Duration(_)
        | Decimal32(..) | Decimal64(..) => Kind::Int { width: dt.primitive_width().unwrap_or(8), signed: true },
        UInt8 | UInt16 | UInt32 => Kind::Int { width: dt.primitive_width().unwrap_or(4), signed: false },
        UInt64 | Float16 | Float32 | Float64 => Kind::Plain { width: dt.primitive_width().unwrap_or(8) },
        Decimal128(..) => Kind::Decimal128,
        Boolean => Kind::Bool,
        Utf8 => Kind::Utf8,
        _ => Kind::Ipc,
    }
}

/// Where one column lies in its file, and what it costs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ColumnEntry {
    /// Offset of the tile headers.
    pub headers: u64,
    /// Number of tiles.
    pub tiles: u64,
    /// Offset of the tile data (tile offsets are relative to it).
    pub data: u64,
    /// Bytes of tile data.
    pub data_len: u64,
    /// Strings: the file dictionary's offset, number of values and bytes.
    pub dictionary: Option<(u64, u64, u64)>,
    /// Columns without a tile encoding: an Arrow IPC stream's offset and length.
    pub ipc: Option<(u64, u64)>,
    /// Bytes the column takes in the file (headers, data, dictionary or IPC).
    pub stored_bytes: u64,
    /// Bytes the column's values take in Arrow's layout (values, offsets, validity).
    pub arrow_bytes: u64,
    /// Tiles of each scheme, by `tiles::Scheme` number.
    pub schemes: [u64; 5],
}

/// A data file's footer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Footer {
    /// Rows in the file.
    pub rows: u64,
    /// The columns, in the table's order.
    pub columns: Vec<ColumnEntry>,
}

fn corrupt(path: &Path, what: impl std::fmt::Display) -> TesseraError {
    TesseraError::Execution(format!("corrupt data file {}: {what}", path.display()))
}

/// A string dictionary being built: values in first-seen order.
#[derive(Default)]
struct Dictionary {
    codes: std::collections::HashMap<Box<str>, u32>,
    values: Vec<Box<str>>,
    /// Values seen so far (the rows of the tiles written).
    seen: usize,
    /// No longer used: its values hardly repeat (see [`DICTIONARY_TRIAL_ROWS`]).
    closed: bool,
}

/// After this many rows a file's string dictionary is kept only if the values repeat
/// (it holds at most half as many values as rows): comments, names and addresses are
/// stored as bytes, without a hash lookup a value (TPC-H's l_comment took most of
/// lineitem's load time in dictionaries of ~900 K values a file).
const DICTIONARY_TRIAL_ROWS: usize = 16 * TILE_ROWS;

/// The tiles of one column being written.
struct ColumnEncoder {
    kind: Kind,
    data: Vec<u8>,
    headers: Vec<TileHeader>,
    dictionary: Dictionary,
    ipc: Vec<ArrayRef>,
    arrow_bytes: u64,
    /// Strings: whether tiles of lengths compress their bytes, the compressor (made on
    /// the first such tile), and the current tile's bytes raw and compressed.
    compress: bool,
    zstd: Option<zstd::bulk::Compressor<'static>>,
    raw: Vec<u8>,
    frame: Vec<u8>,
}

impl ColumnEncoder {
    fn new(dt: &DataType) -> ColumnEncoder {
        ColumnEncoder {
            kind: kind(dt),
            data: Vec::new(),
            headers: Vec::new(),
            dictionary: Dictionary::default(),
            ipc: Vec::new(),
            arrow_bytes: 0,
            compress: compress_strings(),
            zstd: None,
            raw: Vec::new(),
            frame: Vec::new(),
        }
    }

    /// Encodes one tile (at most [`TILE_ROWS`] rows).
    fn tile(&mut self, a: &ArrayRef) -> Result<()> {
        let n = a.len();
        self.arrow_bytes += a.to_data().get_slice_memory_size().unwrap_or(0) as u64;
        let valid: Option<Vec<bool>> = a.logical_nulls().map(|nb| nb.iter().collect());
        let valid = valid.as_deref();
        let h = match self.kind {
            Kind::Ipc => {
                self.ipc.push(Arc::clone(a));
                return Ok(());
            }
            Kind::Int { width, signed } => {
                let values = int_values(a, width, signed)?;
                tiles::encode_ints(&values, valid, &mut self.data)
            }
            Kind::Bool => {
                let b = a.as_boolean();
                let values: Vec<i64> = (0..n).map(|i| b.value(i) as i64).collect();
                tiles::encode_ints(&values, valid, &mut self.data)
            }
            Kind::Decimal128 => {
                let d = a.as_primitive::<Decimal128Type>();
                let fits = (0..n).all(|i| valid.is_some_and(|v| !v[i]) || i64::try_from(d.value(i)).is_ok());
                if fits {
                    let values: Vec<i64> = d.values().iter().map(|&v| i64::try_from(v).unwrap_or(0)).collect();
                    tiles::encode_ints(&values, valid, &mut self.data)
                } else {
                    let bytes: Vec<u8> = d.values().iter().flat_map(|v| v.to_le_bytes()).collect();
                    tiles::encode_plain(&bytes, 128, n, valid, &mut self.data)
                }
            }
            Kind::Plain { width } => {
                let data = a.to_data();
                let start = data.offset() * width;
                let bytes = data.buffers()[0].as_slice().get(start..start + n * width).unwrap_or(&[]).to_vec();
                tiles::encode_plain(&bytes, (width * 8) as u8, n, valid, &mut self.data)
            }
            Kind::Utf8 => self.string_tile(a.as_string::<i32>(), valid),
        };
        self.headers.push(h);
        Ok(())
    }

    /// A string tile: codes into the file's dictionary when every value is in it (new
    /// values join while it has room), else lengths and bytes (one zstd frame of them
    /// when that is smaller).
    fn string_tile(&mut self, s: &StringArray, valid: Option<&[bool]>) -> TileHeader {
        let n = s.len();
        let is_valid = |i: usize| valid.is_none_or(|v| v[i]);
        let dict = &mut self.dictionary;
        if !dict.closed && dict.seen >= DICTIONARY_TRIAL_ROWS && dict.values.len() * 2 > dict.seen {
            dict.closed = true;
        }
        dict.seen += n;
        let closed = dict.closed;
        let mut codes = Vec::with_capacity(if closed { 0 } else { n });
        for i in (0..n).filter(|_| !closed) {
            if !is_valid(i) {
                codes.push(0);
                continue;
            }
            let v = s.value(i);
            let code = match dict.codes.get(v) {
                Some(&c) => c,
                None if dict.values.len() < FILE_DICTIONARY_MAX => {
                    let c = dict.values.len() as u32;
                    dict.codes.insert(v.into(), c);
                    dict.values.push(v.into());
                    c
                }
                None => break,
            };
            codes.push(code as i64);
        }
        if codes.len() == n {
            let mut h = tiles::encode_ints(&codes, valid, &mut self.data);
            h.flags |= FLAG_CODES | tiles::FLAG_NO_ZONE;
            return h;
        }
        let lengths: Vec<i64> = (0..n).map(|i| if is_valid(i) { s.value(i).len() as i64 } else { 0 }).collect();
        let mut h = tiles::encode_ints(&lengths, valid, &mut self.data);
        h.flags |= FLAG_LENGTHS | tiles::FLAG_NO_ZONE;
        self.raw.clear();
        for i in 0..n {
            if is_valid(i) {
                self.raw.extend_from_slice(s.value(i).as_bytes());
            }
        }
        match self.compress.then(|| zstd_frame(&mut self.zstd, &self.raw, &mut self.frame)).flatten() {
            Some(frame) => {
                self.data.extend_from_slice(frame);
                h.flags |= FLAG_ZSTD;
            }
            None => self.data.extend_from_slice(&self.raw),
        }
        let end = h.offset as usize + tiles::pad8(self.data.len() - h.offset as usize);
        self.data.resize(end, 0);
        h.len = self.data.len() as u64 - h.offset;
        h
    }
}

/// The integer values of a fixed-width array, sign- or zero-extended (NULL rows hold
/// whatever the buffer holds).
fn int_values(a: &ArrayRef, width: usize, signed: bool) -> Result<Vec<i64>> {
    let data = a.to_data();
    let start = data.offset() * width;
    let bytes = data
        .buffers()
        .first()
        .and_then(|b| b.as_slice().get(start..start + a.len() * width))
        .ok_or_else(|| TesseraError::Internal("a fixed-width array without its values".into()))?;
    Ok(match (width, signed) {
        (1, true) => bytes.iter().map(|&b| b as i8 as i64).collect(),
        (1, false) => bytes.iter().map(|&b| b as i64).collect(),
        (2, true) => bytes.chunks_exact(2).map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect(),
        (2, false) => bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]) as i64).collect(),
        (4, true) => bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect(),
        (4, false) => bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect(),
        (8, _) => bytes.chunks_exact(8).map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect(),
        _ => return Err(TesseraError::Internal(format!("integers {width} bytes wide"))),
    })
}

/// Writes one data file: batches go in, tiles are encoded as rows arrive, and
/// [`FileWriter::finish`] writes the file (nothing is on disk before).
pub struct FileWriter {
    path: PathBuf,
    schema: SchemaRef,
    columns: Vec<ColumnEncoder>,
    /// Rows not yet making up a full tile.
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    rows: u64,
}

impl FileWriter {
    /// A writer of `path` for batches of `schema`.
    pub fn new(path: PathBuf, schema: SchemaRef) -> FileWriter {
        let columns = schema.fields().iter().map(|f| ColumnEncoder::new(f.data_type())).collect();
        FileWriter { path, schema, columns, pending: Vec::new(), pending_rows: 0, rows: 0 }
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows + self.pending_rows as u64
    }

    /// Adds a batch of the writer's schema.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut at = 0;
        while at < batch.num_rows() {
            let take = (TILE_ROWS - self.pending_rows).min(batch.num_rows() - at);
            if self.pending_rows == 0 && take == TILE_ROWS {
                self.encode(&batch.slice(at, take))?;
            } else {
                self.pending.push(batch.slice(at, take));
                self.pending_rows += take;
                if self.pending_rows == TILE_ROWS {
                    self.flush_pending()?;
                }
            }
            at += take;
        }
        Ok(())
    }

    fn flush_pending(&mut self) -> Result<()> {
        if self.pending_rows == 0 {
            return Ok(());
        }
        let tile = arrow::compute::concat_batches(&self.schema, &self.pending)
            .map_err(|e| TesseraError::Internal(format!("joining a tile's rows: {e}")))?;
        self.pending.clear();
        self.pending_rows = 0;
        self.encode(&tile)
    }

    fn encode(&mut self, tile: &RecordBatch) -> Result<()> {
        for (enc, a) in self.columns.iter_mut().zip(tile.columns()) {
            enc.tile(a)?;
        }
        self.rows += tile.num_rows() as u64;
        Ok(())
    }

    /// Encodes the last partial tile and writes the file; returns its size in bytes.
    pub fn finish(mut self) -> Result<u64> {
        self.flush_pending()?;
        let mut out: Vec<u8> = Vec::new();
        out.extend_from_slice(MAGIC);
        let mut entries = Vec::with_capacity(self.columns.len());
        for (enc, field) in self.columns.iter().zip(self.schema.fields()) {
            let align = |out: &mut Vec<u8>| out.resize(out.len().div_ceil(64) * 64, 0);
            align(&mut out);
            let start = out.len() as u64;
            let mut entry = ColumnEntry {
                headers: start,
                tiles: enc.headers.len() as u64,
                data: 0,
                data_len: enc.data.len() as u64,
                dictionary: None,
                ipc: None,
                stored_bytes: 0,
                arrow_bytes: enc.arrow_bytes,
                schemes: [0; 5],
            };
            if enc.kind == Kind::Ipc {
                let bytes = ipc_bytes(field, &enc.ipc)?;
                entry.ipc = Some((start, bytes.len() as u64));
                out.extend_from_slice(&bytes);
            } else {
                for h in &enc.headers {
                    out.extend_from_slice(&h.to_bytes());
                    entry.schemes[h.scheme as usize] += 1;
                }
                align(&mut out);
                entry.data = out.len() as u64;
                out.extend_from_slice(&enc.data);
                if enc.kind == Kind::Utf8 {
                    align(&mut out);
                    let at = out.len() as u64;
                    let values = &enc.dictionary.values;
                    let mut offset = 0u32;
                    out.extend_from_slice(&offset.to_le_bytes());
                    for v in values {
                        offset += v.len() as u32;
                        out.extend_from_slice(&offset.to_le_bytes());
                    }
                    for v in values {
                        out.extend_from_slice(v.as_bytes());
                    }
                    entry.dictionary = Some((at, values.len() as u64, out.len() as u64 - at));
                }
            }
            entry.stored_bytes = out.len() as u64 - start;
            entries.push(entry);
        }
        let footer = serde_json::to_vec(&Footer { rows: self.rows, columns: entries })
            .map_err(|e| TesseraError::Internal(format!("data file footer: {e}")))?;
        out.extend_from_slice(&footer);
        out.extend_from_slice(&(footer.len() as u64).to_le_bytes());
        out.extend_from_slice(MAGIC);
        let mut f = File::create(&self.path).map_err(|e| TesseraError::io(format!("creating {}", self.path.display()), e))?;
        f.write_all(&out).map_err(|e| TesseraError::io(format!("writing {}", self.path.display()), e))?;
        Ok(out.len() as u64)
    }
}

fn ipc_bytes(field: &Field, arrays: &[ArrayRef]) -> Result<Vec<u8>> {
    let err = |e: arrow::error::ArrowError| TesseraError::Internal(format!("writing an Arrow IPC column: {e}"));
    let schema = Arc::new(Schema::new(vec![field.clone()]));
    let mut w = arrow::ipc::writer::StreamWriter::try_new(Vec::new(), &schema).map_err(err)?;
    for a in arrays {
        w.write(&RecordBatch::try_new(Arc::clone(&schema), vec![Arc::clone(a)]).map_err(err)?).map_err(err)?;
    }
    w.into_inner().map_err(err)
}

/// An open (memory-mapped) data file.
#[derive(Debug)]
pub struct ColumnFile {
    path: PathBuf,
    map: memmap2::Mmap,
    footer: Footer,
}

impl ColumnFile {
    /// Maps `path` and reads its footer.
    pub fn open(path: &Path) -> Result<ColumnFile> {
        let file = File::open(path).map_err(|e| TesseraError::io(format!("opening {}", path.display()), e))?;
        // SAFETY: the store never changes a data file once written (commits write new
        // files and delete unreferenced ones; a deleted file stays mapped), so the mapped
        // bytes do not change under us.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| TesseraError::io(format!("mapping {}", path.display()), e))?;
        let n = map.len();
        if n < 24 || &map[..8] != MAGIC || &map[n - 8..] != MAGIC {
            return Err(corrupt(path, "not a Tessera data file (magic missing)"));
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&map[n - 16..n - 8]);
        let len = u64::from_le_bytes(len) as usize;
        let start = (n - 16).checked_sub(len).filter(|&s| s >= 8).ok_or_else(|| corrupt(path, "footer length"))?;
        let footer: Footer = serde_json::from_slice(&map[start..n - 16]).map_err(|e| corrupt(path, e))?;
        Ok(ColumnFile { path: path.to_path_buf(), map, footer })
    }

    /// The footer: rows and where each column lies.
    pub fn footer(&self) -> &Footer {
        &self.footer
    }

    fn bytes(&self, offset: u64, len: u64) -> Result<&[u8]> {
        let (o, l) = (offset as usize, len as usize);
        self.map.get(o..o.saturating_add(l)).ok_or_else(|| corrupt(&self.path, "section beyond the end"))
    }

    fn entry(&self, c: usize) -> Result<&ColumnEntry> {
        self.footer.columns.get(c).ok_or_else(|| corrupt(&self.path, format!("no column #{c}")))
    }

    /// Column `c`'s tile headers.
    pub fn headers(&self, c: usize) -> Result<Vec<TileHeader>> {
        let e = self.entry(c)?;
        let raw = self.bytes(e.headers, e.tiles * HEADER_BYTES as u64)?;
        raw.chunks_exact(HEADER_BYTES).map(TileHeader::from_bytes).collect()
    }

    /// Column `c`'s string dictionary (file codes in order), empty when it has none.
    pub fn dictionary(&self, c: usize) -> Result<Vec<&str>> {
        let Some((at, count, len)) = self.entry(c)?.dictionary else { return Ok(Vec::new()) };
        let raw = self.bytes(at, len)?;
        let offsets_len = (count as usize + 1) * 4;
        let (offsets, bytes) = raw.split_at_checked(offsets_len).ok_or_else(|| corrupt(&self.path, "dictionary offsets"))?;
        let off = |i: usize| u32::from_le_bytes([offsets[4 * i], offsets[4 * i + 1], offsets[4 * i + 2], offsets[4 * i + 3]]) as usize;
        (0..count as usize)
            .map(|i| {
                let s = bytes.get(off(i)..off(i + 1)).ok_or_else(|| corrupt(&self.path, "dictionary value"))?;
                std::str::from_utf8(s).map_err(|e| corrupt(&self.path, e))
            })
            .collect()
    }

    /// The bytes of tile `h` of column `c` (its values, bitmap and string bytes).
    pub fn tile_bytes(&self, c: usize, h: &TileHeader) -> Result<&[u8]> {
        let e = self.entry(c)?;
        let data = self.bytes(e.data, e.data_len)?;
        data.get(h.offset as usize..h.offset.saturating_add(h.len) as usize).ok_or_else(|| corrupt(&self.path, "tile beyond its column"))
    }

    /// The distinct strings column `c` stores as bytes (tiles written after its file
    /// dictionary was full), which a table-wide dictionary must hold too.
    pub fn plain_strings(&self, c: usize) -> Result<Vec<String>> {
        let e = self.entry(c)?;
        if e.dictionary.is_none() {
            return Ok(Vec::new());
        }
        let mut seen = std::collections::HashSet::new();
        let mut scratch = StringScratch::default();
        for h in self.headers(c)?.iter().filter(|h| h.flags & FLAG_LENGTHS != 0) {
            self.string_rows(h, self.tile_bytes(c, h)?, &mut scratch, |row| {
                if let StringRow::Bytes(b) = row {
                    let s = std::str::from_utf8(b).map_err(|e| corrupt(&self.path, e))?;
                    if !seen.contains(s) {
                        seen.insert(s.to_string());
                    }
                }
                Ok(())
            })?;
        }
        Ok(seen.into_iter().collect())
    }

    /// Rows `[start, start + rows)` of column `c` (`start` a multiple of [`TILE_ROWS`])
    /// as one array of `field`'s type; a string column with `codes` (the file's codes
    /// mapped to a table-wide sorted dictionary, see [`StringTarget`]) comes back as
    /// `Int32` codes.
    pub fn decode(&self, c: usize, field: &Field, headers: &[TileHeader], start: usize, rows: usize, target: &StringTarget<'_>) -> Result<ArrayRef> {
        let e = self.entry(c)?;
        let dt = field.data_type();
        if e.ipc.is_some() {
            return self.decode_ipc(c, dt, start, rows);
        }
        if start % TILE_ROWS != 0 {
            return Err(TesseraError::Internal(format!("decoding from row {start}, inside a tile")));
        }
        let first = start / TILE_ROWS;
        let count = rows.div_ceil(TILE_ROWS);
        let tiles = headers.get(first..first + count).ok_or_else(|| corrupt(&self.path, "fewer tiles than rows"))?;
        if tiles.iter().map(|h| h.rows as usize).sum::<usize>() != rows {
            return Err(corrupt(&self.path, "tile rows do not add up"));
        }
        let data = self.bytes(e.data, e.data_len)?;
        let tile_data = |h: &TileHeader| {
            data.get(h.offset as usize..(h.offset + h.len) as usize).ok_or_else(|| corrupt(&self.path, "tile beyond its column"))
        };
        // Validity of all the rows, when any tile has NULLs.
        let mut validity: Option<Vec<bool>> = None;
        for (k, h) in tiles.iter().enumerate() {
            if let Some(v) = tiles::decode_validity(h, tile_data(h)?)? {
                let all = validity.get_or_insert_with(|| vec![true; rows]);
                all[k * TILE_ROWS..k * TILE_ROWS + v.len()].copy_from_slice(&v);
            }
        }
        let nulls = validity.map(NullBuffer::from);
        let ints = |out: &mut Vec<i64>| -> Result<()> {
            for h in tiles {
                tiles::decode_ints(h, tile_data(h)?, out)?;
            }
            Ok(())
        };
        let primitive = |buffer: Buffer, nulls: Option<NullBuffer>| -> Result<ArrayRef> {
            let data = ArrayData::builder(dt.clone()).len(rows).add_buffer(buffer).nulls(nulls).build().map_err(|e| corrupt(&self.path, e))?;
            Ok(make_array(data))
        };
        match kind(dt) {
            Kind::Int { width, .. } => {
                let mut v = Vec::with_capacity(rows);
                ints(&mut v)?;
                let buffer = match width {
                    1 => Buffer::from_vec(v.iter().map(|&x| x as i8).collect::<Vec<_>>()),
                    2 => Buffer::from_vec(v.iter().map(|&x| x as i16).collect::<Vec<_>>()),
                    4 => Buffer::from_vec(v.iter().map(|&x| x as i32).collect::<Vec<_>>()),
                    _ => Buffer::from_vec(v),
                };
                primitive(buffer, nulls)
            }
            Kind::Bool => {
                let mut v = Vec::with_capacity(rows);
                ints(&mut v)?;
                Ok(Arc::new(BooleanArray::new(v.iter().map(|&x| x != 0).collect(), nulls)))
            }
            Kind::Decimal128 => {
                let mut v: Vec<i128> = Vec::with_capacity(rows);
                let mut scratch = Vec::with_capacity(TILE_ROWS);
                for h in tiles {
                    let d = tile_data(h)?;
                    if h.scheme == Scheme::Plain {
                        let raw = d.get(..h.rows as usize * 16).ok_or_else(|| corrupt(&self.path, "truncated decimals"))?;
                        v.extend(raw.chunks_exact(16).map(|c| {
                            let mut b = [0u8; 16];
                            b.copy_from_slice(c);
                            i128::from_le_bytes(b)
                        }));
                    } else {
                        scratch.clear();
                        tiles::decode_ints(h, d, &mut scratch)?;
                        v.extend(scratch.iter().map(|&x| x as i128));
                    }
                }
                primitive(Buffer::from_vec(v), nulls)
            }
            Kind::Plain { width } => {
                let mut bytes = Vec::with_capacity(rows * width);
                for h in tiles {
                    let raw = tile_data(h)?.get(..h.rows as usize * width).ok_or_else(|| corrupt(&self.path, "truncated values"))?;
                    bytes.extend_from_slice(raw);
                }
                primitive(Buffer::from_vec(bytes), nulls)
            }
            Kind::Utf8 => self.decode_strings(tiles, &tile_data, rows, nulls, target),
            Kind::Ipc => Err(corrupt(&self.path, "a column of this type without its IPC stream")),
        }
    }

    /// Calls `f` with each row of string tile `h` (bytes `d`): NULL, a code into the
    /// file's dictionary, or the row's bytes (from `d`, or from `scratch` where the tile
    /// keeps them as a zstd frame).
    fn string_rows(&self, h: &TileHeader, d: &[u8], scratch: &mut StringScratch, mut f: impl FnMut(StringRow<'_>) -> Result<()>) -> Result<()> {
        let StringScratch { values, bytes, zstd } = scratch;
        values.clear();
        tiles::decode_ints(h, d, values)?;
        let valid = tiles::decode_validity(h, d)?;
        let is_valid = |i: usize| valid.as_ref().is_none_or(|v| v[i]);
        if h.flags & FLAG_CODES != 0 {
            for (i, &x) in values.iter().enumerate() {
                f(if is_valid(i) { StringRow::Code(usize::try_from(x).unwrap_or(usize::MAX)) } else { StringRow::Null })?;
            }
            return Ok(());
        }
        if h.flags & FLAG_LENGTHS == 0 {
            return Err(corrupt(&self.path, "a string tile of neither codes nor lengths"));
        }
        // The lengths of the valid rows (NULL rows hold the smallest length) add up to the
        // tile's bytes, which a batch of Arrow strings keeps below 2 GiB.
        let total = values
            .iter()
            .enumerate()
            .filter(|&(i, _)| is_valid(i))
            .try_fold(0usize, |sum, (_, &x)| usize::try_from(x).ok().and_then(|x| sum.checked_add(x)))
            .filter(|&t| t <= i32::MAX as usize)
            .ok_or_else(|| corrupt(&self.path, "string lengths"))?;
        let stored = d.get(h.values_bytes() + h.bitmap_bytes()..).ok_or_else(|| corrupt(&self.path, "string bytes"))?;
        let body: &[u8] = if h.flags & FLAG_ZSTD != 0 { self.unzstd(stored, total, bytes, zstd)? } else { stored };
        if body.len() < total {
            return Err(corrupt(&self.path, "string bytes"));
        }
        let mut at = 0usize;
        for (i, &x) in values.iter().enumerate() {
            if is_valid(i) {
                // Each length is at least 0 and they add up to at most `body`'s size.
                let s = body.get(at..at + x as usize).ok_or_else(|| corrupt(&self.path, "string bytes"))?;
                at += x as usize;
                f(StringRow::Bytes(s))?;
            } else {
                f(StringRow::Null)?;
            }
        }
        Ok(())
    }

    /// Decompresses the zstd frame at the start of `stored` (a tile's bytes after its
    /// lengths and bitmap: the frame, then at most 7 bytes of padding) into `out`, where
    /// it must make exactly `total` bytes.
    fn unzstd<'o>(&self, stored: &[u8], total: usize, out: &'o mut Vec<u8>, dctx: &mut Option<zstd::bulk::Decompressor<'static>>) -> Result<&'o [u8]> {
        let damaged = |what: &str| corrupt(&self.path, format!("a string tile's zstd frame: {what}"));
        let zstd_error = |code: usize| damaged(zstd::zstd_safe::get_error_name(code));
        let len = zstd::zstd_safe::find_frame_compressed_size(stored).map_err(zstd_error)?;
        let frame = stored.get(..len).filter(|_| stored.len() - len < 8).ok_or_else(|| damaged("not where the tile says"))?;
        if !matches!(zstd::zstd_safe::get_frame_content_size(frame), Ok(Some(n)) if n == total as u64) {
            return Err(damaged("its size is not the lengths' sum"));
        }
        out.clear();
        out.try_reserve(total).map_err(|e| TesseraError::Execution(format!("decompressing strings of {}: {e}", self.path.display())))?;
        if dctx.is_none() {
            *dctx = Some(zstd::bulk::Decompressor::new().map_err(|e| TesseraError::Execution(format!("zstd: {e}")))?);
        }
        let Some(d) = dctx.as_mut() else { return Err(TesseraError::Internal("no zstd decompressor".into())) };
        let n = d.decompress_to_buffer(frame, out).map_err(|e| damaged(&e.to_string()))?;
        if n != total {
            return Err(damaged("its size is not the lengths' sum"));
        }
        Ok(out)
    }

    fn decode_strings<'a>(
        &'a self,
        tiles: &[TileHeader],
        tile_data: &dyn Fn(&TileHeader) -> Result<&'a [u8]>,
        rows: usize,
        nulls: Option<NullBuffer>,
        target: &StringTarget<'_>,
    ) -> Result<ArrayRef> {
        let mut scratch = StringScratch::default();
        let beyond = || corrupt(&self.path, "string code beyond the dictionary");
        match target {
            StringTarget::Codes { file_to_table, sorted } => {
                let mut codes: Vec<i32> = Vec::with_capacity(rows);
                for h in tiles {
                    self.string_rows(h, tile_data(h)?, &mut scratch, |row| {
                        codes.push(match row {
                            StringRow::Null => 0,
                            StringRow::Code(k) => *file_to_table.get(k).ok_or_else(beyond)?,
                            StringRow::Bytes(b) => {
                                let s = std::str::from_utf8(b).map_err(|e| corrupt(&self.path, e))?;
                                sorted.binary_search(&s).map_err(|_| corrupt(&self.path, format!("'{s}' is not in the column's dictionary")))? as i32
                            }
                        });
                        Ok(())
                    })?;
                }
                Ok(Arc::new(Int32Array::new(codes.into(), nulls)))
            }
            StringTarget::Strings { dictionary } => {
                let mut offsets: Vec<i32> = Vec::with_capacity(rows + 1);
                let mut bytes: Vec<u8> = Vec::new();
                offsets.push(0);
                for h in tiles {
                    self.string_rows(h, tile_data(h)?, &mut scratch, |row| {
                        match row {
                            StringRow::Null => {}
                            StringRow::Code(k) => bytes.extend_from_slice(dictionary.get(k).ok_or_else(beyond)?.as_bytes()),
                            StringRow::Bytes(b) => bytes.extend_from_slice(b),
                        }
                        offsets.push(i32::try_from(bytes.len()).map_err(|_| TesseraError::Execution("a batch of strings beyond 2 GiB".into()))?);
                        Ok(())
                    })?;
                }
                let array = StringArray::try_new(arrow::buffer::OffsetBuffer::new(offsets.into()), Buffer::from_vec(bytes), nulls).map_err(|e| corrupt(&self.path, e))?;
                Ok(Arc::new(array))
            }
        }
    }

    fn decode_ipc(&self, c: usize, dt: &DataType, start: usize, rows: usize) -> Result<ArrayRef> {
        let Some((at, len)) = self.entry(c)?.ipc else { return Err(corrupt(&self.path, "no IPC stream")) };
        let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(self.bytes(at, len)?), None).map_err(|e| corrupt(&self.path, e))?;
        let mut parts = Vec::new();
        for b in reader {
            parts.push(Arc::clone(b.map_err(|e| corrupt(&self.path, e))?.column(0)));
        }
        let refs: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
        let whole = if refs.is_empty() { arrow::array::new_empty_array(dt) } else { arrow::compute::concat(&refs).map_err(|e| corrupt(&self.path, e))? };
        if start + rows > whole.len() {
            return Err(corrupt(&self.path, "IPC column shorter than the file"));
        }
        Ok(whole.slice(start, rows))
    }
}

/// What decoding string tiles reuses from one tile to the next.
#[derive(Default)]
struct StringScratch {
    /// The tile's codes or lengths.
    values: Vec<i64>,
    /// The tile's string bytes, when it keeps them as a zstd frame.
    bytes: Vec<u8>,
    /// Made on the first such tile.
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

/// One row of a string tile (see `ColumnFile::string_rows`).
enum StringRow<'d> {
    Null,
    /// A code into the file's dictionary.
    Code(usize),
    /// The row's bytes.
    Bytes(&'d [u8]),
}

/// What a string column decodes to.
pub enum StringTarget<'a> {
    /// Plain strings.
    Strings {
        /// The file's dictionary ([`ColumnFile::dictionary`]).
        dictionary: &'a [&'a str],
    },
    /// `Int32` codes into a table-wide sorted dictionary.
    Codes {
        /// File code `k` is table code `file_to_table[k]`.
        file_to_table: &'a [i32],
        /// The table's dictionary, sorted: strings stored as bytes are looked up in it.
        sorted: &'a [&'a str],
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiles::Rng;
    use arrow::array::{Date32Array, Decimal128Array, Float64Array, Int64Array, Int8Array, ListArray, UInt64Array};
    use arrow::datatypes::Int32Type;

    fn write_read(batches: &[RecordBatch]) -> (tempfile::TempDir, ColumnFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.tiles");
        let mut w = FileWriter::new(path.clone(), batches[0].schema());
        for b in batches {
            w.write(b).unwrap();
        }
        let bytes = w.finish().unwrap();
        assert_eq!(bytes, std::fs::metadata(&path).unwrap().len());
        let f = ColumnFile::open(&path).unwrap();
        (dir, f)
    }

    fn read_all(f: &ColumnFile, schema: &Schema) -> RecordBatch {
        let rows = f.footer().rows as usize;
        let cols = (0..schema.fields().len())
            .map(|c| {
                let h = f.headers(c).unwrap();
                let dictionary = f.dictionary(c).unwrap();
                f.decode(c, schema.field(c), &h, 0, rows, &StringTarget::Strings { dictionary: &dictionary }).unwrap()
            })
            .collect();
        RecordBatch::try_new(Arc::new(schema.clone()), cols).unwrap()
    }

    #[test]
    fn every_type_round_trips_through_a_file_across_batches_and_partial_tiles() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int64, true),
            Field::new("b", DataType::Int8, false),
            Field::new("d", DataType::Date32, false),
            Field::new("m", DataType::Decimal128(38, 2), true),
            Field::new("f", DataType::Float64, true),
            Field::new("u", DataType::UInt64, false),
            Field::new("s", DataType::Utf8, true),
            Field::new("t", DataType::Boolean, true),
            Field::new("l", DataType::List(Arc::new(Field::new("item", DataType::Int32, true))), true),
        ]));
        let batch = |lo: usize, n: usize| {
            let r = lo..lo + n;
            let cols: Vec<ArrayRef> = vec![
                Arc::new(Int64Array::from_iter(r.clone().map(|i| (i % 7 != 0).then_some(if i % 2 == 0 { i64::MIN } else { i as i64 })))),
                Arc::new(Int8Array::from_iter_values(r.clone().map(|i| (i % 256) as i8))),
                Arc::new(Date32Array::from_iter_values(r.clone().map(|i| 8000 + i as i32 / 100))),
                Arc::new(
                    Decimal128Array::from_iter(r.clone().map(|i| (i % 5 != 0).then_some(if i == 3001 { i128::MAX / 7 } else { i as i128 * 100 + 1 })))
                        .with_precision_and_scale(38, 2)
                        .unwrap(),
                ),
                Arc::new(Float64Array::from_iter(r.clone().map(|i| (i % 3 != 0).then_some(i as f64 / 3.0)))),
                Arc::new(UInt64Array::from_iter_values(r.clone().map(|i| u64::MAX - i as u64))),
                Arc::new(StringArray::from_iter(r.clone().map(|i| match i % 11 {
                    0 => None,
                    1 => Some(format!("unique-{i}")),
                    k => Some(["AIR", "MAIL", "", "REG AIR", "ÅÄÖ"][k as usize % 5].to_string()),
                }))),
                Arc::new(BooleanArray::from_iter(r.clone().map(|i| (i % 4 != 0).then_some(i % 3 == 0)))),
                Arc::new(ListArray::from_iter_primitive::<Int32Type, _, _>(r.clone().map(|i| (i % 9 != 0).then(|| vec![Some(i as i32), None])))),
            ];
            RecordBatch::try_new(Arc::clone(&schema), cols).unwrap()
        };
        // Batches that start and end inside tiles, an empty one, a whole tile at once.
        let batches = [batch(0, 1000), batch(1000, 0), batch(1000, 5000), batch(6000, 2048), batch(8048, 3)];
        let (_dir, f) = write_read(&batches);
        let expected = arrow::compute::concat_batches(&schema, &batches).unwrap();
        assert_eq!(read_all(&f, &schema), expected);
        // A tile-aligned part.
        let h = f.headers(6).unwrap();
        let dictionary = f.dictionary(6).unwrap();
        let strings = StringTarget::Strings { dictionary: &dictionary };
        let part = f.decode(6, schema.field(6), &h, TILE_ROWS, 2 * TILE_ROWS, &strings).unwrap();
        assert_eq!(part.as_ref(), expected.column(6).slice(TILE_ROWS, 2 * TILE_ROWS).as_ref());
        assert!(f.decode(6, schema.field(6), &h, 1, 10, &strings).is_err());
        let e = &f.footer().columns;
        assert!(e[8].ipc.is_some());
        assert!(e[3].schemes[Scheme::Plain as usize] >= 1, "the tile holding i128::MAX / 7 (row 3001) is plain");
        assert!(e[2].stored_bytes < e[2].arrow_bytes / 4, "sorted dates: {:?}", e[2]);
    }

    #[test]
    fn string_codes_map_to_a_table_dictionary_and_bytes_are_looked_up() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let values: Vec<Option<&str>> = (0..5000).map(|i| [Some("b"), None, Some("a"), Some("c")][i % 4]).collect();
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(StringArray::from(values.clone()))]).unwrap();
        let (_dir, f) = write_read(&[batch]);
        let dict = f.dictionary(0).unwrap();
        assert_eq!(dict, ["b", "a", "c"]);
        let sorted = ["a", "b", "c", "d"];
        let map: Vec<i32> = dict.iter().map(|s| sorted.binary_search(s).unwrap() as i32).collect();
        let h = f.headers(0).unwrap();
        let codes = f.decode(0, schema.field(0), &h, 0, 5000, &StringTarget::Codes { file_to_table: &map, sorted: &sorted }).unwrap();
        let codes = codes.as_primitive::<Int32Type>();
        for (i, v) in values.iter().enumerate() {
            assert_eq!(codes.is_valid(i), v.is_some());
            if let Some(v) = v {
                assert_eq!(sorted[codes.value(i) as usize], *v);
            }
        }
    }

    /// Values that hardly repeat leave the dictionary after its trial rows; the rest go
    /// as bytes, and every row reads back.
    #[test]
    fn a_dictionary_of_values_that_do_not_repeat_is_closed() {
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
        let n = DICTIONARY_TRIAL_ROWS + 3 * TILE_ROWS + 5;
        let values = StringArray::from_iter_values((0..n).map(|i| format!("comment {i}")));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(values.clone())]).unwrap();
        let (_dir, f) = write_read(&[batch]);
        assert_eq!(f.dictionary(0).unwrap().len(), DICTIONARY_TRIAL_ROWS);
        let h = f.headers(0).unwrap();
        assert!(h[..16].iter().all(|h| h.flags & FLAG_CODES != 0) && h[16..].iter().all(|h| h.flags & FLAG_LENGTHS != 0));
        assert!(h[16..].iter().all(|h| h.flags & FLAG_ZSTD != 0), "'comment N' compresses");
        assert_eq!(read_all(&f, &schema).column(0).as_ref(), &values as &dyn Array);
        // As codes of a table-wide dictionary: the strings kept as (compressed) bytes
        // join it and are looked up in it.
        let dict = f.dictionary(0).unwrap();
        let extra = f.plain_strings(0).unwrap();
        assert_eq!(extra.len(), n - DICTIONARY_TRIAL_ROWS);
        let mut sorted: Vec<&str> = dict.iter().copied().chain(extra.iter().map(|s| s.as_str())).collect();
        sorted.sort_unstable();
        let map: Vec<i32> = dict.iter().map(|s| sorted.binary_search(s).unwrap() as i32).collect();
        let codes = f.decode(0, schema.field(0), &h, 0, n, &StringTarget::Codes { file_to_table: &map, sorted: &sorted }).unwrap();
        let codes = codes.as_primitive::<Int32Type>();
        assert!((0..n).all(|i| sorted[codes.value(i) as usize] == values.value(i)));
    }

    /// The tile after the dictionary's trial (whose 16 tiles of distinct values close
    /// it): from there on every tile stores lengths and bytes.
    const FIRST_LENGTHS_TILE: usize = DICTIONARY_TRIAL_ROWS / TILE_ROWS;

    /// A nullable string column: 16 tiles of distinct values, then tiles of lengths
    /// and bytes, each as the comment says; written in batches that cut tiles.
    fn strings_file() -> (tempfile::TempDir, ColumnFile, Arc<Schema>, StringArray) {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut rows: Vec<Option<String>> = (0..DICTIONARY_TRIAL_ROWS).map(|i| Some(format!("distinct value {i}"))).collect();
        let words = ["furiously", "regular", "deposits", "sleep", "quickly", "ironic", "packages", "Ünïcødé", "日本語", "🦀"];
        let sentence = |rng: &mut Rng| (0..1 + rng.next() % 8).map(|_| words[(rng.next() % 10) as usize]).collect::<Vec<_>>().join(" ");
        // 16: text of few words (multibyte ones among them), compressible.
        rows.extend((0..TILE_ROWS).map(|_| Some(sentence(&mut rng))));
        // 17: empty strings only: no bytes at all.
        rows.extend((0..TILE_ROWS).map(|_| Some(String::new())));
        // 18: runs of NULLs between sentences.
        rows.extend((0..TILE_ROWS).map(|i| ((i / 100) % 3 != 0).then(|| sentence(&mut rng))));
        // 19: NULLs only.
        rows.extend((0..TILE_ROWS).map(|_| None));
        // 20: random printable ASCII of random lengths, a few NULLs and empty strings.
        rows.extend((0..TILE_ROWS).map(|i| (i % 97 != 0).then(|| { let n = (rng.next() % 40) as usize; rng.ascii(n) })));
        // 21, partial: five short random strings, fewer bytes than any zstd frame.
        rows.extend((0..5).map(|_| Some(rng.ascii(7))));
        let values = StringArray::from(rows);
        let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
        let batches: Vec<RecordBatch> = (0..values.len())
            .step_by(3000)
            .map(|at| RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(values.slice(at, 3000.min(values.len() - at)))]).unwrap())
            .collect();
        let (dir, f) = write_read(&batches);
        (dir, f, schema, values)
    }

    #[test]
    fn string_tiles_keep_their_bytes_compressed_when_that_is_smaller() {
        let (_dir, f, schema, values) = strings_file();
        let h = f.headers(0).unwrap();
        let t = FIRST_LENGTHS_TILE;
        assert_eq!(h.len(), t + 6);
        assert!(h[t..].iter().all(|h| h.flags & FLAG_LENGTHS != 0));
        let zstd: Vec<bool> = h[t..].iter().map(|h| h.flags & FLAG_ZSTD != 0).collect();
        assert_eq!(zstd, [true, false, true, false, true, false], "{:?}", &h[t..]);
        assert!(h[t + 3].flags & tiles::FLAG_ALL_NULL != 0 && h[t + 2].flags & tiles::FLAG_NULLS != 0);
        // The compressed tiles are much smaller than their bytes.
        let raw: usize = (t * TILE_ROWS..(t + 1) * TILE_ROWS).map(|i| values.value(i).len()).sum();
        assert!((h[t].len as usize) * 3 < raw, "{} of {raw}", h[t].len);
        assert_eq!(read_all(&f, &schema).column(0).as_ref(), &values as &dyn Array);
        // Tile-aligned parts, starting at a compressed tile and at an uncompressed one.
        let strings = StringTarget::Strings { dictionary: &[] };
        for (first, tiles) in [(t, 3), (t + 3, 3), (t + 5, 1)] {
            let rows = values.len().min((first + tiles) * TILE_ROWS) - first * TILE_ROWS;
            let part = f.decode(0, schema.field(0), &h, first * TILE_ROWS, rows, &strings).unwrap();
            assert_eq!(part.as_ref(), &values.slice(first * TILE_ROWS, rows) as &dyn Array);
        }
    }

    #[test]
    fn zstd_frames_are_kept_only_when_smaller() {
        let mut rng = Rng(7);
        let mut c = None;
        let mut frame = Vec::new();
        let random: Vec<u8> = (0..100_000).map(|_| rng.next() as u8).collect();
        assert!(zstd_frame(&mut c, &random, &mut frame).is_none());
        assert!(zstd_frame(&mut c, &[], &mut frame).is_none());
        assert!(zstd_frame(&mut c, b"abcdefgh", &mut frame).is_none());
        let text = "slyly even requests wake ".repeat(4000);
        let z = zstd_frame(&mut c, text.as_bytes(), &mut frame).expect("text compresses").to_vec();
        assert!(z.len() * 20 < text.len());
        assert_eq!(zstd::bulk::decompress(&z, text.len()).unwrap(), text.as_bytes());
        // The compressor is reused: random bytes after text still come back as not smaller.
        assert!(zstd_frame(&mut c, &random, &mut frame).is_none());
    }

    /// Damaged compressed tiles (frame bytes, frame header, the tile's length, its flags)
    /// are errors that say the file is corrupt, never panics nor wrong strings.
    #[test]
    fn a_damaged_zstd_frame_is_an_error() {
        let (dir, f, schema, values) = strings_file();
        let path = dir.path().join("f.tiles");
        let e = f.footer().columns[0].clone();
        let h = f.headers(0).unwrap();
        drop(f);
        let good = std::fs::read(&path).unwrap();
        let t = FIRST_LENGTHS_TILE;
        let frame_at = |k: usize| (e.data + h[k].offset) as usize + h[k].values_bytes() + h[k].bitmap_bytes();
        let frame_len = zstd::zstd_safe::find_frame_compressed_size(&good[frame_at(t)..]).unwrap();
        let header_at = |k: usize| e.headers as usize + k * HEADER_BYTES;
        let damages: Vec<(&str, Box<dyn Fn(&mut Vec<u8>)>)> = vec![
            ("a byte inside the frame", Box::new(|b: &mut Vec<u8>| b[frame_at(t) + frame_len / 2] ^= 0x5a)),
            ("the frame's last byte (checksum)", Box::new(|b: &mut Vec<u8>| b[frame_at(t) + frame_len - 1] ^= 1)),
            ("the frame's magic", Box::new(|b: &mut Vec<u8>| b[frame_at(t)..frame_at(t) + 4].copy_from_slice(b"TSTI"))),
            ("the tile's length cut", Box::new(|b: &mut Vec<u8>| {
                let len = (h[t].len - 8 * (frame_len as u64 / 16)).to_le_bytes();
                b[header_at(t) + 24..header_at(t) + 32].copy_from_slice(&len);
            })),
            ("FLAG_ZSTD cleared", Box::new(|b: &mut Vec<u8>| b[header_at(t) + 2] &= !FLAG_ZSTD)),
            ("FLAG_ZSTD set on raw bytes", Box::new(|b: &mut Vec<u8>| b[header_at(t + 5) + 2] |= FLAG_ZSTD)),
            ("a length changed", Box::new(|b: &mut Vec<u8>| {
                let lengths = (e.data + h[t].offset) as usize;
                b[lengths] ^= 1;
            })),
        ];
        for (what, damage) in damages {
            let mut bad = good.clone();
            damage(&mut bad);
            std::fs::write(&path, &bad).unwrap();
            let f = ColumnFile::open(&path).unwrap();
            let h = f.headers(0).unwrap();
            let rows = values.len() - t * TILE_ROWS;
            let got = f.decode(0, schema.field(0), &h, t * TILE_ROWS, rows, &StringTarget::Strings { dictionary: &[] });
            let err = got.expect_err(what).to_string();
            assert!(err.contains("corrupt data file"), "{what}: {err}");
            assert!(f.plain_strings(0).is_err(), "{what}: the strings a dictionary needs");
        }
        std::fs::write(&path, &good).unwrap();
        let f = ColumnFile::open(&path).unwrap();
        let dictionary = f.dictionary(0).unwrap();
        let all = f.decode(0, schema.field(0), &h, 0, values.len(), &StringTarget::Strings { dictionary: &dictionary }).unwrap();
        assert_eq!(all.as_ref(), &values as &dyn Array);
    }

    #[test]
    fn damaged_files_are_errors_not_panics() {
        let schema = Arc::new(Schema::new(vec![Field::new("i", DataType::Int64, false)]));
        let batch = RecordBatch::try_new(Arc::clone(&schema), vec![Arc::new(Int64Array::from_iter_values(0..10_000))]).unwrap();
        let (dir, f) = write_read(&[batch]);
        let path = dir.path().join("f.tiles");
        let good = std::fs::read(&path).unwrap();
        drop(f);
        for cut in [0, 7, 30, good.len() / 2, good.len() - 9] {
            std::fs::write(&path, &good[..cut]).unwrap();
            assert!(ColumnFile::open(&path).is_err(), "cut at {cut}");
        }
        // Tile data overwritten with garbage: decoding fails or returns values, never panics.
        let mut bad = good.clone();
        let end = (bad.len() - 16).min(600);
        for b in bad[100..end].iter_mut() {
            *b = 0xff;
        }
        std::fs::write(&path, &bad).unwrap();
        if let Ok(f) = ColumnFile::open(&path) {
            if let Ok(h) = f.headers(0) {
                let _ = f.decode(0, schema.field(0), &h, 0, 10_000, &StringTarget::Strings { dictionary: &[] });
            }
        }
    }
}
