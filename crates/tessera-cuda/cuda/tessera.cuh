// tessera.cuh: Tessera's device library, the only header generated kernels include.
//
// Crystal-style block-wide primitives (load -> predicate -> probe -> aggregate/compact)
// over per-thread register arrays and selection flags, with CUB's discipline: every
// primitive is templated on <T, BLOCK_THREADS, ITEMS_PER_THREAD>, checks the block shape
// at compile time, and exposes a TempStorage type where it needs shared memory, so a
// kernel can overlay the scratch space of all its primitives in one __shared__ union.
//
// Built for NVRTC, which ships no headers: nothing here includes a system header.
// Embedded into the Rust crate (tessera_cuda::compile::DEVICE_HEADERS) and handed to
// NVRTC as named headers; compile by hand with `nvcc -I crates/tessera-cuda/cuda`.
#pragma once
#include "types.cuh"
#include "load.cuh"
#include "pred.cuh"
#include "scan.cuh"
#include "compact.cuh"
#include "hash.cuh"
#include "atomics.cuh"
#include "reduce.cuh"
#include "expr.cuh"
