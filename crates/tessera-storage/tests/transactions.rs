//! The store's all-or-nothing writes: an uncommitted transaction leaves nothing behind,
//! appends keep statistics, and opening the store removes orphan files.

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use tessera_storage::Store;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false), Field::new("s", DataType::Utf8, true)]))
}

fn batch(keys: std::ops::Range<i64>) -> RecordBatch {
    let s: Vec<Option<String>> = keys.clone().map(|k| (k % 3 != 0).then(|| format!("v{}", k % 5))).collect();
    RecordBatch::try_new(schema(), vec![Arc::new(Int64Array::from_iter_values(keys)), Arc::new(StringArray::from(s))]).unwrap()
}

/// Creates table `t` holding `keys` and commits.
fn create_table_with(store: &Store, keys: std::ops::Range<i64>) {
    let mut tx = store.begin().unwrap();
    tx.create_table("t", &schema(), false, false).unwrap();
    let mut w = tx.writer("t", false).unwrap();
    w.write(&batch(keys)).unwrap();
    w.finish().unwrap();
    tx.commit().unwrap();
}

fn data_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir.join("data")).unwrap().count()
}

#[test]
fn committed_writes_are_visible_and_uncommitted_ones_vanish() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    create_table_with(&store, 0..100);
    {
        // Dropped without commit: the manifest is unchanged and its file is removed.
        let mut tx = store.begin().unwrap();
        let mut w = tx.writer("t", false).unwrap();
        w.write(&batch(100..200)).unwrap();
        w.finish().unwrap();
        assert_eq!(data_files(dir.path()), 2);
    }
    assert_eq!(data_files(dir.path()), 1);
    let m = store.manifest().unwrap();
    let t = m.table("t").unwrap();
    assert_eq!(t.rows, 100);
    let loaded = store.load(t).unwrap();
    assert_eq!(loaded.rows, 100);
    // The low-cardinality string column is dictionary-encoded with a sorted dictionary.
    let dict = loaded.dictionary(1).unwrap().expect("s is dictionary-encoded");
    let values: Vec<&str> = dict.values.iter().flatten().collect();
    assert_eq!(values, vec!["v0", "v1", "v2", "v3", "v4"]);
    assert_eq!(loaded.logical_batch(0, None).unwrap().column(1).data_type(), &DataType::Utf8);
}

#[test]
fn appends_update_statistics_and_versions() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    create_table_with(&store, 10..20);
    let v1 = store.manifest().unwrap().table("t").unwrap().version;

    let mut tx = store.begin().unwrap();
    let mut w = tx.writer("t", false).unwrap();
    w.write(&batch(-5..3)).unwrap();
    w.finish().unwrap();
    tx.commit().unwrap();
    let m = store.manifest().unwrap();
    let t = m.table("t").unwrap();
    assert!(t.version > v1);
    assert_eq!(t.rows, 18);
    let k = &t.columns[0].stats;
    assert_eq!((k.min.as_deref(), k.max.as_deref(), k.null_count), (Some("-5"), Some("19"), 0));
    assert_eq!(k.distinct_estimate, 18);
    let s = &t.columns[1].stats;
    assert_eq!(s.null_count, 5); // multiples of 3: -3, 0, 12, 15, 18
    assert!(s.dictionary);
}

/// A writer's dictionary limit decides whether its string columns are encoded when
/// loaded: "v0".."v4" are five distinct values.
#[test]
fn the_writers_dictionary_limit_decides_the_encoding() {
    for (limit, encoded) in [(None, true), (Some(5), true), (Some(4), false)] {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut tx = store.begin().unwrap();
        tx.create_table("t", &schema(), false, false).unwrap();
        let mut w = tx.writer("t", false).unwrap();
        if let Some(n) = limit {
            w.dictionary_max_distinct(n);
        }
        w.write(&batch(0..15)).unwrap();
        w.finish().unwrap();
        tx.commit().unwrap();
        let m = store.manifest().unwrap();
        let t = m.table("t").unwrap();
        assert_eq!(t.columns[1].stats.dictionary, encoded, "{limit:?}");
        let loaded = store.load(t).unwrap();
        assert_eq!(matches!(loaded.column(1).unwrap()[0].data_type(), DataType::Dictionary(..)), encoded, "{limit:?}");
    }
}

#[test]
fn not_null_violation_and_type_mismatch_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut tx = store.begin().unwrap();
    tx.create_table("t", &schema(), false, false).unwrap();
    let mut w = tx.writer("t", false).unwrap();
    let nullable = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true), Field::new("s", DataType::Utf8, true)]));
    let bad = RecordBatch::try_new(nullable, vec![Arc::new(Int64Array::from(vec![Some(1), None])), Arc::new(StringArray::from(vec!["a", "b"]))]).unwrap();
    let err = w.write(&bad).unwrap_err().to_string();
    assert!(err.contains("NULL value in column 'k' of table 't'"), "{err}");
    assert!(tx.create_table("t", &schema(), false, false).unwrap_err().to_string().contains("already exists"));
    assert!(tx.drop_table("nope", false).is_err());
    assert!(!tx.drop_table("nope", true).unwrap());
}

#[test]
fn opening_removes_orphans_and_a_stale_temporary_manifest() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        create_table_with(&store, 0..10);
    }
    // What a killed writer leaves: a data file nobody references and a half-written manifest.
    std::fs::write(dir.path().join("data/9999999999.tiles"), b"partial").unwrap();
    std::fs::write(dir.path().join("manifest.json.tmp"), b"{ half").unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(data_files(dir.path()), 1);
    assert!(!dir.path().join("manifest.json.tmp").exists());
    assert_eq!(store.manifest().unwrap().table("t").unwrap().rows, 10);
}

#[test]
fn drop_and_replace_remove_old_files_after_commit() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    create_table_with(&store, 0..10);

    let mut tx = store.begin().unwrap();
    let mut w = tx.writer("t", true).unwrap(); // overwrite
    w.write(&batch(0..3)).unwrap();
    w.finish().unwrap();
    tx.commit().unwrap();
    assert_eq!(data_files(dir.path()), 1);
    assert_eq!(store.manifest().unwrap().table("t").unwrap().rows, 3);

    let mut tx = store.begin().unwrap();
    assert!(tx.drop_table("t", false).unwrap());
    tx.commit().unwrap();
    assert_eq!(data_files(dir.path()), 0);
    assert!(store.manifest().unwrap().tables.is_empty());
}

#[test]
fn chunks_written_on_other_threads_join_the_table_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut tx = store.begin().unwrap();
    tx.create_table("t", &schema(), false, false).unwrap();
    let mut w = tx.writer("t", false).unwrap();
    w.write(&batch(0..5)).unwrap();
    let mut chunks = w.reserve_chunks(3).into_iter();
    let (mut a, mut b, c) = (chunks.next().unwrap(), chunks.next().unwrap(), chunks.next().unwrap());
    let closed_b = std::thread::spawn(move || {
        b.write(&batch(200..210)).unwrap();
        b.close().unwrap()
    })
    .join()
    .unwrap();
    a.write(&batch(100..103)).unwrap();
    let closed_a = a.close().unwrap();
    let closed_c = c.close().unwrap(); // an empty chunk adds no file
    for closed in [closed_a, closed_b, closed_c] {
        w.add_chunk(closed).unwrap();
    }
    assert_eq!(w.finish().unwrap(), 18);
    tx.commit().unwrap();

    let m = store.manifest().unwrap();
    let t = m.table("t").unwrap();
    assert_eq!((t.rows, t.files.len()), (18, 3));
    let k = &t.columns[0].stats;
    assert_eq!((k.min.as_deref(), k.max.as_deref()), (Some("0"), Some("209")));
    assert!((16..=20).contains(&k.distinct_estimate), "18 distinct keys, estimated {}", k.distinct_estimate);
    assert_eq!(data_files(dir.path()), 3); // the empty chunk's reserved file was never created
    let loaded = store.load(t).unwrap();
    let keys: Vec<i64> = loaded
        .column(0)
        .unwrap()
        .iter()
        .flat_map(|a| a.as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec())
        .collect();
    let expected: Vec<i64> = (0..5).chain(100..103).chain(200..210).collect();
    assert_eq!(keys, expected);
}
