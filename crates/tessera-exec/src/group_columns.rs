//! An aggregation's groups as Arrow columns on the host, when they come back from the
//! GPU: each perfect-hash group key's values from the group numbers, and each integer or
//! decimal SUM's from its exact 128-bit totals.
//!
//! Typed arrays are made directly: the values, and a validity bitmap only where some are
//! NULL. A group number holds key `i`'s slot at `(g / stride_i) % slots_i`, found with a
//! multiplication ([`FastDiv`]) rather than two 64-bit divisions. Before this, each column
//! of a warm SSB SF 20 query's 600–800 groups took 7–13 µs on the H200's host (2026-11-29
//! run 1: Option iterators, the divisions, then a cast); on this project's 2-core build
//! machine an 800-group key column took 5.1 µs that way, 3.1 of them the divisions.
//! `TESSERA_EXP_LEAN_RESULTS=0` builds them the old way, to measure both. String keys
//! stay arrow's `take` from their dictionary: a copy by code written here was a third
//! faster on the build machine but no faster on the H200's host (2026-11-29b run 2), so
//! it was taken out again.

use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Decimal128Array, Int16Array, Int32Array, Int64Array, Int8Array};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::datatypes::{is_validate_decimal_precision, validate_decimal_precision};
use tessera_common::{Result, TesseraError};
use tessera_cpu::{arrow_err, cast_to};
use tessera_ir::Type;

/// Division of 32-bit numbers by a fixed divisor as one multiplication: with
/// `m = ⌈2^64 / d⌉`, `n / d = ⌊m·n / 2^64⌋` exactly for every 32-bit `n` (Lemire, Kaser
/// and Kurz, "Faster remainder by direct computation", 2019: 64 fraction bits cover 32 of
/// the numerator and 32 of the divisor).
#[derive(Debug, Clone, Copy)]
pub struct FastDiv {
    /// `⌈2^64 / d⌉`; 0 for `d` = 1 (the quotient is the number).
    m: u64,
    d: u32,
}

impl FastDiv {
    /// The divider by `d` (at least 1).
    pub fn new(d: u32) -> FastDiv {
        let d = d.max(1);
        FastDiv { m: if d == 1 { 0 } else { u64::MAX / u64::from(d) + 1 }, d }
    }

    /// `n / d`.
    #[inline]
    pub fn div(self, n: u32) -> u32 {
        if self.m == 0 { n } else { ((u128::from(self.m) * u128::from(n)) >> 64) as u32 }
    }

    /// `n % d`.
    #[inline]
    pub fn rem(self, n: u32) -> u32 {
        n - self.div(n) * self.d
    }
}

/// The slot of each key of the groups numbered `order`, one vector a key: key `i` of
/// `slots` (each key's slots, slot 0 NULL) is the `i`-th digit of the group number in
/// the mixed radix of `slots`, the first key the fastest. None when the domain exceeds
/// 32 bits (a perfect-hash domain never does: its slots are `int` in the kernels) or a
/// group number lies outside it.
pub fn key_slots(order: &[usize], slots: &[usize]) -> Option<Vec<Vec<u32>>> {
    let domain = slots.iter().try_fold(1u64, |d, &s| d.checked_mul(s as u64))?;
    if domain > u64::from(u32::MAX) || slots.contains(&0) || order.iter().any(|&g| g as u64 >= domain) {
        return None;
    }
    let mut stride = 1u32;
    let mut out = Vec::with_capacity(slots.len());
    for &s in slots {
        let (by_stride, by_slots) = (FastDiv::new(stride), FastDiv::new(s as u32));
        out.push(order.iter().map(|&g| by_slots.rem(by_stride.div(g as u32))).collect());
        // Fits: the product of all the slots does.
        stride *= s as u32;
    }
    Some(out)
}

/// Validity of a key's slots: None when no slot is 0 (NULL).
fn slot_validity(slots: &[u32]) -> Option<NullBuffer> {
    slots.contains(&0).then(|| slots.iter().map(|&s| s != 0).collect())
}

/// A dictionary key's codes from its slots: slot `s` is code `s − 1`, slot 0 NULL (code 0
/// beneath, never read).
pub fn key_codes(slots: &[u32]) -> Int32Array {
    let codes: ScalarBuffer<i32> = slots.iter().map(|&s| s.saturating_sub(1) as i32).collect();
    Int32Array::new(codes, slot_validity(slots))
}

/// An integer key's column from its slots (slot `s` is the value `min + s − 1`, slot 0
/// NULL) as type `ty`: built directly as the integer and date types, through an Int64
/// array and a cast otherwise. A value that does not fit `ty` is an error, as the cast
/// makes it.
pub fn int_key_column(slots: &[u32], min: i64, ty: Type) -> Result<ArrayRef> {
    let nulls = slot_validity(slots);
    let values = || slots.iter().map(move |&s| min.wrapping_add(i64::from(s.max(1)) - 1));
    fn narrow<T: TryFrom<i64>>(v: impl Iterator<Item = i64>) -> Option<Vec<T>> {
        v.map(|x| T::try_from(x).ok()).collect()
    }
    let direct: Option<ArrayRef> = match ty {
        Type::Int64 => Some(Arc::new(Int64Array::new(values().collect(), nulls.clone()))),
        Type::Int32 => narrow::<i32>(values()).map(|v| Arc::new(Int32Array::new(v.into(), nulls.clone())) as ArrayRef),
        Type::Date32 => narrow::<i32>(values()).map(|v| Arc::new(Date32Array::new(v.into(), nulls.clone())) as ArrayRef),
        Type::Int16 => narrow::<i16>(values()).map(|v| Arc::new(Int16Array::new(v.into(), nulls.clone())) as ArrayRef),
        Type::Int8 => narrow::<i8>(values()).map(|v| Arc::new(Int8Array::new(v.into(), nulls.clone())) as ArrayRef),
        _ => None,
    };
    match direct {
        Some(a) => Ok(a),
        // Another type, or a value out of its range: the cast converts, or says why not.
        None => cast_to(&(Arc::new(Int64Array::new(values().collect(), nulls)) as ArrayRef), ty),
    }
}

/// The validity of groups where `has` holds: None when it holds for all.
fn validity_where(n: usize, has: impl Fn(usize) -> bool) -> Option<NullBuffer> {
    if (0..n).all(&has) { None } else { Some((0..n).map(has).collect()) }
}

/// A SUM's 64-bit integer column from exact totals: NULL where `has` does not hold; a
/// total beyond 64 bits is an overflow error.
pub fn int_sums(sums: &[i128], has: impl Fn(usize) -> bool) -> Result<Int64Array> {
    let overflow = || TesseraError::Execution("arithmetic overflow in SUM".into());
    let mut values = Vec::with_capacity(sums.len());
    for (i, &s) in sums.iter().enumerate() {
        values.push(if has(i) { i64::try_from(s).map_err(|_| overflow())? } else { 0 });
    }
    Ok(Int64Array::new(values.into(), validity_where(sums.len(), has)))
}

/// A SUM's decimal column (`precision`, `scale`) from exact totals: NULL where `has`
/// does not hold; a total with more digits than `precision` is an overflow error.
pub fn decimal_sums(sums: &[i128], has: impl Fn(usize) -> bool, precision: u8, scale: i8) -> Result<Decimal128Array> {
    let mut values = Vec::with_capacity(sums.len());
    for (i, &s) in sums.iter().enumerate() {
        if !has(i) {
            values.push(0);
            continue;
        }
        // Arrow's bounds a value at a time (its whole-array check formats each value's
        // bounds first); its message when one is out of them, as the old way gives it.
        if !is_validate_decimal_precision(s, precision) {
            let why = validate_decimal_precision(s, precision, scale).err().map_or_else(|| format!("{s} out of Decimal128({precision}, {scale})"), |e| e.to_string());
            return Err(TesseraError::Execution(format!("arithmetic overflow: {why}")));
        }
        values.push(s);
    }
    Decimal128Array::new(values.into(), validity_where(sums.len(), has)).with_precision_and_scale(precision, scale).map_err(arrow_err)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{DataType, Date32Type};

    use super::*;

    /// A small deterministic generator (xorshift), for values without a seed to pass.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Exact against plain division for divisors of every size, at the numbers where an
    /// approximation would slip first (around multiples of the divisor, the top of the
    /// range) and at random ones.
    #[test]
    fn fast_division_is_exact_for_32_bit_numbers() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut divisors: Vec<u32> = vec![1, 2, 3, 5, 7, 25, 26, 641, 1000, 65_535, 65_536, 1 << 31, u32::MAX - 1, u32::MAX];
        divisors.extend((0..200).map(|_| (rng.next() as u32).max(1)));
        divisors.extend((0..200).map(|_| ((rng.next() % 5000) as u32).max(1)));
        for &d in &divisors {
            let f = FastDiv::new(d);
            let mut numbers: Vec<u32> = vec![0, 1, d - 1, d, d.wrapping_add(1), u32::MAX, u32::MAX - 1, u32::MAX / d * d, (u32::MAX / d * d).wrapping_sub(1)];
            numbers.extend((0..500).map(|_| rng.next() as u32));
            numbers.extend((0..100).map(|_| ((rng.next() % 1000) as u32).wrapping_mul(d)));
            for n in numbers {
                assert_eq!(f.div(n), n / d, "{n} / {d}");
                assert_eq!(f.rem(n), n % d, "{n} % {d}");
            }
        }
    }

    /// Every group of a three-key domain comes apart into the slots that make it.
    #[test]
    fn key_slots_are_the_group_numbers_digits() {
        let slots = [26usize, 251, 8];
        let domain: usize = slots.iter().product();
        let order: Vec<usize> = (0..domain).step_by(7).chain([domain - 1]).collect();
        let got = key_slots(&order, &slots).unwrap();
        for (k, &g) in order.iter().enumerate() {
            assert_eq!(got[0][k] as usize, g % 26);
            assert_eq!(got[1][k] as usize, (g / 26) % 251);
            assert_eq!(got[2][k] as usize, g / (26 * 251));
        }
        // Outside the domain, or a domain past 32 bits: not taken apart here.
        assert!(key_slots(&[domain], &slots).is_none());
        assert!(key_slots(&[0], &[1 << 20, 1 << 20]).is_none());
        assert_eq!(key_slots(&[], &slots).unwrap(), vec![Vec::<u32>::new(); 3]);
    }

    /// A key's column equals what the Option iterator and the cast made (the old way),
    /// NULL slots included, for each type built directly and one that is cast.
    #[test]
    fn key_columns_match_the_cast() {
        let slots = [3u32, 1, 0, 7, 2];
        let old = |min: i64, ty: Type| {
            let v: Int64Array = slots.iter().map(|&s| (s > 0).then(|| min + i64::from(s) - 1)).collect();
            cast_to(&(Arc::new(v) as ArrayRef), ty).unwrap()
        };
        for (min, ty) in [(1992, Type::Int32), (-5, Type::Int64), (10_000, Type::Date32), (-100, Type::Int16), (-3, Type::Int8), (7, Type::UInt16)] {
            let got = int_key_column(&slots, min, ty).unwrap();
            assert_eq!(got.to_data(), old(min, ty).to_data(), "{ty:?}");
        }
        assert_eq!(int_key_column(&slots, 1992, Type::Date32).unwrap().as_primitive::<Date32Type>().value(0), 1994);
        // Out of range: an error, as from the cast.
        assert!(int_key_column(&[1, 300], 0, Type::Int8).is_err());
        // Without a NULL slot there is no validity bitmap.
        assert!(int_key_column(&[1, 2], 0, Type::Int32).unwrap().nulls().is_none());
        let codes = key_codes(&slots);
        assert_eq!(codes.iter().collect::<Vec<_>>(), vec![Some(2), Some(0), None, Some(6), Some(1)]);
        assert_eq!(codes.data_type(), &DataType::Int32);
        assert_eq!(key_codes(&[1, 2]).null_count(), 0);
    }

    /// Sums: NULL where a group has none, an error past 64 bits or past the decimal's
    /// digits, exactly at the largest value that fits.
    #[test]
    fn sums_are_exact_and_overflow_is_an_error() {
        let sums = [5i128, -7, 0, i128::from(i64::MAX)];
        let a = int_sums(&sums, |i| i != 2).unwrap();
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![Some(5), Some(-7), None, Some(i64::MAX)]);
        assert!(int_sums(&sums, |_| true).unwrap().nulls().is_none());
        assert!(int_sums(&[i128::from(i64::MAX) + 1], |_| true).is_err());
        // Past 64 bits but NULL: not read.
        assert!(int_sums(&[i128::MAX], |_| false).is_ok());
        let d = decimal_sums(&[12_345, -99_999, 1], |i| i != 2, 5, 2).unwrap();
        assert_eq!(d.data_type(), &DataType::Decimal128(5, 2));
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![Some(12_345), Some(-99_999), None]);
        assert!(decimal_sums(&[100_000], |_| true, 5, 2).is_err());
        assert!(decimal_sums(&[-100_000], |_| true, 5, 2).is_err());
        let widest = 10i128.pow(38) - 1;
        assert!(decimal_sums(&[widest, -widest], |_| true, 38, 0).is_ok());
        assert!(decimal_sums(&[widest + 1], |_| true, 38, 0).is_err());
    }
}
