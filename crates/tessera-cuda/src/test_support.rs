//! Skip-or-fail logic shared by every test that needs a GPU or NVRTC, here and in the
//! crates that generate kernels.
//!
//! A test that needs a GPU calls [`gpu_or_skip`]: without a GPU it prints
//! "skipped: no GPU" and returns None (the test returns early and passes), unless
//! `TESSERA_REQUIRE_GPU=1` is set, in which case it panics, so a device run proves that
//! the GPU path really ran. [`nvrtc_or_skip`] does the same for libnvrtc with
//! `TESSERA_REQUIRE_NVRTC=1`.

use std::sync::Arc;

use crate::device::GpuDevice;
use crate::probe;

/// Set to `1` to make tests fail, not skip, when there is no GPU.
pub const REQUIRE_GPU_ENV: &str = "TESSERA_REQUIRE_GPU";
/// Set to `1` to make tests fail, not skip, when libnvrtc is missing.
pub const REQUIRE_NVRTC_ENV: &str = "TESSERA_REQUIRE_NVRTC";

/// Whether the environment variable is set to `1`.
fn required(env: &str) -> bool {
    std::env::var(env).is_ok_and(|v| v == "1")
}

/// Prints why `test` is skipped, or panics when `env` demands the resource.
fn skip(test: &str, reason: &str, env: &str) {
    if required(env) {
        panic!("{test}: {reason}, but {env}=1 requires it");
    }
    println!("{test}: skipped: {reason}");
}

/// The GPU, or None after printing "skipped: no GPU" (panics if `TESSERA_REQUIRE_GPU=1`).
pub fn gpu_or_skip(test: &str) -> Option<Arc<GpuDevice>> {
    match GpuDevice::get() {
        Ok(Some(device)) => Some(device),
        Ok(None) => {
            skip(test, "no GPU", REQUIRE_GPU_ENV);
            None
        }
        Err(e) => {
            skip(
                test,
                &format!("no GPU (present but unusable: {e})"),
                REQUIRE_GPU_ENV,
            );
            None
        }
    }
}

/// True when NVRTC can be used; otherwise prints "skipped: libnvrtc not found" and
/// returns false (panics if `TESSERA_REQUIRE_NVRTC=1`).
pub fn nvrtc_or_skip(test: &str) -> bool {
    if probe::nvrtc_available() {
        return true;
    }
    skip(test, "libnvrtc not found", REQUIRE_NVRTC_ENV);
    false
}

/// Both a GPU and NVRTC (a test that compiles and runs a kernel), or None after skipping.
pub fn gpu_and_nvrtc_or_skip(test: &str) -> Option<Arc<GpuDevice>> {
    let device = gpu_or_skip(test)?;
    if !probe::nvrtc_available() {
        // With a GPU present, missing NVRTC fails the GPU requirement too.
        skip(
            test,
            "libnvrtc not found",
            if required(REQUIRE_GPU_ENV) {
                REQUIRE_GPU_ENV
            } else {
                REQUIRE_NVRTC_ENV
            },
        );
        return None;
    }
    Some(device)
}
