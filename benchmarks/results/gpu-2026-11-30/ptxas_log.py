"""Run 6 of 2026-11-30: which NVRTC a process finds, and what its log says of ptxas's
registers and spills (`--ptxas-options=-v`) for a kernel, compiled alone and four at once.
Usage: python3 ptxas_log.py LIBNVRTC INCLUDE_DIR KERNEL.cu [EXTRA_OPTION ...]"""
import ctypes, re, sys, threading

lib = ctypes.CDLL(sys.argv[1])
include, kernel, extra = sys.argv[2], sys.argv[3], [a.encode() for a in sys.argv[4:]]
major, minor = ctypes.c_int(), ctypes.c_int()
lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
print(f"NVRTC {major.value}.{minor.value} from {sys.argv[1]}")


def compile_once(out, k):
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), open(kernel).read().encode(), b"k.cu", 0, None, None)
    opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-lineinfo", b"--device-int128", b"-w",
            b"--ptxas-options=-v", b"-I" + include.encode()] + extra
    arr = (ctypes.c_char_p * len(opts))(*opts)
    status = lib.nvrtcCompileProgram(prog, len(opts), arr)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace")
    regs = re.findall(r"Used (\d+) registers", text)
    spills = re.findall(r"(\d+) bytes spill stores", text)
    out[k] = f"status {status}, log {len(text)} bytes, registers {regs}, spill stores {spills}"


out = {}
compile_once(out, "alone")
threads = [threading.Thread(target=compile_once, args=(out, f"at once {i}")) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for k, v in out.items():
    print(f"{k}: {v}")
