//! SSB rows as Arrow record batches, with the column types of `benchmarks/ssb/schema.sql`
//! (INTEGER keys, numbers, integer-cent money and yyyymmdd dates; BIGINT lo_orderkey;
//! VARCHAR strings; every column NOT NULL).

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Builder, Int64Builder, RecordBatch, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;

use crate::ssb;

/// Batches of a generated table chunk.
pub type BatchIter = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// Rows per generated batch.
pub const BATCH_ROWS: usize = 64 * 1024;

/// Column kinds of an SSB table, in order.
enum Col {
    I32(&'static str),
    I64(&'static str),
    Str(&'static str),
}

fn schema_of(cols: &[Col]) -> SchemaRef {
    Arc::new(Schema::new(
        cols.iter()
            .map(|c| match c {
                Col::I32(n) => Field::new(*n, DataType::Int32, false),
                Col::I64(n) => Field::new(*n, DataType::Int64, false),
                Col::Str(n) => Field::new(*n, DataType::Utf8, false),
            })
            .collect::<Vec<_>>(),
    ))
}

/// One cell of a row, handed to the column builders.
enum Value<'a> {
    Int(i64),
    Str(&'a str),
}

enum Builder {
    I32(Int32Builder),
    I64(Int64Builder),
    Str(StringBuilder),
}

/// Accumulates rows into batches of [`BATCH_ROWS`].
struct Batcher {
    schema: SchemaRef,
    builders: Vec<Builder>,
    rows: usize,
}

impl Batcher {
    fn new(schema: SchemaRef) -> Self {
        let builders = schema
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::Int32 => Builder::I32(Int32Builder::with_capacity(BATCH_ROWS)),
                DataType::Int64 => Builder::I64(Int64Builder::with_capacity(BATCH_ROWS)),
                _ => Builder::Str(StringBuilder::with_capacity(BATCH_ROWS, BATCH_ROWS * 12)),
            })
            .collect();
        Batcher { schema, builders, rows: 0 }
    }

    fn push(&mut self, values: &[Value<'_>]) {
        for (b, v) in self.builders.iter_mut().zip(values) {
            match (b, v) {
                // Values fit: SSB columns declared INTEGER never exceed i32 (see schema.sql).
                (Builder::I32(b), Value::Int(i)) => b.append_value(*i as i32),
                (Builder::I64(b), Value::Int(i)) => b.append_value(*i),
                (Builder::Str(b), Value::Str(s)) => b.append_value(s),
                (Builder::Str(b), Value::Int(i)) => b.append_value(i.to_string()),
                (Builder::I32(b), Value::Str(_)) => b.append_null(),
                (Builder::I64(b), Value::Str(_)) => b.append_null(),
            }
        }
        self.rows += 1;
    }

    fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let columns: Vec<ArrayRef> = self
            .builders
            .iter_mut()
            .map(|b| match b {
                Builder::I32(b) => Arc::new(b.finish()) as ArrayRef,
                Builder::I64(b) => Arc::new(b.finish()) as ArrayRef,
                Builder::Str(b) => Arc::new(b.finish()) as ArrayRef,
            })
            .collect();
        self.rows = 0;
        RecordBatch::try_new(Arc::clone(&self.schema), columns)
    }
}

/// Turns an iterator of rows into an iterator of batches.
struct Batches<I, F> {
    rows: I,
    batcher: Batcher,
    to_values: F,
    done: bool,
}

impl<I, R, F> Iterator for Batches<I, F>
where
    I: Iterator<Item = R>,
    F: FnMut(&R, &mut Batcher),
{
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        while self.batcher.rows < BATCH_ROWS {
            match self.rows.next() {
                Some(r) => (self.to_values)(&r, &mut self.batcher),
                None => {
                    self.done = true;
                    break;
                }
            }
        }
        (self.batcher.rows > 0).then(|| self.batcher.finish())
    }
}

fn flag(b: bool) -> Value<'static> {
    Value::Int(i64::from(b))
}

/// The Arrow schema of SSB table `table`.
pub fn schema(table: &str) -> Option<SchemaRef> {
    use Col::*;
    let cols: &[Col] = match table {
        "lineorder" => &[
            I64("lo_orderkey"), I32("lo_linenumber"), I32("lo_custkey"), I32("lo_partkey"), I32("lo_suppkey"),
            I32("lo_orderdate"), Str("lo_orderpriority"), I32("lo_shippriority"), I32("lo_quantity"),
            I32("lo_extendedprice"), I32("lo_ordtotalprice"), I32("lo_discount"), I32("lo_revenue"),
            I32("lo_supplycost"), I32("lo_tax"), I32("lo_commitdate"), Str("lo_shipmode"),
        ],
        "part" => &[
            I32("p_partkey"), Str("p_name"), Str("p_mfgr"), Str("p_category"), Str("p_brand1"), Str("p_color"),
            Str("p_type"), I32("p_size"), Str("p_container"),
        ],
        "supplier" => &[
            I32("s_suppkey"), Str("s_name"), Str("s_address"), Str("s_city"), Str("s_nation"), Str("s_region"),
            Str("s_phone"),
        ],
        "customer" => &[
            I32("c_custkey"), Str("c_name"), Str("c_address"), Str("c_city"), Str("c_nation"), Str("c_region"),
            Str("c_phone"), Str("c_mktsegment"),
        ],
        "date" => &[
            I32("d_datekey"), Str("d_date"), Str("d_dayofweek"), Str("d_month"), I32("d_year"), I32("d_yearmonthnum"),
            Str("d_yearmonth"), I32("d_daynuminweek"), I32("d_daynuminmonth"), I32("d_daynuminyear"),
            I32("d_monthnuminyear"), I32("d_weeknuminyear"), Str("d_sellingseason"), I32("d_lastdayinweekfl"),
            I32("d_lastdayinmonthfl"), I32("d_holidayfl"), I32("d_weekdayfl"),
        ],
        _ => return None,
    };
    Some(schema_of(cols))
}

/// Row count of SSB table `table` at `sf`.
pub fn row_count(table: &str, sf: f64) -> i64 {
    match table {
        "lineorder" => ssb::LineOrderGenerator::row_count(sf),
        "part" => ssb::PartGenerator::row_count(sf),
        "supplier" => ssb::SupplierGenerator::row_count(sf),
        "customer" => ssb::CustomerGenerator::row_count(sf),
        "date" => ssb::DateGenerator::row_count(sf),
        _ => 0,
    }
}

/// Chunk `part` (1-based) of `parts` of SSB table `table` at `sf`, as batches.
pub fn batches(table: &str, sf: f64, part: i32, parts: i32) -> Option<BatchIter> {
    let schema = schema(table)?;
    let batcher = Batcher::new(schema);
    let it: BatchIter = match table {
        "lineorder" => Box::new(Batches {
            rows: ssb::LineOrderGenerator::new(sf, part, parts).into_iter(),
            batcher,
            done: false,
            to_values: |r: &ssb::LineOrder, b: &mut Batcher| {
                b.push(&[
                    Value::Int(r.lo_orderkey), Value::Int(r.lo_linenumber), Value::Int(r.lo_custkey),
                    Value::Int(r.lo_partkey), Value::Int(r.lo_suppkey), Value::Int(r.lo_orderdate),
                    Value::Str(r.lo_orderpriority), Value::Int(r.lo_shippriority), Value::Int(r.lo_quantity),
                    Value::Int(r.lo_extendedprice), Value::Int(r.lo_ordtotalprice), Value::Int(r.lo_discount),
                    Value::Int(r.lo_revenue), Value::Int(r.lo_supplycost), Value::Int(r.lo_tax),
                    Value::Int(r.lo_commitdate), Value::Str(r.lo_shipmode),
                ])
            },
        }),
        "part" => Box::new(Batches {
            rows: ssb::PartGenerator::new(sf, part, parts).into_iter(),
            batcher,
            done: false,
            to_values: |r: &ssb::Part, b: &mut Batcher| {
                b.push(&[
                    Value::Int(r.p_partkey), Value::Str(r.p_name.as_str()), Value::Str(r.p_mfgr.as_str()),
                    Value::Str(r.p_category.as_str()), Value::Str(r.p_brand1.as_str()), Value::Str(r.p_color),
                    Value::Str(r.p_type), Value::Int(r.p_size), Value::Str(r.p_container),
                ])
            },
        }),
        "supplier" => Box::new(Batches {
            rows: ssb::SupplierGenerator::new(sf, part, parts).into_iter(),
            batcher,
            done: false,
            to_values: |r: &ssb::Supplier, b: &mut Batcher| {
                b.push(&[
                    Value::Int(r.s_suppkey), Value::Str(r.s_name.as_str()), Value::Str(r.s_address.as_str()),
                    Value::Str(r.s_city.as_str()), Value::Str(r.s_nation), Value::Str(r.s_region),
                    Value::Str(r.s_phone.as_str()),
                ])
            },
        }),
        "customer" => Box::new(Batches {
            rows: ssb::CustomerGenerator::new(sf, part, parts).into_iter(),
            batcher,
            done: false,
            to_values: |r: &ssb::Customer, b: &mut Batcher| {
                b.push(&[
                    Value::Int(r.c_custkey), Value::Str(r.c_name.as_str()), Value::Str(r.c_address.as_str()),
                    Value::Str(r.c_city.as_str()), Value::Str(r.c_nation), Value::Str(r.c_region),
                    Value::Str(r.c_phone.as_str()), Value::Str(r.c_mktsegment),
                ])
            },
        }),
        "date" => Box::new(Batches {
            rows: ssb::DateGenerator::new(sf, part, parts).into_iter(),
            batcher,
            done: false,
            to_values: |r: &ssb::Date, b: &mut Batcher| {
                b.push(&[
                    Value::Int(r.d_datekey), Value::Str(r.d_date.as_str()), Value::Str(r.d_dayofweek),
                    Value::Str(r.d_month), Value::Int(r.d_year), Value::Int(r.d_yearmonthnum),
                    Value::Str(r.d_yearmonth.as_str()), Value::Int(r.d_daynuminweek), Value::Int(r.d_daynuminmonth),
                    Value::Int(r.d_daynuminyear), Value::Int(r.d_monthnuminyear), Value::Int(r.d_weeknuminyear),
                    Value::Str(r.d_sellingseason), flag(r.d_lastdayinweekfl), flag(r.d_lastdayinmonthfl),
                    flag(r.d_holidayfl), flag(r.d_weekdayfl),
                ])
            },
        }),
        _ => return None,
    };
    Some(it)
}
