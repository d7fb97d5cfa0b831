//! Printing query results as an aligned table, CSV, JSON or an Arrow IPC stream.

use std::io::Write;

use arrow::util::display::{ArrayFormatter, FormatOptions};
use comfy_table::{CellAlignment, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use tessera_engine::QueryOutput;

/// Output formats for query results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// An aligned table with a header (default).
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// A JSON array of objects, one per row.
    Json,
    /// An Arrow IPC stream (binary).
    Arrow,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        <Format as clap::ValueEnum>::from_str(s, true).map_err(|_| format!("unknown format '{s}' (table, csv, json, arrow)"))
    }
}

/// Writes `out` in `format`. Statements without a result set print nothing.
pub fn print(w: &mut dyn Write, out: &QueryOutput, format: Format) -> Result<(), Box<dyn std::error::Error>> {
    if out.is_status_only() {
        return Ok(());
    }
    match format {
        Format::Table => writeln!(w, "{}", table(out)?)?,
        Format::Csv => {
            let mut writer = arrow::csv::WriterBuilder::new().with_header(true).build(&mut *w);
            if out.batches.is_empty() {
                let names: Vec<&str> = out.schema.fields().iter().map(|f| f.name().as_str()).collect();
                drop(writer);
                writeln!(w, "{}", names.join(","))?;
            } else {
                for b in &out.batches {
                    writer.write(b)?;
                }
            }
        }
        Format::Json => {
            let mut writer = arrow::json::ArrayWriter::new(&mut *w);
            for b in &out.batches {
                writer.write(b)?;
            }
            writer.finish()?;
            if out.num_rows() == 0 {
                write!(w, "[]")?;
            }
            writeln!(w)?;
        }
        Format::Arrow => {
            let mut writer = arrow::ipc::writer::StreamWriter::try_new(&mut *w, &out.schema)?;
            for b in &out.batches {
                writer.write(b)?;
            }
            writer.finish()?;
        }
    }
    w.flush()?;
    Ok(())
}

/// Renders the result as an aligned table; numbers are right-aligned, NULL is `NULL`.
pub fn table(out: &QueryOutput) -> Result<Table, arrow::error::ArrowError> {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Disabled);
    table.set_header(out.schema.fields().iter().map(|f| f.name().as_str()));
    let options = FormatOptions::default().with_null("NULL");
    for batch in &out.batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            table.add_row(formatters.iter().map(|f| f.value(row).to_string()));
        }
    }
    for (i, field) in out.schema.fields().iter().enumerate() {
        if field.data_type().is_numeric() {
            if let Some(col) = table.column_mut(i) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    Ok(table)
}
