//! Tessera's embedded store: a data directory of Parquet files and one manifest.
//!
//! Entry point of this crate is [`Store`]. Every table is a list of immutable Parquet
//! files plus its schema and column statistics, all recorded in `manifest.json` at the
//! root of the data directory. A write ([`Store::begin`] → [`Transaction`] →
//! [`Transaction::commit`]) writes new files first and then replaces the manifest
//! atomically (write a temporary file, fsync, rename, fsync the directory), so a process
//! killed at any moment leaves either the old or the new state; files no manifest
//! references are removed the next time the store is opened.
//!
//! Readers load a table into memory as Arrow batches on first use ([`Store::load`]) and
//! keep it cached by table version. Low-cardinality string columns are dictionary-encoded
//! with one sorted dictionary per column, so that code order is string order (the GPU
//! path evaluates string predicates on codes). This crate knows nothing about SQL or GPUs.
#![warn(missing_docs)]

mod loaded;
mod manifest;
mod stats;
mod store;

pub use loaded::{LoadedColumnDictionary, LoadedTable};
pub use manifest::{ColumnStats, FileMeta, Manifest, TableMeta};
pub use stats::{DistinctSketch, DICTIONARY_MAX_DISTINCT};
pub use store::{ChunkFile, ClosedChunk, Store, TableWriter, Transaction};
