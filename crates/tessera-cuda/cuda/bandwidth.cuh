// bandwidth.cuh: the kernel that measures device-memory read bandwidth (not generated code).
//
// Launched by the executor (tessera-exec, gpu.rs: `GpuRuntime::measure_bandwidth`, once
// per process) from a module whose whole source is
// tessera_cuda::library::BANDWIDTH_SOURCE, i.e. `#include "bandwidth.cuh"`: it sums 1 GiB
// of int64 and the timing gives the peak the bandwidth model divides by. Not included by
// tessera.cuh, so that generated pipeline modules do not carry it.
#pragma once

// Reads a[0..n) grid-stride; the atomic (never taken for real data) keeps the sum alive.
extern "C" __global__ void tessera_read(const long long* __restrict__ a, long long n, unsigned long long* out) {
    long long s = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) s += a[i];
    if (s == 42) atomicAdd(out, 1ull);
}
