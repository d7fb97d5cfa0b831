// tessera.cuh: Tessera's device library, the only header generated kernels include.
//
// What generated pipeline kernels call besides their own prelude (tessera-cuda's
// codegen) and CUDA's builtins: the fixed-width types and Int128 (types.cuh), warp-level
// append for materializing rows (compact.cuh), the atomics of 128-bit and split sums
// (atomics.cuh), expression helpers (expr.cuh), open-addressing hash tables
// (hash.cuh), LIKE over strings without a dictionary (strings.cuh) and columns kept
// in bit-packed tiles (tiles.cuh). The runtime's own kernels are in headers of their own that this one does
// not include (records.cuh, bandwidth.cuh; see tessera_cuda::library).
//
// Built for NVRTC, which ships no headers: nothing here includes a system header.
// Embedded into the Rust crate (tessera_cuda::compile::DEVICE_HEADERS) and handed to
// NVRTC as named headers; compile by hand with `nvcc -I crates/tessera-cuda/cuda`.
#pragma once
#include "types.cuh"
#include "compact.cuh"
#include "atomics.cuh"
#include "expr.cuh"
#include "hash.cuh"
#include "strings.cuh"
#include "tiles.cuh"
