//! The query suites (`benchmarks/ssb`, `benchmarks/tpch`), compiled into the binary so
//! that `tessera bench` runs anywhere (the GPU machine gets only the binary).

use std::fmt;

/// A benchmark: its tables, queries and SF 1 answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Suite {
    /// Star Schema Benchmark (13 queries).
    Ssb,
    /// TPC-H (22 queries).
    Tpch,
}

/// One query of a suite.
#[derive(Debug, Clone, Copy)]
pub struct Query {
    /// Short name, e.g. `q1.1` or `q01`.
    pub name: &'static str,
    /// The SQL text (one statement).
    pub sql: &'static str,
    /// The expected answer at scale factor 1, as CSV with a header line.
    pub answer_sf1: &'static str,
}

macro_rules! queries {
    ($suite:literal: $($name:literal),* $(,)?) => {
        &[$(Query {
            name: $name,
            sql: include_str!(concat!("../../../benchmarks/", $suite, "/", $name, ".sql")),
            answer_sf1: include_str!(concat!("../../../benchmarks/", $suite, "/answers/", $name, ".csv")),
        }),*]
    };
}

const SSB_QUERIES: &[Query] = queries!("ssb":
    "q1.1", "q1.2", "q1.3", "q2.1", "q2.2", "q2.3", "q3.1", "q3.2", "q3.3", "q3.4", "q4.1", "q4.2", "q4.3");

const TPCH_QUERIES: &[Query] = queries!("tpch":
    "q01", "q02", "q03", "q04", "q05", "q06", "q07", "q08", "q09", "q10", "q11",
    "q12", "q13", "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22");

impl Suite {
    /// Parses `ssb` or `tpch`.
    pub fn parse(s: &str) -> Option<Suite> {
        match s.to_ascii_lowercase().as_str() {
            "ssb" => Some(Suite::Ssb),
            "tpch" | "tpc-h" => Some(Suite::Tpch),
            _ => None,
        }
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Ssb => "ssb",
            Suite::Tpch => "tpch",
        }
    }

    /// The tables, in generation order (largest last).
    pub fn tables(self) -> &'static [&'static str] {
        match self {
            Suite::Ssb => &["date", "supplier", "customer", "part", "lineorder"],
            Suite::Tpch => &["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"],
        }
    }

    /// The queries in order.
    pub fn queries(self) -> &'static [Query] {
        match self {
            Suite::Ssb => SSB_QUERIES,
            Suite::Tpch => TPCH_QUERIES,
        }
    }

    /// The query called `name` (`q1.1`, `1.1`, `q1`, `q01` and `1` are accepted).
    pub fn query(self, name: &str) -> Option<&'static Query> {
        let bare = name.trim().trim_start_matches(['q', 'Q']);
        self.queries().iter().find(|q| {
            let qb = &q.name[1..];
            qb == bare || qb.trim_start_matches('0') == bare.trim_start_matches('0')
        })
    }
}

impl fmt::Display for Suite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suites_have_all_queries_with_answers() {
        assert_eq!(Suite::Ssb.queries().len(), 13);
        assert_eq!(Suite::Tpch.queries().len(), 22);
        for q in Suite::Ssb.queries().iter().chain(Suite::Tpch.queries()) {
            assert!(q.sql.to_lowercase().contains("select"), "{}", q.name);
            assert!(q.answer_sf1.lines().count() >= 2, "{} has a header and rows", q.name);
        }
    }

    #[test]
    fn query_names_are_forgiving() {
        assert_eq!(Suite::Tpch.query("q1").map(|q| q.name), Some("q01"));
        assert_eq!(Suite::Tpch.query("21").map(|q| q.name), Some("q21"));
        assert_eq!(Suite::Ssb.query("2.3").map(|q| q.name), Some("q2.3"));
        assert!(Suite::Ssb.query("q9.9").is_none());
    }
}
