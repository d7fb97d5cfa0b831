//! Checks the SSB generator against output of the official ssb-dbgen at SF 1, kept in
//! `tests/data/ssb-sf1-reference/` (a copy of the team's `shared/reference/ssb-sf1/`, so
//! that a fresh clone carries it):
//!
//! - `<table>.head.tbl`: the first 20 rows of each table, compared byte for byte;
//! - `fingerprint.json`: per table the row count and per column min, max, distinct count
//!   and sum (numbers) or sum of lengths (strings), compared exactly after generating
//!   all of SF 1.
//!
//! A missing reference directory is a test failure, not a skip.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::thread;

use serde_json::Value;
use tessera_bench::ssb::{
    Customer, CustomerGenerator, Date, DateGenerator, LineOrder, LineOrderGenerator, Part,
    PartGenerator, Supplier, SupplierGenerator, TblRow,
};

const REFERENCE_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/ssb-sf1-reference"
);

fn reference_file(name: &str) -> String {
    let path = PathBuf::from(REFERENCE_DIR).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "SSB reference file {} is missing or unreadable: {e}",
            path.display()
        )
    })
}

// ---------------------------------------------------------------------------------------
// First 20 rows, byte for byte.

fn check_head<R: TblRow>(table: &str, rows: impl Iterator<Item = R>) {
    let expected = reference_file(&format!("{table}.head.tbl"));
    let n = expected.lines().count();
    assert_eq!(n, 20, "{table}.head.tbl should hold 20 rows");
    let mut actual = Vec::new();
    for row in rows.take(n) {
        row.write_tbl(&mut actual);
    }
    let actual = String::from_utf8(actual).unwrap();
    if actual != expected {
        for (i, (a, e)) in actual.lines().zip(expected.lines()).enumerate() {
            if a != e {
                panic!(
                    "{table} row {} differs:\n  generated: {a}\n  reference: {e}",
                    i + 1
                );
            }
        }
        panic!("{table}: generated head differs from the reference (line count or line ends)");
    }
}

#[test]
fn lineorder_head_matches_reference() {
    check_head("lineorder", LineOrderGenerator::new(1.0, 1, 1).iter());
}

#[test]
fn part_head_matches_reference() {
    check_head("part", PartGenerator::new(1.0, 1, 1).iter());
}

#[test]
fn supplier_head_matches_reference() {
    check_head("supplier", SupplierGenerator::new(1.0, 1, 1).iter());
}

#[test]
fn customer_head_matches_reference() {
    check_head("customer", CustomerGenerator::new(1.0, 1, 1).iter());
}

#[test]
fn date_head_matches_reference() {
    check_head("date", DateGenerator::new(1.0, 1, 1).iter());
}

// ---------------------------------------------------------------------------------------
// Whole-table fingerprints.

/// A column value as the fingerprint sees it.
enum Val<'a> {
    Int(i64),
    Str(&'a str),
}

/// Distinct non-negative integers below 2^27 in a bitmap, anything else in a set.
#[derive(Default)]
struct DistinctInts {
    bits: Vec<u64>,
    other: HashSet<i64>,
}

impl DistinctInts {
    const BITMAP_LIMIT: i64 = 1 << 27;

    fn insert(&mut self, v: i64) {
        if (0..Self::BITMAP_LIMIT).contains(&v) {
            let word = (v >> 6) as usize;
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            self.bits[word] |= 1 << (v & 63);
        } else {
            self.other.insert(v);
        }
    }

    fn merge(&mut self, other: DistinctInts) {
        if other.bits.len() > self.bits.len() {
            self.bits.resize(other.bits.len(), 0);
        }
        for (a, b) in self.bits.iter_mut().zip(other.bits) {
            *a |= b;
        }
        self.other.extend(other.other);
    }

    fn len(&self) -> u64 {
        self.bits
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum::<u64>()
            + self.other.len() as u64
    }
}

enum ColumnStats {
    Empty,
    Int {
        min: i64,
        max: i64,
        sum: i128,
        distinct: DistinctInts,
    },
    Str {
        min: String,
        max: String,
        sum_of_lengths: u64,
        distinct: HashSet<String>,
    },
}

impl ColumnStats {
    fn add(&mut self, v: Val<'_>) {
        match (self, v) {
            (this @ ColumnStats::Empty, Val::Int(i)) => {
                let mut distinct = DistinctInts::default();
                distinct.insert(i);
                *this = ColumnStats::Int {
                    min: i,
                    max: i,
                    sum: i128::from(i),
                    distinct,
                };
            }
            (this @ ColumnStats::Empty, Val::Str(s)) => {
                *this = ColumnStats::Str {
                    min: s.to_owned(),
                    max: s.to_owned(),
                    sum_of_lengths: s.len() as u64,
                    distinct: HashSet::from([s.to_owned()]),
                };
            }
            (
                ColumnStats::Int {
                    min,
                    max,
                    sum,
                    distinct,
                },
                Val::Int(i),
            ) => {
                *min = (*min).min(i);
                *max = (*max).max(i);
                *sum += i128::from(i);
                distinct.insert(i);
            }
            (
                ColumnStats::Str {
                    min,
                    max,
                    sum_of_lengths,
                    distinct,
                },
                Val::Str(s),
            ) => {
                if s < min.as_str() {
                    *min = s.to_owned();
                }
                if s > max.as_str() {
                    *max = s.to_owned();
                }
                *sum_of_lengths += s.len() as u64;
                if !distinct.contains(s) {
                    distinct.insert(s.to_owned());
                }
            }
            _ => panic!("a column mixes integer and string values"),
        }
    }

    fn merge(&mut self, other: ColumnStats) {
        match (self, other) {
            (_, ColumnStats::Empty) => {}
            (this @ ColumnStats::Empty, other) => *this = other,
            (
                ColumnStats::Int {
                    min,
                    max,
                    sum,
                    distinct,
                },
                ColumnStats::Int {
                    min: min2,
                    max: max2,
                    sum: sum2,
                    distinct: distinct2,
                },
            ) => {
                *min = (*min).min(min2);
                *max = (*max).max(max2);
                *sum += sum2;
                distinct.merge(distinct2);
            }
            (
                ColumnStats::Str {
                    min,
                    max,
                    sum_of_lengths,
                    distinct,
                },
                ColumnStats::Str {
                    min: min2,
                    max: max2,
                    sum_of_lengths: len2,
                    distinct: distinct2,
                },
            ) => {
                if min2 < *min {
                    *min = min2;
                }
                if max2 > *max {
                    *max = max2;
                }
                *sum_of_lengths += len2;
                distinct.extend(distinct2);
            }
            _ => panic!("merging an integer column with a string column"),
        }
    }

    /// The statistics in fingerprint.json's shape.
    fn to_json(&self) -> BTreeMap<&'static str, Value> {
        let mut m = BTreeMap::new();
        match self {
            ColumnStats::Empty => {}
            ColumnStats::Int {
                min,
                max,
                sum,
                distinct,
            } => {
                m.insert("min", Value::from(min.to_string()));
                m.insert("max", Value::from(max.to_string()));
                m.insert("distinct", Value::from(distinct.len()));
                m.insert("sum", Value::from(sum.to_string()));
            }
            ColumnStats::Str {
                min,
                max,
                sum_of_lengths,
                distinct,
            } => {
                m.insert("min", Value::from(min.clone()));
                m.insert("max", Value::from(max.clone()));
                m.insert("distinct", Value::from(distinct.len() as u64));
                m.insert("sum_of_lengths", Value::from(sum_of_lengths.to_string()));
            }
        }
        m
    }
}

struct TableStats {
    names: &'static [&'static str],
    rows: u64,
    columns: Vec<ColumnStats>,
}

impl TableStats {
    fn new(names: &'static [&'static str]) -> Self {
        Self {
            names,
            rows: 0,
            columns: names.iter().map(|_| ColumnStats::Empty).collect(),
        }
    }

    fn add<const N: usize>(&mut self, values: [Val<'_>; N]) {
        assert_eq!(N, self.columns.len());
        self.rows += 1;
        for (col, v) in self.columns.iter_mut().zip(values) {
            col.add(v);
        }
    }

    fn merge(&mut self, other: TableStats) {
        self.rows += other.rows;
        for (a, b) in self.columns.iter_mut().zip(other.columns) {
            a.merge(b);
        }
    }

    /// Compare with the table's entry in fingerprint.json; returns the differences.
    fn compare(&self, table: &str, reference: &Value) -> Vec<String> {
        let mut diffs = Vec::new();
        let Some(expected) = reference.get(table) else {
            return vec![format!("{table}: not in fingerprint.json")];
        };
        if expected.get("rows").and_then(Value::as_u64) != Some(self.rows) {
            diffs.push(format!(
                "{table}: rows {} vs reference {}",
                self.rows, expected["rows"]
            ));
        }
        let Some(expected_columns) = expected.get("columns").and_then(Value::as_object) else {
            return vec![format!("{table}: no columns in fingerprint.json")];
        };
        let ours: HashSet<&str> = self.names.iter().copied().collect();
        let theirs: HashSet<&str> = expected_columns.keys().map(String::as_str).collect();
        if ours != theirs {
            diffs.push(format!("{table}: columns {ours:?} vs reference {theirs:?}"));
        }
        for (name, stats) in self.names.iter().zip(&self.columns) {
            let Some(exp) = expected_columns.get(*name).and_then(Value::as_object) else {
                continue;
            };
            let got = stats.to_json();
            let exp_keys: HashSet<&str> = exp.keys().map(String::as_str).collect();
            let got_keys: HashSet<&str> = got.keys().copied().collect();
            if exp_keys != got_keys {
                diffs.push(format!(
                    "{table}.{name}: statistics {got_keys:?} vs reference {exp_keys:?}"
                ));
            }
            for (key, value) in &got {
                if let Some(e) = exp.get(*key)
                    && e != value
                {
                    diffs.push(format!("{table}.{name}.{key}: {value} vs reference {e}"));
                }
            }
        }
        diffs
    }
}

const LINEORDER_COLUMNS: &[&str] = &[
    "lo_orderkey",
    "lo_linenumber",
    "lo_custkey",
    "lo_partkey",
    "lo_suppkey",
    "lo_orderdate",
    "lo_orderpriority",
    "lo_shippriority",
    "lo_quantity",
    "lo_extendedprice",
    "lo_ordtotalprice",
    "lo_discount",
    "lo_revenue",
    "lo_supplycost",
    "lo_tax",
    "lo_commitdate",
    "lo_shipmode",
];

fn lineorder_values(r: &LineOrder) -> [Val<'_>; 17] {
    use Val::{Int, Str};
    [
        Int(r.lo_orderkey),
        Int(r.lo_linenumber),
        Int(r.lo_custkey),
        Int(r.lo_partkey),
        Int(r.lo_suppkey),
        Int(r.lo_orderdate),
        Str(r.lo_orderpriority),
        Int(r.lo_shippriority),
        Int(r.lo_quantity),
        Int(r.lo_extendedprice),
        Int(r.lo_ordtotalprice),
        Int(r.lo_discount),
        Int(r.lo_revenue),
        Int(r.lo_supplycost),
        Int(r.lo_tax),
        Int(r.lo_commitdate),
        Str(r.lo_shipmode),
    ]
}

const PART_COLUMNS: &[&str] = &[
    "p_partkey",
    "p_name",
    "p_mfgr",
    "p_category",
    "p_brand1",
    "p_color",
    "p_type",
    "p_size",
    "p_container",
];

fn part_values(r: &Part) -> [Val<'_>; 9] {
    use Val::{Int, Str};
    [
        Int(r.p_partkey),
        Str(r.p_name.as_str()),
        Str(r.p_mfgr.as_str()),
        Str(r.p_category.as_str()),
        Str(r.p_brand1.as_str()),
        Str(r.p_color),
        Str(r.p_type),
        Int(r.p_size),
        Str(r.p_container),
    ]
}

const SUPPLIER_COLUMNS: &[&str] = &[
    "s_suppkey",
    "s_name",
    "s_address",
    "s_city",
    "s_nation",
    "s_region",
    "s_phone",
];

fn supplier_values(r: &Supplier) -> [Val<'_>; 7] {
    use Val::{Int, Str};
    [
        Int(r.s_suppkey),
        Str(r.s_name.as_str()),
        Str(r.s_address.as_str()),
        Str(r.s_city.as_str()),
        Str(r.s_nation),
        Str(r.s_region),
        Str(r.s_phone.as_str()),
    ]
}

const CUSTOMER_COLUMNS: &[&str] = &[
    "c_custkey",
    "c_name",
    "c_address",
    "c_city",
    "c_nation",
    "c_region",
    "c_phone",
    "c_mktsegment",
];

fn customer_values(r: &Customer) -> [Val<'_>; 8] {
    use Val::{Int, Str};
    [
        Int(r.c_custkey),
        Str(r.c_name.as_str()),
        Str(r.c_address.as_str()),
        Str(r.c_city.as_str()),
        Str(r.c_nation),
        Str(r.c_region),
        Str(r.c_phone.as_str()),
        Str(r.c_mktsegment),
    ]
}

const DATE_COLUMNS: &[&str] = &[
    "d_datekey",
    "d_date",
    "d_dayofweek",
    "d_month",
    "d_year",
    "d_yearmonthnum",
    "d_yearmonth",
    "d_daynuminweek",
    "d_daynuminmonth",
    "d_daynuminyear",
    "d_monthnuminyear",
    "d_weeknuminyear",
    "d_sellingseason",
    "d_lastdayinweekfl",
    "d_lastdayinmonthfl",
    "d_holidayfl",
    "d_weekdayfl",
];

fn date_values(r: &Date) -> [Val<'_>; 17] {
    use Val::{Int, Str};
    [
        Int(r.d_datekey),
        Str(r.d_date.as_str()),
        Str(r.d_dayofweek),
        Str(r.d_month),
        Int(r.d_year),
        Int(r.d_yearmonthnum),
        Str(r.d_yearmonth.as_str()),
        Int(r.d_daynuminweek),
        Int(r.d_daynuminmonth),
        Int(r.d_daynuminyear),
        Int(r.d_monthnuminyear),
        Int(r.d_weeknuminyear),
        Str(r.d_sellingseason),
        Int(i64::from(r.d_lastdayinweekfl)),
        Int(i64::from(r.d_lastdayinmonthfl)),
        Int(i64::from(r.d_holidayfl)),
        Int(i64::from(r.d_weekdayfl)),
    ]
}

/// Statistics of LINEORDER chunk `part` of `num_parts` at SF 1.
fn lineorder_stats(part: i32, num_parts: i32) -> TableStats {
    let mut stats = TableStats::new(LINEORDER_COLUMNS);
    for row in LineOrderGenerator::new(1.0, part, num_parts).iter() {
        stats.add(lineorder_values(&row));
    }
    stats
}

#[test]
fn sf1_fingerprints_match_reference() {
    let reference: Value = serde_json::from_str(&reference_file("fingerprint.json")).unwrap();

    // LINEORDER (6 million rows) in two chunks on two threads; the dimensions alongside.
    let (lineorder, dims) = thread::scope(|s| {
        let second_half = s.spawn(|| lineorder_stats(2, 2));
        let dims = s.spawn(|| {
            let mut part = TableStats::new(PART_COLUMNS);
            PartGenerator::new(1.0, 1, 1)
                .iter()
                .for_each(|r| part.add(part_values(&r)));
            let mut supplier = TableStats::new(SUPPLIER_COLUMNS);
            SupplierGenerator::new(1.0, 1, 1)
                .iter()
                .for_each(|r| supplier.add(supplier_values(&r)));
            let mut customer = TableStats::new(CUSTOMER_COLUMNS);
            CustomerGenerator::new(1.0, 1, 1)
                .iter()
                .for_each(|r| customer.add(customer_values(&r)));
            let mut date = TableStats::new(DATE_COLUMNS);
            DateGenerator::new(1.0, 1, 1)
                .iter()
                .for_each(|r| date.add(date_values(&r)));
            [
                ("part", part),
                ("supplier", supplier),
                ("customer", customer),
                ("date", date),
            ]
        });
        let mut lineorder = lineorder_stats(1, 2);
        lineorder.merge(second_half.join().unwrap());
        (lineorder, dims.join().unwrap())
    });

    let mut diffs = lineorder.compare("lineorder", &reference);
    for (table, stats) in &dims {
        diffs.extend(stats.compare(table, &reference));
    }
    let tables: HashSet<&str> = reference
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let expected_tables = HashSet::from(["lineorder", "part", "supplier", "customer", "date"]);
    if tables != expected_tables {
        diffs.push(format!("tables in fingerprint.json: {tables:?}"));
    }
    assert!(
        diffs.is_empty(),
        "SF 1 fingerprint differences:\n{}",
        diffs.join("\n")
    );
}

#[test]
fn lineorder_row_count_matches_reference() {
    let reference: Value = serde_json::from_str(&reference_file("fingerprint.json")).unwrap();
    let expected = reference["lineorder"]["rows"].as_i64();
    assert_eq!(Some(LineOrderGenerator::row_count(1.0)), expected);
    assert_eq!(
        Some(PartGenerator::row_count(1.0)),
        reference["part"]["rows"].as_i64()
    );
    assert_eq!(
        Some(SupplierGenerator::row_count(1.0)),
        reference["supplier"]["rows"].as_i64()
    );
    assert_eq!(
        Some(CustomerGenerator::row_count(1.0)),
        reference["customer"]["rows"].as_i64()
    );
    assert_eq!(
        Some(DateGenerator::row_count(1.0)),
        reference["date"]["rows"].as_i64()
    );
}
