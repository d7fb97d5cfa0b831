//! `COPY table [(columns)] FROM 'file' [[WITH] (options)]`: bulk loading from CSV or
//! Parquet into the store, all-or-nothing.
//!
//! DataFusion plans `COPY … TO` but not `COPY … FROM`, so Tessera parses it (with
//! DataFusion's re-export of sqlparser, PostgreSQL syntax) and runs it itself. CSV
//! fields are read as text and then cast to the column types, so that a value that does
//! not parse is reported with its file, line, column and text.
//!
//! Options: `FORMAT csv|parquet` (default: from the file extension), `HEADER [bool]`
//! (default true), `DELIMITER 'c'` (default ','), `QUOTE 'c'`, `ESCAPE 'c'`,
//! `NULL 'text'` (besides empty fields, which are always NULL).

use std::fs::File;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray, new_null_array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::sql::sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Statement,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use tessera_common::{Result, TesseraError, not_impl_err, plan_err};
use tessera_storage::TableWriter;

/// Rows read per CSV batch.
const CSV_BATCH_ROWS: usize = 64 * 1024;

/// File formats COPY FROM reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    /// Delimited text.
    Csv,
    /// Apache Parquet.
    Parquet,
}

/// A parsed `COPY … FROM` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyFrom {
    /// Target table (normalized: unquoted names lower-cased).
    pub table: String,
    /// Target columns in file order; empty means all columns in table order.
    pub columns: Vec<String>,
    /// Source file path.
    pub path: String,
    /// Source format.
    pub format: CopyFormat,
    /// Whether the CSV file starts with a header line.
    pub header: bool,
    /// CSV field delimiter.
    pub delimiter: u8,
    /// CSV quote character.
    pub quote: u8,
    /// CSV escape character.
    pub escape: Option<u8>,
    /// Text that stands for NULL in a CSV file (empty fields are NULL regardless).
    pub null: Option<String>,
}

/// Parses `sql` when it is a `COPY … FROM` statement; `Ok(None)` for anything else.
pub fn parse_copy_from(sql: &str) -> Result<Option<CopyFrom>> {
    let first = sql.split_whitespace().next().unwrap_or("");
    if !first.eq_ignore_ascii_case("copy") {
        return Ok(None);
    }
    let Ok(statement) = Parser::new(&PostgreSqlDialect {}).try_with_sql(sql).and_then(|mut p| p.parse_statement())
    else {
        return Ok(None); // not PostgreSQL COPY syntax: DataFusion's COPY … TO, or an error it reports
    };
    let Statement::Copy { source, to: false, target, options, legacy_options, .. } = statement else {
        return Ok(None);
    };
    let (table_name, columns) = match source {
        CopySource::Table { table_name, columns } => (table_name, columns),
        CopySource::Query(_) => return plan_err!("COPY (query) FROM is not valid; use COPY (query) TO 'file'"),
    };
    let path = match target {
        CopyTarget::File { filename } => filename,
        other => return not_impl_err!("COPY FROM {other} is not supported; name a file"),
    };
    let table = match table_name.0.as_slice() {
        [part] => match part.as_ident() {
            Some(ident) => normalize(ident),
            None => return plan_err!("COPY: invalid table name {table_name}"),
        },
        _ => return not_impl_err!("COPY FROM into a qualified table name ({table_name}) is not supported"),
    };
    let lower = path.to_ascii_lowercase();
    let mut copy = CopyFrom {
        table,
        columns: columns.iter().map(normalize).collect(),
        format: if lower.ends_with(".parquet") || lower.ends_with(".pq") { CopyFormat::Parquet } else { CopyFormat::Csv },
        path,
        header: true,
        delimiter: b',',
        quote: b'"',
        escape: None,
        null: None,
    };
    for option in options {
        match option {
            CopyOption::Format(f) => {
                copy.format = match f.value.to_ascii_lowercase().as_str() {
                    "csv" => CopyFormat::Csv,
                    "parquet" => CopyFormat::Parquet,
                    other => return not_impl_err!("COPY FROM format '{other}' (supported: csv, parquet)"),
                }
            }
            CopyOption::Header(h) => copy.header = h,
            CopyOption::Delimiter(c) => copy.delimiter = ascii(c, "DELIMITER")?,
            CopyOption::Quote(c) => copy.quote = ascii(c, "QUOTE")?,
            CopyOption::Escape(c) => copy.escape = Some(ascii(c, "ESCAPE")?),
            CopyOption::Null(s) => copy.null = Some(s),
            other => return not_impl_err!("COPY FROM option {other} is not supported"),
        }
    }
    for option in legacy_options {
        match option {
            CopyLegacyOption::Delimiter(c) => copy.delimiter = ascii(c, "DELIMITER")?,
            CopyLegacyOption::Null(s) => copy.null = Some(s),
            CopyLegacyOption::Csv(csv) => {
                copy.format = CopyFormat::Csv;
                for o in csv {
                    match o {
                        CopyLegacyCsvOption::Header => copy.header = true,
                        CopyLegacyCsvOption::Quote(c) => copy.quote = ascii(c, "QUOTE")?,
                        CopyLegacyCsvOption::Escape(c) => copy.escape = Some(ascii(c, "ESCAPE")?),
                        other => return not_impl_err!("COPY FROM option {other} is not supported"),
                    }
                }
            }
            other => return not_impl_err!("COPY FROM option {other} is not supported"),
        }
    }
    Ok(Some(copy))
}

fn normalize(ident: &datafusion::sql::sqlparser::ast::Ident) -> String {
    if ident.quote_style.is_some() { ident.value.clone() } else { ident.value.to_lowercase() }
}

fn ascii(c: char, what: &str) -> Result<u8> {
    if c.is_ascii() {
        Ok(c as u8)
    } else {
        plan_err!("COPY: {what} must be a single ASCII character, got '{c}'")
    }
}

impl CopyFrom {
    /// Reads the file and writes its rows through `writer`; returns the rows read.
    /// Errors name the file (and for CSV the line and column).
    pub fn load(&self, writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        // Batches are built nullable; the store's writer reports NOT NULL violations.
        let target = nullable(writer.schema());
        let positions = self.column_positions(&target)?;
        let file = File::open(&self.path)
            .map_err(|e| TesseraError::Execution(format!("COPY: cannot open '{}': {e}", self.path)))?;
        let mut rows = 0u64;
        match self.format {
            CopyFormat::Csv => {
                let text_schema = Arc::new(Schema::new(
                    positions.iter().map(|&p| Field::new(target.field(p).name(), DataType::Utf8, true)).collect::<Vec<_>>(),
                ));
                let mut builder = datafusion::arrow::csv::ReaderBuilder::new(text_schema)
                    .with_header(self.header)
                    .with_delimiter(self.delimiter)
                    .with_quote(self.quote)
                    .with_batch_size(CSV_BATCH_ROWS);
                if let Some(e) = self.escape {
                    builder = builder.with_escape(e);
                }
                let reader = builder.build(file).map_err(|e| self.error(e))?;
                for batch in reader {
                    let batch = batch.map_err(|e| self.error(e))?;
                    let first_line = rows + 1 + u64::from(self.header);
                    let typed = self.cast_csv_batch(&batch, &target, &positions, first_line)?;
                    writer.write(&typed)?;
                    rows += batch.num_rows() as u64;
                }
            }
            CopyFormat::Parquet => {
                let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
                    .and_then(|b| b.build())
                    .map_err(|e| self.error(e))?;
                for batch in reader {
                    let batch = batch.map_err(|e| self.error(e))?;
                    if batch.num_columns() != positions.len() {
                        return plan_err!(
                            "COPY: '{}' has {} columns but {} were expected",
                            self.path,
                            batch.num_columns(),
                            positions.len()
                        );
                    }
                    let mut columns: Vec<ArrayRef> =
                        target.fields().iter().map(|f| new_null_array(f.data_type(), batch.num_rows())).collect();
                    for (i, &p) in positions.iter().enumerate() {
                        let field = target.field(p);
                        columns[p] = cast_with_options(batch.column(i), field.data_type(), &STRICT).map_err(|e| {
                            TesseraError::Execution(format!(
                                "COPY: '{}', column '{}': cannot convert {} to {}: {e}",
                                self.path,
                                field.name(),
                                batch.column(i).data_type(),
                                field.data_type()
                            ))
                        })?;
                    }
                    writer.write(&RecordBatch::try_new(Arc::clone(&target), columns).map_err(|e| self.error(e))?)?;
                    rows += batch.num_rows() as u64;
                }
            }
        }
        Ok(rows)
    }

    /// For each column of the file, the position of the table column it fills.
    fn column_positions(&self, target: &SchemaRef) -> Result<Vec<usize>> {
        if self.columns.is_empty() {
            return Ok((0..target.fields().len()).collect());
        }
        self.columns
            .iter()
            .map(|c| {
                target.index_of(c).map_err(|_| {
                    TesseraError::Plan(format!("COPY: table '{}' has no column '{c}'", self.table))
                })
            })
            .collect()
    }

    /// Casts text columns to the table's types; the first value that does not parse is
    /// reported with its line and column.
    fn cast_csv_batch(
        &self,
        batch: &RecordBatch,
        target: &SchemaRef,
        positions: &[usize],
        first_line: u64,
    ) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut columns: Vec<ArrayRef> = target.fields().iter().map(|f| new_null_array(f.data_type(), n)).collect();
        for (i, &p) in positions.iter().enumerate() {
            let mut text = Arc::clone(batch.column(i));
            if let Some(null) = &self.null {
                let s = text.as_string::<i32>();
                text = Arc::new(s.iter().map(|v| v.filter(|v| v != null)).collect::<StringArray>());
            }
            let field = target.field(p);
            columns[p] = match cast_with_options(&text, field.data_type(), &STRICT) {
                Ok(c) => c,
                Err(e) => {
                    // Find the first value that does not convert, to point at it.
                    let lenient = cast_with_options(&text, field.data_type(), &CastOptions::default()).ok();
                    let s = text.as_string::<i32>();
                    let bad = (0..n).find(|&r| s.is_valid(r) && lenient.as_ref().is_none_or(|l| l.is_null(r)));
                    return Err(match bad {
                        Some(r) => TesseraError::Execution(format!(
                            "COPY: '{}' line {}, column '{}': cannot parse '{}' as {}",
                            self.path,
                            first_line + r as u64,
                            field.name(),
                            s.value(r),
                            field.data_type()
                        )),
                        None => TesseraError::Execution(format!(
                            "COPY: '{}' column '{}': {e}",
                            self.path,
                            field.name()
                        )),
                    });
                }
            };
        }
        RecordBatch::try_new(Arc::clone(target), columns).map_err(|e| self.error(e))
    }

    fn error(&self, e: impl std::fmt::Display) -> TesseraError {
        TesseraError::Execution(format!("COPY: '{}': {e}", self.path))
    }
}

/// `schema` with every field nullable.
pub(crate) fn nullable(schema: &SchemaRef) -> SchemaRef {
    Arc::new(Schema::new(
        schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(true)).collect::<Vec<_>>(),
    ))
}

/// Casting that fails on values that do not convert, instead of making them NULL.
pub(crate) const STRICT: CastOptions<'static> = CastOptions { safe: false, format_options: FormatOptions::new() };

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_postgres_and_duckdb_style_options() {
        let c = parse_copy_from("COPY T FROM 'a.csv' (HEADER false, DELIMITER '|', NULL 'NA')").unwrap().unwrap();
        assert_eq!((c.table.as_str(), c.header, c.delimiter, c.null.as_deref()), ("t", false, b'|', Some("NA")));
        assert_eq!(c.format, CopyFormat::Csv);
        let c = parse_copy_from("copy \"Mixed\" (b, a) from 'x.parquet'").unwrap().unwrap();
        assert_eq!((c.table.as_str(), c.columns.clone(), c.format), ("Mixed", vec!["b".into(), "a".into()], CopyFormat::Parquet));
        let c = parse_copy_from("COPY t FROM 'y.txt' WITH (FORMAT csv, HEADER)").unwrap().unwrap();
        assert!(c.header);
    }

    #[test]
    fn other_statements_are_not_copy_from() {
        assert_eq!(parse_copy_from("select 1").unwrap(), None);
        assert_eq!(parse_copy_from("COPY t TO 'out.parquet'").unwrap(), None);
        assert!(parse_copy_from("COPY t FROM 'a.csv' (FORMAT json)").is_err());
    }
}
