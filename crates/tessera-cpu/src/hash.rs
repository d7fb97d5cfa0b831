//! Hashing of join and group keys.
//!
//! Keys take one of two forms. Keys that all have a fixed width (integers, dates,
//! timestamps, decimals, booleans) are held as 64-bit words ([`WordLayout`]): a few
//! words compare and hash far faster than bytes. Anything else — strings above all — is
//! encoded with arrow's row format, where each row's key is a byte string that compares
//! equal exactly when the SQL values do (and NULL equals NULL, for grouping).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Int64Array};
use arrow::buffer::NullBuffer;
use arrow::compute::cast_with_options;
use arrow::datatypes::{DataType, Decimal128Type, Int64Type};
use arrow::row::{RowConverter, SortField};
use tessera_common::{Result, TesseraError};

use crate::eval::{STRICT, arrow_err};

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

/// A hash of fixed-width keys held as 64-bit words (see `aggregate::WordLayout`).
#[inline]
pub fn hash_words(words: &[u64]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &w in words {
        h = (h ^ w)
            .wrapping_mul(0x51_7c_c1_b7_27_22_0a_95)
            .rotate_left(29);
    }
    fmix64(h)
}

/// Whether two keys of words are equal, compared inline (a slice `==` calls `memcmp`,
/// which costs more than the one or two words a key has: ~6% of a group-by's time).
#[inline]
pub fn same_words(a: &[u64], b: &[u64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
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

/// How one key is held in a [`WordLayout`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum WordKey {
    /// An integer, date or timestamp as one `i64` word.
    Int,
    /// A decimal of at most 18 digits as one `i64` word.
    Decimal64,
    /// A wider decimal as two words (low, high) of its `i128`.
    Decimal128,
    /// A boolean as 0 or 1.
    Bool,
}

impl WordKey {
    fn of(dt: &DataType) -> Option<WordKey> {
        use DataType::*;
        Some(match dt {
            Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | Date32 | Date64
            | Timestamp(..) => WordKey::Int,
            Decimal128(p, _) if *p <= 18 => WordKey::Decimal64,
            Decimal128(..) => WordKey::Decimal128,
            Boolean => WordKey::Bool,
            _ => return None,
        })
    }

    fn words(self) -> usize {
        if self == WordKey::Decimal128 { 2 } else { 1 }
    }
}

/// Fixed-width keys as 64-bit words, one row's keys after the other: each key in its
/// words ([`WordKey`]), then — when any key may be NULL — one word of NULL bits (a NULL
/// key's own words are 0, so equal keys are equal words). Comparing and hashing a
/// few words is much cheaper than arrow's row format, which serves every other key.
#[derive(Debug)]
pub struct WordLayout {
    keys: Vec<(WordKey, DataType)>,
    nullable: bool,
    /// Words per row.
    pub width: usize,
}

impl WordLayout {
    /// The layout for keys of `types` (plain types), if every one has a fixed width
    /// and there are at most 63 (one NULL bit each).
    pub(crate) fn new(types: &[DataType], nullable: bool) -> Option<WordLayout> {
        if types.len() > 63 {
            return None;
        }
        let keys: Vec<(WordKey, DataType)> = types
            .iter()
            .map(|t| WordKey::of(t).map(|k| (k, t.clone())))
            .collect::<Option<_>>()?;
        let nullable = nullable || keys.is_empty();
        let width = keys.iter().map(|(k, _)| k.words()).sum::<usize>() + nullable as usize;
        Some(WordLayout {
            keys,
            nullable,
            width,
        })
    }

    /// Encodes `rows` rows of `keys` (plain types, as the layout's). A layout without
    /// NULL bits refuses NULLs unless `ignore_nulls` (the caller skips those rows).
    pub(crate) fn encode(
        &self,
        keys: &[ArrayRef],
        rows: usize,
        ignore_nulls: bool,
    ) -> Result<Vec<u64>> {
        let w = self.width;
        let mut out = vec![0u64; rows * w];
        let mut at = 0;
        for (i, ((kind, _), k)) in self.keys.iter().zip(keys).enumerate() {
            let nulls = k.logical_nulls();
            if let Some(n) = &nulls {
                if !self.nullable && !ignore_nulls && n.null_count() > 0 {
                    return Err(TesseraError::Internal(
                        "a key planned as NOT NULL holds NULLs".into(),
                    ));
                }
            }
            match kind {
                WordKey::Int => {
                    let vals = int_slice(k)?;
                    for (r, v) in vals.iter().enumerate() {
                        out[r * w + at] = *v as u64;
                    }
                }
                WordKey::Decimal64 | WordKey::Decimal128 => {
                    let d = k.as_primitive_opt::<Decimal128Type>().ok_or_else(|| {
                        TesseraError::Internal(format!(
                            "decimal group key of type {}",
                            k.data_type()
                        ))
                    })?;
                    for (r, v) in d.values().iter().enumerate() {
                        out[r * w + at] = *v as u64;
                        if *kind == WordKey::Decimal128 {
                            out[r * w + at + 1] = (*v >> 64) as u64;
                        }
                    }
                }
                WordKey::Bool => {
                    let b = k.as_boolean_opt().ok_or_else(|| {
                        TesseraError::Internal("boolean group key expected".into())
                    })?;
                    for r in 0..rows {
                        out[r * w + at] = b.value(r) as u64;
                    }
                }
            }
            if let Some(n) = nulls.filter(|n| n.null_count() > 0) {
                for r in (0..rows).filter(|&r| n.is_null(r)) {
                    out[r * w + at..r * w + at + kind.words()].fill(0);
                    if self.nullable {
                        out[r * w + w - 1] |= 1 << i;
                    }
                }
            }
            at += kind.words();
        }
        Ok(out)
    }

    /// The key columns of the groups `order` out of the stored words.
    pub(crate) fn decode(&self, words: &[u64], order: &[usize]) -> Result<Vec<ArrayRef>> {
        let w = self.width;
        let mut at = 0;
        let mut out = Vec::with_capacity(self.keys.len());
        for (i, (kind, dt)) in self.keys.iter().enumerate() {
            let word = |g: usize, k: usize| words[g * w + at + k];
            let nulls = self.nullable.then(|| {
                NullBuffer::from_iter(order.iter().map(|&g| words[g * w + w - 1] & (1 << i) == 0))
            });
            let array: ArrayRef = match kind {
                WordKey::Int => {
                    let v =
                        Int64Array::new(order.iter().map(|&g| word(g, 0) as i64).collect(), nulls);
                    arrow::compute::cast(&v, dt).map_err(arrow_err)?
                }
                WordKey::Decimal64 | WordKey::Decimal128 => {
                    let values = order.iter().map(|&g| {
                        if *kind == WordKey::Decimal64 {
                            word(g, 0) as i64 as i128
                        } else {
                            ((word(g, 1) as i128) << 64) | word(g, 0) as i128
                        }
                    });
                    let DataType::Decimal128(p, s) = dt else {
                        return Err(TesseraError::Internal(format!("decimal key of type {dt}")));
                    };
                    Arc::new(
                        Decimal128Array::new(values.collect(), nulls)
                            .with_precision_and_scale(*p, *s)
                            .map_err(arrow_err)?,
                    )
                }
                WordKey::Bool => Arc::new(BooleanArray::new(
                    order.iter().map(|&g| word(g, 0) != 0).collect(),
                    nulls,
                )),
            };
            out.push(array);
            at += kind.words();
        }
        Ok(out)
    }
}

/// Whether a key column can be used as an `i64` directly.
pub fn is_int_key(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::Date32
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

/// The values of an integer key column as `i64`, borrowed when the column holds `i64`s
/// (a NULL's value is unspecified: callers check validity).
pub fn int_slice(a: &ArrayRef) -> Result<std::borrow::Cow<'_, [i64]>> {
    use std::borrow::Cow;
    Ok(match a.data_type() {
        DataType::Int64 => Cow::Borrowed(a.as_primitive::<Int64Type>().values().as_ref()),
        DataType::Int32 => Cow::Owned(a.as_primitive::<arrow::datatypes::Int32Type>().values().iter().map(|&x| i64::from(x)).collect()),
        DataType::Date32 => Cow::Owned(a.as_primitive::<arrow::datatypes::Date32Type>().values().iter().map(|&x| i64::from(x)).collect()),
        _ => Cow::Owned(int_values(a)?.0.to_vec()),
    })
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
