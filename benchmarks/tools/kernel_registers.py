#!/usr/bin/env python3
"""Registers, spills and shared memory of generated kernels, without a GPU.

Compiles each CUDA file given (e.g. crates/tessera-cuda/tests/golden/*.cu, or kernels
dumped with TESSERA_DUMP_KERNELS) with libnvrtc for sm_90, the device headers in
crates/tessera-cuda/cuda as include files, and prints ptxas' summary line of each:

    source /root/.cache/tessera/nvrtc-13.0/env.sh   # libnvrtc on LD_LIBRARY_PATH
    python3 benchmarks/tools/kernel_registers.py crates/tessera-cuda/tests/golden/star_join_packed.cu

A kernel's registers bound its occupancy (65536 per SM over 128 threads a block): the
packed decoders' first pipelined form held tile headers in registers and ran 4 blocks an
SM (2026-11-26d).
"""
import ctypes
import ctypes.util
import glob
import os
import sys

HEADERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../crates/tessera-cuda/cuda")


def nvrtc():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", ctypes.util.find_library("nvrtc")):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                pass
    sys.exit("libnvrtc not found: put its folder on LD_LIBRARY_PATH")


def compile_log(lib, source, arch):
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(HEADERS, "*.cuh")))
    texts = [open(os.path.join(HEADERS, n), "rb").read() for n in names]
    arr = ctypes.c_char_p * len(names)
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", len(names), arr(*texts), arr(*[n.encode() for n in names]))
    # The options tessera-cuda compiles with (compile.rs), and ptxas' summary.
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"--device-int128", b"--ptxas-options=-v"]
    status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return status, log.value.decode(errors="replace")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lib = nvrtc()
    for path in sys.argv[1:]:
        status, log = compile_log(lib, open(path).read(), "sm_90")
        lines = [l.strip() for l in log.splitlines() if "registers" in l or "spill" in l or "error" in l]
        print(f"{path}: {'ok' if status == 0 else f'NVRTC status {status}'}")
        for l in lines:
            print("   ", l)


if __name__ == "__main__":
    main()
