//! The manifest: the one file that says what the store holds.
//!
//! `manifest.json` lists every table with its schema, its Parquet files and its column
//! statistics. It is only ever replaced whole and atomically ([`Manifest::save`]), which
//! is what makes every write all-or-nothing.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::str::FromStr;

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tessera_common::{Result, TesseraError};

/// File name of the manifest inside the data directory.
pub const MANIFEST_FILE: &str = "manifest.json";
/// Format version written into the manifest; bumped on incompatible changes. Format 1
/// kept Parquet data files; format 2 keeps tile files ([`crate::colfile`]); format 3 is
/// format 2 where string tiles may keep their bytes as a zstd frame
/// ([`crate::tiles::FLAG_ZSTD`]), which a reader of format 2 would misread.
///
/// A store of format 1 is converted when opened ([`crate::Store::open`]). A store of
/// format 2 is read as it is (its tiles are format 3 tiles that happen to have no
/// compressed bytes) and keeps saying 2 while it is only read, so the Tessera that wrote
/// it can still open it; the first commit into it records format 3, since the files it
/// writes may hold compressed tiles.
pub const FORMAT_VERSION: u32 = 3;
/// The format of stores whose data files are Parquet (Tessera before 2026-11-26).
pub const FORMAT_PARQUET: u32 = 1;
/// The format of tile stores whose string bytes are never compressed (Tessera before
/// [`crate::tiles::FLAG_ZSTD`]): read as they are.
pub const FORMAT_TILES_UNCOMPRESSED: u32 = 2;

/// The whole catalog of a data directory.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// Format of this file ([`FORMAT_VERSION`]).
    pub format: u32,
    /// Incremented by every committed write; lets readers notice changes cheaply.
    pub version: u64,
    /// Next number used to name a data file; unique within the data directory.
    pub next_file_id: u64,
    /// The tables, in creation order.
    pub tables: Vec<TableMeta>,
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest { format: FORMAT_VERSION, version: 0, next_file_id: 1, tables: Vec::new() }
    }
}

/// One table: schema, files and statistics.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableMeta {
    /// Table name as the SQL front end normalized it.
    pub name: String,
    /// Incremented by every write to this table; caches key on (name, version).
    pub version: u64,
    /// The columns, in order.
    pub columns: Vec<ColumnMeta>,
    /// Data files, in row order.
    pub files: Vec<FileMeta>,
    /// Total number of rows over all files.
    pub rows: u64,
}

/// A column's definition and statistics.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ColumnMeta {
    /// Column name.
    pub name: String,
    /// Arrow data type in its textual form (`Int64`, `Decimal128(15, 2)`, `Utf8`, ...).
    pub data_type: String,
    /// Whether NULLs are allowed.
    pub nullable: bool,
    /// Statistics over all rows.
    pub stats: ColumnStats,
}

/// Statistics of one column over the whole table.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ColumnStats {
    /// Smallest non-NULL value, as text; `None` when all values are NULL or unknown.
    pub min: Option<String>,
    /// Largest non-NULL value, as text.
    pub max: Option<String>,
    /// Number of NULLs.
    pub null_count: u64,
    /// Estimated number of distinct non-NULL values (HyperLogLog, about 3% error).
    pub distinct_estimate: u64,
    /// Whether the column is dictionary-encoded when loaded (low-cardinality strings).
    pub dictionary: bool,
    /// The HyperLogLog registers, hex-encoded, so appends can update the estimate.
    pub sketch: String,
}

/// One data file of a table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileMeta {
    /// Path relative to the data directory.
    pub path: String,
    /// Rows in the file.
    pub rows: u64,
    /// Size in bytes.
    pub bytes: u64,
}

impl TableMeta {
    /// The table's Arrow schema.
    pub fn schema(&self) -> Result<SchemaRef> {
        let fields = self
            .columns
            .iter()
            .map(|c| {
                let dt = DataType::from_str(&c.data_type).map_err(|e| {
                    TesseraError::Internal(format!(
                        "manifest: column '{}' of table '{}' has unreadable type '{}': {e}",
                        c.name, self.name, c.data_type
                    ))
                })?;
                Ok(Field::new(&c.name, dt, c.nullable))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Arc::new(Schema::new(fields)))
    }

    /// Column definitions from a schema, with empty statistics.
    pub fn columns_from_schema(schema: &Schema) -> Vec<ColumnMeta> {
        schema
            .fields()
            .iter()
            .map(|f| ColumnMeta {
                name: f.name().clone(),
                data_type: f.data_type().to_string(),
                nullable: f.is_nullable(),
                stats: ColumnStats::default(),
            })
            .collect()
    }
}

impl Manifest {
    /// Reads the manifest of `dir`; a directory without one holds an empty store. A
    /// manifest of another format is an error (see [`Manifest::load_any_format`]).
    pub fn load(dir: &Path) -> Result<Manifest> {
        let manifest = Manifest::load_any_format(dir)?;
        if manifest.format == FORMAT_PARQUET {
            return Err(TesseraError::Execution(format!(
                "the store {} was written by an earlier Tessera (format {FORMAT_PARQUET}, Parquet data files) and is \
                 converted when opened while no other process writes to it: close the other process and open it again",
                dir.display()
            )));
        }
        Ok(manifest)
    }

    /// Reads the manifest of `dir` in this format, in [`FORMAT_TILES_UNCOMPRESSED`] or in
    /// [`FORMAT_PARQUET`]; a newer format is an error, never misread.
    pub fn load_any_format(dir: &Path) -> Result<Manifest> {
        let path = dir.join(MANIFEST_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(TesseraError::io(format!("reading {}", path.display()), e)),
        };
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
            TesseraError::Execution(format!("the manifest {} is corrupt: {e}", path.display()))
        })?;
        if !matches!(manifest.format, FORMAT_PARQUET | FORMAT_TILES_UNCOMPRESSED | FORMAT_VERSION) {
            return Err(TesseraError::Execution(format!(
                "the manifest {} has format {} but this Tessera reads formats {FORMAT_PARQUET} to {FORMAT_VERSION}: \
                 it was written by a newer Tessera",
                path.display(),
                manifest.format
            )));
        }
        Ok(manifest)
    }

    /// Replaces the manifest of `dir` atomically: temporary file, fsync, rename, fsync dir.
    pub fn save(&self, dir: &Path) -> Result<()> {
        let tmp = dir.join(format!("{MANIFEST_FILE}.tmp"));
        let path = dir.join(MANIFEST_FILE);
        let text = serde_json::to_string_pretty(self)
            .map_err(|e| TesseraError::Internal(format!("cannot serialize manifest: {e}")))?;
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            sync_dir(dir)
        };
        write().map_err(|e| TesseraError::io(format!("writing {}", path.display()), e))
    }

    /// The table called `name`, if any.
    pub fn table(&self, name: &str) -> Option<&TableMeta> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// Mutable access to the table called `name`, if any.
    pub fn table_mut(&mut self, name: &str) -> Option<&mut TableMeta> {
        self.tables.iter_mut().find(|t| t.name == name)
    }
}

/// Flushes a directory's entries (a rename is durable only after this).
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Manifest::default();
        let schema = Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("d", DataType::Decimal128(15, 2), true),
        ]);
        m.tables.push(TableMeta {
            name: "t".into(),
            version: 1,
            columns: TableMeta::columns_from_schema(&schema),
            files: vec![],
            rows: 0,
        });
        m.save(dir.path()).unwrap();
        let back = Manifest::load(dir.path()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.tables[0].schema().unwrap().as_ref(), &schema);
        assert!(!dir.path().join("manifest.json.tmp").exists());
    }

    #[test]
    fn formats_1_to_3_are_read_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for format in [FORMAT_PARQUET, FORMAT_TILES_UNCOMPRESSED, FORMAT_VERSION] {
            Manifest { format, ..Manifest::default() }.save(dir.path()).unwrap();
            assert_eq!(Manifest::load_any_format(dir.path()).unwrap().format, format);
            // Only a store of Parquet files needs converting before it is used.
            assert_eq!(Manifest::load(dir.path()).is_ok(), format != FORMAT_PARQUET);
        }
        Manifest { format: FORMAT_VERSION + 1, ..Manifest::default() }.save(dir.path()).unwrap();
        let err = Manifest::load_any_format(dir.path()).unwrap_err().to_string();
        assert!(err.contains("written by a newer Tessera") && err.contains("format 4"), "{err}");
    }

    #[test]
    fn missing_manifest_is_an_empty_store_and_corrupt_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Manifest::load(dir.path()).unwrap(), Manifest::default());
        fs::write(dir.path().join(MANIFEST_FILE), "{ not json").unwrap();
        let err = Manifest::load(dir.path()).unwrap_err().to_string();
        assert!(err.contains("corrupt"), "{err}");
    }
}
