//! Hash tables for joins: built once from the build pipeline's rows, probed by many
//! threads.
//!
//! Rows with equal keys are chained (`first[slot]` → `next[row]` → …, in build order),
//! so duplicate build keys need no special case. Three addressings:
//! - **perfect**: one integer key whose range is known from statistics; the slot is
//!   `key - min`, no hashing and no key comparison (SSB's dimension keys);
//! - **integer hash**: one integer key, open addressing with linear probing;
//! - **row hash**: any other keys, encoded in arrow's row format, open addressing on
//!   the bytes' hash.

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, Rows};
use tessera_common::{Result, TesseraError};
use tessera_ir::BuildStrategy;

use crate::hash::{any_null, hash_bytes, hash_i64, int_values, is_int_key, normalize, plain_type, row_converter, to_rows};

const NONE: u32 = u32::MAX;

enum Index {
    /// Every build row matches every probe row (a join without keys).
    All,
    Perfect { min: i64, first: Vec<u32> },
    Int { keys: Vec<i64>, first: Vec<u32>, mask: usize },
    Rows { converter: RowConverter, rows: Rows, first: Vec<u32>, mask: usize },
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
    next: Vec<u32>,
}

impl std::fmt::Debug for JoinTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinTable").field("rows", &self.rows).finish()
    }
}

fn table_size(rows: usize) -> usize {
    // Load factor at most 1/2.
    (rows.max(1) * 2).next_power_of_two()
}

impl JoinTable {
    /// Builds a table over `keys` (one array per key, all build rows) and `payload`.
    pub fn build(keys: Vec<ArrayRef>, payload: Vec<ArrayRef>, rows: usize, strategy: &BuildStrategy, nulls_equal: bool) -> Result<JoinTable> {
        if rows >= NONE as usize {
            return Err(TesseraError::ResourcesExhausted(format!("join build side of {rows} rows is too large")));
        }
        let key_types: Vec<DataType> = keys.iter().map(|k| plain_type(k.data_type())).collect();
        let keys = normalize(&keys, &key_types)?;
        let nulls = any_null(&keys, rows);
        let has_null_key = nulls.iter().any(|&n| n);
        let skip = |r: usize| nulls[r] && !nulls_equal;
        let mut next = vec![NONE; rows];
        let single_int = keys.len() == 1 && is_int_key(&key_types[0]) && !nulls_equal;
        let index = if keys.is_empty() {
            Index::All
        } else if let (BuildStrategy::Perfect { min, max }, true) = (strategy, single_int) {
            let (vals, _) = int_values(&keys[0])?;
            let mut first = vec![NONE; (max - min + 1) as usize];
            for r in (0..rows).rev() {
                if skip(r) {
                    continue;
                }
                let v = vals[r];
                if v < *min || v > *max {
                    return Err(TesseraError::Internal(format!(
                        "join key {v} outside the range [{min}, {max}] the statistics promised"
                    )));
                }
                let s = (v - min) as usize;
                next[r] = first[s];
                first[s] = r as u32;
            }
            Index::Perfect { min: *min, first }
        } else if single_int {
            let (vals, _) = int_values(&keys[0])?;
            let size = table_size(rows);
            let mask = size - 1;
            let mut slot_keys = vec![0i64; size];
            let mut first = vec![NONE; size];
            for r in (0..rows).rev() {
                if skip(r) {
                    continue;
                }
                let v = vals[r];
                let mut s = hash_i64(v) as usize & mask;
                loop {
                    if first[s] == NONE {
                        slot_keys[s] = v;
                        first[s] = r as u32;
                        break;
                    }
                    if slot_keys[s] == v {
                        next[r] = first[s];
                        first[s] = r as u32;
                        break;
                    }
                    s = (s + 1) & mask;
                }
            }
            Index::Int { keys: slot_keys, first, mask }
        } else {
            let converter = row_converter(&key_types)?;
            let rows_enc = to_rows(&converter, &keys)?;
            let size = table_size(rows);
            let mask = size - 1;
            let mut first = vec![NONE; size];
            for r in (0..rows).rev() {
                if skip(r) {
                    continue;
                }
                let row = rows_enc.row(r);
                let mut s = hash_bytes(row.as_ref()) as usize & mask;
                loop {
                    let head = first[s];
                    if head == NONE {
                        first[s] = r as u32;
                        break;
                    }
                    if rows_enc.row(head as usize) == row {
                        next[r] = head;
                        first[s] = r as u32;
                        break;
                    }
                    s = (s + 1) & mask;
                }
            }
            Index::Rows { converter, rows: rows_enc, first, mask }
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
                let (vals, _) = int_values(&keys[0])?;
                let n = first.len() as u64;
                for r in 0..rows {
                    let s = vals[r].wrapping_sub(*min) as u64;
                    if s < n && !nulls[r] {
                        out[r] = first[s as usize];
                    }
                }
            }
            Index::Int { keys: slot_keys, first, mask } => {
                let (vals, _) = int_values(&keys[0])?;
                for r in 0..rows {
                    if nulls[r] {
                        continue;
                    }
                    let v = vals[r];
                    let mut s = hash_i64(v) as usize & mask;
                    loop {
                        let head = first[s];
                        if head == NONE {
                            break;
                        }
                        if slot_keys[s] == v {
                            out[r] = head;
                            break;
                        }
                        s = (s + 1) & mask;
                    }
                }
            }
            Index::Rows { converter, rows: build_rows, first, mask } => {
                let probe_rows = to_rows(converter, &keys)?;
                for r in 0..rows {
                    if nulls[r] {
                        continue;
                    }
                    let row = probe_rows.row(r);
                    let mut s = hash_bytes(row.as_ref()) as usize & mask;
                    loop {
                        let head = first[s];
                        if head == NONE {
                            break;
                        }
                        if build_rows.row(head as usize) == row {
                            out[r] = head;
                            break;
                        }
                        s = (s + 1) & mask;
                    }
                }
            }
        }
        Ok(out)
    }

    /// The build row after `row` in its chain (`u32::MAX` at the end).
    #[inline]
    pub fn next(&self, row: u32) -> u32 {
        match self.index {
            // Without keys every build row is in one chain: 0, 1, 2, …
            Index::All => {
                if (row as usize) + 1 < self.rows { row + 1 } else { NONE }
            }
            _ => self.next[row as usize],
        }
    }
}

/// Marks the end of a chain.
pub const END: u32 = NONE;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Int32Array, StringArray};

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
            let t = JoinTable::build(vec![Arc::clone(&keys)], vec![], 5, &strategy, false).unwrap();
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
        let t = JoinTable::build(vec![build], vec![], 3, &BuildStrategy::Hash { key_ranges: vec![None] }, false).unwrap();
        let heads = t.heads(&[Arc::new(dict) as ArrayRef], 3, false).unwrap();
        assert_eq!(chain(&t, heads[0]), vec![1]);
        assert_eq!(chain(&t, heads[1]), vec![0, 2]);
        assert_eq!(heads[2], END);
    }

    #[test]
    fn nulls_equal_joins_match_null_keys() {
        let keys: ArrayRef = Arc::new(Int32Array::from(vec![None, Some(1)]));
        let t = JoinTable::build(vec![Arc::clone(&keys)], vec![], 2, &BuildStrategy::Hash { key_ranges: vec![None] }, true).unwrap();
        let heads = t.heads(&[keys], 2, true).unwrap();
        assert_eq!(heads, vec![0, 1]);
    }
}
