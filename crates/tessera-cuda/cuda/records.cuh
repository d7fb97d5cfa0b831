// records.cuh: the runtime's kernels around an aggregation's groups (not generated code).
//
// Launched by the executor (tessera-exec, gpu.rs: `GpuRuntime::apply_fills` and
// `fetch_groups`), from a module whose whole source is tessera_cuda::library::RECORDS_SOURCE,
// i.e. `#include "records.cuh"`. Before a pipeline (a query's builds: once, at its
// admission): tessera_fill_many sets its output arrays (zeroed, or MIN/MAX accumulators
// and hash keys to their start value). After it,
// for large group domains and GPU sorts: tessera_count_seen and tessera_compact_records_ordered turn the groups seen into
// records in group-number order, tessera_gather_records copies each accumulator's words
// into them, tessera_rank_records orders them for an ORDER BY (after tessera_select_top,
// tessera_keep_top and tessera_seal_top have kept only those a LIMIT may take), or
// tessera_small_sorted_records does all of that in one launch for a small domain; before them,
// tessera_fold_copies folds a global group table's copies into one and
// tessera_having drops the groups a HAVING rejects; tessera_result_column turns them
// into the columns of a result kept on the GPU for the pipelines reading it there. Not
// included by tessera.cuh: its __global__ kernels would be compiled into every generated
// pipeline's module.
#pragma once
#include "types.cuh"
#include "expr.cuh"

// The arrays a pipeline's outputs start from (FillList in tessera-exec's gpu.rs, passed
// by value): array k has words[k] 32-bit words, set to the 64-bit pattern value[k]
// (its low half at even words; 0 zeroes). Every array starts 8-byte aligned (device
// allocations are 256-byte aligned).
struct TesseraFills {
    unsigned long long ptr[32];
    unsigned long long words[32];
    unsigned long long value[32];
    int n;
};
// Sets up to 32 arrays in one launch: a query's zeroed and preset outputs take one
// launch instead of a memset or fill each, each a driver call on the host.
extern "C" __global__ void tessera_fill_many(TesseraFills f) {
    const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x, step = (long long)gridDim.x * blockDim.x;
    for (int k = 0; k < f.n; ++k) {
        unsigned long long* a = (unsigned long long*)f.ptr[k];
        const long long pairs = (long long)(f.words[k] >> 1);
        for (long long i = start; i < pairs; i += step) a[i] = f.value[k];
        // An odd word count: the last word is a pattern's low half.
        if ((f.words[k] & 1) && start == 0) ((unsigned int*)a)[f.words[k] - 1] = (unsigned int)f.value[k];
    }
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
// Places the groups g in [lo, hi) with seen[g] != 0 in group-number order: place(g, i)
// for each, i its record's index counted from `base` (a __shared__ count, advanced past
// them), a chunk of the block's threads at a time, each placed by a block-wide scan of
// the chunk's seen flags (a ballot a warp). Every thread of the block calls it with the
// same bounds: all take part in each ballot and barrier.
template <typename Place>
__device__ __forceinline__ void tessera_place_seen(const unsigned int* seen, long long lo, long long hi, unsigned long long& base, unsigned int* warp_counts, Place place) {
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) / 32;
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
        if (keep) place(g, base + before + __popc(ballot & ((1u << lane) - 1u)));
        __syncthreads();
        if (threadIdx.x == 0) base += all;
        __syncthreads();
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
// The sum of `v` over the block's threads, valid in thread 0 (0 in the others); `part`
// a __shared__ word a warp, not shared with another call before a barrier. Every thread
// of the block calls it.
__device__ __forceinline__ unsigned long long tessera_block_sum(unsigned long long v, unsigned long long* part) {
    v = tessera::tessera_warp_sum(v);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    unsigned long long t = 0ull;
    if (threadIdx.x == 0) {
        for (unsigned int w = 0; w < (blockDim.x + 31) / 32; ++w) t += part[w];
    }
    return t;
}
extern "C" __global__ void tessera_count_seen(const unsigned int* seen, long long n, long long per_block, unsigned long long* counts) {
    __shared__ unsigned long long part[32];
    const long long lo = (long long)blockIdx.x * per_block;
    const long long hi = lo + per_block < n ? lo + per_block : n;
    unsigned long long c = 0ull;
    for (long long g = lo + threadIdx.x; g < hi; g += blockDim.x) c += seen[g] != 0u ? 1ull : 0ull;
    const unsigned long long t = tessera_block_sum(c, part);
    if (threadIdx.x == 0) counts[blockIdx.x] = t;
}
extern "C" __global__ void tessera_compact_records_ordered(const unsigned int* seen, long long n, long long per_block, const unsigned long long* counts, unsigned long long* rec, long long width) {
    __shared__ unsigned long long base;
    __shared__ unsigned int warp_counts[32];
    __shared__ unsigned long long part_before[32], part_total[32];
    // The earlier blocks' records and all blocks' records, summed by the whole block (one
    // thread's loop over the counts waited on each load in turn: about 40 µs of every
    // chain over 4 x 132 blocks on the H200, 2026-11-28).
    {
        unsigned long long before = 0ull, total = 0ull;
        for (unsigned int b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
            const unsigned long long c = counts[b];
            before += b < blockIdx.x ? c : 0ull;
            total += c;
        }
        before = tessera_block_sum(before, part_before);
        total = tessera_block_sum(total, part_total);
        if (threadIdx.x == 0) {
            base = before;
            if (blockIdx.x == 0) rec[0] = total;
        }
    }
    __syncthreads();
    const long long lo = (long long)blockIdx.x * per_block;
    const long long hi = lo + per_block < n ? lo + per_block : n;
    tessera_place_seen(seen, lo, hi, base, warp_counts, [&](long long g, unsigned long long i) { rec[1 + (long long)i * width] = (unsigned long long)g; });
}
// The accumulator arrays a group's record gathers (GatherList in tessera-exec's gpu.rs,
// passed by value): array k holds words[k] words a group; records take them in order
// after the group number.
struct TesseraGathers {
    unsigned long long ptr[16];
    long long words[16];
    int n;
};
// Folds the copies of a grouped aggregation's global arrays (tessera_cuda::codegen::
// aggregate::global_copies): array k holds `copies` copies of groups * words[k] 64-bit
// words one after another, every one a plain 64-bit sum (COUNT, SUM in one word); each
// word of the first copy becomes the sum of that word in all of them. Launched right
// after the pipeline's kernel, before anything reads the arrays. With `witness` >= 0 the
// kernel left the seen flags to the fold: array `witness` (one word a group) is nonzero
// exactly for the groups present (aggregate::presence), and their flags are set here.
// A thread a word of any array (the arrays' words counted one after another), and that
// word's copies loaded TESSERA_FOLD_BATCH at a time, all in flight together: a word's
// wait is one trip to L2 or DRAM rather than one a copy (SSB q3.1's fold of 8 copies
// waited on three to four rounds of loads, 3.5 µs on the H200, 2026-11-30b run 4).
#define TESSERA_FOLD_BATCH 8
extern "C" __global__ void tessera_fold_copies(TesseraGathers g, long long groups, int copies, unsigned int* seen, int witness) {
    long long all = 0;
    for (int k = 0; k < g.n; ++k) all += groups * g.words[k];
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x; q < all; q += step) {
        int k = 0;
        long long i = q;
        while (k + 1 < g.n && i >= groups * g.words[k]) i -= groups * g.words[k++];
        unsigned long long* a = (unsigned long long*)g.ptr[k];
        const long long n = groups * g.words[k];
        unsigned long long total = a[i];
        for (int c = 1; c < copies; c += TESSERA_FOLD_BATCH) {
            unsigned long long v[TESSERA_FOLD_BATCH];
#pragma unroll
            for (int u = 0; u < TESSERA_FOLD_BATCH; ++u) v[u] = c + u < copies ? a[(long long)(c + u) * n + i] : 0ull;
#pragma unroll
            for (int u = 0; u < TESSERA_FOLD_BATCH; ++u) total += v[u];
        }
        a[i] = total;
        if (k == witness && total != 0ull) seen[i] = 1u;
    }
}
// The records of a small domain in one launch, by one block: the groups g < n with
// seen[g] != 0 in group-number order, each followed by its words of the `g.n` arrays
// (rec[0] the count), as tessera_count_seen, tessera_compact_records_ordered and a
// tessera_gather_records an array make them. For domains of a few thousand groups
// (SSB's ORDER BY over its group domains), where each of those launches is a step of
// its own on the GPU after the aggregation. blockDim.x a multiple of 32, at most 1024.
// Group `group`'s record at r: its number, then its words of each of the `g.n` arrays.
__device__ __forceinline__ void tessera_make_record(const TesseraGathers& g, long long group, unsigned long long* r) {
    r[0] = (unsigned long long)group;
    long long off = 1;
    for (int k = 0; k < g.n; ++k) {
        const unsigned long long* a = (const unsigned long long*)g.ptr[k] + group * g.words[k];
        for (long long w = 0; w < g.words[k]; ++w) r[off + w] = a[w];
        off += g.words[k];
    }
}
// Word `at` of `group`'s words in the arrays of `g`, counted across them in order (the
// word its record holds at 1 + at).
__device__ __forceinline__ unsigned long long tessera_gathered_word(const TesseraGathers& g, long long group, long long at) {
    int k = 0;
    while (k + 1 < g.n && at >= g.words[k]) at -= g.words[k++];
    return ((const unsigned long long*)g.ptr[k])[group * g.words[k] + at];
}
extern "C" __global__ void tessera_small_records(const unsigned int* seen, long long n, const TesseraGathers g, unsigned long long* rec, long long width) {
    __shared__ unsigned long long base;
    __shared__ unsigned int warp_counts[32];
    if (threadIdx.x == 0) base = 0ull;
    __syncthreads();
    tessera_place_seen(seen, 0, n, base, warp_counts, [&](long long group, unsigned long long i) { tessera_make_record(g, group, rec + 1 + (long long)i * width); });
    if (threadIdx.x == 0) rec[0] = base;
}
// Copies every recorded group's words of the `g.n` arrays into its record after the
// group number, in one launch (what a tessera_gather_records an array does): a thread a
// record word. Reads the record count from rec[0], so it runs right behind the
// compaction.
extern "C" __global__ void tessera_gather_many(const TesseraGathers g, unsigned long long* rec, long long width) {
    const long long per = width - 1, n = (long long)rec[0] * per;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned long long* r = rec + 1 + (i / per) * width;
        r[1 + i % per] = tessera_gathered_word(g, (long long)r[0], i % per);
    }
}
// Ranks the records of rec (see tessera_compact_records) by the sort keys and copies each
// to its rank's place in dst (whose word 0 gets the count): a record's rank is the number
// of records ordered before it, key by key and then by group number, which makes the
// order total and the same as a stable sort of the groups in group-number order. Every
// pair is compared (one block per record), so this is for at most a few thousand records
// (`max`); above that the records are copied in place, unsorted. keys: four words per key: kind (0: group key,
// slot (g / a) % b with slot 0 for NULL; 6: a hash aggregation's group key that is never
// NULL, the offset (w >> (b & 255)) & (2^(b >> 8) - 1) of the packed keys w at word a;
// else an aggregate at word a of the record, read by tessera_record_value), a, b, flags
// (1: descending, 2: NULLs first).
__device__ unsigned long long tessera_packed_offset(const unsigned long long* x, const long long* k) {
    const unsigned long long bits = (unsigned long long)k[2] >> 8;
    const unsigned long long mask = bits >= 64ull ? ~0ull : ((1ull << bits) - 1ull);
    return (x[k[1]] >> ((unsigned long long)k[2] & 255ull)) & mask;
}
// A group key's slot (g / a) % b (tessera_cmp_key's kind 0), in 32 bits when all three
// fit: a 64-bit division is a long subroutine, and the records of small domains compare
// it for every pair.
__device__ __forceinline__ unsigned long long tessera_group_slot(unsigned long long g, unsigned long long a, unsigned long long b) {
    if (((g | a | b) >> 32) == 0ull) return (unsigned long long)((unsigned int)g / (unsigned int)a % (unsigned int)b);
    return g / a % b;
}
__device__ int tessera_cmp_key(const unsigned long long* x, const unsigned long long* y, const long long* k) {
    int c = 0;
    if (k[0] == 6) {
        const unsigned long long ox = tessera_packed_offset(x, k), oy = tessera_packed_offset(y, k);
        c = ox < oy ? -1 : (ox > oy ? 1 : 0);
    } else if (k[0] == 0) {
        const unsigned long long sx = tessera_group_slot(x[0], (unsigned long long)k[1], (unsigned long long)k[2]);
        const unsigned long long sy = tessera_group_slot(y[0], (unsigned long long)k[1], (unsigned long long)k[2]);
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
// The sort keys, by value (SortKeys in tessera-cuda's library.rs): four words a key, at
// most eight keys.
struct TesseraSortKeys {
    long long d[32];
};
extern "C" __global__ void tessera_rank_records(const unsigned long long* rec, long long width, const TesseraSortKeys keys, int nkeys, long long max, unsigned long long* dst) {
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
                for (int k = 0; k < nkeys && c == 0; ++k) c = tessera_cmp_key(y, x, keys.d + 4 * k);
                if (c < 0 || (c == 0 && y[0] < x[0])) ++before;
            }
            if (before != 0) atomicAdd(&rank, before);
        }
        __syncthreads();
        for (long long w = threadIdx.x; w < width; w += blockDim.x) dst[1 + (long long)rank * width + w] = x[w];
        __syncthreads();
    }
}
// The exclusive prefix of `v` over the block's threads in thread order, and in `all` their
// total; `warp_counts` a __shared__ word a warp. Every thread of the block calls it; it
// ends on a barrier, so `warp_counts` may be used again at once.
__device__ __forceinline__ unsigned int tessera_block_scan(unsigned int v, unsigned int* warp_counts, unsigned int& all) {
    const unsigned int lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) / 32;
    unsigned int in = v;
    for (unsigned int o = 1; o < 32u; o <<= 1) {
        const unsigned int t = __shfl_up_sync(0xffffffffu, in, o);
        if (lane >= o) in += t;
    }
    if (lane == 31u) warp_counts[warp] = in;
    __syncthreads();
    unsigned int before = 0u;
    all = 0u;
    for (unsigned int w = 0; w < warps; ++w) {
        const unsigned int c = warp_counts[w];
        before += w < warp ? c : 0u;
        all += c;
    }
    __syncthreads();
    return before + in - v;
}
// The most records a block ranks between two barriers (tessera_rank_shared): their
// ranks are a __shared__ array.
#define TESSERA_RANK_BATCH 64
// Ranks the `total` records of `width` words in the block's shared memory (`recs`, the
// same records in the same order in every block) by the sort keys, then the group number
// (word 0), and writes records blockIdx.x, blockIdx.x + gridDim.x, ... each to its
// rank's place in dst (after dst[0]). Every thread of the block calls it, after a barrier
// that made `recs` whole. The block's records are ranked up to TESSERA_RANK_BATCH at a
// time: every thread compares its share of all records with each of them, the counts go
// into the batch's shared ranks, and one barrier later the batch is written (a barrier
// pair a record cost SSB q3.1's chain about 2 of its 11 µs on the H200, 2026-11-30b).
__device__ __forceinline__ void tessera_rank_shared(const unsigned long long* recs, unsigned long long total, long long width, const TesseraSortKeys& keys, int nkeys, unsigned long long* dst) {
    __shared__ unsigned long long rank[TESSERA_RANK_BATCH];
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned long long step = gridDim.x;
    for (unsigned long long first = blockIdx.x; first < total; first += step * TESSERA_RANK_BATCH) {
        // The batch's records: first, first + step, ... below total.
        const unsigned int batch = (unsigned int)min((unsigned long long)TESSERA_RANK_BATCH, (total - first + step - 1) / step);
        for (unsigned int r = threadIdx.x; r < batch; r += blockDim.x) rank[r] = 0ull;
        __syncthreads();
        for (unsigned int r = 0; r < batch; ++r) {
            const unsigned long long* x = recs + (first + r * step) * width;
            unsigned long long b = 0ull;
            for (unsigned long long j = threadIdx.x; j < total; j += blockDim.x) {
                const unsigned long long* y = recs + j * width;
                int c = 0;
                for (int k = 0; k < nkeys && c == 0; ++k) c = tessera_cmp_key(y, x, keys.d + 4 * k);
                if (c < 0 || (c == 0 && y[0] < x[0])) ++b;
            }
            b = tessera::tessera_warp_sum(b);
            if (lane == 0u && b != 0ull) atomicAdd(&rank[r], b);
        }
        __syncthreads();
        // (In 32 bits: a batch's words, a few hundred.)
        for (unsigned int q = threadIdx.x; q < batch * (unsigned int)width; q += blockDim.x) {
            const unsigned int r = q / (unsigned int)width, w = q % (unsigned int)width;
            dst[1 + rank[r] * width + w] = recs[(first + r * step) * width + w];
        }
        __syncthreads();
    }
}
// The seen flags of the (at most 32) slots from `from` below `hi` as bits (bit j: slot
// from + j): their loads are all issued before any is tested, so a run of slots costs
// one trip to L2 however many it holds.
__device__ __forceinline__ unsigned int tessera_seen_bits(const unsigned int* seen, long long from, long long hi) {
    const long long to = from + 32 < hi ? from + 32 : hi;
    unsigned int f[32];
#pragma unroll
    for (int j = 0; j < 32; ++j) f[j] = from + j < to ? seen[from + j] : 0u;
    unsigned int bits = 0u;
#pragma unroll
    for (int j = 0; j < 32; ++j) bits |= (f[j] != 0u ? 1u : 0u) << j;
    return bits;
}
// The chain after an aggregation over a small group domain feeding an ORDER BY, in one
// launch (tessera-exec, gpu.rs: `fetch_groups`, domains of at most
// SMALL_SORT_MAX_GROUPS slots): what tessera_count_seen, tessera_compact_records_ordered,
// tessera_gather_many and tessera_rank_records do one after the other. Every block finds
// the seen groups of the whole domain by itself (a thread a run of consecutive slots, read
// 32 at a time, one block-wide scan of their counts), makes their records (group number, then each array's
// words, as tessera_small_records does; the group numbers placed by the threads that
// found them, the words then gathered a thread a word) in its dynamic shared memory
// (`cap` records of `width` words) in group-number order, and then ranks records blockIdx.x,
// blockIdx.x + gridDim.x, ... against all of them as tessera_rank_records does, writing
// each to its rank's place in dst (dst[0]: the count, from block 0). A block reads the
// whole domain's flags (at most 64 KB, from L2) rather than wait for the other blocks'
// counts: no grid-wide step and no second launch. Every block makes the records in the
// same order, so record i is the same group in each. With more than `cap` records,
// block 0 writes them all in group-number order, unranked, and the host (seeing a count
// over `cap`) sorts them. blockDim.x a multiple of 32, at most 1024.
extern "C" __global__ void tessera_small_sorted_records(const unsigned int* seen, long long n, const TesseraGathers g, long long width, const TesseraSortKeys keys, int nkeys, long long cap, unsigned long long* dst) {
    extern __shared__ unsigned long long recs[];
    __shared__ unsigned int warp_counts[32];
    const long long per = (n + blockDim.x - 1) / blockDim.x;
    const long long lo = (long long)threadIdx.x * per < n ? (long long)threadIdx.x * per : n;
    const long long hi = lo + per < n ? lo + per : n;
    // This thread's slots' flags, 32 at a time; the first 32 kept as bits (a domain of
    // up to 32 slots a thread, 16,384 with 512 threads, is read once).
    const unsigned int first = tessera_seen_bits(seen, lo, hi);
    unsigned int mine = __popc(first);
    for (long long s = lo + 32; s < hi; s += 32) mine += __popc(tessera_seen_bits(seen, s, hi));
    unsigned int all;
    const unsigned long long before = tessera_block_scan(mine, warp_counts, all), total = all;
    if (blockIdx.x == 0 && threadIdx.x == 0) dst[0] = total;
    if (total > (unsigned long long)cap) {
        // Block 0 writes every record in group-number order, unranked.
        if (blockIdx.x == 0) {
            unsigned long long i = before;
            for (long long s = lo; s < hi; ++s) {
                if (seen[s] != 0u) tessera_make_record(g, s, dst + 1 + (i++) * width);
            }
        }
        return;
    }
    // Each seen slot's group number to its record's word 0, ...
    unsigned long long i = before;
    for (long long s = lo; s < hi; s += 32) {
        unsigned int bits = s == lo ? first : tessera_seen_bits(seen, s, hi);
        while (bits != 0u) {
            recs[(i++) * width] = (unsigned long long)(s + __ffs(bits) - 1);
            bits &= bits - 1u;
        }
    }
    __syncthreads();
    // ... then the records' other words, a thread a word: every gather's load in flight
    // at once rather than a thread's records one after another.
    // (In 32 bits: at most `cap` records, of the shared memory's words.)
    const unsigned int per_record = (unsigned int)width - 1u;
    for (unsigned int q = threadIdx.x; q < (unsigned int)total * per_record; q += blockDim.x) {
        unsigned long long* r = recs + (long long)(q / per_record) * width;
        const unsigned int at = q % per_record;
        r[1 + at] = tessera_gathered_word(g, (long long)r[0], at);
    }
    __syncthreads();
    tessera_rank_shared(recs, total, width, keys, nkeys, dst);
}
// A large domain's chain to an ORDER BY in two launches (tessera-exec, gpu.rs:
// `fetch_groups`, domains of more than SMALL_SORT_MAX_GROUPS slots: one block scanning
// them all would take longer than the four launches of the compaction, gathers and rank).
// The first, over a grid of blocks: block b lists the groups g of its `per_block` slots
// from b * per_block with seen[g] != 0, in group-number order, at list[b * per_block ...]
// and their number at counts[b]; no block waits for another. The second,
// tessera_listed_sorted_records: every block finds where each list starts among all the
// records (their order is group-number order), makes all of them in its dynamic shared
// memory and ranks its share, as tessera_small_sorted_records does with the whole domain.
// blockDim.x a multiple of 32, at most 1024.
extern "C" __global__ void tessera_list_seen(const unsigned int* seen, long long n, long long per_block, unsigned int* counts, unsigned int* list) {
    __shared__ unsigned long long base;
    __shared__ unsigned int warp_counts[32];
    if (threadIdx.x == 0) base = 0ull;
    __syncthreads();
    const long long lo = (long long)blockIdx.x * per_block < n ? (long long)blockIdx.x * per_block : n;
    const long long hi = lo + per_block < n ? lo + per_block : n;
    tessera_place_seen(seen, lo, hi, base, warp_counts, [&](long long g, unsigned long long i) { list[lo + (long long)i] = (unsigned int)g; });
    if (threadIdx.x == 0) counts[blockIdx.x] = (unsigned int)base;
}
// The most lists tessera_listed_sorted_records takes (the first launch's blocks): their
// starts are a __shared__ array.
#define TESSERA_MAX_LISTS 1024
// The second launch (see tessera_list_seen): `nlists` lists of `per_block` slots each.
// Record i is list b's entry i - starts[b], b the last list starting at or before i, so
// each thread makes its share of the records however the groups cluster. More than `cap`
// records: every block writes its share of them at their places in group-number order,
// unranked, for the host's sort, as the compaction and gathers would (dst[0] the count,
// from block 0, either way).
extern "C" __global__ void tessera_listed_sorted_records(const unsigned int* list, const unsigned int* counts, long long nlists, long long per_block, const TesseraGathers g, long long width, const TesseraSortKeys keys, int nkeys, long long cap, unsigned long long* dst) {
    extern __shared__ unsigned long long recs[];
    __shared__ unsigned int starts[TESSERA_MAX_LISTS];
    __shared__ unsigned int warp_counts[32];
    // Exclusive scan of the counts, a block's threads' worth at a time (every thread
    // keeps the running total).
    unsigned long long total = 0ull;
    for (long long s = 0; s < nlists; s += blockDim.x) {
        const long long b = s + threadIdx.x;
        unsigned int all;
        const unsigned int before = tessera_block_scan(b < nlists ? counts[b] : 0u, warp_counts, all);
        if (b < nlists) starts[b] = (unsigned int)total + before;
        total += all;
    }
    __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x == 0) dst[0] = total;
    // Record i's group: in the last list that starts at or before i (lists before it
    // that are empty start there too, and those after it start past i).
    auto group_of = [&](unsigned long long i) {
        long long lo = 0, hi = nlists - 1;
        while (lo < hi) {
            const long long mid = (lo + hi + 1) / 2;
            if ((unsigned long long)starts[mid] <= i) lo = mid; else hi = mid - 1;
        }
        return (long long)list[lo * per_block + (long long)(i - starts[lo])];
    };
    if (total > (unsigned long long)cap) {
        const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
        for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) tessera_make_record(g, group_of(i), dst + 1 + i * width);
        return;
    }
    for (unsigned long long i = threadIdx.x; i < total; i += blockDim.x) tessera_make_record(g, group_of(i), recs + i * width);
    __syncthreads();
    tessera_rank_shared(recs, total, width, keys, nkeys, dst);
}
// ORDER BY ... LIMIT over more groups than the rank sort takes (tessera-exec, gpu.rs:
// `fetch_groups`): the records whose first sort key is at most the `want`-th smallest in
// the key's order are the only ones the LIMIT can keep (a record ordered before a kept
// one has a first key no larger), so only they are ranked and come back. The key's order
// as an unsigned 128-bit number (ascending numbers in the key's order; `k` four words as
// tessera_cmp_key reads them): a group key's slot, NULL (slot 0) first or last, or its
// packed offset; an aggregate's value with its sign bit flipped; descending keys
// inverted.
__device__ unsigned __int128 tessera_key_order(const unsigned long long* x, const long long* k) {
    if (k[0] == 6) {
        const unsigned __int128 u = (unsigned __int128)tessera_packed_offset(x, k);
        return (k[3] & 1) ? ~u : u;
    }
    if (k[0] == 0) {
        const unsigned long long s = tessera_group_slot(x[0], (unsigned long long)k[1], (unsigned long long)k[2]);
        if (s == 0) return (k[3] & 2) ? (unsigned __int128)0 : ~(unsigned __int128)0;
        return (unsigned __int128)((k[3] & 1) ? (unsigned long long)k[2] - s : s);
    }
    const unsigned __int128 u = (unsigned __int128)tessera_record_value(k[0], x + k[1]) ^ ((unsigned __int128)1 << 127);
    return (k[3] & 1) ? ~u : u;
}
// One block: thr (two words, low first) = a key order at least the want-th smallest among
// the rec[0] records and with at most TESSERA_TOP_ENOUGH records at or below it, by
// radix selection a byte at a time from the first byte where the records' smallest and
// largest orders differ; all ones when there are at most `max` records (every one is
// ranked then). The selection stops at the first byte whose bucket holding the want-th
// smallest brings the records at or below it to at most TESSERA_TOP_ENOUGH: thr is then
// that bucket's last order, and the rank sort orders those few. Each byte is a pass
// over every record by this one block: down to the exact want-th order, TPC-H q03's
// chain at SF 10 (its LIMIT 10 over the groups of 1.5 M orders) took 1.33 ms (H200,
// 2026-11-28 run 8).
#define TESSERA_TOP_ENOUGH 1024ull
extern "C" __global__ void tessera_select_top(const unsigned long long* rec, long long width, const long long* key, long long want, long long max, unsigned long long* thr) {
    __shared__ unsigned int hist[256];
    __shared__ unsigned long long lo[32], hi[32], lo2[32], hi2[32];
    __shared__ unsigned long long prefix[2];
    __shared__ unsigned long long remaining;
    __shared__ int enough;
    const long long n = (long long)rec[0];
    if (n <= max || want >= n) {
        if (threadIdx.x == 0) { thr[0] = ~0ull; thr[1] = ~0ull; }
        return;
    }
    // The smallest and largest orders: their common leading bytes are every record's.
    unsigned __int128 mn = ~(unsigned __int128)0, mx = 0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        const unsigned __int128 u = tessera_key_order(rec + 1 + i * width, key);
        mn = u < mn ? u : mn;
        mx = u > mx ? u : mx;
    }
    for (int o = 16; o > 0; o /= 2) {
        const unsigned __int128 a = ((unsigned __int128)__shfl_down_sync(0xffffffffu, (unsigned long long)(mn >> 64), o) << 64) | __shfl_down_sync(0xffffffffu, (unsigned long long)mn, o);
        const unsigned __int128 b = ((unsigned __int128)__shfl_down_sync(0xffffffffu, (unsigned long long)(mx >> 64), o) << 64) | __shfl_down_sync(0xffffffffu, (unsigned long long)mx, o);
        mn = a < mn ? a : mn;
        mx = b > mx ? b : mx;
    }
    const unsigned int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    if (lane == 0) { lo[warp] = (unsigned long long)mn; hi[warp] = (unsigned long long)(mn >> 64); lo2[warp] = (unsigned long long)mx; hi2[warp] = (unsigned long long)(mx >> 64); }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (unsigned int w = 1; w < warps; ++w) {
            const unsigned __int128 a = ((unsigned __int128)hi[w] << 64) | lo[w];
            const unsigned __int128 b = ((unsigned __int128)hi2[w] << 64) | lo2[w];
            mn = a < mn ? a : mn;
            mx = b > mx ? b : mx;
        }
        int same = 0;
        while (same < 16 && (mn >> (120 - 8 * same)) == (mx >> (120 - 8 * same))) ++same;
        // The common leading bytes, then below them nothing chosen yet.
        const unsigned __int128 p = same == 16 ? mn : (same == 0 ? (unsigned __int128)0 : (mn >> (128 - 8 * same)) << (128 - 8 * same));
        prefix[0] = (unsigned long long)p;
        prefix[1] = (unsigned long long)(p >> 64);
        remaining = (unsigned long long)want;
        enough = 0;
        hist[0] = (unsigned int)same;
    }
    __syncthreads();
    const int first = (int)hist[0];
    __syncthreads();
    for (int byte = first; byte < 16; ++byte) {
        const int shift = 120 - 8 * byte;
        for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0u;
        __syncthreads();
        const unsigned __int128 p = ((unsigned __int128)prefix[1] << 64) | prefix[0];
        for (long long i = threadIdx.x; i < n; i += blockDim.x) {
            const unsigned __int128 u = tessera_key_order(rec + 1 + i * width, key);
            // Only records whose bytes above this one are the prefix's.
            if (byte == 0 || (u >> (shift + 8)) == (p >> (shift + 8))) atomicAdd(&hist[(unsigned int)(u >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned long long before = 0ull;
            unsigned int b = 0u;
            while (b < 255u && before + hist[b] < remaining) before += hist[b++];
            // The records at or below bucket b's last order: those below the prefix (the
            // want less what is still to find), those in lower buckets, and bucket b's.
            const unsigned long long upto = ((unsigned long long)want - remaining) + before + hist[b];
            remaining -= before;
            unsigned __int128 q = p | ((unsigned __int128)b << shift);
            if (shift > 0 && upto <= TESSERA_TOP_ENOUGH) {
                q |= ((unsigned __int128)1 << shift) - 1;
                enough = 1;
            }
            prefix[0] = (unsigned long long)q;
            prefix[1] = (unsigned long long)(q >> 64);
        }
        __syncthreads();
        if (enough) break;
    }
    if (threadIdx.x == 0) { thr[0] = prefix[0]; thr[1] = prefix[1]; }
}
// The records of rec whose first key's order is at most thr (tessera_select_top), copied
// to dst (from word 1, in no particular order) while they fit `cap` records; *count gets
// how many there are. tessera_seal_top then writes dst[0]: the count, or 0 when they did
// not fit (too many ties: the host then takes every record, unranked).
extern "C" __global__ void tessera_keep_top(const unsigned long long* rec, long long width, const long long* key, const unsigned long long* thr, long long cap, unsigned long long* dst, unsigned long long* count) {
    const long long n = (long long)rec[0];
    const unsigned __int128 t = ((unsigned __int128)thr[1] << 64) | thr[0];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long* x = rec + 1 + i * width;
        if (tessera_key_order(x, key) > t) continue;
        const unsigned long long at = atomicAdd(count, 1ull);
        if (at < (unsigned long long)cap) {
            for (long long w = 0; w < width; ++w) dst[1 + (long long)at * width + w] = x[w];
        }
    }
}
extern "C" __global__ void tessera_seal_top(const unsigned long long* count, long long cap, unsigned long long* dst) {
    if (blockIdx.x == 0 && threadIdx.x == 0) dst[0] = *count <= (unsigned long long)cap ? *count : 0ull;
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
