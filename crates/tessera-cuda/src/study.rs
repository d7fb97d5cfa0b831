//! What the device studies share ([`crate::join_study`], [`crate::probe_study`]): a
//! launch with its arguments, timing events, the driver's errors as Tessera's, and the
//! SplitMix64 their generated data is drawn with (the same as their kernels').

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaFunction, CudaStream, LaunchConfig};
use tessera_common::{Result, TesseraError};

/// Launches `f` with `blocks` × `threads` and `shared` bytes of dynamic shared memory, its
/// arguments pushed by `args`.
pub(crate) fn launch<'a>(stream: &'a Arc<CudaStream>, f: &'a CudaFunction, blocks: u32, threads: u32, shared: u32, args: impl FnOnce(&mut cudarc::driver::LaunchArgs<'a>)) -> Result<()> {
    let mut l = stream.launch_builder(f);
    args(&mut l);
    let cfg = LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: shared };
    // SAFETY: every study kernel (join_study.cuh, probe_study.cuh) bounds its reads and
    // writes by the row and word counts passed beside its buffers, which the studies
    // allocate with those counts.
    unsafe { l.launch(cfg) }.map(|_| ()).map_err(driver)
}

/// A timing event recorded on `stream`.
pub(crate) fn event(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).map_err(driver)
}

/// Milliseconds between two recorded events.
pub(crate) fn ms(from: &CudaEvent, to: &CudaEvent) -> Result<f64> {
    from.elapsed_ms(to).map(f64::from).map_err(driver)
}

/// A driver error as an execution error.
pub(crate) fn driver(e: cudarc::driver::DriverError) -> TesseraError {
    TesseraError::Execution(format!("CUDA: {e:?}"))
}

/// SplitMix64 (`study_splitmix` in study.cuh, which the study kernels draw their data with).
pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
