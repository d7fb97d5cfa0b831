// probe_study.cuh: where a multi-probe scan's membership bitmaps should live, for
// `tessera bench probes` (tessera-cuda/src/probe_study.rs; not generated code, not part of
// tessera.cuh).
//
// The probe is shaped like SSB q3.1's at SF 20: per row a 16-bit supplier key tested
// against a 5 KB bitmap, for the rows that pass a 32-bit customer key against a 75 KB
// bitmap and a 16-bit date key against an 8 KB one, and for the rows that pass all three a
// 32-bit value loaded late and summed. Generated pipelines keep bitmaps in global memory
// (L1 keeps the small ones; the customer's comes from L2) with blocks of 128 threads; the
// study also copies the customer's bitmap, or all three, into each block's shared memory,
// with blocks of 128 to 1024 threads (the larger the block, the fewer copies an SM holds).
// A fourth variant keeps the bitmaps in global memory and loads every row's words a tile
// ahead (ps_probe_ahead). Every variant sums the late values and counts the rows that
// pass, so that their answers can be compared with the host's.
#pragma once
#include "types.cuh"
#include "study.cuh"

namespace tessera {

__device__ __forceinline__ bool ps_bit(const uint32_t* bits, uint32_t s) {
    return ((bits[s >> 5] >> (s & 31u)) & 1u) != 0u;
}

__device__ __forceinline__ bool ps_bit_ldg(const uint32_t* __restrict__ bits, uint32_t s) {
    return ((__ldg(&bits[s >> 5]) >> (s & 31u)) & 1u) != 0u;
}

// Adds a warp's sums of the passing rows' values and their count into out[0] and out[1].
__device__ __forceinline__ void ps_flush(unsigned long long sum, unsigned long long count, unsigned long long* out) {
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, o);
        count += __shfl_down_sync(0xffffffffu, count, o);
    }
    if ((threadIdx.x & 31u) == 0u && count != 0ull) {
        atomicAdd(&out[0], sum);
        atomicAdd(&out[1], count);
    }
}

// The probe over rows [0, n): tiles of blockDim.x × ITEMS rows, grid-stride, the next
// tile's keys loaded a tile ahead into registers (as generated pipelines do). SHARED: 0
// every bitmap read from global memory, 1 the customer's copied into the block's dynamic
// shared memory first, 2 all three. Adds the passing rows' values and their count into
// out[0] and out[1].
template <int ITEMS, int SHARED>
__device__ __forceinline__ void ps_probe(const uint32_t* __restrict__ cust, const uint16_t* __restrict__ supp, const uint16_t* __restrict__ date,
                                         const uint32_t* __restrict__ value, long long n, const uint32_t* __restrict__ cbits, int cwords,
                                         const uint32_t* __restrict__ sbits, int swords, const uint32_t* __restrict__ dbits, int dwords,
                                         unsigned long long* out) {
    extern __shared__ uint32_t ps_shared[];
    const uint32_t* cb = cbits;
    const uint32_t* sb = sbits;
    const uint32_t* db = dbits;
    if (SHARED >= 1) {
        for (int w = threadIdx.x; w < cwords; w += blockDim.x) ps_shared[w] = cbits[w];
        cb = ps_shared;
    }
    if (SHARED >= 2) {
        for (int w = threadIdx.x; w < swords; w += blockDim.x) ps_shared[cwords + w] = sbits[w];
        for (int w = threadIdx.x; w < dwords; w += blockDim.x) ps_shared[cwords + swords + w] = dbits[w];
        sb = ps_shared + cwords;
        db = ps_shared + cwords + swords;
    }
    if (SHARED >= 1) __syncthreads();
    const long long rows_a_tile = (long long)blockDim.x * ITEMS, stride = (long long)gridDim.x * rows_a_tile;
    unsigned long long sum = 0ull, count = 0ull;
    long long tile = (long long)blockIdx.x * rows_a_tile;
    uint32_t nc[ITEMS], ns[ITEMS], nd[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const long long r = tile + threadIdx.x + (long long)i * blockDim.x;
        nc[i] = r < n ? cust[r] : 0u;
        ns[i] = r < n ? supp[r] : 0u;
        nd[i] = r < n ? date[r] : 0u;
    }
    for (; tile < n; tile += stride) {
        uint32_t c[ITEMS], s[ITEMS], d[ITEMS];
        bool sel[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            c[i] = nc[i];
            s[i] = ns[i];
            d[i] = nd[i];
        }
        const long long next = tile + stride;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const long long r = next + threadIdx.x + (long long)i * blockDim.x;
            if (r < n) {
                nc[i] = cust[r];
                ns[i] = supp[r];
                nd[i] = date[r];
            }
        }
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const long long r = tile + threadIdx.x + (long long)i * blockDim.x;
            sel[i] = r < n && (SHARED >= 2 ? ps_bit(sb, s[i]) : ps_bit_ldg(sb, s[i]));
        }
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            if (!sel[i]) continue;
            const bool in_c = SHARED >= 1 ? ps_bit(cb, c[i]) : ps_bit_ldg(cb, c[i]);
            const bool in_d = SHARED >= 2 ? ps_bit(db, d[i]) : ps_bit_ldg(db, d[i]);
            sel[i] = in_c && in_d;
        }
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            if (!sel[i]) continue;
            const long long r = tile + threadIdx.x + (long long)i * blockDim.x;
            sum += value[r];
            count += 1ull;
        }
    }
    ps_flush(sum, count, out);
}

// The same probe with every bitmap's words loaded a tile ahead: while tile t is tested,
// the words of tile t + stride are loaded from its keys (which arrived a tile earlier)
// and the keys of the tile after it; the three words of every row are loaded, not only
// the customer's and date's of the rows the supplier's test lets through. The tests of a
// tile then wait on nothing but the words loaded an iteration before; it costs more
// lookups (three a row instead of 1.2) and registers.
template <int ITEMS>
__device__ __forceinline__ void ps_probe_ahead(const uint32_t* __restrict__ cust, const uint16_t* __restrict__ supp, const uint16_t* __restrict__ date,
                                               const uint32_t* __restrict__ value, long long n, const uint32_t* __restrict__ cb,
                                               const uint32_t* __restrict__ sb, const uint32_t* __restrict__ db, unsigned long long* out) {
    const long long rows_a_tile = (long long)blockDim.x * ITEMS, stride = (long long)gridDim.x * rows_a_tile;
    unsigned long long sum = 0ull, count = 0ull;
    long long tile = (long long)blockIdx.x * rows_a_tile;
    // kc/ks/kd: a tile's keys; wc/ws/wd: its words; the current tile's and the next's.
    uint32_t kc[ITEMS], ks[ITEMS], kd[ITEMS], wc[ITEMS], ws[ITEMS], wd[ITEMS];
    uint32_t nc[ITEMS], ns[ITEMS], nd[ITEMS];
    auto keys = [&](long long t, uint32_t* c, uint32_t* s, uint32_t* d) {
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const long long r = t + threadIdx.x + (long long)i * blockDim.x;
            c[i] = r < n ? cust[r] : 0u;
            s[i] = r < n ? supp[r] : 0u;
            d[i] = r < n ? date[r] : 0u;
        }
    };
    keys(tile, kc, ks, kd);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        wc[i] = __ldg(&cb[kc[i] >> 5]);
        ws[i] = __ldg(&sb[ks[i] >> 5]);
        wd[i] = __ldg(&db[kd[i] >> 5]);
    }
    keys(tile + stride, nc, ns, nd);
    for (; tile < n; tile += stride) {
        uint32_t c[ITEMS], s[ITEMS], d[ITEMS], xc[ITEMS], xs[ITEMS], xd[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            c[i] = kc[i]; s[i] = ks[i]; d[i] = kd[i];
            xc[i] = wc[i]; xs[i] = ws[i]; xd[i] = wd[i];
            // The next tile's words, from its keys; then the keys of the tile after it.
            kc[i] = nc[i]; ks[i] = ns[i]; kd[i] = nd[i];
            wc[i] = __ldg(&cb[kc[i] >> 5]);
            ws[i] = __ldg(&sb[ks[i] >> 5]);
            wd[i] = __ldg(&db[kd[i] >> 5]);
        }
        keys(tile + 2 * stride, nc, ns, nd);
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const long long r = tile + threadIdx.x + (long long)i * blockDim.x;
            const bool in = r < n && ((xs[i] >> (s[i] & 31u)) & 1u) != 0u && ((xc[i] >> (c[i] & 31u)) & 1u) != 0u && ((xd[i] >> (d[i] & 31u)) & 1u) != 0u;
            if (in) {
                sum += value[r];
                count += 1ull;
            }
        }
    }
    ps_flush(sum, count, out);
}

}  // namespace tessera

// Row i's keys and value: each key uniform over its table's slots (the slot itself, as a
// dense table's probe computes it), the value in [1, 10000].
extern "C" __global__ void tessera_ps_gen(uint32_t* cust, uint16_t* supp, uint16_t* date, uint32_t* value, long long n, unsigned long long seed,
                                          unsigned int cust_slots, unsigned int supp_slots, unsigned int date_slots) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long a = tessera::study_splitmix(seed + 4ull * (unsigned long long)i), b = tessera::study_splitmix(seed + 4ull * (unsigned long long)i + 1ull);
        cust[i] = (uint32_t)((a & 0xffffffffull) % cust_slots);
        supp[i] = (uint16_t)((a >> 32) % supp_slots);
        date[i] = (uint16_t)((b & 0xffffffffull) % date_slots);
        value[i] = (uint32_t)((b >> 32) % 10000ull) + 1u;
    }
}

// A membership bitmap of `words` words: bit s set when study_splitmix(seed + s) % 1000 < permille.
extern "C" __global__ void tessera_ps_bits(uint32_t* bits, long long words, unsigned long long seed, unsigned int permille) {
    for (long long w = (long long)blockIdx.x * blockDim.x + threadIdx.x; w < words; w += (long long)gridDim.x * blockDim.x) {
        uint32_t word = 0u;
        for (unsigned int b = 0; b < 32u; ++b) {
            if (tessera::study_splitmix(seed + 32ull * (unsigned long long)w + b) % 1000ull < permille) word |= 1u << b;
        }
        bits[w] = word;
    }
}

#define TESSERA_PS_PROBE(NAME, SHARED)                                                                                                   \
    extern "C" __global__ void NAME(const uint32_t* __restrict__ cust, const uint16_t* __restrict__ supp, const uint16_t* __restrict__ date, \
                                    const uint32_t* __restrict__ value, long long n, const uint32_t* __restrict__ cbits, int cwords,         \
                                    const uint32_t* __restrict__ sbits, int swords, const uint32_t* __restrict__ dbits, int dwords,         \
                                    unsigned long long* out) {                                                                             \
        tessera::ps_probe<2, SHARED>(cust, supp, date, value, n, cbits, cwords, sbits, swords, dbits, dwords, out);                        \
    }
// Two rows a thread a tile, as generated pipelines with several probes take.
TESSERA_PS_PROBE(tessera_ps_probe_global, 0)
TESSERA_PS_PROBE(tessera_ps_probe_shared_customer, 1)
TESSERA_PS_PROBE(tessera_ps_probe_shared_all, 2)
// Every bitmap's words a tile ahead (global memory). It compiles to 48 registers (the
// others to 32); held to 32 by __launch_bounds__ it spills (2026-11-30c runs 7 and 8).
extern "C" __global__ void tessera_ps_probe_ahead(const uint32_t* __restrict__ cust, const uint16_t* __restrict__ supp, const uint16_t* __restrict__ date,
                                                  const uint32_t* __restrict__ value, long long n, const uint32_t* __restrict__ cbits, int cwords,
                                                  const uint32_t* __restrict__ sbits, int swords, const uint32_t* __restrict__ dbits, int dwords,
                                                  unsigned long long* out) {
    tessera::ps_probe_ahead<2>(cust, supp, date, value, n, cbits, sbits, dbits, out);
}
