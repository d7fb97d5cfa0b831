//! A kernel launch between two timing events, as one instantiated CUDA graph
//! ([`TimedKernel`]).
//!
//! The executor times every pipeline kernel with two CUDA events. Queued one by one that
//! is three driver calls before and around each launch (event, launch, event): 5 µs of
//! host time a pipeline on an H200 host in the launch study
//! (`benchmarks/results/gpu-2026-11-28c/`), 7–17 µs on slower hosts (2026-11-29 run 1's
//! trace), while the GPU waits. A cached plan runs the same kernel over the same buffers
//! run after run, so its pipeline keeps the three as a graph of three nodes (event record,
//! kernel, event record), instantiated once and launched with one call; a run whose
//! launch shape or parameters differ updates the kernel node in place first
//! (`cuGraphExecKernelNodeSetParams`), no new instantiation.
//!
//! Measured on an H200 host (2026-11-29, `benchmarks/results/gpu-2026-11-29/`): one
//! such graph queues a kernel in 4.3 µs against 7.3 for the three calls (`tessera bench
//! launches`; a graph without the event nodes takes 1.7), and SSB SF 20's wall did not
//! change (5.215 against 5.220 ms pooled over 8 rounds): the executor uses it only under
//! `TESSERA_EXP_KERNEL_GRAPH=1`.
//!
//! The graph records its own two events. A run's report reads them after the query, so a
//! launch while an earlier report still holds them would overwrite that report's time:
//! [`TimedKernel::launch`] then declines, and the caller launches the plain way.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaStream, LaunchConfig};
use tessera_common::{Result, TesseraError};

/// One kernel between two timing events, as an instantiated graph.
pub struct TimedKernel {
    ctx: Arc<CudaContext>,
    /// Keeps the kernel's module loaded while the graph refers to it.
    function: CudaFunction,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    kernel: sys::CUgraphNode,
    /// The launch shape and parameters the kernel node has now.
    config: LaunchConfig,
    params: Vec<u64>,
    before: Arc<CudaEvent>,
    after: Arc<CudaEvent>,
}

// SAFETY: the graph, its instantiation and its node are driver handles, used only through
// `&mut self` (one thread at a time) with the context bound; the driver allows handles
// to be used from any thread of the process.
unsafe impl Send for TimedKernel {}

impl std::fmt::Debug for TimedKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedKernel").field("shape", &shape(self.config)).field("params", &self.params.len()).finish()
    }
}

fn driver(what: &str, e: impl std::fmt::Debug) -> TesseraError {
    TesseraError::Internal(format!("kernel graph: {what}: {e:?}"))
}

/// The kernel node's parameters for `function` launched with `config`, the values
/// `params` points to (`ptrs`: a pointer to each of them, alive during the driver call).
fn node_params(function: &CudaFunction, config: LaunchConfig, ptrs: &mut [*mut c_void]) -> sys::CUDA_KERNEL_NODE_PARAMS {
    sys::CUDA_KERNEL_NODE_PARAMS {
        func: function.cu_function(),
        gridDimX: config.grid_dim.0,
        gridDimY: config.grid_dim.1,
        gridDimZ: config.grid_dim.2,
        blockDimX: config.block_dim.0,
        blockDimY: config.block_dim.1,
        blockDimZ: config.block_dim.2,
        sharedMemBytes: config.shared_mem_bytes,
        kernelParams: ptrs.as_mut_ptr(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    }
}

/// A launch shape as a value to compare (cudarc's has no `PartialEq`).
fn shape(c: LaunchConfig) -> ((u32, u32, u32), (u32, u32, u32), u32) {
    (c.grid_dim, c.block_dim, c.shared_mem_bytes)
}

/// Pointers to each of `params`, as a kernel's parameter list takes them.
fn pointers(params: &[u64]) -> Vec<*mut c_void> {
    params.iter().map(|p| p as *const u64 as *mut c_void).collect()
}

impl TimedKernel {
    /// `function` launched with `config` and `params` (each one 64-bit value, as the
    /// generated kernels take them) between two new timing events, instantiated.
    pub fn new(ctx: &Arc<CudaContext>, function: &CudaFunction, config: LaunchConfig, params: &[u64]) -> Result<TimedKernel> {
        ctx.bind_to_thread().map_err(|e| driver("binding the context", e))?;
        let new_event = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map(Arc::new).map_err(|e| driver("creating an event", e));
        let (before, after) = (new_event()?, new_event()?);
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: creates an empty graph into `graph`.
        unsafe { sys::cuGraphCreate(&mut graph, 0) }.result().map_err(|e| driver("creating", e))?;
        // From here on `made` owns the graph and frees it on an error.
        let mut made = TimedKernel {
            ctx: Arc::clone(ctx),
            function: function.clone(),
            graph,
            exec: std::ptr::null_mut(),
            kernel: std::ptr::null_mut(),
            config,
            params: params.to_vec(),
            before,
            after,
        };
        let mut start: sys::CUgraphNode = std::ptr::null_mut();
        let mut end: sys::CUgraphNode = std::ptr::null_mut();
        let mut ptrs = pointers(&made.params);
        let node = node_params(function, config, &mut ptrs);
        // SAFETY: the graph is alive; each node depends on the one before it (pointers to
        // one live handle each); the kernel's parameters are copied into its node during
        // the call, from `ptrs`, which points into `made.params`.
        unsafe {
            sys::cuGraphAddEventRecordNode(&mut start, made.graph, std::ptr::null(), 0, made.before.cu_event()).result().map_err(|e| driver("adding the start event", e))?;
            sys::cuGraphAddKernelNode_v2(&mut made.kernel, made.graph, &start, 1, &node).result().map_err(|e| driver("adding the kernel", e))?;
            sys::cuGraphAddEventRecordNode(&mut end, made.graph, &made.kernel, 1, made.after.cu_event()).result().map_err(|e| driver("adding the end event", e))?;
            sys::cuGraphInstantiateWithFlags(&mut made.exec, made.graph, 0).result().map_err(|e| driver("instantiating", e))?;
        }
        Ok(made)
    }

    /// Queues the graph on `stream`, its kernel launched with `config` and `params`
    /// (its node updated first when they differ from the last launch's), and returns the
    /// events recorded before and after the kernel. None, with nothing queued, while an
    /// earlier launch's events are still held (by a report not read yet).
    pub fn launch(&mut self, stream: &CudaStream, config: LaunchConfig, params: &[u64]) -> Result<Option<(Arc<CudaEvent>, Arc<CudaEvent>)>> {
        if Arc::strong_count(&self.before) > 1 || Arc::strong_count(&self.after) > 1 {
            return Ok(None);
        }
        self.ctx.bind_to_thread().map_err(|e| driver("binding the context", e))?;
        if shape(self.config) != shape(config) || self.params != params {
            let mut ptrs = pointers(params);
            let node = node_params(&self.function, config, &mut ptrs);
            // SAFETY: the instantiation and its kernel node are alive; the parameters are
            // copied from `ptrs` (pointing into `params`) during the call. A launch
            // queued earlier keeps the parameters it was queued with.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.exec, self.kernel, &node) }.result().map_err(|e| driver("updating the kernel's parameters", e))?;
            self.config = config;
            self.params = params.to_vec();
        }
        // SAFETY: the instantiation is alive and `stream` belongs to its context; the
        // kernel reads only what the caller keeps alive until the stream is done.
        unsafe { sys::cuGraphLaunch(self.exec, stream.cu_stream()) }.result().map_err(|e| driver("launching", e))?;
        Ok(Some((Arc::clone(&self.before), Arc::clone(&self.after))))
    }
}

impl Drop for TimedKernel {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_err() {
            return;
        }
        // SAFETY: the handles were made by `new` and are destroyed once; a launch still
        // running finishes first (the driver defers the release).
        unsafe {
            if !self.exec.is_null() {
                let _ = sys::cuGraphExecDestroy(self.exec);
            }
            if !self.graph.is_null() {
                let _ = sys::cuGraphDestroy(self.graph);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::compile::KernelCache;
    use crate::library::LAUNCH_STUDY_SOURCE;
    use cudarc::driver::DevicePtr;

    /// The graph runs its kernel with the parameters of each launch (the launch study's
    /// kernel adds them to a counter), updated in place when they change, and its events
    /// time it; a launch while a report holds the events declines.
    #[test]
    fn gpu_timed_kernel_runs_each_launch_with_its_parameters() {
        let Some(device) = crate::test_support::gpu_and_nvrtc_or_skip("gpu_timed_kernel_runs_each_launch_with_its_parameters") else {
            return;
        };
        let cache = KernelCache::new(None);
        let module = cache.load(&device, LAUNCH_STUDY_SOURCE).unwrap();
        let function = module.load_function("tessera_launch_study").unwrap();
        let ctx = device.context();
        let stream = ctx.new_stream().unwrap();
        let counter = stream.alloc_zeros::<u64>(1).unwrap();
        let at = counter.device_ptr(&stream).0;
        let params = |k: u64| -> Vec<u64> { (1..=crate::launch_study::PARAMS as u64).map(|p| p * k).chain([at]).collect() };
        let sum = |k: u64| -> u64 { (1..=crate::launch_study::PARAMS as u64).map(|p| p * k).sum() };
        let config = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (128, 1, 1), shared_mem_bytes: 0 };
        let mut g = TimedKernel::new(ctx, &function, config, &params(1)).unwrap();
        let (b, a) = g.launch(&stream, config, &params(1)).unwrap().unwrap();
        // Held: the next launch declines and queues nothing.
        assert!(g.launch(&stream, config, &params(5)).unwrap().is_none());
        stream.synchronize().unwrap();
        let ms = b.elapsed_ms(&a).unwrap();
        assert!(ms >= 0.0, "{ms}");
        drop((b, a));
        let wider = LaunchConfig { grid_dim: (8, 1, 1), ..config };
        for (c, k) in [(config, 1), (config, 3), (wider, 3), (config, 2)] {
            drop(g.launch(&stream, c, &params(k)).unwrap().unwrap());
        }
        let got = stream.clone_dtoh(&counter).unwrap();
        assert_eq!(got[0], sum(1) * 2 + sum(3) * 2 + sum(2));
    }
}
