//! End-to-end tests on a GPU: upload, run device-library kernels, download, compare with
//! the CPU; and the memory budget. Skipped without a GPU (see `test_support`).

use cudarc::driver::{LaunchConfig, PushKernelArg};
use tessera_common::TesseraError;

use crate::compile::KernelCache;
use crate::memory::MemoryPool;
use crate::test_support::{gpu_and_nvrtc_or_skip, gpu_or_skip};

const SMOKE: &str = include_str!("../cuda/tests/smoke.cu");

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

    // Split sums (generated SUMs of 64-bit values), one atomic per row, signed.
    let mut split = device.upload(&[0u64, 0]).unwrap();
    let kernel = f("atomic_sum_split");
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&d_values).arg(&n_arg).arg(&mut split);
    unsafe { launch.launch(per_row(n)) }.unwrap();
    let words = device.download(&split).unwrap();
    let got = (words[1] as i64 as i128) * (1i128 << 32) + words[0] as i128;
    assert_eq!(got, values.iter().map(|v| *v as i128).sum::<i128>());

    // Warp-level append (generated materializations): every selected index once.
    let threshold = 250i32;
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

    device.synchronize().unwrap();
}
