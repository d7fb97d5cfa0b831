// compact.cuh: stream compaction by warps, for generated kernels that materialize rows.
// The output is a set, not a stable order; sort afterwards if an order is needed (the
// runtime's group records, records.cuh, are compacted in order by a block-wide scan).
#pragma once
#include "types.cuh"

namespace tessera {

/// Warp-level append, for code where each thread decides alone whether it emits (the
/// generated row loops, which `continue` past filtered rows): the lanes calling it
/// together reserve consecutive output positions with one atomicAdd per warp (the first
/// active lane adds the number of active lanes), and each gets its own, in lane order.
/// Returns this lane's position. Output order across warps is arbitrary.
__device__ __forceinline__ unsigned long long warp_append(unsigned long long* count) {
    const unsigned int mask = __activemask();
    const unsigned int lane = threadIdx.x & 31u;
    const int lead = __ffs(mask) - 1;
    unsigned long long base = 0ull;
    if ((int)lane == lead) base = atomicAdd(count, (unsigned long long)__popc(mask));
    __syncwarp(mask);
    base = __shfl_sync(mask, base, lead);
    return base + (unsigned long long)__popc(mask & ((1u << lane) - 1u));
}

}  // namespace tessera
