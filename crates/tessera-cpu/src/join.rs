//! Hash tables for joins: built once from the build pipeline's rows, probed by many
//! threads.
//!
//! Rows with equal keys are chained (`first[slot]` → `next[row]` → …, in build order),
//! so duplicate build keys need no special case. Two addressings:
//! - **perfect**: one integer key whose range is known from statistics; the slot is
//!   `key - min`, no hashing and no key comparison (SSB's dimension keys). Large builds
//!   are cut into ranges of adjacent slots, each filled by one thread;
//! - **hashed**: any keys — as 64-bit words when all have a fixed width, else in arrow's
//!   row format ([`crate::hash`]) — in open-addressing tables (linear probing) whose
//!   slots hold a chain's head and its key's hash. The keys are cut into partitions by
//!   the hash's high bits, each with a table of its own that one thread fills and grows
//!   with its distinct keys (not its rows: a build with many duplicates stays small), so
//!   a large build runs on every thread without sharing a slot — the build-side half of
//!   a radix-partitioned join, without moving the rows. A build of many keys also gets
//!   a Bloom filter that probes check first ([`Bloom`]).
//!
//! Every serial step of a large build was measured on 16 cores (TPC-H SF 10) and made
//! parallel or removed: see the constants and helpers below for the figures.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, Rows};
use tessera_common::{Result, TesseraError};
use tessera_ir::BuildStrategy;

use crate::parallel::{atomics, in_ranges, on_threads, per_partition};
use crate::hash::{WordLayout, any_null, hash_bytes, hash_words, int_slice, same_words, is_int_key, normalize, plain_type, row_converter};

const NONE: u32 = u32::MAX;

/// A build side of fewer rows than this is inserted on one thread: below it, starting
/// threads costs more than the inserts.
const PARALLEL_BUILD_MIN_ROWS: usize = 1 << 17;

/// Partitions per build thread: several, so one crowded partition does not hold up
/// the others.
const PARTITIONS_PER_THREAD: usize = 4;

/// The build side's keys, one row after the other.
enum Keys {
    /// Fixed-width keys as words (see [`WordLayout`]); no NULL bits, as rows with a NULL
    /// key never match.
    Words { layout: WordLayout, words: Vec<u64> },
    /// Any keys in arrow's row format.
    Rows { converter: RowConverter, rows: Rows },
}

/// Probe keys encoded like the build side's.
enum ProbeKeys {
    Words(Vec<u64>),
    Rows(Rows),
}

impl Keys {
    /// The build side's keys and each row's hash; word keys are encoded and hashed on
    /// `threads` threads, a range of rows each.
    fn encode(key_types: &[DataType], keys: &[ArrayRef], rows: usize, nulls_equal: bool, threads: usize) -> Result<(Keys, Vec<u64>)> {
        // Word keys carry no NULL bits, so NULL = NULL joins go through the row format.
        let layout = if nulls_equal { None } else { WordLayout::new(key_types, false) };
        let keys = match layout {
            Some(layout) => {
                let w = layout.width;
                // Each thread encodes and hashes its range of rows in place.
                let mut words = vec![0u64; rows * w];
                let mut hashes = vec![0u64; rows];
                let per = rows.div_ceil(threads.max(1)).max(1);
                let pieces: Vec<(usize, &mut [u64], &mut [u64])> =
                    words.chunks_mut(per * w).zip(hashes.chunks_mut(per)).enumerate().map(|(i, (ws, hs))| (i * per, ws, hs)).collect();
                on_threads(pieces, |(a, ws, hs)| {
                    let n = hs.len();
                    let sliced: Vec<ArrayRef> = keys.iter().map(|k| k.slice(a, n)).collect();
                    ws.copy_from_slice(&layout.encode(&sliced, n, true)?);
                    for (h, key) in hs.iter_mut().zip(ws.chunks_exact(w)) {
                        *h = hash_words(key);
                    }
                    Ok(())
                })?;
                return Ok((Keys::Words { layout, words }, hashes));
            }
            None => {
                let converter = row_converter(key_types)?;
                let rows = converter.convert_columns(keys).map_err(crate::eval::arrow_err)?;
                Keys::Rows { converter, rows }
            }
        };
        let hashes = keys.hashes_of(&keys.probe_view());
        Ok((keys, hashes))
    }

    /// The build side's own keys, as probe keys are held (borrowed).
    fn probe_view(&self) -> ProbeView<'_> {
        match self {
            Keys::Words { layout, words } => ProbeView::Words(words, layout.width),
            Keys::Rows { rows, .. } => ProbeView::Rows(rows),
        }
    }

    fn encode_probe(&self, keys: &[ArrayRef], rows: usize) -> Result<ProbeKeys> {
        Ok(match self {
            Keys::Words { layout, .. } => ProbeKeys::Words(layout.encode(keys, rows, true)?),
            Keys::Rows { converter, .. } => ProbeKeys::Rows(converter.convert_columns(keys).map_err(crate::eval::arrow_err)?),
        })
    }

    fn hashes_of(&self, view: &ProbeView<'_>) -> Vec<u64> {
        match view {
            ProbeView::Words(words, w) => words.chunks_exact(*w).map(hash_words).collect(),
            ProbeView::Rows(rows) => rows.iter().map(|r| hash_bytes(r.as_ref())).collect(),
        }
    }

    /// Whether build row `b` has probe row `r`'s key. One word is its own hash (the
    /// word hash is a bijection), so equal hashes are equal keys.
    #[inline]
    fn same(&self, b: usize, view: &ProbeView<'_>, r: usize) -> bool {
        match (self, view) {
            (Keys::Words { words, .. }, ProbeView::Words(theirs, w)) => *w == 1 || same_words(&words[b * w..b * w + w], &theirs[r * w..r * w + w]),
            (Keys::Rows { rows, .. }, ProbeView::Rows(theirs)) => rows.row(b) == theirs.row(r),
            _ => false,
        }
    }
}

/// Keys as [`Keys::same`] reads them.
enum ProbeView<'a> {
    Words(&'a [u64], usize),
    Rows(&'a Rows),
}

impl ProbeView<'_> {
    /// Whether rows `a` and `b` have the same key.
    #[inline]
    fn same_rows(&self, a: usize, b: usize) -> bool {
        match self {
            ProbeView::Words(words, w) => same_words(&words[a * w..a * w + w], &words[b * w..b * w + w]),
            ProbeView::Rows(rows) => rows.row(a) == rows.row(b),
        }
    }
}

impl ProbeKeys {
    fn view(&self, keys: &Keys) -> ProbeView<'_> {
        match (self, keys) {
            (ProbeKeys::Words(w), Keys::Words { layout, .. }) => ProbeView::Words(w, layout.width),
            (ProbeKeys::Rows(r), _) => ProbeView::Rows(r),
            (ProbeKeys::Words(w), _) => ProbeView::Words(w, 1),
        }
    }
}

/// A build's rows by partition, for the partitions' threads to take: per contiguous
/// range of rows (each gathered on a thread of its own), each partition's rows in
/// descending order.
struct Members(Vec<Vec<Vec<u32>>>);

impl Members {
    /// The rows `0..rows` in `count` partitions; `partition_of(r)` is row `r`'s (None: the
    /// row is left out).
    fn of(rows: usize, threads: usize, count: usize, partition_of: impl Fn(usize) -> Result<Option<usize>> + Sync) -> Result<Members> {
        let ranges = in_ranges(rows, threads, |a, n| {
            let mut lists: Vec<Vec<u32>> = vec![Vec::new(); count];
            for r in (a..a + n).rev() {
                if let Some(p) = partition_of(r)? {
                    lists[p].push(r as u32);
                }
            }
            Ok(lists)
        })?;
        Ok(Members(ranges))
    }

    /// Partition `p`'s rows, last to first: pushing each at the head of its chain leaves
    /// the chains in build order.
    fn rows(&self, p: usize) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().rev().flat_map(move |lists| lists[p].iter().copied())
    }

    /// How many rows partition `p` has.
    fn len(&self, p: usize) -> usize {
        self.0.iter().map(|lists| lists[p].len()).sum()
    }
}

/// One partition's open-addressing table (linear probing, load factor at most 1/2).
struct Part {
    /// Per slot: the head of its chain plus one (0: empty, so a new table is a zeroed
    /// allocation with no pass writing every slot).
    first: Vec<u32>,
    /// Per slot: the hash of its chain's key.
    hashes: Vec<u64>,
    /// Distinct keys held.
    used: usize,
}

/// Slots a partition's table starts with at least; it doubles as its keys need.
const PART_INITIAL_SLOTS: usize = 1024;

impl Part {
    /// A table for a partition of `rows` build rows: room for them all at a load of
    /// at most one half if at least half of them have distinct keys (the usual join on
    /// a key), so such a build grows at most once; one with many duplicates stays at
    /// most twice as large as it needs.
    fn new(rows: usize) -> Part {
        let slots = rows.next_power_of_two().max(PART_INITIAL_SLOTS);
        Part { first: vec![0; slots], hashes: vec![0; slots], used: 0 }
    }

    /// Puts build row `r` (hash `h`) at the head of its key's chain; `same(head)`
    /// tells whether row `head` has `r`'s key.
    #[inline]
    fn insert(&mut self, r: u32, h: u64, next: &[AtomicU32], same: impl Fn(usize) -> bool) {
        if (self.used + 1) * 2 > self.first.len() {
            self.grow();
        }
        let mask = self.first.len() - 1;
        let mut s = h as usize & mask;
        loop {
            let head = self.first[s];
            if head == 0 {
                self.first[s] = r + 1;
                self.hashes[s] = h;
                self.used += 1;
                return;
            }
            if self.hashes[s] == h && same(head as usize - 1) {
                next[r as usize].store(head - 1, Ordering::Relaxed);
                self.first[s] = r + 1;
                return;
            }
            s = (s + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = self.first.len() * 2;
        let mask = size - 1;
        let mut first = vec![0u32; size];
        let mut hashes = vec![0u64; size];
        for (&head, &h) in self.first.iter().zip(&self.hashes) {
            if head != 0 {
                let mut s = h as usize & mask;
                while first[s] != 0 {
                    s = (s + 1) & mask;
                }
                first[s] = head;
                hashes[s] = h;
            }
        }
        self.first = first;
        self.hashes = hashes;
    }

    /// The head of the chain whose key hashes to `h` and satisfies `same` (`NONE`
    /// when there is none).
    #[inline]
    fn find(&self, h: u64, same: impl Fn(usize) -> bool) -> u32 {
        let mask = self.first.len() - 1;
        let mut s = h as usize & mask;
        loop {
            let head = self.first[s];
            if head == 0 {
                return NONE;
            }
            if self.hashes[s] == h && same(head as usize - 1) {
                return head - 1;
            }
            s = (s + 1) & mask;
        }
    }
}

/// A build of at least this many distinct keys gets a [`Bloom`] filter: its table (about
/// 24 bytes a key at half load) no longer fits a core's L2 cache, so a probe that misses
/// the table would wait for memory, while the filter (2 bytes a key) mostly stays cached.
const BLOOM_MIN_KEYS: usize = 1 << 18;

/// A blocked Bloom filter over a hashed build's keys: a key sets three bits of one
/// 64-bit word (one cache line read a probe), about 16 bits a key. Probe rows whose key
/// it rules out (most of them in a selective join: TPC-H q03's lineitem rows meeting
/// 1.5 M of 15 M orders) skip the table. Bit positions come from hash bits that neither
/// the partition (the top bits) nor the word (the low bits) use.
struct Bloom {
    words: Vec<AtomicU64>,
    mask: usize,
}

impl Bloom {
    fn new(keys: usize) -> Bloom {
        let n = (keys / 4).next_power_of_two().max(1);
        Bloom { words: (0..n).map(|_| AtomicU64::new(0)).collect(), mask: n - 1 }
    }

    #[inline]
    fn bits(h: u64) -> u64 {
        (1 << ((h >> 38) & 63)) | (1 << ((h >> 44) & 63)) | (1 << ((h >> 50) & 63))
    }

    fn insert(&self, h: u64) {
        self.words[h as usize & self.mask].fetch_or(Self::bits(h), Ordering::Relaxed);
    }

    #[inline]
    fn may_contain(&self, h: u64) -> bool {
        let b = Self::bits(h);
        self.words[h as usize & self.mask].load(Ordering::Relaxed) & b == b
    }
}

enum Index {
    /// Every build row matches every probe row (a join without keys).
    All,
    Perfect {
        min: i64,
        first: Vec<u32>,
    },
    Hashed {
        keys: Keys,
        /// For builds of many keys (see [`BLOOM_MIN_KEYS`]).
        bloom: Option<Bloom>,
        /// `1 << part_bits` partitions by the hash's high bits.
        parts: Vec<Part>,
        part_bits: u32,
    },
}

/// A built join hash table with its payload columns.
pub struct JoinTable {
    /// Payload columns, one array each.
    pub payload: Vec<ArrayRef>,
    /// Build rows.
    pub rows: usize,
    /// Whether some build row has a NULL key (NOT IN semantics need it).
    pub has_null_key: bool,
    key_types: Vec<DataType>,
    index: Index,
    /// Per build row: the next row of its chain (written by the partitions' threads).
    next: Vec<AtomicU32>,
}

impl std::fmt::Debug for JoinTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinTable").field("rows", &self.rows).finish()
    }
}

/// The partition of a hash (its high `bits` bits).
#[inline]
fn partition(hash: u64, bits: u32) -> usize {
    if bits == 0 { 0 } else { (hash >> (64 - bits)) as usize }
}

impl JoinTable {
    /// Builds a table over `keys` (one array per key, all build rows) and `payload`,
    /// on up to `threads` threads.
    pub fn build(
        keys: Vec<ArrayRef>,
        payload: Vec<ArrayRef>,
        rows: usize,
        strategy: &BuildStrategy,
        nulls_equal: bool,
        threads: usize,
    ) -> Result<JoinTable> {
        if rows >= NONE as usize {
            return Err(TesseraError::ResourcesExhausted(format!("join build side of {rows} rows is too large")));
        }
        let threads = if rows < PARALLEL_BUILD_MIN_ROWS { 1 } else { threads.max(1) };
        let key_types: Vec<DataType> = keys.iter().map(|k| plain_type(k.data_type())).collect();
        let keys = normalize(&keys, &key_types)?;
        let nulls = any_null(&keys, rows);
        let has_null_key = nulls.iter().any(|&n| n);
        let skip = |r: usize| nulls[r] && !nulls_equal;
        let next = atomics(rows, NONE, threads);
        let single_int = keys.len() == 1 && is_int_key(&key_types[0]) && !nulls_equal;
        // Partitions a large build is cut into, each filled by one thread.
        let count = if threads == 1 { 1 } else { (threads * PARTITIONS_PER_THREAD).next_power_of_two() };
        let index = if keys.is_empty() {
            Index::All
        } else if let (BuildStrategy::Perfect { min, max }, true) = (strategy, single_int) {
            let (min, max) = (*min, *max);
            let vals = int_slice(&keys[0])?;
            let slots = (max - min + 1) as usize;
            // Partitions of adjacent slots, `1 << shift` each, filled in parallel (each
            // writes its own part of `first`).
            let slot_bits = usize::BITS - slots.saturating_sub(1).leading_zeros();
            let shift = slot_bits.saturating_sub(count.trailing_zeros());
            let members = Members::of(rows, threads, count, |r| {
                if skip(r) {
                    return Ok(None);
                }
                let v = vals[r];
                if v < min || v > max {
                    return Err(TesseraError::Internal(format!("join key {v} outside the range [{min}, {max}] the statistics promised")));
                }
                Ok(Some(((v - min) as usize) >> shift))
            })?;
            let mut first = vec![NONE; slots];
            let pieces: Vec<std::sync::Mutex<&mut [u32]>> = first.chunks_mut(1 << shift).map(std::sync::Mutex::new).collect();
            per_partition(pieces.len(), threads, |p| {
                let Ok(mut piece) = pieces[p].lock() else { return };
                let base = p << shift;
                for r in members.rows(p) {
                    let s = (vals[r as usize] - min) as usize - base;
                    next[r as usize].store(piece[s], Ordering::Relaxed);
                    piece[s] = r;
                }
            })?;
            drop(pieces);
            Index::Perfect { min, first }
        } else {
            let (encoded, row_hashes) = Keys::encode(&key_types, &keys, rows, nulls_equal, threads)?;
            let part_bits = count.trailing_zeros();
            let members = Members::of(rows, threads, count, |r| Ok((!skip(r)).then(|| partition(row_hashes[r], part_bits))))?;
            let view = encoded.probe_view();
            let parts: Vec<Part> = per_partition(count, threads, |p| {
                let mut part = Part::new(members.len(p));
                for r in members.rows(p) {
                    part.insert(r, row_hashes[r as usize], &next, |head| encoded.same(head, &view, r as usize));
                }
                part
            })?;
            let mut encoded = encoded;
            if let Keys::Words { layout, words } = &mut encoded {
                // One word is its own hash, kept in the slots: the rows' copy is not read.
                if layout.width == 1 {
                    *words = Vec::new();
                }
            }
            let keys_held: usize = parts.iter().map(|p| p.used).sum();
            let bloom = if keys_held >= BLOOM_MIN_KEYS {
                let bloom = Bloom::new(keys_held);
                per_partition(parts.len(), threads, |p| {
                    let part = &parts[p];
                    for (&head, &h) in part.first.iter().zip(&part.hashes) {
                        if head != 0 {
                            bloom.insert(h);
                        }
                    }
                })?;
                Some(bloom)
            } else {
                None
            };
            Index::Hashed { keys: encoded, bloom, parts, part_bits }
        };
        Ok(JoinTable { payload, rows, has_null_key, key_types, index, next })
    }

    /// For each probe row (in order), the head of its chain of matching build rows, or
    /// `u32::MAX` for none. NULL keys match nothing unless `nulls_equal`.
    pub fn heads(&self, keys: &[ArrayRef], rows: usize, nulls_equal: bool) -> Result<Vec<u32>> {
        let keys = normalize(keys, &self.key_types)?;
        let nulls = if nulls_equal { vec![false; rows] } else { any_null(&keys, rows) };
        let mut out = vec![NONE; rows];
        match &self.index {
            Index::All => {
                if self.rows > 0 {
                    out.iter_mut().for_each(|o| *o = 0);
                }
            }
            Index::Perfect { min, first } => {
                let vals = int_slice(&keys[0])?;
                let n = first.len() as u64;
                for r in 0..rows {
                    let s = vals[r].wrapping_sub(*min) as u64;
                    if s < n && !nulls[r] {
                        out[r] = first[s as usize];
                    }
                }
            }
            Index::Hashed { keys: build, bloom, parts, part_bits } => {
                let probe = build.encode_probe(&keys, rows)?;
                let view = probe.view(build);
                let probe_hashes = build.hashes_of(&view);
                for r in 0..rows {
                    if nulls[r] {
                        continue;
                    }
                    // A row with the previous row's key has its chain (probe sides
                    // clustered by the key: lineitem by l_orderkey).
                    out[r] = if r > 0 && !nulls[r - 1] && probe_hashes[r] == probe_hashes[r - 1] && view.same_rows(r - 1, r) {
                        out[r - 1]
                    } else {
                        let h = probe_hashes[r];
                        if bloom.as_ref().is_some_and(|b| !b.may_contain(h)) {
                            NONE
                        } else {
                            parts[partition(h, *part_bits)].find(h, |head| build.same(head, &view, r))
                        }
                    };
                }
            }
        }
        Ok(out)
    }

    /// Candidate pairs (probe row, build row) of the chains at `heads` (from
    /// [`JoinTable::heads`]), in probe order and chain order, the build rows `keep`
    /// accepts.
    pub fn pairs(&self, heads: &[u32], keep: impl Fn(u32) -> bool) -> (Vec<u32>, Vec<u32>) {
        let (mut pr, mut br) = (Vec::with_capacity(heads.len()), Vec::with_capacity(heads.len()));
        for (r, &h) in heads.iter().enumerate() {
            let mut b = h;
            while b != NONE {
                if keep(b) {
                    pr.push(r as u32);
                    br.push(b);
                }
                b = self.next(b);
            }
        }
        (pr, br)
    }

    /// The build row after `row` in its chain (`u32::MAX` at the end).
    #[inline]
    pub fn next(&self, row: u32) -> u32 {
        match self.index {
            // Without keys every build row is in one chain: 0, 1, 2, …
            Index::All => {
                if (row as usize) + 1 < self.rows { row + 1 } else { NONE }
            }
            _ => self.next[row as usize].load(Ordering::Relaxed),
        }
    }
}

/// Marks the end of a chain.
pub const END: u32 = NONE;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use std::collections::HashMap;

    use arrow::array::{Decimal128Array, Int32Array, Int64Array, StringArray};

    use super::*;

    fn chain(t: &JoinTable, head: u32) -> Vec<u32> {
        let mut v = Vec::new();
        let mut r = head;
        while r != END {
            v.push(r);
            r = t.next(r);
        }
        v
    }

    #[test]
    fn every_addressing_finds_duplicates_in_build_order_and_skips_nulls() {
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![Some(5), Some(7), Some(5), None, Some(9)]));
        let probe: ArrayRef = Arc::new(Int32Array::from(vec![Some(5), Some(6), None, Some(9), Some(100)]));
        for strategy in [BuildStrategy::Perfect { min: 5, max: 9 }, BuildStrategy::Hash { key_ranges: vec![None] }] {
            let t = JoinTable::build(vec![Arc::clone(&keys)], vec![], 5, &strategy, false, 1).unwrap();
            assert!(t.has_null_key);
            let heads = t.heads(&[Arc::clone(&probe)], 5, false).unwrap();
            let chains: Vec<Vec<u32>> = heads.iter().map(|&h| chain(&t, h)).collect();
            assert_eq!(chains, vec![vec![0, 2], vec![], vec![], vec![4], vec![]], "{strategy:?}");
        }
    }

    #[test]
    fn string_keys_match_across_dictionary_and_plain_arrays() {
        let build: ArrayRef = Arc::new(StringArray::from(vec!["a", "b", "a"]));
        let dict: arrow::array::DictionaryArray<arrow::datatypes::Int32Type> = vec!["b", "a", "z"].into_iter().collect();
        let t = JoinTable::build(vec![build], vec![], 3, &BuildStrategy::Hash { key_ranges: vec![None] }, false, 1).unwrap();
        let heads = t.heads(&[Arc::new(dict) as ArrayRef], 3, false).unwrap();
        assert_eq!(chain(&t, heads[0]), vec![1]);
        assert_eq!(chain(&t, heads[1]), vec![0, 2]);
        assert_eq!(heads[2], END);
    }

    #[test]
    fn nulls_equal_joins_match_null_keys() {
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![None, Some(1)]));
        let t = JoinTable::build(vec![Arc::clone(&keys)], vec![], 2, &BuildStrategy::Hash { key_ranges: vec![None] }, true, 1).unwrap();
        let heads = t.heads(&[keys], 2, true).unwrap();
        assert_eq!(heads, vec![0, 1]);
    }

    /// A perfect-hash build of many rows (slot ranges filled on several threads) chains
    /// every duplicate in build order, skips NULL keys, and refuses a key outside the
    /// promised range.
    #[test]
    fn parallel_perfect_builds_chain_every_duplicate_in_order() {
        let rows = 400_000;
        let (min, max) = (-1_000i64, 99_000i64);
        let keys: Vec<Option<i64>> = (0..rows).map(|i| (i % 101 != 0).then_some(min + ((i * 7919) % 60_000) as i64)).collect();
        let mut expected: HashMap<i64, Vec<u32>> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            if let Some(k) = k {
                expected.entry(*k).or_default().push(i as u32);
            }
        }
        let array: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
        let probe: Vec<Option<i64>> = (min - 5..=max + 5).map(Some).chain([None]).collect();
        for threads in [1, 3, 16] {
            let t = JoinTable::build(vec![Arc::clone(&array)], vec![], rows, &BuildStrategy::Perfect { min, max }, false, threads).unwrap();
            assert!(t.has_null_key);
            let heads = t.heads(&[Arc::new(Int64Array::from(probe.clone())) as ArrayRef], probe.len(), false).unwrap();
            for (k, &h) in probe.iter().zip(&heads) {
                let want = k.and_then(|k| expected.get(&k)).cloned().unwrap_or_default();
                assert_eq!(chain(&t, h), want, "key {k:?}, {threads} threads");
            }
        }
        let outside: ArrayRef = Arc::new(Int64Array::from_iter_values((0..rows as i64).map(|i| if i == 300_000 { max + 1 } else { 0 })));
        assert!(JoinTable::build(vec![outside], vec![], rows, &BuildStrategy::Perfect { min, max }, false, 4).is_err());
    }

    /// A build of more distinct keys than [`BLOOM_MIN_KEYS`] has a Bloom filter: every
    /// build key still finds its rows, and it rules out most keys the build lacks.
    #[test]
    fn bloom_filters_keep_every_build_key_and_rule_out_most_others() {
        let rows = BLOOM_MIN_KEYS + 1000;
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values((0..rows as i64).map(|i| i * 7)));
        let t = JoinTable::build(vec![keys], vec![], rows, &BuildStrategy::Hash { key_ranges: vec![None] }, false, 4).unwrap();
        let Index::Hashed { bloom: Some(bloom), .. } = &t.index else { panic!("no Bloom filter over {rows} keys") };
        let present: ArrayRef = Arc::new(Int64Array::from_iter_values((0..rows as i64).map(|i| i * 7)));
        let heads = t.heads(&[present], rows, false).unwrap();
        assert!(heads.iter().enumerate().all(|(i, &h)| chain(&t, h) == vec![i as u32]));
        let absent: Vec<i64> = (0..rows as i64).map(|i| i * 7 + 3).collect();
        let passed = absent.iter().filter(|&&k| bloom.may_contain(hash_words(&[k as u64]))).count();
        assert!(passed * 10 < rows, "{passed} of {rows} absent keys pass the filter");
        let heads = t.heads(&[Arc::new(Int64Array::from(absent)) as ArrayRef], rows, false).unwrap();
        assert!(heads.iter().all(|&h| h == END));
    }

    /// A build of many rows (partitioned, on several threads) with duplicate and NULL
    /// keys of two columns finds, for every probe key, exactly its build rows in order.
    #[test]
    fn partitioned_builds_chain_every_duplicate_in_order() {
        let rows = 300_000;
        let a: Vec<Option<i64>> = (0..rows).map(|i| (i % 97 != 0).then_some(((i * 31) % 50_000) as i64 - 25_000)).collect();
        let b: Vec<Option<i128>> = (0..rows).map(|i| Some((i % 3) as i128 * i128::from(u64::MAX))).collect();
        let expected = {
            let mut m: HashMap<(i64, i128), Vec<u32>> = HashMap::new();
            for i in 0..rows {
                if let (Some(x), Some(y)) = (a[i], b[i]) {
                    m.entry((x, y)).or_default().push(i as u32);
                }
            }
            m
        };
        let strings = |v: &[Option<i64>]| -> ArrayRef { Arc::new(StringArray::from_iter(v.iter().map(|x| x.map(|x| format!("s{x}"))))) };
        let dec = |v: &[Option<i128>]| -> ArrayRef { Arc::new(Decimal128Array::from(v.to_vec()).with_precision_and_scale(38, 0).unwrap()) };
        let probe_a: Vec<Option<i64>> = (-25_010..25_010).map(Some).chain([None]).collect();
        for (words, threads) in [(true, 4), (false, 3), (true, 1)] {
            let first: ArrayRef = if words { Arc::new(Int64Array::from(a.clone())) } else { strings(&a) };
            let t = JoinTable::build(vec![first, dec(&b)], vec![], rows, &BuildStrategy::Hash { key_ranges: vec![None, None] }, false, threads).unwrap();
            for y in [0i128, i128::from(u64::MAX), 2 * i128::from(u64::MAX), 7] {
                let pb: Vec<Option<i128>> = vec![Some(y); probe_a.len()];
                let pa: ArrayRef = if words { Arc::new(Int64Array::from(probe_a.clone())) } else { strings(&probe_a) };
                let heads = t.heads(&[pa, dec(&pb)], probe_a.len(), false).unwrap();
                for (x, &h) in probe_a.iter().zip(&heads) {
                    let want = x.and_then(|x| expected.get(&(x, y))).cloned().unwrap_or_default();
                    assert_eq!(chain(&t, h), want, "key ({x:?}, {y}), words {words}, {threads} threads");
                }
            }
        }
    }
}
