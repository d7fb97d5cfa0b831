//! End-to-end tests on a GPU: upload, run device-library kernels, download, compare with
//! the CPU; and the memory budget. Skipped without a GPU (see `test_support`).

use cudarc::driver::{LaunchConfig, PushKernelArg};
use tessera_common::TesseraError;

use crate::compile::KernelCache;
use crate::memory::MemoryPool;
use crate::test_support::{gpu_and_nvrtc_or_skip, gpu_or_skip};

const SMOKE: &str = include_str!("../cuda/tests/smoke.cu");

/// SSB q4.2's probe over bit-packed columns at SF 20 as generated on 2026-11-30, which
/// ptxas, left to itself, compiles to 40 registers with 8 bytes of them spilled (NVRTC
/// 13.0). Written against the device library of that day: regenerate it (see
/// `benchmarks/results/gpu-2026-11-30/run4.sh`, `TESSERA_DUMP_KERNELS`) if the library's
/// helpers change.
const SPILLING: &str = include_str!("../tests/kernels/ssb-q4.2-sf20-probe-bits8.cu");

/// The test kernels compile for the GPUs the engine targets, also where there is no GPU
/// to run them (the decoders in `tiles.cuh` they exercise are templates: only a kernel
/// that instantiates them checks them).
#[test]
fn smoke_kernels_compile_with_nvrtc() {
    if crate::test_support::nvrtc_or_skip("smoke kernels compile with NVRTC") {
        crate::compile_cubin(SMOKE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The recorded spilling kernel (an earlier generator's output, calling the device
/// library's helpers as they were then) compiles too, also where there is no GPU: the
/// test that loads it runs only on one.
#[test]
fn spilling_kernel_compiles_with_nvrtc() {
    if crate::test_support::nvrtc_or_skip("the recorded spilling kernel compiles with NVRTC") {
        crate::compile_cubin(SPILLING, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    }
}

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
fn gpu_freed_blocks_are_reused_zeroed_and_given_up_for_room() {
    let Some(device) = gpu_or_skip("gpu_freed_blocks_are_reused_zeroed_and_given_up_for_room") else {
        return;
    };
    if std::env::var("TESSERA_EXP_KEEP_BLOCKS").is_ok_and(|v| v == "0") {
        eprintln!("skipped: TESSERA_EXP_KEEP_BLOCKS=0 keeps no freed blocks");
        return;
    }
    use cudarc::driver::DevicePtr;
    let pool = MemoryPool::new(device.stream().clone(), 1 << 20);
    let mut a = pool.alloc::<u32>(1024).unwrap();
    device.stream().memcpy_htod(&vec![7u32; 1024], &mut *a).unwrap();
    let at = a.device_ptr(device.stream()).0;
    drop(a);
    assert_eq!((pool.used(), pool.kept()), (0, 4096));
    // The same size on the same stream gets the block back, zeroed.
    let b = pool.alloc::<u32>(1024).unwrap();
    assert_eq!(b.device_ptr(device.stream()).0, at);
    assert_eq!((pool.used(), pool.kept()), (4096, 0));
    assert!(device.download(&b).unwrap().iter().all(|&x| x == 0));
    // Another size is a new block; the kept one gives way when the limit needs its room.
    drop(b);
    let c = pool.alloc::<u8>((1 << 20) - 1024).unwrap();
    assert_eq!((pool.used(), pool.kept()), ((1 << 20) - 1024, 0));
    drop(c);
    assert_eq!(pool.kept(), (1 << 20) - 1024);
    let err = pool.alloc::<u8>((1 << 20) + 1).unwrap_err();
    assert!(matches!(err, TesseraError::ResourcesExhausted(_)), "{err}");
    assert_eq!((pool.used(), pool.kept()), (0, 0));
    device.synchronize().unwrap();
}

/// `tessera_fill_many` sets each listed array to its pattern, whatever its length (odd
/// word counts end with the pattern's low half) and however few threads run, and writes
/// nothing past an array's end.
#[test]
fn gpu_fill_many_sets_each_array_and_nothing_else() {
    use cudarc::driver::DevicePtr;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_fill_many_sets_each_array_and_nothing_else") else {
        return;
    };
    let cache = KernelCache::new(None);
    let records = cache.load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let kernel = records.load_function("tessera_fill_many").unwrap_or_else(|e| panic!("tessera_fill_many: {e}"));
    let stream = device.stream().clone();
    // Word counts: empty, one, odd, even, and larger than the grid's threads; more
    // arrays than the eight a launch set before 2026-11-28c (their addresses and patterns
    // past the eighth read from where the kernel's struct puts them).
    let words = [0usize, 1, 7, 8, 3 * 1024 + 5, 1 << 20, 33, 2, 5, 64, 1, 4096];
    let patterns = [5u64, 0, u64::MAX, 0x1234_5678_9abc_def0, 0, 0xffff_ffff, 1 << 63, 42, 3, u64::MAX - 1, 9, 0x0f0f_0f0f_f0f0_f0f0];
    for grid in [1u32, 3, 264] {
        // Each array sits in a buffer a word longer than it, all set to a marker first.
        let marker = 0xdead_beefu32;
        let mut bufs: Vec<_> = words.iter().map(|&w| device.upload(&vec![marker; w + 1]).unwrap()).collect();
        let arrays: Vec<(u64, u64, u64)> = bufs.iter_mut().zip(words.iter().zip(patterns)).map(|(b, (&w, v))| (b.device_ptr(&stream).0, w as u64, v)).collect();
        let list = crate::library::FillList::new(&arrays).unwrap();
        let mut l = stream.launch_builder(&kernel);
        l.arg(&list);
        unsafe { l.launch(LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
        for ((b, &w), v) in bufs.iter().zip(&words).zip(patterns) {
            let got = device.download(b).unwrap();
            let want: Vec<u32> = (0..w).map(|i| if i % 2 == 0 { v as u32 } else { (v >> 32) as u32 }).chain([marker]).collect();
            assert_eq!(got, want, "{w} words set to {v:#x} by {grid} blocks");
        }
    }
    assert!(crate::library::FillList::new(&[(0, 0, 0); crate::library::FillList::MAX + 1]).is_none(), "a list of 33 arrays");
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

    // Shared group tables with and without warp combining (`Experiments::warp_combine`):
    // signed values, few groups (every lane of a warp contends) and more.
    for (groups, combine) in [(3i32, 0i32), (3, 1), (64, 0), (64, 1)] {
        let mut sums = device.upload(&vec![0u64; groups as usize]).unwrap();
        let mut counts = device.upload(&vec![0u64; groups as usize]).unwrap();
        let kernel = f("shared_group_sums");
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(&d_keys).arg(&d_values).arg(&n_arg).arg(&groups).arg(&combine).arg(&mut sums).arg(&mut counts);
        unsafe { launch.launch(LaunchConfig { grid_dim: (64, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
        let (mut want_sums, mut want_counts) = (vec![0i64; groups as usize], vec![0u64; groups as usize]);
        for (k, v) in keys.iter().zip(&values) {
            want_sums[(*k % groups) as usize] += v;
            want_counts[(*k % groups) as usize] += 1;
        }
        let got_sums: Vec<i64> = device.download(&sums).unwrap().into_iter().map(|w| w as i64).collect();
        assert_eq!(got_sums, want_sums, "{groups} groups, combine {combine}");
        assert_eq!(device.download(&counts).unwrap(), want_counts, "{groups} groups, combine {combine}");
    }

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

/// Group records in group-number order (`records.cuh`): every seen group once, in
/// increasing order, the count in word 0, over domains smaller and larger than the grid,
/// grids of fewer and more blocks than a block has threads (each block sums the others'
/// counts), and ranges that see no group at all; and a small domain's records made by
/// one block (`tessera_small_records`) with their accumulators' words gathered.
#[test]
fn gpu_group_records_come_in_group_order() {
    use cudarc::driver::DevicePtr;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_group_records_come_in_group_order") else {
        return;
    };
    let cache = KernelCache::new(None);
    let module = cache.load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let mut rng = Rng(7);
    for (n, share) in [(1usize, 100), (5, 50), (1_000, 0), (1_000_003, 30), (2_000_000, 1), (300_001, 100)] {
        let seen: Vec<u32> = (0..n).map(|g| u32::from(rng.range(0, 100) < share || (share == 1 && g == n - 1))).collect();
        let want: Vec<u64> = (0..n as u64).filter(|&g| seen[g as usize] != 0).collect();
        let width = 3i64;
        let d_seen = device.upload(&seen).unwrap();
        let n_arg = n as i64;
        // The records of `width` words made by a grid of `blocks` blocks (counts, then the
        // compaction), in a buffer of all ones before; and the grid.
        let compact_by_grid = |blocks: usize, width: i64| {
            let per_block = n.div_ceil(blocks).next_multiple_of(256) as i64;
            let cfg = LaunchConfig { grid_dim: (blocks as u32, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
            let mut counts = device.upload(&vec![u64::MAX; blocks]).unwrap();
            let mut rec = device.upload(&vec![u64::MAX; 1 + n * width as usize]).unwrap();
            let count = module.load_function("tessera_count_seen").unwrap();
            let mut launch = stream.launch_builder(&count);
            launch.arg(&d_seen).arg(&n_arg).arg(&per_block).arg(&mut counts);
            unsafe { launch.launch(cfg) }.unwrap();
            let compact = module.load_function("tessera_compact_records_ordered").unwrap();
            let mut launch = stream.launch_builder(&compact);
            launch.arg(&d_seen).arg(&n_arg).arg(&per_block).arg(&counts).arg(&mut rec).arg(&width);
            unsafe { launch.launch(cfg) }.unwrap();
            (rec, cfg)
        };
        for blocks in [37usize, 600] {
            let (rec, _) = compact_by_grid(blocks, width);
            let got = device.download(&rec).unwrap();
            assert_eq!(got[0], want.len() as u64, "count over {n} groups, {blocks} blocks");
            let numbers: Vec<u64> = (0..want.len()).map(|i| got[1 + i * width as usize]).collect();
            assert!(numbers == want, "records over {n} groups out of order or wrong ({blocks} blocks)");
        }
        // One block, with two accumulator arrays of one and two words a group gathered:
        // record i is (g, a[g], b[2g], b[2g + 1]).
        if n <= 1_000_003 {
            let a: Vec<u64> = (0..n as u64).map(|g| g * 7 + 1).collect();
            let b: Vec<u64> = (0..2 * n as u64).map(|x| x ^ 0xabcd).collect();
            let (d_a, d_b) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
            let (pa, pb) = (d_a.device_ptr(&stream).0, d_b.device_ptr(&stream).0);
            let list = crate::library::GatherList::new(&[(pa, 1), (pb, 2)]).unwrap();
            let width = 4i64;
            let mut rec = device.upload(&vec![u64::MAX; 1 + n * width as usize]).unwrap();
            let small = module.load_function("tessera_small_records").unwrap();
            let mut launch = stream.launch_builder(&small);
            launch.arg(&d_seen).arg(&n_arg).arg(&list).arg(&mut rec).arg(&width);
            unsafe { launch.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
            let one_block = device.download(&rec).unwrap();
            // The same records by the grid: compaction, then every array gathered by one
            // launch (`tessera_gather_many`).
            let (mut rec, cfg) = compact_by_grid(37, width);
            let gather = module.load_function("tessera_gather_many").unwrap();
            let mut launch = stream.launch_builder(&gather);
            launch.arg(&list).arg(&mut rec).arg(&width);
            unsafe { launch.launch(cfg) }.unwrap();
            let by_grid = device.download(&rec).unwrap();
            for (how, got) in [("one block", &one_block), ("the grid", &by_grid)] {
                assert_eq!(got[0], want.len() as u64, "{how}'s count over {n} groups");
                for (i, &g) in want.iter().enumerate() {
                    let r = &got[1 + i * 4..5 + i * 4];
                    assert_eq!(r, [g, a[g as usize], b[2 * g as usize], b[2 * g as usize + 1]], "{how}'s record {i} over {n} groups");
                }
            }
        }
    }
    device.synchronize().unwrap();
}

/// Checks the records a sorted-records chain wrote (`got`: their count, then per record
/// the group number, its word of `a` and its two words of `b`) against a stable sort of
/// the seen groups on the host: by the value in `a` descending, then the slot
/// `(g / 7) % 13` (slot 0 NULL, first), then the group number (the tests' sort keys);
/// more than `cap` records come unranked, in group-number order.
fn check_sorted_records(got: &[u64], seen: &[u32], a: &[u64], b: &[u64], cap: i64, what: &str) {
    let mut want: Vec<u64> = (0..seen.len() as u64).filter(|&g| seen[g as usize] != 0).collect();
    assert_eq!(got[0], want.len() as u64, "{what}: count");
    if want.len() as i64 <= cap {
        want.sort_by_key(|&g| (-i128::from(a[g as usize] as i64), (g / 7) % 13, g));
    }
    for (i, &g) in want.iter().enumerate() {
        let r = &got[1 + i * 4..5 + i * 4];
        assert_eq!(r, [g, a[g as usize], b[2 * g as usize], b[2 * g as usize + 1]], "{what}: record {i}");
    }
}

/// A small domain's chain in one launch (`tessera_small_sorted_records`): the seen
/// groups' records (group number, then each array's words) in the order of the sort keys
/// and then the group number, as a stable sort of them on the host gives, from grids of
/// one and many blocks; over a domain with more records than the shared memory holds
/// (`cap`), every record unranked in group-number order; over a domain of more than 32
/// slots a thread (a thread's later runs of 32 read again when placed). Keys: a signed 64-bit value with
/// many ties, descending, then a group key's slot `(g / 7) % 13` (slot 0 NULL) ascending
/// with NULLs first.
#[test]
fn gpu_small_sorted_records_match_a_stable_sort() {
    use cudarc::driver::DevicePtr;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_small_sorted_records_match_a_stable_sort") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let sorted_records = module.load_function("tessera_small_sorted_records").unwrap();
    let stream = device.stream().clone();
    let mut rng = Rng(41);
    let keys = crate::library::SortKeys::new(&[3, 1, 0, 1, 0, 7, 13, 2]).unwrap();
    let nkeys = 2i32;
    for (n, share, cap, blocks) in [(1usize, 100, 1280i64, 1u32), (300, 50, 1280, 132), (5_000, 20, 1280, 7), (16_384, 5, 1280, 132), (16_384, 90, 1024, 132), (64, 100, 10, 3), (8_000, 0, 1280, 16), (40_000, 3, 1280, 132)] {
        let seen: Vec<u32> = (0..n).map(|_| u32::from(rng.range(0, 100) < share)).collect();
        let a: Vec<u64> = (0..n).map(|_| (rng.range(0, 9) - 4) as u64).collect();
        let b: Vec<u64> = (0..2 * n as u64).map(|x| x ^ 0x5a5a).collect();
        let (d_seen, d_a, d_b) = (device.upload(&seen).unwrap(), device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let list = crate::library::GatherList::new(&[(d_a.device_ptr(&stream).0, 1), (d_b.device_ptr(&stream).0, 2)]).unwrap();
        let width = 4i64;
        let mut dst = device.upload(&vec![u64::MAX; 1 + n * width as usize]).unwrap();
        let n_arg = n as i64;
        let mut l = stream.launch_builder(&sorted_records);
        l.arg(&d_seen).arg(&n_arg).arg(&list).arg(&width).arg(&keys).arg(&nkeys).arg(&cap).arg(&mut dst);
        let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: (cap * width * 8) as u32 };
        unsafe { l.launch(cfg) }.unwrap();
        let got = device.download(&dst).unwrap();
        check_sorted_records(&got, &seen, &a, &b, cap, &format!("{n} groups, {share}% seen, cap {cap}, {blocks} blocks"));
    }
    device.synchronize().unwrap();
}

/// A large domain's chain in two launches (`tessera_list_seen`, then
/// `tessera_listed_sorted_records`): the same records in the same order as
/// `gpu_small_sorted_records_match_a_stable_sort` wants, over domains whose seen groups
/// are spread, clustered in one list, absent, or more than `cap` (then all of them,
/// unranked, in group-number order), from grids of one and many lists.
#[test]
fn gpu_listed_sorted_records_match_a_stable_sort() {
    use cudarc::driver::DevicePtr;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_listed_sorted_records_match_a_stable_sort") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let (list_seen, listed_records) = (module.load_function("tessera_list_seen").unwrap(), module.load_function("tessera_listed_sorted_records").unwrap());
    let stream = device.stream().clone();
    let mut rng = Rng(43);
    let keys = crate::library::SortKeys::new(&[3, 1, 0, 1, 0, 7, 13, 2]).unwrap();
    let nkeys = 2i32;
    // (slots, share of them seen per 100 000, only the slots from `from` on, cap, lists)
    for (n, share, from, cap, lists) in [
        (600_000usize, 150, 0usize, 1280i64, 528u32),
        (600_000, 150, 0, 1280, 1),
        (2_000_000, 40, 0, 1280, 528),
        (100_000, 2_000, 99_000, 1280, 528),
        (100_000, 0, 0, 1280, 528),
        (100_000, 5_000, 0, 1280, 528),
        (50_000, 100_000, 49_990, 1280, 1024),
    ] {
        let seen: Vec<u32> = (0..n).map(|g| u32::from(g >= from && rng.range(0, 100_000) < share)).collect();
        let a: Vec<u64> = (0..n).map(|_| (rng.range(0, 9) - 4) as u64).collect();
        let b: Vec<u64> = (0..2 * n as u64).map(|x| x ^ 0x5a5a).collect();
        let (d_seen, d_a, d_b) = (device.upload(&seen).unwrap(), device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let list = crate::library::GatherList::new(&[(d_a.device_ptr(&stream).0, 1), (d_b.device_ptr(&stream).0, 2)]).unwrap();
        let width = 4i64;
        let per_block = n.div_ceil(lists as usize);
        let mut counts = device.upload(&vec![u32::MAX; lists as usize]).unwrap();
        let mut entries = device.upload(&vec![u32::MAX; lists as usize * per_block]).unwrap();
        let mut dst = device.upload(&vec![u64::MAX; 1 + n * width as usize]).unwrap();
        let (n_arg, per, nlists) = (n as i64, per_block as i64, i64::from(lists));
        let mut l = stream.launch_builder(&list_seen);
        l.arg(&d_seen).arg(&n_arg).arg(&per).arg(&mut counts).arg(&mut entries);
        unsafe { l.launch(LaunchConfig { grid_dim: (lists, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
        let mut l = stream.launch_builder(&listed_records);
        l.arg(&entries).arg(&counts).arg(&nlists).arg(&per).arg(&list).arg(&width).arg(&keys).arg(&nkeys).arg(&cap).arg(&mut dst);
        unsafe { l.launch(LaunchConfig { grid_dim: (132, 1, 1), block_dim: (512, 1, 1), shared_mem_bytes: (cap * width * 8) as u32 }) }.unwrap();
        let got = device.download(&dst).unwrap();
        let seen_count = seen.iter().filter(|&&f| f != 0).count();
        check_sorted_records(&got, &seen, &a, &b, cap, &format!("{n} groups, {seen_count} seen from {from}, cap {cap}, {lists} lists"));
    }
    device.synchronize().unwrap();
}

/// A global group table's copies folded into the first (`tessera_fold_copies`): every
/// word of the first copy the wrapping sum of that word in all copies, for arrays of one
/// and two words a group, from grids smaller and larger than the arrays; the other
/// copies are left as they were. With a witness array (`aggregate::presence`) the seen
/// flags of the groups whose total there is nonzero are set and the others kept; without
/// one they are all kept.
#[test]
fn gpu_fold_copies_sums_every_copy_into_the_first() {
    use cudarc::driver::DevicePtr;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_fold_copies_sums_every_copy_into_the_first") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let fold = module.load_function("tessera_fold_copies").unwrap();
    let stream = device.stream().clone();
    let mut rng = Rng(47);
    let cases = [(5408usize, 8i32, 22u32), (150, 2, 1), (1, 64, 1), (70_000, 4, 3)];
    for ((groups, copies, blocks), witness) in cases.into_iter().flat_map(|case| [(case, -1i32), (case, 0)]) {
        let c = copies as usize;
        let mut a: Vec<u64> = (0..groups * c).map(|_| rng.range(-1_000_000, 1_000_000) as u64).collect();
        // Every third group took no row: zero in every copy.
        for k in 0..c {
            for g in (0..groups).step_by(3) {
                a[k * groups + g] = 0;
            }
        }
        // Flags set before the fold (a group seen may not be the witness's, without one).
        let seen: Vec<u32> = (0..groups).map(|g| u32::from(g % 5 == 1)).collect();
        let d_seen = device.upload(&seen).unwrap();
        let mut b: Vec<u64> = (0..2 * groups * c).map(|_| rng.range(0, 1_000_000) as u64).collect();
        b[0] = u64::MAX; // a sum that wraps, as a negative total's words do
        let (d_a, d_b) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let list = crate::library::GatherList::new(&[(d_a.device_ptr(&stream).0, 1), (d_b.device_ptr(&stream).0, 2)]).unwrap();
        let n_arg = groups as i64;
        let seen_ptr = d_seen.device_ptr(&stream).0;
        let mut l = stream.launch_builder(&fold);
        l.arg(&list).arg(&n_arg).arg(&copies).arg(&seen_ptr).arg(&witness);
        unsafe { l.launch(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
        let (got_a, got_b) = (device.download(&d_a).unwrap(), device.download(&d_b).unwrap());
        let got_seen = device.download(&d_seen).unwrap();
        for g in 0..groups {
            let total = (0..c).fold(0u64, |t, k| t.wrapping_add(a[k * groups + g]));
            let want = seen[g] != 0 || (witness == 0 && total != 0);
            assert_eq!(got_seen[g] != 0, want, "{groups} groups x {copies} copies, witness {witness}: group {g}'s seen flag");
        }
        for (got, want, words) in [(&got_a, &a, 1usize), (&got_b, &b, 2)] {
            let n = groups * words;
            for i in 0..n {
                let total = (0..c).fold(0u64, |t, k| t.wrapping_add(want[k * n + i]));
                assert_eq!(got[i], total, "{groups} groups x {copies} copies, {words} words: word {i}");
            }
            assert_eq!(got[n..], want[n..], "{groups} groups x {copies} copies: the other copies changed");
        }
    }
    device.synchronize().unwrap();
}

/// ORDER BY ... LIMIT's selection (`tessera_select_top`, `tessera_keep_top`,
/// `tessera_seal_top`): the records kept are every record at or below the threshold, at
/// least the LIMIT's and at most `TESSERA_TOP_ENOUGH` (1024) of them when the values
/// spread, the LIMIT's smallest among them; all of them when ties pass the cap.
#[test]
fn gpu_top_selection_keeps_the_limits_records() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_top_selection_keeps_the_limits_records") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let mut rng = Rng(23);
    let (select, keep, seal) = (module.load_function("tessera_select_top").unwrap(), module.load_function("tessera_keep_top").unwrap(), module.load_function("tessera_seal_top").unwrap());
    // (records, want, value range): spread values, a narrow range (many ties), all equal.
    for (n, want, range) in [(100_000usize, 10i64, 1i64 << 40), (20_000, 100, 1 << 20), (50_000, 7, 3), (9_000, 5, 1)] {
        for descending in [false, true] {
            let values: Vec<i64> = (0..n).map(|_| rng.range(0, range) - range / 2).collect();
            // Records of two words: the group number, then the value (kind 3, signed 64-bit).
            let mut rec = vec![n as u64];
            for (g, &v) in values.iter().enumerate() {
                rec.extend([g as u64, v as u64]);
            }
            let key = [3i64, 1, 0, i64::from(descending)];
            let (width, max, cap) = (2i64, 4096i64, 4096i64);
            let (d_rec, d_key) = (device.upload(&rec).unwrap(), device.upload(&key).unwrap());
            let mut thr = device.upload(&[0u64; 2]).unwrap();
            let mut count = device.upload(&[0u64]).unwrap();
            let mut dst = device.upload(&vec![0u64; 1 + 4096 * 2]).unwrap();
            let one_block = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1024, 1, 1), shared_mem_bytes: 0 };
            let grid = LaunchConfig { grid_dim: (64, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
            let mut l = stream.launch_builder(&select);
            l.arg(&d_rec).arg(&width).arg(&d_key).arg(&want).arg(&max).arg(&mut thr);
            unsafe { l.launch(one_block) }.unwrap();
            let mut l = stream.launch_builder(&keep);
            l.arg(&d_rec).arg(&width).arg(&d_key).arg(&thr).arg(&cap).arg(&mut dst).arg(&mut count);
            unsafe { l.launch(grid) }.unwrap();
            let mut l = stream.launch_builder(&seal);
            l.arg(&count).arg(&cap).arg(&mut dst);
            unsafe { l.launch(LaunchConfig { grid_dim: (1, 1, 1), block_dim: (32, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
            let got = device.download(&dst).unwrap();
            let all = device.download(&count).unwrap()[0] as usize;
            // The values in the key's order, smallest first.
            let order = |v: i64| if descending { -i128::from(v) } else { i128::from(v) };
            let mut sorted: Vec<i128> = values.iter().map(|&v| order(v)).collect();
            sorted.sort_unstable();
            let what = format!("{n} records, LIMIT {want}, range {range}, descending {descending}");
            if got[0] == 0 {
                // Sealed empty: more than the cap at or below the threshold (ties).
                assert!(all > cap as usize, "{what}: sealed with {all} kept");
                assert!(sorted.iter().filter(|&&o| o <= sorted[want as usize - 1]).count() > 1024, "{what}: few ties, yet sealed");
                continue;
            }
            let kept = got[0] as usize;
            assert_eq!(kept, all, "{what}");
            assert!(kept >= want as usize && kept <= cap as usize, "{what}: {kept} kept");
            let kept_orders: Vec<i128> = (0..kept).map(|i| order(got[2 + 2 * i] as i64)).collect();
            let worst = kept_orders.iter().copied().max().unwrap();
            // Every record at or below the worst kept is kept, so the LIMIT's smallest are.
            assert_eq!(sorted.iter().filter(|&&o| o <= worst).count(), kept, "{what}");
            assert!(worst >= sorted[want as usize - 1], "{what}");
            if range == 1 << 40 {
                assert!(kept <= 1024, "{what}: spread values, {kept} kept");
            }
        }
    }
    device.synchronize().unwrap();
}

/// The open-addressing tables of `hash.cuh` against a `HashMap`: unique inserts that find
/// every duplicate, a full table, group counts under heavy skew and all-equal keys, keys
/// at the extremes of the word, and lookups of present and absent keys.
#[test]
fn gpu_hash_tables_match_the_cpu() {
    use std::collections::HashMap;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_hash_tables_match_the_cpu") else {
        return;
    };
    let cache = KernelCache::new(None);
    let module = cache.load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let f = |name: &str| module.load_function(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let empty = |slots: usize| device.upload(&vec![u64::MAX; slots]).unwrap();
    let mut rng = Rng(7);

    // Unique inserts: 1 Mi keys, a quarter of them repeats of earlier ones, including the
    // word's extremes (0 and EMPTY − 1).
    let n = 1 << 20;
    let mut keys: Vec<u64> = (0..n).map(|_| rng.next() >> 1).collect();
    for i in 0..n / 4 {
        let j = rng.range(0, n as i64) as usize;
        keys[i * 4 + 1] = keys[j];
    }
    keys[0] = 0;
    keys[2] = u64::MAX - 1;
    let slots = (2 * n).next_power_of_two();
    let mut table = empty(slots);
    let mut slot = device.memory().alloc::<i64>(n).unwrap();
    let d_keys = device.upload(&keys).unwrap();
    let (n_arg, mask) = (n as i64, (slots - 1) as u64);
    let kernel = f("hash_insert_unique");
    let mut l = stream.launch_builder(&kernel);
    l.arg(&d_keys).arg(&n_arg).arg(&mut table).arg(&mask).arg(&mut slot);
    unsafe { l.launch(per_row(n)) }.unwrap();
    let got = device.download(&slot).unwrap();
    let stored = device.download(&table).unwrap();
    let mut first: HashMap<u64, usize> = HashMap::new();
    for &k in &keys {
        *first.entry(k).or_insert(0) += 1;
    }
    // Each distinct key got exactly one slot holding it; every other copy saw -1.
    let mut inserted: HashMap<u64, i64> = HashMap::new();
    for (i, &s) in got.iter().enumerate() {
        assert!(s >= -1, "row {i}: table full at half load ({s})");
        if s >= 0 {
            assert_eq!(stored[s as usize], keys[i]);
            assert!(inserted.insert(keys[i], s).is_none(), "key {} inserted twice", keys[i]);
        }
    }
    assert_eq!(inserted.len(), first.len());
    assert_eq!(stored.iter().filter(|&&k| k != u64::MAX).count(), first.len());

    // Lookups: every inserted key at its slot, absent keys nowhere.
    let probes: Vec<u64> = keys.iter().take(1000).copied().chain((0..1000).map(|_| (rng.next() >> 1) | 1 << 62)).collect();
    let d_probes = device.upload(&probes).unwrap();
    let mut found = device.memory().alloc::<i64>(probes.len()).unwrap();
    let p_arg = probes.len() as i64;
    let kernel = f("hash_find");
    let mut l = stream.launch_builder(&kernel);
    l.arg(&d_probes).arg(&p_arg).arg(&table).arg(&mask).arg(&mut found);
    unsafe { l.launch(per_row(probes.len())) }.unwrap();
    for (k, s) in probes.iter().zip(device.download(&found).unwrap()) {
        assert_eq!(inserted.get(k).copied().unwrap_or(-1), s, "key {k}");
    }

    // A table with room for fewer keys than there are: the overflow is reported, no hang.
    let small = 1024usize;
    let mut full = empty(small);
    let mut slot_small = device.memory().alloc::<i64>(4096).unwrap();
    let (m_arg, small_mask) = (4096i64, (small - 1) as u64);
    let distinct: Vec<u64> = (0..4096u64).map(|i| i * 7919).collect();
    let d_distinct = device.upload(&distinct).unwrap();
    let kernel = f("hash_insert_unique");
    let mut l = stream.launch_builder(&kernel);
    l.arg(&d_distinct).arg(&m_arg).arg(&mut full).arg(&small_mask).arg(&mut slot_small);
    unsafe { l.launch(per_row(4096)) }.unwrap();
    let got_small = device.download(&slot_small).unwrap();
    assert_eq!(got_small.iter().filter(|&&s| s >= 0).count(), small);
    assert_eq!(got_small.iter().filter(|&&s| s == -2).count(), 4096 - small);

    // Groups: Zipf-like skew (half the rows on one key), then all rows on one key.
    for skewed in [true, false] {
        let rows = 1 << 20;
        let group_keys: Vec<u64> = (0..rows)
            .map(|_| if !skewed || rng.next() % 2 == 0 { 42 } else { rng.next() % (1 << (rng.next() % 20)) })
            .collect();
        let slots = 1 << 21;
        let mut table = empty(slots);
        let mut counts = device.memory().alloc::<u64>(slots).unwrap();
        let mut slot = device.memory().alloc::<i64>(rows).unwrap();
        let d_keys = device.upload(&group_keys).unwrap();
        let (r_arg, mask) = (rows as i64, (slots - 1) as u64);
        let kernel = f("hash_group_count");
        let mut l = stream.launch_builder(&kernel);
        l.arg(&d_keys).arg(&r_arg).arg(&mut table).arg(&mask).arg(&mut counts).arg(&mut slot);
        unsafe { l.launch(per_row(rows)) }.unwrap();
        let stored = device.download(&table).unwrap();
        let counted = device.download(&counts).unwrap();
        let mut want: HashMap<u64, u64> = HashMap::new();
        for &k in &group_keys {
            *want.entry(k).or_insert(0) += 1;
        }
        let got: HashMap<u64, u64> = stored.iter().zip(&counted).filter(|(k, _)| **k != u64::MAX).map(|(k, c)| (*k, *c)).collect();
        assert_eq!(got, want, "skewed: {skewed}");
    }
    device.synchronize().unwrap();
}

/// Open-addressing tables of more than 2^31 slots (2^32: 32 GiB of keys, where the GPU
/// memory budget has the room; skipped with a message where it has not): slots past
/// 2^31 are claimed and found, as 64-bit slot numbers; and a table no key went into
/// finds nothing.
#[test]
fn gpu_hash_tables_beyond_2_31_slots() {
    use std::collections::HashMap;
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_hash_tables_beyond_2_31_slots") else {
        return;
    };
    let cache = KernelCache::new(None);
    let module = cache.load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let f = |name: &str| module.load_function(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    // The device library's fill (what the runtime starts hash keys and MIN/MAX accumulators with).
    let records = cache.load(&device, crate::library::RECORDS_SOURCE).unwrap_or_else(|e| panic!("{e}"));
    let fill = |table: &mut crate::DeviceBuffer<u64>, n: usize| {
        use cudarc::driver::DevicePtr;
        let list = crate::library::FillList::new(&[(table.device_ptr(&stream).0, 2 * n as u64, u64::MAX)]).unwrap();
        let kernel = records.load_function("tessera_fill_many").unwrap_or_else(|e| panic!("tessera_fill_many: {e}"));
        let mut l = stream.launch_builder(&kernel);
        l.arg(&list);
        unsafe { l.launch(LaunchConfig { grid_dim: (4096, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 }) }.unwrap();
    };
    let mut rng = Rng(11);
    let probe = |table: &crate::DeviceBuffer<u64>, mask: u64, keys: &[u64]| -> Vec<i64> {
        let d_keys = device.upload(keys).unwrap();
        let mut found = device.memory().alloc::<i64>(keys.len()).unwrap();
        let n_arg = keys.len() as i64;
        let kernel = f("hash_find");
        let mut l = stream.launch_builder(&kernel);
        l.arg(&d_keys).arg(&n_arg).arg(table).arg(&mask).arg(&mut found);
        unsafe { l.launch(per_row(keys.len())) }.unwrap();
        device.download(&found).unwrap()
    };

    // Empty: nothing is found, whatever the key.
    let mut empty = unsafe { device.memory().alloc_uninit::<u64>(1024) }.unwrap();
    fill(&mut empty, 1024);
    let absent: Vec<u64> = (0..4096).map(|_| rng.next() >> 1).collect();
    assert!(probe(&empty, 1023, &absent).iter().all(|&s| s == -1), "a key found in an empty table");

    let slots: usize = 1 << 32;
    let room = device.memory().limit().saturating_sub(device.memory().used());
    if room < slots * 8 + (1 << 30) {
        eprintln!("skipped: a table of 2^32 slots needs 32 GiB; the GPU memory budget has {} MiB free", room >> 20);
        return;
    }
    let mut table = unsafe { device.memory().alloc_uninit::<u64>(slots) }.unwrap();
    fill(&mut table, slots);
    let n = 1 << 20;
    let keys: Vec<u64> = (0..n).map(|_| rng.next() >> 1).collect();
    let d_keys = device.upload(&keys).unwrap();
    let mut slot = device.memory().alloc::<i64>(n).unwrap();
    let (n_arg, mask) = (n as i64, (slots - 1) as u64);
    let kernel = f("hash_insert_unique");
    let mut l = stream.launch_builder(&kernel);
    l.arg(&d_keys).arg(&n_arg).arg(&mut table).arg(&mask).arg(&mut slot);
    unsafe { l.launch(per_row(n)) }.unwrap();
    let claimed = device.download(&slot).unwrap();
    let mut at: HashMap<u64, i64> = HashMap::new();
    for (k, &s) in keys.iter().zip(&claimed) {
        assert!(s >= -1 && s < slots as i64, "key {k}: slot {s}");
        if s >= 0 {
            assert!(at.insert(*k, s).is_none(), "key {k} claimed twice");
        }
    }
    // Random keys spread over the whole table: about half of them past 2^31.
    let high = at.values().filter(|&&s| s >= 1 << 31).count();
    assert!(high > n / 4, "only {high} of {n} keys past slot 2^31");
    let found = probe(&table, mask, &keys);
    for (k, s) in keys.iter().zip(found) {
        assert_eq!(Some(&s), at.get(k), "key {k}");
    }
    let absent: Vec<u64> = (0..4096).map(|_| (rng.next() >> 1) | 1 << 62).filter(|k| !at.contains_key(k)).collect();
    assert!(probe(&table, mask, &absent).iter().all(|&s| s == -1), "an absent key found");
    device.synchronize().unwrap();
}

/// SQL LIKE as the definition says it (a reference for the device matcher).
fn like_reference(s: &[char], p: &[char]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some(('%', rest)) => (0..=s.len()).any(|i| like_reference(&s[i..], rest)),
        Some(('_', rest)) => !s.is_empty() && like_reference(&s[1..], rest),
        Some((c, rest)) => s.first() == Some(c) && like_reference(&s[1..], rest),
    }
}

/// `tessera_like` (strings.cuh) against the reference over random strings of a small
/// alphabet (multi-byte characters and '%'/'_' as data included) and patterns with
/// anchored, floating, adjacent and repeated pieces.
#[test]
fn gpu_like_matches_the_reference() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_like_matches_the_reference") else {
        return;
    };
    let patterns = [
        "", "%", "%%", "a", "ab", "a%", "%a", "%a%", "_", "__", "_%", "%_", "a_b", "%green%", "gr%n", "%ü%", "_ü", "日%日",
        "%a%b%", "%ab%ab%", "a%a%a", "%_a_%", "%%a%%", "%\u{65e5}_", "%%%", "b%", "%r_e_n%", "g%e%e%n", "%\u{fc}", "x",
    ];
    let alphabet = ['a', 'b', 'g', 'r', 'e', 'n', '%', '_', 'ü', '日'];
    let mut rng = Rng(7);
    let mut strings: Vec<String> = ["", "a", "ab", "aaa", "green", "ggreen", "greeen", "日ü日", "ü", "%", "_", "abab", "aab"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    while strings.len() < 20_000 {
        let len = rng.range(0, 13) as usize;
        strings.push((0..len).map(|_| alphabet[rng.range(0, alphabet.len() as i64) as usize]).collect());
    }
    let mut offsets = vec![0i64];
    let mut bytes = Vec::new();
    for s in &strings {
        bytes.extend_from_slice(s.as_bytes());
        offsets.push(bytes.len() as i64);
    }
    let mut source = String::from("#include \"tessera.cuh\"\nusing namespace tessera;\n");
    for (k, p) in patterns.iter().enumerate() {
        let literal: String = p.bytes().map(|b| format!("\\{b:03o}")).collect();
        source.push_str(&format!(
            "extern \"C\" __global__ void like{k}(const long long* off, const unsigned char* bytes, long long rows, unsigned char* out) {{\n\
             long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n\
             if (r < rows) out[r] = tessera_like(off, bytes, r, \"{literal}\", {});\n}}\n",
            p.len()
        ));
    }
    let module = KernelCache::new(None).load(&device, &source).unwrap_or_else(|e| panic!("{e}"));
    let (d_off, d_bytes) = (device.upload(&offsets).unwrap(), device.upload(&bytes).unwrap());
    let n = strings.len() as i64;
    let chars: Vec<Vec<char>> = strings.iter().map(|s| s.chars().collect()).collect();
    for (k, p) in patterns.iter().enumerate() {
        let kernel = module.load_function(&format!("like{k}")).unwrap();
        let mut out = device.memory().alloc::<u8>(strings.len()).unwrap();
        let mut launch = device.stream().launch_builder(&kernel);
        launch.arg(&d_off).arg(&d_bytes).arg(&n).arg(&mut out);
        unsafe { launch.launch(per_row(strings.len())) }.unwrap();
        let got = device.download(&out).unwrap();
        let pc: Vec<char> = p.chars().collect();
        for (i, s) in chars.iter().enumerate() {
            assert_eq!(got[i] != 0, like_reference(s, &pc), "'{}' LIKE '{p}'", strings[i]);
        }
    }
}

/// A column of 140 stored tiles as a table's files give them (full tiles, and partial
/// ones between files) of every bit width and shape: sequences, slow steps, runs of 1 to
/// 7 rows (packed as runs), constants, alternating extremes, random values; each value
/// passed through `narrow` (e.g. to keep a 32-bit column's range). Its values and its
/// packed form.
fn packed_test_column(seed: u64, narrow: impl Fn(i64) -> i64) -> (Vec<i64>, tessera_storage::PackedColumn) {
    use tessera_storage::tiles::{TILE_ROWS, encode_ints};
    let mut rng = Rng(seed);
    // Stored tiles as a table's files give them: full tiles, then a partial one.
    let mut values: Vec<i64> = Vec::new();
    let mut stored: Vec<(Vec<u8>, tessera_storage::tiles::TileHeader)> = Vec::new();
    for t in 0..140usize {
        let n = if t % 9 == 8 { 1 + rng.range(0, TILE_ROWS as i64 - 1) as usize } else { TILE_ROWS };
        let bits = (t % 65) as u32;
        let base = rng.next() as i64;
        let tile: Vec<i64> = match t % 6 {
            0 => (0..n).map(|i| base.wrapping_add(3 * i as i64)).collect(),
            1 => (0..n).map(|i| base.wrapping_add((i / 300) as i64)).collect(),
            // Runs of 1 to 7 rows, as an order's lines repeat its key (packed as runs).
            5 => {
                let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
                let mut v = Vec::with_capacity(n);
                while v.len() < n {
                    let (x, len) = (base.wrapping_add((rng.next() & mask) as i64), 1 + rng.next() % 7);
                    v.extend(std::iter::repeat_n(x, len as usize));
                }
                v.truncate(n);
                v
            }
            2 => vec![base; n],
            3 => (0..n).map(|i| if i % 2 == 0 { i64::MIN } else { i64::MAX }).collect(),
            _ => {
                let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
                (0..n).map(|_| base.wrapping_add((rng.next() & mask) as i64)).collect()
            }
        };
        let tile: Vec<i64> = tile.into_iter().map(&narrow).collect();
        let mut out = Vec::new();
        let mut h = encode_ints(&tile, None, &mut out);
        h.offset = 0;
        values.extend(&tile);
        stored.push((out, h));
    }
    let mut at = 0;
    let tiles: Vec<_> = stored
        .iter()
        .map(|(d, h)| {
            at += h.rows as usize;
            (at - h.rows as usize, *h, d.as_slice())
        })
        .collect();
    let packed = tessera_storage::pack_column(&tiles, values.len()).unwrap().unwrap();
    (values, packed)
}

/// Columns in bit-packed tiles (`tiles.cuh`) decode on the GPU to what the store's CPU
/// decoder gives (`tessera_storage::PackedColumn::get`) and to the values stored: every
/// bit width, constant tiles, tiles re-packed from delta and run-length tiles, partial
/// tiles between files, and the extremes of i64.
#[test]
fn gpu_packed_tiles_decode_like_the_cpu() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_packed_tiles_decode_like_the_cpu") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let kernel = module.load_function("unpack_all").unwrap();
    let (values, packed) = packed_test_column(7, |v| v);
    let runs = (0..packed.tiles()).filter(|t| packed.words[2 * t + 1] & tessera_storage::packed::RUNS != 0).count();
    assert!(runs >= 10, "only {runs} tiles of runs");
    let n = values.len();
    let d_col = device.upload(&packed.words).unwrap();
    let mut d_out = device.memory().alloc::<i64>(n).unwrap();
    let n_arg = n as i64;
    let stream = device.stream().clone();
    let mut launch = stream.launch_builder(&kernel);
    launch.arg(&d_col).arg(&n_arg).arg(&mut d_out);
    unsafe { launch.launch(per_row(n)) }.unwrap();
    let got = device.download(&d_out).unwrap();
    for i in 0..n {
        assert_eq!(packed.get(i), values[i], "CPU decoder, row {i}");
        assert_eq!(got[i], values[i], "GPU decoder, row {i}");
    }
    // A warp decoding its 32 rows together, for all, some or a few of its lanes: the
    // rows wanted come out as stored, the others are not written.
    let warp = module.load_function("unpack_warp_some").unwrap();
    const UNTOUCHED: i64 = 0x5a5a_5a5a_5a5a_5a5a;
    for keep in [8u32, 3, 1] {
        let mut d_out = device.upload(&vec![UNTOUCHED; n]).unwrap();
        let mut launch = stream.launch_builder(&warp);
        launch.arg(&d_col).arg(&n_arg).arg(&keep).arg(&mut d_out);
        unsafe { launch.launch(per_row(n)) }.unwrap();
        let got = device.download(&d_out).unwrap();
        for i in 0..n {
            let wanted = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61) < keep as u64;
            let want = if wanted { values[i] } else { UNTOUCHED };
            assert_eq!(got[i], want, "warp decoder, keep {keep}/8, row {i} (wanted: {wanted})");
        }
    }
    device.synchronize().unwrap();
}

/// Kernel tiles staged in shared memory (`tiles.cuh`, `tessera_stage`) decode to the
/// values stored, for kernel tiles of 128, 512 and 2048 rows, 64-bit columns of every
/// width and 32-bit columns: the decoder the generated kernels use for the packed columns
/// they load up front.
#[test]
fn gpu_staged_tiles_decode_like_the_cpu() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_staged_tiles_decode_like_the_cpu") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let wide = packed_test_column(9, |v| v);
    let narrow = packed_test_column(10, |v| v as i32 as i64);
    let stream = device.stream().clone();
    for (name, (values, packed)) in
        [("unpack_staged_128_64", &wide), ("unpack_staged_512_64", &wide), ("unpack_staged_2048_64", &wide), ("unpack_staged_512_32", &narrow), ("unpack_staged_256_32", &narrow)]
    {
        let kernel = module.load_function(name).unwrap();
        let n = values.len();
        let d_col = device.upload(&packed.words).unwrap();
        let mut d_out = device.memory().alloc::<i64>(n).unwrap();
        let n_arg = n as i64;
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(&d_col).arg(&n_arg).arg(&mut d_out);
        let cfg = LaunchConfig { grid_dim: (37, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        unsafe { launch.launch(cfg) }.unwrap();
        let got = device.download(&d_out).unwrap();
        for i in 0..n {
            assert_eq!(got[i], values[i], "{name}, row {i}");
        }
    }
    device.synchronize().unwrap();
}

/// Narrowed columns of 1- and 2-byte distances loaded a word a lane and handed out by warp
/// shuffles (`tessera_word_load`, `tessera_word_pick`, `Experiments::narrow_words`) give
/// each row its own distance, for 2, 4, 6 and 8 items a thread and for columns ending
/// inside a word, a warp's rows and a tile.
#[test]
fn gpu_narrow_words_give_each_row_its_value() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_narrow_words_give_each_row_its_value") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let mut rng = Rng(11);
    for n in [1usize, 3, 31, 33, 255, 257, 1023, 4096, 70_001] {
        let bytes: Vec<u8> = (0..n).map(|i| if i % 5 == 0 { u8::MAX } else { rng.range(0, 255) as u8 }).collect();
        let halves: Vec<u16> = (0..n).map(|i| if i % 7 == 0 { u16::MAX } else { rng.range(0, 65_535) as u16 }).collect();
        let d_bytes = device.upload(&bytes).unwrap();
        let d_halves = device.upload(&halves).unwrap();
        let n_arg = n as i64;
        for name in ["narrow_words_8_2", "narrow_words_8_4", "narrow_words_8_6", "narrow_words_8_8", "narrow_words_16_2", "narrow_words_16_4", "narrow_words_16_6"] {
            let kernel = module.load_function(name).unwrap();
            let mut d_out = device.memory().alloc::<i64>(n).unwrap();
            let mut launch = stream.launch_builder(&kernel);
            if name.starts_with("narrow_words_8") {
                launch.arg(&d_bytes);
            } else {
                launch.arg(&d_halves);
            }
            launch.arg(&n_arg).arg(&mut d_out);
            let cfg = LaunchConfig { grid_dim: (7, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
            unsafe { launch.launch(cfg) }.unwrap();
            let got = device.download(&d_out).unwrap();
            for i in 0..n {
                let want = if name.starts_with("narrow_words_8") { i64::from(bytes[i]) } else { i64::from(halves[i]) };
                assert_eq!(got[i], want, "{name}, {n} rows, row {i}");
            }
        }
    }
    device.synchronize().unwrap();
}

/// Bit-packed narrowed columns (`Narrow::Bits`, lane-interleaved) loaded as the words of
/// each thread's stream and taken out by `tessera_bits_take`, and read a row alone
/// (`tessera_bits_get`), give each row the value `pack_bits` packed: widths that divide
/// a word and widths whose values cross words, 2 to 16 items a thread (tiles starting at
/// every bit a value can), columns ending inside a group of streams, a block's rows and
/// a tile, values at the width's extremes; tiles counted in 64 and in 32 bits, and by
/// their value of the streams (`tessera_stream_value`, as kernels over `int` rows walk
/// them).
#[test]
fn gpu_bit_packed_columns_give_each_row_its_value() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_bit_packed_columns_give_each_row_its_value") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let mut rng = Rng(12);
    for n in [1usize, 31, 33, 127, 129, 1023, 4096, 4097, 70_001] {
        for (w, items) in [(1u32, 8), (4, 8), (4, 4), (6, 8), (6, 2), (12, 4), (12, 8), (17, 4), (20, 4), (24, 8), (31, 2), (31, 16)] {
            let top = (1u64 << w) - 1;
            let values: Vec<u32> = (0..n).map(|i| if i % 5 == 0 { top as u32 } else if i % 7 == 0 { 0 } else { rng.range(0, top as i64) as u32 }).collect();
            let mut words = vec![0u32; crate::codegen::Narrow::bit_words(n, w)];
            assert_eq!(crate::codegen::pack_bits(&values, w, &mut words), None);
            let d_col = device.upload(&words).unwrap();
            let n_arg = n as i64;
            for kind in ["bit_words", "bit_words32", "bit_steps32"] {
                let name = format!("{kind}_{w}_{items}");
                let kernel = module.load_function(&name).unwrap();
                let mut d_out = device.memory().alloc::<i64>(n).unwrap();
                let mut d_out2 = device.memory().alloc::<i64>(n).unwrap();
                let mut launch = stream.launch_builder(&kernel);
                launch.arg(&d_col).arg(&n_arg).arg(&mut d_out).arg(&mut d_out2);
                let cfg = LaunchConfig { grid_dim: (7, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
                unsafe { launch.launch(cfg) }.unwrap();
                let got = device.download(&d_out).unwrap();
                let alone = device.download(&d_out2).unwrap();
                for i in 0..n {
                    assert_eq!(got[i], i64::from(values[i]), "{name}, {n} rows, row {i}");
                    assert_eq!(alone[i], i64::from(values[i]), "{name} read alone, {n} rows, row {i}");
                }
            }
        }
    }
    device.synchronize().unwrap();
}

/// Columns of runs (`Narrow::Runs`) laid out by `runs_of` in parts, as the executor
/// lays them out, give every row its value on the GPU, read alone (`tessera_runs_get`)
/// and as a tile's rows up front (`tessera_runs_dirs`, `tessera_runs_value`; and from
/// directory words held one a lane, `tessera_runs_dir_lane`), and so over `int` rows
/// (read alone in 32 bits, the directory words found from a tile's value of the
/// streams: `tessera_runs_pairs_at`, `tessera_runs_word_at`): runs of one to 40 rows,
/// across 32-row words and parts, 8-, 16- and 32-bit values with their extremes, columns
/// ending inside a word.
#[test]
fn gpu_runs_give_each_row_its_value() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_runs_give_each_row_its_value") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let mut rng = Rng(13);
    for n in [1usize, 31, 32, 33, 1000, 70_001] {
        for bits in [8u32, 16, 32] {
            let top = if bits == 32 { u64::from(u32::MAX) } else { (1u64 << bits) - 1 };
            let mut rows = Vec::with_capacity(n);
            while rows.len() < n {
                let v = match rng.range(0, 9) { 0 => top, 1 => 0, _ => rng.range(0, top as i64) as u64 };
                let len = if rng.range(0, 3) == 0 { 1 } else { rng.range(1, 40) as usize };
                rows.extend(std::iter::repeat_n(v, len.min(n - rows.len())));
            }
            let kernel = module.load_function(&format!("runs_rows_{bits}")).unwrap();
            let n_arg = n as i64;
            let mut d_out = device.memory().alloc::<i64>(n).unwrap();
            let mut d_out2 = device.memory().alloc::<i64>(n).unwrap();
            let mut d_out3 = device.memory().alloc::<i64>(n).unwrap();
            let lanes = module.load_function(&format!("runs_lane_rows_{bits}")).unwrap();
            let rows32 = module.load_function(&format!("runs_rows32_{bits}")).unwrap();
            let steps = module.load_function(&format!("runs_lane_steps_{bits}")).unwrap();
            let mut d_out4 = device.memory().alloc::<i64>(n).unwrap();
            let mut d_out5 = device.memory().alloc::<i64>(n).unwrap();
            let mut d_out6 = device.memory().alloc::<i64>(n).unwrap();
            let cfg = LaunchConfig { grid_dim: (7, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
            macro_rules! check {
                ($t:ty) => {{
                    let values: Vec<$t> = rows.iter().map(|&v| v as $t).collect();
                    let (dir, runs) = crate::codegen::runs_of(&values, 3).unwrap();
                    let (d_dir, d_runs) = (device.upload(&dir).unwrap(), device.upload(&runs).unwrap());
                    let mut launch = stream.launch_builder(&kernel);
                    launch.arg(&d_dir).arg(&d_runs).arg(&n_arg).arg(&mut d_out).arg(&mut d_out2);
                    unsafe { launch.launch(cfg) }.unwrap();
                    let mut launch = stream.launch_builder(&lanes);
                    launch.arg(&d_dir).arg(&d_runs).arg(&n_arg).arg(&mut d_out3);
                    unsafe { launch.launch(cfg) }.unwrap();
                    let (got, tiled) = (device.download(&d_out).unwrap(), device.download(&d_out2).unwrap());
                    let laned = device.download(&d_out3).unwrap();
                    let mut launch = stream.launch_builder(&rows32);
                    launch.arg(&d_dir).arg(&d_runs).arg(&n_arg).arg(&mut d_out4).arg(&mut d_out5);
                    unsafe { launch.launch(cfg) }.unwrap();
                    let mut launch = stream.launch_builder(&steps);
                    launch.arg(&d_dir).arg(&d_runs).arg(&n_arg).arg(&mut d_out6);
                    unsafe { launch.launch(cfg) }.unwrap();
                    let (alone32, tiled32) = (device.download(&d_out4).unwrap(), device.download(&d_out5).unwrap());
                    let stepped = device.download(&d_out6).unwrap();
                    for i in 0..n {
                        assert_eq!(alone32[i], values[i] as i64, "{bits}-bit runs read alone over int rows, {n} rows, row {i}");
                        assert_eq!(tiled32[i], values[i] as i64, "{bits}-bit runs from a tile's value of the streams, {n} rows, row {i}");
                        assert_eq!(stepped[i], values[i] as i64, "{bits}-bit runs from words held a lane each, walked by values, {n} rows, row {i}");
                        assert_eq!(got[i], values[i] as i64, "{bits}-bit runs, {n} rows, row {i}");
                        assert_eq!(tiled[i], values[i] as i64, "{bits}-bit runs read as a tile's, {n} rows, row {i}");
                        assert_eq!(laned[i], values[i] as i64, "{bits}-bit runs from words held a lane each, {n} rows, row {i}");
                    }
                }};
            }
            match bits {
                8 => check!(u8),
                16 => check!(u16),
                _ => check!(u32),
            }
        }
    }
    device.synchronize().unwrap();
}

#[test]
fn gpu_query_streams_share_a_column_through_its_event() {
    let Some(device) = gpu_or_skip("gpu_query_streams_share_a_column_through_its_event") else {
        return;
    };
    use std::time::Duration;
    // 256 MiB: several staging chunks, so the copy is still running when the second
    // stream queues its read, unless it waits for the event.
    let n = 32 << 20;
    let data: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    let a = device.admit(8 * n, Duration::from_secs(10), &|| 0).unwrap();
    let b = device.admit(0, Duration::from_secs(10), &|| 0).unwrap();
    assert!(device.admitted().1 >= 2);
    assert!(!std::sync::Arc::ptr_eq(a.stream(), b.stream()));
    let column = a.upload(&data).unwrap();
    let ready = a.record().unwrap();
    b.wait(&ready).unwrap();
    let back = b.download(&column).unwrap();
    assert!(back == data, "a column read on another stream after its event differs");
    drop(column);
    a.synchronize().unwrap();
    drop(a);
    drop(b);

    // Threads, each on a stream of its own, upload, read back and compare at once.
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let device = std::sync::Arc::clone(&device);
            std::thread::spawn(move || {
                let q = device.admit(64 << 20, Duration::from_secs(30), &|| 0).unwrap();
                for round in 0..4u64 {
                    let v: Vec<u64> = (0..(4u64 << 20)).map(|i| i ^ (t << 56) ^ (round << 48)).collect();
                    let d = q.upload(&v).unwrap();
                    assert!(q.download(&d).unwrap() == v, "thread {t} round {round}");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(device.admitted(), (0, 0), "every reservation is given back");

    // More than the memory limit is refused at once.
    let limit = device.memory().limit();
    let err = device.admit(limit + 1, Duration::from_secs(10), &|| 0).err().unwrap();
    assert!(matches!(err, TesseraError::ResourcesExhausted(_)), "{err}");
}

/// A generated kernel that ptxas compiles with spilled registers is loaded by the kernel
/// cache without local memory (compiled again under a register cap, see
/// `KernelCache::load`), and the CUBIN it stores is that one; compiled and loaded as
/// ptxas first leaves it, the kernel does use local memory (the reason for the retry).
#[test]
fn gpu_kernels_that_spill_are_compiled_again() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_kernels_that_spill_are_compiled_again") else {
        return;
    };
    let first = crate::compile::load_cubin(&device, crate::compile_cubin(SPILLING, &device.arch()).unwrap()).unwrap();
    let (first_registers, first_local) = crate::compile::kernel_locals(&first).unwrap();
    assert!(first_registers > 0 && first_local > 0, "{first_registers} registers, {first_local} bytes of local memory");
    if std::env::var("TESSERA_EXP_SPILL_RETRY").is_ok_and(|v| v == "0") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tessera-spill-retry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let module = KernelCache::new(Some(dir.clone())).load(&device, SPILLING).unwrap_or_else(|e| panic!("{e}"));
    let (registers, local) = crate::compile::kernel_locals(&module).unwrap();
    assert_eq!(local, 0, "{registers} registers (first compilation: {first_registers})");
    // A second cache over the same directory loads the stored CUBIN: the one without spills.
    let again = KernelCache::new(Some(dir.clone()));
    let stored = again.load(&device, SPILLING).unwrap();
    assert_eq!(again.compilations(), 0);
    assert_eq!(crate::compile::kernel_locals(&stored), Some((registers, 0)));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel tile of T rows (at a multiple of T) may run where a 2048-row zone it
/// overlaps is set in the zone bitmap (`tessera_zone_pass`): read as one bit where T
/// divides 2048, two otherwise, for tables ending inside a zone and on its edge.
#[test]
fn gpu_zone_tests_read_the_zones_a_tile_overlaps() {
    let Some(device) = gpu_and_nvrtc_or_skip("gpu_zone_tests_read_the_zones_a_tile_overlaps") else {
        return;
    };
    let module = KernelCache::new(None).load(&device, SMOKE).unwrap_or_else(|e| panic!("{e}"));
    let stream = device.stream().clone();
    let mut rng = Rng(17);
    for n in [1usize, 2047, 2048, 2049, 100_000, 1 << 20] {
        let units = n.div_ceil(2048);
        let set: Vec<bool> = (0..units).map(|g| g % 7 == 3 || rng.range(0, 3) == 0).collect();
        let mut bits = vec![0u32; units.div_ceil(32)];
        for (g, _) in set.iter().enumerate().filter(|(_, s)| **s) {
            bits[g / 32] |= 1 << (g % 32);
        }
        let d_zones = device.upload(&bits).unwrap();
        let n_arg = n as i64;
        for t in [256usize, 1024, 2048, 1536] {
            let tiles = n.div_ceil(t);
            let kernel = module.load_function(&format!("zone_tiles_{t}")).unwrap();
            let mut d_out = device.memory().alloc::<i64>(tiles).unwrap();
            let mut d_out2 = device.memory().alloc::<i64>(tiles).unwrap();
            let mut launch = stream.launch_builder(&kernel);
            launch.arg(&d_zones).arg(&n_arg).arg(&mut d_out).arg(&mut d_out2);
            unsafe { launch.launch(per_row(tiles)) }.unwrap();
            let (one, two) = (device.download(&d_out).unwrap(), device.download(&d_out2).unwrap());
            for k in 0..tiles {
                let (first, last) = (k * t / 2048, ((k * t + t).min(n) - 1) / 2048);
                let want = i64::from((first..=last).any(|g| set[g]));
                assert_eq!(one[k], want, "one-bit form, tile {k} of {t} rows, {n} rows");
                assert_eq!(two[k], want, "two-bit form, tile {k} of {t} rows, {n} rows");
            }
        }
    }
    device.synchronize().unwrap();
}
