//! Conversions between arrow/DataFusion types and values and the IR's.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use tessera_ir::{Scalar, Type};

/// The IR type of an arrow type, or why there is none.
pub fn ir_type(dt: &DataType) -> Result<Type, String> {
    Ok(match dt {
        DataType::Null => Type::Null,
        DataType::Boolean => Type::Boolean,
        DataType::Int8 => Type::Int8,
        DataType::Int16 => Type::Int16,
        DataType::Int32 => Type::Int32,
        DataType::Int64 => Type::Int64,
        DataType::UInt8 => Type::UInt8,
        DataType::UInt16 => Type::UInt16,
        DataType::UInt32 => Type::UInt32,
        DataType::UInt64 => Type::UInt64,
        DataType::Float32 => Type::Float32,
        DataType::Float64 => Type::Float64,
        DataType::Decimal128(p, s) => Type::Decimal { precision: *p, scale: *s },
        DataType::Date32 => Type::Date32,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Type::Utf8,
        DataType::Dictionary(_, v) => return ir_type(v),
        other => return Err(format!("type {other} is not in the IR yet")),
    })
}

/// The arrow type the backends produce for an IR type.
pub fn arrow_type(ty: Type) -> DataType {
    match ty {
        Type::Null => DataType::Null,
        Type::Boolean => DataType::Boolean,
        Type::Int8 => DataType::Int8,
        Type::Int16 => DataType::Int16,
        Type::Int32 => DataType::Int32,
        Type::Int64 => DataType::Int64,
        Type::UInt8 => DataType::UInt8,
        Type::UInt16 => DataType::UInt16,
        Type::UInt32 => DataType::UInt32,
        Type::UInt64 => DataType::UInt64,
        Type::Float32 => DataType::Float32,
        Type::Float64 => DataType::Float64,
        Type::Decimal { precision, scale } => DataType::Decimal128(precision, scale),
        Type::Date32 => DataType::Date32,
        Type::Utf8 => DataType::Utf8,
    }
}

/// The IR literal of a DataFusion scalar.
pub fn ir_scalar(v: &ScalarValue) -> Result<(Scalar, Type), String> {
    let ty = ir_type(&v.data_type())?;
    if v.is_null() {
        return Ok((Scalar::Null, ty));
    }
    let s = match v {
        ScalarValue::Boolean(Some(b)) => Scalar::Boolean(*b),
        ScalarValue::Int8(Some(x)) => Scalar::Int(*x as i64),
        ScalarValue::Int16(Some(x)) => Scalar::Int(*x as i64),
        ScalarValue::Int32(Some(x)) => Scalar::Int(*x as i64),
        ScalarValue::Int64(Some(x)) => Scalar::Int(*x),
        ScalarValue::UInt8(Some(x)) => Scalar::UInt(*x as u64),
        ScalarValue::UInt16(Some(x)) => Scalar::UInt(*x as u64),
        ScalarValue::UInt32(Some(x)) => Scalar::UInt(*x as u64),
        ScalarValue::UInt64(Some(x)) => Scalar::UInt(*x),
        ScalarValue::Float32(Some(x)) => Scalar::Float(*x as f64),
        ScalarValue::Float64(Some(x)) => Scalar::Float(*x),
        ScalarValue::Decimal128(Some(x), _, _) => Scalar::Decimal(*x),
        ScalarValue::Date32(Some(d)) => Scalar::Date32(*d),
        ScalarValue::Utf8(Some(s)) | ScalarValue::LargeUtf8(Some(s)) | ScalarValue::Utf8View(Some(s)) => {
            Scalar::Utf8(s.clone())
        }
        ScalarValue::Dictionary(_, inner) => return ir_scalar(inner),
        other => return Err(format!("literal {other} of type {} is not in the IR yet", other.data_type())),
    };
    Ok((s, ty))
}
