//! The store's data format: tables of every type round-trip through tile files across
//! files and batches, columns decode lazily and alone, stores of the earlier Parquet
//! format are converted when opened, and a store of an unknown format is refused.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Int32Type, Schema};
use tessera_storage::{Manifest, Store, TableMeta};

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("k", DataType::Int64, false),
        Field::new("d", DataType::Date32, false),
        Field::new("m", DataType::Decimal128(15, 2), true),
        Field::new("f", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("name", DataType::Utf8, false),
        Field::new("q", DataType::Int32, true),
    ]))
}

fn batch(rows: std::ops::Range<i64>) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(rows.clone())),
        Arc::new(Date32Array::from_iter_values(rows.clone().map(|i| 8000 + (i / 1000) as i32))),
        Arc::new(Decimal128Array::from_iter(rows.clone().map(|i| (i % 13 != 0).then_some(i as i128 * 37 % 100_000))).with_precision_and_scale(15, 2).unwrap()),
        Arc::new(Float64Array::from_iter(rows.clone().map(|i| (i % 7 != 0).then_some(i as f64 * 0.25)))),
        Arc::new(StringArray::from_iter(rows.clone().map(|i| (i % 5 != 0).then(|| ["AIR", "RAIL", "SHIP"][i as usize % 3].to_string())))),
        Arc::new(StringArray::from_iter_values(rows.clone().map(|i| format!("Customer#{i:09}")))),
        Arc::new(Int32Array::from_iter(rows.map(|i| (i % 11 != 0).then_some((i % 50) as i32)))),
    ];
    RecordBatch::try_new(schema(), cols).unwrap()
}

fn write(store: &Store, parts: &[std::ops::Range<i64>]) {
    let mut tx = store.begin().unwrap();
    if tx.manifest().table("t").is_none() {
        tx.create_table("t", &schema(), false, false).unwrap();
    }
    let mut w = tx.writer("t", false).unwrap();
    for p in parts {
        w.write(&batch(p.clone())).unwrap();
    }
    w.finish().unwrap();
    tx.commit().unwrap();
}

/// The table's rows with the declared types, in order.
fn read(store: &Store) -> RecordBatch {
    let m = store.manifest().unwrap();
    let t = store.load(m.table("t").unwrap()).unwrap();
    let batches: Vec<RecordBatch> = (0..t.batch_rows().len()).map(|i| t.logical_batch(i, None).unwrap()).collect();
    arrow::compute::concat_batches(&schema(), &batches).unwrap()
}

#[test]
fn tables_round_trip_across_files_batches_and_appends() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // Batches that cut tiles and loaded batches; then an append of a few rows.
    write(&store, &[0..1000, 1000..70_000, 70_000..140_001]);
    write(&store, &[140_001..140_010]);
    let expected = arrow::compute::concat_batches(&schema(), &[batch(0..140_010)]).unwrap();
    assert_eq!(read(&store), expected);
    // Reopened by a new process: the same rows.
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(read(&store), expected);
    let m = store.manifest().unwrap();
    let t = store.load(m.table("t").unwrap()).unwrap();
    // The low-cardinality string column is codes of a sorted dictionary across files.
    let dict = t.dictionary(4).unwrap().expect("s is dictionary-encoded");
    assert_eq!(dict.values.iter().flatten().collect::<Vec<_>>(), ["AIR", "RAIL", "SHIP"]);
    let codes = t.column(4).unwrap();
    let first = codes[0].as_dictionary::<Int32Type>();
    assert_eq!((first.keys().value(1), first.keys().value(2), first.is_null(0)), (1, 2, true));
    // Sorted keys and clustered dates are stored in far fewer bytes than Arrow's.
    let report = store.storage().unwrap();
    let k = report.iter().find(|r| r.column == "k").unwrap();
    assert!(k.stored_bytes * 10 < k.arrow_bytes, "{k:?}");
    assert_eq!((k.rows, k.files, k.tiles), (140_010, 2, 140_001usize.div_ceil(2048) as u64 + 1));
    let name = report.iter().find(|r| r.column == "name").unwrap();
    assert!(name.stored_bytes > 0 && name.dictionary_values > 0, "{name:?}");
    // Zone maps: the dates of the first batch, none for floats.
    assert_eq!(t.batch_zone(1, 0), Some(Some((8000, 8065))));
    assert_eq!(t.batch_zone(3, 0), None);
}

#[test]
fn packed_columns_give_every_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // Two appends: the first file ends in a partial tile.
    write(&store, &[0..5000]);
    write(&store, &[5000..9000]);
    let m = store.manifest().unwrap();
    let t = store.load(m.table("t").unwrap()).unwrap();
    let p = t.packed_column(1).unwrap().expect("dates pack");
    for row in 0..9000 {
        assert_eq!(p.get(row), 8000 + row as i64 / 1000, "row {row}");
    }
    let k = t.packed_column(0).unwrap().expect("keys pack");
    assert!((0..9000).all(|r| k.get(r) == r as i64));
    // NULLs, floats and dictionary codes do not.
    assert!(t.packed_column(2).unwrap().is_none());
    assert!(t.packed_column(3).unwrap().is_none());
    assert!(t.packed_column(4).unwrap().is_none());
}

/// The runs a column holds, as its tiles show them: dates repeated 1000 rows at a time
/// (constant or run-length tiles: at most a run a tile and a run a date), distinct
/// keys (a row each), across two files.
#[test]
fn column_runs_count_what_the_tiles_show() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    write(&store, &[0..5000]);
    write(&store, &[5000..9000]);
    let m = store.manifest().unwrap();
    let t = store.load(m.table("t").unwrap()).unwrap();
    let dates = t.column_runs(1).unwrap();
    let tiles = 5000usize.div_ceil(2048) + 4000usize.div_ceil(2048);
    assert!((9..=9 + tiles).contains(&dates), "{dates} runs of dates");
    assert_eq!(t.column_runs(0), Some(9000));
    assert_eq!(t.column_runs(99), None);
}

/// A store written by Tessera before the tile format: Parquet files and a manifest of
/// format 1, as that release wrote them.
fn write_parquet_store(dir: &std::path::Path) {
    std::fs::create_dir_all(dir.join("data")).unwrap();
    let mut files = Vec::new();
    for (i, rows) in [0..3000i64, 3000..3100].into_iter().enumerate() {
        let rel = format!("data/{:010}.parquet", i + 1);
        let f = std::fs::File::create(dir.join(&rel)).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(f, schema(), None).unwrap();
        w.write(&batch(rows.clone())).unwrap();
        w.close().unwrap();
        files.push(tessera_storage::FileMeta { path: rel, rows: rows.end as u64 - rows.start as u64, bytes: 0 });
    }
    let mut columns = TableMeta::columns_from_schema(&schema());
    columns[4].stats.dictionary = true;
    let manifest = Manifest {
        format: 1,
        version: 3,
        next_file_id: 3,
        tables: vec![TableMeta { name: "t".into(), version: 2, columns, files, rows: 3100 }],
    };
    manifest.save(dir).unwrap();
}

#[test]
fn a_parquet_store_is_converted_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    write_parquet_store(dir.path());
    let store = Store::open(dir.path()).unwrap();
    let m = store.manifest().unwrap();
    assert_eq!(m.format, tessera_storage::FORMAT_VERSION);
    assert!(m.table("t").unwrap().files.iter().all(|f| f.path.ends_with(".tiles")));
    let names: Vec<String> = std::fs::read_dir(dir.path().join("data")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| n.ends_with(".tiles")) && names.len() == 2, "{names:?}");
    assert_eq!(read(&store), batch(0..3100));
    assert_eq!(store.load(m.table("t").unwrap()).unwrap().dictionary(4).unwrap().unwrap().values.len(), 3);
}

#[test]
fn a_damaged_parquet_store_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    write_parquet_store(dir.path());
    std::fs::write(dir.path().join("data/0000000002.parquet"), b"not parquet").unwrap();
    let before = std::fs::read(dir.path().join("manifest.json")).unwrap();
    let err = Store::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("converting the store"), "{err}");
    assert_eq!(std::fs::read(dir.path().join("manifest.json")).unwrap(), before);
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join("data")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["0000000001.parquet", "0000000002.parquet"]);
}

#[test]
fn a_store_of_a_newer_format_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = Manifest { format: 99, ..Manifest::default() };
    manifest.save(dir.path()).unwrap();
    let err = Store::open(dir.path()).unwrap_err().to_string();
    assert!(err.contains("newer Tessera"), "{err}");
}

#[test]
fn a_damaged_data_file_is_an_error_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    write(&store, &[0..10_000]);
    let m = store.manifest().unwrap();
    let path = dir.path().join(&m.table("t").unwrap().files[0].path);
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
    let fresh = Store::open(dir.path()).unwrap();
    let err = fresh.load(m.table("t").unwrap()).unwrap_err().to_string();
    assert!(err.contains("corrupt data file") || err.contains("not a Tessera data file"), "{err}");
}
