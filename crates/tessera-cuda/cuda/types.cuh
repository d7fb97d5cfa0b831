// types.cuh: fixed-width integer types and the 128-bit integer.
//
// NVRTC ships no system headers (<stdint.h>, <cstdint> are not found), so the device
// library defines the fixed-width types that kernels use (8 to 64 bits) itself. Under
// nvcc (used only to lint these headers by hand) the system definitions are used instead,
// which are the same types on LP64 Linux except that int64_t is `long` there and
// `long long` here; both are 64 bits.
#pragma once

#if defined(__CUDACC_RTC__)
typedef int int32_t;
typedef long long int64_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned short uint16_t;
typedef unsigned char uint8_t;
#else
#include <stdint.h>
#endif

static_assert(sizeof(int32_t) == 4 && sizeof(uint32_t) == 4, "int32_t must be 4 bytes");
static_assert(sizeof(int64_t) == 8 && sizeof(uint64_t) == 8, "int64_t must be 8 bytes");

namespace tessera {

/// A signed 128-bit integer in two's complement, as two 64-bit halves. Used for SUM over
/// DECIMAL columns, whose totals overflow 64 bits (TPC-H sum(l_extendedprice *
/// (1 - l_discount)) at scale factor 100 needs about 70 bits).
///
/// Deliberately an aggregate without constructors, so that it can live in `__shared__`
/// memory (generated kernels keep per-block partial sums there).
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

}  // namespace tessera
