//! IR types as arrow types and back: the one mapping the planner and the backends share.

use arrow::datatypes::DataType;

use crate::types::Type;

/// The arrow type backends produce for an IR type.
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

/// The IR type of an arrow type (dictionaries and string views count as their values),
/// or None for types the IR does not have yet.
pub fn ir_type(dt: &DataType) -> Option<Type> {
    Some(match dt {
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
        _ => return None,
    })
}
