// expr.cuh: what generated pipeline kernels call for their expressions and aggregates:
// checked integer results, calendar years, 128-bit conversions and warp reductions.
#pragma once
#include "types.cuh"

namespace tessera {

// The value of an exact integer computation, or 0 with the thread's `overflow` set
// where it leaves lo ..= hi. A pipeline kernel writes `overflow` to flags[0] once, after
// its last tile: raising the flag where it happened kept a predicated store and the
// flags' address in every row's path (SSB q1.1's sum of products, 5 of its 25
// instructions a selected item).
__device__ __forceinline__ long long tessera_checked(__int128 v, long long lo, long long hi, bool& overflow) {
    if (v < (__int128)lo || v > (__int128)hi) { overflow = true; return 0; }
    return (long long)v;
}

// The same for a value computed exactly in 64 bits (operands known small enough).
__device__ __forceinline__ long long tessera_checked64(long long v, long long lo, long long hi, bool& overflow) {
    if (v < lo || v > hi) { overflow = true; return 0; }
    return v;
}

// The two raising flags[0] themselves, for helpers that take the flags and for kernels
// generated before the thread's flag (`tests/kernels/`).
__device__ __forceinline__ long long tessera_checked(__int128 v, long long lo, long long hi, unsigned long long* flags) {
    if (v < (__int128)lo || v > (__int128)hi) { flags[0] = 1ull; return 0; }
    return (long long)v;
}
__device__ __forceinline__ long long tessera_checked64(long long v, long long lo, long long hi, unsigned long long* flags) {
    if (v < lo || v > hi) { flags[0] = 1ull; return 0; }
    return v;
}

// Integer division (truncating) or remainder (the dividend's sign) of l by r, whose type's
// smallest value is lo. A zero divisor and lo by -1 (an overflow either way, as the CPU
// backend has it) raise flags[0] (the query then runs on the CPU, which reports it) and
// give 0.
__device__ __forceinline__ __int128 tessera_div(long long l, long long r, long long lo, bool rem, unsigned long long* flags) {
    if (r == 0 || (r == -1 && l == lo)) { flags[0] = 1ull; return 0; }
    return rem ? (__int128)l % (__int128)r : (__int128)l / (__int128)r;
}

// Decimal division as Arrow computes it: the dividend, already scaled, by the divisor,
// truncated toward zero. A zero divisor raises flags[0] and gives 0 (the CPU backend
// reports the error).
__device__ __forceinline__ __int128 tessera_decimal_div(__int128 l, long long r, unsigned long long* flags) {
    if (r == 0) { flags[0] = 1ull; return 0; }
    return l / (__int128)r;
}

// Decimal remainder as Arrow computes it: both operands already at one scale, the
// remainder truncated (the dividend's sign). A zero divisor raises flags[0] and gives 0
// (the CPU backend reports the error).
__device__ __forceinline__ __int128 tessera_decimal_rem(__int128 l, __int128 r, unsigned long long* flags) {
    if (r == 0) { flags[0] = 1ull; return 0; }
    return l % r;
}

// Calendar year of a day number (days since 1970-01-01), proleptic Gregorian.
__device__ __forceinline__ long long tessera_year(long long days) {
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    long long m = mp < 10 ? mp + 3 : mp - 9;
    return yoe + era * 400 + (m <= 2 ? 1 : 0);
}

// A 64-bit value as a 128-bit one (sign-extended).
__device__ __forceinline__ Int128 tessera_i128(long long v) {
    return make_int128((unsigned long long)v, v < 0 ? ~0ull : 0ull);
}

// Sum of a 128-bit value over the warp (lane 0 gets the total).
__device__ __forceinline__ Int128 tessera_warp_sum(Int128 v) {
    for (int d = 16; d > 0; d /= 2) {
        unsigned long long lo = __shfl_down_sync(0xffffffffu, v.lo, d);
        unsigned long long hi = __shfl_down_sync(0xffffffffu, v.hi, d);
        unsigned long long nlo = v.lo + lo;
        v.hi = v.hi + hi + (nlo < v.lo ? 1ull : 0ull);
        v.lo = nlo;
    }
    return v;
}

// A double's bits to its order key and back (codegen/layout.rs, `float_order_key`): the
// lower 63 bits flipped when the sign is set, so that integer order is IEEE 754's total
// order. The transform undoes itself.
__device__ __forceinline__ long long tessera_order_bits(long long bits) {
    return bits ^ (long long)(((unsigned long long)(bits >> 63)) >> 1);
}

// A double as kernels hold floats: its order key.
__device__ __forceinline__ long long tessera_float_key(double v) {
    return tessera_order_bits(__double_as_longlong(v));
}

// The double of an order key.
__device__ __forceinline__ double tessera_float_of_key(long long key) {
    return __longlong_as_double(tessera_order_bits(key));
}

// A double (as its order key) cast to a decimal: round(mul * v), mul = 10^scale, as
// Arrow's cast computes it (round half away from zero, as C's round), or a flagged
// overflow (flags[0]) where that is not a value in [lo, hi]: NaN and the infinities among
// them, for which the CPU backend reports Arrow's error.
__device__ __forceinline__ long long tessera_float_to_decimal(long long key, double mul, long long lo, long long hi, unsigned long long* flags) {
    const double r = round(mul * tessera_float_of_key(key));
    if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0)) { flags[0] = 1ull; return 0; }
    return tessera_checked((__int128)(long long)r, lo, hi, flags);
}

__device__ __forceinline__ unsigned long long tessera_warp_sum(unsigned long long v) {
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__device__ __forceinline__ double tessera_warp_sum_f64(double v) {
    for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

__device__ __forceinline__ long long tessera_warp_min(long long v) {
    for (int d = 16; d > 0; d /= 2) { long long o = __shfl_down_sync(0xffffffffu, v, d); v = o < v ? o : v; }
    return v;
}

__device__ __forceinline__ long long tessera_warp_max(long long v) {
    for (int d = 16; d > 0; d /= 2) { long long o = __shfl_down_sync(0xffffffffu, v, d); v = o > v ? o : v; }
    return v;
}

// Combining within a warp's lanes that add into one group (`peers`, from
// `__match_any_sync`; every lane of `peers` calls with the same mask and so loops as
// often): each lane gets its peers' values folded by `combine`, read one peer a shuffle.
template <typename Combine>
__device__ __forceinline__ long long tessera_peer_fold(unsigned int peers, long long v, Combine combine) {
    unsigned int rest = peers & ~(1u << (threadIdx.x & 31u));
    long long t = v;
    while (rest != 0u) { const int src = __ffs(rest) - 1; rest &= rest - 1u; t = combine(t, __shfl_sync(peers, v, src)); }
    return t;
}

__device__ __forceinline__ long long tessera_peer_sum(unsigned int peers, long long v) {
    return tessera_peer_fold(peers, v, [](long long a, long long b) { return a + b; });
}

__device__ __forceinline__ long long tessera_peer_min(unsigned int peers, long long v) {
    return tessera_peer_fold(peers, v, [](long long a, long long b) { return b < a ? b : a; });
}

__device__ __forceinline__ long long tessera_peer_max(unsigned int peers, long long v) {
    return tessera_peer_fold(peers, v, [](long long a, long long b) { return b > a ? b : a; });
}

}  // namespace tessera
