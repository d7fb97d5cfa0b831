// Small kernels run by the GPU tests (src/gpu_tests.rs): each exercises primitives of the
// device library end to end, and the test compares its results with the CPU's.
#include "tessera.cuh"

using namespace tessera;

constexpr int BLOCK_THREADS = 128;
constexpr int ITEMS_PER_THREAD = 4;
constexpr int TILE = BLOCK_THREADS * ITEMS_PER_THREAD;

__device__ __forceinline__ int tile_items(int64_t n) {
    int64_t remaining = n - (int64_t)blockIdx.x * TILE;
    return remaining < TILE ? (int)remaining : TILE;
}

// SELECT sum(value), sum(value * value) (128-bit), count(*), min(value), max(value)
// WHERE key BETWEEN lo AND hi AND value > 0: the shape of SSB Q1.1.
extern "C" __global__ void filter_sum(const int32_t* keys, const int64_t* values, int64_t n,
                                      int32_t lo, int32_t hi, int64_t* sum, Int128* sum_squares,
                                      int64_t* count, int64_t* min_value, int64_t* max_value) {
    typedef BlockReduce<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD> Reduce;
    typedef BlockReduce<Int128, BLOCK_THREADS, ITEMS_PER_THREAD> Reduce128;
    __shared__ union {
        typename Reduce::TempStorage r;
        typename Reduce128::TempStorage r128;
    } temp;
    const int num_items = tile_items(n);
    const int64_t start = (int64_t)blockIdx.x * TILE;
    int32_t k[ITEMS_PER_THREAD];
    int64_t v[ITEMS_PER_THREAD];
    int flags[ITEMS_PER_THREAD];
    block_load<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD>(keys + start, k, num_items);
    block_pred_between<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD>(k, flags, lo, hi, num_items);
    block_load_striped_selective<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(values + start, v, flags, num_items);
    block_pred_and_gt<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(v, flags, (int64_t)0, num_items);

    int64_t s = Reduce::sum_selected(v, flags, temp.r);
    block_total_into(sum, s);
    __syncthreads();
    Int128 squares[ITEMS_PER_THREAD];
    int64_t ones[ITEMS_PER_THREAD];
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        squares[i] = flags[i] ? mul_wide_i64(v[i], v[i]) : zero_of<Int128>();
        ones[i] = 1;
    }
    Int128 sq = Reduce128::sum(squares, temp.r128);
    block_total_into(sum_squares, sq);
    __syncthreads();
    int64_t c = Reduce::sum_selected(ones, flags, temp.r);
    block_total_into(count, c);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        if (flags[i]) {
            atomic_min_i64(min_value, v[i]);
            atomic_max_i64(max_value, v[i]);
        }
    }
}

// Adds signed 128-bit values one atomic per row: the worst case for carry propagation.
extern "C" __global__ void atomic_sum_i128(const int64_t* values, int64_t n, int64_t scale, Int128* total) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_add_i128(total, mul_wide_i64(values[i], scale));
}

// SELECT value WHERE key < threshold, compacted.
extern "C" __global__ void compact_where_lt(const int32_t* keys, const int64_t* values, int64_t n,
                                            int32_t threshold, int64_t* out, uint64_t* out_count) {
    typedef BlockCompact<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD> Compact;
    __shared__ typename Compact::TempStorage temp;
    const int num_items = tile_items(n);
    const int64_t start = (int64_t)blockIdx.x * TILE;
    int32_t k[ITEMS_PER_THREAD];
    int64_t v[ITEMS_PER_THREAD];
    int flags[ITEMS_PER_THREAD];
    block_load<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD>(keys + start, k, num_items);
    block_pred_lt<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD>(k, flags, threshold, num_items);
    block_load_striped_selective<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(values + start, v, flags, num_items);
    Compact::compact(v, flags, out, out_count, temp);
}

// The indexes of rows whose key is below `threshold`, appended with warp_append (each
// thread decides alone, as in generated kernels): every such index exactly once.
extern "C" __global__ void append_where_lt(const int32_t* keys, int64_t n, int32_t threshold,
                                           int64_t* out, unsigned long long* out_count) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        if (keys[i] >= threshold) continue;
        out[warp_append(out_count)] = i;
    }
}

// Exclusive prefix sum per tile of a blocked layout; block totals to totals[blockIdx.x].
extern "C" __global__ void scan_tiles(const int32_t* in, int64_t n, int32_t* out, int32_t* totals) {
    typedef BlockScan<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD> Scan;
    __shared__ typename Scan::TempStorage temp;
    const int num_items = tile_items(n);
    const int64_t start = (int64_t)blockIdx.x * TILE;
    int32_t items[ITEMS_PER_THREAD];
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) items[i] = 0;
    block_load_blocked_guarded<int32_t, BLOCK_THREADS, ITEMS_PER_THREAD>(in + start, items, num_items);
    int32_t total;
    Scan::exclusive_sum(items, items, total, temp);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = threadIdx.x * ITEMS_PER_THREAD + i;
        if (idx < num_items) out[start + idx] = items[i];
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// Join: build an open-addressing table (64-bit keys) and a dense table, then probe both.
extern "C" __global__ void hash_build(const int64_t* keys, const int64_t* values, int64_t n,
                                      HashTable<int64_t, int64_t> table,
                                      DenseTable<int64_t, int64_t> dense, int32_t* failed) {
    const int num_items = tile_items(n);
    const int64_t start = (int64_t)blockIdx.x * TILE;
    int64_t k[ITEMS_PER_THREAD];
    int64_t v[ITEMS_PER_THREAD];
    int flags[ITEMS_PER_THREAD];
    block_load<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(keys + start, k, num_items);
    block_load<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(values + start, v, num_items);
    block_init_flags<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(flags, num_items);
    bool ok = block_build_hash<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD, int64_t>(k, v, flags, table);
    ok = block_build_dense<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD, int64_t>(k, v, flags, dense) && ok;
    if (!ok) atomicAdd(failed, 1);
}

// For each probe key: out_hash[i] / out_dense[i] = build value, or -1 when absent.
extern "C" __global__ void hash_probe(const int64_t* keys, int64_t n, HashTable<int64_t, int64_t> table,
                                      DenseTable<int64_t, int64_t> dense, int64_t* out_hash, int64_t* out_dense) {
    const int num_items = tile_items(n);
    const int64_t start = (int64_t)blockIdx.x * TILE;
    int64_t k[ITEMS_PER_THREAD];
    int64_t found[ITEMS_PER_THREAD];
    int flags[ITEMS_PER_THREAD];
    block_load<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(keys + start, k, num_items);
    block_init_flags<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(flags, num_items);
    block_probe_hash<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD, int64_t>(k, found, flags, table);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = i * BLOCK_THREADS + threadIdx.x;
        if (idx < num_items) out_hash[start + idx] = flags[i] ? found[i] : -1;
    }
    block_init_flags<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD>(flags, num_items);
    block_probe_dense<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD, int64_t>(k, found, flags, dense);
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        int idx = i * BLOCK_THREADS + threadIdx.x;
        if (idx < num_items) out_dense[start + idx] = flags[i] ? found[i] : -1;
    }
}

// GROUP BY key: count(*) through hash_insert_slot and 64-bit atomics (32-bit keys).
extern "C" __global__ void group_count(const int32_t* keys, int64_t n, HashTable<int32_t, int64_t> table) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t slot = hash_insert_slot(table, keys[i]);
    if (slot >= 0) atomic_add_i64(&table.values[slot], 1);
}
