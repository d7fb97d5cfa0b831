// load.cuh: block-wide loads of one tile from global memory into per-thread registers.
//
// A tile is BLOCK_THREADS * ITEMS_PER_THREAD consecutive items starting at `block_in`.
// Two layouts, named in every function:
//   striped: item i of thread t is tile[i * BLOCK_THREADS + t]. Consecutive threads read
//            consecutive addresses, so every load instruction is fully coalesced. This is
//            the layout the predicates, probes and compaction in this library assume.
//   blocked: item i of thread t is tile[t * ITEMS_PER_THREAD + i]. Each thread owns a
//            contiguous run (useful for sorted or run-length data); loads are strided.
// Each layout has a full-tile form (no bounds checks: every tile but the last) and a
// guarded form taking `num_items`, the valid items of a partial tile; items past the
// end are left untouched.
#pragma once
#include "types.cuh"

namespace tessera {

/// Loads a full tile in striped layout.
///   T                 item type
///   BLOCK_THREADS     threads in the block (a multiple of the warp size)
///   ITEMS_PER_THREAD  items each thread holds
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_load_striped(const T* block_in, T (&items)[ITEMS_PER_THREAD]) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        items[i] = block_in[i * BLOCK_THREADS + threadIdx.x];
    }
}

/// Loads the first `num_items` items of a partial tile in striped layout.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_load_striped_guarded(const T* block_in,
                                                           T (&items)[ITEMS_PER_THREAD],
                                                           int num_items) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = i * BLOCK_THREADS + threadIdx.x;
        if (idx < num_items) items[i] = block_in[idx];
    }
}

/// Loads a tile in striped layout, choosing the full or guarded form.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_load(const T* block_in, T (&items)[ITEMS_PER_THREAD],
                                           int num_items) {
    if (num_items == BLOCK_THREADS * ITEMS_PER_THREAD) {
        block_load_striped<T, BLOCK_THREADS, ITEMS_PER_THREAD>(block_in, items);
    } else {
        block_load_striped_guarded<T, BLOCK_THREADS, ITEMS_PER_THREAD>(block_in, items, num_items);
    }
}

/// Loads, in striped layout, only the items whose selection flag is set: columns needed
/// only by rows that survived earlier predicates are not read for the others, which saves
/// memory bandwidth when the selectivity is low (Crystal's BlockLoadSel). Flags of items
/// past `num_items` must be 0, as the predicates leave them.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_load_striped_selective(const T* block_in,
                                                             T (&items)[ITEMS_PER_THREAD],
                                                             const int (&selection_flags)[ITEMS_PER_THREAD],
                                                             int num_items) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = i * BLOCK_THREADS + threadIdx.x;
        if (selection_flags[i] && idx < num_items) items[i] = block_in[idx];
    }
}

/// Loads a full tile in blocked layout.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_load_blocked(const T* block_in, T (&items)[ITEMS_PER_THREAD]) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
    const T* thread_in = block_in + threadIdx.x * ITEMS_PER_THREAD;
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        items[i] = thread_in[i];
    }
}

/// Loads the first `num_items` items of a partial tile in blocked layout.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_load_blocked_guarded(const T* block_in,
                                                           T (&items)[ITEMS_PER_THREAD],
                                                           int num_items) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = threadIdx.x * ITEMS_PER_THREAD + i;
        if (idx < num_items) items[i] = block_in[idx];
    }
}

/// Sets every selection flag to 1 for the valid items of a tile in striped layout and to
/// 0 past `num_items`: the starting point of a predicate chain.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_init_flags(int (&selection_flags)[ITEMS_PER_THREAD], int num_items) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        selection_flags[i] = (i * BLOCK_THREADS + (int)threadIdx.x) < num_items;
    }
}

}  // namespace tessera
