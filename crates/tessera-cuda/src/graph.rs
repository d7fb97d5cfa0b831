//! Kernel launches between two timing events, as one instantiated CUDA graph
//! ([`TimedKernel`]).
//!
//! The executor times every pipeline kernel with two CUDA events. Queued one by one that
//! is three driver calls before and around each launch (event, launch, event): 5 µs of
//! host time a pipeline on an H200 host in the launch study
//! (`benchmarks/results/gpu-2026-11-28c/`), 7–17 µs on slower hosts (2026-11-29 run 1's
//! trace), while the GPU waits. A cached plan runs the same kernel over the same buffers
//! run after run, so its pipeline keeps them as a graph (event record, kernel, the
//! kernels that follow it, such as the fold of an aggregation's group copies, event
//! record), instantiated once and launched with one call; a run whose launch shapes or
//! arguments differ updates those kernel nodes in place first
//! (`cuGraphExecKernelNodeSetParams`), no new instantiation. With the GPU idle when the
//! plain way's start event is recorded, its window also holds the host's time to queue
//! the kernels after it (EXPLAIN ANALYZE's phases put SSB q3.1's start event 22–31 µs
//! before its probe and fold were queued, 2026-11-30c run 6); the graph's events hold
//! only the GPU's. The bench's q3.1 kernels took as long either way (2026-11-30d run 2).
//!
//! Measured on an H200 host (2026-11-29, `benchmarks/results/gpu-2026-11-29/`): one
//! such graph queues a kernel in 4.3 µs against 7.3 for the three calls (`tessera bench
//! launches`; a graph without the event nodes takes 1.7), and SSB SF 20's wall did not
//! change (5.215 against 5.220 ms pooled over 8 rounds); with the folds in the graph,
//! 4.808 against 4.704 ms (2026-11-30d run 2). The executor uses it only under
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

/// One kernel launch of a graph: the function, its launch shape and its arguments, each
/// as the 64-bit words holding its bytes (a 64-bit value one word, a 32-bit one the low
/// half of one, a struct passed by value its words in order).
#[derive(Clone)]
pub struct KernelNode {
    /// The kernel.
    pub function: CudaFunction,
    /// Its launch shape.
    pub config: LaunchConfig,
    /// Its arguments in order, each as the words of its value.
    pub args: Vec<Vec<u64>>,
}

impl KernelNode {
    /// A launch of `function` whose every argument is one 64-bit value (as the generated
    /// pipelines take theirs).
    pub fn of_words(function: &CudaFunction, config: LaunchConfig, params: &[u64]) -> KernelNode {
        KernelNode { function: function.clone(), config, args: params.iter().map(|&p| vec![p]).collect() }
    }

    /// Whether `other` launches the same function with the same shape and arguments.
    fn same_launch(&self, other: &KernelNode) -> bool {
        self.function.cu_function() == other.function.cu_function() && shape(self.config) == shape(other.config) && self.args == other.args
    }
}

impl std::fmt::Debug for KernelNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelNode").field("shape", &shape(self.config)).field("args", &self.args.len()).finish()
    }
}

/// Queues `k` on `stream` alone, the plain way (one `cuLaunchKernel`).
///
/// # Safety
/// `k`'s arguments must be those its function takes, in order, each the words of a
/// value of the argument's type; every address among them must stay valid until the
/// kernel is done.
pub unsafe fn launch_node(stream: &CudaStream, k: &KernelNode) -> Result<()> {
    stream.context().bind_to_thread().map_err(|e| driver("binding the context", e))?;
    let mut ptrs = pointers(k);
    let c = k.config;
    // SAFETY: the caller's; the arguments are copied through `ptrs` during the call.
    unsafe {
        sys::cuLaunchKernel(k.function.cu_function(), c.grid_dim.0, c.grid_dim.1, c.grid_dim.2, c.block_dim.0, c.block_dim.1, c.block_dim.2, c.shared_mem_bytes, stream.cu_stream(), ptrs.as_mut_ptr(), std::ptr::null_mut())
    }
    .result()
    .map_err(|e| driver("launching a kernel", e))
}

/// Kernels one after another between two timing events, as an instantiated graph.
pub struct TimedKernel {
    ctx: Arc<CudaContext>,
    /// The graph's kernel nodes, in order, with the launches they hold now (which keep
    /// the kernels' functions, and so their modules, while the graph refers to them).
    nodes: Vec<(sys::CUgraphNode, KernelNode)>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    before: Arc<CudaEvent>,
    after: Arc<CudaEvent>,
}

// SAFETY: the graph, its instantiation and its nodes are driver handles, used only through
// `&mut self` (one thread at a time) with the context bound; the driver allows handles
// to be used from any thread of the process.
unsafe impl Send for TimedKernel {}

impl std::fmt::Debug for TimedKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedKernel").field("kernels", &self.nodes.iter().map(|(_, k)| k).collect::<Vec<_>>()).finish()
    }
}

fn driver(what: &str, e: impl std::fmt::Debug) -> TesseraError {
    TesseraError::Internal(format!("kernel graph: {what}: {e:?}"))
}

/// The kernel node's parameters for `k`, its arguments read through `ptrs` (a pointer to
/// each argument's words, alive during the driver call).
fn node_params(k: &KernelNode, ptrs: &mut [*mut c_void]) -> sys::CUDA_KERNEL_NODE_PARAMS {
    sys::CUDA_KERNEL_NODE_PARAMS {
        func: k.function.cu_function(),
        gridDimX: k.config.grid_dim.0,
        gridDimY: k.config.grid_dim.1,
        gridDimZ: k.config.grid_dim.2,
        blockDimX: k.config.block_dim.0,
        blockDimY: k.config.block_dim.1,
        blockDimZ: k.config.block_dim.2,
        sharedMemBytes: k.config.shared_mem_bytes,
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

/// Pointers to each of `k`'s arguments, as a kernel's parameter list takes them.
fn pointers(k: &KernelNode) -> Vec<*mut c_void> {
    k.args.iter().map(|a| a.as_ptr() as *mut c_void).collect()
}

impl TimedKernel {
    /// `kernels` launched one after another between two new timing events, instantiated.
    pub fn new(ctx: &Arc<CudaContext>, kernels: &[KernelNode]) -> Result<TimedKernel> {
        if kernels.is_empty() {
            return Err(driver("making", "a graph of no kernels"));
        }
        ctx.bind_to_thread().map_err(|e| driver("binding the context", e))?;
        let new_event = || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map(Arc::new).map_err(|e| driver("creating an event", e));
        let (before, after) = (new_event()?, new_event()?);
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: creates an empty graph into `graph`.
        unsafe { sys::cuGraphCreate(&mut graph, 0) }.result().map_err(|e| driver("creating", e))?;
        // From here on `made` owns the graph and frees it on an error.
        let mut made = TimedKernel { ctx: Arc::clone(ctx), nodes: Vec::with_capacity(kernels.len()), graph, exec: std::ptr::null_mut(), before, after };
        let mut last: sys::CUgraphNode = std::ptr::null_mut();
        // SAFETY: the graph is alive; each node depends on the one before it (a pointer to
        // one live handle); a kernel's arguments are copied into its node during the
        // call, through `ptrs`, which point into `k.args`.
        unsafe {
            sys::cuGraphAddEventRecordNode(&mut last, made.graph, std::ptr::null(), 0, made.before.cu_event()).result().map_err(|e| driver("adding the start event", e))?;
            for k in kernels {
                let mut ptrs = pointers(k);
                let params = node_params(k, &mut ptrs);
                let mut node: sys::CUgraphNode = std::ptr::null_mut();
                sys::cuGraphAddKernelNode_v2(&mut node, made.graph, &last, 1, &params).result().map_err(|e| driver("adding a kernel", e))?;
                made.nodes.push((node, k.clone()));
                last = node;
            }
            let mut end: sys::CUgraphNode = std::ptr::null_mut();
            sys::cuGraphAddEventRecordNode(&mut end, made.graph, &last, 1, made.after.cu_event()).result().map_err(|e| driver("adding the end event", e))?;
            sys::cuGraphInstantiateWithFlags(&mut made.exec, made.graph, 0).result().map_err(|e| driver("instantiating", e))?;
        }
        Ok(made)
    }

    /// Queues the graph on `stream`, its kernels launched as `kernels` say (each node
    /// updated first where its launch differs from the last one's), and returns the
    /// events recorded before and after them. None, with nothing queued, while an earlier
    /// launch's events are still held (by a report not read yet). An error where
    /// `kernels` are not the graph's functions in its order.
    pub fn launch(&mut self, stream: &CudaStream, kernels: &[KernelNode]) -> Result<Option<(Arc<CudaEvent>, Arc<CudaEvent>)>> {
        if Arc::strong_count(&self.before) > 1 || Arc::strong_count(&self.after) > 1 {
            return Ok(None);
        }
        if kernels.len() != self.nodes.len() || kernels.iter().zip(&self.nodes).any(|(k, (_, n))| k.function.cu_function() != n.function.cu_function()) {
            return Err(driver("launching", "kernels other than the graph's"));
        }
        self.ctx.bind_to_thread().map_err(|e| driver("binding the context", e))?;
        for (k, (node, now)) in kernels.iter().zip(self.nodes.iter_mut()) {
            if k.same_launch(now) {
                continue;
            }
            let mut ptrs = pointers(k);
            let params = node_params(k, &mut ptrs);
            // SAFETY: the instantiation and its kernel node are alive; the arguments are
            // copied through `ptrs` (pointing into `k.args`) during the call. A launch
            // queued earlier keeps the arguments it was queued with.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(self.exec, *node, &params) }.result().map_err(|e| driver("updating a kernel's parameters", e))?;
            *now = k.clone();
        }
        // SAFETY: the instantiation is alive and `stream` belongs to its context; the
        // kernels read only what the caller keeps alive until the stream is done.
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

    /// The graph runs its kernels with the arguments of each launch (the launch study's
    /// kernel adds them to a counter; the graph holds it twice, the second launch with
    /// other arguments), updated in place when they change, and its events time them; a
    /// launch while a report holds the events declines, one of other kernels fails.
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
        let pair = |c: LaunchConfig, k: u64| [KernelNode::of_words(&function, c, &params(k)), KernelNode::of_words(&function, config, &params(10 * k))];
        let mut g = TimedKernel::new(ctx, &pair(config, 1)).unwrap();
        let (b, a) = g.launch(&stream, &pair(config, 1)).unwrap().unwrap();
        // Held: the next launch declines and queues nothing.
        assert!(g.launch(&stream, &pair(config, 5)).unwrap().is_none());
        stream.synchronize().unwrap();
        let ms = b.elapsed_ms(&a).unwrap();
        assert!(ms >= 0.0, "{ms}");
        drop((b, a));
        assert!(g.launch(&stream, &pair(config, 1)[..1]).is_err());
        let wider = LaunchConfig { grid_dim: (8, 1, 1), ..config };
        for (c, k) in [(config, 1), (config, 3), (wider, 3), (config, 2)] {
            drop(g.launch(&stream, &pair(c, k)).unwrap().unwrap());
        }
        let got = stream.clone_dtoh(&counter).unwrap();
        // The first kernel of each pair adds sum(k), the second sum(10 k).
        assert_eq!(got[0], 11 * (sum(1) * 2 + sum(3) * 2 + sum(2)));
    }
}
