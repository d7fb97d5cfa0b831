//! Conversion of DataFusion's errors into [`TesseraError`], keeping who is at fault.

use datafusion::arrow::error::ArrowError;
use datafusion::error::DataFusionError;
use tessera_common::TesseraError;

/// Classifies a DataFusion error by its root cause and keeps its message.
pub fn from_df(e: DataFusionError) -> TesseraError {
    match e {
        DataFusionError::Context(what, inner) => from_df(*inner).context(what),
        DataFusionError::Diagnostic(_, inner) => from_df(*inner),
        DataFusionError::Shared(shared) => match std::sync::Arc::try_unwrap(shared) {
            Ok(inner) => from_df(inner),
            Err(shared) => TesseraError::Execution(shared.strip_backtrace()),
        },
        DataFusionError::Collection(mut errors) if !errors.is_empty() => from_df(errors.remove(0)),
        DataFusionError::External(inner) => from_boxed(inner),
        DataFusionError::ArrowError(inner, _) => from_arrow(*inner),
        DataFusionError::Plan(m) | DataFusionError::Configuration(m) => TesseraError::Plan(m),
        DataFusionError::SQL(e, _) => TesseraError::Plan(format!("SQL error: {e}")),
        DataFusionError::SchemaError(e, _) => TesseraError::Plan(e.to_string()),
        DataFusionError::NotImplemented(m) => TesseraError::NotImplemented(m),
        DataFusionError::Internal(m) => TesseraError::Internal(m),
        DataFusionError::Execution(m) => TesseraError::Execution(m),
        DataFusionError::ResourcesExhausted(m) => TesseraError::ResourcesExhausted(m),
        DataFusionError::IoError(e) => TesseraError::io("executing the query", e),
        other => TesseraError::Execution(other.strip_backtrace()),
    }
}

fn from_arrow(e: ArrowError) -> TesseraError {
    match e {
        ArrowError::ExternalError(inner) => from_boxed(inner),
        ArrowError::DivideByZero => TesseraError::Execution("division by zero".into()),
        ArrowError::ArithmeticOverflow(m) => TesseraError::Execution(format!("arithmetic overflow: {m}")),
        ArrowError::NotYetImplemented(m) => TesseraError::NotImplemented(m),
        ArrowError::MemoryError(m) => TesseraError::ResourcesExhausted(m),
        other => TesseraError::Execution(other.to_string()),
    }
}

fn from_boxed(inner: Box<dyn std::error::Error + Send + Sync>) -> TesseraError {
    let inner = match inner.downcast::<TesseraError>() {
        Ok(t) => return *t,
        Err(other) => other,
    };
    let inner = match inner.downcast::<DataFusionError>() {
        Ok(d) => return from_df(*d),
        Err(other) => other,
    };
    match inner.downcast::<ArrowError>() {
        Ok(a) => from_arrow(*a),
        Err(other) => TesseraError::Execution(other.to_string()),
    }
}

/// Wraps a Tessera error so it can travel through DataFusion and come back intact.
pub fn to_df(e: TesseraError) -> DataFusionError {
    DataFusionError::External(Box::new(e))
}
