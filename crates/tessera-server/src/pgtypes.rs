//! Arrow values in PostgreSQL's types: the type OID of each Arrow type, result rows in
//! the text and binary formats of the wire protocol, and parameter values read back.
//!
//! | Arrow | PostgreSQL |
//! |---|---|
//! | Boolean | bool |
//! | Int8, Int16, UInt8 | int2 |
//! | Int32, UInt16 | int4 |
//! | Int64, UInt32 | int8 |
//! | UInt64, Decimal128/256(p, s) | numeric (exact; p, s in the type modifier) |
//! | Float16, Float32 / Float64 | float4 / float8 |
//! | Utf8, LargeUtf8, Utf8View, dictionaries of them | text |
//! | Binary, LargeBinary, BinaryView | bytea |
//! | Date32, Date64 | date |
//! | Timestamp without / with a time zone | timestamp / timestamptz (UTC) |
//! | anything else (intervals, lists, …) | text, as Arrow displays it |
//!
//! The binary format of a timestamp carries microseconds (PostgreSQL's precision): a
//! nanosecond timestamp is truncated there; its text format keeps every digit.

use std::sync::Arc;

use bytes::{BufMut, BytesMut};
use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::compute::{CastOptions, cast};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type,
    Schema, TimeUnit, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::ScalarValue;
use pgwire::api::Type;
use pgwire::api::portal::Format;
use pgwire::api::results::{FieldFormat, FieldInfo};
use pgwire::messages::data::DataRow;
use tessera_common::{Result, TesseraError};

/// Casts of parameter values fail on values that do not fit (never NULL or a wrap).
const STRICT: CastOptions<'static> = CastOptions { safe: false, format_options: FormatOptions::new() };

/// Days from 1970-01-01 (Arrow's epoch) to 2000-01-01 (PostgreSQL's).
const PG_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS as i64 * 86_400_000_000;

/// The PostgreSQL type a column of `dt` is sent as, and its type modifier (-1: none):
/// the mapping of the engine's `pg_catalog`, so that the catalogs describe columns as
/// they are sent.
pub fn pg_type(dt: &DataType) -> (Type, i32) {
    let (oid, modifier) = tessera_engine::pg_catalog::pg_type(dt);
    (Type::from_oid(oid).unwrap_or(Type::TEXT), modifier)
}

/// The Arrow type a parameter sent as `ty` is read into, where the statement does not
/// say (a placeholder DataFusion could not type).
fn arrow_type(ty: &Type) -> DataType {
    match *ty {
        Type::BOOL => DataType::Boolean,
        Type::INT2 => DataType::Int16,
        Type::INT4 => DataType::Int32,
        Type::INT8 | Type::OID => DataType::Int64,
        Type::FLOAT4 => DataType::Float32,
        Type::FLOAT8 => DataType::Float64,
        Type::NUMERIC => DataType::Decimal128(38, 10),
        Type::DATE => DataType::Date32,
        Type::TIMESTAMP => DataType::Timestamp(TimeUnit::Microsecond, None),
        Type::TIMESTAMPTZ => DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())),
        Type::BYTEA => DataType::Binary,
        _ => DataType::Utf8,
    }
}

/// The row description of `schema`, each column in the format the client asked for.
pub fn fields(schema: &Schema, format: &Format) -> Vec<FieldInfo> {
    schema
        .fields()
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (ty, modifier) = pg_type(f.data_type());
            FieldInfo::new(f.name().clone(), None, None, ty, format.format_for(i)).with_type_modifier(modifier)
        })
        .collect()
}

/// One result column made ready for encoding: dictionaries and views cast to their
/// plain types, so each value is read directly.
struct Column {
    array: ArrayRef,
    binary: bool,
    /// For types sent as text (no PostgreSQL counterpart): Arrow's display of them.
    display: Option<Vec<Option<String>>>,
}

/// The columns of one batch made ready to encode value by value, each in the text or
/// the binary format (the rows of a query, the fields of `COPY … TO STDOUT`).
pub struct BatchEncoder {
    columns: Vec<Column>,
}

impl BatchEncoder {
    /// The columns of `batch`, column `i` in the binary format where `binary(i)`.
    pub fn new(batch: &RecordBatch, binary: impl Fn(usize) -> bool) -> Result<BatchEncoder> {
        let mut columns = Vec::with_capacity(batch.num_columns());
        for (i, array) in batch.columns().iter().enumerate() {
            let plain = match array.data_type() {
                DataType::Dictionary(_, value) => cast(array, value).map_err(|e| TesseraError::Execution(e.to_string()))?,
                _ => Arc::clone(array),
            };
            let plain = match plain.data_type() {
                DataType::LargeUtf8 | DataType::Utf8View => cast(&plain, &DataType::Utf8),
                DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => cast(&plain, &DataType::Binary),
                DataType::Float16 => cast(&plain, &DataType::Float32),
                DataType::Date64 => cast(&plain, &DataType::Date32),
                _ => Ok(plain),
            }
            .map_err(|e| TesseraError::Execution(e.to_string()))?;
            let display = (pg_type(plain.data_type()).0 == Type::TEXT && !matches!(plain.data_type(), DataType::Utf8)
                || matches!(plain.data_type(), DataType::Decimal256(..) | DataType::Decimal128(_, i8::MIN..=-1)))
            .then(|| displayed(&plain))
            .transpose()?;
            columns.push(Column { array: plain, binary: binary(i), display });
        }
        Ok(BatchEncoder { columns })
    }

    /// The number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// Whether there are no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Appends the value of `column` in `row` to `out`; false (nothing appended) for NULL.
    pub fn encode(&self, row: usize, column: usize, out: &mut BytesMut) -> Result<bool> {
        let Some(c) = self.columns.get(column) else {
            return Err(TesseraError::Internal(format!("no column {column} to encode")));
        };
        if !c.array.is_valid(row) {
            return Ok(false);
        }
        encode_value(c, row, out)?;
        Ok(true)
    }
}

/// Encodes the rows of `batch` as DataRow messages, column `i` in `fields[i]`'s format.
pub fn encode_batch(batch: &RecordBatch, fields: &[FieldInfo]) -> Result<Vec<DataRow>> {
    let encoder = BatchEncoder::new(batch, |i| fields.get(i).is_some_and(|f| f.format() == FieldFormat::Binary))?;
    let mut rows = Vec::with_capacity(batch.num_rows());
    let mut buf = BytesMut::with_capacity(64);
    for row in 0..batch.num_rows() {
        for column in 0..encoder.len() {
            let at = buf.len();
            buf.put_i32(-1);
            if encoder.encode(row, column, &mut buf)? {
                let len = i32::try_from(buf.len() - at - 4).map_err(|_| TesseraError::Execution("a value over 2 GiB cannot be sent".into()))?;
                buf[at..at + 4].copy_from_slice(&len.to_be_bytes());
            }
        }
        rows.push(DataRow::new(buf.split(), encoder.len() as i16));
    }
    Ok(rows)
}

/// Arrow's display of every value of `array` (types without a PostgreSQL counterpart).
fn displayed(array: &ArrayRef) -> Result<Vec<Option<String>>> {
    let options = FormatOptions::default();
    let formatter = ArrayFormatter::try_new(array.as_ref(), &options).map_err(|e| TesseraError::Execution(e.to_string()))?;
    Ok((0..array.len()).map(|i| array.is_valid(i).then(|| formatter.value(i).to_string())).collect())
}

fn encode_value(column: &Column, row: usize, out: &mut BytesMut) -> Result<()> {
    let a = &column.array;
    if let Some(display) = &column.display {
        out.put_slice(display[row].as_deref().unwrap_or_default().as_bytes());
        return Ok(());
    }
    let text = !column.binary;
    match a.data_type() {
        DataType::Boolean => {
            let v = a.as_boolean().value(row);
            if text {
                out.put_u8(if v { b't' } else { b'f' });
            } else {
                out.put_u8(u8::from(v));
            }
        }
        DataType::Int8 => int(i64::from(a.as_primitive::<Int8Type>().value(row)), 2, text, out),
        DataType::Int16 => int(i64::from(a.as_primitive::<Int16Type>().value(row)), 2, text, out),
        DataType::UInt8 => int(i64::from(a.as_primitive::<UInt8Type>().value(row)), 2, text, out),
        DataType::Int32 => int(i64::from(a.as_primitive::<Int32Type>().value(row)), 4, text, out),
        DataType::UInt16 => int(i64::from(a.as_primitive::<UInt16Type>().value(row)), 4, text, out),
        DataType::Int64 => int(a.as_primitive::<Int64Type>().value(row), 8, text, out),
        DataType::UInt32 => int(i64::from(a.as_primitive::<UInt32Type>().value(row)), 8, text, out),
        DataType::UInt64 => numeric(i128::from(a.as_primitive::<UInt64Type>().value(row)), 0, text, out),
        DataType::Decimal128(_, s) => numeric(a.as_primitive::<Decimal128Type>().value(row), *s as u16, text, out),
        DataType::Float32 => {
            let v = a.as_primitive::<Float32Type>().value(row);
            if text {
                out.put_slice(float_text(f64::from(v), v.to_string(), 6).as_bytes());
            } else {
                out.put_f32(v);
            }
        }
        DataType::Float64 => {
            let v = a.as_primitive::<Float64Type>().value(row);
            if text {
                out.put_slice(float_text(v, v.to_string(), 15).as_bytes());
            } else {
                out.put_f64(v);
            }
        }
        DataType::Utf8 => out.put_slice(a.as_string::<i32>().value(row).as_bytes()),
        DataType::Binary => {
            let v = a.as_binary::<i32>().value(row);
            if text {
                // bytea's hex format: \x then two hex digits a byte.
                out.put_slice(b"\\x");
                for b in v {
                    out.put_slice(format!("{b:02x}").as_bytes());
                }
            } else {
                out.put_slice(v);
            }
        }
        DataType::Date32 => {
            let days = a.as_primitive::<Date32Type>().value(row);
            if text {
                out.put_slice(date_text(days).as_bytes());
            } else {
                out.put_i32(days.checked_sub(PG_EPOCH_DAYS).ok_or_else(|| out_of_range("date"))?);
            }
        }
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => a.as_primitive::<datafusion::arrow::datatypes::TimestampSecondType>().value(row),
                TimeUnit::Millisecond => a.as_primitive::<datafusion::arrow::datatypes::TimestampMillisecondType>().value(row),
                TimeUnit::Microsecond => a.as_primitive::<datafusion::arrow::datatypes::TimestampMicrosecondType>().value(row),
                TimeUnit::Nanosecond => a.as_primitive::<datafusion::arrow::datatypes::TimestampNanosecondType>().value(row),
            };
            let (per_second, digits) = match unit {
                TimeUnit::Second => (1, 0),
                TimeUnit::Millisecond => (1_000, 3),
                TimeUnit::Microsecond => (1_000_000, 6),
                TimeUnit::Nanosecond => (1_000_000_000, 9),
            };
            if text {
                out.put_slice(timestamp_text(v, per_second, digits, tz.is_some()).as_bytes());
            } else {
                let micros = match unit {
                    TimeUnit::Second => v.checked_mul(1_000_000),
                    TimeUnit::Millisecond => v.checked_mul(1_000),
                    TimeUnit::Microsecond => Some(v),
                    TimeUnit::Nanosecond => Some(v.div_euclid(1_000)),
                };
                out.put_i64(micros.and_then(|m| m.checked_sub(PG_EPOCH_MICROS)).ok_or_else(|| out_of_range("timestamp"))?);
            }
        }
        other => return Err(TesseraError::Internal(format!("no wire encoding for {other}"))),
    }
    Ok(())
}

fn out_of_range(what: &str) -> TesseraError {
    TesseraError::Execution(format!("{what} out of range for PostgreSQL's binary format"))
}

fn int(v: i64, width: usize, text: bool, out: &mut BytesMut) {
    if text {
        out.put_slice(v.to_string().as_bytes());
    } else {
        match width {
            2 => out.put_i16(v as i16),
            4 => out.put_i32(v as i32),
            _ => out.put_i64(v),
        }
    }
}

/// A float as PostgreSQL writes it (`extra_float_digits` ≥ 1, its default since 12):
/// the shortest digits that read back to the same value, in exponent form (`1e+20`,
/// `-2.5e-300`) when the decimal exponent is below -4 or at least the type's precision
/// (15 digits for float8, 6 for float4), and NaN/Infinity by name.
fn float_text(v: f64, shown: String, precision: i32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // The decimal exponent as the shortest digits have it (log10 rounds up just below
    // a power of ten).
    let exponent: i32 = format!("{v:e}").rsplit_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0);
    if (-4..precision).contains(&exponent) {
        return shown;
    }
    // `shown` is Rust's shortest round-trip form; respell it with an exponent.
    let digits: String = shown.chars().filter(char::is_ascii_digit).collect::<String>();
    let digits = digits.trim_start_matches('0').trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let (first, rest) = digits.split_at(1);
    let sign = if v < 0.0 { "-" } else { "" };
    let mantissa = if rest.is_empty() { first.to_string() } else { format!("{first}.{rest}") };
    let exp_sign = if exponent < 0 { '-' } else { '+' };
    format!("{sign}{mantissa}e{exp_sign}{:02}", exponent.unsigned_abs())
}

/// `v` × 10^-scale as decimal digits: "-12.50" for (-1250, 2).
pub fn decimal_text(v: i128, scale: u16) -> String {
    let digits = v.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let sign = if v < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = if digits.len() <= scale { format!("{}{digits}", "0".repeat(scale + 1 - digits.len())) } else { digits };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

/// A decimal as numeric: text, or the binary form (base-10000 digits, the weight of
/// the first, sign, display scale).
fn numeric(v: i128, scale: u16, text: bool, out: &mut BytesMut) {
    if text {
        out.put_slice(decimal_text(v, scale).as_bytes());
        return;
    }
    let shown = decimal_text(v.unsigned_abs() as i128, scale);
    let (int, frac) = shown.split_once('.').unwrap_or((&shown, ""));
    let int = int.trim_start_matches('0');
    // Groups of four digits aligned at the decimal point.
    let int_groups = int.len().div_ceil(4);
    let int_padded = format!("{}{int}", "0".repeat(int_groups * 4 - int.len()));
    let frac_groups = frac.len().div_ceil(4);
    let frac_padded = format!("{frac}{}", "0".repeat(frac_groups * 4 - frac.len()));
    let all = format!("{int_padded}{frac_padded}");
    let mut groups: Vec<i16> = all.as_bytes().chunks(4).map(|c| c.iter().fold(0i16, |acc, d| acc * 10 + i16::from(d - b'0'))).collect();
    let mut weight = int_groups as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.put_i16(groups.len() as i16);
    out.put_i16(weight);
    out.put_u16(if v < 0 && !groups.is_empty() { 0x4000 } else { 0 });
    out.put_u16(scale);
    for g in groups {
        out.put_i16(g);
    }
}

/// A date as PostgreSQL writes it: `2024-02-29`, `0044-03-15 BC`.
fn date_text(days: i32) -> String {
    use chrono::Datelike;
    let Some(date) = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).and_then(|e| e.checked_add_signed(chrono::Duration::days(i64::from(days)))) else {
        return format!("{days} days after 1970-01-01");
    };
    let year = date.year();
    if year <= 0 {
        format!("{:04}-{:02}-{:02} BC", 1 - year, date.month(), date.day())
    } else {
        format!("{year:04}-{:02}-{:02}", date.month(), date.day())
    }
}

/// A timestamp as PostgreSQL writes it: `2024-02-29 13:05:00`, the fraction only
/// where it is not zero (trailing zeros dropped), `+00` for one with a time zone (UTC).
fn timestamp_text(v: i64, per_second: i64, digits: usize, utc: bool) -> String {
    let seconds = v.div_euclid(per_second);
    let fraction = v.rem_euclid(per_second);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let mut s = match i32::try_from(days) {
        Ok(d) => date_text(d),
        Err(_) => return format!("{v} ({per_second} a second) after 1970-01-01"),
    };
    let bc = s.ends_with(" BC");
    if bc {
        s.truncate(s.len() - 3);
    }
    s.push_str(&format!(" {:02}:{:02}:{:02}", of_day / 3600, of_day / 60 % 60, of_day % 60));
    if fraction != 0 {
        let f = format!("{fraction:0digits$}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    if utc {
        s.push_str("+00");
    }
    if bc {
        s.push_str(" BC");
    }
    s
}

/// The PostgreSQL type a parameter is declared with, for a placeholder of `dt` (None:
/// untyped, sent as text).
pub fn parameter_type(dt: Option<&DataType>) -> Type {
    dt.map_or(Type::TEXT, |dt| pg_type(dt).0)
}

/// Reads a parameter value: `bytes` in the client's format for `ty`, converted to
/// `target` (the placeholder's type in the statement) where that is known.
pub fn read_parameter(bytes: Option<&[u8]>, ty: &Type, binary: bool, target: Option<&DataType>) -> Result<ScalarValue> {
    let read_as = target.cloned().unwrap_or_else(|| arrow_type(ty));
    let Some(bytes) = bytes else {
        return ScalarValue::try_from(&read_as).map_err(|e| TesseraError::Plan(e.to_string()));
    };
    let bad = |what: &str| TesseraError::Plan(format!("parameter of type {}: {what}", ty.name()));
    let value = if !binary {
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8"))?;
        let text = match (*ty == Type::BYTEA, &read_as) {
            (true, DataType::Binary) => {
                return Ok(ScalarValue::Binary(Some(hex_bytea(text).ok_or_else(|| bad("bytea must be \\x followed by hex digits"))?)));
            }
            _ => text,
        };
        let text = if matches!(read_as, DataType::Boolean) { bool_text(text).ok_or_else(|| bad("not a boolean"))? } else { text };
        // Spaces around a number or date are PostgreSQL's to ignore; a string keeps them.
        let text = if matches!(read_as, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) { text } else { text.trim() };
        ScalarValue::Utf8(Some(text.to_string())).cast_to_with_options(&read_as, &STRICT).map_err(|e| bad(&e.to_string()))?
    } else {
        let fixed = |n: usize| -> Result<&[u8]> { if bytes.len() == n { Ok(bytes) } else { Err(bad(&format!("{} bytes, expected {n}", bytes.len()))) } };
        match *ty {
            Type::BOOL => ScalarValue::Boolean(Some(fixed(1)?[0] != 0)),
            Type::INT2 => ScalarValue::Int16(Some(i16::from_be_bytes(fixed(2)?.try_into().map_err(|_| bad("short"))?))),
            Type::INT4 => ScalarValue::Int32(Some(i32::from_be_bytes(fixed(4)?.try_into().map_err(|_| bad("short"))?))),
            Type::INT8 => ScalarValue::Int64(Some(i64::from_be_bytes(fixed(8)?.try_into().map_err(|_| bad("short"))?))),
            Type::FLOAT4 => ScalarValue::Float32(Some(f32::from_be_bytes(fixed(4)?.try_into().map_err(|_| bad("short"))?))),
            Type::FLOAT8 => ScalarValue::Float64(Some(f64::from_be_bytes(fixed(8)?.try_into().map_err(|_| bad("short"))?))),
            Type::DATE => {
                let d = i32::from_be_bytes(fixed(4)?.try_into().map_err(|_| bad("short"))?);
                ScalarValue::Date32(Some(d.checked_add(PG_EPOCH_DAYS).ok_or_else(|| bad("out of range"))?))
            }
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                let m = i64::from_be_bytes(fixed(8)?.try_into().map_err(|_| bad("short"))?);
                let m = m.checked_add(PG_EPOCH_MICROS).ok_or_else(|| bad("out of range"))?;
                let tz = (*ty == Type::TIMESTAMPTZ).then(|| Arc::from("+00:00"));
                ScalarValue::TimestampMicrosecond(Some(m), tz)
            }
            Type::NUMERIC => {
                let (v, scale) = read_numeric(bytes).ok_or_else(|| bad("malformed or beyond 38 digits"))?;
                ScalarValue::Decimal128(Some(v), 38, scale as i8)
            }
            Type::BYTEA => ScalarValue::Binary(Some(bytes.to_vec())),
            _ => ScalarValue::Utf8(Some(std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8"))?.to_string())),
        }
    };
    if value.data_type() == read_as {
        return Ok(value);
    }
    value.cast_to_with_options(&read_as, &STRICT).map_err(|e| bad(&format!("cannot be read as {read_as}: {e}")))
}

/// PostgreSQL's spellings of a boolean in text.
fn bool_text(text: &str) -> Option<&'static str> {
    match text.trim().to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "on" | "1" => Some("true"),
        "f" | "false" | "n" | "no" | "off" | "0" => Some("false"),
        _ => None,
    }
}

fn hex_bytea(text: &str) -> Option<Vec<u8>> {
    let hex = text.strip_prefix("\\x")?;
    if hex.len() % 2 != 0 {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

/// numeric's binary form as an i128 and its display scale (None: NaN, infinities,
/// malformed, or more than 38 digits).
fn read_numeric(bytes: &[u8]) -> Option<(i128, u16)> {
    let word = |i: usize| bytes.get(i * 2..i * 2 + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let ndigits = usize::from(word(0)?);
    let weight = word(1)? as i16;
    let sign = word(2)?;
    let scale = word(3)?;
    if bytes.len() != 8 + 2 * ndigits || (sign != 0 && sign != 0x4000) || scale > 38 {
        return None;
    }
    // The digits as decimal text: group i is worth 10000^(weight - i).
    let mut digits = String::with_capacity(4 * ndigits + 8);
    for i in 0..ndigits {
        let d = word(4 + i)?;
        if d >= 10_000 {
            return None;
        }
        digits.push_str(&format!("{d:04}"));
    }
    // Integer × 10^-scale: shift the point by 4 × (weight + 1) digits, then `scale` more.
    let point = 4 * (i64::from(weight) + 1);
    let wanted = point + i64::from(scale);
    let len = digits.len() as i64;
    if wanted < len {
        // Digits beyond the display scale must be zero.
        if digits[wanted.max(0) as usize..].bytes().any(|b| b != b'0') {
            return None;
        }
        digits.truncate(wanted.max(0) as usize);
    } else {
        digits.push_str(&"0".repeat((wanted - len) as usize));
    }
    let digits = digits.trim_start_matches('0');
    if digits.len() > 38 {
        return None;
    }
    let v: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    Some((if sign == 0x4000 { -v } else { v }, scale))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary_numeric(v: i128, scale: u16) -> Vec<u8> {
        let mut out = BytesMut::new();
        numeric(v, scale, false, &mut out);
        out.to_vec()
    }

    #[test]
    fn decimals_as_text() {
        assert_eq!(decimal_text(12345, 2), "123.45");
        assert_eq!(decimal_text(-5, 2), "-0.05");
        assert_eq!(decimal_text(0, 3), "0.000");
        assert_eq!(decimal_text(-7, 0), "-7");
        assert_eq!(decimal_text(i128::MAX, 0), i128::MAX.to_string());
    }

    #[test]
    fn numeric_binary_round_trips() {
        // PostgreSQL's own bytes for 12345.678::numeric(10,3): 3 digits [1, 2345, 6780], weight 1.
        assert_eq!(binary_numeric(12_345_678, 3), vec![0, 3, 0, 1, 0, 0, 0, 3, 0, 1, 0x09, 0x29, 0x1a, 0x7c]);
        for (v, s) in [(0i128, 0u16), (0, 4), (1, 0), (-1, 0), (10_000, 0), (-5, 2), (123_456_789, 9), (9_999_999_999_999_999_999_999_999_999_999_999_999, 2), (-42, 30)] {
            assert_eq!(read_numeric(&binary_numeric(v, s)), Some((v, s)), "{v} scale {s}");
        }
    }

    #[test]
    fn floats_as_postgresql_writes_them() {
        let f8 = |v: f64| float_text(v, v.to_string(), 15);
        assert_eq!(f8(0.1), "0.1");
        assert_eq!(f8(-2.5e-300), "-2.5e-300");
        assert_eq!(f8(1e20), "1e+20");
        assert_eq!(f8(123456789012345.0), "123456789012345");
        assert_eq!(f8(1234567890123456.0), "1.234567890123456e+15");
        assert_eq!(f8(0.0001), "0.0001");
        assert_eq!(f8(0.00001234), "1.234e-05");
        // Just below a power of ten, where log10 rounds up: the exponent of the digits.
        for (v, exponent) in [(f64::from_bits(1e23f64.to_bits() - 1), "e+22"), (f64::from_bits(1e-5f64.to_bits() - 1), "e-06")] {
            let t = f8(v);
            assert_eq!(t.parse::<f64>().ok(), Some(v), "{t}");
            assert!(t.ends_with(exponent), "{t}");
        }
        assert_eq!(f8(f64::NEG_INFINITY), "-Infinity");
        assert_eq!(f8(f64::MAX).parse::<f64>().ok(), Some(f64::MAX));
        assert_eq!(f8(f64::MIN_POSITIVE).parse::<f64>().ok(), Some(f64::MIN_POSITIVE));
        assert_eq!(float_text(f64::from(1e7f32), 1e7f32.to_string(), 6), "1e+07");
    }

    #[test]
    fn dates_and_timestamps_as_text() {
        assert_eq!(date_text(0), "1970-01-01");
        assert_eq!(date_text(19_782), "2024-02-29");
        assert_eq!(date_text(-719_528), "0001-01-01 BC");
        assert_eq!(date_text(2_932_896), "9999-12-31");
        assert_eq!(timestamp_text(1_500_000, 1_000_000, 6, false), "1970-01-01 00:00:01.5");
        assert_eq!(timestamp_text(-1, 1_000_000_000, 9, true), "1969-12-31 23:59:59.999999999+00");
        assert_eq!(timestamp_text(86_400, 1, 0, false), "1970-01-02 00:00:00");
    }

    #[test]
    fn parameters_read_in_both_formats() {
        let dec = Some(DataType::Decimal128(12, 2));
        let bytes = binary_numeric(-1250, 2);
        assert_eq!(read_parameter(Some(&bytes), &Type::NUMERIC, true, dec.as_ref()).ok(), Some(ScalarValue::Decimal128(Some(-1250), 12, 2)));
        assert_eq!(read_parameter(Some(b"-12.5"), &Type::NUMERIC, false, dec.as_ref()).ok(), Some(ScalarValue::Decimal128(Some(-1250), 12, 2)));
        assert_eq!(read_parameter(Some(&7i32.to_be_bytes()), &Type::INT4, true, Some(&DataType::Int64)).ok(), Some(ScalarValue::Int64(Some(7))));
        assert_eq!(read_parameter(Some(b"t"), &Type::BOOL, false, None).ok(), Some(ScalarValue::Boolean(Some(true))));
        assert_eq!(read_parameter(Some(b" x "), &Type::TEXT, false, Some(&DataType::Utf8)).ok(), Some(ScalarValue::Utf8(Some(" x ".into()))));
        assert_eq!(read_parameter(Some(b" 42 "), &Type::INT8, false, Some(&DataType::Int64)).ok(), Some(ScalarValue::Int64(Some(42))));
        assert_eq!(read_parameter(None, &Type::INT8, true, None).ok(), Some(ScalarValue::Int64(None)));
        assert_eq!(read_parameter(Some(&0i32.to_be_bytes()), &Type::DATE, true, None).ok(), Some(ScalarValue::Date32(Some(PG_EPOCH_DAYS))));
        assert!(read_parameter(Some(b"abc"), &Type::INT4, false, Some(&DataType::Int32)).is_err());
        assert!(read_parameter(Some(&[0, 0]), &Type::INT4, true, None).is_err());
        // 300 does not fit a smallint column: an error, not a wrap.
        assert!(read_parameter(Some(&300i32.to_be_bytes()), &Type::INT4, true, Some(&DataType::Int8)).is_err());
    }
}
