//! Conversions between arrow/DataFusion types and values and the IR's.

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use tessera_ir::{Scalar, Type};

/// The IR type of an arrow type, or why there is none.
pub fn ir_type(dt: &DataType) -> Result<Type, String> {
    tessera_ir::ir_type(dt).ok_or_else(|| format!("type {dt} is not in the IR yet"))
}

pub use tessera_ir::arrow_type;

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
