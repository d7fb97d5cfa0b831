// reduce.cuh: block-wide reductions over warp shuffles, and block-to-global aggregation.
//
// A reduction sums each thread's items, folds each warp with __shfl_down_sync (no shared
// memory), writes the warp totals to shared memory and folds those in the first warp: one
// __syncthreads. The result is valid in thread 0 only. `sum_into` then adds the block's
// total to a global accumulator with one atomic per block.
#pragma once
#include "types.cuh"
#include "atomics.cuh"

namespace tessera {

/// Block-wide sum.
///   T                 int32_t, int64_t, uint64_t, float, double, or Int128 (shuffled as
///                     two 64-bit halves, carries handled by Int128's +)
///   BLOCK_THREADS     threads in the block: a multiple of the warp size, at most 1024
///   ITEMS_PER_THREAD  items each thread holds
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct BlockReduce {
    typedef BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD> Shape;
    static constexpr int WARPS = Shape::WARPS;
    static_assert(WARPS <= WARP_THREADS, "the warp totals must fit in one warp");

    /// Shared scratch space; needs a __syncthreads() before it is reused.
    struct TempStorage {
        T warp_totals[WARPS];
    };

    /// Sum of one value per thread; valid in thread 0.
    __device__ __forceinline__ static T sum(T value, TempStorage& temp) {
        const int lane = threadIdx.x % WARP_THREADS;
        const int warp = threadIdx.x / WARP_THREADS;
#pragma unroll
        for (int offset = WARP_THREADS / 2; offset > 0; offset >>= 1) {
            value = value + detail::shfl_down(value, offset);
        }
        if (lane == 0) temp.warp_totals[warp] = value;
        __syncthreads();
        T total = zero_of<T>();
        if (warp == 0) {
            total = lane < WARPS ? temp.warp_totals[lane] : zero_of<T>();
#pragma unroll
            for (int offset = WARP_THREADS / 2; offset > 0; offset >>= 1) {
                total = total + detail::shfl_down(total, offset);
            }
        }
        return total;
    }

    /// Sum of all items of the tile; valid in thread 0.
    __device__ __forceinline__ static T sum(const T (&items)[ITEMS_PER_THREAD], TempStorage& temp) {
        T thread_total = zero_of<T>();
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) thread_total = thread_total + items[i];
        return sum(thread_total, temp);
    }

    /// Sum of the selected items of the tile (flags[i] != 0); valid in thread 0.
    __device__ __forceinline__ static T sum_selected(const T (&items)[ITEMS_PER_THREAD],
                                                     const int (&flags)[ITEMS_PER_THREAD],
                                                     TempStorage& temp) {
        T thread_total = zero_of<T>();
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            if (flags[i]) thread_total = thread_total + items[i];
        }
        return sum(thread_total, temp);
    }
};

/// Adds a block total to a global accumulator from thread 0: one atomic per block.
__device__ __forceinline__ void block_total_into(int64_t* target, int64_t block_total) {
    if (threadIdx.x == 0 && block_total != 0) atomic_add_i64(target, block_total);
}

/// As above for 128-bit totals (see atomic_add_i128 for when the result may be read).
__device__ __forceinline__ void block_total_into(Int128* target, Int128 block_total) {
    if (threadIdx.x == 0 && (block_total.lo != 0 || block_total.hi != 0)) {
        atomic_add_i128(target, block_total);
    }
}

}  // namespace tessera
