//! Kernel compilation with NVRTC, and a cache of compiled kernels in memory and on disk.
//!
//! Kernels are compiled to CUBIN for the exact architecture of the device (e.g. `sm_90`),
//! not to PTX: PTX from an NVRTC newer than the driver does not load
//! (`CUDA_ERROR_UNSUPPORTED_PTX_VERSION`), while CUBIN does, and loads in 0.07 ms instead of
//! ~100 ms of first-time PTX JIT. NVRTC ships no headers, so the device library
//! (`cuda/*.cuh`) is embedded in this crate ([`DEVICE_HEADERS`]) and handed to NVRTC as
//! named headers: kernel sources `#include "tessera.cuh"` and nothing else, except the
//! runtime's own kernels, which include `records.cuh` or `bandwidth.cuh`
//! ([`crate::library`]).
//!
//! Compiling a small kernel takes 11–19 ms (H200 host), loading a module about 0.1 ms, so
//! [`KernelCache`] keys compiled modules by a hash of everything that determines the CUBIN
//! (source, headers, architecture, NVRTC version, options) and keeps them in memory and,
//! optionally, as `<dir>/<hash>.cubin` files across runs.
//!
//! [`compile_cubin`] needs only libnvrtc, no GPU: CI uses it to check that generated
//! kernels compile. Set `TESSERA_DUMP_KERNELS=<dir>` to have every compiled source written
//! to `<dir>/<hash>.cu` for reading or compiling by hand.

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaModule;
use cudarc::nvrtc::Ptx;
use cudarc::nvrtc::sys as nvrtc;
use tessera_common::{Result, TesseraError, exec_err, internal_err};

use crate::device::{GpuDevice, driver_err};
use crate::probe::{self, catch_cuda_panic};

/// The device library, as (include name, contents): what NVRTC finds for
/// `#include "<name>"`.
pub const DEVICE_HEADERS: &[(&str, &str)] = &[
    ("tessera.cuh", include_str!("../cuda/tessera.cuh")),
    ("types.cuh", include_str!("../cuda/types.cuh")),
    ("compact.cuh", include_str!("../cuda/compact.cuh")),
    ("atomics.cuh", include_str!("../cuda/atomics.cuh")),
    ("expr.cuh", include_str!("../cuda/expr.cuh")),
    ("hash.cuh", include_str!("../cuda/hash.cuh")),
    ("strings.cuh", include_str!("../cuda/strings.cuh")),
    ("tiles.cuh", include_str!("../cuda/tiles.cuh")),
    // The runtime's own kernels: not included by tessera.cuh (see crate::library).
    ("records.cuh", include_str!("../cuda/records.cuh")),
    ("bandwidth.cuh", include_str!("../cuda/bandwidth.cuh")),
    ("join_study.cuh", include_str!("../cuda/join_study.cuh")),
    ("probe_study.cuh", include_str!("../cuda/probe_study.cuh")),
    ("study.cuh", include_str!("../cuda/study.cuh")),
    ("launch_study.cuh", include_str!("../cuda/launch_study.cuh")),
];

/// NVRTC options besides the architecture: C++17 for `if constexpr` and friends in
/// generated code, and line info so that profilers map SASS back to the source.
const NVRTC_OPTIONS: &[&str] = &["-std=c++17", "-lineinfo", "--device-int128"];

/// The most registers a thread may have (sm_50 and later): the last register cap a
/// generated kernel that spills is compiled again under ([`KernelCache::load`]).
const MAX_REGISTERS: u32 = 255;

/// Whether a generated kernel that spills registers to local memory is compiled again
/// under a register cap when it is first loaded ([`KernelCache::load`]);
/// `TESSERA_EXP_SPILL_RETRY=0` keeps ptxas's first result, as before 2026-11-30. Read
/// once a process; part of the cache key.
fn spill_retry() -> bool {
    static READ: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *READ.get_or_init(|| std::env::var("TESSERA_EXP_SPILL_RETRY").map_or(true, |v| v != "0"))
}

/// Environment variable naming a directory to dump compiled kernel sources into.
pub const DUMP_KERNELS_ENV: &str = "TESSERA_DUMP_KERNELS";

/// The NVRTC version (major, minor), e.g. (13, 0).
pub fn nvrtc_version() -> Result<(i32, i32)> {
    if !probe::nvrtc_available() {
        return exec_err!("{}", nvrtc_missing());
    }
    query_nvrtc_version()
}

/// Asks NVRTC for its version; callers check the library is present first.
pub(crate) fn query_nvrtc_version() -> Result<(i32, i32)> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: writes two ints.
    let status = catch_cuda_panic("querying the NVRTC version", || unsafe {
        nvrtc::nvrtcVersion(&mut major, &mut minor)
    })?;
    nvrtc_check(status, "querying the NVRTC version")?;
    Ok((major, minor))
}

fn nvrtc_missing() -> String {
    "libnvrtc not found: install it with .ci/install-nvrtc.sh (no GPU needed) or the CUDA \
     toolkit, and put its directory on LD_LIBRARY_PATH"
        .to_string()
}

fn nvrtc_check(status: nvrtc::nvrtcResult, what: &str) -> Result<()> {
    if status == nvrtc::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: nvrtcGetErrorString returns a static string for every result code.
    let message = unsafe { CStr::from_ptr(nvrtc::nvrtcGetErrorString(status)) }
        .to_string_lossy()
        .into_owned();
    internal_err!("NVRTC failed while {what}: {message}")
}

/// Checks an architecture name like "sm_90" or "sm_90a".
fn check_arch(arch: &str) -> Result<()> {
    let ok = arch.strip_prefix("sm_").is_some_and(|n| {
        n.len() >= 2
            && n.chars().next().is_some_and(|c| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric())
    });
    if ok {
        Ok(())
    } else {
        internal_err!("invalid GPU architecture '{arch}': expected e.g. sm_90")
    }
}

/// An NVRTC program, destroyed on drop.
struct Program(nvrtc::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed only here.
        unsafe { nvrtc::nvrtcDestroyProgram(&mut self.0) };
    }
}

impl Program {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: a valid program; the log buffer has the size NVRTC asked for.
        unsafe {
            if nvrtc::nvrtcGetProgramLogSize(self.0, &mut size) != nvrtc::nvrtcResult::NVRTC_SUCCESS
                || size == 0
            {
                return String::new();
            }
            let mut log = vec![0u8; size];
            if nvrtc::nvrtcGetProgramLog(self.0, log.as_mut_ptr() as *mut c_char)
                != nvrtc::nvrtcResult::NVRTC_SUCCESS
            {
                return String::new();
            }
            CStr::from_bytes_until_nul(&log)
                .map(|s| s.to_string_lossy().trim_end().to_string())
                .unwrap_or_default()
        }
    }
}

/// Compiles CUDA `source` (which may `#include "tessera.cuh"`) to CUBIN for `arch`
/// (e.g. "sm_90"). Needs libnvrtc but no GPU. A compile error is an internal error (the
/// generator wrote bad code) carrying NVRTC's log.
pub fn compile_cubin(source: &str, arch: &str) -> Result<Vec<u8>> {
    compile_capped(source, arch, None)
}

/// [`compile_cubin`] under a register cap (`--maxrregcount`) when one is given.
fn compile_capped(source: &str, arch: &str, max_registers: Option<u32>) -> Result<Vec<u8>> {
    if !probe::nvrtc_available() {
        return exec_err!("{}", nvrtc_missing());
    }
    check_arch(arch)?;
    // NVRTC's front end recurses deeply on long expressions: give it a thread with a
    // generous stack rather than the caller's (2 MiB on test and worker threads).
    let (source, arch_owned) = (source.to_string(), arch.to_string());
    std::thread::Builder::new()
        .name("nvrtc".into())
        .stack_size(NVRTC_STACK_BYTES)
        .spawn(move || catch_cuda_panic("compiling a kernel with NVRTC", || compile_cubin_unchecked(&source, &arch_owned, max_registers)))
        .map_err(|e| TesseraError::Internal(format!("cannot start the NVRTC thread: {e}")))?
        .join()
        .map_err(|_| TesseraError::Internal("the NVRTC thread panicked".into()))??
}

/// Stack for NVRTC compilations (64 MiB: measured to need more than 2 MiB on TPC-H's
/// CASE-heavy kernels).
const NVRTC_STACK_BYTES: usize = 64 << 20;

fn compile_cubin_unchecked(source: &str, arch: &str, max_registers: Option<u32>) -> Result<Vec<u8>> {
    let cstring = |s: &str, what: &str| {
        CString::new(s).map_err(|_| TesseraError::Internal(format!("{what} contains a NUL byte")))
    };
    let src = cstring(source, "kernel source")?;
    let name = cstring("tessera_kernel.cu", "name")?;
    let header_texts = DEVICE_HEADERS
        .iter()
        .map(|(_, text)| cstring(text, "device header"))
        .collect::<Result<Vec<_>>>()?;
    let header_names = DEVICE_HEADERS
        .iter()
        .map(|(name, _)| cstring(name, "header name"))
        .collect::<Result<Vec<_>>>()?;
    let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|s| s.as_ptr()).collect();
    let name_ptrs: Vec<*const c_char> = header_names.iter().map(|s| s.as_ptr()).collect();

    let mut raw = std::ptr::null_mut();
    // SAFETY: every pointer refers to a NUL-terminated string alive for this call; the two
    // header arrays have DEVICE_HEADERS.len() entries.
    let status = unsafe {
        nvrtc::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            name.as_ptr(),
            DEVICE_HEADERS.len() as c_int,
            text_ptrs.as_ptr(),
            name_ptrs.as_ptr(),
        )
    };
    nvrtc_check(status, "creating a program")?;
    let program = Program(raw);

    let options: Vec<CString> = std::iter::once(format!("--gpu-architecture={arch}"))
        .chain(NVRTC_OPTIONS.iter().map(|o| o.to_string()))
        .chain(max_registers.map(|n| format!("--maxrregcount={n}")))
        .map(|o| cstring(&o, "option"))
        .collect::<Result<_>>()?;
    let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: a valid program and option_ptrs.len() NUL-terminated options.
    let status = unsafe {
        nvrtc::nvrtcCompileProgram(program.0, option_ptrs.len() as c_int, option_ptrs.as_ptr())
    };
    if status != nvrtc::nvrtcResult::NVRTC_SUCCESS {
        let log = program.log();
        let what = format!("compiling a kernel for {arch}");
        let err = nvrtc_check(status, &what)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        return internal_err!("{err}\n{log}");
    }

    let mut size = 0usize;
    // SAFETY: a compiled program; the buffer has the size NVRTC reported.
    nvrtc_check(
        unsafe { nvrtc::nvrtcGetCUBINSize(program.0, &mut size) },
        "sizing the CUBIN",
    )?;
    if size == 0 {
        return internal_err!("NVRTC produced no CUBIN for {arch}");
    }
    let mut cubin = vec![0u8; size];
    nvrtc_check(
        unsafe { nvrtc::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr() as *mut c_char) },
        "reading the CUBIN",
    )?;
    Ok(cubin)
}

/// 128-bit FNV-1a: stable across Rust versions and runs (unlike `DefaultHasher`), which the
/// on-disk cache needs, and wide enough that a collision between two kernels is not a risk.
#[derive(Clone, Copy)]
struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;

    fn new() -> Self {
        Fnv128(Self::OFFSET)
    }

    /// Hashes a length-prefixed field, so that field boundaries are unambiguous.
    fn field(mut self, bytes: &[u8]) -> Self {
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            self.0 ^= *b as u128;
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
        self
    }
}

/// The cache key of a kernel: everything the CUBIN depends on.
fn cache_key(source: &str, arch: &str, nvrtc_version: (i32, i32)) -> u128 {
    let mut h = Fnv128::new()
        .field(b"tessera-kernel-v1")
        .field(if spill_retry() { b"spills compiled again".as_slice() } else { b"spills kept".as_slice() })
        .field(arch.as_bytes())
        .field(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    for option in NVRTC_OPTIONS {
        h = h.field(option.as_bytes());
    }
    for (name, text) in DEVICE_HEADERS {
        h = h.field(name.as_bytes()).field(text.as_bytes());
    }
    h.field(source.as_bytes()).0
}

/// Compiled kernels, in memory and (when given a directory) on disk.
pub struct KernelCache {
    /// Where `<hash>.cubin` files live; None keeps the cache in memory only.
    dir: Option<PathBuf>,
    /// Loaded modules by their source (one device per process, so the key needs no
    /// device). Keyed by the text rather than [`cache_key`]: a warm query looks up each of
    /// its kernels, and hashing the text (a few KiB) with the std hasher costs
    /// microseconds where the byte-wise FNV-128 over the device library's headers (about
    /// 35 KiB) cost about 0.15 ms a lookup (seen on an H200 host as host time of every
    /// GPU pipeline, 2026-11-23).
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    /// Number of NVRTC compilations this cache ran (the rest were hits).
    compilations: AtomicU64,
}

impl KernelCache {
    /// A cache that also keeps CUBIN files in `dir` (e.g. `<data-dir>/kernels`), created
    /// on first write; `None` for memory only.
    pub fn new(dir: Option<PathBuf>) -> Self {
        KernelCache {
            dir,
            modules: Mutex::new(HashMap::new()),
            compilations: AtomicU64::new(0),
        }
    }

    /// How many compilations this cache has run.
    pub fn compilations(&self) -> u64 {
        self.compilations.load(Ordering::Relaxed)
    }

    /// Whether `source`'s module is loaded already (a [`KernelCache::load`] of it returns
    /// at once).
    pub fn is_loaded(&self, source: &str) -> bool {
        self.lock().is_ok_and(|m| m.contains_key(source))
    }

    /// The CUBIN of `source` for `arch`, from the disk cache or compiled (and stored).
    /// Needs libnvrtc only when the kernel is not cached; never needs a GPU, and so
    /// stores the first compilation as it is (the spill check of [`KernelCache::load`]
    /// reads the loaded kernel).
    pub fn cubin(&self, source: &str, arch: &str) -> Result<Vec<u8>> {
        let key = cache_key(source, arch, nvrtc_version()?);
        if let Some(cubin) = self.read_disk(key) {
            return Ok(cubin);
        }
        self.compile_and_store(source, arch, key)
    }

    /// The module of `source` loaded on `device`: from memory, else from the disk cache,
    /// else compiled for the device's architecture.
    ///
    /// A generated kernel ([`crate::codegen::KERNEL_NAME`]) that a fresh compilation
    /// leaves using local memory (spilled registers) is compiled again under a register
    /// cap, first at the registers it used, then at [`MAX_REGISTERS`], and the first
    /// result without local memory is kept (and stored); if neither is, the first
    /// stands. Left to itself ptxas sometimes keeps a kernel at a register count that
    /// lets more blocks share an SM and spills a few registers to stay there; where the
    /// value spilled is a load in flight, such as a column's words prefetched for the
    /// next tile, the spill's store waits for the load and the prefetch is lost. SSB
    /// q4.2's probe over bit-packed columns (SF 20, H200) spent 30% of its stall samples
    /// on one `STL.64` of its prefetched words (40 registers, 8 bytes spilled; under a
    /// cap of 40, ptxas allocates otherwise and spills nothing;
    /// `benchmarks/results/gpu-2026-11-30/` runs 4 and 6). The check reads the loaded
    /// function's local memory from the driver: NVRTC's log of ptxas's report
    /// (`--ptxas-options=-v`) came back empty on the H200 hosts' NVRTC 13.0 whenever
    /// kernels compiled on several threads at once (run 6).
    pub fn load(&self, device: &GpuDevice, source: &str) -> Result<Arc<CudaModule>> {
        if let Some(module) = self.lock()?.get(source) {
            return Ok(module.clone());
        }
        let arch = device.arch();
        let key = cache_key(source, &arch, nvrtc_version()?);
        // A cached file that fails to load (truncated, from another driver) is recompiled.
        let module = match self.read_disk(key).map(|cubin| load_cubin(device, cubin)) {
            Some(Ok(module)) => module,
            _ => self.compile_load_and_store(device, source, &arch, key)?,
        };
        // Compiled outside the lock; if another thread won the race, use its module.
        Ok(self.lock()?.entry(source.to_string()).or_insert(module).clone())
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Arc<CudaModule>>>> {
        self.modules
            .lock()
            .map_err(|_| TesseraError::Internal("kernel cache poisoned by an earlier panic".into()))
    }

    fn path(&self, key: u128) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|dir| dir.join(format!("{key:032x}.cubin")))
    }

    fn read_disk(&self, key: u128) -> Option<Vec<u8>> {
        std::fs::read(self.path(key)?)
            .ok()
            .filter(|bytes| !bytes.is_empty())
    }

    /// Compiles `source`, loads it, compiles it again where its generated kernel spills
    /// (see [`KernelCache::load`]), and stores the CUBIN kept.
    fn compile_load_and_store(&self, device: &GpuDevice, source: &str, arch: &str, key: u128) -> Result<Arc<CudaModule>> {
        dump_source(key, source)?;
        let mut cubin = self.compile(source, arch, None)?;
        let mut module = load_cubin(device, cubin.clone())?;
        let spilled = if spill_retry() { kernel_locals(&module).filter(|&(_, local)| local > 0) } else { None };
        if let Some((registers, _)) = spilled {
            // A capped compilation or load that fails leaves the first compilation in use:
            // the retry only ever replaces a kernel that works with one that works better.
            for cap in [registers.max(1), MAX_REGISTERS] {
                let Ok(capped) = self.compile(source, arch, Some(cap)) else { break };
                let Ok(loaded) = load_cubin(device, capped.clone()) else { break };
                if kernel_locals(&loaded).is_some_and(|(_, local)| local == 0) {
                    (cubin, module) = (capped, loaded);
                    break;
                }
            }
        }
        self.store(key, &cubin)?;
        Ok(module)
    }

    fn compile_and_store(&self, source: &str, arch: &str, key: u128) -> Result<Vec<u8>> {
        dump_source(key, source)?;
        let cubin = self.compile(source, arch, None)?;
        self.store(key, &cubin)?;
        Ok(cubin)
    }

    /// Compiles `source` for `arch` (under a register cap when given), counting it.
    fn compile(&self, source: &str, arch: &str, max_registers: Option<u32>) -> Result<Vec<u8>> {
        let cubin = compile_capped(source, arch, max_registers)?;
        self.compilations.fetch_add(1, Ordering::Relaxed);
        Ok(cubin)
    }

    /// Writes `cubin` to the disk cache under `key`, where the cache has a directory.
    fn store(&self, key: u128, cubin: &[u8]) -> Result<()> {
        match self.path(key) {
            Some(path) => write_atomically(&path, cubin),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCache")
            .field("dir", &self.dir)
            .field("compilations", &self.compilations())
            .finish()
    }
}

/// The registers a thread of `module`'s generated kernel uses and the bytes of local
/// memory it takes (spills, or arrays the compiler placed there); None for a module
/// without one (the runtime's own kernels) or where the driver does not say.
pub(crate) fn kernel_locals(module: &Arc<CudaModule>) -> Option<(u32, u32)> {
    let function = module.load_function(crate::codegen::KERNEL_NAME).ok()?;
    let registers = u32::try_from(function.num_regs().ok()?).ok()?;
    let local = u32::try_from(function.local_size_bytes().ok()?).ok()?;
    Some((registers, local))
}

pub(crate) fn load_cubin(device: &GpuDevice, cubin: Vec<u8>) -> Result<Arc<CudaModule>> {
    device
        .context()
        .load_module(Ptx::from_binary(cubin))
        .map_err(|e| driver_err("loading a compiled kernel", e))
}

/// Writes `bytes` to a temporary file next to `path` and renames it into place, so that
/// a concurrent reader (another Tessera process) never sees a partial file.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .map_err(|e| TesseraError::io(format!("creating kernel cache {}", dir.display()), e))?;
    let tmp = path.with_extension(format!(
        "cubin.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes)
        .map_err(|e| TesseraError::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        TesseraError::io(
            format!("renaming {} to {}", tmp.display(), path.display()),
            e,
        )
    })
}

/// Writes the source to `$TESSERA_DUMP_KERNELS/<hash>.cu` when that variable is set.
fn dump_source(key: u128, source: &str) -> Result<()> {
    let Some(dir) = std::env::var_os(DUMP_KERNELS_ENV) else {
        return Ok(());
    };
    let path = PathBuf::from(dir).join(format!("{key:032x}.cu"));
    write_atomically(&path, source.as_bytes())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
