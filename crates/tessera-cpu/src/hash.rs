//! Hashing of join and group keys.
//!
//! Keys take one of two forms. A single integer-like key (integers, dates) is used as
//! an `i64` directly. Anything else — several keys, strings, decimals — is encoded with
//! arrow's row format, where each row's key is a byte string that compares equal
//! exactly when the SQL values do (and NULL equals NULL, for grouping).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::buffer::NullBuffer;
use arrow::compute::cast_with_options;
use arrow::datatypes::{DataType, Int64Type};
use arrow::row::{RowConverter, Rows, SortField};
use tessera_common::{Result, TesseraError};

use crate::eval::{STRICT, arrow_err};

/// A multiplicative mixer (Fibonacci hashing): spreads consecutive integers over the
/// whole table.
#[inline]
pub fn hash_i64(k: i64) -> u64 {
    fmix64(k as u64)
}

/// A fast non-cryptographic hash of a byte string (8 bytes per step).
#[inline]
pub fn hash_bytes(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ b.len() as u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    let mut tail = 0u64;
    for (i, &x) in chunks.remainder().iter().enumerate() {
        tail |= (x as u64) << (8 * i);
    }
    h = (h.rotate_left(5) ^ tail).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    fmix64(h)
}

/// MurmurHash3's finalizer: every input bit affects every output bit, so the low bits
/// used as a table index are well mixed (the multiply above only mixes upwards).
#[inline]
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Whether a key column can be used as an `i64` directly.
pub fn is_int_key(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::Date32
    )
}

/// An integer-like column as `i64` values plus its validity.
pub fn int_values(a: &ArrayRef) -> Result<(Arc<[i64]>, Option<NullBuffer>)> {
    let a = match a.data_type() {
        DataType::Int64 => Arc::clone(a),
        DataType::Date32 => {
            let d = a.as_primitive::<arrow::datatypes::Date32Type>();
            let v: Vec<i64> = d.values().iter().map(|&x| x as i64).collect();
            return Ok((v.into(), d.nulls().cloned()));
        }
        _ => cast_with_options(a, &DataType::Int64, &STRICT).map_err(arrow_err)?,
    };
    let p = a.as_primitive::<Int64Type>();
    Ok((p.values().to_vec().into(), p.nulls().cloned()))
}

/// The plain (non-dictionary) type of a key column.
pub fn plain_type(dt: &DataType) -> DataType {
    match dt {
        DataType::Dictionary(_, v) => v.as_ref().clone(),
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        other => other.clone(),
    }
}

/// Casts key columns to `types` (decoding dictionaries).
pub fn normalize(keys: &[ArrayRef], types: &[DataType]) -> Result<Vec<ArrayRef>> {
    keys.iter()
        .zip(types)
        .map(|(k, t)| {
            if k.data_type() == t {
                Ok(Arc::clone(k))
            } else {
                cast_with_options(k, t, &STRICT).map_err(arrow_err)
            }
        })
        .collect()
}

/// A row-format encoder for a fixed list of key types.
pub fn row_converter(types: &[DataType]) -> Result<RowConverter> {
    RowConverter::new(types.iter().map(|t| SortField::new(t.clone())).collect())
        .map_err(|e| TesseraError::NotImplemented(format!("keys of types {types:?}: {e}")))
}

/// Encodes key columns as rows.
pub fn to_rows(converter: &RowConverter, keys: &[ArrayRef]) -> Result<Rows> {
    converter.convert_columns(keys).map_err(arrow_err)
}

/// Which rows have a NULL in any key.
pub fn any_null(keys: &[ArrayRef], rows: usize) -> Vec<bool> {
    let mut out = vec![false; rows];
    for k in keys {
        if let Some(n) = k.logical_nulls() {
            for (i, o) in out.iter_mut().enumerate() {
                *o |= n.is_null(i);
            }
        }
    }
    out
}
