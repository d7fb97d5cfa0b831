//! Safe detection of the CUDA driver library, NVRTC and a usable GPU.
//!
//! cudarc loads `libcuda` and `libnvrtc` lazily and *panics* when they are missing, so
//! nothing in this crate touches cudarc before these checks pass. The checks run once per
//! process (cached in `OnceLock`s). As a second line of defence, first calls into cudarc
//! run under [`catch_cuda_panic`], which turns a panic (a missing symbol in an old library,
//! say) into an error.
//!
//! `TESSERA_DISABLE_GPU=1` makes [`gpu_available`] report no GPU even where there is one,
//! to run the CPU engine on a GPU machine.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use tessera_common::{Result, TesseraError};

use crate::device::GpuDevice;

/// Environment variable that hides the GPU from Tessera when set to `1`.
pub const DISABLE_GPU_ENV: &str = "TESSERA_DISABLE_GPU";

/// Whether the CUDA driver library (`libcuda.so`) can be loaded. Says nothing about
/// whether a device is present.
pub fn driver_library_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: only tries to dlopen the candidate library names, calls nothing in them.
        catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false)
    })
}

/// Whether NVRTC (`libnvrtc.so`) can be loaded and answers a version query. No GPU is
/// needed to compile kernels, only this library.
pub fn nvrtc_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: only tries to dlopen the candidate library names.
        let present =
            catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false);
        present && crate::compile::query_nvrtc_version().is_ok()
    })
}

/// Whether a GPU is usable: the driver library loads, it reports at least one device, and
/// a context can be created on device 0. The first call creates that context (about 350 ms
/// on an H200); the answer is cached with the device.
pub fn gpu_available() -> bool {
    matches!(GpuDevice::get(), Ok(Some(_)))
}

/// Whether `TESSERA_DISABLE_GPU=1` is set.
pub fn gpu_disabled_by_env() -> bool {
    std::env::var(DISABLE_GPU_ENV).is_ok_and(|v| v == "1")
}

/// Runs `f`, turning a panic inside cudarc into an execution error naming `what`.
pub fn catch_cuda_panic<R>(what: &str, f: impl FnOnce() -> R) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        TesseraError::Execution(format!("CUDA library failure while {what}: {message}"))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn probes_never_panic() {
        // On a machine without CUDA these are false; on the device they are true. Either
        // way they must return rather than panic, and repeated calls agree.
        let driver = driver_library_present();
        assert_eq!(driver, driver_library_present());
        let nvrtc = nvrtc_available();
        assert_eq!(nvrtc, nvrtc_available());
        if !driver {
            assert!(!gpu_available());
        }
    }

    #[test]
    fn panics_become_errors() {
        let r: Result<()> = catch_cuda_panic("testing", || panic!("libfoo missing"));
        let e = r.unwrap_err().to_string();
        assert!(e.contains("while testing: libfoo missing"), "{e}");
    }
}
