// atomics.cuh: global-memory atomics for aggregation results.
//
// One atomic per warp or block (after a reduction) is the pattern: per-row atomics on one
// address serialize and cost far more than the reduction.
#pragma once
#include "types.cuh"

namespace tessera {

/// *addr += value for 128-bit integers, as two 64-bit atomics:
///
///     old_lo = atomicAdd(&addr->lo, value.lo)
///     carry  = (old_lo + value.lo overflowed 64 bits) ? 1 : 0
///     atomicAdd(&addr->hi, value.hi + carry)
///
/// Why the final value is exact. Write every addend as v = v.hi * 2^64 + v.lo (mod 2^128).
/// The atomics on `lo` are linearizable: they happen in some total order, and each sees the
/// exact low word left by its predecessor. So each addend's carry is computed from the true
/// running low word, and the carries counted over all addends are exactly the number of
/// times the low word wrapped, i.e. floor((lo_0 + sum v.lo) / 2^64) where lo_0 is the
/// initial low word. The additions to `hi` commute, so whatever order they land in, hi ends
/// as hi_0 + sum v.hi + (number of carries) mod 2^64. Together (hi, lo) is
/// (hi_0, lo_0) + sum v mod 2^128: the exact total, for signed values too (two's complement).
///
/// What it does not give: a consistent snapshot while additions are in flight. Between the
/// two atomics of one addition, a reader can see the new low word with the old high word.
/// Read the result only after the kernel has finished (a later kernel or the host after
/// synchronizing). The returned value is the old low/high pair and is likewise torn; it is
/// returned for symmetry only.
__device__ __forceinline__ Int128 atomic_add_i128(Int128* addr, Int128 value) {
    unsigned long long old_lo = atomicAdd((unsigned long long*)&addr->lo, (unsigned long long)value.lo);
    unsigned long long new_lo = old_lo + value.lo;
    unsigned long long carry = new_lo < old_lo ? 1ull : 0ull;
    unsigned long long hi_add = value.hi + carry;
    unsigned long long old_hi = hi_add != 0
        ? atomicAdd((unsigned long long*)&addr->hi, hi_add)
        : 0ull;
    return make_int128(old_lo, old_hi);
}

/// A sum of 64-bit values kept as two 64-bit words: `lo` adds each value's low 32 bits
/// (unsigned), `hi` its high 32 bits (signed), and the total is hi * 2^32 + lo. Neither
/// word can overflow before 2^32 additions (lo < 2^32 * 2^32, |hi| <= 2^31 * 2^32), so the
/// total is exact for fewer than 2^32 rows — and, unlike atomic_add_i128, no addition
/// needs the old value back: both atomics are fire-and-forget reductions (RED), so a
/// thread does not wait on an L2 round trip per row.
struct SplitSum {
    /// Sum of the values' low 32 bits, as unsigned.
    uint64_t lo;
    /// Sum of the values' high 32 bits, as signed (two's complement in the word).
    uint64_t hi;
};

/// *addr += value (see SplitSum); values below 2^32 and at least 0 touch `lo` only.
__device__ __forceinline__ void atomic_add_split(SplitSum* addr, int64_t value) {
    atomicAdd((unsigned long long*)&addr->lo, (unsigned long long)(uint32_t)value);
    const int64_t hi = value >> 32;
    if (hi != 0) atomicAdd((unsigned long long*)&addr->hi, (unsigned long long)hi);
}

}  // namespace tessera
