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
// `bits` consecutive 32-bit words from a word boundary: the lanes load those words once,
// coalesced (only those between the first and the last wanted value), and each lane
// takes the words holding its value from the others by shuffles. In a tile of runs the
// lanes load their chunk's word (a broadcast) and each lane then its run's value.
//
// Three steps, so that a kernel can issue each step's loads a tile ahead of their use
// (software pipelining over tiles, `print.rs`): the tile's header (16 bytes, the same for
// a whole kernel tile of 256 or 512 rows, which lies inside one 2048-row tile), the
// words, then the value.

// The header of the tile holding `row` (its frame of reference, and its data's offset
// and kind).
__device__ __forceinline__ ulonglong2 tessera_tile_header(const unsigned long long* __restrict__ col, long long row) {
    return __ldg(reinterpret_cast<const ulonglong2*>(col) + (row >> TILE_ROWS_LOG2));
}

// A lane's words for its warp's rows (see above): for single values up to 64 bits, the
// warp's `lane`-th 32-bit word in the low half and its `lane + 32`-th in the high half;
// for runs, the chunk's word.
__device__ __forceinline__ unsigned long long tessera_tile_words(const unsigned long long* __restrict__ col, ulonglong2 header, long long row, bool want) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int wanted = __ballot_sync(0xffffffffu, want);
    const unsigned int bits = (unsigned int)(header.y & 0x7fu);
    if (wanted == 0u || bits == 0u) return 0ull;
    const unsigned int o = (unsigned int)((row - (long long)lane) & ((1 << TILE_ROWS_LOG2) - 1));
    if (header.y & TILE_RUNS) return __ldg(&col[(header.y >> 8) + (o >> 5)]);
    // The 32-bit word where the warp's values start: the tile's values, then `bits`
    // words for each 32 rows before the warp's.
    const unsigned int* __restrict__ words = reinterpret_cast<const unsigned int*>(col) + 2ull * (header.y >> 8) + (unsigned long long)(o >> 5) * bits;
    // The words holding a wanted value: from the first wanted lane's to the last's.
    const unsigned int from = ((unsigned int)(__ffs(wanted) - 1) * bits) >> 5;
    const unsigned int to = ((32u - (unsigned int)__clz(wanted)) * bits - 1u) >> 5;
    const unsigned int w0 = lane >= from && lane <= to ? __ldg(&words[lane]) : 0u;
    const unsigned int w1 = bits > 32u && lane + 32u >= from && lane + 32u <= to ? __ldg(&words[lane + 32u]) : 0u;
    return (unsigned long long)w1 << 32 | w0;
}

// A lane's value from its tile's header and the warp's words (`tessera_tile_words`).
__device__ __forceinline__ long long tessera_tile_value(const unsigned long long* __restrict__ col, ulonglong2 header, unsigned long long w, long long row, bool want) {
    const long long reference = (long long)header.x;
    const unsigned int bits = (unsigned int)(header.y & 0x7fu);
    if (bits == 0u) return reference;
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned long long mask = bits >= 64u ? ~0ull : ((1ull << bits) - 1ull);
    if (header.y & TILE_RUNS) {
        if (!want) return 0;
        const unsigned long long run = (w >> 32) + (unsigned long long)__popc((unsigned int)w & (unsigned int)((2ull << lane) - 1ull));
        const unsigned long long pos = run * bits;
        const unsigned long long at = (header.y >> 8) + TILE_CHUNKS + (pos >> 6);
        const unsigned int off = (unsigned int)(pos & 63u);
        unsigned long long v = __ldg(&col[at]) >> off;
        if (off + bits > 64u) v |= __ldg(&col[at + 1]) << (64u - off);
        return reference + (long long)(v & mask);
    }
    const unsigned int pos = lane * bits;
    const int q = (int)(pos >> 5);
    const unsigned int off = pos & 31u;
    unsigned long long v;
    if (bits <= 32u) {
        // One word a lane; a value spans two at most.
        const unsigned int lo = __shfl_sync(0xffffffffu, (unsigned int)w, q);
        const unsigned int hi = __shfl_sync(0xffffffffu, (unsigned int)w, (q + 1) & 31);
        v = ((unsigned long long)hi << 32 | lo) >> off;
    } else {
        // Up to 64 words, two a lane (word k in lane k % 32's low or high half); a
        // value spans three at most.
        unsigned int x[3];
        #pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int at = q + k;
            const unsigned int a = __shfl_sync(0xffffffffu, (unsigned int)w, at & 31);
            const unsigned int b = __shfl_sync(0xffffffffu, (unsigned int)(w >> 32), at & 31);
            x[k] = at < 32 ? a : b;
        }
        v = ((unsigned long long)x[1] << 32 | x[0]) >> off;
        if (off + bits > 64u) v |= (unsigned long long)x[2] << (64u - off);
    }
    return reference + (long long)(v & mask);
}

// The three steps at once, with the tile's header at hand (loaded ahead).
__device__ __forceinline__ long long tessera_unpack_warp_at(const unsigned long long* __restrict__ col, ulonglong2 header, long long row, bool want) {
    return tessera_tile_value(col, header, tessera_tile_words(col, header, row, want), row, want);
}

// The three steps at once.
__device__ __forceinline__ long long tessera_unpack_warp(const unsigned long long* __restrict__ col, long long row, bool want) {
    if (__ballot_sync(0xffffffffu, want) == 0u) return 0;
    return tessera_unpack_warp_at(col, tessera_tile_header(col, row - (long long)(threadIdx.x & 31u)), row, want);
}

}  // namespace tessera
