// pred.cuh: block-wide predicates over a tile in striped layout, writing selection flags.
//
// `block_pred_OP` sets flags[i] = (items[i] OP value) and `block_pred_and_OP` sets
// flags[i] = flags[i] && (items[i] OP value), so a conjunction is a chain of calls. For
// items past `num_items` in a partial tile the flag is set to 0, so later stages (loads,
// probes, aggregation) need no bounds checks of their own. The `_and` forms skip the
// comparison where the flag is already 0 (the item may not have been loaded).
#pragma once
#include "types.cuh"

namespace tessera {
namespace detail {

struct OpEq { template <typename T> __device__ __forceinline__ static bool apply(T x, T a, T) { return x == a; } };
struct OpNe { template <typename T> __device__ __forceinline__ static bool apply(T x, T a, T) { return x != a; } };
struct OpLt { template <typename T> __device__ __forceinline__ static bool apply(T x, T a, T) { return x < a; } };
struct OpLe { template <typename T> __device__ __forceinline__ static bool apply(T x, T a, T) { return x <= a; } };
struct OpGt { template <typename T> __device__ __forceinline__ static bool apply(T x, T a, T) { return x > a; } };
struct OpGe { template <typename T> __device__ __forceinline__ static bool apply(T x, T a, T) { return x >= a; } };
/// Inclusive on both ends, as SQL's BETWEEN.
struct OpBetween { template <typename T> __device__ __forceinline__ static bool apply(T x, T lo, T hi) { return x >= lo && x <= hi; } };

/// flags[i] = valid(i) && Op(items[i]); full tiles skip the bounds check.
template <typename Op, typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD],
                                           T a, T b, int num_items) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
    if (num_items == BLOCK_THREADS * ITEMS_PER_THREAD) {
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) flags[i] = Op::apply(items[i], a, b);
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
            int idx = i * BLOCK_THREADS + threadIdx.x;
            flags[i] = idx < num_items && Op::apply(items[i], a, b);
        }
    }
}

/// flags[i] = flags[i] && valid(i) && Op(items[i]).
template <typename Op, typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD],
                                               T a, T b, int num_items) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = i * BLOCK_THREADS + threadIdx.x;
        flags[i] = flags[i] && idx < num_items && Op::apply(items[i], a, b);
    }
}

}  // namespace detail

// One pair of functions per comparison. Template parameters, as everywhere in this library:
//   T                 item type (any type with the comparison operators)
//   BLOCK_THREADS     threads in the block
//   ITEMS_PER_THREAD  items each thread holds

/// flags[i] = items[i] == value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_eq(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred<detail::OpEq, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = flags[i] && items[i] == value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_eq(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred_and<detail::OpEq, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = items[i] != value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_ne(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred<detail::OpNe, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = flags[i] && items[i] != value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_ne(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred_and<detail::OpNe, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = items[i] < value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_lt(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred<detail::OpLt, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = flags[i] && items[i] < value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_lt(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred_and<detail::OpLt, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = items[i] <= value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_le(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred<detail::OpLe, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = flags[i] && items[i] <= value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_le(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred_and<detail::OpLe, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = items[i] > value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_gt(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred<detail::OpGt, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = flags[i] && items[i] > value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_gt(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred_and<detail::OpGt, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = items[i] >= value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_ge(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred<detail::OpGe, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = flags[i] && items[i] >= value
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_ge(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T value, int num_items) {
    detail::block_pred_and<detail::OpGe, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, value, value, num_items);
}
/// flags[i] = lo <= items[i] <= hi
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_between(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T lo, T hi, int num_items) {
    detail::block_pred<detail::OpBetween, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, hi, num_items);
}
/// flags[i] = flags[i] && lo <= items[i] <= hi
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ __forceinline__ void block_pred_and_between(const T (&items)[ITEMS_PER_THREAD], int (&flags)[ITEMS_PER_THREAD], T lo, T hi, int num_items) {
    detail::block_pred_and<detail::OpBetween, T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, hi, num_items);
}

}  // namespace tessera
