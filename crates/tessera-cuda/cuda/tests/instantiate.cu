// Instantiates every primitive of the device library in small kernels, so that a test can
// check the whole library compiles with NVRTC (no GPU needed). Not run; compiled only.
#include "tessera.cuh"

using namespace tessera;

template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ void exercise_column(const T* column, int64_t num_rows, T lo, T hi,
                                T* compacted, uint64_t* compacted_count, int64_t* row_count) {
    typedef BlockScan<T, BLOCK_THREADS, ITEMS_PER_THREAD> Scan;
    typedef BlockCompact<T, BLOCK_THREADS, ITEMS_PER_THREAD> Compact;
    typedef BlockReduce<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD> Reduce;
    __shared__ union {
        typename Scan::TempStorage scan;
        typename Compact::TempStorage compact;
        typename Reduce::TempStorage reduce;
    } temp;

    const int64_t tile_start = (int64_t)blockIdx.x * BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>::TILE_ITEMS;
    if (tile_start >= num_rows) return;
    const int64_t remaining = num_rows - tile_start;
    const int num_items = remaining < BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>::TILE_ITEMS
        ? (int)remaining : BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>::TILE_ITEMS;

    T items[ITEMS_PER_THREAD];
    T blocked[ITEMS_PER_THREAD];
    int flags[ITEMS_PER_THREAD];
    block_load<T, BLOCK_THREADS, ITEMS_PER_THREAD>(column + tile_start, items, num_items);
    block_load_striped<T, BLOCK_THREADS, ITEMS_PER_THREAD>(column + tile_start, items);
    block_load_striped_guarded<T, BLOCK_THREADS, ITEMS_PER_THREAD>(column + tile_start, items, num_items);
    block_load_blocked<T, BLOCK_THREADS, ITEMS_PER_THREAD>(column + tile_start, blocked);
    block_load_blocked_guarded<T, BLOCK_THREADS, ITEMS_PER_THREAD>(column + tile_start, blocked, num_items);
    block_init_flags<T, BLOCK_THREADS, ITEMS_PER_THREAD>(flags, num_items);
    block_load_striped_selective<T, BLOCK_THREADS, ITEMS_PER_THREAD>(column + tile_start, items, flags, num_items);

    block_pred_eq<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_ne<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_lt<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, hi, num_items);
    block_pred_le<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, hi, num_items);
    block_pred_gt<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_ge<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_between<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, hi, num_items);
    block_pred_and_eq<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_and_ne<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_and_lt<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, hi, num_items);
    block_pred_and_le<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, hi, num_items);
    block_pred_and_gt<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_and_ge<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, num_items);
    block_pred_and_between<T, BLOCK_THREADS, ITEMS_PER_THREAD>(items, flags, lo, hi, num_items);

    T prefix[ITEMS_PER_THREAD];
    T total;
    Scan::exclusive_sum(blocked, prefix, total, temp.scan);
    __syncthreads();
    Compact::compact(items, flags, compacted, compacted_count, temp.compact);
    __syncthreads();

    int64_t ones[ITEMS_PER_THREAD];
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) ones[i] = 1;
    int64_t count = Reduce::sum_selected(ones, flags, temp.reduce);
    block_total_into(row_count, count);
}

extern "C" __global__ void instantiate_i32(const int32_t* column, int64_t n, int32_t* out, uint64_t* out_count, int64_t* rows) {
    exercise_column<int32_t, 128, 4>(column, n, 1, 10, out, out_count, rows);
}
extern "C" __global__ void instantiate_i64(const int64_t* column, int64_t n, int64_t* out, uint64_t* out_count, int64_t* rows) {
    exercise_column<int64_t, 256, 2>(column, n, 1, 10, out, out_count, rows);
}
extern "C" __global__ void instantiate_u32(const uint32_t* column, int64_t n, uint32_t* out, uint64_t* out_count, int64_t* rows) {
    exercise_column<uint32_t, 1024, 1>(column, n, 1u, 10u, out, out_count, rows);
}
extern "C" __global__ void instantiate_u64(const uint64_t* column, int64_t n, uint64_t* out, uint64_t* out_count, int64_t* rows) {
    exercise_column<uint64_t, 32, 8>(column, n, 1ull, 10ull, out, out_count, rows);
}

// Joins and aggregates: dense and open-addressing tables, 32- and 64-bit keys, Int128 sums.
template <typename K, int BLOCK_THREADS, int ITEMS_PER_THREAD>
__device__ void exercise_tables(const K* keys, int num_items, DenseTable<K, int32_t> dense,
                                HashTable<K, int64_t> table, Int128* sum128, int64_t* sum64,
                                int64_t* min_out, int64_t* max_out) {
    typedef BlockReduce<Int128, BLOCK_THREADS, ITEMS_PER_THREAD> Reduce128;
    typedef BlockReduce<int64_t, BLOCK_THREADS, ITEMS_PER_THREAD> Reduce64;
    __shared__ union {
        typename Reduce128::TempStorage r128;
        typename Reduce64::TempStorage r64;
    } temp;
    K k[ITEMS_PER_THREAD];
    int flags[ITEMS_PER_THREAD];
    int32_t dense_values[ITEMS_PER_THREAD];
    int64_t values[ITEMS_PER_THREAD];
    block_load<K, BLOCK_THREADS, ITEMS_PER_THREAD>(keys, k, num_items);
    block_init_flags<K, BLOCK_THREADS, ITEMS_PER_THREAD>(flags, num_items);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) values[i] = (int64_t)k[i];
    block_build_hash<K, BLOCK_THREADS, ITEMS_PER_THREAD, int64_t>(k, values, flags, table);
    block_build_dense<K, BLOCK_THREADS, ITEMS_PER_THREAD, int32_t>(k, dense_values, flags, dense);
    block_probe_dense<K, BLOCK_THREADS, ITEMS_PER_THREAD, int32_t>(k, dense_values, flags, dense);
    block_probe_hash<K, BLOCK_THREADS, ITEMS_PER_THREAD, int64_t>(k, values, flags, table);
    int64_t slot = hash_insert_slot(table, k[0]);
    if (slot >= 0) atomic_add_i64(&table.values[slot], 1);

    Int128 wide[ITEMS_PER_THREAD];
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) wide[i] = mul_wide_i64(values[i], values[i]);
    Int128 t128 = Reduce128::sum_selected(wide, flags, temp.r128);
    block_total_into(sum128, t128);
    __syncthreads();
    int64_t t64 = Reduce64::sum(values, temp.r64);
    block_total_into(sum64, t64);
    atomic_min_i64(min_out, values[0]);
    atomic_max_i64(max_out, values[0]);
    atomic_add_u64((uint64_t*)sum64, 0ull);
    atomic_add_i128(sum128, int128_from_i64(-1) - make_int128(1, 0));
}

extern "C" __global__ void instantiate_tables_i32(const int32_t* keys, int n, DenseTable<int32_t, int32_t> dense,
                                                  HashTable<int32_t, int64_t> table, Int128* s128, int64_t* s64,
                                                  int64_t* mn, int64_t* mx) {
    exercise_tables<int32_t, 128, 4>(keys, n, dense, table, s128, s64, mn, mx);
}
extern "C" __global__ void instantiate_tables_i64(const int64_t* keys, int n, DenseTable<int64_t, int32_t> dense,
                                                  HashTable<int64_t, int64_t> table, Int128* s128, int64_t* s64,
                                                  int64_t* mn, int64_t* mx) {
    exercise_tables<int64_t, 64, 8>(keys, n, dense, table, s128, s64, mn, mx);
}
extern "C" __global__ void instantiate_tables_u32(const uint32_t* keys, int n, DenseTable<uint32_t, int32_t> dense,
                                                  HashTable<uint32_t, int64_t> table, Int128* s128, int64_t* s64,
                                                  int64_t* mn, int64_t* mx) {
    exercise_tables<uint32_t, 256, 4>(keys, n, dense, table, s128, s64, mn, mx);
}
extern "C" __global__ void instantiate_tables_u64(const uint64_t* keys, int n, DenseTable<uint64_t, int32_t> dense,
                                                  HashTable<uint64_t, int64_t> table, Int128* s128, int64_t* s64,
                                                  int64_t* mn, int64_t* mx) {
    exercise_tables<uint64_t, 512, 2>(keys, n, dense, table, s128, s64, mn, mx);
}

// Int128 scans (two-half shuffles and subtraction with borrow).
extern "C" __global__ void instantiate_scan_i128(const Int128* in, Int128* out) {
    typedef BlockScan<Int128, 128, 2> Scan;
    __shared__ typename Scan::TempStorage temp;
    Int128 items[2];
    block_load_blocked<Int128, 128, 2>(in, items);
    Int128 total;
    Scan::exclusive_sum(items, items, total, temp);
    out[threadIdx.x] = items[0] + items[1] + total;
}
