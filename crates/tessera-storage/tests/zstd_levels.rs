//! How the zstd level and the frame size trade write speed for size on the string bytes
//! the store compresses (tiles of 2048 rows stored as lengths and bytes): the figures
//! behind `colfile::ZSTD_LEVEL`. Not run by default; over Parquet files of TPC-H
//! (`tessera gen tpch --sf 1 --out DIR`), in a release build:
//!
//! ```sh
//! TESSERA_ZSTD_PARQUET=DIR cargo test --release -p tessera-storage --test zstd_levels -- --ignored --nocapture
//! ```

use std::time::Instant;

use arrow::array::AsArray;

/// The TPC-H columns whose values hardly repeat: the store keeps them as lengths and
/// bytes (past each file's first 16 tiles, which its dictionary holds).
const COLUMNS: [(&str, &[&str]); 5] = [
    ("lineitem", &["l_comment"]),
    ("orders", &["o_comment"]),
    ("partsupp", &["ps_comment"]),
    ("customer", &["c_comment", "c_address", "c_name", "c_phone"]),
    ("part", &["p_name", "p_comment"]),
];

/// Each tile's string bytes, column by column.
fn tiles(dir: &str) -> Vec<(String, Vec<Vec<u8>>)> {
    let mut out = Vec::new();
    for (table, columns) in COLUMNS {
        let file = std::fs::File::open(format!("{dir}/{table}.parquet")).expect("a TPC-H Parquet file");
        let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap().with_batch_size(2048).build().unwrap();
        let batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
        for name in columns {
            let mut tiles = Vec::new();
            let mut tile = Vec::new();
            let mut rows = 0;
            for b in &batches {
                let s = b.column_by_name(name).unwrap().as_string::<i32>();
                for v in s.iter().flatten() {
                    tile.extend_from_slice(v.as_bytes());
                    rows += 1;
                    if rows == 2048 {
                        tiles.push(std::mem::take(&mut tile));
                        rows = 0;
                    }
                }
            }
            if rows > 0 {
                tiles.push(tile);
            }
            out.push((name.to_string(), tiles));
        }
    }
    out
}

/// Compresses `frames` (each the bytes of some tiles) at `level`: compressed bytes
/// (each frame padded to 8, as stored), MB/s compressing and MB/s decompressing.
fn measure(frames: &[Vec<u8>], level: i32) -> (usize, f64, f64) {
    let raw: usize = frames.iter().map(|f| f.len()).sum();
    let mut c = zstd::bulk::Compressor::new(level).unwrap();
    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true)).unwrap();
    let mut d = zstd::bulk::Decompressor::new().unwrap();
    let start = Instant::now();
    let compressed: Vec<Vec<u8>> = frames.iter().map(|f| c.compress(f).unwrap()).collect();
    let write = start.elapsed().as_secs_f64();
    let mut buf = Vec::new();
    let start = Instant::now();
    for (z, f) in compressed.iter().zip(frames) {
        buf.clear();
        buf.reserve(f.len());
        d.decompress_to_buffer(z, &mut buf).unwrap();
        assert_eq!(buf.len(), f.len());
    }
    let read = start.elapsed().as_secs_f64();
    let bytes = compressed.iter().map(|z| z.len().div_ceil(8) * 8).sum();
    (bytes, raw as f64 / 1e6 / write, raw as f64 / 1e6 / read)
}

#[test]
#[ignore = "a measurement over TPC-H Parquet files named by TESSERA_ZSTD_PARQUET"]
fn zstd_levels_and_frame_sizes() {
    let Ok(dir) = std::env::var("TESSERA_ZSTD_PARQUET") else {
        eprintln!("TESSERA_ZSTD_PARQUET is not set");
        return;
    };
    let columns = tiles(&dir);
    let all: Vec<Vec<u8>> = columns.iter().flat_map(|(_, t)| t.iter().cloned()).collect();
    let raw: usize = all.iter().map(|t| t.len()).sum();
    println!("{} tiles, {:.1} MB of string bytes", all.len(), raw as f64 / 1e6);
    for (name, t) in &columns {
        let r: usize = t.iter().map(|t| t.len()).sum();
        let (z, _, _) = measure(t, 3);
        println!("  {name:<12} {:>6} tiles {:>8.1} MB -> {:>7.1} MB at level 3 ({:.2}x)", t.len(), r as f64 / 1e6, z as f64 / 1e6, r as f64 / z as f64);
    }
    println!("per-tile frames: level, MB, ratio, compress MB/s, decompress MB/s");
    for level in [-5, -1, 1, 2, 3, 4, 5, 6, 9, 12, 19] {
        let (z, w, r) = measure(&all, level);
        println!("  {level:>3} {:>8.1} {:>5.2}x {:>7.0} {:>7.0}", z as f64 / 1e6, raw as f64 / z as f64, w, r);
    }
    println!("frames of k tiles of one column: k, level, MB, ratio, compress MB/s, decompress MB/s");
    for k in [1usize, 2, 4, 8, 32] {
        let frames: Vec<Vec<u8>> = columns.iter().flat_map(|(_, t)| t.chunks(k).map(|c| c.concat())).collect();
        for level in [1, 3] {
            let (z, w, r) = measure(&frames, level);
            println!("  {k:>2} {level:>3} {:>8.1} {:>5.2}x {:>7.0} {:>7.0}", z as f64 / 1e6, raw as f64 / z as f64, w, r);
        }
    }
}
