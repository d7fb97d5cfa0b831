//! The process's GPU: its CUDA context, its own stream, memory budget, staging buffers,
//! the admission of queries to streams of their own ([`crate::stream`]) and a description
//! of the hardware.
//!
//! One [`GpuDevice`] per process (device 0), created on first use by [`GpuDevice::get`]
//! and shared through an `Arc`. Creating the context costs about 350 ms on an H200, so it
//! happens once. A machine without a GPU gets `Ok(None)`, which is not an error.

use std::fmt;
use std::sync::{Arc, OnceLock};

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream, DriverError};
use tessera_common::{Result, TesseraError};

use crate::compile::query_nvrtc_version;
use crate::memory::{MemoryPool, format_bytes};
use crate::probe::{self, catch_cuda_panic};
use crate::stream::{Admission, GpuStream, MAX_GPU_QUERIES};

/// Share of the free device memory the default [`MemoryPool`] may use: the remaining 10%
/// is left for the CUDA context, loaded modules, the allocator's own fragmentation and
/// other processes. Change it at run time with [`MemoryPool::set_limit`].
pub const DEFAULT_MEMORY_FRACTION: f64 = 0.9;

/// The GPU Tessera runs on, with its context, default stream and memory budget.
pub struct GpuDevice {
    /// The CUDA context (the device's primary context).
    ctx: Arc<CudaContext>,
    /// The device's own stream, with the budgeted allocator (whose budget every query
    /// stream shares) and pinned staging buffers: work outside queries goes here.
    default: GpuStream,
    /// Static facts about the hardware, gathered once.
    facts: DeviceFacts,
    /// Queries running on streams of their own, their memory reservations, idle streams.
    pub(crate) admission: Admission<GpuStream>,
}

/// What does not change while the process runs.
#[derive(Debug, Clone)]
struct DeviceFacts {
    name: String,
    total_memory: usize,
    sm_count: u32,
    l2_bytes: u64,
    compute_capability: (i32, i32),
    driver_version: (i32, i32),
}

/// A description of the GPU, printed by the shell's `.gpu` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Device memory in bytes.
    pub total_memory: usize,
    /// Free device memory in bytes when the info was taken.
    pub free_memory: usize,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// L2 cache size in bytes.
    pub l2_bytes: u64,
    /// Compute capability (major, minor), e.g. (9, 0) for sm_90.
    pub compute_capability: (i32, i32),
    /// NVRTC version (major, minor), or None when libnvrtc cannot be loaded.
    pub nvrtc_version: Option<(i32, i32)>,
    /// CUDA version the driver supports (major, minor), e.g. (13, 0) for driver 580.
    pub driver_version: (i32, i32),
}

impl DeviceInfo {
    /// The architecture name NVRTC takes, e.g. "sm_90".
    pub fn arch(&self) -> String {
        arch_name(self.compute_capability)
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (major, minor) = self.compute_capability;
        writeln!(f, "name: {}", self.name)?;
        writeln!(f, "compute capability: {major}.{minor} ({})", self.arch())?;
        writeln!(f, "SMs: {}", self.sm_count)?;
        writeln!(f, "L2 cache: {}", format_bytes(self.l2_bytes as usize))?;
        writeln!(f, "total memory: {}", format_bytes(self.total_memory))?;
        writeln!(f, "free memory: {}", format_bytes(self.free_memory))?;
        let (dmaj, dmin) = self.driver_version;
        writeln!(f, "driver: CUDA {dmaj}.{dmin}")?;
        match self.nvrtc_version {
            Some((nmaj, nmin)) => write!(f, "NVRTC: {nmaj}.{nmin}"),
            None => write!(f, "NVRTC: not found"),
        }
    }
}

/// "sm_XY" for compute capability (X, Y).
pub(crate) fn arch_name((major, minor): (i32, i32)) -> String {
    format!("sm_{major}{minor}")
}

/// Turns a driver error into a Tessera error: out-of-memory is a resource limit, anything
/// else an execution error carrying the driver's name and message.
pub(crate) fn driver_err(what: &str, e: DriverError) -> TesseraError {
    use cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY;
    if e.0 == CUDA_ERROR_OUT_OF_MEMORY {
        TesseraError::ResourcesExhausted(format!("GPU out of memory while {what}"))
    } else {
        TesseraError::Execution(format!("CUDA error while {what}: {e}"))
    }
}

impl GpuDevice {
    /// The process's GPU, created on first call: `Ok(None)` when there is none (no driver,
    /// no device, or `TESSERA_DISABLE_GPU=1`); an error when a GPU is present but unusable
    /// (the context cannot be created, for example). The outcome is cached.
    pub fn get() -> Result<Option<Arc<GpuDevice>>> {
        static DEVICE: OnceLock<std::result::Result<Option<Arc<GpuDevice>>, String>> =
            OnceLock::new();
        match DEVICE.get_or_init(|| Self::open(0).map_err(|e| e.to_string())) {
            Ok(device) => Ok(device.clone()),
            Err(message) => Err(TesseraError::Execution(message.clone())),
        }
    }

    fn open(ordinal: usize) -> Result<Option<Arc<GpuDevice>>> {
        if probe::gpu_disabled_by_env() || !probe::driver_library_present() {
            return Ok(None);
        }
        let count = catch_cuda_panic("counting GPUs", || {
            cudarc::driver::result::init()?;
            cudarc::driver::result::device::get_count()
        })?;
        let count = match count {
            Ok(n) => n,
            // No device, or a driver without a kernel module behind it: no GPU, not a failure.
            Err(e) if is_no_device(&e) => return Ok(None),
            Err(e) => return Err(driver_err("initialising the CUDA driver", e)),
        };
        if count <= ordinal as i32 {
            return Ok(None);
        }
        let ctx = catch_cuda_panic("creating the CUDA context", || CudaContext::new(ordinal))?
            .map_err(|e| driver_err("creating the CUDA context", e))?;
        // cudarc's per-buffer events (created with every allocation, recorded at every use
        // of a buffer once a second stream exists) cost host time at every launch; Tessera
        // orders its streams itself: off, before anything is allocated.
        // SAFETY: a query's buffers are written, read and freed on the query's own stream
        // (`QueryStream`); the only buffers several streams read are cached columns, which
        // readers wait for with an event recorded after the upload, and which are freed
        // only once no query holds them — after each holder synchronized its stream.
        unsafe { ctx.disable_event_tracking() };
        // Best effort: a device without memory pools allocates synchronously anyway.
        let _ = keep_pool_memory(&ctx);
        let facts = Self::read_facts(&ctx).map_err(|e| driver_err("querying the GPU", e))?;
        let stream = ctx
            .new_stream()
            .map_err(|e| driver_err("creating a CUDA stream", e))?;
        let (free, _total) = ctx
            .mem_get_info()
            .map_err(|e| driver_err("querying GPU memory", e))?;
        let limit = (free as f64 * DEFAULT_MEMORY_FRACTION) as usize;
        let memory = MemoryPool::new(stream.clone(), limit);
        Ok(Some(Arc::new(GpuDevice {
            ctx,
            default: GpuStream::on(stream, memory, crate::upload::STAGING_CHUNK_BYTES),
            facts,
            admission: Admission::new(MAX_GPU_QUERIES),
        })))
    }

    fn read_facts(ctx: &Arc<CudaContext>) -> std::result::Result<DeviceFacts, DriverError> {
        let mut version = 0;
        // SAFETY: writes one int; the driver library is loaded (init succeeded).
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }.result()?;
        Ok(DeviceFacts {
            name: ctx.name()?,
            total_memory: ctx.total_mem()?,
            sm_count: ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
                as u32,
            l2_bytes: ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
            compute_capability: ctx.compute_capability()?,
            driver_version: (version / 1000, (version % 1000) / 10),
        })
    }

    /// The CUDA context, for loading modules and creating further streams.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The device's own stream, where work outside queries (tests, the bandwidth probe)
    /// is ordered; queries run on streams of their own ([`GpuDevice::admit`]).
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.default.stream()
    }

    /// The device's own stream with its allocator and staging buffers.
    pub fn default_stream(&self) -> &GpuStream {
        &self.default
    }

    /// The budgeted allocator of this device, on its own stream (every stream's allocator
    /// shares its budget).
    pub fn memory(&self) -> &MemoryPool {
        self.default.memory()
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.facts.name
    }

    /// The architecture NVRTC compiles for, e.g. "sm_90".
    pub fn arch(&self) -> String {
        arch_name(self.facts.compute_capability)
    }

    /// Compute capability (major, minor).
    pub fn compute_capability(&self) -> (i32, i32) {
        self.facts.compute_capability
    }

    /// Streaming multiprocessors, to size grids.
    pub fn sm_count(&self) -> u32 {
        self.facts.sm_count
    }

    /// A description of the device, with its free memory as of now.
    pub fn info(&self) -> DeviceInfo {
        let free_memory = self.ctx.mem_get_info().map(|(free, _)| free).unwrap_or(0);
        DeviceInfo {
            name: self.facts.name.clone(),
            total_memory: self.facts.total_memory,
            free_memory,
            sm_count: self.facts.sm_count,
            l2_bytes: self.facts.l2_bytes,
            compute_capability: self.facts.compute_capability,
            nvrtc_version: if probe::nvrtc_available() {
                query_nvrtc_version().ok()
            } else {
                None
            },
            driver_version: self.facts.driver_version,
        }
    }

    /// Waits until all work queued on the device's own stream has finished, and reports
    /// any error the driver recorded meanwhile (including errors from asynchronous frees).
    pub fn synchronize(&self) -> Result<()> {
        self.default.synchronize()
    }
}

impl fmt::Debug for GpuDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuDevice")
            .field("name", &self.facts.name)
            .field("arch", &self.arch())
            .field("memory", self.memory())
            .finish()
    }
}

/// Keeps freed memory in the device's default pool (the one stream-ordered allocations
/// draw from) instead of returning it to the driver at every synchronization, which is the
/// pool's default: otherwise each query's first allocations after a wait map fresh memory
/// (tens of µs each). The budget ([`MemoryPool`]) still bounds what Tessera holds.
fn keep_pool_memory(ctx: &Arc<CudaContext>) -> std::result::Result<(), DriverError> {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: writes one pool handle for a valid device of a live context.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) }.result()?;
    let mut threshold = u64::MAX;
    // SAFETY: the release threshold attribute takes a pointer to a u64.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut threshold as *mut u64 as *mut std::ffi::c_void,
        )
    }
    .result()
}

/// Driver errors that mean "there is no usable GPU here" rather than "something broke".
fn is_no_device(e: &DriverError) -> bool {
    use cudarc::driver::sys::cudaError_enum as E;
    matches!(
        e.0,
        E::CUDA_ERROR_NO_DEVICE
            | E::CUDA_ERROR_NOT_INITIALIZED
            | E::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
            | E::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn info_prints_one_line_per_field() {
        let info = DeviceInfo {
            name: "NVIDIA H200".into(),
            total_memory: 150_000_000_000,
            free_memory: 149_000_000_000,
            sm_count: 132,
            l2_bytes: 60 << 20,
            compute_capability: (9, 0),
            nvrtc_version: Some((13, 0)),
            driver_version: (13, 0),
        };
        let text = info.to_string();
        assert_eq!(text.lines().count(), 8, "{text}");
        assert!(text.contains("name: NVIDIA H200"));
        assert!(text.contains("compute capability: 9.0 (sm_90)"));
        assert!(text.contains("SMs: 132"));
        assert!(text.contains("L2 cache: 60.0 MiB"));
        assert!(text.contains("driver: CUDA 13.0"));
        assert!(text.contains("NVRTC: 13.0"));
        assert_eq!(info.arch(), "sm_90");
    }

    #[test]
    fn no_gpu_is_not_an_error() {
        // Without a GPU (this machine, CI) get() must answer Ok(None), never panic.
        match GpuDevice::get() {
            Ok(Some(device)) => println!("GPU present:\n{}", device.info()),
            Ok(None) => println!("no GPU"),
            Err(e) => panic!("GPU present but unusable: {e}"),
        }
    }
}
