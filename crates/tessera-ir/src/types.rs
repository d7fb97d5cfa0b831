//! Column types and literal values of the IR.
//!
//! The IR has its own small type system (not arrow's `DataType`) so that it stays plain,
//! serializable data that both backends and the code generator can match on
//! exhaustively. Strings are one logical type, `Utf8`, whether or not the store keeps a
//! column dictionary-encoded: encodings are the backends' business.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The type of a column or expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Type {
    /// The type of an untyped `NULL` literal.
    Null,
    /// true/false.
    Boolean,
    /// 8-bit signed integer.
    Int8,
    /// 16-bit signed integer.
    Int16,
    /// 32-bit signed integer.
    Int32,
    /// 64-bit signed integer.
    Int64,
    /// 8-bit unsigned integer.
    UInt8,
    /// 16-bit unsigned integer.
    UInt16,
    /// 32-bit unsigned integer.
    UInt32,
    /// 64-bit unsigned integer.
    UInt64,
    /// IEEE single.
    Float32,
    /// IEEE double.
    Float64,
    /// Exact decimal: a scaled integer with `precision` digits, `scale` of them fractional.
    Decimal {
        /// Total digits (1..=38).
        precision: u8,
        /// Digits after the point.
        scale: i8,
    },
    /// Days since 1970-01-01.
    Date32,
    /// UTF-8 string.
    Utf8,
}

impl Type {
    /// Whether values are integers (signed or unsigned).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            Type::Int8 | Type::Int16 | Type::Int32 | Type::Int64 | Type::UInt8 | Type::UInt16 | Type::UInt32 | Type::UInt64
        )
    }

    /// Whether values are numbers (integer, decimal or float).
    pub fn is_numeric(self) -> bool {
        self.is_integer() || matches!(self, Type::Float32 | Type::Float64 | Type::Decimal { .. })
    }

    /// Width in bytes of one value in a fixed-width column, `None` for strings.
    pub fn width(self) -> Option<usize> {
        Some(match self {
            Type::Null => 0,
            Type::Boolean | Type::Int8 | Type::UInt8 => 1,
            Type::Int16 | Type::UInt16 => 2,
            Type::Int32 | Type::UInt32 | Type::Float32 | Type::Date32 => 4,
            Type::Int64 | Type::UInt64 | Type::Float64 => 8,
            Type::Decimal { .. } => 16,
            Type::Utf8 => return None,
        })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Decimal { precision, scale } => write!(f, "decimal({precision},{scale})"),
            other => write!(f, "{}", format!("{other:?}").to_lowercase()),
        }
    }
}

/// A named, typed column of a pipeline's row layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Field {
    /// Display name (qualified where the query qualified it).
    pub name: String,
    /// Type.
    pub ty: Type,
    /// Whether NULLs can occur.
    pub nullable: bool,
}

impl Field {
    /// A field.
    pub fn new(name: impl Into<String>, ty: Type, nullable: bool) -> Self {
        Field { name: name.into(), ty, nullable }
    }
}

/// A literal value. Its type is carried beside it in [`crate::Expr::Literal`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Scalar {
    /// SQL NULL.
    Null,
    /// A boolean.
    Boolean(bool),
    /// Any signed integer type, widened.
    Int(i64),
    /// Any unsigned integer type, widened.
    UInt(u64),
    /// Float32 or Float64.
    Float(f64),
    /// A decimal's unscaled value.
    Decimal(i128),
    /// Days since the epoch.
    Date32(i32),
    /// A string.
    Utf8(String),
}

impl Scalar {
    /// Renders the value as SQL would print it, given its type.
    pub fn display(&self, ty: Type) -> String {
        match (self, ty) {
            (Scalar::Null, _) => "NULL".into(),
            (Scalar::Boolean(b), _) => b.to_string(),
            (Scalar::Int(v), _) => v.to_string(),
            (Scalar::UInt(v), _) => v.to_string(),
            (Scalar::Float(v), _) => format!("{v:?}"),
            (Scalar::Decimal(v), Type::Decimal { scale, .. }) => format_decimal(*v, scale),
            (Scalar::Decimal(v), _) => v.to_string(),
            (Scalar::Date32(d), _) => format!("date {}", format_date(*d)),
            (Scalar::Utf8(s), _) => format!("'{}'", s.replace('\'', "''")),
        }
    }
}

/// A double as an order key (GPU kernels hold doubles so; the CPU backend's packed sort
/// keys rank them so): its bits, the lower 63 flipped when the sign is set, as a
/// signed integer. These keys order like IEEE 754's total order (-NaN < -inf < … < -0.0 <
/// 0.0 < … < inf < NaN), which is how Arrow and DataFusion compare, sort and take the
/// MIN/MAX of floats, so a GPU kernel compares, tests IN lists and takes MIN/MAX of floats
/// as integers, and equal keys are equal floats. Columns go up as keys and come back
/// through [`float_from_order_key`]; arithmetic, SUM and AVG turn keys back into doubles
/// in the kernel (`tessera_float_of_key` in `cuda/expr.cuh`, the same transform).
pub fn float_order_key(v: f64) -> i64 {
    order_bits(v.to_bits() as i64)
}

/// The double of an order key.
pub fn float_from_order_key(key: i64) -> f64 {
    f64::from_bits(order_bits(key) as u64)
}

/// A double's bits to its order key and back: the lower 63 bits flipped when the sign is
/// set (the transform undoes itself).
fn order_bits(bits: i64) -> i64 {
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

/// `value` scaled by 10^-`scale`, as text.
pub fn format_decimal(value: i128, scale: i8) -> String {
    if scale <= 0 {
        return format!("{}{}", value, "0".repeat((-scale) as usize));
    }
    let digits = value.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale { format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits) } else { digits };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if value < 0 { "-" } else { "" })
}

/// Days since 1970-01-01 as `YYYY-MM-DD` (proleptic Gregorian).
pub fn format_date(days: i32) -> String {
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Year, month, day of a day number (days since 1970-01-01), proleptic Gregorian.
/// The classic era-based conversion: exact for every i32 day number.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_print_exactly() {
        assert_eq!(format_decimal(12345, 2), "123.45");
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(format_decimal(7, 0), "7");
        assert_eq!(format_decimal(7, -2), "700");
    }

    #[test]
    fn dates_convert_both_ways_at_known_points() {
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(8035), "1992-01-01");
        assert_eq!(format_date(10591), "1998-12-31");
        assert_eq!(format_date(-1), "1969-12-31");
        assert_eq!(civil_from_days(11016), (2000, 2, 29));
    }
}
