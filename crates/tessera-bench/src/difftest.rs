//! Randomized differential testing of the GPU backend against the CPU backend and plain
//! DataFusion (`tessera difftest`, and `cargo test` through `tests/difftest.rs`).
//!
//! Random tables (a fact table `f`, a dimension `d1` with unique keys, a dimension `d2`
//! with duplicate keys and `d3`, d1's keys spread too far apart for a dense table) are
//! loaded in several sizes chosen around the GPU's tile of 512 rows (0, 1, 511, 512, 513
//! rows) and one larger case (200k rows, more than 65536 groups in a GROUP BY). Queries come from templates with random constants: filters,
//! string predicates on dictionary columns, inner/semi/anti joins, joins against
//! duplicate keys, joins and aggregations through open-addressing hash tables (sparse,
//! two-column and computed keys), grouped and scalar aggregates, nullable columns
//! (aggregated, filtered, grouped by and joined on: NULLs on the GPU through validity
//! bitmaps, `f.u` and `f.um` NULL in most rows), outer joins, sorts, exact decimal sums
//! that overflow BIGINT and sums that must fail with an overflow.
//!
//! Each query runs three ways and the answers (every value as text, rows sorted) must be
//! equal, or all three must fail:
//!
//! - `SET tessera.device = 'gpu'`: every pipeline the GPU code generator supports runs on
//!   the GPU (without a GPU this is the CPU backend again);
//! - `SET tessera.device = 'cpu'`: the CPU backend only;
//! - `SET tessera.engine = 'datafusion'`: plain DataFusion, the reference;
//! - where the plan shaped for the CPU runs a semi/anti join from its large side (which
//!   the plan shaped for the GPU never does), that shape on the GPU too
//!   (`tessera.plan_for = 'cpu'`): the GPU's mark kernels.
//!
//! The one allowed difference: a query marked as overflowing may fail with an overflow on
//! the pipelines while plain DataFusion returns a wrapped value (DataFusion wraps integer
//! overflow; see `tests/slt/types.slt`). Both pipeline paths must still agree.
//!
//! The report counts the queries that EXPLAIN places at least partly on the GPU (under
//! `tessera.device = 'gpu'`); [`DiffReport::problems`] with `require_gpu` also fails a run
//! without a GPU or with fewer than half of the queries on it (the device run sets
//! `TESSERA_REQUIRE_GPU=1`).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::compute::cast;
use arrow::datatypes::DataType;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use tessera_engine::{QueryOutput, Session};

/// The default seed.
pub const DEFAULT_SEED: u64 = 0x7e55_e7a0_2026;

/// xorshift64* — deterministic, no dependencies.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        for _ in 0..4 {
            r.next();
        }
        r
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next() as u128 % span) as i128) as i64
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - p
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// One data set: table sizes and the range of the grouping column `g`.
struct Case {
    name: &'static str,
    f_rows: usize,
    d1_rows: usize,
    d2_rows: usize,
    g_range: i64,
    /// How many queries each template yields (different random constants).
    repeats: usize,
}

const CASES: &[Case] = &[
    // > 65536 distinct g (and ~390 GPU tiles); d2 has ~5 rows per key.
    Case { name: "large", f_rows: 200_000, d1_rows: 1000, d2_rows: 3000, g_range: 150_000, repeats: 2 },
    Case { name: "f513", f_rows: 513, d1_rows: 512, d2_rows: 511, g_range: 300, repeats: 1 },
    Case { name: "f512", f_rows: 512, d1_rows: 1, d2_rows: 0, g_range: 100, repeats: 1 },
    Case { name: "f511", f_rows: 511, d1_rows: 0, d2_rows: 1, g_range: 600, repeats: 1 },
    Case { name: "f1", f_rows: 1, d1_rows: 513, d2_rows: 512, g_range: 10, repeats: 1 },
    Case { name: "f0", f_rows: 0, d1_rows: 511, d2_rows: 513, g_range: 10, repeats: 1 },
];

/// Values of the low-cardinality string column `f.s` (the first is the common one).
const S_VALUES: &[&str] = &["ASIA", "AFRICA", "AMERICA", "EUROPE", "MIDDLE EAST", "under_score", "100% pure"];
const REGIONS: &[&str] = &["ASIA", "AFRICA", "AMERICA", "EUROPE", "MIDDLE EAST"];
const TAGS: &[&str] = &["red", "green", "blue", "black"];
/// Words of `f.t`, a string column of one value a row (too many for a dictionary in the
/// large case: the GPU matches LIKE over its bytes), multi-byte characters and LIKE's
/// wildcards among them.
const WORDS: &[&str] = &["green", "forest", "special", "requests", "\u{fc}n\u{ef}", "\u{65e5}\u{672c}", "pure_%", "a"];
/// The spread of `d3`'s keys (see `load`).
const SPARSE: i64 = 1_000_003;
/// Days since 1970-01-01 of 1992-01-01; `f.day` spans 1992..=1998.
const DAY0: i64 = 8035;
const DAYS: i64 = 2557;

/// What the query generator needs to know about the data.
struct Info {
    /// Largest value of `f.k1` (d1's keys are 1..=k1_max - 5 with gaps).
    k1_max: i64,
    g_range: i64,
    f_rows: i64,
}

/// `YYYY-MM-DD` of a day number since 1970-01-01.
fn date(days: i64) -> String {
    i32::try_from(days)
        .ok()
        .and_then(arrow::temporal_conversions::date32_to_datetime)
        .map_or_else(|| "1970-01-01".to_string(), |d| d.date().to_string())
}

/// A decimal with two digits after the point from its value in hundredths.
fn cents(v: i64) -> String {
    let sign = if v < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", v.abs() / 100, v.abs() % 100)
}

/// Writes the three tables as CSV files under `dir`, creates them in the store and loads
/// them with COPY.
async fn load(session: &Session, dir: &Path, case: &Case, rng: &mut Rng) -> Result<Info, String> {
    // d1: unique keys 1..=d1_max with ~10% gaps.
    let mut d1_keys = Vec::with_capacity(case.d1_rows);
    let mut k = 0i64;
    while d1_keys.len() < case.d1_rows {
        k += 1;
        if !rng.chance(0.1) {
            d1_keys.push(k);
        }
    }
    let d1_max = d1_keys.last().copied().unwrap_or(1).max(1);
    // Some fact keys have no dimension row: gaps, keys above the last, and keys below the
    // first (negative ones too, for the GPU's unsigned range test).
    let (k1_min, k1_max) = (-3, d1_max + 5);
    let d2_max = (d1_max / 2).max(1);

    // `nick`: a nullable string with a dictionary (every fifth NULL), from the key alone.
    let mut csv = String::from("d1k,name,region,cat,w,nick\n");
    for &key in &d1_keys {
        let nick = if key % 5 == 0 { String::new() } else { format!("{}{}", ["ash", "bo", "cy"][(key % 3) as usize], key % 11) };
        let _ = writeln!(
            csv,
            "{key},n{},{},{},{},{nick}",
            key % 37,
            rng.pick(REGIONS),
            rng.range(0, 9),
            cents(rng.range(-99_999, 9_999_999))
        );
    }
    let d1_csv = dir.join("d1.csv");
    std::fs::write(&d1_csv, &csv).map_err(|e| format!("writing {}: {e}", d1_csv.display()))?;

    csv = String::from("d2k,tag,z,q\n");
    for _ in 0..case.d2_rows {
        let q = if rng.chance(0.2) { String::new() } else { rng.range(0, d1_max).to_string() };
        let _ = writeln!(csv, "{},{},{},{q}", rng.range(1, d2_max), rng.pick(TAGS), rng.range(0, 1000));
    }
    let d2_csv = dir.join("d2.csv");
    std::fs::write(&d2_csv, &csv).map_err(|e| format!("writing {}: {e}", d2_csv.display()))?;

    // d3: d1's keys spread far apart (`d3k = d1k × SPARSE`, too sparse for a dense table:
    // GPU joins on it build open-addressing tables), with a second key column `d3b`.
    csv = String::from("d3k,d3b,tag3,c3\n");
    for &key in &d1_keys {
        let _ = writeln!(csv, "{},{},{},{}", key * SPARSE, key % 50, rng.pick(TAGS), rng.range(0, 9));
    }
    let d3_csv = dir.join("d3.csv");
    std::fs::write(&d3_csv, &csv).map_err(|e| format!("writing {}: {e}", d3_csv.display()))?;

    let f_csv = dir.join("f.csv");
    {
        let io = |e: std::io::Error| format!("writing {}: {e}", f_csv.display());
        let file = std::fs::File::create(&f_csv).map_err(io)?;
        let mut out = std::io::BufWriter::new(file);
        writeln!(out, "id,k1,k2,g,v,m,day,s,n,big,r,k3,t,u,um").map_err(io)?;
        for id in 1..=case.f_rows as i64 {
            let k2 = if rng.chance(0.8) { 7 } else { rng.range(0, 49) };
            // Mostly d3's keys (d1's times SPARSE), some in between.
            let k1_3 = rng.range(k1_min, k1_max);
            let k3 = if rng.chance(0.9) { k1_3 * SPARSE } else { k1_3 * SPARSE + rng.range(1, 1000) };
            let s = if rng.chance(0.4) { S_VALUES[0] } else { rng.pick(S_VALUES) };
            let n = if rng.chance(0.1) { String::new() } else { rng.range(-100, 100).to_string() };
            let t = format!("{} {id} {}", rng.pick(WORDS), rng.pick(WORDS));
            // `u` and `um`: NULL wherever k2 = 7 (most rows: a group of NULLs only) and
            // `um` every fifth row too; from the row alone (the random stream, and so the
            // other columns and the queries, stay as they were without them).
            let u = if k2 == 7 { String::new() } else { (((id * 7919) % 2001) - 1000).to_string() };
            let um = if k2 == 7 || id % 5 == 0 { String::new() } else { cents(((id * 37) % 200_001) - 100_000) };
            writeln!(
                out,
                "{id},{},{k2},{},{},{},{},{s},{n},{},{}.{:03},{k3},{t},{u},{um}",
                rng.range(k1_min, k1_max),
                rng.range(0, case.g_range - 1),
                rng.range(-1_000_000, 1_000_000),
                cents(rng.range(-9_999_999, 9_999_999)),
                date(DAY0 + rng.range(0, DAYS - 1)),
                rng.range(1 << 61, (1 << 62) - 1),
                rng.range(0, 1),
                rng.range(0, 999),
            )
            .map_err(io)?;
        }
        out.flush().map_err(io)?;
    }

    let ddl = [
        // f.t's 200 000 values stay without a dictionary (as under the store's default
        // before 2026-11-25): LIKE over their bytes on the GPU is one of the paths tested.
        "SET tessera.dictionary_max_distinct = 65536".to_string(),
        "CREATE TABLE f (id BIGINT NOT NULL, k1 INT NOT NULL, k2 INT NOT NULL, g BIGINT NOT NULL, \
         v BIGINT NOT NULL, m DECIMAL(12,2) NOT NULL, day DATE NOT NULL, s VARCHAR NOT NULL, n INT, \
         big BIGINT NOT NULL, r DOUBLE NOT NULL, k3 BIGINT NOT NULL, t VARCHAR NOT NULL, u BIGINT, um DECIMAL(12,2))"
            .to_string(),
        "CREATE TABLE d1 (d1k INT NOT NULL, name VARCHAR NOT NULL, region VARCHAR NOT NULL, cat INT NOT NULL, \
         w DECIMAL(10,2) NOT NULL, nick VARCHAR)"
            .to_string(),
        "CREATE TABLE d2 (d2k INT NOT NULL, tag VARCHAR NOT NULL, z BIGINT NOT NULL, q INT)".to_string(),
        "CREATE TABLE d3 (d3k BIGINT NOT NULL, d3b INT NOT NULL, tag3 VARCHAR NOT NULL, c3 INT NOT NULL)".to_string(),
        format!("COPY f FROM '{}'", f_csv.display()),
        format!("COPY d1 FROM '{}'", d1_csv.display()),
        format!("COPY d2 FROM '{}'", d2_csv.display()),
        format!("COPY d3 FROM '{}'", d3_csv.display()),
    ];
    for statement in &ddl {
        session.execute(statement).await.map_err(|e| format!("{statement}: {e}"))?;
    }
    for (table, rows) in [("f", case.f_rows), ("d1", case.d1_rows), ("d2", case.d2_rows), ("d3", case.d1_rows)] {
        let counted = run(session, &format!("SELECT COUNT(*) FROM {table}")).await?;
        if counted != vec![rows.to_string()] {
            return Err(format!("case {}: {counted:?} rows loaded into {table}, not {rows}", case.name));
        }
    }
    Ok(Info { k1_max, g_range: case.g_range, f_rows: case.f_rows as i64 })
}

/// One generated query.
struct Query {
    sql: String,
    /// The pipelines may fail with an overflow where plain DataFusion wraps.
    may_overflow: bool,
}

/// Number of query templates.
pub const TEMPLATES: usize = 108;

/// Cases (data sets) per run and queries per template in each: every run has
/// [`TEMPLATES`] × this many queries.
pub fn queries_per_template() -> usize {
    CASES.iter().map(|c| c.repeats).sum()
}

/// LIKE patterns over `f.t`'s words and numbers.
const LIKE_PATTERNS: &[&str] =
    &["%green%", "forest%", "%special%requests%", "%\u{65e5}_%", "_\u{fc}%", "%1_ %", "%3", "a %", "%pure_%%", "x%", "%", "%e%e%e%"];

/// A LIKE pattern over `f.t`.
fn like_pattern(rng: &mut Rng) -> &'static str {
    rng.pick::<&str>(LIKE_PATTERNS)
}

/// Template `t` with random constants.
fn template(t: usize, rng: &mut Rng, info: &Info) -> Query {
    let k2 = |rng: &mut Rng| -> i64 {
        match rng.below(10) {
            0..=3 => 7,
            4 => 999,
            _ => rng.range(0, 49),
        }
    };
    let v = |rng: &mut Rng| rng.range(-1_100_000, 1_100_000);
    let day = |rng: &mut Rng| date(DAY0 - 200 + rng.range(0, DAYS + 400));
    let s = |rng: &mut Rng| -> &'static str { if rng.chance(0.1) { "NOPE" } else { *rng.pick(S_VALUES) } };
    let k1 = |rng: &mut Rng| rng.range(0, info.k1_max + 1);
    let cat = |rng: &mut Rng| rng.range(-1, 10);
    let mut may_overflow = false;
    let sql = match t {
        // Filters and scalar aggregates.
        0 => format!("SELECT COUNT(*), SUM(v), MIN(v), MAX(v) FROM f WHERE k2 = {}", k2(rng)),
        1 => {
            let (a, b) = (k1(rng), k1(rng));
            format!("SELECT SUM(v), COUNT(*) FROM f WHERE v < {} AND k1 BETWEEN {} AND {}", v(rng), a.min(b), a.max(b))
        }
        2 => {
            let (a, b) = (day(rng), day(rng));
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            format!("SELECT SUM(m), AVG(m), MIN(m), MAX(m), COUNT(*) FROM f WHERE day BETWEEN DATE '{a}' AND DATE '{b}'")
        }
        3 => format!("SELECT COUNT(*), SUM(m * 2), SUM(v * k2) FROM f WHERE s = '{}'", s(rng)),
        4 => format!(
            "SELECT s, COUNT(*), SUM(v), AVG(m) FROM f WHERE s IN ('{}', '{}', '{}') GROUP BY s",
            s(rng),
            s(rng),
            s(rng)
        ),
        5 => {
            let pattern = rng.pick(&["A%", "%A", "%ER%", "_SIA", "%", "100%", "%e%", "under_s%", "x%"]);
            format!("SELECT s, SUM(m), MIN(day), MAX(day) FROM f WHERE s LIKE '{pattern}' GROUP BY s")
        }
        // Everything filtered out: one row of NULLs / no groups.
        6 => format!(
            "SELECT COUNT(*), SUM(v), MIN(v), MAX(m), AVG(m) FROM f WHERE v > {}",
            1_000_000 + rng.range(0, 1000)
        ),
        7 => format!("SELECT k2, COUNT(*), SUM(v) FROM f WHERE v > 2000000 AND k2 = {} GROUP BY k2", k2(rng)),
        // GROUP BY from 1 group to > 65536 groups.
        8 => format!("SELECT k2, COUNT(*), SUM(v), MIN(m), MAX(m) FROM f WHERE k1 > {} GROUP BY k2", k1(rng) / 4),
        9 => "SELECT g, COUNT(*), SUM(v), MIN(m), MAX(day) FROM f GROUP BY g".to_string(),
        10 => format!(
            "SELECT g, SUM(v), COUNT(*) FROM f WHERE g < {} AND k2 IN ({}, {}) GROUP BY g",
            rng.range(0, info.g_range),
            k2(rng),
            k2(rng)
        ),
        11 => "SELECT EXTRACT(YEAR FROM day) AS y, SUM(m), COUNT(*) FROM f GROUP BY EXTRACT(YEAR FROM day)".to_string(),
        12 => format!("SELECT day, COUNT(*), SUM(v) FROM f WHERE day < DATE '{}' GROUP BY day", day(rng)),
        13 => format!("SELECT s, k2, COUNT(*), SUM(m) FROM f WHERE k1 < {} GROUP BY s, k2", k1(rng)),
        // Inner joins with d1 (unique, dense keys; some fact keys missing).
        14 => format!(
            "SELECT d1.region, COUNT(*), SUM(f.v), SUM(d1.w) FROM f JOIN d1 ON f.k1 = d1.d1k WHERE d1.cat < {} GROUP BY d1.region",
            cat(rng)
        ),
        15 => format!(
            "SELECT COUNT(*), SUM(f.m), MIN(f.v), MAX(d1.cat) FROM f JOIN d1 ON f.k1 = d1.d1k \
             WHERE f.s = '{}' AND d1.region IN ('{}', '{}')",
            s(rng),
            rng.pick(REGIONS),
            rng.pick(REGIONS)
        ),
        16 => format!(
            "SELECT d1.cat, f.s, SUM(f.v), COUNT(*) FROM f, d1 WHERE f.k1 = d1.d1k AND f.day >= DATE '{}' GROUP BY d1.cat, f.s",
            day(rng)
        ),
        17 => format!(
            "SELECT d1.name, COUNT(*), SUM(f.m) FROM f JOIN d1 ON f.k1 = d1.d1k WHERE d1.name LIKE '{}' GROUP BY d1.name",
            rng.pick(&["n1%", "n2_", "%3", "n%", "zz%"])
        ),
        // Semi and anti joins.
        18 => format!("SELECT COUNT(*), SUM(v) FROM f WHERE k1 IN (SELECT d1k FROM d1 WHERE cat = {})", cat(rng)),
        19 => format!(
            "SELECT s, COUNT(*) FROM f WHERE EXISTS (SELECT 1 FROM d1 WHERE d1.d1k = f.k1 AND d1.region = '{}') GROUP BY s",
            rng.pick(REGIONS)
        ),
        20 => format!(
            "SELECT COUNT(*), SUM(v) FROM f WHERE NOT EXISTS (SELECT 1 FROM d1 WHERE d1.d1k = f.k1) AND k2 <> {}",
            k2(rng)
        ),
        21 => format!("SELECT COUNT(*), SUM(m) FROM f WHERE k1 NOT IN (SELECT d1k FROM d1 WHERE cat > {})", cat(rng)),
        // d2: duplicate keys (a GPU build must give up and the CPU take over).
        22 => format!(
            "SELECT COUNT(*), SUM(f.v), SUM(d2.z) FROM f JOIN d2 ON f.k1 = d2.d2k WHERE f.k2 = {}",
            k2(rng)
        ),
        23 => "SELECT d2.tag, COUNT(*), SUM(f.m) FROM f JOIN d2 ON f.k1 = d2.d2k GROUP BY d2.tag".to_string(),
        24 => format!("SELECT COUNT(*), SUM(v) FROM f WHERE k1 IN (SELECT d2k FROM d2 WHERE z > {})", rng.range(-1, 1000)),
        25 => format!(
            "SELECT d1.region, d2.tag, COUNT(*), SUM(f.v) FROM f JOIN d1 ON f.k1 = d1.d1k JOIN d2 ON f.k1 = d2.d2k \
             WHERE d1.cat < {} GROUP BY d1.region, d2.tag",
            cat(rng)
        ),
        // Exact sums past the BIGINT range, and sums that must overflow.
        26 => format!("SELECT SUM(CAST(big AS DECIMAL(38,0))), COUNT(*) FROM f WHERE k2 = {}", k2(rng)),
        27 => "SELECT s, SUM(CAST(big AS DECIMAL(38,0))), MAX(big), MIN(big) FROM f GROUP BY s".to_string(),
        28 => {
            may_overflow = true;
            format!("SELECT SUM(big) FROM f WHERE k2 = {}", k2(rng))
        }
        29 => {
            may_overflow = true;
            format!("SELECT COUNT(*) FROM f WHERE big * 4 > {}", v(rng))
        }
        // The nullable column.
        30 => format!("SELECT COUNT(n), SUM(n), MIN(n), MAX(n), AVG(n), COUNT(*) FROM f WHERE k2 = {}", k2(rng)),
        31 => "SELECT n, COUNT(*), SUM(v) FROM f GROUP BY n".to_string(),
        32 => format!(
            "SELECT s, SUM(n), COUNT(n) FROM f WHERE n IS NULL OR n > {} GROUP BY s",
            rng.range(-110, 110)
        ),
        33 => format!(
            "SELECT COUNT(*) FROM f WHERE n NOT IN ({}, {}, {})",
            rng.range(-100, 100),
            rng.range(-100, 100),
            rng.range(-100, 100)
        ),
        // Outer joins, materialized rows, sorts, DISTINCT, HAVING, CASE, floats.
        34 => format!(
            "SELECT d1.region, COUNT(f.id), SUM(f.v) FROM d1 LEFT JOIN f ON f.k1 = d1.d1k AND f.k2 = {} GROUP BY d1.region",
            k2(rng)
        ),
        35 => format!(
            "SELECT COUNT(*), COUNT(d1.d1k), SUM(d1.cat) FROM f LEFT JOIN d1 ON f.k1 = d1.d1k WHERE f.v < {}",
            v(rng)
        ),
        36 => format!("SELECT id, k1, s, day, m, n FROM f WHERE id % 997 = {}", rng.range(0, 996)),
        37 => format!("SELECT id, v, s FROM f WHERE v > {} ORDER BY v DESC, id LIMIT 7", v(rng)),
        38 => format!("SELECT DISTINCT s, k2 FROM f WHERE k2 < {}", rng.range(0, 50)),
        39 => format!("SELECT k1, SUM(v), COUNT(*) FROM f GROUP BY k1 HAVING COUNT(*) > {}", rng.range(0, 250)),
        40 => format!(
            "SELECT k2, SUM(CASE WHEN s = '{}' THEN v ELSE 0 END), COUNT(*) FROM f GROUP BY k2",
            s(rng)
        ),
        41 => format!(
            "SELECT COUNT(*), SUM(v), MIN(r), MAX(r) FROM f WHERE r < {}.{:03}",
            rng.range(0, 1),
            rng.range(0, 999)
        ),
        42 => "SELECT k2, COUNT(DISTINCT s), MIN(s), MAX(s) FROM f GROUP BY k2".to_string(),
        43 => {
            let list: Vec<String> = (0..rng.range(1, 8)).map(|_| k1(rng).to_string()).collect();
            format!("SELECT COUNT(*), SUM(v), AVG(v) FROM f WHERE k1 IN ({}) AND s <> '{}'", list.join(", "), s(rng))
        }
        44 => "SELECT d1.region, SUM(f.v), COUNT(*) FROM f JOIN d1 ON f.k1 = d1.d1k WHERE f.k1 IN (SELECT d2k FROM d2) GROUP BY d1.region"
            .to_string(),
        45 => format!(
            "SELECT COUNT(*), SUM(f.v) FROM f JOIN d2 ON f.k1 = d2.d2k AND f.v > d2.z * {}",
            rng.range(0, 2000)
        ),
        46 => format!("SELECT COUNT(*), SUM(v) FROM f WHERE k1 NOT IN (SELECT q FROM d2 WHERE z < {})", rng.range(0, 1000)),
        47 => {
            // Bounds at and around the tile edges (511, 512, 513, 1024, ...).
            let edges = [0, 1, 2, 510, 511, 512, 513, 514, 1023, 1024, 1025, info.f_rows - 1, info.f_rows, info.f_rows + 1];
            let (a, b) = (*rng.pick(&edges), *rng.pick(&edges));
            format!("SELECT SUM(v), COUNT(*), MIN(id), MAX(id) FROM f WHERE id BETWEEN {} AND {}", a.min(b), a.max(b))
        }
        // Rows materialized (on the GPU: compacted with one atomic per warp).
        48 => format!("SELECT id, k1, k2, s, day, m FROM f WHERE k2 = {} AND v < {}", k2(rng), v(rng)),
        49 => format!(
            "SELECT f.id, f.v, d1.region, d1.w FROM f JOIN d1 ON f.k1 = d1.d1k WHERE f.k2 = {} AND d1.cat < {}",
            k2(rng),
            cat(rng)
        ),
        // Open-addressing hash tables: joins on sparse and two-column keys, semi/anti
        // joins on them, a build with duplicate keys, and aggregations whose groups have
        // no small dense domain.
        51 => format!(
            "SELECT d3.tag3, COUNT(*), SUM(f.v), SUM(d3.c3) FROM f JOIN d3 ON f.k3 = d3.d3k WHERE d3.c3 < {} GROUP BY d3.tag3",
            rng.range(-1, 10)
        ),
        52 => format!(
            "SELECT COUNT(*), SUM(f.m), MAX(d3.c3) FROM f JOIN d3 ON f.k3 = d3.d3k AND f.k2 = d3.d3b WHERE f.v < {}",
            v(rng)
        ),
        53 => format!(
            "SELECT COUNT(*), SUM(v) FROM f WHERE k3 {} (SELECT d3k FROM d3 WHERE c3 > {})",
            rng.pick(&["IN", "NOT IN"]),
            rng.range(-1, 10)
        ),
        54 => format!(
            "SELECT g, k2, COUNT(*), SUM(v), MIN(m), MAX(day) FROM f WHERE k1 > {} GROUP BY g, k2",
            k1(rng) / 4
        ),
        55 => format!("SELECT big, COUNT(*), SUM(v), AVG(m) FROM f WHERE k2 = {} GROUP BY big", k2(rng)),
        56 => format!("SELECT k3, s, SUM(m), COUNT(*) FROM f WHERE day < DATE '{}' GROUP BY k3, s", day(rng)),
        57 => format!(
            "SELECT f.k3, d3.tag3, SUM(f.v), COUNT(*) FROM f JOIN d3 ON f.k3 = d3.d3k WHERE f.k2 <> {} GROUP BY f.k3, d3.tag3",
            k2(rng)
        ),
        58 => format!(
            "SELECT COUNT(*), SUM(f.v) FROM f JOIN d2 ON f.k3 = d2.z * {SPARSE} WHERE d2.tag <> '{}'",
            rng.pick(TAGS)
        ),
        // Aggregations over joins computed below the join (eager aggregation): grouped
        // by the left side, aggregates of the right side, left and inner joins.
        59 => format!(
            "SELECT d1.d1k, COUNT(*), COUNT(f.n), SUM(f.m), MIN(f.day), MAX(f.v) FROM d1 LEFT JOIN f ON f.k1 = d1.d1k \
             WHERE d1.cat < {} GROUP BY d1.d1k",
            rng.range(0, 12)
        ),
        60 => format!(
            "SELECT d1.region, d1.cat, COUNT(f.id), SUM(f.v), MAX(f.m) FROM d1 JOIN f ON f.k1 = d1.d1k \
             WHERE f.k2 <> {} GROUP BY d1.region, d1.cat",
            k2(rng)
        ),
        // Join conditions beyond the keys (residuals) and string tests of a build's
        // payload columns, as TPC-H q07, q08, q12, q14 and q19 have them.
        61 => format!(
            "SELECT d1.region, COUNT(*), SUM(f.v) FROM f JOIN d1 ON f.k1 = d1.d1k AND (d1.region = '{}' OR f.k2 = {}) \
             GROUP BY d1.region",
            rng.pick(REGIONS),
            k2(rng)
        ),
        62 => format!(
            "SELECT f.k2, SUM(CASE WHEN d1.name LIKE '{}' THEN f.v ELSE 0 END), COUNT(*) FROM f JOIN d1 ON f.k1 = d1.d1k \
             WHERE f.k2 < {} GROUP BY f.k2",
            rng.pick(&["n1%", "n2_", "%3", "n%", "zz%"]),
            rng.range(0, 50)
        ),
        63 => format!(
            "SELECT COUNT(*), SUM(f.v) FROM f WHERE {} (SELECT 1 FROM d3 WHERE d3.d3k = f.k3 AND (d3.c3 > f.k2 % 10 OR d3.tag3 = '{}'))",
            rng.pick(&["EXISTS", "NOT EXISTS"]),
            rng.pick(TAGS)
        ),
        64 => {
            let (r1, r2, t1, t2) = (rng.pick(REGIONS), rng.pick(REGIONS), rng.pick(TAGS), rng.pick(TAGS));
            format!(
                "SELECT d1.region, d3.tag3, SUM(f.m), COUNT(*) FROM f JOIN d1 ON f.k1 = d1.d1k JOIN d3 ON f.k3 = d3.d3k \
                 WHERE (d1.region = '{r1}' AND d3.tag3 = '{t1}') OR (d1.region = '{r2}' AND d3.tag3 = '{t2}') GROUP BY d1.region, d3.tag3"
            )
        }
        // LIKE over a string column without a dictionary (in the large case): in a
        // probe pipeline, under NOT, and in a build (TPC-H q09, q13, q20).
        65 => format!(
            "SELECT k2, COUNT(*), SUM(v) FROM f WHERE t {}LIKE '{}' GROUP BY k2",
            rng.pick(&["", "NOT "]),
            like_pattern(rng)
        ),
        66 => format!(
            "SELECT d1.region, COUNT(*), SUM(f.m) FROM f JOIN d1 ON f.k1 = d1.d1k WHERE f.t LIKE '{}' AND f.k2 <> {} GROUP BY d1.region",
            like_pattern(rng),
            k2(rng)
        ),
        67 => format!(
            "SELECT d1.cat, COUNT(*) FROM d1 WHERE d1.d1k IN (SELECT k1 FROM f WHERE t LIKE '{}' AND v > {}) GROUP BY d1.cat",
            like_pattern(rng),
            v(rng)
        ),
        // 1:N joins (on the GPU: chained tables): both sides' keys repeat, so the build
        // has several rows a key and each probe row expands into its matches; skewed
        // keys (80% of f.k2 is 7); EXISTS / NOT EXISTS with a residual over repeated
        // keys (a walk along the matches until the residual holds, TPC-H q21); a probe
        // after the expansion.
        68 => format!(
            "SELECT a.k2, COUNT(*), SUM(b.v), MAX(b.m) FROM f a JOIN f b ON a.k1 = b.k1 WHERE a.v < {} AND b.k2 <> {} GROUP BY a.k2",
            rng.range(-1_000_000, -960_000),
            k2(rng)
        ),
        69 => format!(
            "SELECT b.k1, COUNT(*), SUM(a.v), MIN(b.day) FROM f a JOIN f b ON a.k2 = b.k2 WHERE a.id <= {} AND b.v > {} GROUP BY b.k1",
            rng.range(0, 20),
            v(rng)
        ),
        70 => format!(
            "SELECT COUNT(*), SUM(a.v) FROM f a WHERE a.v < {} AND {} (SELECT 1 FROM f b WHERE b.k1 = a.k1 AND b.k2 <> a.k2 AND b.v > {})",
            rng.range(-1_000_000, -900_000),
            rng.pick(&["EXISTS", "NOT EXISTS"]),
            rng.range(-1_000_000, 1_100_000)
        ),
        71 => format!(
            "SELECT d1.region, d2.tag, COUNT(*), SUM(d2.z), SUM(f.m) FROM f JOIN d2 ON f.k2 = d2.d2k JOIN d1 ON f.k1 = d1.d1k \
             WHERE d1.cat < {} GROUP BY d1.region, d2.tag",
            cat(rng)
        ),
        // Expressions over a nullable dictionary column: NULL codes take the expression's
        // value for a NULL (IS NULL and COALESCE are not NULL for one).
        72 => format!(
            "SELECT d1.cat, COUNT(*), COUNT(d1.nick), SUM(CASE WHEN d1.nick IS NULL THEN f.v ELSE 0 END), \
             SUM(CASE WHEN COALESCE(d1.nick, 'ash0') LIKE '{}' THEN 1 ELSE 0 END) FROM f JOIN d1 ON f.k1 = d1.d1k \
             WHERE d1.nick IS NULL OR d1.nick <> '{}' GROUP BY d1.cat",
            rng.pick(&["ash%", "%1", "bo_", "%"]),
            rng.pick(&["ash1", "bo2", "cy10", "zz"])
        ),
        // HAVING over many groups (on the GPU: comparisons of aggregates with constants
        // drop groups before they are downloaded): over a hash aggregation, as TPC-H
        // q18's subquery feeding a semi join, with ORDER BY, and mixed with what only the
        // CPU tests (AVG, OR).
        73 => format!(
            "SELECT k3, SUM(m), COUNT(*), MAX(day) FROM f GROUP BY k3 HAVING SUM(m) > {} AND COUNT(*) >= {}",
            cents(rng.range(-30_000_000, 30_000_000)),
            rng.range(0, 4)
        ),
        74 => format!(
            "SELECT k2, COUNT(*), SUM(v) FROM f WHERE k3 IN (SELECT k3 FROM f GROUP BY k3 HAVING SUM(v) > {}) GROUP BY k2",
            rng.range(-3_000_000, 3_000_000)
        ),
        75 => format!(
            "SELECT g, MIN(day), MAX(v), COUNT(*) FROM f GROUP BY g HAVING MIN(day) >= DATE '{}' AND MAX(v) < {} ORDER BY g LIMIT 20",
            day(rng),
            v(rng)
        ),
        76 => format!(
            "SELECT k1, k2, AVG(v), SUM(v) FROM f GROUP BY k1, k2 HAVING (AVG(v) > {} OR COUNT(*) = 1) AND SUM(v) <> {} AND 2 < COUNT(*)",
            rng.range(-100_000, 100_000),
            rng.range(-10, 10)
        ),
        // Group keys other keys determine (TPC-H q10, q18): a dimension's columns beside
        // its key; a fact row's columns (its string without a dictionary, as row numbers
        // on the GPU) beside its id, and the dimension row its key joins; a build of
        // unique ids carrying that string; and keys only partly determined, one of them
        // nullable.
        77 => format!(
            "SELECT d1.d1k, d1.name, d1.region, d1.w, SUM(f.v), COUNT(*), MAX(f.m) FROM f JOIN d1 ON f.k1 = d1.d1k \
             WHERE f.k2 < {} GROUP BY d1.d1k, d1.name, d1.region, d1.w",
            rng.range(0, 50)
        ),
        78 => format!(
            "SELECT f.id, f.t, f.day, d1.name, d1.region, SUM(f.v) FROM f JOIN d1 ON f.k1 = d1.d1k WHERE f.id % 997 = {} \
             GROUP BY d1.name, f.id, f.t, f.day, d1.region",
            rng.range(0, 996)
        ),
        79 => format!(
            "SELECT a.id, a.t, a.s, COUNT(*), SUM(b.v) FROM f a JOIN f b ON a.id = b.k1 WHERE a.id < {} AND b.k2 <> {} GROUP BY a.id, a.t, a.s",
            rng.range(0, 600),
            k2(rng)
        ),
        80 => format!(
            "SELECT d1.d1k, d1.region, d3.tag3, d1.nick, SUM(f.m), COUNT(*) FROM f JOIN d1 ON f.k1 = d1.d1k JOIN d3 ON f.k3 = d3.d3k \
             WHERE f.k2 <> {} GROUP BY d1.d1k, d1.region, d3.tag3, d1.nick",
            k2(rng)
        ),
        // One row a group: grouped by a key of its table through joins that match each
        // row at most once (a projection when the keys are unique in the data; else, as
        // when d1k repeats, an aggregation). TPC-H q13's shape, then every aggregate.
        81 => format!(
            "SELECT c, COUNT(*) FROM (SELECT d1.d1k, COUNT(f.id) AS c FROM d1 LEFT JOIN f ON f.k1 = d1.d1k AND f.k2 <> {} \
             GROUP BY d1.d1k) AS t GROUP BY c",
            k2(rng)
        ),
        82 => format!(
            "SELECT f.id, COUNT(*), COUNT(f.n), SUM(f.m), AVG(f.m), AVG(f.v), MIN(d1.name), MAX(d1.w) FROM f LEFT JOIN d1 ON f.k1 = d1.d1k \
             WHERE f.id % 499 = {} GROUP BY f.id",
            rng.range(0, 498)
        ),
        // A LEFT OUTER join's NULLs through expressions (the GPU carries them in
        // filters and projections): three-valued OR and NOT, COALESCE as a group key,
        // CASE over NULL conditions, IS NOT DISTINCT FROM, arithmetic, a residual in ON.
        83 => format!(
            "SELECT f.k2, COUNT(*), SUM(f.v) FROM f LEFT JOIN d1 ON f.k1 = d1.d1k WHERE d1.w > {} OR d1.d1k IS NULL GROUP BY f.k2",
            cents(rng.range(-99_999, 9_999_999))
        ),
        84 => format!(
            "SELECT COALESCE(d1.cat, -1) AS c, COUNT(*), SUM(f.m) FROM f LEFT JOIN d1 ON f.k1 = d1.d1k AND d1.cat <> {} \
             GROUP BY COALESCE(d1.cat, -1)",
            cat(rng)
        ),
        85 => format!(
            "SELECT COUNT(*), SUM(CASE WHEN d1.cat IS NULL THEN f.v ELSE 0 END), SUM(CASE WHEN d1.cat + f.k2 > {} THEN 1 ELSE 0 END) \
             FROM f LEFT JOIN d1 ON f.k1 = d1.d1k WHERE NOT (d1.cat < {})",
            rng.range(0, 60),
            cat(rng)
        ),
        86 => format!(
            "SELECT f.k2, COUNT(*), COUNT(d1.cat) FROM f LEFT JOIN d1 ON f.k1 = d1.d1k AND f.k2 <> d1.cat * {} \
             WHERE (d1.d1k IS NOT DISTINCT FROM f.k1) OR f.v < {} GROUP BY f.k2",
            rng.range(1, 5),
            v(rng)
        ),
        // Uncorrelated scalar subqueries (kernel parameters on the GPU; NULL when the
        // subquery has no row, which sends the query to the CPU backend).
        87 => format!("SELECT COUNT(*), SUM(v) FROM f WHERE v > (SELECT MAX(z) FROM d2 WHERE z < {}) * 1000", rng.range(-5, 1000)),
        88 => format!("SELECT k2, SUM(m), COUNT(*) FROM f WHERE m > (SELECT MIN(w) FROM d1 WHERE cat = {}) GROUP BY k2", cat(rng)),
        89 => format!(
            "SELECT COUNT(*), SUM(v - (SELECT MIN(v) FROM f WHERE k2 = {})) FROM f WHERE day <= (SELECT MAX(day) FROM f WHERE k1 = {})",
            k2(rng),
            k1(rng)
        ),
        // NULLs on the GPU (validity bitmaps, issue #19): `u` and `um` are NULL in most
        // rows (all of k2 = 7's), `n` in a tenth, `d2.q` in a fifth. Aggregates skip NULLs
        // and give NULL for a group of NULLs; COUNT(*) counts rows.
        90 => format!(
            "SELECT k2, COUNT(*), COUNT(u), SUM(u), MIN(u), MAX(u), SUM(um), AVG(um), MIN(um), MAX(um) FROM f WHERE v > {} GROUP BY k2",
            v(rng)
        ),
        91 => format!("SELECT COUNT(*), COUNT(u), SUM(u), MIN(u), MAX(u), SUM(um), AVG(um), COUNT(n), SUM(n) FROM f WHERE k2 = {}", k2(rng)),
        // Filters over NULLs in three-valued logic.
        92 => {
            let x = rng.range(-1100, 1100);
            let preds = [
                format!("u > {x}"),
                format!("NOT (u > {x})"),
                format!("u > {x} OR um IS NULL"),
                format!("u IS NOT NULL AND um < {}", cents(rng.range(-110_000, 110_000))),
                format!("u BETWEEN {x} AND {}", x + rng.range(0, 500)),
                format!("u + k2 > {x} OR n < {}", rng.range(-110, 110)),
                format!("COALESCE(u, {x}) = {x}"),
                format!("u NOT IN ({x}, {}, {})", x + 1, x + 2),
                format!("n IN ({}, {}) OR u IS NULL", rng.range(-100, 100), rng.range(-100, 100)),
                format!("NOT (n > {} AND u < {x})", rng.range(-110, 110)),
            ];
            format!("SELECT COUNT(*), SUM(v), SUM(u), COUNT(um) FROM f WHERE {}", rng.pick(&preds))
        }
        // A NULL group key is a group of its own (perfect hash over n's range).
        93 => format!("SELECT n, COUNT(*), SUM(u), MAX(um), COUNT(u) FROM f WHERE k2 <> {} GROUP BY n", k2(rng)),
        // NULL join keys match nothing: a probe key with NULLs (inner, semi, anti), a
        // build key with NULLs (d2.q, repeated: a 1:N table), a LEFT OUTER join on one.
        94 => format!(
            "SELECT d1.region, COUNT(*), SUM(f.v), SUM(f.um) FROM f JOIN d1 ON f.u = d1.d1k WHERE f.k2 <> {} GROUP BY d1.region",
            k2(rng)
        ),
        95 => format!(
            "SELECT COUNT(*), SUM(v), SUM(u) FROM f WHERE {} (SELECT 1 FROM d1 WHERE d1.d1k = f.u AND d1.cat <> {})",
            rng.pick(&["EXISTS", "NOT EXISTS"]),
            cat(rng)
        ),
        96 => format!(
            "SELECT d2.tag, COUNT(*), SUM(f.v), SUM(f.u) FROM f JOIN d2 ON f.{} = d2.q WHERE f.k2 <> {} GROUP BY d2.tag",
            rng.pick(&["k1", "n"]),
            k2(rng)
        ),
        97 => format!(
            "SELECT f.k2, COUNT(*), COUNT(d1.cat), SUM(d1.w), SUM(f.u) FROM f LEFT JOIN d1 ON f.u = d1.d1k WHERE f.v > {} GROUP BY f.k2",
            v(rng)
        ),
        // NOT IN over a list with NULLs is never TRUE; without them a NULL key is not kept.
        98 => format!(
            "SELECT COUNT(*), SUM(v) FROM f WHERE n NOT IN (SELECT q FROM d2 WHERE z < {}{})",
            rng.range(0, 1000),
            rng.pick(&["", " AND q IS NOT NULL"])
        ),
        // HAVING and ORDER BY over aggregates that are NULL for a group.
        99 => {
            let x = rng.range(-3_000_000, 3_000_000);
            let forms = [
                format!("SELECT k2, SUM(u), MIN(um) FROM f GROUP BY k2 HAVING SUM(u) > {x}"),
                format!("SELECT k2, SUM(u), MAX(u) FROM f GROUP BY k2 HAVING SUM(u) IS NULL OR MAX(u) < {}", rng.range(-1100, 1100)),
                "SELECT k2, MAX(u), COUNT(*) FROM f GROUP BY k2 ORDER BY MAX(u) NULLS FIRST, k2 LIMIT 10".to_string(),
            ];
            rng.pick(&forms).clone()
        }
        // Aggregations over an aggregation's result (kept on the GPU when read there):
        // COUNT(DISTINCT)'s two steps, counts of counts and sums of sums, a join to the
        // groups, a NULL key in the first step.
        100 => {
            let forms = [
                format!("SELECT s, COUNT(DISTINCT k1), COUNT(*) FROM f WHERE day >= DATE '{}' GROUP BY s", day(rng)),
                format!("SELECT n, COUNT(DISTINCT k2) FROM f WHERE v > {} GROUP BY n", v(rng)),
                format!("SELECT c, COUNT(*), SUM(t), MIN(t), MAX(t) FROM (SELECT k2, s, COUNT(*) AS c, SUM(v) AS t FROM f WHERE k2 <> {} GROUP BY k2, s) x GROUP BY c", k2(rng)),
                format!("SELECT MAX(t), MIN(t), COUNT(*), SUM(c) FROM (SELECT k1, SUM(m) AS t, COUNT(*) AS c FROM f WHERE v < {} GROUP BY k1) x", v(rng)),
                format!(
                    "SELECT d1.region, COUNT(*), SUM(x.c), MAX(x.t) FROM d1 JOIN (SELECT k1, COUNT(*) AS c, SUM(v) AS t FROM f WHERE k2 <> {} GROUP BY k1) x ON x.k1 = d1.d1k GROUP BY d1.region",
                    k2(rng)
                ),
            ];
            rng.pick(&forms).clone()
        }
        // NULLs kept on the GPU (issue #19): a hash group key that may be NULL (a
        // decimal's: no perfect hash; NULL packs as an offset of its own), build-side
        // columns with NULLs read through inner, 1:N and LEFT OUTER joins (payload
        // validity bits), and rows materialized with their NULLs.
        101 => {
            let forms = [
                format!("SELECT um, COUNT(*), SUM(v) FROM f WHERE k2 <> {} GROUP BY um", k2(rng)),
                format!("SELECT u, k3, COUNT(*), MIN(v) FROM f WHERE v > {} GROUP BY u, k3", v(rng)),
                format!("SELECT n, um, COUNT(*), SUM(u) FROM f WHERE k1 < {} GROUP BY n, um", k1(rng)),
                format!("SELECT d2.q, COUNT(*), SUM(f.v) FROM f JOIN d2 ON f.k1 = d2.d2k WHERE f.k2 <> {} GROUP BY d2.q", k2(rng)),
                format!("SELECT d1.nick, COUNT(*), SUM(f.um), MAX(f.u) FROM f JOIN d1 ON f.k1 = d1.d1k WHERE f.v < {} GROUP BY d1.nick", v(rng)),
                format!("SELECT f.k2, COUNT(d1.nick), COUNT(*) FROM f LEFT JOIN d1 ON f.k1 = d1.d1k WHERE f.v > {} GROUP BY f.k2", v(rng)),
                format!("SELECT id, u, um, n FROM f WHERE v > {} AND k2 <> 7", v(rng)),
                format!("SELECT f.id, d1.nick, f.u FROM f JOIN d1 ON f.k1 = d1.d1k WHERE f.v > {}", v(rng)),
            ];
            rng.pick(&forms).clone()
        }
        // LEFT OUTER joins of tables whose keys repeat (on the GPU: the probe expands a
        // row into its matches and keeps a row without one once, build columns NULL):
        // d1 against f's and d2's repeated keys, d3 against f's with a condition on f.
        // Each has an aggregate over both sides (with right-side ones only, eager
        // aggregation groups the right side by its key first: no repeated keys left).
        102 => {
            let forms = [
                format!(
                    "SELECT d1.region, COUNT(*), COUNT(f.v), SUM(f.v + d1.cat), MAX(f.um) FROM d1 LEFT JOIN f ON f.k1 = d1.d1k WHERE d1.cat <> {} GROUP BY d1.region",
                    cat(rng)
                ),
                "SELECT d1.cat, COUNT(d2.z), SUM(d2.z * d1.cat), COUNT(*), SUM(d2.q) FROM d1 LEFT JOIN d2 ON d2.d2k = d1.d1k GROUP BY d1.cat".to_string(),
                format!(
                    "SELECT d3.tag3, COUNT(f.id), SUM(f.v - d3.c3), COUNT(*) FROM d3 LEFT JOIN f ON f.k3 = d3.d3k AND f.v > {} GROUP BY d3.tag3",
                    v(rng)
                ),
            ];
            rng.pick(&forms).clone()
        }
        // EXISTS / IN inside OR: mark joins (every row, with whether it matched; on the
        // GPU a probe that adds the flag), over a dense, a hashed and a 1:N table, with
        // a correlated condition beside the key (a residual) and a nullable key.
        103 => {
            let forms = [
                format!("SELECT COUNT(*), SUM(v) FROM f WHERE v > {} OR EXISTS (SELECT 1 FROM d1 WHERE d1.d1k = f.k1 AND d1.cat = {})", v(rng), cat(rng)),
                format!("SELECT k2, COUNT(*), SUM(v) FROM f WHERE k2 = {} OR u IN (SELECT d2k FROM d2 WHERE z < {}) GROUP BY k2", k2(rng), rng.range(0, 1000)),
                format!("SELECT COUNT(*), SUM(v) FROM f WHERE v < {} OR NOT EXISTS (SELECT 1 FROM d3 WHERE d3.d3k = f.k3)", v(rng)),
                format!("SELECT COUNT(*), SUM(u) FROM f WHERE n > {} OR EXISTS (SELECT 1 FROM d2 WHERE d2.d2k = f.k1 AND d2.z > f.k2 * 20)", rng.range(-110, 110)),
            ];
            rng.pick(&forms).clone()
        }
        // Decimal division (truncated at the dividend's scale + 4) and `%`, and doubles (compared,
        // computed with, MIN/MAX, summed, materialized) in kernels.
        104 => {
            let forms = [
                format!("SELECT k2, SUM(m / {}), COUNT(*) FROM f WHERE m / (k2 + 1) > {}.{:02} GROUP BY k2", rng.range(1, 13), rng.range(-5, 50), rng.range(0, 99)),
                format!("SELECT k2, SUM(m % {}), COUNT(*), MAX(r % 0.25) FROM f WHERE m % 7 > {}.{:02} GROUP BY k2", rng.range(1, 13), rng.range(-7, 7), rng.range(0, 99)),
                format!("SELECT k2, MIN(r), MAX(r), COUNT(*) FROM f WHERE r > CAST('0.{:03}' AS DOUBLE) GROUP BY k2", rng.range(0, 999)),
                format!("SELECT id, r, m / 7, um / {} FROM f WHERE id % 997 = {}", rng.range(1, 9), rng.range(0, 996)),
                format!("SELECT k2, SUM(r), AVG(r), COUNT(*) FROM f WHERE k1 < {} GROUP BY k2", k1(rng)),
                format!("SELECT SUM(r), AVG(r), MAX(r) FROM f WHERE k2 = {}", k2(rng)),
                format!("SELECT k2, SUM(r * v), MIN(r - 0.5), MAX(m * r) FROM f WHERE r * {} < 1 GROUP BY k2", rng.range(1, 9)),
            ];
            rng.pick(&forms).clone()
        }
        // Semi/anti joins kept by the small side (the CPU's plan shape runs them from the
        // large side: the GPU's mark kernels), over unique keys, over repeated nullable
        // ones (d2.q; f.u mostly NULL), with a residual across the sides; and a LEFT OUTER
        // join of a 1:N table with one (on the GPU: the chain walked for a row it holds
        // for, then expanded).
        105 => {
            let forms = [
                format!(
                    "SELECT d1.region, COUNT(*), SUM(d1.cat) FROM d1 WHERE {} (SELECT 1 FROM f WHERE f.k1 = d1.d1k AND f.v > {}) GROUP BY d1.region",
                    rng.pick(&["EXISTS", "NOT EXISTS"]),
                    v(rng)
                ),
                format!(
                    "SELECT d2.tag, COUNT(*), SUM(d2.z), COUNT(d2.q) FROM d2 WHERE {} (SELECT 1 FROM f WHERE f.u = d2.q AND f.k2 <> {}) GROUP BY d2.tag",
                    rng.pick(&["EXISTS", "NOT EXISTS"]),
                    k2(rng)
                ),
                format!(
                    "SELECT d1.cat, COUNT(*) FROM d1 WHERE {} (SELECT 1 FROM f WHERE f.k1 = d1.d1k AND f.k2 <> d1.cat + {}) GROUP BY d1.cat",
                    rng.pick(&["EXISTS", "NOT EXISTS"]),
                    rng.range(0, 8)
                ),
                format!("SELECT COUNT(*), SUM(d1.cat) FROM d1 WHERE d1.d1k IN (SELECT k1 FROM f WHERE v < {})", v(rng)),
                format!(
                    "SELECT d1.region, COUNT(f.id), SUM(f.v), COUNT(*) FROM d1 LEFT JOIN f ON f.k1 = d1.d1k AND f.v > d1.cat * {} GROUP BY d1.region",
                    rng.range(-100_000, 100_000)
                ),
            ];
            rng.pick(&forms).clone()
        }
        // Several DISTINCT aggregates in one aggregation (joined aggregations, see
        // `tessera_engine::distinct`), over nullable keys and arguments, and pipelines
        // reading results on the host (an aggregate FILTER is a DataFusion step).
        106 => {
            let forms = [
                format!(
                    "SELECT k2, COUNT(*), COUNT(DISTINCT k1), COUNT(DISTINCT n), SUM(DISTINCT u), MIN(DISTINCT v) FROM f WHERE v < {} GROUP BY k2",
                    v(rng)
                ),
                format!("SELECT n, COUNT(DISTINCT s), COUNT(DISTINCT k2), AVG(DISTINCT m), SUM(v) FROM f WHERE k2 <> {} GROUP BY n", k2(rng)),
                format!("SELECT COUNT(DISTINCT k1), COUNT(DISTINCT u), SUM(DISTINCT um), COUNT(*) FROM f WHERE day < DATE '{}'", day(rng)),
                format!(
                    "SELECT c, COUNT(*), SUM(t) FROM (SELECT k1, COUNT(DISTINCT k2) AS c, COUNT(DISTINCT n) AS d, SUM(m) AS t FROM f WHERE v > {} GROUP BY k1) x WHERE d >= {} GROUP BY c",
                    v(rng),
                    rng.range(0, 3)
                ),
                format!(
                    "SELECT c, COUNT(*), MAX(t), MIN(t) FROM (SELECT k2, COUNT(*) FILTER (WHERE n IS NULL) AS c, SUM(um) AS t FROM f WHERE k1 <= {} GROUP BY k2) x GROUP BY c",
                    k1(rng)
                ),
                format!(
                    "SELECT d1.region, x.a, x.b FROM d1 JOIN (SELECT k1, COUNT(DISTINCT k2) AS a, COUNT(DISTINCT s) AS b FROM f WHERE v < {} GROUP BY k1) x ON x.k1 = d1.d1k WHERE d1.cat <> {}",
                    v(rng),
                    cat(rng)
                ),
            ];
            rng.pick(&forms).clone()
        }
        // Sorts whose pipeline filters (on the GPU a kernel filters, the CPU sorts what
        // passes): against a scalar subquery, NULLs first or last, OFFSET, computed keys.
        107 => {
            let forms = [
                format!(
                    "SELECT k1, t FROM (SELECT k1, SUM(m) AS t FROM f GROUP BY k1) x WHERE t > (SELECT AVG(m) * {} FROM f) ORDER BY t DESC, k1 LIMIT 15",
                    rng.range(0, 40)
                ),
                format!("SELECT id, n, u FROM f WHERE k2 = {} ORDER BY n NULLS FIRST, u DESC NULLS LAST, id LIMIT 12 OFFSET 3", k2(rng)),
                format!(
                    "SELECT g, COUNT(*) AS c FROM f WHERE v > {} GROUP BY g HAVING COUNT(*) > (SELECT COUNT(*) FROM f WHERE k2 = {}) / 100 ORDER BY c DESC, g LIMIT 10",
                    v(rng),
                    k2(rng)
                ),
                format!("SELECT id, v * 3 - k2 AS x, day FROM f WHERE day >= DATE '{}' ORDER BY x, id LIMIT 9", day(rng)),
            ];
            rng.pick(&forms).clone()
        }
        // Template 50 (listed last since it was the last one once).
        _ => format!("SELECT id, v * 2 + k2 AS x, m FROM f WHERE day >= DATE '{}'", day(rng)),
    };
    Query { sql, may_overflow }
}

/// Every value as text (floats to 10 significant digits), one string per row, sorted.
fn normalize(out: &QueryOutput) -> Result<Vec<String>, String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::with_capacity(out.num_rows());
    for batch in &out.batches {
        let columns: Vec<ArrayRef> = batch
            .columns()
            .iter()
            .map(|c| match c.data_type() {
                DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                    let f = cast(c, &DataType::Float64).map_err(|e| e.to_string())?;
                    let f = f.as_primitive::<arrow::datatypes::Float64Type>();
                    let text: arrow::array::StringArray =
                        (0..f.len()).map(|i| f.is_valid(i).then(|| format!("{:.9e}", f.value(i)))).collect();
                    Ok(std::sync::Arc::new(text) as ArrayRef)
                }
                _ => Ok(std::sync::Arc::clone(c)),
            })
            .collect::<Result<_, String>>()?;
        let formatters = columns
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        for r in 0..batch.num_rows() {
            let row: Vec<String> = formatters.iter().map(|f| f.value(r).to_string()).collect();
            rows.push(row.join(" | "));
        }
    }
    rows.sort();
    Ok(rows)
}

/// Whether two normalized results are the same: row by row equal, or differing only in
/// floats (written `{:.9e}`) within a relative 2·10⁻⁹. Sums of doubles add in whatever
/// order their threads (or the GPU's atomics) take, so their last bits differ, and now
/// and then the tenth digit that rounding shows.
fn rows_match(a: &[String], b: &[String]) -> bool {
    let floats_close = |p: &str, q: &str| match (p.contains('e') && q.contains('e'), p.parse::<f64>(), q.parse::<f64>()) {
        (true, Ok(x), Ok(y)) => x.is_finite() && y.is_finite() && (x - y).abs() <= 2e-9 * x.abs().max(y.abs()),
        _ => false,
    };
    let fields_close = |x: &str, y: &str| {
        let (fx, fy): (Vec<&str>, Vec<&str>) = (x.split(" | ").collect(), y.split(" | ").collect());
        fx.len() == fy.len() && fx.iter().zip(&fy).all(|(p, q)| p == q || floats_close(p, q))
    };
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || fields_close(x, y))
}

/// Runs `sql` and normalizes its rows; errors as text.
async fn run(session: &Session, sql: &str) -> Result<Vec<String>, String> {
    let out = session.execute(sql).await.map_err(|e| e.to_string())?;
    normalize(&out)
}

async fn set(session: &Session, statement: &str) -> Result<(), String> {
    session.execute(statement).await.map(|_| ()).map_err(|e| format!("{statement}: {e}"))
}

/// Whether EXPLAIN (under the current settings) places a pipeline of `sql` on the GPU, and
/// why each pipeline it keeps on the CPU stays there (the reasons EXPLAIN gives, digits as
/// `#` so that the same reason counts once whatever its figures).
async fn uses_gpu(session: &Session, sql: &str) -> (bool, Vec<String>) {
    let Ok(out) = session.execute(&format!("EXPLAIN {sql}")).await else { return (false, Vec::new()) };
    let (mut gpu, mut cpu) = (false, Vec::new());
    for batch in &out.batches {
        if batch.num_columns() < 2 {
            continue;
        }
        let (Ok(kind), Ok(plan)) = (cast(batch.column(0), &DataType::Utf8), cast(batch.column(1), &DataType::Utf8)) else {
            continue;
        };
        let (kind, plan) = (kind.as_string::<i32>(), plan.as_string::<i32>());
        for i in 0..batch.num_rows() {
            if kind.value(i) != "tessera_plan" {
                continue;
            }
            for line in plan.value(i).lines().filter(|l| l.starts_with("Pipeline ")) {
                gpu |= line.contains(" [GPU]");
                if let Some((_, why)) = line.split_once(" [CPU: ") {
                    let why = why.strip_suffix(']').unwrap_or(why);
                    cpu.push(why.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect::<String>());
                }
            }
        }
    }
    (gpu, cpu)
}

fn show(result: &Result<Vec<String>, String>) -> String {
    const MAX: usize = 12;
    match result {
        Err(e) => format!("ERROR: {e}"),
        Ok(rows) => {
            let mut s = format!("{} row(s)", rows.len());
            for r in rows.iter().take(MAX) {
                let _ = write!(s, "\n      {r}");
            }
            if rows.len() > MAX {
                let _ = write!(s, "\n      …");
            }
            s
        }
    }
}

/// The first rows where two sorted answers differ.
fn first_difference(a: &[String], b: &[String]) -> String {
    let mut s = String::new();
    let (mut i, mut j, mut shown) = (0, 0, 0);
    while (i < a.len() || j < b.len()) && shown < 6 {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                let _ = write!(s, "\n      only in first:  {x}");
                i += 1;
                shown += 1;
            }
            (Some(_), Some(y)) | (None, Some(y)) => {
                let _ = write!(s, "\n      only in second: {y}");
                j += 1;
                shown += 1;
            }
            (Some(x), None) => {
                let _ = write!(s, "\n      only in first:  {x}");
                i += 1;
                shown += 1;
            }
            (None, None) => break,
        }
    }
    s
}

fn is_overflow(e: &str) -> bool {
    e.to_ascii_lowercase().contains("overflow")
}

/// What a run found, over all cases.
#[derive(Debug, Default)]
pub struct DiffReport {
    /// The seed.
    pub seed: u64,
    /// Whether the executor found a GPU.
    pub gpu_present: bool,
    /// Queries run (each three ways).
    pub queries: usize,
    /// Queries with at least one pipeline on the GPU (EXPLAIN under `device = 'gpu'`).
    pub on_gpu: usize,
    /// Queries that failed on every path (as they should, e.g. an overflow).
    pub errors: usize,
    /// Queries that overflowed on the pipelines where DataFusion wraps.
    pub wrapped: usize,
    /// Queries also run on the GPU in the CPU's plan shape, for its semi/anti joins run
    /// from their large side (the GPU's mark kernels).
    pub marked: usize,
    /// Disagreements, each with the query and the three answers.
    pub failures: Vec<String>,
    /// Why pipelines stayed on the CPU under `device = 'gpu'`, and how often (what the
    /// GPU backend does not run yet, weighted by the templates).
    pub cpu_reasons: std::collections::BTreeMap<String, usize>,
}

impl DiffReport {
    /// What makes the run a failure: disagreements, a suite where most queries fail on
    /// every path (it would test nothing), and with `require_gpu`, no GPU or fewer than
    /// half of the queries on it.
    pub fn problems(&self, require_gpu: bool) -> Vec<String> {
        let mut out = self.failures.clone();
        if self.errors * 10 >= self.queries.max(1) {
            out.push(format!("{} of {} queries fail on every path: the templates test too little", self.errors, self.queries));
        }
        if require_gpu && !self.gpu_present {
            out.push("a GPU is required (TESSERA_REQUIRE_GPU=1) but the executor found none".into());
        } else if require_gpu && self.on_gpu * 2 < self.queries {
            out.push(format!("only {} of {} queries ran a pipeline on the GPU (want at least half)", self.on_gpu, self.queries));
        }
        out
    }
}

async fn check_case(case: &Case, dir: &Path, tally: &mut DiffReport, log: &mut dyn FnMut(&str)) -> Result<(), String> {
    let started = Instant::now();
    let seed = tally.seed;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let session = Session::open(dir.join("data")).map_err(|e| e.to_string())?;
    let mut rng = Rng::new(seed ^ (case.f_rows as u64).wrapping_mul(0x100_0000_01b3) ^ case.d1_rows as u64);
    let info = load(&session, dir, case, &mut rng).await?;
    let loaded = started.elapsed();
    if session.executor().gpu().is_some() != tally.gpu_present {
        return Err("GPU presence differs between sessions".into());
    }

    let mut queries = Vec::new();
    for t in 0..TEMPLATES {
        for _ in 0..case.repeats {
            queries.push(template(t, &mut rng, &info));
        }
    }
    let (mut on_gpu, mut errors) = (0, 0);
    for (i, q) in queries.iter().enumerate() {
        set(&session, "SET tessera.device = 'gpu'").await?;
        let (gpu_placed, cpu_reasons) = uses_gpu(&session, &q.sql).await;
        for why in cpu_reasons {
            *tally.cpu_reasons.entry(why).or_default() += 1;
        }
        let gpu = run(&session, &q.sql).await;
        set(&session, "SET tessera.device = 'cpu'").await?;
        let cpu = run(&session, &q.sql).await;
        // The CPU backend running the plan shaped for the GPU (build sides, membership
        // tables): what it runs whenever the GPU gives a pipeline back.
        set(&session, "SET tessera.plan_for = 'gpu'").await?;
        let cpu_gpu_plan = run(&session, &q.sql).await;
        // Under 'auto' the GPU takes the plan shaped for it, which builds the side a
        // semi/anti join looks rows up in; the CPU's shape runs a small one from its
        // large side, whose marks the GPU makes too (`codegen::mark`): run that shape on
        // the GPU as well where it has such a join.
        let gpu_marks = if tally.gpu_present && marks_rows(&session, &q.sql).await {
            set(&session, "SET tessera.plan_for = 'cpu'").await?;
            set(&session, "SET tessera.device = 'gpu'").await?;
            let r = run(&session, &q.sql).await;
            set(&session, "SET tessera.device = 'cpu'").await?;
            tally.marked += 1;
            Some(r)
        } else {
            None
        };
        set(&session, "SET tessera.plan_for = 'auto'").await?;
        set(&session, "SET tessera.engine = 'datafusion'").await?;
        let df = run(&session, &q.sql).await;
        set(&session, "SET tessera.engine = 'pipelines'").await?;
        set(&session, "SET tessera.device = 'auto'").await?;

        on_gpu += usize::from(gpu_placed);
        let context = format!(
            "case {} (f {} rows, d1 {}, d2 {}), seed {seed:#x}, query #{i}{}:\n  {}",
            case.name,
            case.f_rows,
            case.d1_rows,
            case.d2_rows,
            if gpu_placed { " [GPU]" } else { "" },
            q.sql
        );
        let same = |x: &std::result::Result<Vec<String>, String>, y: &std::result::Result<Vec<String>, String>| match (x, y) {
            (Ok(a), Ok(b)) => rows_match(a, b),
            (Err(_), Err(_)) => true,
            _ => false,
        };
        let gpu_vs_cpu_ok = same(&gpu, &cpu) && same(&cpu_gpu_plan, &cpu) && gpu_marks.as_ref().is_none_or(|m| same(m, &cpu));
        let df_ok = match (&cpu, &df) {
            // Plain DataFusion wraps integer overflow; the pipelines report it.
            (Err(e), Ok(_)) if q.may_overflow && is_overflow(e) => {
                tally.wrapped += 1;
                true
            }
            _ => same(&cpu, &df),
        };
        if gpu.is_err() && cpu.is_err() {
            errors += 1;
            // Shown, so that a template that does not parse or plan is seen as one.
            log(&format!("  failed on every path: {context}\n    {}", show(&cpu)));
        }
        if !(gpu_vs_cpu_ok && df_ok) {
            let mut msg = format!(
                "MISMATCH {context}\n    gpu:        {}\n    cpu:        {}\n    cpu, plan for the gpu: {}\n    datafusion: {}",
                show(&gpu),
                show(&cpu),
                show(&cpu_gpu_plan),
                show(&df)
            );
            if let Some(m) = &gpu_marks {
                let _ = write!(msg, "\n    gpu, plan for the cpu (marks): {}", show(m));
            }
            if let (Ok(a), Ok(b)) = (&cpu, &df) {
                let _ = write!(msg, "\n    cpu vs datafusion:{}", first_difference(a, b));
            }
            if let (Ok(a), Ok(b)) = (&gpu, &cpu) {
                if a != b {
                    let _ = write!(msg, "\n    gpu vs cpu:{}", first_difference(a, b));
                }
            }
            log(&msg);
            tally.failures.push(msg);
        }
    }
    log(&format!(
        "case {:<6} f={:<7} d1={:<5} d2={:<5}: {} queries, {} on the GPU, {} failing on every path; load {:.1}s, total {:.1}s",
        case.name,
        case.f_rows,
        case.d1_rows,
        case.d2_rows,
        queries.len(),
        on_gpu,
        errors,
        loaded.as_secs_f64(),
        started.elapsed().as_secs_f64()
    ));
    tally.queries += queries.len();
    tally.on_gpu += on_gpu;
    tally.errors += errors;
    // So far in this run (a device run may stop it between cases): the commonest reasons.
    let mut reasons: Vec<(&String, &usize)> = tally.cpu_reasons.iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (why, n) in reasons.into_iter().take(CPU_REASONS_SHOWN) {
        log(&format!("    on the CPU so far: {n:>5} × {why}"));
    }
    Ok(())
}

/// Whether the plan shaped for the CPU runs a semi/anti join from its large side (a
/// [`tessera_ir::MarkBuild`] sink), which the plan shaped for the GPU never does.
async fn marks_rows(session: &Session, sql: &str) -> bool {
    session
        .plan_query_for(sql, tessera_engine::Target::Cpu)
        .await
        .is_ok_and(|plan| plan.pipelines().any(|p| matches!(p.sink, tessera_ir::Sink::MarkBuild(_))))
}

/// The reasons for CPU pipelines a case's line is followed by (the commonest).
const CPU_REASONS_SHOWN: usize = 12;

/// Runs every case with `seed`, each in its own store under `dir` (created; the caller
/// removes it), logging each case and each disagreement through `log`.
pub async fn run_all(dir: &Path, seed: u64, log: &mut dyn FnMut(&str)) -> Result<DiffReport, String> {
    let started = Instant::now();
    let probe = Session::open(dir.join("probe")).map_err(|e| e.to_string())?;
    let mut report = DiffReport { seed, gpu_present: probe.executor().gpu().is_some(), ..DiffReport::default() };
    drop(probe);
    log(&format!("seed {seed:#x}; GPU present: {}", report.gpu_present));
    for case in CASES {
        check_case(case, &dir.join(case.name), &mut report, log).await?;
    }
    log(&format!(
        "{} queries, {} of them used the GPU (EXPLAIN under tessera.device = 'gpu'), {} also in the CPU's plan shape \
         on the GPU (semi/anti joins marking rows), {} failed on every path (as expected), {} overflowed on the pipelines \
         where DataFusion wraps; {} mismatches; {:.1}s",
        report.queries,
        report.on_gpu,
        report.marked,
        report.errors,
        report.wrapped,
        report.failures.len(),
        started.elapsed().as_secs_f64()
    ));
    Ok(report)
}


#[cfg(test)]
mod tests {
    use super::rows_match;

    #[test]
    fn results_match_exactly_or_in_floats_within_two_parts_per_billion() {
        let rows = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(rows_match(&rows(&["1 | 2.500000000e0", "2 | NULL"]), &rows(&["1 | 2.500000000e0", "2 | NULL"])));
        // The tenth digit of a sum added in another order.
        assert!(rows_match(&rows(&["7 | 1.234567891e3"]), &rows(&["7 | 1.234567890e3"])));
        assert!(!rows_match(&rows(&["7 | 1.234567891e3"]), &rows(&["7 | 1.234567800e3"])));
        // Only floats are compared loosely, and rows must line up.
        assert!(!rows_match(&rows(&["7 | 12"]), &rows(&["8 | 12"])));
        assert!(!rows_match(&rows(&["7 | inf"]), &rows(&["7 | NaN"])));
        assert!(!rows_match(&rows(&["1"]), &rows(&["1", "2"])));
    }
}
