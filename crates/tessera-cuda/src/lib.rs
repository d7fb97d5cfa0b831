//! Tessera's CUDA runtime: finding the GPU, budgeting its memory, moving data to and from
//! it, and compiling kernels with NVRTC, plus the CUDA device library (`cuda/*.cuh`) that
//! generated kernels are written against.
//!
//! Entry point of this crate is [`GpuDevice::get`], which returns `Ok(None)` on a machine
//! without a GPU (a normal state: the engine then runs on the CPU). With a device:
//! [`GpuDevice::upload`] / [`GpuDevice::download`] copy through pinned staging buffers,
//! [`GpuDevice::memory`] is the budgeted allocator, [`GpuDevice::admit`] gives a query a
//! stream of its own and a memory reservation, and [`KernelCache::load`] compiles a
//! kernel's CUDA source to CUBIN and loads it. [`compile_cubin`] needs only libnvrtc, no GPU,
//! so CI can check that generated kernels compile.
//!
//! The device library is embedded as [`DEVICE_HEADERS`]; kernel sources start with
//! `#include "tessera.cuh"` and declare their kernels `extern "C" __global__`. The
//! kernels the runtime launches besides generated ones live in the library too, in
//! headers of their own ([`library`] has their module sources).
//!
//! Every call into the CUDA driver or NVRTC goes through [`probe`] first: cudarc panics
//! when a library is missing, Tessera reports it.
#![warn(missing_docs)]

pub mod codegen;
pub mod compile;
pub mod device;
pub mod graph;
pub mod join_study;
pub mod launch_study;
pub mod library;
pub mod memory;
pub mod probe;
pub mod probe_study;
pub mod stream;
mod study;
pub mod test_support;
pub mod upload;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod gpu_tests;

pub use compile::{DEVICE_HEADERS, KernelCache, compile_cubin, nvrtc_version};
pub use device::{DeviceInfo, GpuDevice};
pub use memory::{DeviceBuffer, MemoryPool};
pub use stream::{GpuStream, QueryStream};
pub use probe::{gpu_available, nvrtc_available};

/// The median of `values` (the upper of the middle two of an even count; 0 for none):
/// what the studies report ([`join_study`], [`launch_study`], [`probe_study`]).
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}

/// The CUDA bindings this crate is built on, for launching kernels
/// (`stream.launch_builder(&function)`) without a second dependency declaration.
pub use cudarc;
