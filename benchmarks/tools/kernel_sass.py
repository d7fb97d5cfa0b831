#!/usr/bin/env python3
"""The SASS of generated kernels' tile loops, without a GPU: how many instructions the
longest loop (the whole-tile loop) holds and of which opcodes.

Compiles each CUDA file given to a CUBIN for sm_90 with libnvrtc (as kernel_registers.py
does) and disassembles it with nvdisasm, which PyPI ships without the rest of the
toolkit:

    source /root/.cache/tessera/nvrtc-13.0/env.sh   # libnvrtc on LD_LIBRARY_PATH
    pip download --no-deps -d /tmp/nvdisasm nvidia-cuda-nvdisasm   # then unzip the wheel
    NVDISASM=/tmp/nvdisasm/nvidia/cu13/bin/nvdisasm \\
      python3 benchmarks/tools/kernel_sass.py /tmp/dk/ssb-q1.3-p1.cu [--sass]

Kernels to compare come from `TESSERA_DUMP_KERNELS=<dir> cargo test -p tessera-bench
--test plans` (every SSB and TPC-H pipeline), under two settings of an experiment
variable. Static counts are a guide, not a timing: 32-bit rows as `unsigned` grew SSB
q1.3's loop from 558 to 672 instructions and its kernel from 0.140 to 0.185 ms, but q4.3's
grew from 287 to 294 while its kernel fell from 0.430 to 0.350 ms with 8 fewer registers
(2026-11-28g).
"""
import collections
import ctypes
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_registers import HEADERS, nvrtc  # noqa: E402


def cubin(lib, source, arch="sm_90"):
    names = sorted(n for n in os.listdir(HEADERS) if n.endswith(".cuh"))
    arr = ctypes.c_char_p * len(names)
    texts = arr(*[open(os.path.join(HEADERS, n), "rb").read() for n in names])
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", len(names), texts, arr(*[n.encode() for n in names]))
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"--device-int128", b"-lineinfo"]
    status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    if status != 0:
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, log)
        sys.exit(log.value.decode(errors="replace"))
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, out)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return out.raw


def longest_loop(sass):
    """The instructions of the longest backward branch's loop."""
    ins, labels = [], {}
    for line in sass.splitlines():
        m = re.match(r"\s*(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?);", line)
        if m:
            ins.append(m.group(1))
    best = (0, 0, -1)
    for i, text in enumerate(ins):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", text)
        if m and labels.get(m.group(1), i + 1) <= i and i - labels[m.group(1)] + 1 > best[0]:
            best = (i - labels[m.group(1)] + 1, labels[m.group(1)], i)
    return ins[best[1]:best[2] + 1]


def main():
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not paths:
        sys.exit(__doc__)
    lib, tool = nvrtc(), os.environ.get("NVDISASM", "nvdisasm")
    for path in paths:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin(lib, open(path).read()))
            f.flush()
            sass = subprocess.run([tool, "-c", f.name], capture_output=True, text=True, check=True).stdout
        loop = longest_loop(sass)
        ops = collections.Counter(t.split()[1] if t.startswith("@") else t.split()[0] for t in loop)
        print(f"{path}: {len(loop)} instructions in the tile loop; " + ", ".join(f"{op} {n}" for op, n in ops.most_common(12)))
        if "--sass" in sys.argv:
            print("\n".join("    " + t for t in loop))


if __name__ == "__main__":
    main()
