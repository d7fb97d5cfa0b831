// scan.cuh: block-wide exclusive prefix sum over warp shuffles.
//
// Each thread first sums its own ITEMS_PER_THREAD items; the per-thread totals are scanned
// inside each warp with __shfl_up_sync (log2(32) = 5 steps, no shared memory), the warp
// totals are written to shared memory and scanned by the first warp, and each thread adds
// its warp's offset. Two __syncthreads in all. Items are scanned in (thread, item) order,
// which is row order for a blocked layout; for a striped layout the offsets are still a
// valid dense numbering of the items, just not in row order.
#pragma once
#include "types.cuh"

namespace tessera {

/// Block-wide exclusive prefix sum.
///   T                 item type: any type with + that __shfl_up_sync accepts (int32_t,
///                     uint32_t, int64_t, uint64_t, float, double) or Int128
///   BLOCK_THREADS     threads in the block: a multiple of the warp size, at most 1024, so
///                     that the warp totals fit in one warp
///   ITEMS_PER_THREAD  items each thread holds
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct BlockScan {
    typedef BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD> Shape;
    static constexpr int WARPS = Shape::WARPS;
    static_assert(WARPS <= WARP_THREADS, "the warp totals must fit in one warp");

    /// Shared scratch space. Reusing it for another primitive needs a __syncthreads()
    /// after exclusive_sum returns.
    struct TempStorage {
        T warp_prefix[WARPS];
        T block_total;
    };

    /// out[i] = sum of all items before items[i] in (thread, item) order; every thread
    /// receives the sum over the whole block in `block_total`. `in` and `out` may alias.
    __device__ __forceinline__ static void exclusive_sum(const T (&in)[ITEMS_PER_THREAD],
                                                         T (&out)[ITEMS_PER_THREAD],
                                                         T& block_total,
                                                         TempStorage& temp) {
        const int lane = threadIdx.x % WARP_THREADS;
        const int warp = threadIdx.x / WARP_THREADS;

        T thread_total = zero_of<T>();
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) thread_total = thread_total + in[i];

        // Inclusive scan of the thread totals within the warp.
        T inclusive = thread_total;
#pragma unroll
        for (int offset = 1; offset < WARP_THREADS; offset <<= 1) {
            T up = detail::shfl_up(inclusive, offset);
            if (lane >= offset) inclusive = inclusive + up;
        }
        if (lane == WARP_THREADS - 1) temp.warp_prefix[warp] = inclusive;
        __syncthreads();

        // The first warp turns the warp totals into exclusive warp offsets.
        if (warp == 0) {
            T total = lane < WARPS ? temp.warp_prefix[lane] : zero_of<T>();
            T scanned = total;
#pragma unroll
            for (int offset = 1; offset < WARP_THREADS; offset <<= 1) {
                T up = detail::shfl_up(scanned, offset);
                if (lane >= offset) scanned = scanned + up;
            }
            if (lane < WARPS) temp.warp_prefix[lane] = scanned + negate(total);
            if (lane == WARPS - 1) temp.block_total = scanned;
        }
        __syncthreads();

        // Exclusive prefix of this thread = warp offset + inclusive - own total.
        T running = temp.warp_prefix[warp] + inclusive + negate(thread_total);
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            T item = in[i];
            out[i] = running;
            running = running + item;
        }
        block_total = temp.block_total;
    }

  private:
    __device__ __forceinline__ static T negate(T v) { return zero_of<T>() - v; }
};

}  // namespace tessera
