//! `COPY table [(columns)] FROM 'file' | STDIN [[WITH] (options)]`: bulk loading from
//! PostgreSQL's text format, CSV or Parquet into the store, all-or-nothing; and
//! `COPY table [(columns)] | (query) TO STDOUT`, whose rows a client protocol sends
//! ([`CopyTo`]).
//!
//! DataFusion plans `COPY … TO 'file'` but not `COPY … FROM`, so Tessera parses it
//! (with DataFusion's re-export of sqlparser, PostgreSQL syntax) and runs it itself.
//! Fields are read as text and then cast to the column types, so that a value that
//! does not parse is reported with its source, line, column and text. The rows of
//! `FROM STDIN` come from the client ([`crate::Session::copy_from_stdin`]): the
//! PostgreSQL server of `tessera serve` collects them and loads them at the end.
//!
//! Options: `FORMAT text|csv|parquet`, `HEADER [bool]`, `DELIMITER 'c'`, `NULL 'text'`,
//! and for csv `QUOTE 'c'` and `ESCAPE 'c'`; PostgreSQL's older spellings (`CSV HEADER`,
//! `DELIMITER 'c'`, `NULL 'text'` without parentheses) too. Defaults follow PostgreSQL
//! for STDIN and STDOUT (format text: tab-delimited, `\N` for NULL, no header; csv:
//! comma-delimited, an empty field for NULL); a file is csv unless it ends in
//! `.parquet` or `.pq`, and a csv file has a header by default. Reading csv, an empty field is NULL
//! whether quoted or not (Arrow's reader does not tell them apart), besides the NULL
//! text. The binary format is not supported.

use std::fs::File;
use std::io::BufRead;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryArray, RecordBatch, StringArray, StringBuilder, new_null_array};
use datafusion::arrow::compute::{CastOptions, cast_with_options};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::util::display::FormatOptions;
use datafusion::sql::sqlparser::ast::{
    CopyLegacyCsvOption, CopyLegacyOption, CopyOption, CopySource, CopyTarget, Ident, ObjectName, Statement,
};
use datafusion::sql::sqlparser::dialect::PostgreSqlDialect;
use datafusion::sql::sqlparser::parser::Parser;
use tessera_common::{Result, TesseraError, not_impl_err, plan_err};
use tessera_storage::TableWriter;

use crate::copy_text::{TextReader, write_csv_field, write_text_field};

/// Rows read per batch (CSV and text).
const CSV_BATCH_ROWS: usize = 64 * 1024;

/// Formats COPY reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFormat {
    /// PostgreSQL's text format: a line a row, fields split at a delimiter (tab by
    /// default), `\N` for NULL, backslash escapes.
    Text,
    /// Delimited text with quoting (RFC 4180 and PostgreSQL's options).
    Csv,
    /// Apache Parquet (files only).
    Parquet,
}

/// Where `COPY … FROM` reads its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CopyInput {
    /// A file the server can read.
    File(String),
    /// The client, over its protocol (`FROM STDIN`).
    Stdin,
}

/// A parsed `COPY … FROM` statement.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyFrom {
    /// Target table (normalized: unquoted names lower-cased).
    pub table: String,
    /// Target columns in file order; empty means all columns in table order.
    pub columns: Vec<String>,
    /// Where the rows come from.
    pub input: CopyInput,
    /// Source format.
    pub format: CopyFormat,
    /// Whether the data starts with a header line (skipped).
    pub header: bool,
    /// Field delimiter.
    pub delimiter: u8,
    /// CSV quote character.
    pub quote: u8,
    /// CSV escape character.
    pub escape: Option<u8>,
    /// Text that stands for NULL (in CSV empty fields are NULL regardless).
    pub null: Option<String>,
}

/// A parsed `COPY table [(columns)] | (query) TO STDOUT`: the query to run, and how its
/// rows are written (the text or CSV format).
#[derive(Debug, Clone, PartialEq)]
pub struct CopyTo {
    /// The query whose rows are copied (`SELECT columns FROM table` for a table).
    pub query: String,
    /// [`CopyFormat::Text`] or [`CopyFormat::Csv`].
    pub format: CopyFormat,
    /// Whether a line of column names comes first.
    pub header: bool,
    /// Field delimiter.
    pub delimiter: u8,
    /// CSV quote character.
    pub quote: u8,
    /// CSV escape character (the quote unless given).
    pub escape: u8,
    /// Text written for NULL.
    pub null: String,
}

/// The options of a COPY statement as given (None: not given).
#[derive(Debug, Default)]
struct GivenOptions {
    format: Option<CopyFormat>,
    header: Option<bool>,
    delimiter: Option<u8>,
    quote: Option<u8>,
    escape: Option<u8>,
    null: Option<String>,
}

/// `sql` parsed as PostgreSQL's COPY, or None when it is not one (DataFusion's
/// `COPY … TO` syntax, or an error DataFusion reports).
fn parse_copy(sql: &str) -> Option<Statement> {
    let first = sql.split_whitespace().next().unwrap_or("");
    if !first.eq_ignore_ascii_case("copy") {
        return None;
    }
    Parser::new(&PostgreSqlDialect {}).try_with_sql(sql).and_then(|mut p| p.parse_statement()).ok()
}

/// Parses `sql` when it is a `COPY … FROM` statement (a file or STDIN); `Ok(None)` for
/// anything else.
pub fn parse_copy_from(sql: &str) -> Result<Option<CopyFrom>> {
    let Some(Statement::Copy { source, to: false, target, options, legacy_options, .. }) = parse_copy(sql) else {
        return Ok(None);
    };
    let (table_name, columns) = match source {
        CopySource::Table { table_name, columns } => (table_name, columns),
        CopySource::Query(_) => return plan_err!("COPY (query) FROM is not valid; use COPY (query) TO 'file'"),
    };
    let input = match target {
        CopyTarget::File { filename } => CopyInput::File(filename),
        CopyTarget::Stdin => CopyInput::Stdin,
        other => return not_impl_err!("COPY FROM {other} is not supported; name a file or STDIN"),
    };
    let table = table_name_of(&table_name)?;
    let given = read_options(options, legacy_options)?;
    let format = match (&input, given.format) {
        (_, Some(f)) => f,
        (CopyInput::Stdin, None) => CopyFormat::Text,
        (CopyInput::File(path), None) => {
            let lower = path.to_ascii_lowercase();
            if lower.ends_with(".parquet") || lower.ends_with(".pq") { CopyFormat::Parquet } else { CopyFormat::Csv }
        }
    };
    if format == CopyFormat::Parquet && input == CopyInput::Stdin {
        return not_impl_err!("COPY FROM STDIN reads the text and csv formats, not parquet");
    }
    check_options(&given, format)?;
    let delimiter = given.delimiter.unwrap_or(if format == CopyFormat::Text { b'\t' } else { b',' });
    let null = match format {
        CopyFormat::Text => Some(given.null.unwrap_or_else(|| "\\N".into())),
        _ => given.null,
    };
    Ok(Some(CopyFrom {
        table,
        columns: columns.iter().map(normalize).collect(),
        header: given.header.unwrap_or(matches!(input, CopyInput::File(_)) && format == CopyFormat::Csv),
        input,
        format,
        delimiter,
        quote: given.quote.unwrap_or(b'"'),
        escape: given.escape,
        null,
    }))
}

/// Parses `sql` when it is `COPY table [(columns)] | (query) TO STDOUT`; `Ok(None)` for
/// anything else (`COPY … TO 'file'` is DataFusion's).
pub fn parse_copy_to_stdout(sql: &str) -> Result<Option<CopyTo>> {
    let Some(Statement::Copy { source, to: true, target: CopyTarget::Stdout, options, legacy_options, .. }) = parse_copy(sql) else {
        return Ok(None);
    };
    let query = match source {
        CopySource::Table { table_name, columns } => {
            let columns = if columns.is_empty() {
                "*".to_string()
            } else {
                columns.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            };
            format!("SELECT {columns} FROM {table_name}")
        }
        CopySource::Query(query) => query.to_string(),
    };
    let given = read_options(options, legacy_options)?;
    let format = given.format.unwrap_or(CopyFormat::Text);
    if format == CopyFormat::Parquet {
        return not_impl_err!("COPY TO STDOUT writes the text and csv formats; for parquet use COPY … TO 'file.parquet'");
    }
    check_options(&given, format)?;
    let quote = given.quote.unwrap_or(b'"');
    Ok(Some(CopyTo {
        query,
        format,
        header: given.header.unwrap_or(false),
        delimiter: given.delimiter.unwrap_or(if format == CopyFormat::Text { b'\t' } else { b',' }),
        quote,
        escape: given.escape.unwrap_or(quote),
        null: given.null.unwrap_or_else(|| if format == CopyFormat::Text { "\\N".into() } else { String::new() }),
    }))
}

/// The single-part table name of a COPY, normalized.
fn table_name_of(name: &ObjectName) -> Result<String> {
    match name.0.as_slice() {
        [part] => match part.as_ident() {
            Some(ident) => Ok(normalize(ident)),
            None => plan_err!("COPY: invalid table name {name}"),
        },
        _ => not_impl_err!("COPY FROM into a qualified table name ({name}) is not supported"),
    }
}

/// Reads the options of both syntaxes, refusing those Tessera does not support.
fn read_options(options: Vec<CopyOption>, legacy_options: Vec<CopyLegacyOption>) -> Result<GivenOptions> {
    let mut given = GivenOptions::default();
    for option in options {
        match option {
            CopyOption::Format(f) => {
                given.format = Some(match f.value.to_ascii_lowercase().as_str() {
                    "text" => CopyFormat::Text,
                    "csv" => CopyFormat::Csv,
                    "parquet" => CopyFormat::Parquet,
                    "binary" => return not_impl_err!("COPY's binary format is not supported; use FORMAT text or FORMAT csv"),
                    other => return not_impl_err!("COPY format '{other}' (supported: text, csv, parquet)"),
                })
            }
            CopyOption::Header(h) => given.header = Some(h),
            CopyOption::Delimiter(c) => given.delimiter = Some(ascii(c, "DELIMITER")?),
            CopyOption::Quote(c) => given.quote = Some(ascii(c, "QUOTE")?),
            CopyOption::Escape(c) => given.escape = Some(ascii(c, "ESCAPE")?),
            CopyOption::Null(s) => given.null = Some(s),
            CopyOption::Encoding(e) if matches!(e.to_ascii_lowercase().as_str(), "utf8" | "utf-8") => {}
            other => return not_impl_err!("COPY option {other} is not supported"),
        }
    }
    for option in legacy_options {
        match option {
            CopyLegacyOption::Delimiter(c) => given.delimiter = Some(ascii(c, "DELIMITER")?),
            CopyLegacyOption::Null(s) => given.null = Some(s),
            CopyLegacyOption::Binary => return not_impl_err!("COPY's binary format is not supported; use FORMAT text or FORMAT csv"),
            CopyLegacyOption::Csv(csv) => {
                given.format = Some(CopyFormat::Csv);
                for o in csv {
                    match o {
                        CopyLegacyCsvOption::Header => given.header = Some(true),
                        CopyLegacyCsvOption::Quote(c) => given.quote = Some(ascii(c, "QUOTE")?),
                        CopyLegacyCsvOption::Escape(c) => given.escape = Some(ascii(c, "ESCAPE")?),
                        other => return not_impl_err!("COPY option {other} is not supported"),
                    }
                }
            }
            other => return not_impl_err!("COPY option {other} is not supported"),
        }
    }
    Ok(given)
}

/// The checks PostgreSQL makes of COPY's options for `format`.
fn check_options(given: &GivenOptions, format: CopyFormat) -> Result<()> {
    if format != CopyFormat::Csv && (given.quote.is_some() || given.escape.is_some()) {
        return not_impl_err!("COPY QUOTE and ESCAPE are available only with FORMAT csv");
    }
    if let Some(d) = given.delimiter {
        if d == b'\n' || d == b'\r' || format == CopyFormat::Text && d == b'\\' {
            return plan_err!("COPY delimiter cannot be a line break or a backslash");
        }
        if format == CopyFormat::Csv && d == given.quote.unwrap_or(b'"') {
            return plan_err!("COPY delimiter and quote must be different");
        }
    }
    if given.null.as_deref().is_some_and(|n| n.contains(['\n', '\r'])) {
        return plan_err!("COPY NULL text cannot contain a line break");
    }
    Ok(())
}

fn normalize(ident: &Ident) -> String {
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
    /// Errors name the file (and for text and CSV the line and column).
    pub fn load(&self, writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        let path = match &self.input {
            CopyInput::File(path) => path,
            CopyInput::Stdin => {
                return not_impl_err!(
                    "COPY FROM STDIN needs a client that sends the rows (psql's \\copy, a driver's COPY API) through `tessera serve`; here, name a file"
                );
            }
        };
        let file = File::open(path).map_err(|e| TesseraError::Execution(format!("COPY: cannot open '{path}': {e}")))?;
        match self.format {
            CopyFormat::Parquet => self.load_parquet(file, writer),
            _ => self.load_delimited(std::io::BufReader::new(file), writer),
        }
    }

    /// Writes the rows of `data` (what a client sent for `COPY … FROM STDIN`, in this
    /// statement's text or CSV format) through `writer`; returns the rows read.
    pub fn load_bytes(&self, data: &[u8], writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        if self.format == CopyFormat::Parquet {
            return not_impl_err!("COPY FROM STDIN reads the text and csv formats, not parquet");
        }
        self.load_delimited(data, writer)
    }

    /// Where the rows come from, as errors name it.
    fn source(&self) -> String {
        match &self.input {
            CopyInput::File(path) => format!("'{path}'"),
            CopyInput::Stdin => "STDIN".into(),
        }
    }

    /// The number of columns the data has.
    pub fn data_columns(&self, table: &SchemaRef) -> Result<usize> {
        Ok(self.column_positions(table)?.len())
    }

    /// Loads text or CSV from `input`.
    fn load_delimited(&self, input: impl BufRead, writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        // Batches are built nullable; the store's writer reports NOT NULL violations.
        let target = nullable(writer.schema());
        let positions = self.column_positions(&target)?;
        match self.format {
            CopyFormat::Text => self.load_text(input, &target, &positions, writer),
            _ => self.load_csv(input, &target, &positions, writer),
        }
    }

    fn load_csv(&self, input: impl BufRead, target: &SchemaRef, positions: &[usize], writer: &mut TableWriter<'_, '_>) -> Result<u64> {
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
        let reader = builder.build_buffered(input).map_err(|e| self.error(e))?;
        let mut rows = 0u64;
        for batch in reader {
            let batch = batch.map_err(|e| self.error(e))?;
            let first_line = rows + 1 + u64::from(self.header);
            let typed = self.cast_text_batch(&batch, target, positions, &|r| first_line + r as u64, self.null.as_deref())?;
            writer.write(&typed)?;
            rows += batch.num_rows() as u64;
        }
        Ok(rows)
    }

    /// PostgreSQL's text format ([`crate::copy_text`]), batch by batch.
    fn load_text(&self, input: impl BufRead, target: &SchemaRef, positions: &[usize], writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        let mut reader = TextReader::new(input, self.delimiter, self.null.as_deref().unwrap_or("\\N"));
        let at_line = |reader: &TextReader<_>, e: String| TesseraError::Execution(format!("COPY: {} line {}: {e}", self.source(), reader.line_number()));
        if self.header {
            reader.skip_line().map_err(|e| at_line(&reader, e))?;
        }
        let text_schema = Arc::new(Schema::new(
            positions.iter().map(|&p| Field::new(target.field(p).name(), DataType::Utf8, true)).collect::<Vec<_>>(),
        ));
        let mut fields = Vec::with_capacity(positions.len());
        let mut rows = 0u64;
        loop {
            let mut columns: Vec<StringBuilder> = positions.iter().map(|_| StringBuilder::new()).collect();
            let mut lines = Vec::new();
            while lines.len() < CSV_BATCH_ROWS && reader.next_row(&mut fields).map_err(|e| at_line(&reader, e))? {
                if fields.len() != positions.len() {
                    return Err(at_line(&reader, format!("{} fields where {} columns are copied", fields.len(), positions.len())));
                }
                for (column, field) in columns.iter_mut().zip(&fields) {
                    column.append_option(field.as_deref());
                }
                lines.push(reader.line_number());
            }
            if lines.is_empty() {
                return Ok(rows);
            }
            let arrays: Vec<ArrayRef> = columns.iter_mut().map(|c| Arc::new(c.finish()) as ArrayRef).collect();
            let batch = RecordBatch::try_new(Arc::clone(&text_schema), arrays).map_err(|e| self.error(e))?;
            let typed = self.cast_text_batch(&batch, target, positions, &|r| lines.get(r).copied().unwrap_or(0), None)?;
            writer.write(&typed)?;
            rows += lines.len() as u64;
        }
    }

    fn load_parquet(&self, file: File, writer: &mut TableWriter<'_, '_>) -> Result<u64> {
        let target = nullable(writer.schema());
        let positions = self.column_positions(&target)?;
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
            .and_then(|b| b.build())
            .map_err(|e| self.error(e))?;
        let mut rows = 0u64;
        for batch in reader {
            let batch = batch.map_err(|e| self.error(e))?;
            if batch.num_columns() != positions.len() {
                return plan_err!(
                    "COPY: {} has {} columns but {} were expected",
                    self.source(),
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
                        "COPY: {}, column '{}': cannot convert {} to {}: {e}",
                        self.source(),
                        field.name(),
                        batch.column(i).data_type(),
                        field.data_type()
                    ))
                })?;
            }
            writer.write(&RecordBatch::try_new(Arc::clone(&target), columns).map_err(|e| self.error(e))?)?;
            rows += batch.num_rows() as u64;
        }
        Ok(rows)
    }

    /// For each column of the data, the position of the table column it fills.
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

    /// Casts text columns to the table's types (`null`: text that stands for NULL);
    /// the first value that does not parse is reported with its line (`line_of` a row)
    /// and column. A bytea value in PostgreSQL's hex form (`\x0a1b`) is read as its bytes.
    fn cast_text_batch(
        &self,
        batch: &RecordBatch,
        target: &SchemaRef,
        positions: &[usize],
        line_of: &dyn Fn(usize) -> u64,
        null: Option<&str>,
    ) -> Result<RecordBatch> {
        let n = batch.num_rows();
        let mut columns: Vec<ArrayRef> = target.fields().iter().map(|f| new_null_array(f.data_type(), n)).collect();
        for (i, &p) in positions.iter().enumerate() {
            let mut text = Arc::clone(batch.column(i));
            if let Some(null) = null {
                let s = text.as_string::<i32>();
                text = Arc::new(s.iter().map(|v| v.filter(|v| *v != null)).collect::<StringArray>());
            }
            let field = target.field(p);
            if matches!(field.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView) {
                text = self.bytea(&text, field.name(), line_of)?;
            }
            columns[p] = match cast_with_options(&text, field.data_type(), &STRICT) {
                Ok(c) => c,
                Err(e) => {
                    // Find the first value that does not convert, to point at it.
                    let lenient = cast_with_options(&text, field.data_type(), &CastOptions::default()).ok();
                    let s = text.as_string_opt::<i32>();
                    let bad = s.and_then(|s| (0..n).find(|&r| s.is_valid(r) && lenient.as_ref().is_none_or(|l| l.is_null(r))).map(|r| (r, s.value(r))));
                    return Err(match bad {
                        Some((r, value)) => TesseraError::Execution(format!(
                            "COPY: {} line {}, column '{}': cannot parse '{}' as {}",
                            self.source(),
                            line_of(r),
                            field.name(),
                            value,
                            field.data_type()
                        )),
                        None => TesseraError::Execution(format!(
                            "COPY: {} column '{}': {e}",
                            self.source(),
                            field.name()
                        )),
                    });
                }
            };
        }
        RecordBatch::try_new(Arc::clone(target), columns).map_err(|e| self.error(e))
    }

    /// Text values of a bytea column as bytes: `\x` and hex digits as PostgreSQL writes
    /// them, any other text as its own bytes.
    fn bytea(&self, text: &ArrayRef, column: &str, line_of: &dyn Fn(usize) -> u64) -> Result<ArrayRef> {
        let Some(s) = text.as_string_opt::<i32>() else {
            return Ok(Arc::clone(text));
        };
        let mut out = Vec::with_capacity(s.len());
        for (r, v) in s.iter().enumerate() {
            out.push(match v {
                None => None,
                Some(v) => match v.strip_prefix("\\x") {
                    Some(hex) => Some(decode_hex(hex).ok_or_else(|| {
                        TesseraError::Execution(format!(
                            "COPY: {} line {}, column '{column}': invalid bytea hex value '{v}'",
                            self.source(),
                            line_of(r)
                        ))
                    })?),
                    None => Some(v.as_bytes().to_vec()),
                },
            });
        }
        Ok(Arc::new(out.iter().map(|v| v.as_deref()).collect::<BinaryArray>()))
    }

    fn error(&self, e: impl std::fmt::Display) -> TesseraError {
        TesseraError::Execution(format!("COPY: {}: {e}", self.source()))
    }
}

/// Hex digits as bytes (None: an odd count or a non-hex digit).
fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    let bytes = hex.as_bytes();
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    bytes
        .chunks(2)
        .map(|pair| {
            let high = (pair[0] as char).to_digit(16)?;
            let low = (pair[1] as char).to_digit(16)?;
            Some((high * 16 + low) as u8)
        })
        .collect()
}

impl CopyTo {
    /// Appends the header line: the column names as fields.
    pub fn write_header<'a>(&self, names: impl IntoIterator<Item = &'a str>, out: &mut Vec<u8>) {
        for (i, name) in names.into_iter().enumerate() {
            self.write_field(i, Some(name.as_bytes()), out);
        }
        self.end_row(out);
    }

    /// Appends field `index` of a row (None: NULL), after a delimiter unless it is the first.
    pub fn write_field(&self, index: usize, value: Option<&[u8]>, out: &mut Vec<u8>) {
        if index > 0 {
            out.push(self.delimiter);
        }
        match (value, self.format) {
            (None, _) => out.extend_from_slice(self.null.as_bytes()),
            (Some(v), CopyFormat::Csv) => write_csv_field(v, self.delimiter, self.quote, self.escape, self.null.as_bytes(), out),
            (Some(v), _) => write_text_field(v, self.delimiter, out),
        }
    }

    /// Ends a row.
    pub fn end_row(&self, out: &mut Vec<u8>) {
        out.push(b'\n');
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

    type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn parses_postgres_and_duckdb_style_options() -> TestResult {
        let c = parse_copy_from("COPY T FROM 'a.csv' (HEADER false, DELIMITER '|', NULL 'NA')")?.ok_or("not a COPY")?;
        assert_eq!((c.table.as_str(), c.header, c.delimiter, c.null.as_deref()), ("t", false, b'|', Some("NA")));
        assert_eq!(c.format, CopyFormat::Csv);
        let c = parse_copy_from("copy \"Mixed\" (b, a) from 'x.parquet'")?.ok_or("not a COPY")?;
        assert_eq!((c.table.as_str(), c.columns.clone(), c.format), ("Mixed", vec!["b".into(), "a".into()], CopyFormat::Parquet));
        let c = parse_copy_from("COPY t FROM 'y.txt' WITH (FORMAT csv, HEADER)")?.ok_or("not a COPY")?;
        assert!(c.header);
        Ok(())
    }

    #[test]
    fn stdin_defaults_are_postgresqls() -> TestResult {
        let c = parse_copy_from("COPY t FROM STDIN")?.ok_or("not a COPY")?;
        assert_eq!((c.input, c.format, c.header, c.delimiter, c.null.as_deref()), (CopyInput::Stdin, CopyFormat::Text, false, b'\t', Some("\\N")));
        // psql's \copy … CSV HEADER sends the older spelling.
        let c = parse_copy_from("COPY t (a, b) FROM STDIN CSV HEADER")?.ok_or("not a COPY")?;
        assert_eq!((c.format, c.header, c.delimiter, c.null), (CopyFormat::Csv, true, b',', None));
        let c = parse_copy_from("COPY t FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'NA')")?.ok_or("not a COPY")?;
        assert_eq!((c.header, c.delimiter, c.null.as_deref()), (false, b';', Some("NA")));
        assert!(matches!(parse_copy_from("COPY t FROM STDIN (FORMAT binary)"), Err(TesseraError::NotImplemented(_))));
        assert!(matches!(parse_copy_from("COPY t FROM STDIN BINARY"), Err(TesseraError::NotImplemented(_))));
        assert!(parse_copy_from("COPY t FROM STDIN (FORMAT parquet)").is_err());
        assert!(parse_copy_from("COPY t FROM STDIN (QUOTE '\"')").is_err(), "QUOTE is for csv only");
        Ok(())
    }

    #[test]
    fn copy_to_stdout() -> TestResult {
        let c = parse_copy_to_stdout("COPY t TO STDOUT")?.ok_or("not a COPY")?;
        assert_eq!((c.query.as_str(), c.format, c.header, c.delimiter, c.null.as_str()), ("SELECT * FROM t", CopyFormat::Text, false, b'\t', "\\N"));
        let c = parse_copy_to_stdout("COPY t (a, \"B\") TO STDOUT WITH (FORMAT csv, HEADER)")?.ok_or("not a COPY")?;
        assert_eq!((c.query.as_str(), c.format, c.header, c.null.as_str()), ("SELECT a, \"B\" FROM t", CopyFormat::Csv, true, ""));
        let c = parse_copy_to_stdout("COPY (SELECT a FROM t WHERE a > 1) TO STDOUT CSV")?.ok_or("not a COPY")?;
        assert_eq!((c.query.as_str(), c.format), ("SELECT a FROM t WHERE a > 1", CopyFormat::Csv));
        assert_eq!(parse_copy_to_stdout("COPY t TO 'out.csv'")?, None);
        assert!(matches!(parse_copy_to_stdout("COPY t TO STDOUT (FORMAT binary)"), Err(TesseraError::NotImplemented(_))));
        let mut out = Vec::new();
        c.write_header(["a", "b,c"], &mut out);
        c.write_field(0, Some(b"x\"y"), &mut out);
        c.write_field(1, None, &mut out);
        c.end_row(&mut out);
        assert_eq!(String::from_utf8_lossy(&out), "a,\"b,c\"\n\"x\"\"y\",\n");
        Ok(())
    }

    #[test]
    fn other_statements_are_not_copy_from() -> TestResult {
        assert_eq!(parse_copy_from("select 1")?, None);
        assert_eq!(parse_copy_from("COPY t TO 'out.parquet'")?, None);
        assert!(parse_copy_from("COPY t FROM 'a.csv' (FORMAT json)").is_err());
        Ok(())
    }

    #[test]
    fn hex_bytea() {
        assert_eq!(decode_hex("00ff1A"), Some(vec![0, 255, 26]));
        assert_eq!(decode_hex("abc"), None);
        assert_eq!(decode_hex("zz"), None);
    }
}
