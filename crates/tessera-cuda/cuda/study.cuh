// study.cuh: what the device studies' kernels share (join_study.cuh, probe_study.cuh;
// their host sides share tessera_cuda::study).
#pragma once

namespace tessera {

// SplitMix64, which the studies draw their generated data with (the host's answers use
// the same function, tessera_cuda::study::splitmix).
__device__ __forceinline__ unsigned long long study_splitmix(unsigned long long x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

}  // namespace tessera
