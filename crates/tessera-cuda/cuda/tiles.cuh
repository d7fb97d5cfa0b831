// tiles.cuh: reading a column the store keeps in tiles, decoded where a kernel loads
// it (Shanbhag et al., SIGMOD 2022: tile-based lightweight compression decoded in the
// query kernel).
//
// A packed column is one array of 64-bit words (tessera_storage::PackedColumn):
//   words[2t]      tile t's frame of reference (signed)
//   words[2t + 1]  (offset of tile t's packed values, in words from the array's start) << 8
//                  | bits of one value (0 to 64)
//   then the packed values: value i of a tile is `bits` wide at bit i * bits of its
//   little-endian words, LSB first, with one spare word after each tile's values.
//   A tile of runs (0x80 set in the low byte, TILE_RUNS) starts with 64 chunk words,
//   one per 32 rows: the low half has bit j set where row j of the chunk starts a run
//   (j >= 1), the high half is the run holding the chunk's first row; its runs' values
//   follow, packed as above. Row j of a chunk is run high + popc(low & (2^(j+1) - 1)).
// Tile t holds rows [t * 2048, (t + 1) * 2048). Every row decodes alone, so a kernel
// loads a packed column exactly where it would load a plain one (all of a tile, or
// only the rows still selected), and a warp's 32 consecutive rows read 32 * bits
// consecutive bits.
#pragma once

namespace tessera {

// log2 of the rows of a tile (tessera_storage::tiles::TILE_ROWS).
constexpr int TILE_ROWS_LOG2 = 11;
// The flag of a tile of runs (tessera_storage::packed::RUNS), and its chunk words.
constexpr unsigned long long TILE_RUNS = 0x80ull;
constexpr int TILE_CHUNKS = (1 << TILE_ROWS_LOG2) / 32;

// In a tile of runs whose data starts at word `at`, the run holding row `o` of the tile.
__device__ __forceinline__ unsigned long long tessera_run_of(const unsigned long long* __restrict__ col, unsigned long long at, unsigned int o) {
    const unsigned long long chunk = __ldg(&col[at + (o >> 5)]);
    const unsigned int upto = (unsigned int)((2ull << (o & 31u)) - 1ull);
    return (chunk >> 32) + (unsigned long long)__popc((unsigned int)chunk & upto);
}

// Row `row` of packed column `col`.
__device__ __forceinline__ long long tessera_unpack(const unsigned long long* __restrict__ col, long long row) {
    const long long t = row >> TILE_ROWS_LOG2;
    const long long reference = (long long)__ldg(&col[2 * t]);
    const unsigned long long meta = __ldg(&col[2 * t + 1]);
    const unsigned int bits = (unsigned int)(meta & 0x7fu);
    const unsigned int o = (unsigned int)(row & ((1 << TILE_ROWS_LOG2) - 1));
    unsigned long long at = meta >> 8, index = o;
    if (meta & TILE_RUNS) {
        index = tessera_run_of(col, at, o);
        at += TILE_CHUNKS;
    }
    const unsigned long long pos = index * bits;
    const unsigned long long w = at + (pos >> 6);
    const unsigned int off = (unsigned int)(pos & 63u);
    unsigned long long v = __ldg(&col[w]) >> off;
    // A value crossing into the next word; the spare word keeps w + 1 inside the tile.
    if (off + bits > 64u) v |= __ldg(&col[w + 1]) << (64u - off);
    const unsigned long long mask = bits >= 64u ? ~0ull : ((1ull << bits) - 1ull);
    return reference + (long long)(v & mask);
}

// Decoding a warp's rows together. The lanes' rows are `base + lane` for one `base`
// that is a multiple of 32 (a kernel's striped items); every lane of the warp calls
// these at once, and `want` says whether this lane needs its value (one that does not
// gets a value that means nothing). A warp's 32 values of a tile of single values are
// `bits` consecutive 32-bit words from a word boundary: lane k loads word k (and k + 32
// beyond 32 bits), coalesced, and each lane takes the words holding its value from the
// others by shuffles. In a tile of runs the lanes load their chunk's word (a broadcast)
// and each lane then its run's value. The packed array ends in spare words
// (`tessera_storage::packed::PAD_WORDS`), so a warp's loads past its last row stay
// inside it.
//
// Two steps, so that a kernel can issue a tile's word loads a tile ahead of their use
// (software pipelining over tiles, `print.rs`): the words, then the value. Both read the
// tile's header (16 bytes, the same for a kernel tile of 256 or 512 rows, which lies
// inside one 2048-row tile); a kernel prefetches it into L1 two tiles ahead
// (`tessera_tile_prefetch`), so that neither waits on DRAM for it, and keeps no
// registers for it. Values of 32-bit columns are computed in 32 bits.

// The header of the tile holding `row` (its frame of reference, and its data's offset
// and kind).
__device__ __forceinline__ ulonglong2 tessera_tile_header(const unsigned long long* __restrict__ col, long long row) {
    return __ldg(reinterpret_cast<const ulonglong2*>(col) + (row >> TILE_ROWS_LOG2));
}

// Brings the header of the tile holding `row` into L1.
__device__ __forceinline__ void tessera_tile_prefetch(const unsigned long long* __restrict__ col, long long row) {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(reinterpret_cast<const ulonglong2*>(col) + (row >> TILE_ROWS_LOG2)));
}

// A lane's words for its warp's rows: for single values, the warp's `lane`-th 32-bit
// word in the low half and its `lane + 32`-th in the high half (0 where the tile has no
// such word); for runs, the chunk's word. `some`: whether the warp wants any of its rows
// (the same in every lane); `from`..`to`: the words worth loading.
__device__ __forceinline__ unsigned long long tessera_words_in(const unsigned long long* __restrict__ col, long long row, unsigned int from, unsigned int to) {
    const unsigned int lane = threadIdx.x & 31u;
    const long long base = row - (long long)lane;
    const ulonglong2 header = tessera_tile_header(col, base);
    const unsigned int bits = (unsigned int)header.y & 0x7fu;
    const unsigned int o = (unsigned int)base & ((1u << TILE_ROWS_LOG2) - 1u);
    if (header.y & TILE_RUNS) {
        // The lane's run, from its chunk's word (a broadcast).
        const unsigned long long chunk = __ldg(&col[(header.y >> 8) + (o >> 5)]);
        return (chunk >> 32) + (unsigned long long)__popc((unsigned int)chunk & (unsigned int)((2ull << lane) - 1ull));
    }
    const unsigned int* __restrict__ words = reinterpret_cast<const unsigned int*>(col) + 2ull * (header.y >> 8) + (o >> 5) * bits;
    const unsigned int w0 = lane < bits && lane >= from && lane <= to ? __ldg(&words[lane]) : 0u;
    if (bits <= 32u) return w0;
    const unsigned int w1 = lane + 32u < bits && lane + 32u >= from && lane + 32u <= to ? __ldg(&words[lane + 32u]) : 0u;
    return (unsigned long long)w1 << 32 | w0;
}

// The words for a warp whose lanes want their rows where `want` holds: all of the warp's
// words if any lane does (a tile's first loads, which want every row there is); of a
// column of at most 32 bits, one word.
__device__ __forceinline__ unsigned int tessera_tile_words32(const unsigned long long* __restrict__ col, long long row, bool want) {
    if (__ballot_sync(0xffffffffu, want) == 0u) return 0u;
    return (unsigned int)tessera_words_in(col, row, 0u, 63u);
}
__device__ __forceinline__ unsigned long long tessera_tile_words64(const unsigned long long* __restrict__ col, long long row, bool want) {
    if (__ballot_sync(0xffffffffu, want) == 0u) return 0ull;
    return tessera_words_in(col, row, 0u, 63u);
}

// The value of run `run` of a tile of runs.
__device__ __forceinline__ unsigned long long tessera_run_value(const unsigned long long* __restrict__ col, ulonglong2 header, unsigned int run, unsigned int bits) {
    const unsigned long long pos = (unsigned long long)run * bits;
    const unsigned long long at = (header.y >> 8) + TILE_CHUNKS + (pos >> 6);
    const unsigned int off = (unsigned int)(pos & 63u);
    unsigned long long v = __ldg(&col[at]) >> off;
    if (off + bits > 64u) v |= __ldg(&col[at + 1]) << (64u - off);
    return v;
}

// A lane's value of a column of at most 32 bits from the warp's words (`tessera_tile_words`).
__device__ __forceinline__ int tessera_tile_value32(const unsigned long long* __restrict__ col, unsigned int w, long long row, bool want) {
    const ulonglong2 header = tessera_tile_header(col, row);
    const unsigned int bits = (unsigned int)header.y & 0x7fu;
    const unsigned int mask = bits >= 32u ? ~0u : (1u << bits) - 1u;
    if (header.y & TILE_RUNS) {
        return want ? (int)header.x + (int)((unsigned int)tessera_run_value(col, header, w, bits) & mask) : 0;
    }
    // No branch for a tile of one value (0 bits): every word is 0 and so is the mask.
    const unsigned int pos = (threadIdx.x & 31u) * bits;
    const unsigned int lo = __shfl_sync(0xffffffffu, w, (int)(pos >> 5));
    const unsigned int hi = __shfl_sync(0xffffffffu, w, (int)((pos >> 5) + 1u) & 31);
    return (int)header.x + (int)(__funnelshift_r(lo, hi, pos & 31u) & mask);
}

// A lane's value of a 64-bit column from the warp's words.
__device__ __forceinline__ long long tessera_tile_value64(const unsigned long long* __restrict__ col, unsigned long long w, long long row, bool want) {
    const ulonglong2 header = tessera_tile_header(col, row);
    const unsigned int bits = (unsigned int)header.y & 0x7fu;
    const unsigned long long mask = bits >= 64u ? ~0ull : ((1ull << bits) - 1ull);
    if (header.y & TILE_RUNS) {
        return want ? (long long)header.x + (long long)(tessera_run_value(col, header, (unsigned int)w, bits) & mask) : 0;
    }
    const unsigned int pos = (threadIdx.x & 31u) * bits;
    const int q = (int)(pos >> 5);
    unsigned long long v;
    if (bits <= 32u) {
        const unsigned int lo = __shfl_sync(0xffffffffu, (unsigned int)w, q);
        const unsigned int hi = __shfl_sync(0xffffffffu, (unsigned int)w, (q + 1) & 31);
        v = __funnelshift_r(lo, hi, pos & 31u);
    } else {
        // Word k in lane k % 32's low or high half; a value spans three at most.
        unsigned int x[3];
        #pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int at = q + k;
            const unsigned int a = __shfl_sync(0xffffffffu, (unsigned int)w, at & 31);
            const unsigned int b = __shfl_sync(0xffffffffu, (unsigned int)(w >> 32), at & 31);
            x[k] = at < 32 ? a : b;
        }
        const unsigned int off = pos & 31u;
        v = ((unsigned long long)x[1] << 32 | x[0]) >> off;
        if (off + bits > 64u) v |= (unsigned long long)x[2] << (64u - off);
    }
    return (long long)header.x + (long long)(v & mask);
}

// Both steps at once, for the lanes that want their rows: only the words from the first
// wanted value's to the last's are loaded (a later stage's loads, for the rows still
// selected).
__device__ __forceinline__ int tessera_unpack_warp32(const unsigned long long* __restrict__ col, long long row, bool want) {
    const unsigned int wanted = __ballot_sync(0xffffffffu, want);
    if (wanted == 0u) return 0;
    const unsigned int bits = (unsigned int)tessera_tile_header(col, row).y & 0x7fu;
    const unsigned int from = ((unsigned int)(__ffs(wanted) - 1) * bits) >> 5;
    const unsigned int to = ((32u - (unsigned int)__clz(wanted)) * bits - 1u) >> 5;
    return tessera_tile_value32(col, (unsigned int)tessera_words_in(col, row, from, to), row, want);
}

__device__ __forceinline__ long long tessera_unpack_warp64(const unsigned long long* __restrict__ col, long long row, bool want) {
    const unsigned int wanted = __ballot_sync(0xffffffffu, want);
    if (wanted == 0u) return 0;
    const unsigned int bits = (unsigned int)tessera_tile_header(col, row).y & 0x7fu;
    const unsigned int from = ((unsigned int)(__ffs(wanted) - 1) * bits) >> 5;
    const unsigned int to = ((32u - (unsigned int)__clz(wanted)) * bits - 1u) >> 5;
    return tessera_tile_value64(col, tessera_words_in(col, row, from, to), row, want);
}

// A row of any packed column, by the whole warp (as a 64-bit value).
__device__ __forceinline__ long long tessera_unpack_warp(const unsigned long long* __restrict__ col, long long row, bool want) {
    return tessera_unpack_warp64(col, row, want);
}

}  // namespace tessera
