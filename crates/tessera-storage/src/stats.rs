//! Column statistics computed while writing: min, max, NULL count and a distinct-count
//! sketch (HyperLogLog) that later appends can merge into.

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, PrimitiveArray};
use arrow::compute::kernels::aggregate;
use arrow::datatypes::{ArrowPrimitiveType, DataType};
use arrow::downcast_primitive_array;
use arrow::row::{RowConverter, SortField};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use std::cmp::Ordering;
use std::sync::Arc;
use tessera_common::{Result, TesseraError};

use crate::manifest::ColumnStats;

/// A string column is dictionary-encoded when loaded if it has at most this many
/// distinct values (by default: `TableWriter::dictionary_max_distinct` sets another).
/// Codes are what GPU kernels compare, group by and carry through joins (a string
/// without a dictionary is only matched by LIKE there), so the names of dimension-sized
/// tables should have one: TPC-H's `s_name` has 100 000 values at SF 10 and 1 M at SF
/// 100, and q21 groups by it. At 2^20 a predicate over the dictionary becomes a bitmap
/// of at most 128 KiB (`IN_LIST_MAX_BITMAP_BITS` in tessera-cuda), and encoding the
/// largest dictionary (sorting its values) takes about 0.2 s when the table is loaded.
/// Was 2^16 until 2026-11-25.
pub const DICTIONARY_MAX_DISTINCT: u64 = 1 << 20;

/// log2 of the number of HyperLogLog registers: 2^10 registers give a standard error
/// of 1.04/sqrt(1024) ≈ 3.3% in 1 KiB per column.
const HLL_BITS: u32 = 10;
const HLL_REGISTERS: usize = 1 << HLL_BITS;

/// HyperLogLog sketch of a column's distinct values.
#[derive(Debug, Clone, PartialEq)]
pub struct DistinctSketch {
    registers: Vec<u8>,
}

impl Default for DistinctSketch {
    fn default() -> Self {
        DistinctSketch { registers: vec![0; HLL_REGISTERS] }
    }
}

impl DistinctSketch {
    /// Adds the non-NULL values of `array`.
    pub fn add_array(&mut self, array: &ArrayRef) -> Result<()> {
        let converter = RowConverter::new(vec![SortField::new(array.data_type().clone())])
            .map_err(|e| TesseraError::Internal(format!("row converter: {e}")))?;
        let rows = converter
            .convert_columns(std::slice::from_ref(array))
            .map_err(|e| TesseraError::Internal(format!("row conversion: {e}")))?;
        for (i, row) in rows.iter().enumerate() {
            if array.is_valid(i) {
                self.add_hash(hash_bytes(row.as_ref()));
            }
        }
        Ok(())
    }

    fn add_hash(&mut self, h: u64) {
        let index = (h >> (64 - HLL_BITS)) as usize;
        let rank = ((h << HLL_BITS) | (1 << (HLL_BITS - 1))).leading_zeros() as u8 + 1;
        if rank > self.registers[index] {
            self.registers[index] = rank;
        }
    }

    /// Folds another sketch into this one.
    pub fn merge(&mut self, other: &DistinctSketch) {
        for (a, b) in self.registers.iter_mut().zip(&other.registers) {
            *a = (*a).max(*b);
        }
    }

    /// Estimated number of distinct values (HyperLogLog with the small-range correction).
    pub fn estimate(&self) -> u64 {
        let m = HLL_REGISTERS as f64;
        let sum: f64 = self.registers.iter().map(|&r| 2f64.powi(-(r as i32))).sum();
        let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
        let zeros = self.registers.iter().filter(|&&r| r == 0).count();
        let estimate = if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln() // linear counting for small cardinalities
        } else {
            raw
        };
        estimate.round() as u64
    }

    /// Hex form stored in the manifest.
    pub fn to_hex(&self) -> String {
        self.registers.iter().map(|r| format!("{r:02x}")).collect()
    }

    /// Parses the hex form; an empty string is an empty sketch.
    pub fn from_hex(text: &str) -> Result<Self> {
        if text.is_empty() {
            return Ok(Self::default());
        }
        if text.len() != HLL_REGISTERS * 2 {
            return Err(TesseraError::Execution("manifest: bad distinct sketch length".into()));
        }
        let registers = (0..HLL_REGISTERS)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| TesseraError::Execution(format!("manifest: bad distinct sketch: {e}")))?;
        Ok(DistinctSketch { registers })
    }
}

/// A fast 64-bit hash of a byte string (multiply-rotate over 8-byte words with a
/// murmur3 finalizer), good enough for HyperLogLog and much cheaper than SipHash.
fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).rotate_left(27).wrapping_mul(K);
    }
    let mut w = [0u8; 8];
    w[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Running statistics of one column while a table is written.
#[derive(Debug, Default)]
pub(crate) struct ColumnAccumulator {
    min: Option<ArrayRef>,
    max: Option<ArrayRef>,
    null_count: u64,
    sketch: DistinctSketch,
}

impl ColumnAccumulator {
    /// Starts from a table's existing statistics (for appends).
    pub(crate) fn from_stats(stats: &ColumnStats, data_type: &DataType) -> Result<Self> {
        Ok(ColumnAccumulator {
            min: parse_scalar(stats.min.as_deref(), data_type),
            max: parse_scalar(stats.max.as_deref(), data_type),
            null_count: stats.null_count,
            sketch: DistinctSketch::from_hex(&stats.sketch)?,
        })
    }

    pub(crate) fn update(&mut self, array: &ArrayRef) -> Result<()> {
        self.null_count += array.null_count() as u64;
        self.sketch.add_array(array)?;
        if let Some((lo, hi)) = min_max(array) {
            if self.min.as_ref().is_none_or(|m| compare(&lo, m) == Ordering::Less) {
                self.min = Some(lo);
            }
            if self.max.as_ref().is_none_or(|m| compare(&hi, m) == Ordering::Greater) {
                self.max = Some(hi);
            }
        }
        Ok(())
    }

    /// Folds the statistics of another part of the same column into these.
    pub(crate) fn merge(&mut self, other: &ColumnAccumulator) {
        self.null_count += other.null_count;
        self.sketch.merge(&other.sketch);
        if let Some(lo) = &other.min {
            if self.min.as_ref().is_none_or(|m| compare(lo, m) == Ordering::Less) {
                self.min = Some(Arc::clone(lo));
            }
        }
        if let Some(hi) = &other.max {
            if self.max.as_ref().is_none_or(|m| compare(hi, m) == Ordering::Greater) {
                self.max = Some(Arc::clone(hi));
            }
        }
    }

    /// The column's statistics; a string column with at most `dictionary_max` distinct
    /// values is marked for dictionary encoding.
    pub(crate) fn finish(&self, data_type: &DataType, dictionary_max: u64) -> ColumnStats {
        let distinct = self.sketch.estimate();
        ColumnStats {
            min: self.min.as_ref().and_then(format_scalar),
            max: self.max.as_ref().and_then(format_scalar),
            null_count: self.null_count,
            distinct_estimate: distinct,
            dictionary: matches!(data_type, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
                && distinct <= dictionary_max,
            sketch: self.sketch.to_hex(),
        }
    }
}

/// Orders two one-element arrays of the same type.
fn compare(a: &ArrayRef, b: &ArrayRef) -> Ordering {
    match arrow::array::make_comparator(a.as_ref(), b.as_ref(), Default::default()) {
        Ok(cmp) => cmp(0, 0),
        Err(_) => Ordering::Equal,
    }
}

fn format_scalar(a: &ArrayRef) -> Option<String> {
    let f = ArrayFormatter::try_new(a.as_ref(), &FormatOptions::default()).ok()?;
    Some(f.value(0).to_string())
}

/// Parses a statistic back into a one-element array of `data_type` (through arrow's
/// string cast, the inverse of its display for the types the store keeps).
fn parse_scalar(text: Option<&str>, data_type: &DataType) -> Option<ArrayRef> {
    let text = text?;
    let s: ArrayRef = std::sync::Arc::new(arrow::array::StringArray::from(vec![text]));
    let v = arrow::compute::cast(&s, data_type).ok()?;
    v.is_valid(0).then_some(v)
}

fn primitive_min_max<T: ArrowPrimitiveType>(a: &PrimitiveArray<T>) -> Option<(ArrayRef, ArrayRef)> {
    let (lo, hi) = (aggregate::min(a)?, aggregate::max(a)?);
    let make = |v: T::Native| -> ArrayRef {
        std::sync::Arc::new(PrimitiveArray::<T>::from_iter_values([v]).with_data_type(a.data_type().clone()))
    };
    Some((make(lo), make(hi)))
}

/// Smallest and largest non-NULL value of `array` as one-element arrays, for the types
/// the store keeps statistics on (numbers, decimals, dates, times, strings, booleans).
fn min_max(array: &ArrayRef) -> Option<(ArrayRef, ArrayRef)> {
    use std::sync::Arc;
    downcast_primitive_array!(
        array => primitive_min_max(array),
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            let (lo, hi) = (aggregate::min_string(a)?, aggregate::max_string(a)?);
            Some((Arc::new(arrow::array::StringArray::from(vec![lo])) as ArrayRef,
                  Arc::new(arrow::array::StringArray::from(vec![hi])) as ArrayRef))
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            let (lo, hi) = (aggregate::min_string(a)?, aggregate::max_string(a)?);
            Some((Arc::new(arrow::array::LargeStringArray::from(vec![lo])) as ArrayRef,
                  Arc::new(arrow::array::LargeStringArray::from(vec![hi])) as ArrayRef))
        }
        DataType::Boolean => {
            let a = array.as_boolean();
            let (lo, hi) = (aggregate::min_boolean(a)?, aggregate::max_boolean(a)?);
            Some((Arc::new(BooleanArray::from(vec![lo])) as ArrayRef,
                  Arc::new(BooleanArray::from(vec![hi])) as ArrayRef))
        }
        _ => None
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, Decimal128Array, Int64Array, StringArray};
    use std::sync::Arc;

    #[test]
    fn sketch_estimates_within_ten_percent() {
        for n in [1u64, 10, 1000, 100_000] {
            let mut s = DistinctSketch::default();
            let a: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
            s.add_array(&a).unwrap();
            s.add_array(&a).unwrap(); // duplicates do not count
            let e = s.estimate() as f64;
            assert!((e - n as f64).abs() <= 0.1 * n as f64 + 1.0, "n={n} estimate={e}");
            assert_eq!(DistinctSketch::from_hex(&s.to_hex()).unwrap(), s);
        }
    }

    #[test]
    fn min_max_nulls_and_dictionary_flag() {
        let mut acc = ColumnAccumulator::default();
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("pear"), None, Some("apple")]));
        acc.update(&a).unwrap();
        let b: ArrayRef = Arc::new(StringArray::from(vec![Some("zebra")]));
        acc.update(&b).unwrap();
        let s = acc.finish(&DataType::Utf8, DICTIONARY_MAX_DISTINCT);
        assert_eq!((s.min.as_deref(), s.max.as_deref()), (Some("apple"), Some("zebra")));
        assert_eq!((s.null_count, s.distinct_estimate, s.dictionary), (1, 3, true));
        // More distinct values than the limit: no dictionary.
        assert!(acc.finish(&DataType::Utf8, 3).dictionary);
        assert!(!acc.finish(&DataType::Utf8, 2).dictionary);
    }

    #[test]
    fn typed_statistics_survive_a_round_trip_through_text() {
        let dt = DataType::Decimal128(15, 2);
        let a: ArrayRef = Arc::new(Decimal128Array::from(vec![-150, 2599]).with_data_type(dt.clone()));
        let mut acc = ColumnAccumulator::default();
        acc.update(&a).unwrap();
        let s = acc.finish(&dt, DICTIONARY_MAX_DISTINCT);
        assert_eq!((s.min.as_deref(), s.max.as_deref()), (Some("-1.50"), Some("25.99")));
        let mut again = ColumnAccumulator::from_stats(&s, &dt).unwrap();
        let b: ArrayRef = Arc::new(Decimal128Array::from(vec![-9]).with_data_type(dt.clone()));
        again.update(&b).unwrap();
        assert_eq!(again.finish(&dt, DICTIONARY_MAX_DISTINCT).min.as_deref(), Some("-1.50"));

        let d: ArrayRef = Arc::new(Date32Array::from(vec![8035, 10591]));
        let mut acc = ColumnAccumulator::default();
        acc.update(&d).unwrap();
        let s = acc.finish(&DataType::Date32, DICTIONARY_MAX_DISTINCT);
        assert_eq!((s.min.as_deref(), s.max.as_deref()), (Some("1992-01-01"), Some("1998-12-31")));
        assert!(!s.dictionary);
    }
}
