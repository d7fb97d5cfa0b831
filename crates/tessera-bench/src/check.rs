//! Checking a query's answer: row count and every value, in order.
//!
//! Values compare as text after trimming (the published TPC-H answers are space-padded
//! and trimmed, so leading or trailing spaces in the data cannot count). When both sides
//! are numbers they compare within one unit in the last decimal place of the side that
//! shows fewer places, at most [`NUMERIC_TOLERANCE`], plus a relative 1e-9 for
//! floating-point sums: the published answers round money, averages and ratios to two
//! decimals (TPC-H spec 2.1.3.5), so an exact engine can differ from them by up to half a
//! cent, while against an engine printing all its digits (DuckDB at other scale factors)
//! a cent would hide a tenth of a ratio such as q08's market share (0.0348 for 0.0344).

use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use tessera_common::{Result, TesseraError};

/// The largest absolute tolerance for numbers: one cent (published answers are rounded
/// to cents).
pub const NUMERIC_TOLERANCE: f64 = 0.01;

/// Decimal places a number's text shows (0 for an integer); None in exponent form.
fn decimal_places(s: &str) -> Option<i32> {
    if s.contains(['e', 'E']) {
        return None;
    }
    Some(s.split_once('.').map_or(0, |(_, f)| f.len() as i32))
}

/// A result as rows of text cells (NULL as the empty string).
pub type Rows = Vec<Vec<String>>;

/// Renders batches as rows of text.
pub fn to_rows(batches: &[RecordBatch]) -> Result<Rows> {
    let options = FormatOptions::default();
    let mut rows = Vec::new();
    for b in batches {
        let formatters = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| TesseraError::Internal(format!("formatting a result: {e}")))?;
        for r in 0..b.num_rows() {
            rows.push(formatters.iter().map(|f| f.value(r).to_string()).collect());
        }
    }
    Ok(rows)
}

/// Parses a CSV answer (header line first) into rows of text.
pub fn parse_csv(text: &str) -> Result<Rows> {
    let header = text.lines().next().unwrap_or("");
    let columns = arrow::csv::reader::Format::default()
        .with_header(true)
        .infer_schema(header.as_bytes(), Some(1))
        .map_err(|e| TesseraError::Internal(format!("answer header: {e}")))?
        .0
        .fields()
        .len();
    let schema = Arc::new(Schema::new(
        (0..columns).map(|i| Field::new(format!("c{i}"), DataType::Utf8, true)).collect::<Vec<_>>(),
    ));
    let reader = arrow::csv::ReaderBuilder::new(schema)
        .with_header(true)
        .build(text.as_bytes())
        .map_err(|e| TesseraError::Internal(format!("answer: {e}")))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| TesseraError::Internal(format!("answer: {e}")))?;
        for r in 0..batch.num_rows() {
            rows.push(
                batch
                    .columns()
                    .iter()
                    .map(|c| {
                        let s = c.as_string::<i32>();
                        if s.is_null(r) { String::new() } else { s.value(r).to_string() }
                    })
                    .collect(),
            );
        }
    }
    Ok(rows)
}

/// Whether two cells agree (see the module docs).
pub fn cells_match(actual: &str, expected: &str) -> bool {
    let (a, e) = (actual.trim(), expected.trim());
    if a == e {
        return true;
    }
    match (a.parse::<f64>(), e.parse::<f64>()) {
        (Ok(x), Ok(y)) => {
            // One unit in the last place the less precise side shows (a number in
            // exponent form counts as showing all its digits).
            let places = match (decimal_places(a), decimal_places(e)) {
                (Some(p), Some(q)) => Some(p.min(q)),
                (p, q) => p.or(q),
            };
            let unit = places.map_or(0.0, |p| 10f64.powi(-p).min(NUMERIC_TOLERANCE));
            (x - y).abs() <= unit + 1e-9 * y.abs()
        }
        _ => false,
    }
}

/// Compares `actual` with `expected` in order; `Err` says where they first differ.
pub fn compare(actual: &Rows, expected: &Rows) -> std::result::Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!("{} rows, expected {}", actual.len(), expected.len()));
    }
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        if a.len() != e.len() {
            return Err(format!("row {}: {} columns, expected {}", i + 1, a.len(), e.len()));
        }
        for (j, (x, y)) in a.iter().zip(e).enumerate() {
            if !cells_match(x, y) {
                return Err(format!("row {}, column {}: got '{x}', expected '{y}'", i + 1, j + 1));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_match_within_a_cent_and_text_exactly() {
        assert!(cells_match("42698382.855", "42698382.85"));
        assert!(cells_match("0.05", "0.0500"));
        assert!(!cells_match("100.02", "100.00"));
        // Against a rounded answer a cent; against all the digits, the last place shown.
        assert!(cells_match("0.03476320", "0.03"));
        assert!(!cells_match("0.03476320", "0.034435890406654804"));
        assert!(cells_match("0.03443589", "0.034435890406654804"));
        assert!(cells_match("25.522006", "25.522005853257337"));
        assert!(!cells_match("25.522106", "25.522005853257337"));
        // Floating-point sums: a relative 1e-9.
        assert!(cells_match("1.2345678901234e9", "1234567890.1234567"));
        assert!(!cells_match("1479", "1478"));
        assert!(cells_match(" MOROCCO ", "MOROCCO"));
        assert!(!cells_match("MOROCCO", "MORROCO"));
    }

    #[test]
    fn csv_answers_parse_with_quotes() {
        let rows = parse_csv("a,b\n1,\"x, y\"\n2,z\n").unwrap();
        assert_eq!(rows, vec![vec!["1".to_string(), "x, y".into()], vec!["2".into(), "z".into()]]);
        assert!(compare(&rows, &rows).is_ok());
        let short = vec![rows[0].clone()];
        assert_eq!(compare(&short, &rows).unwrap_err(), "1 rows, expected 2");
    }
}
