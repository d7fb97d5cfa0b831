//! Grouped aggregation: a group table that maps rows to group numbers, and one
//! accumulator array per aggregate indexed by group number.
//!
//! Each worker thread aggregates its morsels into its own table. Group numbers come
//! from either
//! - a **perfect hash**: every key has a small known domain (dictionary codes, an
//!   integer range from statistics, booleans), and the group number is the mixed-radix
//!   number of the keys — an array index, no hashing, no comparisons; or
//! - an **open-addressing hash table** ([`GroupIndex`]) over the keys, stored as
//!   fixed-width 64-bit words where every key has a fixed width (integers, dates,
//!   decimals, booleans: [`WordLayout`]), else in arrow's row format.
//!
//! The workers' tables are merged at the end. Hashed tables with many groups are merged
//! the way DuckDB's radix-partitioned aggregation does: every group goes to a partition
//! by the high bits of its hash, and the partitions are merged in parallel, each into
//! a table of its own, so no table is shared and no merge runs on one thread
//! ([`Partitions`]). As in DuckDB, a worker's hashed table is also bounded
//! ([`LOCAL_MAX_GROUPS`]): when it is full its groups are moved out into partitions by
//! the same hash bits ([`AggregateWorker`]) and it starts empty again, so the table it
//! looks rows up in stays in cache however many groups there are; a group's parts
//! meet only in the merge, one cache-sized partition at a time, read in sequence.
//!
//! Sums of integers and decimals are exact (128-bit); a result that does not fit its
//! SQL type is an error.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, DictionaryArray, Float64Array,
    Int64Array, StringArray, new_null_array,
};
use arrow::datatypes::{DataType, Int32Type};
use arrow::row::{RowConverter, Rows};
use tessera_common::{Result, TesseraError};
use tessera_ir::{AggExpr, AggFunc, Field, GroupStrategy, KeyDomain, Type};

use crate::eval::{Evaluator, arrow_err, cast_to};
use crate::hash::{
    WordLayout, hash_bytes, hash_words, int_values, normalize, plain_type, row_converter, same_words,
};
use crate::types::arrow_type;

/// The CPU keeps a perfect-hash group array per worker thread, so it uses one only up
/// to 1 Mi slots (16 workers × 1 Mi × a few accumulators stays in the hundreds of MB);
/// larger perfect domains (the planner allows 4 Mi for the GPU, which has one shared
/// array) are grouped through the hash table instead.
const CPU_PERFECT_MAX_SLOTS: usize = 1 << 20;

/// Below this many groups in all the workers' tables together, they are merged into
/// one table on one thread: that takes well under a millisecond and keeps the result in
/// one piece. Above it the merge is partitioned and parallel.
const PARTITIONED_MERGE_MIN_GROUPS: usize = 1 << 16;

/// Partitions per worker thread in a partitioned merge: several, so a partition that
/// happens to hold more groups does not leave the other threads idle.
const PARTITIONS_PER_THREAD: usize = 4;

/// A worker's hashed group table is full at this many groups: its groups then move out
/// into [`SPILL_PARTITIONS`] partitions and it starts empty. 64 Ki groups are a few MB
/// (index, keys, hashes, accumulators), which stay in the L2/L3 cache where lookups are
/// cheap, where one table of millions of groups makes every new group a miss to DRAM
/// (TPC-H q18's 15 M orders at SF 10; DuckDB bounds its thread-local tables the same
/// way). Aggregations with fewer groups never spill and merge as before.
const LOCAL_MAX_GROUPS: usize = 1 << 16;

/// Partitions of spilled groups: 256 keep a partition's merged table cache-sized up to
/// ~15 M groups (60 Ki a partition at TPC-H SF 10's q18), while a spill of 64 Ki groups
/// still moves runs of ~256 groups into each.
const SPILL_PARTITIONS: usize = 256;

/// One key's domain as known at run time.
#[derive(Debug, Clone)]
enum Domain {
    Range { min: i64, size: usize },
    Dictionary { values: ArrayRef },
    Boolean,
}

impl Domain {
    /// Slots, including slot 0 for NULL.
    fn slots(&self) -> usize {
        match self {
            Domain::Range { size, .. } => size + 1,
            Domain::Dictionary { values } => values.len() + 1,
            Domain::Boolean => 3,
        }
    }
}

/// How hashed keys are encoded; one per aggregation, shared by its workers' tables so
/// their keys compare when the tables are merged.
#[derive(Debug)]
enum KeyCodec {
    Words(WordLayout),
    Rows(RowConverter),
}

/// The keys of a hashed table's groups, group after group.
enum KeyStore {
    Words(Vec<u64>),
    Rows(Rows),
}

/// Open addressing (linear probing, load factor at most 1/2) from a key's hash to its
/// group number. A slot holds the group number and the high half of its hash, so most
/// mismatches are told apart without reading the stored key; each group's full hash is
/// kept for growing the table and for partitioning it.
struct GroupIndex {
    slots: Vec<u64>,
    mask: usize,
    hashes: Vec<u64>,
}

/// An empty slot. A full one holds the hash's high half and the group number plus one,
/// so it is never zero, and a new table is a zeroed allocation the allocator hands out
/// lazily (no pass writing every slot: for millions of groups that pass and its page
/// faults were ~10% of an aggregation's time).
const EMPTY_SLOT: u64 = 0;

impl GroupIndex {
    /// An index with room for `groups` groups before it grows.
    fn with_capacity(groups: usize) -> GroupIndex {
        let slots = (groups * 2).next_power_of_two().max(1024);
        GroupIndex {
            slots: vec![EMPTY_SLOT; slots],
            mask: slots - 1,
            hashes: Vec::with_capacity(groups),
        }
    }

    /// An index that only lists its groups' hashes: for a table that groups are
    /// appended to and read from in order, never looked up in (a spill partition).
    fn unindexed() -> GroupIndex {
        GroupIndex { slots: Vec::new(), mask: 0, hashes: Vec::new() }
    }

    fn len(&self) -> usize {
        self.hashes.len()
    }

    /// The group whose key hashes to `hash` and for which `same` holds, or a new group
    /// (`true`) that the caller must store the key of.
    #[inline]
    fn find_or_insert(&mut self, hash: u64, mut same: impl FnMut(usize) -> bool) -> (u32, bool) {
        if (self.hashes.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let tag = hash >> 32;
        let mut s = hash as usize & self.mask;
        loop {
            let v = self.slots[s];
            if v == EMPTY_SLOT {
                let g = self.hashes.len() as u32;
                self.slots[s] = (tag << 32) | (g as u64 + 1);
                self.hashes.push(hash);
                return (g, true);
            }
            let g = (v as u32).wrapping_sub(1);
            if v >> 32 == tag && same(g as usize) {
                return (g, false);
            }
            s = (s + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        self.mask = size - 1;
        self.slots = vec![EMPTY_SLOT; size];
        for (g, &h) in self.hashes.iter().enumerate() {
            let mut s = h as usize & self.mask;
            while self.slots[s] != EMPTY_SLOT {
                s = (s + 1) & self.mask;
            }
            self.slots[s] = ((h >> 32) << 32) | (g as u64 + 1);
        }
    }
}

/// A hashed table's groups: their index and keys.
struct HashGroups {
    codec: Arc<KeyCodec>,
    index: GroupIndex,
    keys: KeyStore,
}

impl HashGroups {
    /// Groups with room for `groups` before they grow.
    fn with_capacity(codec: &Arc<KeyCodec>, groups: usize) -> HashGroups {
        let keys = match &**codec {
            KeyCodec::Words(layout) => KeyStore::Words(Vec::with_capacity(groups * layout.width)),
            KeyCodec::Rows(c) => KeyStore::Rows(c.empty_rows(groups, 0)),
        };
        HashGroups {
            codec: Arc::clone(codec),
            index: GroupIndex::with_capacity(groups),
            keys,
        }
    }

    /// The group number of each of `rows` rows of `keys` (plain types), adding groups.
    fn group_ids(&mut self, keys: &[ArrayRef], rows: usize) -> Result<Vec<u32>> {
        let mut ids = Vec::with_capacity(rows);
        let index = &mut self.index;
        match (&*self.codec, &mut self.keys) {
            (KeyCodec::Words(layout), KeyStore::Words(stored)) => {
                let w = layout.width;
                let encoded = layout.encode(keys, rows, false)?;
                // A row with the previous row's key is in its group (data clustered or
                // sorted by the key: TPC-H's lineitem by l_orderkey) with no lookup.
                let mut previous: Option<(&[u64], u32)> = None;
                for key in encoded.chunks_exact(w) {
                    let g = match previous {
                        Some((k, g)) if same_words(k, key) => g,
                        _ => words_group(index, stored, w, key, hash_words(key)),
                    };
                    previous = Some((key, g));
                    ids.push(g);
                }
            }
            (KeyCodec::Rows(converter), KeyStore::Rows(stored)) => {
                let encoded = converter.convert_columns(keys).map_err(arrow_err)?;
                let mut previous: Option<(arrow::row::Row<'_>, u32)> = None;
                for row in encoded.iter() {
                    let g = match previous {
                        Some((k, g)) if k == row => g,
                        _ => row_group(index, stored, row, hash_bytes(row.as_ref())),
                    };
                    previous = Some((row, g));
                    ids.push(g);
                }
            }
            _ => {
                return Err(TesseraError::Internal(
                    "group keys stored unlike their codec".into(),
                ));
            }
        }
        check_group_count(index.len())?;
        Ok(ids)
    }

    /// Adds the groups `groups` of `other` (same codec) that are not here yet; returns
    /// their numbers here.
    fn absorb(
        &mut self,
        other: &HashGroups,
        groups: impl Iterator<Item = usize>,
    ) -> Result<Vec<u32>> {
        let index = &mut self.index;
        let mut out = Vec::new();
        match (&*self.codec, &mut self.keys, &other.keys) {
            (KeyCodec::Words(layout), KeyStore::Words(stored), KeyStore::Words(theirs)) => {
                let w = layout.width;
                for g in groups {
                    out.push(words_group(index, stored, w, &theirs[g * w..g * w + w], other.index.hashes[g]));
                }
            }
            (KeyCodec::Rows(_), KeyStore::Rows(stored), KeyStore::Rows(theirs)) => {
                for g in groups {
                    out.push(row_group(index, stored, theirs.row(g), other.index.hashes[g]));
                }
            }
            _ => {
                return Err(TesseraError::Internal(
                    "merging group keys of different codecs".into(),
                ));
            }
        }
        check_group_count(index.len())?;
        Ok(out)
    }

    /// Appends the groups `groups` of `other` (same codec) as new groups, without
    /// looking them up (an unindexed table).
    fn append(&mut self, other: &HashGroups, groups: &[u32]) -> Result<()> {
        match (&*self.codec, &mut self.keys, &other.keys) {
            (KeyCodec::Words(layout), KeyStore::Words(stored), KeyStore::Words(theirs)) => {
                let w = layout.width;
                for &g in groups {
                    let g = g as usize;
                    stored.extend_from_slice(&theirs[g * w..g * w + w]);
                }
            }
            (KeyCodec::Rows(_), KeyStore::Rows(stored), KeyStore::Rows(theirs)) => {
                for &g in groups {
                    stored.push(theirs.row(g as usize));
                }
            }
            _ => return Err(TesseraError::Internal("appending group keys of different codecs".into())),
        }
        self.index.hashes.extend(groups.iter().map(|&g| other.index.hashes[g as usize]));
        Ok(())
    }

    /// The key columns of the groups `order`.
    fn key_columns(&self, order: &[usize]) -> Result<Vec<ArrayRef>> {
        match (&*self.codec, &self.keys) {
            (KeyCodec::Words(layout), KeyStore::Words(words)) => layout.decode(words, order),
            (KeyCodec::Rows(converter), KeyStore::Rows(rows)) => converter
                .convert_rows(order.iter().map(|&g| rows.row(g)))
                .map_err(arrow_err),
            _ => Err(TesseraError::Internal(
                "group keys stored unlike their codec".into(),
            )),
        }
    }
}

/// The group of the `w`-word key `key` (hash `hash`), added to `index` and `stored`
/// when new.
#[inline]
fn words_group(index: &mut GroupIndex, stored: &mut Vec<u64>, w: usize, key: &[u64], hash: u64) -> u32 {
    let (g, new) = index.find_or_insert(hash, |g| same_words(&stored[g * w..g * w + w], key));
    if new {
        stored.extend_from_slice(key);
    }
    g
}

/// The group of the row-format key `row` (hash `hash`), added when new.
#[inline]
fn row_group(index: &mut GroupIndex, stored: &mut Rows, row: arrow::row::Row<'_>, hash: u64) -> u32 {
    let (g, new) = index.find_or_insert(hash, |g| stored.row(g) == row);
    if new {
        stored.push(row);
    }
    g
}

/// Group numbers are `u32`s.
fn check_group_count(groups: usize) -> Result<()> {
    if groups >= u32::MAX as usize {
        return Err(TesseraError::ResourcesExhausted(format!(
            "more than {} groups",
            u32::MAX - 1
        )));
    }
    Ok(())
}

enum Groups {
    Scalar,
    Perfect {
        domains: Vec<Domain>,
        seen: Vec<bool>,
    },
    Hash(HashGroups),
}

/// What one aggregation's workers share: its plan and the encoding of hashed keys.
#[derive(Debug)]
pub struct GroupPlan {
    strategy: GroupStrategy,
    aggregates: Vec<AggExpr>,
    codec: Arc<KeyCodec>,
    key_types: Vec<DataType>,
}

impl GroupPlan {
    /// The plan for grouping keys of `key_types` (`nullable` when any may be NULL).
    pub fn new(
        strategy: &GroupStrategy,
        aggregates: &[AggExpr],
        key_types: &[DataType],
        nullable: bool,
    ) -> Result<GroupPlan> {
        let key_types: Vec<DataType> = key_types.iter().map(plain_type).collect();
        let codec = match WordLayout::new(&key_types, nullable) {
            Some(layout) => KeyCodec::Words(layout),
            None => KeyCodec::Rows(row_converter(&key_types)?),
        };
        Ok(GroupPlan {
            strategy: strategy.clone(),
            aggregates: aggregates.to_vec(),
            codec: Arc::new(codec),
            key_types,
        })
    }

    /// An empty table, a hashed one with room for `groups` groups. Perfect-hash domains
    /// over dictionaries are completed from the first morsel (`first_keys`), since a
    /// dictionary's size is known only at run time.
    pub fn table(&self, first_keys: &[ArrayRef], groups: usize) -> Result<GroupTable> {
        let (groups, count) = match &self.strategy {
            GroupStrategy::Scalar => (Groups::Scalar, 1),
            GroupStrategy::Perfect { domains }
                if perfect_slots(domains, first_keys) <= CPU_PERFECT_MAX_SLOTS =>
            {
                let mut rt = Vec::with_capacity(domains.len());
                for (i, d) in domains.iter().enumerate() {
                    rt.push(match d {
                        KeyDomain::Range { min, max } => Domain::Range {
                            min: *min,
                            size: (max - min + 1) as usize,
                        },
                        KeyDomain::Boolean => Domain::Boolean,
                        KeyDomain::Dictionary { .. } => {
                            let values = first_keys
                                .get(i)
                                .and_then(|k| k.as_dictionary_opt::<Int32Type>())
                                .map(|d| Arc::clone(d.values()))
                                .ok_or_else(|| {
                                    TesseraError::Internal(
                                        "dictionary group key is not dictionary-encoded".into(),
                                    )
                                })?;
                            Domain::Dictionary { values }
                        }
                    });
                }
                let slots = rt
                    .iter()
                    .try_fold(1usize, |acc, d| acc.checked_mul(d.slots()))
                    .unwrap_or(usize::MAX);
                (
                    Groups::Perfect {
                        domains: rt,
                        seen: vec![false; slots],
                    },
                    slots,
                )
            }
            GroupStrategy::Perfect { .. } | GroupStrategy::Hash { .. } => {
                (Groups::Hash(HashGroups::with_capacity(&self.codec, groups)), 0)
            }
        };
        let mut accs: Vec<Acc> = self
            .aggregates
            .iter()
            .map(Acc::new)
            .collect::<Result<_>>()?;
        for a in &mut accs {
            a.resize(count);
        }
        Ok(GroupTable {
            groups,
            count,
            accs,
            specs: self.aggregates.clone(),
            key_types: self.key_types.clone(),
        })
    }
}

/// A worker's aggregation state.
pub struct GroupTable {
    groups: Groups,
    count: usize,
    accs: Vec<Acc>,
    specs: Vec<AggExpr>,
    key_types: Vec<DataType>,
}

impl std::fmt::Debug for GroupTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupTable")
            .field("groups", &self.count)
            .finish()
    }
}

impl GroupTable {
    /// Whether this is a hashed table that holds [`LOCAL_MAX_GROUPS`] groups or more.
    fn is_full(&self) -> bool {
        matches!(self.groups, Groups::Hash(_)) && self.count >= LOCAL_MAX_GROUPS
    }

    /// An empty unindexed table like this hashed one (a spill partition).
    fn unindexed_like(&self) -> Result<GroupTable> {
        let mut t = self.empty_like(0)?;
        if let Groups::Hash(h) = &mut t.groups {
            h.index = GroupIndex::unindexed();
        }
        Ok(t)
    }

    /// Appends the groups `groups` of `other` (same plan, hashed) as new groups.
    fn append(&mut self, other: &GroupTable, groups: &[u32]) -> Result<()> {
        let (Groups::Hash(mine), Groups::Hash(theirs)) = (&mut self.groups, &other.groups) else {
            return Err(TesseraError::Internal("only hashed group tables spill".into()));
        };
        mine.append(theirs, groups)?;
        let first = self.count as u32;
        self.count += groups.len();
        let dst: Vec<u32> = (first..self.count as u32).collect();
        for (a, b) in self.accs.iter_mut().zip(&other.accs) {
            a.resize(self.count);
            a.merge_pairs(b, groups, &dst)?;
        }
        Ok(())
    }

    /// This hashed table's groups by partition: the high bits of their hashes.
    fn groups_by_partition(&self, partitions: usize) -> Vec<Vec<u32>> {
        let shift = 64 - partitions.trailing_zeros();
        let mut parts = vec![Vec::new(); partitions];
        if let Groups::Hash(h) = &self.groups {
            for (g, &hash) in h.index.hashes.iter().enumerate() {
                parts[(hash >> shift) as usize].push(g as u32);
            }
        }
        parts
    }

    /// Aggregates one morsel: `keys` are the evaluated group keys, `columns` the input.
    pub fn update(
        &mut self,
        keys: &[ArrayRef],
        columns: &[ArrayRef],
        rows: usize,
        eval: &Evaluator,
    ) -> Result<()> {
        let ids = self.group_ids(keys, rows)?;
        for (acc, spec) in self.accs.iter_mut().zip(&self.specs) {
            match &spec.arg {
                None => acc.update_count_star(&ids),
                Some(arg) => {
                    let values = eval.eval(arg, columns, rows)?;
                    acc.update(&ids, &values)?;
                }
            }
        }
        Ok(())
    }

    fn group_ids(&mut self, keys: &[ArrayRef], rows: usize) -> Result<Vec<u32>> {
        match &mut self.groups {
            Groups::Scalar => Ok(vec![0; rows]),
            Groups::Perfect { domains, seen } => {
                let mut ids = vec![0u32; rows];
                let mut stride = 1usize;
                for (k, d) in keys.iter().zip(domains.iter()) {
                    let slots = d.slots();
                    match d {
                        Domain::Range { min, size } => {
                            let (vals, nulls) = int_values(k)?;
                            for r in 0..rows {
                                let slot = if nulls.as_ref().is_some_and(|n| n.is_null(r)) {
                                    0
                                } else {
                                    let s = vals[r].wrapping_sub(*min) as u64;
                                    if s >= *size as u64 {
                                        return Err(TesseraError::Internal(format!(
                                            "group key {} outside the range the statistics promised",
                                            vals[r]
                                        )));
                                    }
                                    s as usize + 1
                                };
                                ids[r] += (slot * stride) as u32;
                            }
                        }
                        Domain::Boolean => {
                            let b = k.as_boolean_opt().ok_or_else(|| {
                                TesseraError::Internal("boolean key expected".into())
                            })?;
                            for r in 0..rows {
                                let slot = if b.is_null(r) {
                                    0
                                } else if b.value(r) {
                                    2
                                } else {
                                    1
                                };
                                ids[r] += (slot * stride) as u32;
                            }
                        }
                        Domain::Dictionary { values } => {
                            let codes = dictionary_codes(k, values)?;
                            for r in 0..rows {
                                let slot = codes[r].map(|c| c as usize + 1).unwrap_or(0);
                                ids[r] += (slot * stride) as u32;
                            }
                        }
                    }
                    stride *= slots;
                }
                for &g in &ids {
                    seen[g as usize] = true;
                }
                Ok(ids)
            }
            Groups::Hash(h) => {
                let keys = normalize(keys, &self.key_types)?;
                let ids = h.group_ids(&keys, rows)?;
                self.count = h.index.len();
                for a in &mut self.accs {
                    a.resize(self.count);
                }
                Ok(ids)
            }
        }
    }

    /// An empty table like this one (for a partition of a merge), with room for
    /// `groups` groups.
    fn empty_like(&self, groups: usize) -> Result<GroupTable> {
        let groups = match &self.groups {
            Groups::Hash(h) => Groups::Hash(HashGroups::with_capacity(&h.codec, groups)),
            _ => {
                return Err(TesseraError::Internal(
                    "only hashed group tables are partitioned".into(),
                ));
            }
        };
        let accs = self.specs.iter().map(Acc::new).collect::<Result<_>>()?;
        Ok(GroupTable {
            groups,
            count: 0,
            accs,
            specs: self.specs.clone(),
            key_types: self.key_types.clone(),
        })
    }

    /// Folds the groups `only` (all when None) of another table of the same plan into
    /// this one.
    fn absorb(&mut self, other: &GroupTable, only: Option<&[u32]>) -> Result<()> {
        let all: Vec<u32>;
        let src: &[u32] = match only {
            Some(g) => g,
            None => {
                all = (0..other.count as u32).collect();
                &all
            }
        };
        let dst: Vec<u32> = match (&mut self.groups, &other.groups) {
            (Groups::Scalar, Groups::Scalar) => src.to_vec(),
            (
                Groups::Perfect { seen, .. },
                Groups::Perfect {
                    seen: other_seen, ..
                },
            ) => {
                for (s, o) in seen.iter_mut().zip(other_seen) {
                    *s |= *o;
                }
                src.to_vec()
            }
            (Groups::Hash(mine), Groups::Hash(theirs)) => {
                let dst = mine.absorb(theirs, src.iter().map(|&g| g as usize))?;
                self.count = mine.index.len();
                dst
            }
            _ => {
                return Err(TesseraError::Internal(
                    "merging group tables of different kinds".into(),
                ));
            }
        };
        for (a, b) in self.accs.iter_mut().zip(&other.accs) {
            a.resize(self.count);
            a.merge_pairs(b, src, &dst)?;
        }
        Ok(())
    }

    /// Folds another worker's table (same plan) into this one.
    pub fn merge(&mut self, other: GroupTable) -> Result<()> {
        self.absorb(&other, None)
    }

    /// The result: group keys, then aggregates, typed as `fields`.
    pub fn finish(&self, fields: &[Field]) -> Result<Vec<ArrayRef>> {
        let (key_columns, order): (Vec<ArrayRef>, Vec<usize>) = match &self.groups {
            Groups::Scalar => (vec![], vec![0]),
            Groups::Perfect { domains, seen } => {
                let order: Vec<usize> = (0..self.count).filter(|&g| seen[g]).collect();
                let mut cols = Vec::new();
                let mut stride = 1usize;
                for (i, d) in domains.iter().enumerate() {
                    let slots = d.slots();
                    let slot_of = |g: usize| (g / stride) % slots;
                    let col: ArrayRef = match d {
                        Domain::Range { min, .. } => {
                            let v: Int64Array = order
                                .iter()
                                .map(|&g| (slot_of(g) > 0).then(|| min + slot_of(g) as i64 - 1))
                                .collect();
                            cast_to(&(Arc::new(v) as ArrayRef), fields[i].ty)?
                        }
                        Domain::Boolean => {
                            let v: BooleanArray = order
                                .iter()
                                .map(|&g| match slot_of(g) {
                                    0 => None,
                                    s => Some(s == 2),
                                })
                                .collect();
                            Arc::new(v)
                        }
                        Domain::Dictionary { values } => {
                            let codes: arrow::array::Int32Array = order
                                .iter()
                                .map(|&g| (slot_of(g) > 0).then(|| slot_of(g) as i32 - 1))
                                .collect();
                            Arc::new(
                                DictionaryArray::<Int32Type>::try_new(codes, Arc::clone(values))
                                    .map_err(arrow_err)?,
                            )
                        }
                    };
                    cols.push(col);
                    stride *= slots;
                }
                (cols, order)
            }
            Groups::Hash(h) => {
                let order: Vec<usize> = (0..self.count).collect();
                (h.key_columns(&order)?, order)
            }
        };
        let nkeys = key_columns.len();
        let mut out = key_columns;
        for (i, acc) in self.accs.iter().enumerate() {
            out.push(acc.finish(&order, fields[nkeys + i].ty)?);
        }
        Ok(out)
    }
}

/// The workers' tables of one aggregation, ready to be merged: into one table, or —
/// when they are hashed and hold many groups — into partitions by the high bits of the
/// keys' hashes, which [`Partitions::finish`] merges independently (in parallel).
pub struct Partitions {
    tables: Vec<GroupTable>,
    /// Per table, per partition: its groups in that partition (empty when merged).
    groups: Vec<Vec<Vec<u32>>>,
    /// Per worker that spilled, its [`SPILL_PARTITIONS`] unindexed partitions (then
    /// `tables` is empty).
    spilled: Vec<Vec<GroupTable>>,
    count: usize,
}

/// One worker's share of an aggregation: the table it aggregates its morsels into and,
/// once that has been full, the groups it spilled, by partition.
#[derive(Default)]
pub struct AggregateWorker {
    table: Option<GroupTable>,
    spilled: Vec<GroupTable>,
}

impl AggregateWorker {
    /// Aggregates one morsel (`keys` evaluated, `columns` the input) into the worker's
    /// table, spilling it when it is full.
    pub fn update(&mut self, plan: &GroupPlan, keys: &[ArrayRef], columns: &[ArrayRef], rows: usize, eval: &Evaluator) -> Result<()> {
        if self.table.is_none() {
            // After a spill the table is known to fill up: room for all of it at once.
            let groups = if self.spilled.is_empty() { 0 } else { LOCAL_MAX_GROUPS };
            self.table = Some(plan.table(keys, groups)?);
        }
        let Some(table) = self.table.as_mut() else { return Ok(()) };
        table.update(keys, columns, rows, eval)?;
        if table.is_full() {
            self.spill()?;
        }
        Ok(())
    }

    /// Moves the table's groups into the spill partitions (leaving no table).
    fn spill(&mut self) -> Result<()> {
        let Some(table) = self.table.take() else { return Ok(()) };
        if self.spilled.is_empty() {
            self.spilled = (0..SPILL_PARTITIONS).map(|_| table.unindexed_like()).collect::<Result<_>>()?;
        }
        for (part, groups) in self.spilled.iter_mut().zip(table.groups_by_partition(SPILL_PARTITIONS)) {
            part.append(&table, &groups)?;
        }
        Ok(())
    }
}

impl Partitions {
    /// Prepares `tables` (at least one) for merging on `threads` threads.
    pub fn new(mut tables: Vec<GroupTable>, threads: usize) -> Result<Partitions> {
        let groups: usize = tables.iter().map(|t| t.count).sum();
        let hashed = tables.iter().all(|t| matches!(t.groups, Groups::Hash(_)));
        if tables.len() <= 1 || !hashed || groups < PARTITIONED_MERGE_MIN_GROUPS || threads <= 1 {
            let mut rest = tables.split_off(1.min(tables.len()));
            if let Some(first) = tables.first_mut() {
                for t in rest.drain(..) {
                    first.merge(t)?;
                }
            }
            let count = tables.len();
            return Ok(Partitions {
                tables,
                groups: Vec::new(),
                spilled: Vec::new(),
                count,
            });
        }
        let count = (threads * PARTITIONS_PER_THREAD).next_power_of_two();
        // Each table's groups split on a thread of its own.
        let groups = crate::parallel::on_threads(tables.iter().collect(), |t| Ok(t.groups_by_partition(count)))?;
        Ok(Partitions {
            tables,
            groups,
            spilled: Vec::new(),
            count,
        })
    }

    /// The workers' groups for merging on `threads` threads: by spill partition when
    /// any worker spilled (the others' tables are spilled now too), else their tables.
    pub fn of_workers(workers: Vec<AggregateWorker>, threads: usize) -> Result<Partitions> {
        if workers.iter().all(|w| w.spilled.is_empty()) {
            return Partitions::new(workers.into_iter().filter_map(|w| w.table).collect(), threads);
        }
        let spilled = crate::parallel::on_threads(workers, |mut w| {
            w.spill()?;
            Ok(w.spilled)
        })?;
        let spilled: Vec<Vec<GroupTable>> = spilled.into_iter().filter(|s| !s.is_empty()).collect();
        Ok(Partitions { tables: Vec::new(), groups: Vec::new(), spilled, count: SPILL_PARTITIONS })
    }

    /// How many partitions there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none (no tables).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Partition `p`'s groups merged, as result columns typed as `fields`.
    pub fn finish(&self, p: usize, fields: &[Field]) -> Result<Vec<ArrayRef>> {
        if !self.spilled.is_empty() {
            let most: usize = self.spilled.iter().map(|parts| parts[p].count).sum();
            let mut merged = self.spilled[0][p].empty_like(most)?;
            for parts in &self.spilled {
                merged.absorb(&parts[p], None)?;
            }
            return merged.finish(fields);
        }
        if self.groups.is_empty() {
            return self.tables[p].finish(fields);
        }
        // The partition's groups of every table, an upper bound of its distinct
        // groups (exact when the workers saw different keys, as with clustered keys).
        let most: usize = self.groups.iter().map(|parts| parts[p].len()).sum();
        let mut merged = self.tables[0].empty_like(most)?;
        for (t, parts) in self.tables.iter().zip(&self.groups) {
            merged.absorb(t, Some(&parts[p]))?;
        }
        merged.finish(fields)
    }
}

/// Slots a perfect-hash table over `domains` needs (dictionary sizes from the keys).
fn perfect_slots(domains: &[KeyDomain], first_keys: &[ArrayRef]) -> usize {
    domains
        .iter()
        .enumerate()
        .map(|(i, d)| match d {
            KeyDomain::Range { min, max } => (max - min + 2) as usize,
            KeyDomain::Boolean => 3,
            KeyDomain::Dictionary { .. } => first_keys
                .get(i)
                .and_then(|k| k.as_dictionary_opt::<Int32Type>())
                .map(|d| d.values().len() + 1)
                .unwrap_or(usize::MAX),
        })
        .try_fold(1usize, |acc, n| acc.checked_mul(n))
        .unwrap_or(usize::MAX)
}

/// Codes of `k` in the dictionary `values` (remapping through the strings when `k`
/// uses another dictionary).
fn dictionary_codes(k: &ArrayRef, values: &ArrayRef) -> Result<Vec<Option<u32>>> {
    if let Some(d) = k.as_dictionary_opt::<Int32Type>() {
        if Arc::ptr_eq(d.values(), values) {
            return Ok(d.keys().iter().map(|c| c.map(|c| c as u32)).collect());
        }
    }
    let strings = arrow::compute::cast(k, &DataType::Utf8).map_err(arrow_err)?;
    let strings = strings.as_string::<i32>();
    let dict = values
        .as_string_opt::<i32>()
        .ok_or_else(|| TesseraError::Internal("dictionary of non-strings".into()))?;
    let lookup: HashMap<&str, u32> = dict
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (v, i as u32)))
        .collect();
    strings
        .iter()
        .map(|s| match s {
            None => Ok(None),
            Some(s) => lookup.get(s).map(|&c| Some(c)).ok_or_else(|| {
                TesseraError::Internal(format!("group key '{s}' not in the column's dictionary"))
            }),
        })
        .collect()
}

/// Calls `f(row, value)` for every non-NULL value of an integer-like or decimal column.
fn for_each_int(a: &ArrayRef, mut f: impl FnMut(usize, i128)) -> Result<()> {
    macro_rules! each {
        ($t:ty) => {{
            let p = a.as_primitive::<$t>();
            match p.nulls() {
                None => p
                    .values()
                    .iter()
                    .enumerate()
                    .for_each(|(i, v)| f(i, *v as i128)),
                Some(n) => p
                    .values()
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| n.is_valid(*i))
                    .for_each(|(i, v)| f(i, *v as i128)),
            }
        }};
    }
    use arrow::datatypes as t;
    match a.data_type() {
        DataType::Int8 => each!(t::Int8Type),
        DataType::Int16 => each!(t::Int16Type),
        DataType::Int32 => each!(t::Int32Type),
        DataType::Int64 => each!(t::Int64Type),
        DataType::UInt8 => each!(t::UInt8Type),
        DataType::UInt16 => each!(t::UInt16Type),
        DataType::UInt32 => each!(t::UInt32Type),
        DataType::UInt64 => each!(t::UInt64Type),
        DataType::Date32 => each!(t::Date32Type),
        DataType::Decimal128(..) => each!(t::Decimal128Type),
        other => {
            return Err(TesseraError::Internal(format!(
                "integer aggregate over {other}"
            )));
        }
    }
    Ok(())
}

fn for_each_f64(a: &ArrayRef, mut f: impl FnMut(usize, f64)) -> Result<()> {
    let a = arrow::compute::cast(a, &DataType::Float64).map_err(arrow_err)?;
    let p = a.as_primitive::<arrow::datatypes::Float64Type>();
    for (i, v) in p.iter().enumerate() {
        if let Some(v) = v {
            f(i, v);
        }
    }
    Ok(())
}

/// Whether every value of this type is below 2^63 in magnitude (integers of up to 64
/// bits, dates, decimals of up to 18 digits).
fn fits_i64(dt: &DataType) -> bool {
    crate::hash::is_int_key(dt) || matches!(dt, DataType::Decimal128(p, _) if *p <= 18)
}

fn is_float(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    )
}

fn decimal_scale(dt: &DataType) -> i8 {
    match dt {
        DataType::Decimal128(_, s) => *s,
        _ => 0,
    }
}

/// One aggregate's per-group state.
enum Acc {
    Count(Vec<i64>),
    Sum {
        func: AggFunc,
        ints: Vec<i128>,
        floats: Vec<f64>,
        counts: Vec<i64>,
        float: Option<bool>,
        scale: i8,
    },
    MinMax {
        min: bool,
        ints: Vec<Option<i128>>,
        floats: Vec<Option<f64>>,
        strings: Vec<Option<String>>,
        bools: Vec<Option<bool>>,
        kind: Option<u8>,
    },
}

impl Acc {
    fn new(spec: &AggExpr) -> Result<Acc> {
        Ok(match spec.func {
            AggFunc::CountStar | AggFunc::Count => Acc::Count(Vec::new()),
            AggFunc::Sum | AggFunc::Avg => Acc::Sum {
                func: spec.func,
                ints: Vec::new(),
                floats: Vec::new(),
                counts: Vec::new(),
                float: None,
                scale: 0,
            },
            AggFunc::Min | AggFunc::Max => Acc::MinMax {
                min: spec.func == AggFunc::Min,
                ints: Vec::new(),
                floats: Vec::new(),
                strings: Vec::new(),
                bools: Vec::new(),
                kind: None,
            },
        })
    }

    fn resize(&mut self, n: usize) {
        match self {
            Acc::Count(c) => c.resize(n, 0),
            // Once the input's type is known only its sums grow (a sum is then 24
            // bytes a group, not 32: less memory traffic for millions of groups).
            Acc::Sum {
                ints,
                floats,
                counts,
                float,
                ..
            } => {
                if *float != Some(true) {
                    ints.resize(n, 0);
                }
                if *float != Some(false) {
                    floats.resize(n, 0.0);
                }
                counts.resize(n, 0);
            }
            Acc::MinMax {
                ints,
                floats,
                strings,
                bools,
                ..
            } => {
                ints.resize(n, None);
                floats.resize(n, None);
                strings.resize(n, None);
                bools.resize(n, None);
            }
        }
    }

    fn update_count_star(&mut self, ids: &[u32]) {
        if let Acc::Count(c) = self {
            for &g in ids {
                c[g as usize] += 1;
            }
        }
    }

    fn update(&mut self, ids: &[u32], values: &ArrayRef) -> Result<()> {
        match self {
            Acc::Count(c) => {
                match values.logical_nulls() {
                    None => ids.iter().for_each(|&g| c[g as usize] += 1),
                    Some(n) => ids
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| n.is_valid(*i))
                        .for_each(|(_, &g)| c[g as usize] += 1),
                }
                Ok(())
            }
            Acc::Sum {
                ints,
                floats,
                counts,
                float,
                scale,
                ..
            } => {
                let is_f = is_float(values.data_type());
                float.get_or_insert(is_f);
                *scale = decimal_scale(values.data_type());
                if is_f {
                    for_each_f64(values, |i, v| {
                        let g = ids[i] as usize;
                        floats[g] += v;
                        counts[g] += 1;
                    })
                } else if fits_i64(values.data_type()) {
                    // Values below 2^63 in magnitude: fewer than 2^64 rows cannot take a
                    // 128-bit sum past 2^127, so no check is needed.
                    for_each_int(values, |i, v| {
                        let g = ids[i] as usize;
                        ints[g] = ints[g].wrapping_add(v);
                        counts[g] += 1;
                    })
                } else {
                    let mut overflow = false;
                    for_each_int(values, |i, v| {
                        let g = ids[i] as usize;
                        match ints[g].checked_add(v) {
                            Some(s) => ints[g] = s,
                            None => overflow = true,
                        }
                        counts[g] += 1;
                    })?;
                    if overflow {
                        return Err(TesseraError::Execution("arithmetic overflow in SUM".into()));
                    }
                    Ok(())
                }
            }
            Acc::MinMax {
                min,
                ints,
                floats,
                strings,
                bools,
                kind,
            } => {
                let better_i = |old: Option<i128>, v: i128| {
                    old.is_none_or(|o| if *min { v < o } else { v > o })
                };
                match values.data_type() {
                    DataType::Boolean => {
                        *kind = Some(3);
                        let b = values.as_boolean();
                        for (i, v) in b.iter().enumerate() {
                            if let Some(v) = v {
                                let g = ids[i] as usize;
                                let old = bools[g];
                                if old.is_none_or(|o| if *min { !v & o } else { v & !o }) {
                                    bools[g] = Some(v);
                                }
                            }
                        }
                        Ok(())
                    }
                    dt if is_float(dt) => {
                        *kind = Some(1);
                        for_each_f64(values, |i, v| {
                            let g = ids[i] as usize;
                            // IEEE 754's total order, as Arrow and DataFusion compare
                            // floats: -0.0 below 0.0, NaN above infinity.
                            if floats[g].is_none_or(|o| if *min { v.total_cmp(&o).is_lt() } else { v.total_cmp(&o).is_gt() }) {
                                floats[g] = Some(v);
                            }
                        })
                    }
                    DataType::Utf8
                    | DataType::LargeUtf8
                    | DataType::Utf8View
                    | DataType::Dictionary(..) => {
                        *kind = Some(2);
                        let s = arrow::compute::cast(values, &DataType::Utf8).map_err(arrow_err)?;
                        for (i, v) in s.as_string::<i32>().iter().enumerate() {
                            if let Some(v) = v {
                                let g = ids[i] as usize;
                                let better = strings[g]
                                    .as_deref()
                                    .is_none_or(|o| if *min { v < o } else { v > o });
                                if better {
                                    strings[g] = Some(v.to_string());
                                }
                            }
                        }
                        Ok(())
                    }
                    _ => {
                        *kind = Some(0);
                        for_each_int(values, |i, v| {
                            let g = ids[i] as usize;
                            if better_i(ints[g], v) {
                                ints[g] = Some(v);
                            }
                        })
                    }
                }
            }
        }
    }

    /// Folds group `src[i]` of `other` into group `dst[i]` here, for every `i`.
    fn merge_pairs(&mut self, other: &Acc, src: &[u32], dst: &[u32]) -> Result<()> {
        let pairs = src.iter().zip(dst).map(|(&s, &d)| (s as usize, d as usize));
        match (self, other) {
            (Acc::Count(a), Acc::Count(b)) => {
                for (s, d) in pairs {
                    a[d] += b[s];
                }
            }
            (
                Acc::Sum {
                    ints,
                    floats,
                    counts,
                    float,
                    scale,
                    ..
                },
                Acc::Sum {
                    ints: bi,
                    floats: bf,
                    counts: bc,
                    float: bfl,
                    scale: bs,
                    ..
                },
            ) => {
                if float.is_none() {
                    *float = *bfl;
                    *scale = *bs;
                }
                // Only the sums of the input's type are sized once it is known (see
                // `resize`); before that both are.
                let floats_only = float.or(*bfl) == Some(true);
                for (s, d) in pairs {
                    if floats_only {
                        floats[d] += bf[s];
                    } else {
                        ints[d] = ints[d].checked_add(bi[s]).ok_or_else(|| {
                            TesseraError::Execution("arithmetic overflow in SUM".into())
                        })?;
                    }
                    counts[d] += bc[s];
                }
            }
            (
                Acc::MinMax {
                    min,
                    ints,
                    floats,
                    strings,
                    bools,
                    kind,
                },
                Acc::MinMax {
                    ints: bi,
                    floats: bf,
                    strings: bs,
                    bools: bb,
                    kind: bk,
                    ..
                },
            ) => {
                if kind.is_none() {
                    *kind = *bk;
                }
                let min = *min;
                for (s, d) in pairs {
                    if let Some(v) = bi[s] {
                        if ints[d].is_none_or(|o| if min { v < o } else { v > o }) {
                            ints[d] = Some(v);
                        }
                    }
                    if let Some(v) = bf[s] {
                        if floats[d].is_none_or(|o| if min { v < o } else { v > o }) {
                            floats[d] = Some(v);
                        }
                    }
                    if let Some(v) = &bs[s] {
                        if strings[d]
                            .as_deref()
                            .is_none_or(|o| if min { v.as_str() < o } else { v.as_str() > o })
                        {
                            strings[d] = Some(v.clone());
                        }
                    }
                    if let Some(v) = bb[s] {
                        if bools[d].is_none_or(|o| if min { !v & o } else { v & !o }) {
                            bools[d] = Some(v);
                        }
                    }
                }
            }
            _ => {
                return Err(TesseraError::Internal(
                    "merging different accumulators".into(),
                ));
            }
        }
        Ok(())
    }

    fn finish(&self, order: &[usize], ty: Type) -> Result<ArrayRef> {
        let dt = arrow_type(ty);
        match self {
            Acc::Count(c) => Ok(cast_to(
                &(Arc::new(Int64Array::from_iter_values(order.iter().map(|&g| c[g]))) as ArrayRef),
                ty,
            )?),
            Acc::Sum {
                func,
                ints,
                floats,
                counts,
                float,
                scale,
            } => {
                let (func, float, scale) = (*func, float.unwrap_or(false), *scale);
                match (func, float) {
                    (AggFunc::Sum, true) => {
                        let v: Float64Array = order
                            .iter()
                            .map(|&g| (counts[g] > 0).then_some(floats[g]))
                            .collect();
                        cast_to(&(Arc::new(v) as ArrayRef), ty)
                    }
                    (AggFunc::Sum, false) => int_result(
                        order.iter().map(|&g| (counts[g] > 0).then_some(ints[g])),
                        ty,
                        &dt,
                    ),
                    (_, true) => {
                        let v: Float64Array = order
                            .iter()
                            .map(|&g| (counts[g] > 0).then(|| floats[g] / counts[g] as f64))
                            .collect();
                        cast_to(&(Arc::new(v) as ArrayRef), ty)
                    }
                    (_, false) => match ty {
                        Type::Decimal {
                            precision,
                            scale: out_scale,
                        } => {
                            let mul = 10i128
                                .checked_pow((out_scale - scale).max(0) as u32)
                                .ok_or_else(|| {
                                    TesseraError::Execution("arithmetic overflow in AVG".into())
                                })?;
                            let mut vals = Vec::with_capacity(order.len());
                            for &g in order {
                                if counts[g] == 0 {
                                    vals.push(None);
                                    continue;
                                }
                                let v = ints[g].checked_mul(mul).ok_or_else(|| {
                                    TesseraError::Execution("arithmetic overflow in AVG".into())
                                })? / counts[g] as i128;
                                vals.push(Some(v));
                            }
                            let a = Decimal128Array::from(vals)
                                .with_precision_and_scale(precision, out_scale)
                                .map_err(arrow_err)?;
                            a.validate_decimal_precision(precision).map_err(|e| {
                                TesseraError::Execution(format!("arithmetic overflow in AVG: {e}"))
                            })?;
                            Ok(Arc::new(a))
                        }
                        _ => {
                            let v: Float64Array = order
                                .iter()
                                .map(|&g| {
                                    (counts[g] > 0).then(|| ints[g] as f64 / counts[g] as f64)
                                })
                                .collect();
                            cast_to(&(Arc::new(v) as ArrayRef), ty)
                        }
                    },
                }
            }
            Acc::MinMax {
                ints,
                floats,
                strings,
                bools,
                kind,
                ..
            } => match kind {
                None => Ok(new_null_array(&dt, order.len())),
                Some(0) => int_result(order.iter().map(|&g| ints[g]), ty, &dt),
                Some(1) => {
                    let v: Float64Array = order.iter().map(|&g| floats[g]).collect();
                    cast_to(&(Arc::new(v) as ArrayRef), ty)
                }
                Some(2) => {
                    let v: StringArray = order.iter().map(|&g| strings[g].as_deref()).collect();
                    cast_to(&(Arc::new(v) as ArrayRef), ty)
                }
                _ => {
                    let v: BooleanArray = order.iter().map(|&g| bools[g]).collect();
                    Ok(Arc::new(v))
                }
            },
        }
    }
}

/// An exact integer result as the SQL type `ty`; a value that does not fit is an error.
fn int_result(
    values: impl Iterator<Item = Option<i128>>,
    ty: Type,
    dt: &DataType,
) -> Result<ArrayRef> {
    match ty {
        Type::Decimal { precision, scale } => {
            let a = Decimal128Array::from_iter(values)
                .with_precision_and_scale(precision, scale)
                .map_err(arrow_err)?;
            a.validate_decimal_precision(precision)
                .map_err(|e| TesseraError::Execution(format!("arithmetic overflow: {e}")))?;
            Ok(Arc::new(a))
        }
        _ => {
            let mut v = Vec::new();
            for x in values {
                v.push(match x {
                    None => None,
                    Some(x) => Some(i64::try_from(x).map_err(|_| {
                        TesseraError::Execution(format!(
                            "arithmetic overflow: {x} does not fit in {ty}"
                        ))
                    })?),
                });
            }
            let a: ArrayRef = Arc::new(Int64Array::from(v));
            if a.data_type() == dt {
                Ok(a)
            } else {
                arrow::compute::cast_with_options(&a, dt, &crate::eval::STRICT)
                    .map_err(|e| TesseraError::Execution(format!("arithmetic overflow: {e}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use arrow::array::{Date32Array, Int32Array};
    use arrow::buffer::NullBuffer;
    use arrow::compute::{SortColumn, lexsort_to_indices, take};
    use tessera_ir::Expr;

    use super::*;

    fn decimal(values: Vec<Option<i128>>, p: u8, s: i8) -> ArrayRef {
        Arc::new(
            Decimal128Array::from(values)
                .with_precision_and_scale(p, s)
                .unwrap(),
        )
    }

    #[test]
    fn word_layout_round_trips_extremes_and_nulls() {
        let keys: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![
                Some(i64::MIN),
                Some(i64::MAX),
                None,
                Some(0),
                Some(-1),
            ])),
            decimal(
                vec![
                    Some(i128::MAX / 10),
                    None,
                    Some(i128::MIN / 10),
                    Some(-1),
                    Some(0),
                ],
                38,
                2,
            ),
            decimal(
                vec![
                    Some(999_999_999_999_999_999),
                    Some(-999_999_999_999_999_999),
                    Some(0),
                    None,
                    Some(5),
                ],
                18,
                0,
            ),
            Arc::new(BooleanArray::from(vec![
                Some(true),
                None,
                Some(false),
                Some(true),
                None,
            ])),
            Arc::new(Date32Array::from(vec![
                Some(i32::MIN),
                Some(i32::MAX),
                Some(0),
                None,
                Some(19_000),
            ])),
        ];
        let types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
        let layout = WordLayout::new(&types, true).unwrap();
        assert_eq!(layout.width, 1 + 2 + 1 + 1 + 1 + 1);
        let words = layout.encode(&keys, 5, false).unwrap();
        let back = layout.decode(&words, &[0, 1, 2, 3, 4]).unwrap();
        for (k, b) in keys.iter().zip(&back) {
            assert_eq!(k.as_ref(), b.as_ref());
        }
        // A NULL key's words do not depend on the value slot under it.
        let a: ArrayRef = Arc::new(Int32Array::new(
            vec![7, 8].into(),
            Some(NullBuffer::from(vec![false, false])),
        ));
        let one = WordLayout::new(&[DataType::Int32], true).unwrap();
        let w = one.encode(&[a], 2, false).unwrap();
        assert_eq!(w[0..2], w[2..4]);
    }

    #[test]
    fn non_nullable_layout_refuses_nulls_and_strings_use_rows() {
        let layout = WordLayout::new(&[DataType::Int32], false).unwrap();
        assert_eq!(layout.width, 1);
        let a: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
        assert!(layout.encode(&[Arc::clone(&a)], 2, false).is_err());
        assert!(layout.encode(&[a], 2, true).is_ok());
        assert!(WordLayout::new(&[DataType::Int32, DataType::Utf8], false).is_none());
        assert!(WordLayout::new(&[DataType::Float64], false).is_none());
    }

    /// Rows sorted by every column, to compare results whose group order differs.
    fn sorted(columns: &[ArrayRef]) -> Vec<ArrayRef> {
        let keys: Vec<SortColumn> = columns
            .iter()
            .map(|c| SortColumn {
                values: Arc::clone(c),
                options: None,
            })
            .collect();
        let idx = lexsort_to_indices(&keys, None).unwrap();
        columns
            .iter()
            .map(|c| take(c.as_ref(), &idx, None).unwrap())
            .collect()
    }

    /// Groups `rows` rows (key `i % groups`, a string key from it when `strings`) in
    /// `tables` tables merged through [`Partitions`] and in one table; both must agree.
    fn check_partitioned_merge(
        spill: bool,
        strings: bool,
        rows: usize,
        groups: usize,
        tables: usize,
        threads: usize,
    ) {
        let key_i: Vec<Option<i64>> = (0..rows)
            .map(|i| ((i * 7) % (groups + 1) != 0).then_some((i % groups) as i64 * 3 - 5))
            .collect();
        let key: ArrayRef = if strings {
            Arc::new(StringArray::from_iter(
                key_i.iter().map(|k| k.map(|k| format!("k{k}"))),
            ))
        } else {
            Arc::new(Int64Array::from(key_i.clone()))
        };
        let value: ArrayRef = decimal(
            (0..rows)
                .map(|i| (i % 5 != 0).then_some(i as i128 * 1_000_003))
                .collect(),
            38,
            2,
        );
        let ty = Type::Decimal {
            precision: 38,
            scale: 2,
        };
        let aggregates = vec![
            AggExpr {
                func: AggFunc::CountStar,
                arg: None,
                distinct: false,
                ty: Type::Int64,
                name: "n".into(),
            },
            AggExpr {
                func: AggFunc::Sum,
                arg: Some(Expr::col(1, "v")),
                distinct: false,
                ty,
                name: "s".into(),
            },
            AggExpr {
                func: AggFunc::Max,
                arg: Some(Expr::col(1, "v")),
                distinct: false,
                ty,
                name: "m".into(),
            },
        ];
        let key_ty = if strings { Type::Utf8 } else { Type::Int64 };
        let fields = vec![
            Field::new("k", key_ty, true),
            Field::new("n", Type::Int64, false),
            Field::new("s", ty, true),
            Field::new("m", ty, true),
        ];
        let strategy = GroupStrategy::Hash {
            estimated_groups: groups as u64,
            key_ranges: Vec::new(),
        };
        let plan =
            GroupPlan::new(&strategy, &aggregates, &[key.data_type().clone()], true).unwrap();
        let eval = Evaluator::new();
        let update = |t: &mut GroupTable, from: usize, to: usize| {
            let columns = vec![key.slice(from, to - from), value.slice(from, to - from)];
            t.update(&columns[..1], &columns, to - from, &eval).unwrap();
        };
        let mut whole = plan.table(&[], 0).unwrap();
        update(&mut whole, 0, rows);
        let expected = sorted(&whole.finish(&fields).unwrap());

        let merged = if spill {
            // Morsels of 4096 rows to the workers in turn, except that the last worker
            // gets only the first morsel (it never fills its table, the others spill).
            let mut workers: Vec<AggregateWorker> = (0..tables).map(|_| AggregateWorker::default()).collect();
            for (m, from) in (0..rows).step_by(4096).enumerate() {
                let to = (from + 4096).min(rows);
                let w = if m == 0 || tables == 1 { tables - 1 } else { m % (tables - 1) };
                let columns = vec![key.slice(from, to - from), value.slice(from, to - from)];
                workers[w].update(&plan, &columns[..1], &columns, to - from, &eval).unwrap();
            }
            assert!(workers.iter().any(|w| !w.spilled.is_empty()), "no worker spilled");
            Partitions::of_workers(workers, threads).unwrap()
        } else {
            let per = rows.div_ceil(tables);
            let parts: Vec<GroupTable> = (0..tables)
                .map(|t| {
                    let mut table = plan.table(&[], 0).unwrap();
                    update(&mut table, t * per, ((t + 1) * per).min(rows));
                    table
                })
                .collect();
            Partitions::new(parts, threads).unwrap()
        };
        let pieces: Vec<Vec<ArrayRef>> = (0..merged.len())
            .map(|p| merged.finish(p, &fields).unwrap())
            .collect();
        let columns: Vec<ArrayRef> = (0..fields.len())
            .map(|c| {
                let arrays: Vec<&dyn Array> = pieces.iter().map(|p| p[c].as_ref()).collect();
                arrow::compute::concat(&arrays).unwrap()
            })
            .collect();
        assert_eq!(
            sorted(&columns),
            expected,
            "strings {strings}, {groups} groups"
        );
    }

    #[test]
    fn partitioned_merge_matches_one_table() {
        // Above the partitioning threshold (several partitions) and below it (one).
        check_partitioned_merge(false, false, 300_000, 100_000, 3, 4);
        check_partitioned_merge(false, true, 300_000, 100_000, 3, 4);
        check_partitioned_merge(false, false, 5_000, 1_000, 3, 4);
        check_partitioned_merge(false, true, 5_000, 1_000, 2, 1);
    }

    #[test]
    fn spilled_groups_merge_like_one_table() {
        // Workers whose tables fill (> LOCAL_MAX_GROUPS groups) spill them into
        // partitions, several times, a group's parts in several spills and workers;
        // one worker never spills.
        check_partitioned_merge(true, false, 400_000, 150_000, 3, 2);
        check_partitioned_merge(true, true, 400_000, 150_000, 3, 2);
        check_partitioned_merge(true, false, 300_000, 100_000, 1, 1);
    }

    #[test]
    fn partitioned_merge_spreads_groups() {
        let aggregates = vec![AggExpr {
            func: AggFunc::CountStar,
            arg: None,
            distinct: false,
            ty: Type::Int64,
            name: "n".into(),
        }];
        let strategy = GroupStrategy::Hash {
            estimated_groups: 0,
            key_ranges: Vec::new(),
        };
        let plan = GroupPlan::new(&strategy, &aggregates, &[DataType::Int64], false).unwrap();
        let eval = Evaluator::new();
        let tables: Vec<GroupTable> = (0..2)
            .map(|_| {
                let mut t = plan.table(&[], 0).unwrap();
                let k: ArrayRef = Arc::new(Int64Array::from_iter_values(0..200_000));
                t.update(&[Arc::clone(&k)], &[k], 200_000, &eval).unwrap();
                t
            })
            .collect();
        let parts = Partitions::new(tables, 4).unwrap();
        assert_eq!(parts.len(), 16);
        let fields = vec![
            Field::new("k", Type::Int64, false),
            Field::new("n", Type::Int64, false),
        ];
        let sizes: Vec<usize> = (0..parts.len())
            .map(|p| parts.finish(p, &fields).unwrap()[0].len())
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), 200_000);
        // Each partition holds about 1/16 of the groups.
        assert!(sizes.iter().all(|&n| n > 10_000 && n < 15_000), "{sizes:?}");
    }
}
