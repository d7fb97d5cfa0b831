// types.cuh: fixed-width integer types, the 128-bit integer, and block-shape checks.
//
// NVRTC ships no system headers (<stdint.h>, <cstdint> are not found), so the device
// library defines the fixed-width types itself. Under nvcc (used only to lint these
// headers by hand) the system definitions are used instead, which are the same types on
// LP64 Linux except that int64_t is `long` there and `long long` here; both are 64 bits.
#pragma once

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

static_assert(sizeof(int8_t) == 1 && sizeof(uint8_t) == 1, "int8_t must be 1 byte");
static_assert(sizeof(int16_t) == 2 && sizeof(uint16_t) == 2, "int16_t must be 2 bytes");
static_assert(sizeof(int32_t) == 4 && sizeof(uint32_t) == 4, "int32_t must be 4 bytes");
static_assert(sizeof(int64_t) == 8 && sizeof(uint64_t) == 8, "int64_t must be 8 bytes");

namespace tessera {

/// Threads per warp on every NVIDIA architecture Tessera targets (sm_70 and later).
/// Named so that no primitive hard-codes the lane count.
constexpr int WARP_THREADS = 32;

/// Mask naming every lane of a warp, for the *_sync warp intrinsics.
constexpr unsigned FULL_WARP_MASK = 0xffffffffu;

/// Largest thread block CUDA allows.
constexpr int MAX_BLOCK_THREADS = 1024;

/// Compile-time checks shared by every block-wide primitive: the block is a whole number
/// of warps (the warp-shuffle scans and reductions rely on full warps), at most 1024
/// threads, and every thread holds at least one item.
template <int BLOCK_THREADS, int ITEMS_PER_THREAD>
struct BlockShape {
    static_assert(BLOCK_THREADS > 0, "BLOCK_THREADS must be positive");
    static_assert(BLOCK_THREADS % WARP_THREADS == 0,
                  "BLOCK_THREADS must be a multiple of the warp size");
    static_assert(BLOCK_THREADS <= MAX_BLOCK_THREADS, "BLOCK_THREADS must be at most 1024");
    static_assert(ITEMS_PER_THREAD > 0, "ITEMS_PER_THREAD must be positive");
    /// Warps in the block.
    static constexpr int WARPS = BLOCK_THREADS / WARP_THREADS;
    /// Items one block processes per tile.
    static constexpr int TILE_ITEMS = BLOCK_THREADS * ITEMS_PER_THREAD;
};

/// A signed 128-bit integer in two's complement, as two 64-bit halves. Used for SUM over
/// DECIMAL columns, whose totals overflow 64 bits (TPC-H sum(l_extendedprice *
/// (1 - l_discount)) at scale factor 100 needs about 70 bits).
///
/// Deliberately an aggregate without constructors, so that it can live in `__shared__`
/// memory and in the unions of TempStorage that generated kernels declare.
struct Int128 {
    /// Low 64 bits.
    uint64_t lo;
    /// High 64 bits, including the sign bit.
    uint64_t hi;
};

/// Builds an Int128 from its halves.
__device__ __forceinline__ Int128 make_int128(uint64_t lo, uint64_t hi) {
    Int128 r;
    r.lo = lo;
    r.hi = hi;
    return r;
}

/// Sign-extends a 64-bit integer to 128 bits.
__device__ __forceinline__ Int128 int128_from_i64(int64_t v) {
    return make_int128((uint64_t)v, v < 0 ? ~0ull : 0ull);
}

/// 128-bit addition modulo 2^128: the carry out of the low half goes into the high half.
__device__ __forceinline__ Int128 operator+(Int128 a, Int128 b) {
    uint64_t lo = a.lo + b.lo;
    uint64_t carry = lo < a.lo ? 1ull : 0ull;
    return make_int128(lo, a.hi + b.hi + carry);
}

__device__ __forceinline__ Int128& operator+=(Int128& a, Int128 b) {
    a = a + b;
    return a;
}

/// 128-bit subtraction modulo 2^128: the borrow out of the low half comes off the high half.
__device__ __forceinline__ Int128 operator-(Int128 a, Int128 b) {
    uint64_t borrow = a.lo < b.lo ? 1ull : 0ull;
    return make_int128(a.lo - b.lo, a.hi - b.hi - borrow);
}

__device__ __forceinline__ bool operator==(Int128 a, Int128 b) {
    return a.lo == b.lo && a.hi == b.hi;
}

/// Exact product of two signed 64-bit integers as 128 bits (e.g. price * discount on
/// DECIMAL columns). The unsigned high word is corrected for negative operands:
/// for a < 0, a as unsigned is a + 2^64, which adds b * 2^64 to the product.
__device__ __forceinline__ Int128 mul_wide_i64(int64_t a, int64_t b) {
    uint64_t ua = (uint64_t)a;
    uint64_t ub = (uint64_t)b;
    uint64_t lo = ua * ub;
    uint64_t hi = __umul64hi(ua, ub);
    if (a < 0) hi -= ub;
    if (b < 0) hi -= ua;
    return make_int128(lo, hi);
}

/// The additive identity for T, used to pad partial tiles in sums.
template <typename T>
__device__ __forceinline__ T zero_of() {
    return T(0);
}

template <>
__device__ __forceinline__ Int128 zero_of<Int128>() {
    return make_int128(0, 0);
}

namespace detail {

/// __shfl_up_sync for any type the hardware shuffles natively.
template <typename T>
__device__ __forceinline__ T shfl_up(T v, int delta) {
    return __shfl_up_sync(FULL_WARP_MASK, v, delta);
}

/// __shfl_down_sync for any type the hardware shuffles natively.
template <typename T>
__device__ __forceinline__ T shfl_down(T v, int delta) {
    return __shfl_down_sync(FULL_WARP_MASK, v, delta);
}

/// Int128 is shuffled as its two 64-bit halves.
template <>
__device__ __forceinline__ Int128 shfl_up<Int128>(Int128 v, int delta) {
    return make_int128(__shfl_up_sync(FULL_WARP_MASK, v.lo, delta),
                       __shfl_up_sync(FULL_WARP_MASK, v.hi, delta));
}

template <>
__device__ __forceinline__ Int128 shfl_down<Int128>(Int128 v, int delta) {
    return make_int128(__shfl_down_sync(FULL_WARP_MASK, v.lo, delta),
                       __shfl_down_sync(FULL_WARP_MASK, v.hi, delta));
}

}  // namespace detail
}  // namespace tessera
