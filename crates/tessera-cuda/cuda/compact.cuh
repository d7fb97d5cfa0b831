// compact.cuh: block-wide stream compaction of the selected items of a tile.
//
// The selection flags are scanned (scan.cuh) to give each selected item a dense position
// within its block; one thread per block then reserves the block's output range with a
// single atomicAdd on a global counter, so a block costs one atomic however many rows it
// selects. Output order: blocks in the order their atomics landed (arbitrary), items within
// a block in (thread, item) order. The result is a set, not a stable order; sort
// afterwards if an order is needed.
#pragma once
#include "types.cuh"
#include "scan.cuh"

namespace tessera {

/// Block-wide compaction.
///   T                 item type
///   BLOCK_THREADS     threads in the block
///   ITEMS_PER_THREAD  items each thread holds (any layout; flags in the same layout)
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct BlockCompact {
    typedef BlockScan<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD> Scan;

    /// Shared scratch space; needs a __syncthreads() before it is reused.
    struct TempStorage {
        typename Scan::TempStorage scan;
        uint64_t block_offset;
    };

    /// Computes where each selected item goes in the output: positions[i] is its global
    /// output index, or -1 when flags[i] is 0. Advances `*out_count` (shared by all blocks,
    /// zeroed before the launch) by the number selected in this block, which is returned
    /// to every thread. Use it to scatter several columns with one scan.
    __device__ __forceinline__ static int32_t positions(const int (&flags)[ITEMS_PER_THREAD],
                                                        int64_t (&positions)[ITEMS_PER_THREAD],
                                                        uint64_t* out_count,
                                                        TempStorage& temp) {
        int32_t selected[ITEMS_PER_THREAD];
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) selected[i] = flags[i] ? 1 : 0;
        int32_t offsets[ITEMS_PER_THREAD];
        int32_t block_total;
        Scan::exclusive_sum(selected, offsets, block_total, temp.scan);
        if (threadIdx.x == 0) {
            temp.block_offset = block_total > 0
                ? (uint64_t)atomicAdd((unsigned long long*)out_count, (unsigned long long)block_total)
                : 0ull;
        }
        __syncthreads();
        const int64_t base = (int64_t)temp.block_offset;
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            positions[i] = selected[i] ? base + offsets[i] : -1;
        }
        return block_total;
    }

    /// Writes the selected items to `out` (a buffer with room for every selected row of the
    /// launch) at the positions reserved through `*out_count`; returns the number selected
    /// in this block.
    __device__ __forceinline__ static int32_t compact(const T (&items)[ITEMS_PER_THREAD],
                                                      const int (&flags)[ITEMS_PER_THREAD],
                                                      T* out,
                                                      uint64_t* out_count,
                                                      TempStorage& temp) {
        int64_t pos[ITEMS_PER_THREAD];
        int32_t n = positions(flags, pos, out_count, temp);
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            if (pos[i] >= 0) out[pos[i]] = items[i];
        }
        return n;
    }
};

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
