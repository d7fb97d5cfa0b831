//! `tessera gen`: SSB and TPC-H data, generated in parallel and streamed in table order
//! to Parquet, CSV or `.tbl` files or into the embedded store.
//!
//! Each table is cut into chunks of about [`ROWS_PER_CHUNK`] rows; worker threads
//! generate chunks (the generators can start at any chunk) and the writer consumes them
//! in order, so the output is identical for any thread count and at most a few chunks
//! are in memory at once.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use arrow::array::RecordBatch;
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use tessera_common::{Result, TesseraError};
use tessera_storage::{ChunkFile, Store};
use tpchgen::generators as tpch;
use tpchgen_arrow as tpch_arrow;

use crate::ssb_arrow;
use crate::suite::Suite;

/// Rows per generated chunk: 1 Mi rows (~100 MB of lineorder in Arrow) keeps every
/// core busy at SF 1 and bounds memory to a few chunks per thread at SF 100.
pub const ROWS_PER_CHUNK: i64 = 1 << 20;

/// File formats `tessera gen` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Apache Parquet (Snappy).
    Parquet,
    /// CSV with a header line.
    Csv,
    /// dbgen's `|`-terminated text.
    Tbl,
}

impl FileFormat {
    /// Parses `parquet`, `csv` or `tbl`.
    pub fn parse(s: &str) -> Option<FileFormat> {
        match s.to_ascii_lowercase().as_str() {
            "parquet" => Some(FileFormat::Parquet),
            "csv" => Some(FileFormat::Csv),
            "tbl" => Some(FileFormat::Tbl),
            _ => None,
        }
    }

    fn extension(self) -> &'static str {
        match self {
            FileFormat::Parquet => "parquet",
            FileFormat::Csv => "csv",
            FileFormat::Tbl => "tbl",
        }
    }
}

/// What one generated table amounted to.
#[derive(Debug, Clone)]
pub struct TableReport {
    /// Table name.
    pub table: String,
    /// Rows generated.
    pub rows: u64,
    /// Seconds it took, writing included.
    pub seconds: f64,
}

type Chunk = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

fn arrow_err(e: arrow::error::ArrowError) -> TesseraError {
    TesseraError::Internal(format!("generating data: {e}"))
}

/// The schema a table is written with: TPC-H's `Utf8View` strings become `Utf8`, the
/// store's string type.
pub fn table_schema(suite: Suite, table: &str) -> Result<SchemaRef> {
    let schema = match suite {
        Suite::Ssb => ssb_arrow::schema(table),
        Suite::Tpch => match table {
            "region" => Some(tpch_arrow::RegionArrow::schema_ref()),
            "nation" => Some(tpch_arrow::NationArrow::schema_ref()),
            "supplier" => Some(tpch_arrow::SupplierArrow::schema_ref()),
            "customer" => Some(tpch_arrow::CustomerArrow::schema_ref()),
            "part" => Some(tpch_arrow::PartArrow::schema_ref()),
            "partsupp" => Some(tpch_arrow::PartSuppArrow::schema_ref()),
            "orders" => Some(tpch_arrow::OrderArrow::schema_ref()),
            "lineitem" => Some(tpch_arrow::LineItemArrow::schema_ref()),
            _ => None,
        }
        .map(|s| {
            let fields: Vec<Field> = s
                .fields()
                .iter()
                .map(|f| match f.data_type() {
                    DataType::Utf8View => Field::new(f.name(), DataType::Utf8, f.is_nullable()),
                    _ => f.as_ref().clone(),
                })
                .collect();
            Arc::new(Schema::new(fields))
        }),
    };
    schema.ok_or_else(|| TesseraError::Plan(format!("{suite} has no table '{table}'")))
}

/// Estimated rows of a table (exact except TPC-H lineitem, about 4 per order).
pub fn estimated_rows(suite: Suite, table: &str, sf: f64) -> i64 {
    match suite {
        Suite::Ssb => ssb_arrow::row_count(table, sf),
        Suite::Tpch => match table {
            "region" => 5,
            "nation" => 25,
            "supplier" => tpch::SupplierGenerator::calculate_row_count(sf, 1, 1),
            "customer" => tpch::CustomerGenerator::calculate_row_count(sf, 1, 1),
            "part" => tpch::PartGenerator::calculate_row_count(sf, 1, 1),
            "partsupp" => tpch::PartSuppGenerator::calculate_row_count(sf, 1, 1),
            "orders" => tpch::OrderGenerator::calculate_row_count(sf, 1, 1),
            "lineitem" => 4 * tpch::OrderGenerator::calculate_row_count(sf, 1, 1),
            _ => 0,
        },
    }
}

fn chunk_count(suite: Suite, table: &str, sf: f64, rows_per_chunk: i64) -> i32 {
    if matches!(table, "region" | "nation" | "date") {
        return 1; // fixed-size tables: their generators ignore the chunk arguments
    }
    let rows = estimated_rows(suite, table, sf);
    (rows / rows_per_chunk.max(1) + 1).clamp(1, i32::MAX as i64) as i32
}

fn chunk(suite: Suite, table: &str, sf: f64, part: i32, parts: i32) -> Result<Chunk> {
    let batch_rows = ssb_arrow::BATCH_ROWS;
    let it: Chunk = match suite {
        Suite::Ssb => {
            let it = ssb_arrow::batches(table, sf, part, parts)
                .ok_or_else(|| TesseraError::Plan(format!("ssb has no table '{table}'")))?;
            Box::new(it.map(|b| b.map_err(arrow_err)))
        }
        Suite::Tpch => {
            let it: Box<dyn Iterator<Item = std::result::Result<RecordBatch, arrow::error::ArrowError>> + Send> = match table {
                "region" => Box::new(tpch_arrow::RegionArrow::new(tpch::RegionGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "nation" => Box::new(tpch_arrow::NationArrow::new(tpch::NationGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "supplier" => Box::new(tpch_arrow::SupplierArrow::new(tpch::SupplierGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "customer" => Box::new(tpch_arrow::CustomerArrow::new(tpch::CustomerGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "part" => Box::new(tpch_arrow::PartArrow::new(tpch::PartGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "partsupp" => Box::new(tpch_arrow::PartSuppArrow::new(tpch::PartSuppGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "orders" => Box::new(tpch_arrow::OrderArrow::new(tpch::OrderGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                "lineitem" => Box::new(tpch_arrow::LineItemArrow::new(tpch::LineItemGenerator::new(sf, part, parts)).with_batch_size(batch_rows)),
                _ => return Err(TesseraError::Plan(format!("tpch has no table '{table}'"))),
            };
            let schema = table_schema(suite, table)?;
            Box::new(it.map(move |b| {
                let b = b.map_err(arrow_err)?;
                let columns = b
                    .columns()
                    .iter()
                    .zip(schema.fields())
                    .map(|(c, f)| if c.data_type() == f.data_type() { Ok(Arc::clone(c)) } else { cast(c, f.data_type()) })
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(arrow_err)?;
                RecordBatch::try_new(Arc::clone(&schema), columns).map_err(arrow_err)
            }))
        }
    };
    Ok(it)
}

/// Generates one table with `threads` workers and hands its batches, in order, to
/// `write`. `progress` is called with the rows of each batch written.
pub fn generate_table(
    suite: Suite,
    table: &str,
    sf: f64,
    threads: usize,
    write: &mut dyn FnMut(&RecordBatch) -> Result<()>,
    progress: &dyn Fn(u64),
) -> Result<u64> {
    generate_table_in_chunks(suite, table, sf, threads, ROWS_PER_CHUNK, write, progress)
}

fn generate_table_in_chunks(
    suite: Suite,
    table: &str,
    sf: f64,
    threads: usize,
    rows_per_chunk: i64,
    write: &mut dyn FnMut(&RecordBatch) -> Result<()>,
    progress: &dyn Fn(u64),
) -> Result<u64> {
    let parts = chunk_count(suite, table, sf, rows_per_chunk);
    let mut rows = 0u64;
    run_chunks(
        sf,
        parts,
        threads,
        |part| chunk(suite, table, sf, part, parts).and_then(|c| c.collect::<Result<Vec<_>>>()),
        |batches| {
            for b in batches {
                write(&b)?;
                rows += b.num_rows() as u64;
                progress(b.num_rows() as u64);
            }
            Ok(())
        },
    )?;
    Ok(rows)
}

/// Runs `produce` for chunks 1..=parts on `threads` workers and hands the results to
/// `consume` in chunk order, holding at most about `threads` finished chunks at once.
fn run_chunks<T: Send>(
    sf: f64,
    parts: i32,
    threads: usize,
    produce: impl Fn(i32) -> Result<T> + Sync,
    mut consume: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    if !(sf > 0.0 && sf.is_finite()) {
        return Err(TesseraError::Plan(format!("the scale factor must be positive, got {sf}")));
    }
    let next = AtomicI32::new(1);
    let threads = threads.clamp(1, parts.max(1) as usize);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(i32, Result<T>)>(threads);
    std::thread::scope(|s| -> Result<()> {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, produce) = (&next, &produce);
            s.spawn(move || {
                loop {
                    let part = next.fetch_add(1, Ordering::Relaxed);
                    if part > parts {
                        break;
                    }
                    let result = produce(part);
                    let failed = result.is_err();
                    if tx.send((part, result)).is_err() || failed {
                        next.store(parts + 1, Ordering::Relaxed); // stop the others too
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut expected = 1;
        for (part, result) in rx.iter() {
            pending.insert(part, result);
            while let Some(result) = pending.remove(&expected) {
                consume(result?)?;
                expected += 1;
            }
        }
        if expected <= parts {
            return Err(TesseraError::Internal(format!("chunk {expected} of {parts} missing")));
        }
        Ok(())
    })
}

/// Generates every table of `suite` into files `DIR/<table>.<ext>`.
pub fn generate_files(
    suite: Suite,
    sf: f64,
    threads: usize,
    dir: &Path,
    format: FileFormat,
    progress: &dyn Fn(u64),
) -> Result<Vec<TableReport>> {
    std::fs::create_dir_all(dir).map_err(|e| TesseraError::io(format!("creating {}", dir.display()), e))?;
    let mut reports = Vec::new();
    for table in suite.tables() {
        let start = std::time::Instant::now();
        let path = dir.join(format!("{table}.{}", format.extension()));
        let schema = table_schema(suite, table)?;
        let file = File::create(&path).map_err(|e| TesseraError::io(format!("creating {}", path.display()), e))?;
        let io = |e: std::io::Error| TesseraError::io(format!("writing {}", path.display()), e);
        let rows = match format {
            FileFormat::Parquet => {
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::SNAPPY)
                    .build();
                let mut w = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props))
                    .map_err(|e| TesseraError::Execution(format!("writing {}: {e}", path.display())))?;
                let rows = generate_table(suite, table, sf, threads, &mut |b| {
                    w.write(b).map_err(|e| TesseraError::Execution(format!("writing {}: {e}", path.display())))
                }, progress)?;
                w.close().map_err(|e| TesseraError::Execution(format!("writing {}: {e}", path.display())))?;
                rows
            }
            FileFormat::Csv => {
                let mut w = arrow::csv::WriterBuilder::new().with_header(true).build(BufWriter::new(file));
                generate_table(suite, table, sf, threads, &mut |b| {
                    w.write(b).map_err(|e| TesseraError::Execution(format!("writing {}: {e}", path.display())))
                }, progress)?
            }
            FileFormat::Tbl => {
                let mut w = BufWriter::new(file);
                let rows = generate_table(suite, table, sf, threads, &mut |b| write_tbl(b, &mut w).map_err(io), progress)?;
                w.flush().map_err(io)?;
                rows
            }
        };
        reports.push(TableReport { table: table.to_string(), rows, seconds: start.elapsed().as_secs_f64() });
    }
    Ok(reports)
}

/// Writes a batch in dbgen's `.tbl` form: every value followed by `|`, one row a line.
pub fn write_tbl(batch: &RecordBatch, w: &mut dyn Write) -> std::io::Result<()> {
    let options = FormatOptions::default();
    let formatters = batch
        .columns()
        .iter()
        .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(std::io::Error::other)?;
    for row in 0..batch.num_rows() {
        for f in &formatters {
            write!(w, "{}|", f.value(row))?;
        }
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// Generates every table of `suite` into `store`, replacing tables of the same names,
/// in one transaction: all tables appear together or not at all.
pub fn generate_into_store(
    suite: Suite,
    sf: f64,
    threads: usize,
    store: &Store,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<TableReport>> {
    let mut tx = store.begin()?;
    let mut reports = Vec::new();
    for table in suite.tables() {
        let start = std::time::Instant::now();
        let schema = table_schema(suite, table)?;
        tx.create_table(table, &schema, false, true)?;
        let mut writer = tx.writer(table, true)?;
        // Each chunk is encoded into its own Parquet file on a worker thread (encoding,
        // not generation, is the cost of a load); the files join the table in order.
        let parts = chunk_count(suite, table, sf, ROWS_PER_CHUNK);
        let slots: Vec<std::sync::Mutex<Option<ChunkFile>>> =
            writer.reserve_chunks(parts as usize).into_iter().map(|c| std::sync::Mutex::new(Some(c))).collect();
        let mut rows = 0u64;
        run_chunks(
            sf,
            parts,
            threads,
            |part| {
                let taken = slots.get(part as usize - 1).and_then(|m| m.lock().ok().and_then(|mut c| c.take()));
                let mut file = taken.ok_or_else(|| TesseraError::Internal(format!("chunk file {part} taken twice")))?;
                for b in chunk(suite, table, sf, part, parts)? {
                    let b = b?;
                    file.write(&b)?;
                    progress(b.num_rows() as u64);
                }
                file.close()
            },
            |closed| {
                rows += closed.rows();
                writer.add_chunk(closed)
            },
        )?;
        writer.finish()?;
        reports.push(TableReport { table: table.to_string(), rows, seconds: start.elapsed().as_secs_f64() });
    }
    tx.commit()?;
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ssb;

    #[test]
    fn generic_tbl_matches_the_ssb_row_format() {
        let mut text = Vec::new();
        generate_table(Suite::Ssb, "part", 0.01, 2, &mut |b| write_tbl(b, &mut text).map_err(|e| TesseraError::io("t", e)), &|_| {})
            .unwrap();
        let mut expected = Vec::new();
        ssb::write_tbl(ssb::PartGenerator::new(0.01, 1, 1), &mut expected).unwrap();
        assert_eq!(String::from_utf8(text).unwrap(), String::from_utf8(expected).unwrap());
    }

    #[test]
    fn output_is_the_same_for_any_thread_count() {
        let collect = |threads| {
            let mut rows = Vec::new();
            generate_table_in_chunks(Suite::Tpch, "orders", 0.01, threads, 1000, &mut |b| {
                rows.push(b.clone());
                Ok(())
            }, &|_| {})
            .unwrap();
            rows
        };
        let one = collect(1);
        assert_eq!(one.iter().map(|b| b.num_rows()).sum::<usize>(), 15_000);
        assert_eq!(one, collect(3));
    }

    #[test]
    fn bad_scale_factor_is_an_error() {
        let err = generate_table(Suite::Ssb, "part", 0.0, 1, &mut |_| Ok(()), &|_| {}).unwrap_err();
        assert!(err.to_string().contains("scale factor"), "{err}");
    }
}
