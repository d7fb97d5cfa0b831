// records.cuh: the runtime's kernels around an aggregation's groups (not generated code).
//
// Launched by the executor (tessera-exec, gpu.rs: `GpuRuntime::fill` and `fetch_groups`),
// from a module whose whole source is tessera_cuda::library::RECORDS_SOURCE, i.e.
// `#include "records.cuh"`. Before a pipeline: tessera_fill_u64 sets accumulator arrays
// (MIN, MAX) to their start value. After it, for large group domains and GPU sorts:
// tessera_count_seen and tessera_compact_records_ordered turn the groups seen into
// records in group-number order, tessera_gather_records copies each accumulator's words
// into them, tessera_rank_records orders them for an ORDER BY; before them,
// tessera_having drops the groups a HAVING rejects; tessera_result_column turns them
// into the columns of a result kept on the GPU for the pipelines reading it there. Not
// included by tessera.cuh: its __global__ kernels would be compiled into every generated
// pipeline's module.
#pragma once
#include "types.cuh"
#include "expr.cuh"

// Sets a[0..n) to v.
extern "C" __global__ void tessera_fill_u64(unsigned long long* a, long long n, unsigned long long v) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) a[i] = v;
}
// A group's aggregate value from its words `a`, by kind (Accumulator::record_kind):
// 1: signed 128-bit, low word first; 2: unsigned 64-bit; 3: signed 64-bit; 4: a
// SplitSum, the unsigned low-half sum then the signed high-half sum; 5: a double, as its
// total-order key (codegen/layout.rs, `float_order_key`), which orders like the doubles.
__device__ __int128 tessera_record_value(long long kind, const unsigned long long* a) {
    if (kind == 1) return ((__int128)(long long)a[1] << 64) | (__int128)a[0];
    if (kind == 2) return (__int128)a[0];
    if (kind == 4) return (__int128)(long long)a[1] * 4294967296LL + (__int128)a[0];
    if (kind == 5) return (__int128)tessera::tessera_order_bits((long long)a[0]);
    return (__int128)(long long)a[0];
}
// HAVING (tessera_cuda::codegen::having): clears seen[g] for every group g failing one
// of the `nterms` terms, six words each: the accumulator array's kind (as
// tessera_record_value reads it), its address, its words per group, the comparison
// (0 <, 1 <=, 2 >, 3 >=, 4 =, 5 <>) and the constant's low and high words.
extern "C" __global__ void tessera_having(unsigned int* seen, long long n, const long long* terms, int nterms) {
    for (long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x; g < n; g += (long long)gridDim.x * blockDim.x) {
        if (seen[g] == 0u) continue;
        bool keep = true;
        for (int k = 0; k < nterms && keep; ++k) {
            const long long* t = terms + 6 * k;
            const __int128 v = tessera_record_value(t[0], (const unsigned long long*)t[1] + g * t[2]);
            const __int128 c = ((__int128)t[5] << 64) | (__int128)(unsigned long long)t[4];
            switch (t[3]) {
                case 0: keep = v < c; break;
                case 1: keep = v <= c; break;
                case 2: keep = v > c; break;
                case 3: keep = v >= c; break;
                case 4: keep = v == c; break;
                default: keep = v != c; break;
            }
        }
        if (!keep) seen[g] = 0u;
    }
}
// Records of the groups g with seen[g] != 0, in group-number order: rec[0] counts them,
// record i is rec[1 + i * width ...] and starts with g. Two launches over one grid of
// blocks, block b taking the `per_block` groups from b * per_block: tessera_count_seen
// writes the number of groups each block's range saw to counts[b];
// tessera_compact_records_ordered then starts block b's records after those of the
// blocks before it and places each of its groups by a block-wide scan of the seen
// flags, chunk by chunk (rec[0] = the total, written by block 0). Both need blockDim.x a
// multiple of 32 and at most 1024. In order, the host need not sort the records by group
// (TPC-H q11 at SF 10: 305 K records of a 2 M domain took 10.3 ms to order and take
// apart on the H200's host when they came in the order of a warp append).
extern "C" __global__ void tessera_count_seen(const unsigned int* seen, long long n, long long per_block, unsigned long long* counts) {
    __shared__ unsigned long long part[32];
    const long long lo = (long long)blockIdx.x * per_block;
    const long long hi = lo + per_block < n ? lo + per_block : n;
    unsigned long long c = 0ull;
    for (long long g = lo + threadIdx.x; g < hi; g += blockDim.x) c += seen[g] != 0u ? 1ull : 0ull;
    for (int d = 16; d > 0; d /= 2) c += __shfl_down_sync(0xffffffffu, c, d);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0ull;
        for (unsigned int w = 0; w < (blockDim.x + 31) / 32; ++w) t += part[w];
        counts[blockIdx.x] = t;
    }
}
extern "C" __global__ void tessera_compact_records_ordered(const unsigned int* seen, long long n, long long per_block, const unsigned long long* counts, unsigned long long* rec, long long width) {
    __shared__ unsigned long long base;
    __shared__ unsigned int warp_counts[32];
    if (threadIdx.x == 0) {
        unsigned long long before = 0ull, total = 0ull;
        for (unsigned int b = 0; b < gridDim.x; ++b) {
            if (b < blockIdx.x) before += counts[b];
            total += counts[b];
        }
        base = before;
        if (blockIdx.x == 0) rec[0] = total;
    }
    __syncthreads();
    const long long lo = (long long)blockIdx.x * per_block;
    const long long hi = lo + per_block < n ? lo + per_block : n;
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) / 32;
    // The bound is the same for every thread of the block: all take part in each ballot
    // and barrier.
    for (long long start = lo; start < hi; start += blockDim.x) {
        const long long g = start + threadIdx.x;
        const bool keep = g < hi && seen[g] != 0u;
        const unsigned int ballot = __ballot_sync(0xffffffffu, keep);
        if (lane == 0) warp_counts[warp] = __popc(ballot);
        __syncthreads();
        unsigned int before = 0u, all = 0u;
        for (unsigned int w = 0; w < warps; ++w) {
            const unsigned int c = warp_counts[w];
            before += w < warp ? c : 0u;
            all += c;
        }
        if (keep) rec[1 + (long long)(base + before + __popc(ballot & ((1u << lane) - 1u))) * width] = (unsigned long long)g;
        __syncthreads();
        if (threadIdx.x == 0) base += all;
        __syncthreads();
    }
}
// Ranks the records of rec (see tessera_compact_records) by the sort keys and copies each
// to its rank's place in dst (whose word 0 gets the count): a record's rank is the number
// of records ordered before it, key by key and then by group number, which makes the
// order total and the same as a stable sort of the groups in group-number order. Every
// pair is compared (one block per record), so this is for at most a few thousand records
// (`max`); above that the records are copied in place, unsorted. keys: four words per key: kind (0: group key,
// slot (g / a) % b with slot 0 for NULL; else an aggregate at word a of the record, read
// by tessera_record_value), a, b, flags (1: descending, 2: NULLs first).
__device__ int tessera_cmp_key(const unsigned long long* x, const unsigned long long* y, const long long* k) {
    int c = 0;
    if (k[0] == 0) {
        const unsigned long long sx = (x[0] / (unsigned long long)k[1]) % (unsigned long long)k[2];
        const unsigned long long sy = (y[0] / (unsigned long long)k[1]) % (unsigned long long)k[2];
        if (sx == 0 || sy == 0) {
            if (sx == sy) return 0;
            const int null_first = (k[3] & 2) ? -1 : 1;
            return sx == 0 ? null_first : -null_first;
        }
        c = sx < sy ? -1 : (sx > sy ? 1 : 0);
    } else {
        const __int128 vx = tessera_record_value(k[0], x + k[1]), vy = tessera_record_value(k[0], y + k[1]);
        c = vx < vy ? -1 : (vx > vy ? 1 : 0);
    }
    return (k[3] & 1) ? -c : c;
}
extern "C" __global__ void tessera_rank_records(const unsigned long long* rec, long long width, const long long* keys, int nkeys, long long max, unsigned long long* dst) {
    __shared__ unsigned long long rank;
    const long long n = (long long)rec[0];
    if (blockIdx.x == 0 && threadIdx.x == 0) dst[0] = (unsigned long long)n;
    // One block per record: its threads compare it with every other record.
    for (long long i = blockIdx.x; i < n; i += gridDim.x) {
        const unsigned long long* x = rec + 1 + i * width;
        if (threadIdx.x == 0) rank = n <= max ? 0ull : (unsigned long long)i;
        __syncthreads();
        if (n <= max) {
            unsigned long long before = 0;
            for (long long j = threadIdx.x; j < n; j += blockDim.x) {
                const unsigned long long* y = rec + 1 + j * width;
                int c = 0;
                for (int k = 0; k < nkeys && c == 0; ++k) c = tessera_cmp_key(y, x, keys + 4 * k);
                if (c < 0 || (c == 0 && y[0] < x[0])) ++before;
            }
            if (before != 0) atomicAdd(&rank, before);
        }
        __syncthreads();
        for (long long w = threadIdx.x; w < width; w += blockDim.x) dst[1 + (long long)rank * width + w] = x[w];
        __syncthreads();
    }
}
// Copies the `words` words of each recorded group from src (`words` per group) into
// words off .. off + words of its record. Reads the record count from rec[0], so it runs
// right behind the compaction with no host round trip.
extern "C" __global__ void tessera_gather_records(const unsigned long long* src, long long words, unsigned long long* rec, long long width, long long off) {
    const long long n = (long long)rec[0] * words;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned long long* r = rec + 1 + (i / words) * width;
        r[off + i % words] = src[(long long)r[0] * words + i % words];
    }
}
// One column of an aggregation's result kept on the GPU (tessera-exec, gpu.rs:
// `GpuRuntime::keep_on_gpu`): row i of `out` (int32 when out_width is 4, else int64) is
// the value of the i-th of the rec[0] groups whose numbers g follow in rec[1..]
// (tessera_compact_records_ordered with width 1). kind 0: a perfect-hash key, slot
// (g / a) % b, value c + slot - 1; kind 1: a packed hash key, c + ((arr[g] >> a) &
// (2^b - 1)); kind 2: an accumulator, the a words of group g in arr read as
// tessera_record_value's kind b. A NULL key (slot 0) or a value outside [lo, hi] raises
// flags[0] (the pipelines reading the result take neither, and the query goes to the
// CPU) and is written as the key's smallest value or the bound passed, so that the
// readers' kernels, which run before the flags are read, index nothing out of range.
extern "C" __global__ void tessera_result_column(const unsigned long long* rec, long long kind, const unsigned long long* arr, long long a, long long b, long long c, long long lo, long long hi, int out_width, void* out, unsigned long long* flags) {
    const long long n = (long long)rec[0];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long g = rec[1 + i];
        __int128 v;
        bool bad = false;
        if (kind == 0) {
            const unsigned long long slot = (g / (unsigned long long)a) % (unsigned long long)b;
            bad = slot == 0ull;
            v = (__int128)c + (__int128)slot - 1;
        } else if (kind == 1) {
            const unsigned long long off = b == 0 ? 0ull : (arr[g] >> a) & (~0ull >> (64 - b));
            v = (__int128)c + (__int128)off;
        } else {
            v = tessera_record_value(b, arr + g * (unsigned long long)a);
        }
        if (bad || v < (__int128)lo || v > (__int128)hi) {
            // Still a value the readers can take (their kernels index arrays by keys
            // within the planned ranges) until the query goes to the CPU.
            flags[0] = 1ull;
            v = bad ? (__int128)c : (v < (__int128)lo ? (__int128)lo : (__int128)hi);
        }
        if (out_width == 4) ((int*)out)[i] = (int)v;
        else ((long long*)out)[i] = (long long)v;
    }
}
