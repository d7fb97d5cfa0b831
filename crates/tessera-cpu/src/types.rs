//! IR literals as one-element arrow arrays (the type mapping itself is tessera-ir's).

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int8Array, Int16Array,
    Int32Array, Int64Array, StringArray, UInt8Array, UInt16Array, UInt32Array, UInt64Array, new_null_array,
};
use arrow::datatypes::DataType;
use tessera_common::{Result, TesseraError};
use tessera_ir::{Scalar, Type};

pub use tessera_ir::{arrow_type, ir_type};

/// A literal as a one-element array of its type.
pub fn scalar_array(value: &Scalar, ty: Type) -> Result<ArrayRef> {
    let bad = || TesseraError::Internal(format!("literal {value:?} does not have type {ty}"));
    if matches!(value, Scalar::Null) {
        return Ok(new_null_array(&arrow_type(ty), 1));
    }
    let int = || -> Result<i64> {
        match value {
            Scalar::Int(v) => Ok(*v),
            Scalar::UInt(v) => i64::try_from(*v).map_err(|_| bad()),
            _ => Err(bad()),
        }
    };
    Ok(match ty {
        Type::Null => new_null_array(&DataType::Null, 1),
        Type::Boolean => match value {
            Scalar::Boolean(b) => Arc::new(BooleanArray::from(vec![*b])),
            _ => return Err(bad()),
        },
        Type::Int8 => Arc::new(Int8Array::from(vec![i8::try_from(int()?).map_err(|_| bad())?])),
        Type::Int16 => Arc::new(Int16Array::from(vec![i16::try_from(int()?).map_err(|_| bad())?])),
        Type::Int32 => Arc::new(Int32Array::from(vec![i32::try_from(int()?).map_err(|_| bad())?])),
        Type::Int64 => Arc::new(Int64Array::from(vec![int()?])),
        Type::UInt8 | Type::UInt16 | Type::UInt32 | Type::UInt64 => {
            let v = match value {
                Scalar::UInt(v) => *v,
                Scalar::Int(v) => u64::try_from(*v).map_err(|_| bad())?,
                _ => return Err(bad()),
            };
            match ty {
                Type::UInt8 => Arc::new(UInt8Array::from(vec![u8::try_from(v).map_err(|_| bad())?])),
                Type::UInt16 => Arc::new(UInt16Array::from(vec![u16::try_from(v).map_err(|_| bad())?])),
                Type::UInt32 => Arc::new(UInt32Array::from(vec![u32::try_from(v).map_err(|_| bad())?])),
                _ => Arc::new(UInt64Array::from(vec![v])),
            }
        }
        Type::Float32 | Type::Float64 => {
            let v = match value {
                Scalar::Float(f) => *f,
                Scalar::Int(i) => *i as f64,
                _ => return Err(bad()),
            };
            if ty == Type::Float32 { Arc::new(Float32Array::from(vec![v as f32])) } else { Arc::new(Float64Array::from(vec![v])) }
        }
        Type::Decimal { precision, scale } => {
            let v = match value {
                Scalar::Decimal(d) => *d,
                Scalar::Int(i) => *i as i128,
                _ => return Err(bad()),
            };
            Arc::new(
                Decimal128Array::from(vec![v])
                    .with_precision_and_scale(precision, scale)
                    .map_err(|e| TesseraError::Internal(e.to_string()))?,
            )
        }
        Type::Date32 => match value {
            Scalar::Date32(d) => Arc::new(Date32Array::from(vec![*d])),
            _ => return Err(bad()),
        },
        Type::Utf8 => match value {
            Scalar::Utf8(s) => Arc::new(StringArray::from(vec![s.as_str()])),
            _ => return Err(bad()),
        },
    })
}
