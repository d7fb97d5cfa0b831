// Small kernels run by the GPU tests (src/gpu_tests.rs): each exercises primitives of the
// device library end to end, and the test compares its results with the CPU's.
#include "tessera.cuh"

using namespace tessera;

// Adds signed 128-bit values one atomic per row: the worst case for carry propagation.
extern "C" __global__ void atomic_sum_i128(const int64_t* values, int64_t n, int64_t scale, Int128* total) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const __int128 v = (__int128)values[i] * scale;
        atomic_add_i128(total, make_int128((uint64_t)v, (uint64_t)(v >> 64)));
    }
}

// Adds signed 64-bit values one split-sum atomic per row (total = hi * 2^32 + lo).
extern "C" __global__ void atomic_sum_split(const int64_t* values, int64_t n, SplitSum* total) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_add_split(total, values[i]);
}

// Per-group sums and counts of signed 64-bit values through a shared table of `groups`
// (at most 64) slots, with the warp's lanes of one group combined first when `combine`
// (__match_any_sync, tessera_peer_sum: one atomic a group); each block merges its table
// into `sums` and `counts`.
extern "C" __global__ void shared_group_sums(const int32_t* keys, const int64_t* values, int64_t n, int groups, int combine,
                                             unsigned long long* sums, unsigned long long* counts) {
    __shared__ unsigned long long sh_sum[64];
    __shared__ unsigned long long sh_count[64];
    for (int s = threadIdx.x; s < 64; s += blockDim.x) { sh_sum[s] = 0; sh_count[s] = 0; }
    __syncthreads();
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int g = keys[i] % groups;
        if (combine) {
            const unsigned int m = __match_any_sync(__activemask(), g);
            const long long t = tessera_peer_sum(m, values[i]);
            if ((int)(threadIdx.x & 31u) == __ffs(m) - 1) { atomicAdd(&sh_sum[g], (unsigned long long)t); atomicAdd(&sh_count[g], (unsigned long long)__popc(m)); }
        } else {
            atomicAdd(&sh_sum[g], (unsigned long long)values[i]);
            atomicAdd(&sh_count[g], 1ull);
        }
    }
    __syncthreads();
    for (int s = threadIdx.x; s < groups; s += blockDim.x) {
        atomicAdd(&sums[s], sh_sum[s]);
        atomicAdd(&counts[s], sh_count[s]);
    }
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

// Inserts every key into a table built for unique keys: `slot[i]` is its slot, or -1 for
// a key inserted already, or -2 for a full table.
extern "C" __global__ void hash_insert_unique(const unsigned long long* keys, int64_t n, unsigned long long* table,
                                              unsigned long long mask, long long* slot) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        slot[i] = tessera_hash_insert_unique(table, mask, keys[i]);
}

// Finds or inserts every key (a hash aggregation's groups) and counts its rows per slot.
extern "C" __global__ void hash_group_count(const unsigned long long* keys, int64_t n, unsigned long long* table,
                                            unsigned long long mask, unsigned long long* counts, long long* slot) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const long long s = tessera_hash_find_or_insert(table, mask, keys[i]);
        slot[i] = s;
        if (s >= 0) atomicAdd(&counts[s], 1ull);
    }
}

// Looks every key up in a table an earlier launch built: its slot or -1.
extern "C" __global__ void hash_find(const unsigned long long* keys, int64_t n, const unsigned long long* table,
                                     unsigned long long mask, long long* slot) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        slot[i] = tessera_hash_find(table, mask, keys[i]);
}

// Every row of a column in bit-packed tiles (tiles.cuh), decoded one row a thread.
extern "C" __global__ void unpack_all(const unsigned long long* col, int64_t n, int64_t* out) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        out[i] = tessera_unpack(col, i);
    }
}

// The rows of a column in bit-packed tiles that a pseudo-random subset of lanes wants
// (`(i * 0x9E3779B97F4A7C15) >> 61 < keep`, of 8), decoded a warp at a time
// (tessera_unpack_warp); the other rows of `out` are left as they are.
extern "C" __global__ void unpack_warp_some(const unsigned long long* col, int64_t n, unsigned int keep, int64_t* out) {
    for (int64_t start = (int64_t)blockIdx.x * blockDim.x; start < n; start += (int64_t)gridDim.x * blockDim.x) {
        const int64_t i = start + threadIdx.x;
        const bool want = i < n && (((unsigned long long)i * 0x9E3779B97F4A7C15ull) >> 61) < keep;
        const long long v = tessera_unpack_warp(col, i, want);
        if (want) out[i] = v;
    }
}

// Every row of a column in bit-packed tiles, a block's kernel tile of T rows at a time
// staged in shared memory and decoded from there (tessera_stage, tessera_staged32/64),
// as generated kernels read the packed columns they load up front; launched with blocks
// of 128 threads.
template <int T, int WIDTH>
__device__ void unpack_staged(const unsigned long long* col, int64_t n, int64_t* out) {
    __shared__ __align__(16) unsigned long long sh[tessera_stage_words(T, WIDTH)];
    for (long long tile = (long long)blockIdx.x * T; tile < n; tile += (long long)gridDim.x * T) {
        const unsigned int warp = (unsigned int)(tile / T) % (blockDim.x / 32);
        tessera_stage<T>(col, tile, n, sh, warp);
        tessera_stage_commit();
        tessera_stage_wait();
        __syncthreads();
        const StageDec d = tessera_stage_dec<T, 128>(sh, tile);
        for (unsigned int i = 0; i < (unsigned int)T / 128u; ++i) {
            const long long row = tile + threadIdx.x + (long long)i * 128;
            if (row < n) out[row] = WIDTH == 64 ? tessera_staged64(d, i) : (long long)tessera_staged32(d, i);
        }
        __syncthreads();
    }
}
extern "C" __global__ void unpack_staged_128_64(const unsigned long long* col, int64_t n, int64_t* out) { unpack_staged<128, 64>(col, n, out); }
extern "C" __global__ void unpack_staged_512_64(const unsigned long long* col, int64_t n, int64_t* out) { unpack_staged<512, 64>(col, n, out); }
extern "C" __global__ void unpack_staged_2048_64(const unsigned long long* col, int64_t n, int64_t* out) { unpack_staged<2048, 64>(col, n, out); }
extern "C" __global__ void unpack_staged_512_32(const unsigned long long* col, int64_t n, int64_t* out) { unpack_staged<512, 32>(col, n, out); }
extern "C" __global__ void unpack_staged_256_32(const unsigned long long* col, int64_t n, int64_t* out) { unpack_staged<256, 32>(col, n, out); }

// Every row of a narrowed column of T distances, tiles of ITEMS * 128 rows loaded a word a
// lane (tessera_word_row, tessera_word_load) and handed out by shuffles
// (tessera_word_pick), as generated kernels load the narrowed columns they read up front
// (Experiments::narrow_words); launched with blocks of 128 threads. Item i of thread t
// is row tile + i * 128 + t, as in those kernels.
template <typename T, typename W, int ITEMS>
__device__ void narrow_words(const T* col, int64_t n, int64_t* out) {
    constexpr int C = (int)(sizeof(W) / sizeof(T));
    for (long long tile = (long long)blockIdx.x * ITEMS * 128; tile < n; tile += (long long)gridDim.x * ITEMS * 128) {
        unsigned int w[ITEMS / C];
        for (int k = 0; k < ITEMS / C; ++k) {
            const long long r = tile + (long long)k * C * 128 + tessera_word_row<C, 128>();
            w[k] = r < n ? tessera_word_load<W>(col, r, n) : 0u;
        }
        for (int i = 0; i < ITEMS; ++i) {
            const unsigned int v = tessera_word_pick<T, C>(w[i / C], i % C);
            const long long row = tile + threadIdx.x + (long long)i * 128;
            if (row < n) out[row] = (int64_t)v;
        }
    }
}
extern "C" __global__ void narrow_words_8_4(const uint8_t* col, int64_t n, int64_t* out) { narrow_words<uint8_t, unsigned int, 4>(col, n, out); }
extern "C" __global__ void narrow_words_8_2(const uint8_t* col, int64_t n, int64_t* out) { narrow_words<uint8_t, unsigned short, 2>(col, n, out); }
extern "C" __global__ void narrow_words_8_8(const uint8_t* col, int64_t n, int64_t* out) { narrow_words<uint8_t, unsigned int, 8>(col, n, out); }
extern "C" __global__ void narrow_words_16_4(const uint16_t* col, int64_t n, int64_t* out) { narrow_words<uint16_t, unsigned int, 4>(col, n, out); }
extern "C" __global__ void narrow_words_16_2(const uint16_t* col, int64_t n, int64_t* out) { narrow_words<uint16_t, unsigned int, 2>(col, n, out); }
extern "C" __global__ void narrow_words_8_6(const uint8_t* col, int64_t n, int64_t* out) { narrow_words<uint8_t, unsigned short, 6>(col, n, out); }
extern "C" __global__ void narrow_words_16_6(const uint16_t* col, int64_t n, int64_t* out) { narrow_words<uint16_t, unsigned int, 6>(col, n, out); }

// Every row of a bit-packed narrowed column of W bits a row (codegen::Narrow::Bits,
// lane-interleaved), tiles of ITEMS * 128 rows loaded as the words of each thread's
// stream (tessera_bits_base, tessera_bits_loads of them) and taken out by
// tessera_bits_take, as generated kernels load the bit-packed columns they read up
// front (bit_words32_: tiles counted in `int`s, as kernels over at most 2^30 rows count
// them); out2 gets each row read alone (tessera_bits_get, its row a T). bit_steps32_: as
// kernels over `int` rows walk them, the tile's value of the streams counted a grid's
// stride a tile (tessera_stream_value, tessera_bits_word). Launched with blocks of 128
// threads.
template <int W, int ITEMS, typename T>
__device__ void bit_words(const unsigned int* col, int64_t n, int64_t* out, int64_t* out2) {
    constexpr int LOADS = tessera_bits_loads(W, ITEMS);
    for (T tile = (T)blockIdx.x * ITEMS * 128; tile < n; tile += (T)gridDim.x * ITEMS * 128) {
        unsigned int w[(ITEMS * W + 31) / 32 + 1] = {};
        const unsigned int* bw = tessera_bits_base<W, 128>(col, tile);
        for (int k = 0; k < LOADS; ++k) w[k] = __ldg(bw + k * 128);
        unsigned int d[ITEMS];
        tessera_bits_take<W, ITEMS>(w, tessera_bits_shift<W, 128>(tile), d);
        for (int i = 0; i < ITEMS; ++i) {
            const T row = tile + (T)threadIdx.x + (T)i * 128;
            if (row < n) {
                out[row] = (int64_t)d[i];
                out2[row] = (int64_t)tessera_bits_get<W, 128>(col, row);
            }
        }
    }
}
template <int W, int ITEMS>
__device__ void bit_steps(const unsigned int* col, int64_t n, int64_t* out, int64_t* out2) {
    constexpr int LOADS = tessera_bits_loads(W, ITEMS);
    unsigned int kq = tessera_stream_value<128>((int)blockIdx.x * ITEMS * 128);
    for (int tile = (int)blockIdx.x * ITEMS * 128; tile < n; tile += (int)gridDim.x * ITEMS * 128, kq += gridDim.x * ITEMS) {
        unsigned int w[(ITEMS * W + 31) / 32 + 1] = {};
        const unsigned int* bw = tessera_bits_word<128>(col, kq * W);
        for (int k = 0; k < LOADS; ++k) w[k] = __ldg(bw + k * 128);
        unsigned int d[ITEMS];
        tessera_bits_take<W, ITEMS>(w, (kq * W) & 31u, d);
        for (int i = 0; i < ITEMS; ++i) {
            const int row = tile + (int)threadIdx.x + i * 128;
            if (row < n) {
                out[row] = (int64_t)d[i];
                out2[row] = (int64_t)tessera_bits_get<W, 128>(col, row);
            }
        }
    }
}
#define BIT_WORDS(W, ITEMS) \
    extern "C" __global__ void bit_words_##W##_##ITEMS(const unsigned int* col, int64_t n, int64_t* out, int64_t* out2) { bit_words<W, ITEMS, long long>(col, n, out, out2); } \
    extern "C" __global__ void bit_words32_##W##_##ITEMS(const unsigned int* col, int64_t n, int64_t* out, int64_t* out2) { bit_words<W, ITEMS, int>(col, n, out, out2); } \
    extern "C" __global__ void bit_steps32_##W##_##ITEMS(const unsigned int* col, int64_t n, int64_t* out, int64_t* out2) { bit_steps<W, ITEMS>(col, n, out, out2); }
BIT_WORDS(1, 8)
BIT_WORDS(4, 8)
BIT_WORDS(4, 4)
BIT_WORDS(6, 8)
BIT_WORDS(6, 2)
BIT_WORDS(12, 4)
BIT_WORDS(12, 8)
BIT_WORDS(17, 4)
BIT_WORDS(20, 4)
BIT_WORDS(24, 8)
BIT_WORDS(31, 2)
BIT_WORDS(31, 16)
#undef BIT_WORDS

// Every row of a column of runs (codegen::Narrow::Runs, codegen::fill_runs) read by
// tessera_runs_get (out) and as kernels read a tile's rows up front (out2: the warp's
// directory words by tessera_runs_dirs, the value by tessera_runs_value), rows striped
// over a grid of 128-thread blocks.
template <typename T>
__device__ void runs_rows(const unsigned int* dir, const T* values, int64_t n, int64_t* out, int64_t* out2) {
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < n; r += (long long)gridDim.x * blockDim.x) {
        out[r] = (int64_t)tessera_runs_get(dir, values, r);
        const uint2 d = __ldg(tessera_runs_dirs<128>(dir, r - (long long)threadIdx.x));
        out2[r] = (int64_t)tessera_runs_value(values, d, tessera_lanemask_le());
    }
}
// And a tile's rows, 4 items a thread of a 128-thread block, from the warp's directory
// words held one a lane (`tessera_runs_dir_lane`, `tessera_runs_value_lane`).
template <typename T>
__device__ void runs_lane_rows(const unsigned int* dir, const T* values, int64_t n, int64_t* out) {
    for (long long tile = (long long)blockIdx.x * 512; tile < n; tile += (long long)gridDim.x * 512) {
        const unsigned int w = tessera_runs_dir_lane<4, 4>(dir, tile);
        #pragma unroll
        for (int i = 0; i < 4; ++i) {
            const long long r = tile + threadIdx.x + (long long)i * 128;
            const T v = tessera_runs_value_lane(values, w, i, tessera_lanemask_le());
            if (r < n) out[r] = (int64_t)v;
        }
    }
}
// The same over `int` rows: read alone in 32 bits, and a tile's directory words found
// from its value of the streams (tessera_runs_pairs_at, tessera_runs_word_at; the
// tile's first row over 128).
template <typename T>
__device__ void runs_rows32(const unsigned int* dir, const T* values, int64_t n, int64_t* out, int64_t* out2) {
    for (int r = (int)(blockIdx.x * blockDim.x + threadIdx.x); r < n; r += (int)(gridDim.x * blockDim.x)) {
        out[r] = (int64_t)tessera_runs_get(dir, values, r);
        const uint2 d = __ldg(tessera_runs_pairs_at<128>(dir, tessera_stream_value<128>(r - (int)threadIdx.x)));
        out2[r] = (int64_t)tessera_runs_value(values, d, tessera_lanemask_le());
    }
}
template <typename T>
__device__ void runs_lane_steps(const unsigned int* dir, const T* values, int64_t n, int64_t* out) {
    unsigned int kq = tessera_stream_value<128>((int)blockIdx.x * 512);
    for (int tile = (int)blockIdx.x * 512; tile < n; tile += (int)gridDim.x * 512, kq += gridDim.x * 4u) {
        const unsigned int w = tessera_runs_word_at<4, 4>(dir, kq);
        #pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int r = tile + (int)threadIdx.x + i * 128;
            const T v = tessera_runs_value_lane(values, w, i, tessera_lanemask_le());
            if (r < n) out[r] = (int64_t)v;
        }
    }
}
extern "C" __global__ void runs_rows32_8(const unsigned int* dir, const uint8_t* values, int64_t n, int64_t* out, int64_t* out2) { runs_rows32(dir, values, n, out, out2); }
extern "C" __global__ void runs_rows32_16(const unsigned int* dir, const uint16_t* values, int64_t n, int64_t* out, int64_t* out2) { runs_rows32(dir, values, n, out, out2); }
extern "C" __global__ void runs_rows32_32(const unsigned int* dir, const uint32_t* values, int64_t n, int64_t* out, int64_t* out2) { runs_rows32(dir, values, n, out, out2); }
extern "C" __global__ void runs_lane_steps_8(const unsigned int* dir, const uint8_t* values, int64_t n, int64_t* out) { runs_lane_steps(dir, values, n, out); }
extern "C" __global__ void runs_lane_steps_16(const unsigned int* dir, const uint16_t* values, int64_t n, int64_t* out) { runs_lane_steps(dir, values, n, out); }
extern "C" __global__ void runs_lane_steps_32(const unsigned int* dir, const uint32_t* values, int64_t n, int64_t* out) { runs_lane_steps(dir, values, n, out); }
extern "C" __global__ void runs_rows_8(const unsigned int* dir, const uint8_t* values, int64_t n, int64_t* out, int64_t* out2) { runs_rows(dir, values, n, out, out2); }
extern "C" __global__ void runs_rows_16(const unsigned int* dir, const uint16_t* values, int64_t n, int64_t* out, int64_t* out2) { runs_rows(dir, values, n, out, out2); }
extern "C" __global__ void runs_rows_32(const unsigned int* dir, const uint32_t* values, int64_t n, int64_t* out, int64_t* out2) { runs_rows(dir, values, n, out, out2); }
extern "C" __global__ void runs_lane_rows_8(const unsigned int* dir, const uint8_t* values, int64_t n, int64_t* out) { runs_lane_rows(dir, values, n, out); }
extern "C" __global__ void runs_lane_rows_16(const unsigned int* dir, const uint16_t* values, int64_t n, int64_t* out) { runs_lane_rows(dir, values, n, out); }
extern "C" __global__ void runs_lane_rows_32(const unsigned int* dir, const uint32_t* values, int64_t n, int64_t* out) { runs_lane_rows(dir, values, n, out); }

// Zone tests (tessera_zone_pass) of every tile of T rows of a table of `n` rows, one a
// thread: out[t] one bit read where T divides 2048 (`ONE`), out2[t] the two-bit form.
template <int T>
__device__ void zone_tiles(const unsigned int* zones, int64_t n, int64_t* out, int64_t* out2) {
    const int64_t tiles = (n + T - 1) / T;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < tiles; t += (int64_t)gridDim.x * blockDim.x) {
        out[t] = tessera_zone_pass<T, 2048 % T == 0>(zones, t * T, n) ? 1 : 0;
        out2[t] = tessera_zone_pass<T>(zones, t * T, n) ? 1 : 0;
    }
}
extern "C" __global__ void zone_tiles_256(const unsigned int* zones, int64_t n, int64_t* out, int64_t* out2) { zone_tiles<256>(zones, n, out, out2); }
extern "C" __global__ void zone_tiles_1024(const unsigned int* zones, int64_t n, int64_t* out, int64_t* out2) { zone_tiles<1024>(zones, n, out, out2); }
extern "C" __global__ void zone_tiles_2048(const unsigned int* zones, int64_t n, int64_t* out, int64_t* out2) { zone_tiles<2048>(zones, n, out, out2); }
extern "C" __global__ void zone_tiles_1536(const unsigned int* zones, int64_t n, int64_t* out, int64_t* out2) { zone_tiles<1536>(zones, n, out, out2); }
