//! Benchmarks you can trust: exact data generators, the SSB and TPC-H query suites with
//! their answers, and a runner that checks every answer and times Tessera beside its
//! peers.
//!
//! Entry points: [`datagen::generate_files`] / [`datagen::generate_into_store`] (`tessera gen`)
//! and [`bench::run`] (`tessera bench`), with [`report`] to print, save and plot results;
//! [`difftest::run_all`] (`tessera difftest`) compares the GPU, the CPU backend and plain
//! DataFusion on random queries; [`joins::run`] (`tessera bench joins`) times the
//! no-partition hash join against radix-partitioned ones on the GPU; [`launches::run`]
//! (`tessera bench launches`) times queueing a query's kernels one launch at a time
//! against one CUDA graph; [`probes::run`] (`tessera bench probes`) times a probe of SSB
//! q3.1's shape with its bitmaps in global or shared memory.
//!
//! - [`ssb`]: an exact Star Schema Benchmark generator, producing the same rows as the
//!   official `ssb-dbgen` (O'Neil/Chen, "Star Schema Benchmark Revision 3", 2009).
//! - TPC-H comes from the `tpchgen` crate (an exact port of TPC-H dbgen).
#![warn(missing_docs)]

pub mod bench;
pub mod check;
pub mod clients;
pub mod datagen;
pub mod difftest;
pub mod joins;
pub mod launches;
pub mod probes;
pub mod report;
#[allow(missing_docs)] // row fields carry the SSB spec's column names
pub mod ssb;
pub mod ssb_arrow;
pub mod suite;

pub use bench::{BenchOptions, BenchReport, EngineKind};
pub use suite::Suite;
