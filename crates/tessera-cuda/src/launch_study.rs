//! The launch study: what it costs the host to queue a query's kernels. It compares one
//! launch at a time, as the executor queues a query's pipelines, with one CUDA graph
//! replaying them all (`tessera bench launches`; the kernel is `cuda/launch_study.cuh`).
//!
//! A warm SSB SF 20 query spends 85–120 µs of host time beside its kernels, about 7–10 µs
//! for each pipeline (`benchmarks/results/gpu-2026-11-28c/`). This study measures how
//! much of that a graph per cached plan could take away. A "query" here is `kernels`
//! launches of a kernel with [`PARAMS`] 64-bit parameters, queued on one stream and then
//! waited for, in four ways:
//!
//! - **events**: each launch between two timing events, as the executor does;
//! - **launches**: the launches alone;
//! - **graph**: one launch of a graph captured once from the same launches;
//! - **capture**: the graph captured and instantiated anew for every query (what a
//!   changed parameter would cost without updating the graph);
//! - **timed graphs**: each launch with its two events as one graph launch
//!   ([`crate::graph::TimedKernel`], what a warm run of a cached plan's pipeline does);
//! - **copies back**: the launches, then one copy of 48 bytes to pinned host memory, or
//!   three of 16 bytes (a scalar aggregation's error flags, seen flag and sums come back
//!   as three): what each small copy adds before the host has the result.
//!
//! Each way is timed on the host: until its work is queued, and until the stream is
//! waited for. The medians of `runs` queries are reported, after warm-up queries. The
//! kernel adds its parameters' sum to a counter, and the study checks the counter against
//! every launch it made before reporting anything.

use std::time::Instant;

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaFunction, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use tessera_common::{Result, TesseraError};

use crate::GpuDevice;
use crate::compile::KernelCache;
use crate::library::LAUNCH_STUDY_SOURCE;

/// 64-bit parameters of the study's kernel (`tessera_launch_study`), besides its counter.
pub const PARAMS: usize = 24;

/// Queries run before the timed ones, in each way.
const WARMUP: usize = 20;

/// Host time of one way of queueing a query's kernels: medians over the runs, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Way {
    /// From the first call to the query's work all queued.
    pub queued_us: f64,
    /// From the first call to the stream waited for.
    pub done_us: f64,
}

/// The study for one number of kernels per query.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchStudy {
    /// Kernels per query.
    pub kernels: usize,
    /// Timed queries per way.
    pub runs: usize,
    /// Each launch between two timing events.
    pub events: Way,
    /// The launches alone.
    pub launches: Way,
    /// One graph, captured once, launched per query.
    pub graph: Way,
    /// The graph captured and instantiated for every query, then launched.
    pub capture: Way,
    /// Each launch and its two timing events as one graph ([`crate::graph::TimedKernel`]).
    pub timed_graphs: Way,
    /// The launches, then one 48-byte copy to the host.
    pub one_copy: Way,
    /// The launches, then three 16-byte copies to the host.
    pub three_copies: Way,
    /// Capturing and instantiating the graph once, µs.
    pub instantiate_us: f64,
}

/// The kernel, its launch shape, its parameters and its counter.
struct Kernel {
    function: CudaFunction,
    config: LaunchConfig,
    params: Vec<i64>,
    counter: u64,
}

impl Kernel {
    /// Queues one launch on `stream`.
    fn launch(&self, stream: &CudaStream) -> Result<()> {
        let mut b = stream.launch_builder(&self.function);
        for p in &self.params {
            b.arg(p);
        }
        b.arg(&self.counter);
        // SAFETY: the kernel takes PARAMS int64 values and a pointer to one u64, which
        // `counter` is (alive until the study returns).
        unsafe { b.launch(self.config) }.map(|_| ()).map_err(|e| driver("launching", e))
    }
}

fn driver(what: &str, e: impl std::fmt::Debug) -> TesseraError {
    TesseraError::Internal(format!("launch study: {what}: {e:?}"))
}

/// Times `runs` queries (after [`WARMUP`]) of `query`, which queues one query's work and
/// returns when it is queued.
fn time(stream: &CudaStream, runs: usize, mut query: impl FnMut() -> Result<()>) -> Result<Way> {
    let (mut queued, mut done) = (Vec::new(), Vec::new());
    for i in 0..WARMUP + runs {
        let start = Instant::now();
        query()?;
        let q = start.elapsed();
        stream.synchronize().map_err(|e| driver("waiting", e))?;
        let d = start.elapsed();
        if i >= WARMUP {
            queued.push(q.as_secs_f64() * 1e6);
            done.push(d.as_secs_f64() * 1e6);
        }
    }
    Ok(Way { queued_us: crate::median(&queued), done_us: crate::median(&done) })
}

/// Runs the study for `kernels` launches a query, `runs` timed queries per way.
pub fn measure(device: &GpuDevice, cache: &KernelCache, kernels: usize, runs: usize) -> Result<LaunchStudy> {
    let (kernels, runs) = (kernels.max(1), runs.max(1));
    let module = cache.load(device, LAUNCH_STUDY_SOURCE)?;
    let function = module.load_function("tessera_launch_study").map_err(|e| driver("loading the kernel", e))?;
    let ctx = device.context();
    let stream = ctx.new_stream().map_err(|e| driver("creating a stream", e))?;
    let counter_buf = stream.alloc_zeros::<u64>(1).map_err(|e| driver("allocating the counter", e))?;
    let counter = counter_buf.device_ptr(&stream).0;
    // A generated pipeline's launch shape: a few blocks of 128 threads an SM.
    let config = LaunchConfig { grid_dim: (device.sm_count() * 4, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
    let params: Vec<i64> = (1..=PARAMS as i64).collect();
    let k = Kernel { function, config, params, counter };
    let mut launched = 0u64;

    let pairs: Vec<_> = (0..2 * kernels).map(|_| ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))).collect::<std::result::Result<_, _>>().map_err(|e| driver("creating events", e))?;
    let events = time(&stream, runs, || {
        for i in 0..kernels {
            pairs[2 * i].record(&stream).map_err(|e| driver("recording an event", e))?;
            k.launch(&stream)?;
            pairs[2 * i + 1].record(&stream).map_err(|e| driver("recording an event", e))?;
        }
        Ok(())
    })?;
    launched += ((WARMUP + runs) * kernels) as u64;

    let launches = time(&stream, runs, || (0..kernels).try_for_each(|_| k.launch(&stream)))?;
    launched += ((WARMUP + runs) * kernels) as u64;

    let capture_once = || -> Result<cudarc::driver::CudaGraph> {
        stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).map_err(|e| driver("beginning a capture", e))?;
        let queued = (0..kernels).try_for_each(|_| k.launch(&stream));
        let graph = stream.end_capture(CUgraphInstantiate_flags(0)).map_err(|e| driver("ending a capture", e))?;
        queued?;
        graph.ok_or_else(|| driver("ending a capture", "no graph"))
    };
    let started = Instant::now();
    let graph = capture_once()?;
    let instantiate_us = started.elapsed().as_secs_f64() * 1e6;
    graph.upload().map_err(|e| driver("uploading the graph", e))?;
    let graph_way = time(&stream, runs, || graph.launch().map_err(|e| driver("launching the graph", e)))?;
    launched += ((WARMUP + runs) * kernels) as u64;
    drop(graph);

    let capture = time(&stream, runs, || capture_once()?.launch().map_err(|e| driver("launching the graph", e)))?;
    launched += ((WARMUP + runs) * kernels) as u64;

    // One graph of a launch between its events for each of the query's kernels, as the
    // executor keeps one a pipeline.
    let values: Vec<u64> = k.params.iter().map(|&p| p as u64).chain([k.counter]).collect();
    let node = [crate::graph::KernelNode::of_words(&k.function, config, &values)];
    let mut timed: Vec<crate::graph::TimedKernel> = (0..kernels).map(|_| crate::graph::TimedKernel::new(ctx, &node)).collect::<Result<_>>()?;
    let timed_graphs = time(&stream, runs, || {
        for g in &mut timed {
            g.launch(&stream, &node)?.ok_or_else(|| driver("a timed graph's launch", "its events are held"))?;
        }
        Ok(())
    })?;
    launched += ((WARMUP + runs) * kernels) as u64;
    drop(timed);

    // Small copies back after the launches, into pinned memory as the executor's
    // downloads go (`upload.rs`'s staging buffers).
    // SAFETY: only written by the copies below and never read.
    let mut pinned = unsafe { ctx.alloc_pinned_with_flags::<u8>(64, 0) }.map_err(|e| driver("allocating pinned memory", e))?;
    let host = pinned.as_mut_ptr().map_err(|e| driver("allocating pinned memory", e))?;
    let source_buf = stream.alloc_zeros::<u8>(64).map_err(|e| driver("allocating the copies' source", e))?;
    let source = source_buf.device_ptr(&stream).0;
    let copies = |pieces: usize, bytes: usize| -> Result<()> {
        for _ in 0..kernels {
            k.launch(&stream)?;
        }
        for i in 0..pieces {
            // SAFETY: [16 i, 16 i + bytes) lies within the 64-byte buffer (at most 3
            // pieces of at most 48 bytes, or one), whose only other users are these same
            // copies, in stream order; the source's 64 bytes hold `bytes`.
            let dst = unsafe { std::slice::from_raw_parts_mut(host.add(16 * i), bytes) };
            unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, source, stream.cu_stream()) }.map_err(|e| driver("copying back", e))?;
        }
        Ok(())
    };
    let one_copy = time(&stream, runs, || copies(1, 48))?;
    launched += ((WARMUP + runs) * kernels) as u64;
    let three_copies = time(&stream, runs, || copies(3, 16))?;
    launched += ((WARMUP + runs) * kernels) as u64;
    drop(pinned);
    drop(source_buf);

    let got = stream.clone_dtoh(&counter_buf).map_err(|e| driver("reading the counter", e))?;
    let sum: u64 = k.params.iter().map(|&p| p as u64).sum();
    let want = launched.wrapping_mul(sum);
    if got.first() != Some(&want) {
        return Err(TesseraError::Internal(format!("launch study: the kernels counted {:?}, {launched} launches make {want}", got.first())));
    }
    Ok(LaunchStudy { kernels, runs, events, launches, graph: graph_way, capture, timed_graphs, one_copy, three_copies, instantiate_us })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kernel_compiles_with_nvrtc() {
        if !crate::test_support::nvrtc_or_skip("launch study kernel compiles with NVRTC") {
            return;
        }
        let cubin = crate::compile_cubin(LAUNCH_STUDY_SOURCE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let k = "tessera_launch_study";
        assert!(cubin.windows(k.len()).any(|w| w == k.as_bytes()), "{k} missing");
    }

    /// Every way on the device, for one kernel a query and for five: `measure` fails
    /// unless the kernels' counter shows every launch ran, graph replays included.
    #[test]
    fn gpu_every_launch_of_every_way_runs() {
        let Some(device) = crate::test_support::gpu_and_nvrtc_or_skip("gpu_every_launch_of_every_way_runs") else {
            return;
        };
        let cache = KernelCache::new(None);
        for kernels in [1, 5] {
            let s = measure(&device, &cache, kernels, 30).unwrap_or_else(|e| panic!("{kernels} kernels: {e}"));
            assert_eq!((s.kernels, s.runs), (kernels, 30));
            for w in [s.events, s.launches, s.graph, s.capture, s.timed_graphs, s.one_copy, s.three_copies] {
                assert!(w.queued_us > 0.0 && w.done_us >= w.queued_us, "{kernels} kernels: {w:?}");
            }
        }
    }
}
