//! tessera-bench: benchmark data generators and helpers for Tessera.
//!
//! - [`ssb`]: an exact Star Schema Benchmark (SSB) data generator, producing the same rows
//!   as the official `ssb-dbgen` (O'Neil/Chen, "Star Schema Benchmark Revision 3", 2009).

pub mod ssb;
