//! The probe study: where should a scan's membership bitmaps live when one of them is too
//! large for L1 to keep? (`tessera bench probes`; kernels in `cuda/probe_study.cuh`.)
//!
//! SSB q3.1's probe at SF 20 waits a third of its time on the customer bitmap's words
//! (75 KB, read from L2 for a fifth of the rows) and stays at 1.33–1.38× its bandwidth
//! model (`benchmarks/results/gpu-2026-11-30b/`). Copying that bitmap into shared memory
//! takes 75 KB a block: with generated pipelines' 128 threads a block that leaves room for
//! three blocks (12 warps) an SM, too few to hide DRAM; with 512–1024 threads a block the
//! same copy serves 16–32 warps. This study measures that trade on a probe of q3.1's shape
//! over generated data, before the code generator is changed for it:
//!
//! - rows of a 32-bit customer key, 16-bit supplier and date keys and a 32-bit value;
//! - supplier (40,000 slots, a fifth set), customer (600,000 slots, a fifth) and date
//!   (61,131 slots, six in seven) bitmaps, tested in that order, the last two for the rows
//!   the first lets through, the value loaded and summed for the rows all three do;
//! - every bitmap in global memory, the customer's in shared memory, or all three, each
//!   with blocks of 128, 512 and 1024 threads, as many blocks as fit an SM;
//! - every bitmap in global memory with each row's three words loaded a tile ahead of its
//!   tests (2026-11-30c: the tests of q3.1's probe wait on the customer's words most).
//!   On an H200 it was the slowest placement kept in global memory: 0.49–0.51 ms against
//!   0.35–0.38, its 48 registers costing a third of the resident blocks, and held to 32 it
//!   spilled (2.8 ms; `benchmarks/results/gpu-2026-11-30c/` runs 7–8).
//!
//! Every variant's sum and count are checked against the host's before a time is reported.
//! Times are CUDA-event times of the probe kernel alone, medians of the runs.

use cudarc::driver::PushKernelArg;
use cudarc::driver::sys::CUfunction_attribute_enum;
use tessera_common::{Result, TesseraError, exec_err, internal_err};

use crate::GpuDevice;
use crate::compile::KernelCache;
use crate::library::PROBE_STUDY_SOURCE;
use crate::study::{driver, event, launch, ms, splitmix};

/// Slots of the customer table: SSB SF 20's customers.
pub const CUSTOMER_SLOTS: u32 = 600_000;
/// Slots of the supplier table: SSB SF 20's suppliers.
pub const SUPPLIER_SLOTS: u32 = 40_000;
/// Slots of the date table: the dense range of SSB's date keys (19920101–19981231).
pub const DATE_SLOTS: u32 = 61_131;
/// Per mille of each table's slots that hold a row passing its filter: q3.1's region
/// filters keep a fifth of customers and suppliers, its years six of seven.
const PERMILLE: [u32; 3] = [200, 200, 857];
/// Seeds of the rows and of the three bitmaps.
const SEED: u64 = 0x009b_0be5_2026;
const BIT_SEEDS: [u64; 3] = [0x00c0_5700, 0x005a_9900, 0x00da_7e00];
/// Rows a thread a tile (`ps_probe`'s ITEMS), as generated pipelines with several probes.
pub const ITEMS: u32 = 2;

/// Where the bitmaps live in one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Every bitmap read from global memory (through L1 and L2), as generated pipelines do.
    Global,
    /// The customer bitmap copied into each block's shared memory.
    SharedCustomer,
    /// All three copied into each block's shared memory.
    SharedAll,
    /// Every bitmap in global memory, each row's three words loaded a tile ahead (keys two
    /// tiles ahead), so that a tile's tests wait on nothing loaded in the same iteration.
    GlobalAhead,
}

impl Placement {
    /// Every placement, in the order they are measured.
    pub const ALL: [Placement; 4] = [Placement::Global, Placement::SharedCustomer, Placement::SharedAll, Placement::GlobalAhead];

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Global => "global",
            Placement::SharedCustomer => "customer in shared",
            Placement::SharedAll => "all in shared",
            Placement::GlobalAhead => "global, a tile ahead",
        }
    }

    fn kernel(self) -> &'static str {
        match self {
            Placement::Global => "tessera_ps_probe_global",
            Placement::SharedCustomer => "tessera_ps_probe_shared_customer",
            Placement::SharedAll => "tessera_ps_probe_shared_all",
            Placement::GlobalAhead => "tessera_ps_probe_ahead",
        }
    }

    /// Shared memory a block asks for, bytes.
    pub fn shared_bytes(self) -> u32 {
        let words = |slots: u32| 4 * slots.div_ceil(32);
        match self {
            Placement::Global | Placement::GlobalAhead => 0,
            Placement::SharedCustomer => words(CUSTOMER_SLOTS),
            Placement::SharedAll => words(CUSTOMER_SLOTS) + words(SUPPLIER_SLOTS) + words(DATE_SLOTS),
        }
    }
}

/// One variant's measurement.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Where the bitmaps were.
    pub placement: Placement,
    /// Threads a block.
    pub threads: u32,
    /// Blocks an SM (the driver's occupancy for the kernel, its threads and shared memory).
    pub blocks_per_sm: u32,
    /// The probe's median time, ms.
    pub median_ms: f64,
    /// Every run's time, ms.
    pub runs_ms: Vec<f64>,
}

/// The study over one number of rows.
#[derive(Debug, Clone)]
pub struct ProbeStudy {
    /// Rows probed.
    pub rows: u64,
    /// Rows passing all three tests.
    pub passing: u64,
    /// Bytes of the keys every row loads (4 + 2 + 2 a row).
    pub key_bytes: u64,
    /// The variants, placement by placement, threads by threads.
    pub variants: Vec<Variant>,
}

/// Threads a block measured for each placement: generated pipelines' 128, and blocks
/// large enough that one copy of a shared bitmap serves many warps.
pub const THREADS: [u32; 3] = [128, 512, 1024];

/// Measures every variant over `rows` generated rows, `runs` times each after a warm-up,
/// checking every run's answer against the host's.
pub fn measure(device: &GpuDevice, kernels: &KernelCache, rows: usize, runs: usize) -> Result<ProbeStudy> {
    if rows == 0 || rows >= 1 << 31 {
        return exec_err!("the probe study takes 1 to 2^31 - 1 rows (got {rows})");
    }
    let module = kernels.load(device, PROBE_STUDY_SOURCE)?;
    let f = |name: &str| module.load_function(name).map_err(|e| TesseraError::Internal(format!("{name}: {e:?}")));
    let (gen_rows, gen_bits) = (f("tessera_ps_gen")?, f("tessera_ps_bits")?);
    let stream = device.stream().clone();
    let sms = device.sm_count();
    let mem = device.memory();
    let n = rows as i64;
    let mut cust = mem.alloc::<u32>(rows)?;
    let mut supp = mem.alloc::<u16>(rows)?;
    let mut date = mem.alloc::<u16>(rows)?;
    let mut value = mem.alloc::<u32>(rows)?;
    launch(&stream, &gen_rows, sms * 8, 256, 0, |l| {
        l.arg(cust.as_slice_mut()).arg(supp.as_slice_mut()).arg(date.as_slice_mut()).arg(value.as_slice_mut()).arg(&n).arg(&SEED).arg(&CUSTOMER_SLOTS).arg(&SUPPLIER_SLOTS).arg(&DATE_SLOTS);
    })?;
    // Table k's bitmap (0 customer, 1 supplier, 2 date) and its words.
    let bitmap = |k: usize, slots: u32| -> Result<(crate::DeviceBuffer<u32>, i32)> {
        let words = slots.div_ceil(32) as usize;
        let mut bits = mem.alloc::<u32>(words)?;
        let w = words as i64;
        launch(&stream, &gen_bits, sms * 4, 256, 0, |l| {
            l.arg(bits.as_slice_mut()).arg(&w).arg(&BIT_SEEDS[k]).arg(&PERMILLE[k]);
        })?;
        Ok((bits, words as i32))
    };
    let (cb, cw) = bitmap(0, CUSTOMER_SLOTS)?;
    let (sb, sw) = bitmap(1, SUPPLIER_SLOTS)?;
    let (db, dw) = bitmap(2, DATE_SLOTS)?;
    let want = expected(rows as u64)?;
    let mut out = mem.alloc::<u64>(2)?;
    let mut variants = Vec::new();
    for placement in Placement::ALL {
        let probe = f(placement.kernel())?;
        let shared = placement.shared_bytes();
        if shared > 0 {
            let max = CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            probe.set_attribute(max, shared as i32).map_err(driver)?;
        }
        for threads in THREADS {
            let per_sm = probe.occupancy_max_active_blocks_per_multiprocessor(threads, shared as usize, None).map_err(driver)?;
            if per_sm == 0 {
                return internal_err!("no block of {threads} threads with {shared} bytes of shared memory fits an SM");
            }
            let tiles = (rows as u64).div_ceil(u64::from(threads * ITEMS));
            let blocks = tiles.min(u64::from(sms * per_sm)) as u32;
            let mut times = Vec::new();
            for run in 0..=runs {
                stream.memset_zeros(out.as_slice_mut()).map_err(driver)?;
                let t0 = event(&stream)?;
                launch(&stream, &probe, blocks, threads, shared, |l| {
                    l.arg(cust.as_slice()).arg(supp.as_slice()).arg(date.as_slice()).arg(value.as_slice()).arg(&n).arg(cb.as_slice()).arg(&cw).arg(sb.as_slice()).arg(&sw).arg(db.as_slice()).arg(&dw).arg(out.as_slice_mut());
                })?;
                let t1 = event(&stream)?;
                let got = device.download(&out)?;
                if got != [want.0, want.1] {
                    return internal_err!("the probe with bitmaps {} and {threads} threads a block answered (sum, count) = {got:?}, the host ({}, {})", placement.name(), want.0, want.1);
                }
                if run > 0 {
                    times.push(ms(&t0, &t1)?);
                }
            }
            variants.push(Variant { placement, threads, blocks_per_sm: per_sm, median_ms: crate::median(&times), runs_ms: times });
        }
    }
    Ok(ProbeStudy { rows: rows as u64, passing: want.1, key_bytes: 8 * rows as u64, variants })
}

/// Row `i`'s (customer, supplier, date, value), as `tessera_ps_gen` makes them.
fn row(i: u64) -> (u32, u32, u32, u64) {
    let a = splitmix(SEED.wrapping_add(4 * i));
    let b = splitmix(SEED.wrapping_add(4 * i + 1));
    ((a & 0xffff_ffff) as u32 % CUSTOMER_SLOTS, ((a >> 32) % u64::from(SUPPLIER_SLOTS)) as u32, (b & 0xffff_ffff) as u32 % DATE_SLOTS, (b >> 32) % 10_000 + 1)
}

/// Whether slot `s` of table `k` (0 customer, 1 supplier, 2 date) holds a passing row, as
/// `tessera_ps_bits` sets its bit.
fn passes(k: usize, s: u32) -> bool {
    splitmix(BIT_SEEDS[k].wrapping_add(u64::from(s))) % 1000 < u64::from(PERMILLE[k])
}

/// The host's answer over `rows` rows: the sum of the passing rows' values and their count.
fn expected(rows: u64) -> Result<(u64, u64)> {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u64;
    let per = rows.div_ceil(threads);
    let parts = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let (lo, hi) = (t * per, ((t + 1) * per).min(rows));
                    (lo..hi).fold((0u64, 0u64), |(sum, count), i| {
                        let (c, sp, d, v) = row(i);
                        if passes(1, sp) && passes(0, c) && passes(2, d) { (sum + v, count + 1) } else { (sum, count) }
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect::<std::result::Result<Vec<_>, _>>()
    });
    match parts {
        Ok(parts) => Ok(parts.into_iter().fold((0, 0), |(s, c), (ps, pc)| (s + ps, c + pc))),
        Err(_) => internal_err!("a thread computing the probe study's answer panicked"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_stay_in_their_tables_and_pass_at_the_rates_asked() {
        let n = 200_000u64;
        let mut pass = [0u64; 3];
        for i in 0..n {
            let (c, s, d, v) = row(i);
            assert!(c < CUSTOMER_SLOTS && s < SUPPLIER_SLOTS && d < DATE_SLOTS && (1..=10_000).contains(&v), "row {i}: {c} {s} {d} {v}");
            for (k, key) in [c, s, d].into_iter().enumerate() {
                pass[k] += u64::from(passes(k, key));
            }
        }
        for k in 0..3 {
            let rate = pass[k] as f64 / n as f64;
            assert!((rate - f64::from(PERMILLE[k]) / 1000.0).abs() < 0.01, "table {k}: {rate}");
        }
        // A fifth, a fifth and six sevenths: about 3.4% of the rows pass all three.
        let (_, count) = expected(n).unwrap();
        let share = count as f64 / n as f64;
        assert!((0.030..0.039).contains(&share), "{share}");
    }

    #[test]
    fn shared_variants_ask_for_their_bitmaps_bytes() {
        assert_eq!(Placement::Global.shared_bytes(), 0);
        assert_eq!(Placement::GlobalAhead.shared_bytes(), 0);
        assert_eq!(Placement::SharedCustomer.shared_bytes(), 75_000);
        assert_eq!(Placement::SharedAll.shared_bytes(), 75_000 + 5_000 + 7_644);
    }

    #[test]
    fn kernels_compile_with_nvrtc() {
        if !crate::test_support::nvrtc_or_skip("probe study kernels compile with NVRTC") {
            return;
        }
        let cubin = crate::compile_cubin(PROBE_STUDY_SOURCE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        for k in ["tessera_ps_gen", "tessera_ps_bits"].into_iter().chain(Placement::ALL.map(Placement::kernel)) {
            assert!(cubin.windows(k.len()).any(|w| w == k.as_bytes()), "{k} missing");
        }
    }

    /// Every variant on the device over a few partial tiles and a few hundred thousand
    /// rows: `measure` fails unless every run's answer is the host's.
    #[test]
    fn gpu_every_placement_gives_the_hosts_answer() {
        let Some(device) = crate::test_support::gpu_and_nvrtc_or_skip("gpu_every_placement_gives_the_hosts_answer") else {
            return;
        };
        let cache = KernelCache::new(None);
        for rows in [1usize, 1000, 300_001] {
            let study = measure(&device, &cache, rows, 1).unwrap_or_else(|e| panic!("{rows} rows: {e}"));
            assert_eq!(study.variants.len(), Placement::ALL.len() * THREADS.len());
            assert!(study.variants.iter().all(|v| v.runs_ms.len() == 1 && v.blocks_per_sm > 0));
        }
    }
}
