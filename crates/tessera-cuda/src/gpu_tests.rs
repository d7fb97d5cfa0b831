//! End-to-end tests on a GPU: upload, run device-library kernels, download, compare with
//! the CPU; and the memory budget. Skipped without a GPU (see `test_support`).

use std::collections::HashMap;

use cudarc::driver::{DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use tessera_common::TesseraError;

use crate::compile::KernelCache;
use crate::memory::MemoryPool;
use crate::test_support::{gpu_and_nvrtc_or_skip, gpu_or_skip};

const SMOKE: &str = include_str!("../cuda/tests/smoke.cu");
/// Must match BLOCK_THREADS and TILE in smoke.cu.
const BLOCK_THREADS: u32 = 128;
const TILE: usize = 512;

/// Mirrors `tessera::HashTable<K, int64_t>` in hash.cuh.
#[repr(C)]
#[derive(Clone, Copy)]
struct HashTableArg<K> {
    keys: u64,
    values: u64,
    capacity: u64,
    empty_key: K,
}
// SAFETY: plain #[repr(C)] data with the layout of the C++ struct.
unsafe impl<K: DeviceRepr> DeviceRepr for HashTableArg<K> {}

/// Mirrors `tessera::DenseTable<int64_t, int64_t>`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DenseTableArg {
    values: u64,
    len: i64,
    key_min: i64,
    empty_value: i64,
}
// SAFETY: as above.
unsafe impl DeviceRepr for DenseTableArg {}

/// Deterministic pseudo-random numbers (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo) as u64) as i64
    }
}

fn tiles(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(TILE) as u32, 1, 1),
        block_dim: (BLOCK_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn per_row(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn i128_of(halves: &[u64]) -> i128 {
    ((halves[1] as u128) << 64 | halves[0] as u128) as i128
}

#[test]
fn gpu_memory_budget_refuses_an_over_limit_allocation() {
    let Some(device) = gpu_or_skip("gpu_memory_budget_refuses_an_over_limit_allocation") else {
        return;
    };
    let info = device.info();
    let default = device.memory();
    assert!(
        default.limit() > 0 && default.limit() <= info.total_memory,
        "{default:?}"
    );

    let pool = MemoryPool::new(device.stream().clone(), 1 << 20);
    let first = pool.alloc::<u8>(512 << 10).unwrap();
    assert_eq!(pool.used(), 512 << 10);
    let err = pool.alloc::<u64>(80 << 10).unwrap_err();
    assert!(matches!(err, TesseraError::ResourcesExhausted(_)), "{err}");
    assert!(
        err.to_string()
            .contains("GPU memory limit of 1.0 MiB exceeded"),
        "{err}"
    );
    drop(first);
    assert_eq!(pool.used(), 0);
    let second = pool.alloc::<u64>(80 << 10).unwrap();
    assert_eq!(pool.used(), 640 << 10);
    drop(second);

    // Past the physical memory with no budget: the driver's out-of-memory is reported as
    // ResourcesExhausted too, not a crash.
    let unlimited = MemoryPool::new(device.stream().clone(), usize::MAX);
    let err = unlimited.alloc::<u8>(info.total_memory * 2).unwrap_err();
    assert!(matches!(err, TesseraError::ResourcesExhausted(_)), "{err}");
    assert_eq!(unlimited.used(), 0);
    device.synchronize().unwrap();
}

#[test]
fn gpu_device_library_kernels_match_the_cpu() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_device_library_kernels_match_the_cpu") else {
        return;
    };
    println!("{}", device.info());
    let cache = KernelCache::new(None);
    let module = cache.load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    assert!(std::sync::Arc::ptr_eq(
        &module,
        &cache.load(&device, SMOKE).unwrap()
    ));
    assert_eq!(cache.compilations(), 1);
    let stream = device.stream().clone();
    let f = |name: &str| {
        module
            .load_function(name)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
    };

    let n = 1_000_003usize;
    let mut rng = Rng(42);
    let keys: Vec<i32> = (0..n).map(|_| rng.range(0, 1000) as i32).collect();
    let values: Vec<i64> = (0..n)
        .map(|_| rng.range(-1_000_000_000_000, 1_000_000_000_000))
        .collect();
    let d_keys = device.upload(&keys).unwrap();
    let d_values = device.upload(&values).unwrap();
    let n_arg = n as i64;

    // Filter + sums + min/max.
    let (lo, hi) = (100i32, 399i32);
    let mut sum = device.upload(&[0i64]).unwrap();
    let mut squares = device.upload(&[0u64, 0]).unwrap();
    let mut count = device.upload(&[0i64]).unwrap();
    let mut min = device.upload(&[i64::MAX]).unwrap();
    let mut max = device.upload(&[i64::MIN]).unwrap();
    let kernel = f("filter_sum");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_keys)
        .arg(&d_values)
        .arg(&n_arg)
        .arg(&lo)
        .arg(&hi);
    launch
        .arg(&mut sum)
        .arg(&mut squares)
        .arg(&mut count)
        .arg(&mut min)
        .arg(&mut max);
    unsafe { launch.launch(tiles(n)) }.unwrap();
    let selected: Vec<i64> = keys
        .iter()
        .zip(&values)
        .filter(|(k, v)| (lo..=hi).contains(*k) && **v > 0)
        .map(|(_, v)| *v)
        .collect();
    assert!(!selected.is_empty());
    assert_eq!(
        device.download(&sum).unwrap(),
        vec![selected.iter().sum::<i64>()]
    );
    let expected_squares: i128 = selected.iter().map(|v| *v as i128 * *v as i128).sum();
    assert!(
        expected_squares > i64::MAX as i128,
        "the test must need 128 bits"
    );
    assert_eq!(
        i128_of(&device.download(&squares).unwrap()),
        expected_squares
    );
    assert_eq!(
        device.download(&count).unwrap(),
        vec![selected.len() as i64]
    );
    assert_eq!(
        device.download(&min).unwrap(),
        vec![*selected.iter().min().unwrap()]
    );
    assert_eq!(
        device.download(&max).unwrap(),
        vec![*selected.iter().max().unwrap()]
    );

    // 128-bit atomics, one per row, signed, with carries in both directions.
    let scale = 1_000_000_007i64;
    let mut total = device.upload(&[0u64, 0]).unwrap();
    let kernel = f("atomic_sum_i128");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_values)
        .arg(&n_arg)
        .arg(&scale)
        .arg(&mut total);
    unsafe { launch.launch(per_row(n)) }.unwrap();
    let expected: i128 = values.iter().map(|v| *v as i128 * scale as i128).sum();
    assert_eq!(i128_of(&device.download(&total).unwrap()), expected);

    // Compaction.
    let threshold = 250i32;
    let mut out = device.memory().alloc::<i64>(n).unwrap();
    let mut out_count = device.upload(&[0u64]).unwrap();
    let kernel = f("compact_where_lt");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_keys)
        .arg(&d_values)
        .arg(&n_arg)
        .arg(&threshold)
        .arg(&mut out)
        .arg(&mut out_count);
    unsafe { launch.launch(tiles(n)) }.unwrap();
    let got_count = device.download(&out_count).unwrap()[0] as usize;
    let mut got = device.download(&out.slice(0..got_count)).unwrap();
    let mut expected: Vec<i64> = keys
        .iter()
        .zip(&values)
        .filter(|(k, _)| **k < threshold)
        .map(|(_, v)| *v)
        .collect();
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got.len(), expected.len());
    assert!(got == expected, "compacted rows differ");

    // Warp-level append (generated materializations): every selected index once.
    let mut appended = device.memory().alloc::<i64>(n).unwrap();
    let mut appended_count = device.upload(&[0u64]).unwrap();
    let kernel = f("append_where_lt");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_keys)
        .arg(&n_arg)
        .arg(&threshold)
        .arg(&mut appended)
        .arg(&mut appended_count);
    unsafe { launch.launch(per_row(n)) }.unwrap();
    let got_count = device.download(&appended_count).unwrap()[0] as usize;
    let mut got = device.download(&appended.slice(0..got_count)).unwrap();
    got.sort_unstable();
    let expected: Vec<i64> = (0..n as i64).filter(|&i| keys[i as usize] < threshold).collect();
    assert!(got == expected, "warp_append lost or repeated rows ({} of {})", got.len(), expected.len());

    // Block scan.
    let small: Vec<i32> = (0..n).map(|_| rng.range(0, 10) as i32).collect();
    let d_small = device.upload(&small).unwrap();
    let mut scanned = device.memory().alloc::<i32>(n).unwrap();
    let mut totals = device.memory().alloc::<i32>(n.div_ceil(TILE)).unwrap();
    let kernel = f("scan_tiles");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_small)
        .arg(&n_arg)
        .arg(&mut scanned)
        .arg(&mut totals);
    unsafe { launch.launch(tiles(n)) }.unwrap();
    let got = device.download(&scanned).unwrap();
    let got_totals = device.download(&totals).unwrap();
    for (t, tile) in small.chunks(TILE).enumerate() {
        let mut running = 0;
        for (i, x) in tile.iter().enumerate() {
            assert_eq!(got[t * TILE + i], running, "tile {t} item {i}");
            running += x;
        }
        assert_eq!(got_totals[t], running, "tile {t} total");
    }

    // Join: open-addressing and dense tables, 64-bit keys.
    let build_n = 50_000usize;
    let build_keys: Vec<i64> = (0..build_n as i64).map(|j| j * 7 + 1000).collect();
    let build_values: Vec<i64> = (0..build_n as i64).map(|j| j * 3).collect();
    let capacity = (2 * build_n).next_power_of_two();
    let table_keys = device.upload(&vec![i64::MIN; capacity]).unwrap();
    let table_values = device.memory().alloc::<i64>(capacity).unwrap();
    let dense_len = (build_n as i64 - 1) * 7 + 1;
    let dense_values = device.upload(&vec![-1i64; dense_len as usize]).unwrap();
    let table = HashTableArg {
        keys: table_keys.device_ptr(&stream).0,
        values: table_values.device_ptr(&stream).0,
        capacity: capacity as u64,
        empty_key: i64::MIN,
    };
    let dense = DenseTableArg {
        values: dense_values.device_ptr(&stream).0,
        len: dense_len,
        key_min: 1000,
        empty_value: -1,
    };
    let d_build_keys = device.upload(&build_keys).unwrap();
    let d_build_values = device.upload(&build_values).unwrap();
    let mut failed = device.upload(&[0i32]).unwrap();
    let build_n_arg = build_n as i64;
    let kernel = f("hash_build");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_build_keys)
        .arg(&d_build_values)
        .arg(&build_n_arg)
        .arg(&table)
        .arg(&dense)
        .arg(&mut failed);
    unsafe { launch.launch(tiles(build_n)) }.unwrap();
    assert_eq!(device.download(&failed).unwrap(), vec![0]);

    let probe_keys: Vec<i64> = (0..420_000i64).step_by(3).collect();
    let d_probe = device.upload(&probe_keys).unwrap();
    let mut out_hash = device.memory().alloc::<i64>(probe_keys.len()).unwrap();
    let mut out_dense = device.memory().alloc::<i64>(probe_keys.len()).unwrap();
    let probe_n = probe_keys.len() as i64;
    let kernel = f("hash_probe");
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&d_probe)
        .arg(&probe_n)
        .arg(&table)
        .arg(&dense)
        .arg(&mut out_hash)
        .arg(&mut out_dense);
    unsafe { launch.launch(tiles(probe_keys.len())) }.unwrap();
    let lookup: HashMap<i64, i64> = build_keys
        .iter()
        .copied()
        .zip(build_values.iter().copied())
        .collect();
    let expected: Vec<i64> = probe_keys
        .iter()
        .map(|k| *lookup.get(k).unwrap_or(&-1))
        .collect();
    assert!(
        expected.iter().filter(|v| **v >= 0).count() > 1000,
        "the probe must hit"
    );
    assert!(
        device.download(&out_hash).unwrap() == expected,
        "hash probe differs"
    );
    assert!(
        device.download(&out_dense).unwrap() == expected,
        "dense probe differs"
    );

    // GROUP BY with 32-bit keys.
    let capacity = 4096usize;
    let group_keys = device.upload(&vec![i32::MIN; capacity]).unwrap();
    let group_counts = device.memory().alloc::<i64>(capacity).unwrap();
    let table = HashTableArg {
        keys: group_keys.device_ptr(&stream).0,
        values: group_counts.device_ptr(&stream).0,
        capacity: capacity as u64,
        empty_key: i32::MIN,
    };
    let kernel = f("group_count");
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&d_keys).arg(&n_arg).arg(&table);
    unsafe { launch.launch(per_row(n)) }.unwrap();
    let got_keys = device.download(&group_keys).unwrap();
    let got_counts = device.download(&group_counts).unwrap();
    let got: HashMap<i32, i64> = got_keys
        .iter()
        .zip(&got_counts)
        .filter(|(k, _)| **k != i32::MIN)
        .map(|(k, c)| (*k, *c))
        .collect();
    let mut expected: HashMap<i32, i64> = HashMap::new();
    for k in &keys {
        *expected.entry(*k).or_default() += 1;
    }
    assert_eq!(got, expected);
    device.synchronize().unwrap();
}
