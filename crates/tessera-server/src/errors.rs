//! Tessera's errors as PostgreSQL error responses, each with the SQLSTATE a client
//! branches on (`psql` shows it with `\set VERBOSITY verbose`, drivers expose it as
//! the error's code).
//!
//! The class comes from the error's kind (a planning error is class 42, a resource
//! limit class 53, …); within a class a few codes clients commonly test for are told
//! apart by the message (undefined table or column, division by zero, overflow).

use pgwire::error::{ErrorInfo, PgWireError};
use tessera_common::TesseraError;

/// `query_canceled`: a cancel request or `statement_timeout`.
pub const QUERY_CANCELED: &str = "57014";
/// `too_many_connections`.
pub const TOO_MANY_CONNECTIONS: &str = "53300";
/// `program_limit_exceeded`: a result larger than the server's limit.
pub const PROGRAM_LIMIT_EXCEEDED: &str = "54000";
/// `feature_not_supported`.
pub const FEATURE_NOT_SUPPORTED: &str = "0A000";
/// `in_failed_sql_transaction`.
pub const IN_FAILED_TRANSACTION: &str = "25P02";
/// `invalid_parameter_value`.
pub const INVALID_PARAMETER_VALUE: &str = "22023";

/// An ERROR response with `code` and `message`.
pub fn error(code: &str, message: impl Into<String>) -> ErrorInfo {
    ErrorInfo::new("ERROR".to_owned(), code.to_owned(), message.into())
}

/// The same as a [`PgWireError`] (for handler results).
pub fn user_error(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(error(code, message)))
}

/// A FATAL error: the server closes the connection after sending it. Every refusal
/// during startup must be one — pgwire leaves a connection whose startup failed with an
/// ERROR open and ready for queries.
pub fn fatal(code: &str, message: impl Into<String>) -> PgWireError {
    PgWireError::UserError(Box::new(ErrorInfo::new("FATAL".to_owned(), code.to_owned(), message.into())))
}

/// The SQLSTATE of a Tessera error.
pub fn sqlstate(e: &TesseraError) -> &'static str {
    let message = e.to_string().to_ascii_lowercase();
    let has = |s: &str| message.contains(s);
    match e {
        TesseraError::Plan(_) | TesseraError::External(_) if has("sql error: parsererror") || has("parser error") => "42601",
        TesseraError::Plan(_) | TesseraError::External(_) if has("table") && (has("not found") || has("doesn't exist") || has("does not exist")) => "42P01",
        TesseraError::Plan(_) | TesseraError::External(_) if has("already exists") => "42P07",
        TesseraError::Plan(_) | TesseraError::External(_) if has("no field named") || has("column") && has("not found") => "42703",
        _ if has("divide by zero") || has("division by zero") => "22012",
        _ if has("overflow") || has("out of range") => "22003",
        TesseraError::Plan(_) => "42000",
        TesseraError::NotImplemented(_) => FEATURE_NOT_SUPPORTED,
        TesseraError::ResourcesExhausted(_) if has("memory") => "53200",
        TesseraError::ResourcesExhausted(_) => "53000",
        TesseraError::Execution(_) if has("cast") || has("parse") || has("invalid") => "22P02",
        TesseraError::Execution(_) => "22000",
        TesseraError::Io { .. } => "58030",
        TesseraError::Internal(_) | TesseraError::RetryOnCpu(_) | TesseraError::StalePlan(_) | TesseraError::External(_) => "XX000",
    }
}

/// A Tessera error as an error response.
pub fn from_tessera(e: &TesseraError) -> ErrorInfo {
    error(sqlstate(e), e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_by_kind_and_message() {
        assert_eq!(sqlstate(&TesseraError::Plan("table 'tessera.public.nope' not found".into())), "42P01");
        assert_eq!(sqlstate(&TesseraError::Plan("Schema error: No field named x.".into())), "42703");
        assert_eq!(sqlstate(&TesseraError::Plan("SQL error: ParserError(\"Expected: an SQL statement\")".into())), "42601");
        assert_eq!(sqlstate(&TesseraError::Execution("Arrow error: Divide by zero error".into())), "22012");
        assert_eq!(sqlstate(&TesseraError::Execution("integer overflow in SUM".into())), "22003");
        assert_eq!(sqlstate(&TesseraError::NotImplemented("window frames".into())), "0A000");
        assert_eq!(sqlstate(&TesseraError::ResourcesExhausted("GPU memory limit".into())), "53200");
        assert_eq!(sqlstate(&TesseraError::Internal("bug".into())), "XX000");
    }
}
