// join_study.cuh: the two ways to join a build side far larger than L2, side by side, for
// `tessera bench joins` (tessera-cuda/src/join_study.rs; not generated code, not part of
// tessera.cuh).
//
// - No partitioning, as generated pipelines join: one open-addressing table of the whole
//   build side in global memory (hash.cuh's layout: 64-bit keys by slot, the payload in an
//   array beside), built by one kernel and probed by another.
// - Radix partitioning (the GPU join of He et al. and Sioulas et al.): both sides are split
//   by the top bits of the key's hash, in one or two passes of histogram, scan and scatter,
//   until each build partition fits a table in shared memory; one block then joins a
//   partition pair at a time out of shared memory.
//
// Both sum the build payload and the probe payload of every match, so that their answers
// can be compared with the host's. Row counts stay below 2^32 here (positions are 32-bit).
#pragma once
#include "hash.cuh"
#include "study.cuh"

namespace tessera {

// The 64-bit finalizer of tessera_hash_slot, unmasked: partitions take its top bits,
// shared-memory tables its low bits.
__device__ __forceinline__ unsigned long long js_mix(unsigned long long key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return key;
}

// Build row i's key: i + 1 times an odd constant, a bijection, so keys are unique and
// unordered (join_study.rs checks that none is the empty key).
__device__ __forceinline__ unsigned long long js_build_key(unsigned long long i) { return (i + 1) * 0x9e3779b97f4a7c15ull; }

// Build row i's payload, and probe row j's.
__device__ __forceinline__ unsigned int js_build_payload(unsigned long long i) { return (unsigned int)(i * 2654435761ull + 12345u); }
__device__ __forceinline__ unsigned int js_probe_payload(unsigned long long j) { return (unsigned int)(j * 40503u + 7u); }

// Adds a thread's (sum, count) into out[0], out[1]: a warp reduction, one atomic a warp.
__device__ __forceinline__ void js_add_out(unsigned long long sum, unsigned long long count, unsigned long long* out) {
    for (int d = 16; d > 0; d >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, d);
        count += __shfl_down_sync(0xffffffffu, count, d);
    }
    if ((threadIdx.x & 31) == 0 && count != 0) {
        atomicAdd(&out[0], sum);
        atomicAdd(&out[1], count);
    }
}

}  // namespace tessera

using namespace tessera;

extern "C" __global__ void tessera_js_gen_build(unsigned long long* keys, unsigned int* vals, long long n) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        keys[i] = js_build_key(i);
        vals[i] = js_build_payload(i);
    }
}

// Probe row j joins build row splitmix(seed + j) mod build_rows: every probe row matches
// once, as a foreign key does.
extern "C" __global__ void tessera_js_gen_probe(unsigned long long* keys, unsigned int* vals, long long n, long long build_rows, unsigned long long seed) {
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n; j += (long long)gridDim.x * blockDim.x) {
        keys[j] = js_build_key(tessera::study_splitmix(seed + j) % (unsigned long long)build_rows);
        vals[j] = js_probe_payload(j);
    }
}

extern "C" __global__ void tessera_js_fill(unsigned long long* a, long long n, unsigned long long value) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) a[i] = value;
}

// ---- No partitioning -------------------------------------------------------------------

// out[2] counts rows that found no slot (a duplicate or a full table: neither may happen).
extern "C" __global__ void tessera_js_build(const unsigned long long* __restrict__ keys, const unsigned int* __restrict__ vals, long long n, unsigned long long* table, unsigned int* payload, unsigned long long mask, unsigned long long* out) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const long long s = tessera_hash_insert_unique(table, mask, keys[i]);
        if (s >= 0) payload[s] = vals[i];
        else atomicAdd(&out[2], 1ull);
    }
}

// Four rows a thread in flight at once, as a generated tile of four items does.
#define JS_ITEMS 4
extern "C" __global__ void tessera_js_probe(const unsigned long long* __restrict__ keys, const unsigned int* __restrict__ vals, long long n, const unsigned long long* __restrict__ table, const unsigned int* __restrict__ payload, unsigned long long mask, unsigned long long* out) {
    unsigned long long sum = 0, count = 0;
    const long long step = (long long)gridDim.x * blockDim.x * JS_ITEMS;
    for (long long base = (long long)blockIdx.x * blockDim.x * JS_ITEMS; base < n; base += step) {
        unsigned long long k[JS_ITEMS];
        long long s[JS_ITEMS];
#pragma unroll
        for (int t = 0; t < JS_ITEMS; ++t) {
            const long long i = base + t * blockDim.x + threadIdx.x;
            k[t] = i < n ? keys[i] : TESSERA_EMPTY_KEY;
        }
#pragma unroll
        for (int t = 0; t < JS_ITEMS; ++t) s[t] = k[t] == TESSERA_EMPTY_KEY ? -1 : tessera_hash_find(table, mask, k[t]);
#pragma unroll
        for (int t = 0; t < JS_ITEMS; ++t) {
            if (s[t] >= 0) {
                sum += __ldg(&payload[s[t]]) + (unsigned long long)vals[base + t * blockDim.x + threadIdx.x];
                ++count;
            }
        }
    }
    js_add_out(sum, count, out);
}

// ---- Radix partitioning ----------------------------------------------------------------

// The partition of a key: the top `bits` bits of its hash.
__device__ __forceinline__ unsigned int js_part(unsigned long long key, int bits) { return (unsigned int)(js_mix(key) >> (64 - bits)); }

// hist[p] += rows of partition p (hist zeroed by the caller). Shared: 4 << bits bytes.
extern "C" __global__ void tessera_js_histogram(const unsigned long long* __restrict__ keys, long long n, int bits, unsigned int* hist) {
    extern __shared__ unsigned int js_counts[];
    const int parts = 1 << bits;
    for (int p = threadIdx.x; p < parts; p += blockDim.x) js_counts[p] = 0;
    __syncthreads();
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) atomicAdd(&js_counts[js_part(keys[i], bits)], 1u);
    __syncthreads();
    for (int p = threadIdx.x; p < parts; p += blockDim.x)
        if (js_counts[p] != 0) atomicAdd(&hist[p], js_counts[p]);
}

// start[p] = rows before partition p, start[parts] = all rows, cursor[p] = start[p]. One
// block of 1024 threads: each sums a run of partitions, a Hillis-Steele scan over the
// threads' sums, then each writes its run.
extern "C" __global__ void tessera_js_scan(const unsigned int* __restrict__ hist, int parts, unsigned int* start, unsigned int* cursor) {
    __shared__ unsigned int sums[1024];
    const int per = (parts + 1023) / 1024;
    const int first = threadIdx.x * per;
    unsigned int own = 0;
    for (int p = first; p < first + per && p < parts; ++p) own += hist[p];
    sums[threadIdx.x] = own;
    __syncthreads();
    for (int d = 1; d < 1024; d <<= 1) {
        const unsigned int add = threadIdx.x >= d ? sums[threadIdx.x - d] : 0;
        __syncthreads();
        sums[threadIdx.x] += add;
        __syncthreads();
    }
    unsigned int at = sums[threadIdx.x] - own;
    for (int p = first; p < first + per && p < parts; ++p) {
        start[p] = at;
        cursor[p] = at;
        at += hist[p];
    }
    if (threadIdx.x == 1023) start[parts] = sums[1023];
}

// Moves each row to its partition. A block takes `chunk` consecutive rows: it counts them
// per partition in shared memory, reserves each partition's run with one global atomic,
// then places its rows in the runs (rows of one partition land side by side). Shared:
// 4 << bits bytes.
extern "C" __global__ void tessera_js_scatter(const unsigned long long* __restrict__ keys, const unsigned int* __restrict__ vals, long long n, int bits, long long chunk, unsigned int* cursor, unsigned long long* out_keys, unsigned int* out_vals) {
    extern __shared__ unsigned int js_runs[];
    const int parts = 1 << bits;
    for (long long lo = (long long)blockIdx.x * chunk; lo < n; lo += (long long)gridDim.x * chunk) {
        const long long hi = min(lo + chunk, n);
        for (int p = threadIdx.x; p < parts; p += blockDim.x) js_runs[p] = 0;
        __syncthreads();
        for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) atomicAdd(&js_runs[js_part(keys[i], bits)], 1u);
        __syncthreads();
        for (int p = threadIdx.x; p < parts; p += blockDim.x)
            if (js_runs[p] != 0) js_runs[p] = atomicAdd(&cursor[p], js_runs[p]);
        __syncthreads();
        for (long long i = lo + threadIdx.x; i < hi; i += blockDim.x) {
            const unsigned long long k = keys[i];
            const unsigned int at = atomicAdd(&js_runs[js_part(k, bits)], 1u);
            out_keys[at] = k;
            out_vals[at] = vals[i];
        }
        __syncthreads();
    }
}

// Joins partition pairs out of shared memory, one pair at a time a block: the build rows
// go into a table of `1 << slot_bits` slots (keys, then 32-bit payloads), then the probe
// rows look themselves up. A build partition of more rows than half the slots is counted
// in out[2] and not joined (the caller sizes the slots so that this does not happen).
extern "C" __global__ void tessera_js_join(const unsigned long long* __restrict__ bkeys, const unsigned int* __restrict__ bvals, const unsigned int* __restrict__ bstart, const unsigned long long* __restrict__ pkeys, const unsigned int* __restrict__ pvals, const unsigned int* __restrict__ pstart, int parts, int slot_bits, unsigned long long* out) {
    extern __shared__ unsigned long long js_table[];
    const unsigned int slots = 1u << slot_bits, mask = slots - 1;
    unsigned int* payload = (unsigned int*)(js_table + slots);
    unsigned long long sum = 0, count = 0;
    for (int p = blockIdx.x; p < parts; p += gridDim.x) {
        const unsigned int b0 = bstart[p], b1 = bstart[p + 1];
        if (b1 - b0 > slots / 2) {
            if (threadIdx.x == 0) atomicAdd(&out[2], (unsigned long long)(b1 - b0));
            continue;
        }
        for (unsigned int s = threadIdx.x; s < slots; s += blockDim.x) js_table[s] = TESSERA_EMPTY_KEY;
        __syncthreads();
        for (unsigned int i = b0 + threadIdx.x; i < b1; i += blockDim.x) {
            const unsigned long long k = bkeys[i];
            unsigned int s = (unsigned int)js_mix(k) & mask;
            while (atomicCAS(&js_table[s], TESSERA_EMPTY_KEY, k) != TESSERA_EMPTY_KEY) s = (s + 1) & mask;
            payload[s] = bvals[i];
        }
        __syncthreads();
        const unsigned int q0 = pstart[p], q1 = pstart[p + 1];
        for (unsigned int i = q0 + threadIdx.x; i < q1; i += blockDim.x) {
            const unsigned long long k = pkeys[i];
            unsigned int s = (unsigned int)js_mix(k) & mask;
            for (;;) {
                const unsigned long long seen = js_table[s];
                if (seen == k) {
                    sum += payload[s] + (unsigned long long)pvals[i];
                    ++count;
                    break;
                }
                if (seen == TESSERA_EMPTY_KEY) break;
                s = (s + 1) & mask;
            }
        }
        __syncthreads();
    }
    js_add_out(sum, count, out);
}
