//! Tessera's embedded store: a data directory of tile files and one manifest.
//!
//! Entry point of this crate is [`Store`]. Every table is a list of immutable data files
//! ([`colfile`]: each column in tiles of 2048 rows, each tile in the smallest of a few
//! lightweight encodings, [`tiles`]) plus its schema and column statistics, all recorded
//! in `manifest.json` at the root of the data directory. A write ([`Store::begin`] → [`Transaction`] →
//! [`Transaction::commit`]) writes new files first and then replaces the manifest
//! atomically (write a temporary file, fsync, rename, fsync the directory), so a process
//! killed at any moment leaves either the old or the new state; files no manifest
//! references are removed the next time the store is opened.
//!
//! Readers open a table by mapping its files ([`Store::load`]), decode a column into
//! Arrow arrays the first time a query needs it, and keep both cached by table version. Low-cardinality string columns are dictionary-encoded
//! with one sorted dictionary per column, so that code order is string order (the GPU
//! path evaluates string predicates on codes). This crate knows nothing about SQL or GPUs.
#![warn(missing_docs)]

pub mod colfile;
mod loaded;
mod manifest;
pub mod packed;
mod stats;
mod store;
pub mod tiles;

pub use loaded::{LoadedColumnDictionary, LoadedTable};
pub use packed::{PackedColumn, StoredTile, pack_column};
pub use manifest::{ColumnStats, FORMAT_PARQUET, FORMAT_TILES_UNCOMPRESSED, FORMAT_VERSION, FileMeta, Manifest, TableMeta};
pub use stats::{DistinctSketch, DICTIONARY_MAX_DISTINCT};
pub use store::{ChunkFile, ClosedChunk, ColumnStorage, Store, TableWriter, Transaction};
