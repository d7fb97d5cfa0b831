//! The store: opening a data directory, transactions, and writing table files.

use std::collections::HashMap;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use tessera_common::{Result, TesseraError};

use crate::colfile::{self, FileWriter};
use crate::loaded::LoadedTable;
use crate::manifest::{sync_dir, FileMeta, Manifest, TableMeta, MANIFEST_FILE};
use crate::stats::ColumnAccumulator;

/// Folder of the data files inside the data directory.
const DATA_DIR: &str = "data";
/// Lock file held exclusively by a writing transaction (and by orphan cleanup).
const LOCK_FILE: &str = "LOCK";
/// A data file is closed and a new one started after this many rows, so that large
/// tables are split into files that are written in parallel (8 Mi rows is ~100 MB of
/// SSB lineorder, whose encoded tiles a writer holds in memory until the file is done).
const FILE_MAX_ROWS: usize = 8 << 20;

/// An open data directory.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    /// Tables loaded into memory, by name; an entry is valid while its version matches.
    cache: Mutex<HashMap<String, Arc<LoadedTable>>>,
    /// The last manifest read, with the identity of the file it came from.
    manifest_cache: Mutex<Option<(ManifestFileId, Arc<Manifest>)>>,
}

/// How one column is stored, over all of its table's data files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnStorage {
    /// Table name.
    pub table: String,
    /// Column name.
    pub column: String,
    /// Arrow type, as the manifest spells it.
    pub data_type: String,
    /// Rows of the table.
    pub rows: u64,
    /// Data files of the table.
    pub files: u64,
    /// Tiles of the column (0 for a column kept as Arrow IPC).
    pub tiles: u64,
    /// Tiles of each scheme, by `tiles::Scheme` number.
    pub schemes: [u64; 5],
    /// String tiles whose bytes are one zstd frame ([`crate::tiles::FLAG_ZSTD`]).
    pub zstd_tiles: u64,
    /// Values in the files' string dictionaries.
    pub dictionary_values: u64,
    /// Whether the column is kept as Arrow IPC (a type without a tile encoding).
    pub ipc: bool,
    /// Bytes in the data files.
    pub stored_bytes: u64,
    /// Bytes of its values in Arrow's layout.
    pub arrow_bytes: u64,
}

/// What identifies one committed manifest file: commits replace it by rename, so a new
/// commit changes the inode (and usually size and modification time).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ManifestFileId {
    len: u64,
    modified: Option<std::time::SystemTime>,
    inode: u64,
}

impl Store {
    /// Opens (creating if needed) the data directory `dir` and removes what an
    /// interrupted write left behind: data files no manifest references and a temporary
    /// manifest. Cleanup is skipped while another process holds the write lock.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(dir.join(DATA_DIR))
            .map_err(|e| TesseraError::io(format!("creating data directory {}", dir.display()), e))?;
        let store = Store { dir, cache: Mutex::new(HashMap::new()), manifest_cache: Mutex::new(None) };
        let lock = store.open_lock()?;
        match lock.try_lock() {
            Ok(()) => {
                let manifest = Manifest::load_any_format(&store.dir)?;
                store.remove_orphans(&manifest)?;
                if manifest.format == crate::manifest::FORMAT_PARQUET {
                    store.convert_parquet(manifest)?;
                }
            }
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(e)) => {
                return Err(TesseraError::io(format!("locking {}", store.dir.display()), e));
            }
        }
        Ok(store)
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The current committed manifest. It is parsed again only when the file changed
    /// (a `stat` per call): with its statistics sketches it is ~150 KB of JSON at SF 1,
    /// and every query looks at it several times.
    pub fn manifest(&self) -> Result<Arc<Manifest>> {
        let id = fs::metadata(self.dir.join("manifest.json")).ok().map(|m| ManifestFileId {
            len: m.len(),
            modified: m.modified().ok(),
            inode: std::os::unix::fs::MetadataExt::ino(&m),
        });
        if let (Some(id), Ok(cache)) = (&id, self.manifest_cache.lock()) {
            if let Some((cached_id, m)) = cache.as_ref() {
                if cached_id == id {
                    return Ok(Arc::clone(m));
                }
            }
        }
        let m = Arc::new(Manifest::load(&self.dir)?);
        if let (Some(id), Ok(mut cache)) = (id, self.manifest_cache.lock()) {
            *cache = Some((id, Arc::clone(&m)));
        }
        Ok(m)
    }

    /// Starts a write transaction: waits for the write lock, then reads the manifest.
    pub fn begin(&self) -> Result<Transaction<'_>> {
        let lock = self.open_lock()?;
        lock.lock().map_err(|e| TesseraError::io(format!("locking {}", self.dir.display()), e))?;
        let manifest = Manifest::load(&self.dir)?;
        Ok(Transaction { store: self, _lock: lock, manifest, new_files: Vec::new(), obsolete: Vec::new() })
    }

    /// The table loaded into memory, from the cache when its version is current.
    pub fn load(&self, table: &TableMeta) -> Result<Arc<LoadedTable>> {
        if let Some(t) = self.cache_get(&table.name).filter(|t| t.version == table.version) {
            return Ok(t);
        }
        let loaded = Arc::new(LoadedTable::load(&self.dir, table)?);
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(table.name.clone(), Arc::clone(&loaded));
        }
        Ok(loaded)
    }

    /// How each column of each table is stored: its tiles' schemes and its bytes in the
    /// files beside its bytes in Arrow's layout (what `tessera_storage()` shows).
    pub fn storage(&self) -> Result<Vec<ColumnStorage>> {
        let manifest = self.manifest()?;
        let mut out = Vec::new();
        for table in &manifest.tables {
            let loaded = self.load(table)?;
            for (c, column) in table.columns.iter().enumerate() {
                let mut s = ColumnStorage {
                    table: table.name.clone(),
                    column: column.name.clone(),
                    data_type: column.data_type.clone(),
                    rows: table.rows,
                    files: table.files.len() as u64,
                    ..ColumnStorage::default()
                };
                if column.data_type == "Utf8" {
                    s.zstd_tiles = loaded.tile_headers(c)?.iter().flatten().filter(|h| h.flags & crate::tiles::FLAG_ZSTD != 0).count() as u64;
                }
                for footer in loaded.footers() {
                    let Some(e) = footer.columns.get(c) else { continue };
                    s.tiles += e.tiles;
                    s.stored_bytes += e.stored_bytes;
                    s.arrow_bytes += e.arrow_bytes;
                    s.dictionary_values += e.dictionary.map_or(0, |d| d.1);
                    s.ipc |= e.ipc.is_some();
                    for (k, n) in e.schemes.iter().enumerate() {
                        s.schemes[k] += n;
                    }
                }
                out.push(s);
            }
        }
        Ok(out)
    }

    fn cache_get(&self, name: &str) -> Option<Arc<LoadedTable>> {
        self.cache.lock().ok()?.get(name).cloned()
    }

    fn open_lock(&self) -> Result<File> {
        let path = self.dir.join(LOCK_FILE);
        File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| TesseraError::io(format!("opening {}", path.display()), e))
    }

    /// Rewrites a store of Parquet data files (format 1) as tile files, table by table
    /// and file by file, then replaces the manifest at once: a process killed during the
    /// conversion leaves the Parquet store as it was (the new files are orphans, removed
    /// at the next open). Must be called with the write lock held.
    fn convert_parquet(&self, mut manifest: Manifest) -> Result<()> {
        let mut written = Vec::new();
        let mut old = Vec::new();
        let result = (|| -> Result<()> {
            for table in &mut manifest.tables {
                let schema = table.schema()?;
                for file in &mut table.files {
                    let source = self.dir.join(&file.path);
                    let id = manifest.next_file_id;
                    manifest.next_file_id += 1;
                    let rel = format!("{DATA_DIR}/{id:010}.{}", colfile::EXTENSION);
                    let path = self.dir.join(&rel);
                    written.push(path.clone());
                    let mut writer = FileWriter::new(path.clone(), Arc::clone(&schema));
                    for batch in read_parquet(&source)? {
                        writer.write(&conform(&table.name, &schema, &batch)?)?;
                    }
                    let bytes = writer.finish()?;
                    File::open(&path).and_then(|f| f.sync_all()).map_err(|e| TesseraError::io(format!("syncing {}", path.display()), e))?;
                    old.push(source);
                    *file = FileMeta { path: rel, rows: file.rows, bytes };
                }
                table.version += 1;
            }
            sync_dir(&self.dir.join(DATA_DIR)).map_err(|e| TesseraError::io("syncing the data folder", e))?;
            manifest.format = crate::manifest::FORMAT_VERSION;
            manifest.version += 1;
            manifest.save(&self.dir)
        })();
        if let Err(e) = result {
            for f in written {
                let _ = fs::remove_file(f);
            }
            return Err(TesseraError::Execution(format!("converting the store {} to this Tessera's format: {e}", self.dir.display())));
        }
        for f in old {
            let _ = fs::remove_file(f);
        }
        Ok(())
    }

    /// Deletes data files the manifest does not reference and a stale temporary
    /// manifest. Must be called with the write lock held.
    fn remove_orphans(&self, manifest: &Manifest) -> Result<()> {
        let live: std::collections::HashSet<&str> =
            manifest.tables.iter().flat_map(|t| t.files.iter().map(|f| f.path.as_str())).collect();
        let data = self.dir.join(DATA_DIR);
        let entries =
            fs::read_dir(&data).map_err(|e| TesseraError::io(format!("listing {}", data.display()), e))?;
        for entry in entries.flatten() {
            let rel = format!("{DATA_DIR}/{}", entry.file_name().to_string_lossy());
            if !live.contains(rel.as_str()) {
                let _ = fs::remove_file(entry.path());
            }
        }
        let _ = fs::remove_file(self.dir.join(format!("{MANIFEST_FILE}.tmp")));
        Ok(())
    }
}

/// A write in progress. Holds the store's write lock; nothing it does is visible until
/// [`Transaction::commit`]. Dropped without commit, it deletes the files it wrote.
#[derive(Debug)]
pub struct Transaction<'a> {
    store: &'a Store,
    _lock: File,
    manifest: Manifest,
    /// Files written by this transaction (deleted if it does not commit).
    new_files: Vec<PathBuf>,
    /// Files no longer referenced once this transaction commits (deleted after it).
    obsolete: Vec<PathBuf>,
}

impl<'a> Transaction<'a> {
    /// The manifest as this transaction has changed it so far.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Creates an empty table. Returns `false` (and changes nothing) when it exists and
    /// `if_not_exists` is set; with `or_replace`, an existing table is replaced.
    pub fn create_table(
        &mut self,
        name: &str,
        schema: &Schema,
        if_not_exists: bool,
        or_replace: bool,
    ) -> Result<bool> {
        if self.manifest.table(name).is_some() {
            if if_not_exists {
                return Ok(false);
            }
            if !or_replace {
                return Err(TesseraError::Plan(format!("table '{name}' already exists")));
            }
            self.drop_table(name, false)?;
        }
        let mut seen = std::collections::HashSet::new();
        for f in schema.fields() {
            if !seen.insert(f.name()) {
                return Err(TesseraError::Plan(format!("duplicate column name '{}'", f.name())));
            }
        }
        let previous = self.manifest.version;
        self.manifest.tables.push(TableMeta {
            name: name.to_string(),
            version: previous + 1,
            columns: TableMeta::columns_from_schema(schema),
            files: Vec::new(),
            rows: 0,
        });
        Ok(true)
    }

    /// Drops a table. Returns `false` when it does not exist and `if_exists` is set.
    pub fn drop_table(&mut self, name: &str, if_exists: bool) -> Result<bool> {
        let Some(pos) = self.manifest.tables.iter().position(|t| t.name == name) else {
            if if_exists {
                return Ok(false);
            }
            return Err(TesseraError::Plan(format!("table '{name}' does not exist")));
        };
        let table = self.manifest.tables.remove(pos);
        self.obsolete.extend(table.files.iter().map(|f| self.store.dir.join(&f.path)));
        Ok(true)
    }

    /// Starts writing rows into table `name`: appended to its rows, or replacing them
    /// when `overwrite` is set. Batches must have the table's column types.
    pub fn writer(&mut self, name: &str, overwrite: bool) -> Result<TableWriter<'_, 'a>> {
        let table = self
            .manifest
            .table(name)
            .ok_or_else(|| TesseraError::Plan(format!("table '{name}' does not exist")))?;
        let schema = table.schema()?;
        let stats = if overwrite {
            schema.fields().iter().map(|_| ColumnAccumulator::default()).collect()
        } else {
            table
                .columns
                .iter()
                .zip(schema.fields())
                .map(|(c, f)| ColumnAccumulator::from_stats(&c.stats, f.data_type()))
                .collect::<Result<Vec<_>>>()?
        };
        Ok(TableWriter {
            tx: self,
            table: name.to_string(),
            schema,
            overwrite,
            stats,
            current: None,
            files: Vec::new(),
            rows: 0,
            dictionary_max: crate::DICTIONARY_MAX_DISTINCT,
        })
    }

    /// Makes every change of this transaction visible at once (atomic manifest
    /// replacement), then deletes files that are no longer referenced. The manifest says
    /// this Tessera's format from then on (a store of format 2 becomes format 3: the
    /// files written may hold compressed string tiles).
    pub fn commit(mut self) -> Result<()> {
        self.manifest.version += 1;
        self.manifest.format = crate::manifest::FORMAT_VERSION;
        for file in &self.new_files {
            // The data must be durable before the manifest that points at it. A reserved
            // chunk file that received no rows was never created and is not referenced.
            match File::open(file).and_then(|f| f.sync_all()) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                r => r.map_err(|e| TesseraError::io(format!("syncing {}", file.display()), e))?,
            }
        }
        if !self.new_files.is_empty() {
            sync_dir(&self.store.dir.join(DATA_DIR))
                .map_err(|e| TesseraError::io("syncing the data folder", e))?;
        }
        self.manifest.save(&self.store.dir)?;
        self.new_files.clear();
        for file in self.obsolete.drain(..) {
            let _ = fs::remove_file(file);
        }
        Ok(())
    }

    fn new_file(&mut self) -> (String, PathBuf) {
        let id = self.manifest.next_file_id;
        self.manifest.next_file_id += 1;
        let rel = format!("{DATA_DIR}/{id:010}.{}", colfile::EXTENSION);
        let path = self.store.dir.join(&rel);
        self.new_files.push(path.clone());
        (rel, path)
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        for file in &self.new_files {
            let _ = fs::remove_file(file);
        }
    }
}

/// Checks a batch against the table's schema (column count, types, NOT NULL) and
/// re-labels it with that schema.
fn conform(table: &str, schema: &SchemaRef, batch: &RecordBatch) -> Result<RecordBatch> {
    if batch.num_columns() != schema.fields().len() {
        return Err(TesseraError::Plan(format!(
            "table '{}' has {} columns but {} values were supplied",
            table,
            schema.fields().len(),
            batch.num_columns()
        )));
    }
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if field.data_type() != column.data_type() {
            return Err(TesseraError::Internal(format!(
                "column '{}' of table '{}' is {} but a batch of {} was written",
                field.name(),
                table,
                field.data_type(),
                column.data_type()
            )));
        }
        if !field.is_nullable() && column.null_count() > 0 {
            return Err(TesseraError::Execution(format!(
                "NULL value in column '{}' of table '{}' violates its NOT NULL constraint",
                field.name(),
                table
            )));
        }
    }
    RecordBatch::try_new(Arc::clone(schema), batch.columns().to_vec())
        .map_err(|e| TesseraError::Internal(format!("rebuilding batch: {e}")))
}

/// The batches of a Parquet data file (a store of format 1).
fn read_parquet(path: &Path) -> Result<Vec<RecordBatch>> {
    let file = File::open(path).map_err(|e| TesseraError::io(format!("opening {}", path.display()), e))?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| TesseraError::Execution(format!("reading {}: {e}", path.display())))?;
    reader.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| TesseraError::Execution(format!("reading {}: {e}", path.display())))
}

/// One data file of a table written on another thread, so that a large load encodes
/// files in parallel. Reserved by [`TableWriter::reserve_chunks`], filled with
/// [`ChunkFile::write`], closed with [`ChunkFile::close`] on the same thread, and added
/// in order with [`TableWriter::add_chunk`].
pub struct ChunkFile {
    table: String,
    schema: SchemaRef,
    rel: String,
    writer: FileWriter,
    stats: Vec<ColumnAccumulator>,
}

/// A closed [`ChunkFile`], ready to be added to its table.
pub struct ClosedChunk {
    file: Option<FileMeta>,
    rows: u64,
    stats: Vec<ColumnAccumulator>,
}

impl ClosedChunk {
    /// Rows in the chunk.
    pub fn rows(&self) -> u64 {
        self.rows
    }
}

impl ChunkFile {
    /// Writes one batch (checked like [`TableWriter::write`]); the file is created on
    /// the first non-empty batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = conform(&self.table, &self.schema, batch)?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        self.writer.write(&batch)?;
        for (acc, column) in self.stats.iter_mut().zip(batch.columns()) {
            acc.update(column)?;
        }
        Ok(())
    }

    /// Finishes the file (its last tile is encoded and the file written here, on the
    /// caller's thread).
    pub fn close(self) -> Result<ClosedChunk> {
        let rows = self.writer.rows();
        let file = if rows == 0 {
            None
        } else {
            let bytes = self.writer.finish()?;
            Some(FileMeta { path: self.rel, rows, bytes })
        };
        Ok(ClosedChunk { file, rows, stats: self.stats })
    }
}

/// Writes batches into one table inside a transaction; [`TableWriter::finish`] records
/// the new files and statistics in the transaction's manifest.
pub struct TableWriter<'t, 'a> {
    tx: &'t mut Transaction<'a>,
    table: String,
    schema: SchemaRef,
    overwrite: bool,
    stats: Vec<ColumnAccumulator>,
    current: Option<OpenFile>,
    files: Vec<FileMeta>,
    rows: u64,
    dictionary_max: u64,
}

struct OpenFile {
    rel: String,
    writer: FileWriter,
}

impl TableWriter<'_, '_> {
    /// String columns with at most `n` distinct values (of the whole table, after this
    /// write) are dictionary-encoded when loaded; the default is
    /// [`DICTIONARY_MAX_DISTINCT`](crate::DICTIONARY_MAX_DISTINCT).
    pub fn dictionary_max_distinct(&mut self, n: u64) {
        self.dictionary_max = n;
    }

    /// The table's schema; batches passed to [`TableWriter::write`] must match it.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Writes one batch. Its columns must have the table's types; a NULL in a NOT NULL
    /// column is an error.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let batch = conform(&self.table, &self.schema, batch)?;
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let mut offset = 0;
        while offset < batch.num_rows() {
            if self.current.as_ref().is_none_or(|f| f.writer.rows() >= FILE_MAX_ROWS as u64) {
                self.close_file()?;
                self.open_file()?;
            }
            let Some(file) = self.current.as_mut() else {
                return Err(TesseraError::Internal("no open data file".into()));
            };
            let take = (FILE_MAX_ROWS - file.writer.rows() as usize).min(batch.num_rows() - offset);
            file.writer.write(&batch.slice(offset, take))?;
            offset += take;
        }
        for (acc, column) in self.stats.iter_mut().zip(batch.columns()) {
            acc.update(column as &ArrayRef)?;
        }
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn open_file(&mut self) -> Result<()> {
        let (rel, path) = self.tx.new_file();
        self.current = Some(OpenFile { rel, writer: FileWriter::new(path, Arc::clone(&self.schema)) });
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        if let Some(f) = self.current.take() {
            let rows = f.writer.rows();
            if rows > 0 {
                let bytes = f.writer.finish()?;
                self.files.push(FileMeta { path: f.rel, rows, bytes });
            }
        }
        Ok(())
    }

    /// Reserves `n` data files to be written on other threads (see [`ChunkFile`]).
    pub fn reserve_chunks(&mut self, n: usize) -> Vec<ChunkFile> {
        (0..n)
            .map(|_| {
                let (rel, path) = self.tx.new_file();
                ChunkFile {
                    table: self.table.clone(),
                    schema: Arc::clone(&self.schema),
                    rel,
                    writer: FileWriter::new(path, Arc::clone(&self.schema)),
                    stats: self.schema.fields().iter().map(|_| ColumnAccumulator::default()).collect(),
                }
            })
            .collect()
    }

    /// Adds a closed chunk after the rows written so far.
    pub fn add_chunk(&mut self, chunk: ClosedChunk) -> Result<()> {
        self.close_file()?;
        self.files.extend(chunk.file);
        for (acc, part) in self.stats.iter_mut().zip(&chunk.stats) {
            acc.merge(part);
        }
        self.rows += chunk.rows;
        Ok(())
    }

    /// Closes the files and records them in the transaction; returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.close_file()?;
        let dir = self.tx.store.dir.clone();
        let new_version = self.tx.manifest.version + 1;
        let table = self
            .tx
            .manifest
            .table_mut(&self.table)
            .ok_or_else(|| TesseraError::Internal(format!("table '{}' vanished", self.table)))?;
        let mut obsolete = Vec::new();
        if self.overwrite {
            obsolete.extend(table.files.drain(..).map(|f| dir.join(f.path)));
            table.rows = 0;
        }
        table.files.append(&mut self.files);
        table.rows += self.rows;
        table.version = new_version;
        for ((column, acc), field) in table.columns.iter_mut().zip(&self.stats).zip(self.schema.fields()) {
            column.stats = acc.finish(field.data_type(), self.dictionary_max);
        }
        self.tx.obsolete.extend(obsolete);
        Ok(self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::colfile::WRITE_UNCOMPRESSED;
    use crate::manifest::{FORMAT_TILES_UNCOMPRESSED, FORMAT_VERSION};
    use crate::tiles::{FLAG_LENGTHS, FLAG_ZSTD};
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field};

    fn schema() -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("comment", DataType::Utf8, true),
            Field::new("mode", DataType::Utf8, false),
        ]))
    }

    fn batch(rows: std::ops::Range<i64>) -> RecordBatch {
        let words = ["carefully final deposits", "wake", "sleep slyly", "nag", "ironic packages", "blithely"];
        let comment = |i: i64| (i % 10 != 0).then(|| format!("{} {i} {}", words[i as usize % 6], words[(i / 7) as usize % 6]));
        RecordBatch::try_new(
            schema(),
            vec![
                Arc::new(Int64Array::from_iter_values(rows.clone())),
                Arc::new(StringArray::from_iter(rows.clone().map(comment))),
                Arc::new(StringArray::from_iter_values(rows.map(|i| ["AIR", "RAIL", "SHIP"][i as usize % 3]))),
            ],
        )
        .unwrap()
    }

    /// Appends rows to table `t` (created on the first call) in one transaction; the
    /// comments are too many for a dictionary when loaded, the modes are not.
    fn append(store: &Store, rows: std::ops::Range<i64>) {
        let mut tx = store.begin().unwrap();
        if tx.manifest().table("t").is_none() {
            tx.create_table("t", &schema(), false, false).unwrap();
        }
        let mut w = tx.writer("t", false).unwrap();
        w.dictionary_max_distinct(1000);
        for at in rows.clone().step_by(10_000) {
            w.write(&batch(at..rows.end.min(at + 10_000))).unwrap();
        }
        w.finish().unwrap();
        tx.commit().unwrap();
    }

    fn read(store: &Store) -> RecordBatch {
        let m = store.manifest().unwrap();
        let t = store.load(m.table("t").unwrap()).unwrap();
        let batches: Vec<RecordBatch> = (0..t.batch_rows().len()).map(|i| t.logical_batch(i, None).unwrap()).collect();
        arrow::compute::concat_batches(&schema(), &batches).unwrap()
    }

    /// Per data file of `t`, its comment tiles of lengths and how many are compressed.
    fn comment_tiles(store: &Store) -> Vec<(usize, usize)> {
        let m = store.manifest().unwrap();
        let t = store.load(m.table("t").unwrap()).unwrap();
        let headers = t.tile_headers(1).unwrap();
        headers
            .iter()
            .map(|hs| (hs.iter().filter(|h| h.flags & FLAG_LENGTHS != 0).count(), hs.iter().filter(|h| h.flags & FLAG_ZSTD != 0).count()))
            .collect()
    }

    /// A store of format 2 (tiles, never compressed) opens and reads as it is, and its
    /// manifest keeps saying 2 while it is only read; the first write into it records
    /// format 3, and its old and new files read side by side.
    #[test]
    fn a_format_2_store_is_read_as_it_is_and_says_3_once_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        WRITE_UNCOMPRESSED.set(true);
        append(&store, 0..50_000);
        WRITE_UNCOMPRESSED.set(false);
        let mut m = Manifest::load(dir.path()).unwrap();
        m.format = FORMAT_TILES_UNCOMPRESSED;
        m.save(dir.path()).unwrap();
        drop(store);

        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.manifest().unwrap().format, FORMAT_TILES_UNCOMPRESSED);
        let tiles = comment_tiles(&store);
        assert!(tiles.len() == 1 && tiles[0].0 > 0 && tiles[0].1 == 0, "{tiles:?}");
        assert_eq!(read(&store), batch(0..50_000));
        let report = store.storage().unwrap();
        let comment = report.iter().find(|r| r.column == "comment").unwrap();
        assert_eq!(comment.zstd_tiles, 0);
        let data_bytes = |store: &Store| -> Vec<u64> {
            let m = store.manifest().unwrap();
            store.load(m.table("t").unwrap()).unwrap().footers().map(|f| f.columns[1].data_len).collect()
        };
        let uncompressed_bytes = comment.stored_bytes;
        // Opening, reading and the storage report leave the manifest as it was.
        assert_eq!(Manifest::load(dir.path()).unwrap().format, FORMAT_TILES_UNCOMPRESSED);

        append(&store, 50_000..100_000);
        assert_eq!(Manifest::load(dir.path()).unwrap().format, FORMAT_VERSION);
        let tiles = comment_tiles(&store);
        assert!(tiles.len() == 2 && tiles[0].1 == 0 && tiles[1].1 == tiles[1].0 && tiles[1].0 > 0, "{tiles:?}");
        let expected = batch(0..100_000);
        assert_eq!(read(&store), expected);
        // The report counts the compressed tiles; the new file's comments (as many rows
        // as the old file's) take fewer bytes, their tiles (past the dictionary's 16)
        // less than half.
        let report = store.storage().unwrap();
        let comment = report.iter().find(|r| r.column == "comment").unwrap();
        assert_eq!(comment.zstd_tiles, tiles[1].1 as u64);
        assert!(comment.stored_bytes - uncompressed_bytes < uncompressed_bytes, "{comment:?}, {uncompressed_bytes} before");
        let data = data_bytes(&store);
        assert!(data[1] * 2 < data[0], "{data:?}");
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(read(&store), expected);
    }

    /// A transaction that writes no data file still records this Tessera's format.
    #[test]
    fn any_commit_records_the_current_format() {
        let dir = tempfile::tempdir().unwrap();
        Manifest { format: FORMAT_TILES_UNCOMPRESSED, ..Manifest::default() }.save(dir.path()).unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.manifest().unwrap().format, FORMAT_TILES_UNCOMPRESSED);
        let mut tx = store.begin().unwrap();
        tx.create_table("t", &schema(), false, false).unwrap();
        tx.commit().unwrap();
        assert_eq!(store.manifest().unwrap().format, FORMAT_VERSION);
    }
}
