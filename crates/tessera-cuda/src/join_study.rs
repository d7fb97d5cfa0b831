//! The join study: does a radix-partitioned hash join beat the no-partition join that
//! generated pipelines use, once the build side is far larger than L2? (`tessera bench
//! joins`; kernels in `cuda/join_study.cuh`.)
//!
//! Both joins run over the same generated data: `build_rows` unique 64-bit keys with a
//! 32-bit payload, and `probe_rows` rows with a 32-bit payload whose keys each match one
//! build row drawn at random (a foreign key). Both sum the two payloads over the matches,
//! and both answers are checked against the host's before a time is reported.
//!
//! - **No partitioning** ([`JoinStudy::no_partition`]): the table of `hash.cuh`, twice the
//!   build rows in slots, built by one kernel, probed by another with four rows a thread
//!   in flight.
//! - **Radix** ([`JoinStudy::radix`]): both sides split by the top bits of the key's hash
//!   until a build partition fits a table of 8192 slots in shared memory, in one pass or
//!   two (histogram, scan, scatter each); then a block joins one partition pair at a time.
//!
//! Times are CUDA-event times of the kernels alone (the data is generated on the device
//! beforehand), medians of the runs.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{CudaFunction, CudaModule, CudaStream, PushKernelArg};
use tessera_common::{Result, TesseraError, exec_err, internal_err};

use crate::GpuDevice;
use crate::compile::KernelCache;
use crate::library::JOIN_STUDY_SOURCE;
use crate::study::{driver, event, launch, ms, splitmix};

/// Slots of a radix partition's shared-memory table: 8192 × (8-byte key + 4-byte payload)
/// = 96 KiB, so two blocks fit an SM of the H100/H200 (227 KiB of shared memory each).
const SLOT_BITS: u32 = 13;
/// Most partitions one pass may make: its shared histogram takes 4 bytes a partition, and
/// 2^15 of them (128 KiB) is the most below the H100/H200's 227 KiB.
const MAX_PART_BITS: u32 = 15;
/// Rows a block of the scatter takes at a time: enough that a pass of 2^7 partitions
/// writes runs of about 64 rows per partition.
const SCATTER_CHUNK: i64 = 8192;
/// Seed of the probe rows' draws.
const SEED: u64 = 0x5eed_2026;
/// The odd constant of `js_build_key`.
const KEY_FACTOR: u64 = 0x9e37_79b9_7f4a_7c15;

/// The median and every run's time of one phase, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// Median of the runs.
    pub median_ms: f64,
    /// Every run, in order.
    pub runs_ms: Vec<f64>,
}

impl Timing {
    fn of(runs_ms: Vec<f64>) -> Timing {
        Timing { median_ms: crate::median(&runs_ms), runs_ms }
    }
}

/// The no-partition join's phases.
#[derive(Debug, Clone)]
pub struct NoPartition {
    /// Bytes of its table (keys and payloads).
    pub table_bytes: u64,
    /// Clearing and building the table.
    pub build: Timing,
    /// Probing it.
    pub probe: Timing,
    /// Both.
    pub total: Timing,
}

/// One radix-partitioned join: its passes and phases.
#[derive(Debug, Clone)]
pub struct Radix {
    /// Top hash bits after each pass (the last is the partitions' count's log2).
    pub pass_bits: Vec<u32>,
    /// Partitioning both sides, every pass.
    pub partition: Timing,
    /// Joining the partition pairs.
    pub join: Timing,
    /// Both.
    pub total: Timing,
}

/// One build size's measurements.
#[derive(Debug, Clone)]
pub struct JoinStudy {
    /// Build rows (unique keys).
    pub build_rows: u64,
    /// Probe rows (each matches one build row).
    pub probe_rows: u64,
    /// The device's L2 cache, bytes.
    pub l2_bytes: u64,
    /// The join that generated pipelines do.
    pub no_partition: NoPartition,
    /// Radix joins, one pass and (where there are 8 bits or more) two.
    pub radix: Vec<Radix>,
}

/// Measures both joins for one build size, `runs` times each after a warm-up, checking
/// every run's answer against the host's.
pub fn measure(device: &GpuDevice, kernels: &KernelCache, build_rows: usize, probe_rows: usize, runs: usize) -> Result<JoinStudy> {
    if build_rows == 0 || probe_rows == 0 || build_rows >= 1 << 31 || probe_rows >= 1 << 31 {
        return exec_err!("the join study takes 1 to 2^31 - 1 rows a side (got {build_rows} build, {probe_rows} probe)");
    }
    if empty_key_index() < build_rows as u64 + 1 {
        return internal_err!("a build key of the join study would be the empty key");
    }
    let part_bits = partition_bits(build_rows)?;
    let module = kernels.load(device, JOIN_STUDY_SOURCE)?;
    let k = Kernels::load(&module)?;
    let stream = device.stream().clone();
    let sms = device.sm_count();
    let mem = device.memory();

    let mut bkeys = mem.alloc::<u64>(build_rows)?;
    let mut bvals = mem.alloc::<u32>(build_rows)?;
    let mut pkeys = mem.alloc::<u64>(probe_rows)?;
    let mut pvals = mem.alloc::<u32>(probe_rows)?;
    let (bn, pn) = (build_rows as i64, probe_rows as i64);
    launch(&stream, &k.gen_build, grid(sms, 8), 256, 0, |l| {
        l.arg(bkeys.as_slice_mut()).arg(bvals.as_slice_mut()).arg(&bn);
    })?;
    launch(&stream, &k.gen_probe, grid(sms, 8), 256, 0, |l| {
        l.arg(pkeys.as_slice_mut()).arg(pvals.as_slice_mut()).arg(&pn).arg(&bn).arg(&SEED);
    })?;
    let want = expected(build_rows as u64, probe_rows as u64)?;
    let mut out = mem.alloc::<u64>(3)?;

    // No partitioning: the table as codegen/hash.rs sizes it, at least twice the rows.
    let slots = (2 * build_rows).next_power_of_two();
    let mask = (slots - 1) as u64;
    let mut table = mem.alloc::<u64>(slots)?;
    let mut payload = mem.alloc::<u32>(slots)?;
    let (mut build, mut probe, mut total) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=runs {
        stream.memset_zeros(out.as_slice_mut()).map_err(driver)?;
        let t0 = event(&stream)?;
        let slots_arg = slots as i64;
        launch(&stream, &k.fill, grid(sms, 8), 256, 0, |l| {
            l.arg(table.as_slice_mut()).arg(&slots_arg).arg(&u64::MAX);
        })?;
        launch(&stream, &k.build, grid(sms, 8), 256, 0, |l| {
            l.arg(bkeys.as_slice()).arg(bvals.as_slice()).arg(&bn).arg(table.as_slice_mut()).arg(payload.as_slice_mut()).arg(&mask).arg(out.as_slice_mut());
        })?;
        let t1 = event(&stream)?;
        let probe_grid = (probe_rows.div_ceil(256 * 4) as u32).clamp(1, sms * 16);
        launch(&stream, &k.probe, probe_grid, 256, 0, |l| {
            l.arg(pkeys.as_slice()).arg(pvals.as_slice()).arg(&pn).arg(table.as_slice()).arg(payload.as_slice()).arg(&mask).arg(out.as_slice_mut());
        })?;
        let t2 = event(&stream)?;
        check(device, &out, want, "the no-partition join")?;
        if run > 0 {
            build.push(ms(&t0, &t1)?);
            probe.push(ms(&t1, &t2)?);
            total.push(ms(&t0, &t2)?);
        }
    }
    let no_partition = NoPartition {
        table_bytes: slots as u64 * 12,
        build: Timing::of(build),
        probe: Timing::of(probe),
        total: Timing::of(total),
    };
    drop((table, payload));

    // Radix: one pass, and two where the partitions are many.
    let mut plans = vec![vec![part_bits]];
    if part_bits >= 8 {
        plans.push(vec![part_bits.div_ceil(2), part_bits]);
    }
    let side = |n: usize| -> Result<Side> {
        Ok(Side {
            keys: [mem.alloc::<u64>(n)?, mem.alloc::<u64>(n)?],
            vals: [mem.alloc::<u32>(n)?, mem.alloc::<u32>(n)?],
            hist: mem.alloc::<u32>(1 << MAX_PART_BITS)?,
            start: mem.alloc::<u32>((1 << MAX_PART_BITS) + 1)?,
            cursor: mem.alloc::<u32>(1 << MAX_PART_BITS)?,
        })
    };
    let mut bside = side(build_rows)?;
    let mut pside = side(probe_rows)?;
    let mut radix = Vec::new();
    for pass_bits in plans {
        let (mut part, mut join, mut total) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..=runs {
            stream.memset_zeros(out.as_slice_mut()).map_err(driver)?;
            let t0 = event(&stream)?;
            let b = partition(&stream, &k, sms, &bkeys, &bvals, bn, &mut bside, &pass_bits)?;
            let p = partition(&stream, &k, sms, &pkeys, &pvals, pn, &mut pside, &pass_bits)?;
            let t1 = event(&stream)?;
            let parts = 1i32 << part_bits;
            let slot_bits = SLOT_BITS as i32;
            let shared = (12u32) << SLOT_BITS;
            launch(&stream, &k.join, (parts as u32).min(sms * 2), 512, shared, |l| {
                l.arg(&bside.keys[b])
                    .arg(&bside.vals[b])
                    .arg(bside.start.as_slice())
                    .arg(&pside.keys[p])
                    .arg(&pside.vals[p])
                    .arg(pside.start.as_slice())
                    .arg(&parts)
                    .arg(&slot_bits)
                    .arg(out.as_slice_mut());
            })?;
            let t2 = event(&stream)?;
            check(device, &out, want, &format!("the radix join with passes {pass_bits:?}"))?;
            if run > 0 {
                part.push(ms(&t0, &t1)?);
                join.push(ms(&t1, &t2)?);
                total.push(ms(&t0, &t2)?);
            }
        }
        radix.push(Radix { pass_bits, partition: Timing::of(part), join: Timing::of(join), total: Timing::of(total) });
    }
    Ok(JoinStudy {
        build_rows: build_rows as u64,
        probe_rows: probe_rows as u64,
        l2_bytes: device.info().l2_bytes,
        no_partition,
        radix,
    })
}

/// Partition bits for `build_rows`: the fewest with which a build partition, at its mean
/// plus eight standard deviations, fills at most half of a shared-memory table.
pub fn partition_bits(build_rows: usize) -> Result<u32> {
    let half = f64::from(1u32 << (SLOT_BITS - 1));
    for bits in 1..=MAX_PART_BITS {
        let mean = build_rows as f64 / f64::from(1u32 << bits);
        if mean + 8.0 * mean.sqrt() + 64.0 <= half {
            return Ok(bits);
        }
    }
    exec_err!("{build_rows} build rows need more than 2^{MAX_PART_BITS} partitions of 2^{} rows", SLOT_BITS - 1)
}

/// The kernels of `join_study.cuh`, with the shared memory they may ask for raised.
struct Kernels {
    gen_build: CudaFunction,
    gen_probe: CudaFunction,
    fill: CudaFunction,
    build: CudaFunction,
    probe: CudaFunction,
    histogram: CudaFunction,
    scan: CudaFunction,
    scatter: CudaFunction,
    join: CudaFunction,
}

impl Kernels {
    fn load(module: &Arc<CudaModule>) -> Result<Kernels> {
        let f = |name: &str| module.load_function(name).map_err(|e| TesseraError::Internal(format!("{name}: {e:?}")));
        let k = Kernels {
            gen_build: f("tessera_js_gen_build")?,
            gen_probe: f("tessera_js_gen_probe")?,
            fill: f("tessera_js_fill")?,
            build: f("tessera_js_build")?,
            probe: f("tessera_js_probe")?,
            histogram: f("tessera_js_histogram")?,
            scan: f("tessera_js_scan")?,
            scatter: f("tessera_js_scatter")?,
            join: f("tessera_js_join")?,
        };
        let max = CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        for (f, bytes) in [(&k.histogram, 4 << MAX_PART_BITS), (&k.scatter, 4 << MAX_PART_BITS), (&k.join, 12 << SLOT_BITS)] {
            f.set_attribute(max, bytes).map_err(driver)?;
        }
        Ok(k)
    }
}

/// A side's buffers: two generations of partitioned rows (passes alternate), and the
/// histogram, partition starts and write cursors of a pass.
struct Side {
    keys: [crate::DeviceBuffer<u64>; 2],
    vals: [crate::DeviceBuffer<u32>; 2],
    hist: crate::DeviceBuffer<u32>,
    start: crate::DeviceBuffer<u32>,
    cursor: crate::DeviceBuffer<u32>,
}

/// Partitions a side in passes of `pass_bits` top hash bits each; the index of the
/// generation holding the result. A later pass splits each earlier partition further:
/// rows come to it grouped by their earlier partition, so a block's rows fall into few
/// of the finer ones and its writes stay together.
#[allow(clippy::too_many_arguments)]
fn partition(stream: &Arc<CudaStream>, k: &Kernels, sms: u32, keys: &crate::DeviceBuffer<u64>, vals: &crate::DeviceBuffer<u32>, n: i64, side: &mut Side, pass_bits: &[u32]) -> Result<usize> {
    let mut from: Option<usize> = None;
    for &bits in pass_bits {
        let to = from.map_or(0, |f| 1 - f);
        let parts = 1usize << bits;
        let bits_arg = bits as i32;
        let parts_arg = parts as i32;
        let shared = 4u32 << bits;
        let [k0, k1] = &mut side.keys;
        let [v0, v1] = &mut side.vals;
        let (src_k, src_v, dst_k, dst_v) = match from {
            None => (keys.as_slice(), vals.as_slice(), k0.as_slice_mut(), v0.as_slice_mut()),
            Some(0) => (k0.as_slice(), v0.as_slice(), k1.as_slice_mut(), v1.as_slice_mut()),
            Some(_) => (k1.as_slice(), v1.as_slice(), k0.as_slice_mut(), v0.as_slice_mut()),
        };
        stream.memset_zeros(side.hist.as_slice_mut()).map_err(driver)?;
        launch(stream, &k.histogram, grid(sms, 4), 512, shared, |l| {
            l.arg(src_k).arg(&n).arg(&bits_arg).arg(side.hist.as_slice_mut());
        })?;
        launch(stream, &k.scan, 1, 1024, 0, |l| {
            l.arg(side.hist.as_slice()).arg(&parts_arg).arg(side.start.as_slice_mut()).arg(side.cursor.as_slice_mut());
        })?;
        let blocks = ((n as u64).div_ceil(SCATTER_CHUNK as u64) as u32).clamp(1, sms * 4);
        launch(stream, &k.scatter, blocks, 512, shared, |l| {
            l.arg(src_k).arg(src_v).arg(&n).arg(&bits_arg).arg(&SCATTER_CHUNK).arg(side.cursor.as_slice_mut()).arg(dst_k).arg(dst_v);
        })?;
        from = Some(to);
    }
    Ok(from.unwrap_or(0))
}

fn grid(sms: u32, per_sm: u32) -> u32 {
    sms.max(1) * per_sm
}

/// Compares a run's (sum, matches, failures) with the host's answer.
fn check(device: &GpuDevice, out: &crate::DeviceBuffer<u64>, want: (u64, u64), what: &str) -> Result<()> {
    let got = device.download(out)?;
    if got.len() != 3 || (got[0], got[1]) != want || got[2] != 0 {
        return internal_err!("{what} answered (sum, matches, failures) = {got:?}, the host {want:?}");
    }
    Ok(())
}

/// The host's answer: the sum of both payloads over the matches, and their count (every
/// probe row matches once).
fn expected(build_rows: u64, probe_rows: u64) -> Result<(u64, u64)> {
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as u64;
    let per = probe_rows.div_ceil(threads);
    let sum = std::thread::scope(|s| {
        let parts: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let (lo, hi) = (t * per, ((t + 1) * per).min(probe_rows));
                    (lo..hi).fold(0u64, |acc, j| {
                        let i = splitmix(SEED.wrapping_add(j)) % build_rows;
                        acc.wrapping_add(build_payload(i)).wrapping_add(probe_payload(j))
                    })
                })
            })
            .collect();
        parts.into_iter().try_fold(0u64, |acc, h| h.join().map(|part| acc.wrapping_add(part)))
    });
    match sum {
        Ok(sum) => Ok((sum, probe_rows)),
        Err(_) => internal_err!("a thread computing the join study's answer panicked"),
    }
}

fn build_payload(i: u64) -> u64 {
    u64::from(i.wrapping_mul(2_654_435_761).wrapping_add(12345) as u32)
}

fn probe_payload(j: u64) -> u64 {
    u64::from(j.wrapping_mul(40503).wrapping_add(7) as u32)
}

/// The build row whose key `(i + 1) · KEY_FACTOR` would be the empty key (all ones): the
/// study's build sides must stay below it.
fn empty_key_index() -> u64 {
    // The inverse of the odd factor modulo 2^64 (Newton's iteration doubles the correct
    // bits each step: 5 steps from 3 to 96).
    let mut inv = KEY_FACTOR;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(KEY_FACTOR.wrapping_mul(inv)));
    }
    u64::MAX.wrapping_mul(inv).wrapping_sub(1)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn partitions_fit_the_shared_table() {
        // 2^20 build rows: 2^9 partitions of 2048 (+ 8 sigma + 64 = 2474 <= 4096).
        assert_eq!(partition_bits(1 << 20).unwrap(), 9);
        assert_eq!(partition_bits(1).unwrap(), 1);
        assert_eq!(partition_bits(1 << 26).unwrap(), 15);
        assert!(partition_bits(1 << 30).is_err());
        for n in [1usize, 1000, 1 << 20, 3 << 22, 1 << 26] {
            let bits = partition_bits(n).unwrap();
            let mean = n as f64 / f64::from(1u32 << bits);
            assert!(mean + 8.0 * mean.sqrt() + 64.0 <= 4096.0, "{n}: {bits}");
        }
    }

    #[test]
    fn no_build_key_is_the_empty_key() {
        let i = empty_key_index();
        assert_eq!((i + 1).wrapping_mul(KEY_FACTOR), u64::MAX);
        assert!(i > 1 << 31);
    }

    #[test]
    fn kernels_compile_with_nvrtc() {
        if !crate::test_support::nvrtc_or_skip("join study kernels compile with NVRTC") {
            return;
        }
        let cubin = crate::compile_cubin(JOIN_STUDY_SOURCE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        for k in ["tessera_js_build", "tessera_js_probe", "tessera_js_histogram", "tessera_js_scan", "tessera_js_scatter", "tessera_js_join"] {
            assert!(cubin.windows(k.len()).any(|w| w == k.as_bytes()), "{k} missing");
        }
    }

    /// Both joins on the device, one radix pass (2^16 build rows: 2^5 partitions) and two
    /// (2^22: 2^11): `measure` fails unless every run's answer is the host's.
    #[test]
    fn gpu_both_joins_give_the_hosts_answer() {
        let Some(device) = crate::test_support::gpu_and_nvrtc_or_skip("gpu_both_joins_give_the_hosts_answer") else {
            return;
        };
        let cache = KernelCache::new(None);
        for (build, probe, passes) in [(1usize << 16, 1usize << 18, 1usize), (1 << 22, (1 << 22) + 3, 2), (1000, 77, 1)] {
            let study = measure(&device, &cache, build, probe, 1).unwrap_or_else(|e| panic!("{build} x {probe}: {e}"));
            assert_eq!(study.radix.len(), passes);
            assert_eq!(study.radix.last().map(|r| r.pass_bits.len()), Some(passes));
            assert_eq!(study.no_partition.total.runs_ms.len(), 1);
        }
    }

    #[test]
    fn the_hosts_answer_adds_both_payloads() {
        // One build row: every probe row matches it.
        let (sum, n) = expected(1, 3).unwrap();
        assert_eq!(n, 3);
        assert_eq!(sum, 3 * build_payload(0) + probe_payload(0) + probe_payload(1) + probe_payload(2));
    }
}
