// tiles.cuh: reading a column the store keeps in tiles, decoded where a kernel loads
// it (Shanbhag et al., SIGMOD 2022: tile-based lightweight compression decoded in the
// query kernel).
//
// A packed column is one array of 64-bit words (tessera_storage::PackedColumn):
//   words[2t]      tile t's frame of reference (signed)
//   words[2t + 1]  (offset of tile t's data, in words from the array's start) << 20
//                  | (words of that data) << 8 | bits of one value (0 to 64)
//   then the packed values: value i of a tile is `bits` wide at bit i * bits of its
//   little-endian words, LSB first, with one spare word after each tile's values.
//   A tile of runs (0x80 set in the low byte, TILE_RUNS) starts with 64 chunk words,
//   one per 32 rows: the low half has bit j set where row j of the chunk starts a run
//   (j >= 1), the high half is the run holding the chunk's first row; its runs' values
//   follow, packed as above (in at most RUN_VALUE_WORDS words). Row j of a chunk is run
//   high + popc(low & (2^(j+1) - 1)).
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
// The header's fields (tessera_storage::packed::{OFFSET_SHIFT, WORDS_SHIFT}), and the
// most words a tile's run values take (tessera_storage::packed::RUN_VALUE_WORDS).
constexpr int TILE_OFFSET_SHIFT = 20;
constexpr int TILE_WORDS_SHIFT = 8;
constexpr int RUN_VALUE_WORDS = 256;

// The low bits of a chunk word covering its rows 0 to `j` (0 to 31).
__device__ __forceinline__ unsigned int tessera_rows_upto(unsigned int j) {
    return (unsigned int)((2ull << j) - 1ull);
}

// In a tile of runs, the run holding the last row `upto` covers (tessera_rows_upto) of a
// chunk whose word is `chunk`.
__device__ __forceinline__ unsigned int tessera_run_upto(unsigned long long chunk, unsigned int upto) {
    return (unsigned int)(chunk >> 32) + (unsigned int)__popc((unsigned int)chunk & upto);
}

// In a tile of runs, the run holding row `j` (0 to 31) of a chunk whose word is `chunk`.
__device__ __forceinline__ unsigned int tessera_run_in(unsigned long long chunk, unsigned int j) {
    return tessera_run_upto(chunk, tessera_rows_upto(j));
}

// The `bits`-wide value (not masked) at bit `pos` of `words`, LSB first; the word after
// the one it starts in exists (a tile's spare word).
__device__ __forceinline__ unsigned long long tessera_bits_at(const unsigned long long* __restrict__ words, unsigned long long pos, unsigned int bits) {
    const unsigned int off = (unsigned int)(pos & 63u);
    unsigned long long v = __ldg(&words[pos >> 6]) >> off;
    if (off + bits > 64u) v |= __ldg(&words[(pos >> 6) + 1]) << (64u - off);
    return v;
}

// Row `row` of packed column `col`.
__device__ __forceinline__ long long tessera_unpack(const unsigned long long* __restrict__ col, long long row) {
    const long long t = row >> TILE_ROWS_LOG2;
    const long long reference = (long long)__ldg(&col[2 * t]);
    const unsigned long long meta = __ldg(&col[2 * t + 1]);
    const unsigned int bits = (unsigned int)(meta & 0x7fu);
    const unsigned int o = (unsigned int)(row & ((1 << TILE_ROWS_LOG2) - 1));
    unsigned long long at = meta >> TILE_OFFSET_SHIFT, index = o;
    if (meta & TILE_RUNS) {
        index = tessera_run_in(__ldg(&col[at + (o >> 5)]), o & 31u);
        at += TILE_CHUNKS;
    }
    const unsigned long long v = tessera_bits_at(col + at, index * bits, bits);
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
// tile's header (16 bytes) once a kernel tile (`TileDec`); a kernel prefetches it into
// L1 two tiles ahead (`tessera_tile_prefetch`), so that neither waits on DRAM for it.
// Values of 32-bit columns are computed in 32 bits.

// The header of the tile holding `row` (its frame of reference, and its data's offset
// and kind).
__device__ __forceinline__ ulonglong2 tessera_tile_header(const unsigned long long* __restrict__ col, long long row) {
    return __ldg(reinterpret_cast<const ulonglong2*>(col) + (row >> TILE_ROWS_LOG2));
}

// Brings the header of the tile holding `row` into L1.
__device__ __forceinline__ void tessera_tile_prefetch(const unsigned long long* __restrict__ col, long long row) {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(reinterpret_cast<const ulonglong2*>(col) + (row >> TILE_ROWS_LOG2)));
}

// What a warp needs of a tile to decode its rows, read once a kernel tile (a block's
// 256 or 512 rows lie inside one 2048-row tile) from the tile's header.
struct TileDec {
    const unsigned int* words;  // the tile's data, as 32-bit words
    long long reference;        // the frame of reference
    unsigned int bits;          // bits of a value (of a run's, for runs)
    unsigned int mask;          // the low `bits` bits, up to 32
    bool runs;                  // a tile of runs
};

// The decoder of the tile holding `row`.
__device__ __forceinline__ TileDec tessera_tile_dec(const unsigned long long* __restrict__ col, long long row) {
    const ulonglong2 h = tessera_tile_header(col, row);
    TileDec d;
    d.words = reinterpret_cast<const unsigned int*>(col) + 2ull * (h.y >> TILE_OFFSET_SHIFT);
    d.reference = (long long)h.x;
    d.bits = (unsigned int)h.y & 0x7fu;
    d.mask = d.bits >= 32u ? ~0u : (1u << d.bits) - 1u;
    d.runs = (h.y & TILE_RUNS) != 0ull;
    return d;
}

// A lane's words for its warp's rows (the warp's 32-row chunk of the tile): for single
// values, the chunk's `lane`-th 32-bit word in the low half and its `lane + 32`-th in the
// high half (0 where the chunk has no such word, or outside `from`..`to`, the words worth
// loading); for runs, the lane's run (below 2048), from its chunk's word (a broadcast).
__device__ __forceinline__ unsigned long long tessera_dec_words(const TileDec& d, long long row, unsigned int from, unsigned int to) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int chunk = ((unsigned int)row & ((1u << TILE_ROWS_LOG2) - 1u)) >> 5;
    if (d.runs) {
        return tessera_run_in(__ldg(reinterpret_cast<const unsigned long long*>(d.words) + chunk), lane);
    }
    const unsigned int* __restrict__ words = d.words + chunk * d.bits;
    const unsigned int w0 = lane < d.bits && lane >= from && lane <= to ? __ldg(&words[lane]) : 0u;
    if (d.bits <= 32u) return w0;
    const unsigned int w1 = lane + 32u < d.bits && lane + 32u >= from && lane + 32u <= to ? __ldg(&words[lane + 32u]) : 0u;
    return (unsigned long long)w1 << 32 | w0;
}

// Run `run`'s value (less the reference, not masked) in a tile of runs.
__device__ __forceinline__ unsigned long long tessera_run_value(const TileDec& d, unsigned int run) {
    return tessera_bits_at(reinterpret_cast<const unsigned long long*>(d.words) + TILE_CHUNKS, (unsigned long long)run * d.bits, d.bits);
}

// The 32 bits at bit `pos` of the warp's words (one 32-bit word a lane; `pos` below
// 32 * 32), taken from the lanes holding them.
__device__ __forceinline__ unsigned int tessera_shfl_bits(unsigned int w, unsigned int pos) {
    const unsigned int lo = __shfl_sync(0xffffffffu, w, (int)(pos >> 5));
    const unsigned int hi = __shfl_sync(0xffffffffu, w, (int)((pos >> 5) + 1u) & 31);
    return __funnelshift_r(lo, hi, pos & 31u);
}

// A lane's value of a column of at most 32 bits, from the warp's words (runs: its run).
__device__ __forceinline__ int tessera_dec_value32(const TileDec& d, unsigned int w, bool want) {
    if (d.runs) return want ? (int)d.reference + (int)((unsigned int)tessera_run_value(d, w) & d.mask) : 0;
    // No branch for a tile of one value (0 bits): every word is 0 and so is the mask.
    return (int)d.reference + (int)(tessera_shfl_bits(w, (threadIdx.x & 31u) * d.bits) & d.mask);
}

// A lane's value of a 64-bit column, from the warp's words (runs: its run).
__device__ __forceinline__ long long tessera_dec_value64(const TileDec& d, unsigned long long w, bool want) {
    const unsigned long long mask = d.bits >= 64u ? ~0ull : ((1ull << d.bits) - 1ull);
    if (d.runs) return want ? d.reference + (long long)(tessera_run_value(d, (unsigned int)w) & mask) : 0;
    const unsigned int pos = (threadIdx.x & 31u) * d.bits;
    const int q = (int)(pos >> 5);
    unsigned long long v;
    if (d.bits <= 32u) {
        v = tessera_shfl_bits((unsigned int)w, pos);
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
        if (off + d.bits > 64u) v |= (unsigned long long)x[2] << (64u - off);
    }
    return d.reference + (long long)(v & mask);
}

// A tile's words for a warp whose lanes want their rows where `want` holds: all of the
// warp's words if any lane does (a tile's first loads, which want every row there is);
// of a column of at most 32 bits, one word.
__device__ __forceinline__ unsigned int tessera_dec_words32(const TileDec& d, long long row, bool want) {
    if (__ballot_sync(0xffffffffu, want) == 0u) return 0u;
    return (unsigned int)tessera_dec_words(d, row, 0u, 63u);
}
__device__ __forceinline__ unsigned long long tessera_dec_words64(const TileDec& d, long long row, bool want) {
    if (__ballot_sync(0xffffffffu, want) == 0u) return 0ull;
    return tessera_dec_words(d, row, 0u, 63u);
}

// Both steps at once, for the lanes that want their rows: only the words from the first
// wanted value's to the last's are loaded (a later stage's loads, for the rows still
// selected).
__device__ __forceinline__ unsigned long long tessera_wanted_words(const TileDec& d, long long row, unsigned int wanted) {
    const unsigned int from = ((unsigned int)(__ffs(wanted) - 1) * d.bits) >> 5;
    const unsigned int to = ((32u - (unsigned int)__clz(wanted)) * d.bits - 1u) >> 5;
    return tessera_dec_words(d, row, from, to);
}
__device__ __forceinline__ int tessera_dec_unpack32(const TileDec& d, long long row, bool want) {
    const unsigned int wanted = __ballot_sync(0xffffffffu, want);
    if (wanted == 0u) return 0;
    return tessera_dec_value32(d, (unsigned int)tessera_wanted_words(d, row, wanted), want);
}
__device__ __forceinline__ long long tessera_dec_unpack64(const TileDec& d, long long row, bool want) {
    const unsigned int wanted = __ballot_sync(0xffffffffu, want);
    if (wanted == 0u) return 0;
    return tessera_dec_value64(d, tessera_wanted_words(d, row, wanted), want);
}

// Staging a kernel tile's words in shared memory: how a kernel reads the columns it
// loads up front (Crystal's BlockLoad, decoding from shared memory). A kernel tile of
// T rows (T = threads x items, dividing the 2048 rows of a stored tile) lies inside one
// stored tile; before the tile is needed, the block copies what its rows' values need
// into a buffer of the column's (`tessera_stage`, 16 bytes a cp.async, so the copy runs
// while the block works on the tile before), and each thread then decodes its items
// from there (`tessera_staged_*`). For single values, the words holding the tile's rows;
// for runs, the chunk words of its rows and all the stored tile's run values (at most
// RUN_VALUE_WORDS). A kernel double-buffers: it stages tile k + 1 while it works on
// tile k, and waits (tessera_stage_wait, then __syncthreads) before decoding.
//
// A thread's items are rows threadIdx.x + i * THREADS of the kernel tile, so in a tile of
// single values item i starts i * THREADS * bits bits after item 0: a whole number of
// 32-bit words, so the shift within a word is the same for every item. The decoder
// (`StageDec`, made once a tile) keeps the thread's first word, that shift and the step;
// an item is then two shared loads, a funnel shift, a mask and an add.

// A buffer starts with the tile's header (2 words: copied with its data, so that the
// threads decoding it read it from shared memory), then the data.
constexpr int STAGE_HEADER_WORDS = 2;

// 64-bit words a column's buffer takes for a kernel tile of `T` rows whose values are
// `width` bits wide (32 or 64): the header, then single values with two words to spare,
// or runs. Even (T is a multiple of 64), so that both buffers of a column's
// `__align__(16)` pair start on 16 bytes.
__host__ __device__ constexpr int tessera_stage_words(int T, int width) {
    return STAGE_HEADER_WORDS + (T * width / 64 + 2 > T / 32 + RUN_VALUE_WORDS ? T * width / 64 + 2 : T / 32 + RUN_VALUE_WORDS);
}

// Copies 16 bytes from global to shared memory (both 16-byte aligned), asynchronously
// where the GPU can; cached in L2 only, as a column's words are read once.
__device__ __forceinline__ void tessera_copy16(ulonglong2* dst, const ulonglong2* __restrict__ src) {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"((unsigned int)__cvta_generic_to_shared(dst)), "l"(src) : "memory");
#else
    *dst = __ldg(src);
#endif
}

// Ends a batch of copies (a group, waited for as one).
__device__ __forceinline__ void tessera_stage_commit() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits for this thread's copies; a __syncthreads() after it makes every thread's seen.
__device__ __forceinline__ void tessera_stage_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#endif
}

// Lane `lane` copies pairs `lane`, `lane + 32`, ... below `pairs` of 16 bytes: a few
// copies a lane (a 512-row tile of 24-bit values is 97 pairs), so the loop is not
// unrolled (an unrolled loop's prologue took more instructions than its copies).
__device__ __forceinline__ void tessera_copy_pairs(ulonglong2* dst, const ulonglong2* __restrict__ src, unsigned int pairs, unsigned int lane) {
    #pragma unroll 1
    for (unsigned int k = lane; k < pairs; k += 32u) tessera_copy16(dst + k, src + k);
}

// Warp `warp` of the block copies what kernel tile `tile` (its first row; `rows` in the
// column) of packed column `col` needs into `sh` (tessera_stage_words(T, width) words,
// 16-byte aligned): the tile's header, then its data, 16 bytes a copy (a tile's data
// starts on an even word, `tessera_storage::packed`; a copy's last pair may take a word
// past what the rows need, inside the array and the buffer). A kernel gives each
// column's copy to a warp in turn, so that each tile's header is read and its words
// counted once a block. Every thread of the block calls it. The copying warp also brings
// into L1 the header of the tile the block stages next (`tile + gridDim.x * T`: blocks
// walk the column grid-stride), so that its next copy does not wait on DRAM for it.
template <int T>
__device__ __forceinline__ void tessera_stage(const unsigned long long* __restrict__ col, long long tile, long long rows, unsigned long long* sh, unsigned int warp) {
    static_assert(T % 128 == 0, "a kernel tile's words start on an even word of its stored tile's");
    if ((threadIdx.x >> 5) != warp) return;
    const unsigned int lane = threadIdx.x & 31u;
    const ulonglong2 h = tessera_tile_header(col, tile);
    if (lane == 0u) {
        *reinterpret_cast<ulonglong2*>(sh) = h;
        const long long ahead = tile + (long long)gridDim.x * T;
        if (ahead < rows) tessera_tile_prefetch(col, ahead);
    }
    ulonglong2* dst = reinterpret_cast<ulonglong2*>(sh + STAGE_HEADER_WORDS);
    const unsigned int bits = (unsigned int)h.y & 0x7fu;
    const ulonglong2* __restrict__ data = reinterpret_cast<const ulonglong2*>(col + (h.y >> TILE_OFFSET_SHIFT));
    const unsigned int o0 = (unsigned int)tile & ((1u << TILE_ROWS_LOG2) - 1u);
    if (h.y & TILE_RUNS) {
        // The tile's chunk words (T / 32 from word o0 / 32), then all the stored tile's
        // run values (from word TILE_CHUNKS).
        const unsigned int values = ((unsigned int)(h.y >> TILE_WORDS_SHIFT) & 0xfffu) - (unsigned int)TILE_CHUNKS;
        tessera_copy_pairs(dst, data + (o0 >> 6), (unsigned int)(T / 64), lane);
        tessera_copy_pairs(dst + T / 64, data + TILE_CHUNKS / 2, (values + 1u) / 2u, lane);
    } else if (bits != 0u) {
        // The words from the one holding the tile's first value (o0 * bits is a multiple
        // of 128) to the one after the word holding its last: the tile's spare word is
        // there to read.
        const long long left = rows - tile;
        const unsigned int n = left < (long long)T ? (unsigned int)left : (unsigned int)T;
        const unsigned int count = (n * bits + 63u) / 64u + 1u;
        tessera_copy_pairs(dst, data + ((o0 * bits) >> 7), (count + 1u) / 2u, lane);
    }
}

// What a thread needs to decode its items of a kernel tile from the tile's staged
// buffer, made from the buffer's header once a tile (`tessera_stage_dec`).
struct StageDec {
    const unsigned int* w;            // single values: the word holding the thread's first item; runs: the run values
    const unsigned long long* chunk;  // runs: the chunk word of the thread's first item
    long long reference;              // the frame of reference
    unsigned long long mask64;        // the low `bits` bits
    unsigned int bits;                // bits of a value (of a run's, for runs)
    unsigned int mask;                // the low `bits` bits, up to 32
    unsigned int off;                 // single values: the bit of `w[0]` the first item starts at
    unsigned int step;                // words from an item to the next (32-bit words; runs: chunk words)
    unsigned int upto;                // runs: the bits of the chunk's rows up to the thread's lane
    bool runs;                        // a tile of runs
};

// The decoder of kernel tile `tile` (its first row) of T rows for this thread of a block
// of THREADS, from the header its buffer `sh` starts with.
template <int T, int THREADS>
__device__ __forceinline__ StageDec tessera_stage_dec(const unsigned long long* sh, long long tile) {
    static_assert(T % 128 == 0 && THREADS % 32 == 0, "a kernel tile's first value starts on a word of its buffer");
    const unsigned long long meta = sh[1];
    StageDec d;
    d.reference = (long long)sh[0];
    d.bits = (unsigned int)meta & 0x7fu;
    d.mask = d.bits >= 32u ? ~0u : (1u << d.bits) - 1u;
    d.mask64 = d.bits >= 64u ? ~0ull : (1ull << d.bits) - 1ull;
    d.runs = (meta & TILE_RUNS) != 0ull;
    if (d.runs) {
        d.chunk = sh + STAGE_HEADER_WORDS + (threadIdx.x >> 5);
        d.w = reinterpret_cast<const unsigned int*>(sh + STAGE_HEADER_WORDS + T / 32);
        d.off = 0u;
        d.step = THREADS / 32;
        d.upto = tessera_rows_upto(threadIdx.x & 31u);
    } else {
        // The tile's first value starts at bit 0 of the buffer's data (o0 * bits is a
        // multiple of 64).
        const unsigned int pos = threadIdx.x * d.bits;
        d.chunk = sh;
        d.w = reinterpret_cast<const unsigned int*>(sh + STAGE_HEADER_WORDS) + (pos >> 5);
        d.off = pos & 31u;
        d.step = (THREADS / 32) * d.bits;
        d.upto = 0u;
    }
    return d;
}

// The run holding the thread's item `i` in a tile of runs.
__device__ __forceinline__ unsigned int tessera_staged_run_of(const StageDec& d, unsigned int i) {
    return tessera_run_upto(d.chunk[i * d.step], d.upto);
}

// The `bits`-wide value at bit `off` of 32-bit words `w` (two words up to 32 bits, three
// beyond), less the reference.
__device__ __forceinline__ unsigned int tessera_staged_bits32(const StageDec& d, const unsigned int* w, unsigned int off) {
    return __funnelshift_r(w[0], w[1], off) & d.mask;
}
__device__ __forceinline__ unsigned long long tessera_staged_bits64(const StageDec& d, const unsigned int* w, unsigned int off) {
    if (d.bits <= 32u) return __funnelshift_r(w[0], w[1], off) & d.mask;
    unsigned long long v = ((unsigned long long)w[1] << 32 | w[0]) >> off;
    if (off != 0u) v |= (unsigned long long)w[2] << (64u - off);
    return v & d.mask64;
}

// The thread's item `i` (row threadIdx.x + i * THREADS of the kernel tile) from its
// tile's decoder, for a tile of single values (`single`) and of runs (`run`): a kernel
// tests `d.runs` once a tile and column, outside its loop over the items.
__device__ __forceinline__ int tessera_staged_single32(const StageDec& d, unsigned int i) {
    return (int)d.reference + (int)tessera_staged_bits32(d, d.w + i * d.step, d.off);
}
__device__ __forceinline__ int tessera_staged_run32(const StageDec& d, unsigned int i) {
    const unsigned int pos = tessera_staged_run_of(d, i) * d.bits;
    return (int)d.reference + (int)tessera_staged_bits32(d, d.w + (pos >> 5), pos & 31u);
}
__device__ __forceinline__ long long tessera_staged_single64(const StageDec& d, unsigned int i) {
    return d.reference + (long long)tessera_staged_bits64(d, d.w + i * d.step, d.off);
}
__device__ __forceinline__ long long tessera_staged_run64(const StageDec& d, unsigned int i) {
    const unsigned int pos = tessera_staged_run_of(d, i) * d.bits;
    return d.reference + (long long)tessera_staged_bits64(d, d.w + (pos >> 5), pos & 31u);
}

// Either, by the tile's kind.
__device__ __forceinline__ int tessera_staged32(const StageDec& d, unsigned int i) {
    return d.runs ? tessera_staged_run32(d, i) : tessera_staged_single32(d, i);
}
__device__ __forceinline__ long long tessera_staged64(const StageDec& d, unsigned int i) {
    return d.runs ? tessera_staged_run64(d, i) : tessera_staged_single64(d, i);
}

// A row of any packed column, by the whole warp (as a 64-bit value), its tile's header
// read here.
__device__ __forceinline__ long long tessera_unpack_warp(const unsigned long long* __restrict__ col, long long row, bool want) {
    if (__ballot_sync(0xffffffffu, want) == 0u) return 0;
    return tessera_dec_unpack64(tessera_tile_dec(col, row - (long long)(threadIdx.x & 31u)), row, want);
}

// This thread's place among the B threads its tile is striped over: threadIdx.x, or,
// in a kernel reading its tiles in parts (PARTS: blocks of more than B threads, see
// `tessera_part`), its place in its group of B. Kept apart so that kernels of one
// group (every kernel but wide ones over compact columns) compile as before.
template <int B, bool PARTS>
__device__ __forceinline__ unsigned int tessera_thread_in() {
    return PARTS ? threadIdx.x % (unsigned int)B : threadIdx.x;
}

// Narrowed columns (`codegen::Narrow`: 1- or 2-byte distances) that a kernel loads up
// front are loaded a word at a time (TESSERA_EXP_NARROW_WORDS=0 turns it off): a byte
// load moves 32 bytes a warp, a quarter of what a 4-byte column's does, so the narrowed
// kernels kept too few bytes in flight. Instead each lane loads a word W of
// C = sizeof(W) / sizeof(T) consecutive distances, and the warp hands each lane its
// rows' values by shuffles, keeping the striped rows (item i of thread t is row
// tile + i * B + t, B the block's threads, or of a group of B threads of a larger block
// whose groups take parts of its tile: see `tessera_part`). Load k of a tile covers items
// k * C to k * C + C - 1: the 32 * C rows of those items' warp rows, lane l the C rows
// from tessera_word_row<C, B>() + k * C * B.

// The first of this lane's C rows in load 0, counted from its tile's (part's) first row.
template <int C, int B, bool PARTS = false>
__device__ __forceinline__ int tessera_word_row() {
    const unsigned int lane = threadIdx.x & 31u;
    return (int)((lane / (32u / C)) * (unsigned int)B + (tessera_thread_in<B, PARTS>() & ~31u) + (lane % (32u / C)) * (unsigned int)C);
}

// The word of distances from row `r` (whose row r exists) of a column of `rows` rows:
// read whole where all C rows exist, else the existing ones (the rest 0), so no read
// passes the column's end.
template <typename W, typename T>
__device__ __forceinline__ unsigned int tessera_word_load(const T* __restrict__ col, long long r, long long rows) {
    constexpr int C = sizeof(W) / sizeof(T);
    if (r + C <= rows) return (unsigned int)__ldg((const W*)(col + r));
    unsigned int w = 0u;
    #pragma unroll
    for (int j = 0; j < C; ++j) {
        if (r + j < rows) w |= (unsigned int)col[r + j] << (8 * (int)sizeof(T) * j);
    }
    return w;
}

// This lane's distance in item j (0 to C - 1) of a load whose word this lane holds as
// `w`: by the whole warp. Lane l's row is the (l % C)th of lane j * (32 / C) + l / C's,
// taken out of that word by one byte permute (its selector is the same for every item).
template <typename T, int C>
__device__ __forceinline__ unsigned int tessera_word_pick(unsigned int w, int j) {
    const unsigned int lane = threadIdx.x & 31u;
    const unsigned int got = __shfl_sync(0xffffffffu, w, j * (32 / C) + (int)(lane / C));
    const unsigned int k = lane % C;
    // Selector nibbles 0-3 pick bytes of `got`, 4 a byte of the zero operand.
    const unsigned int sel = sizeof(T) == 1 ? (0x4440u | k) : (0x4400u | ((2u * k + 1u) << 4) | (2u * k));
    return __byte_perm(got, 0u, sel);
}

// Bit-packed narrowed columns (`codegen::Narrow::Bits`), lane-interleaved: distances W
// bits a row (1 to 31), rows in groups of 32 * B (B: a kernel block's threads, 128). Row
// r = g * 32B + v * B + t is value v of stream t of group g: bits v * W to v * W + W - 1
// of the stream, least significant first, whose word j lies at g * B * W + j * B + t.
// A thread's items of a kernel tile (rows tile + i * B + t, the tile a multiple of
// ITEMS * B that divides 32 * B) are consecutive values of its own stream: it loads the
// words holding them (a warp's lanes read consecutive words, coalesced) and takes each
// value out by shifts that are constants of the kernel. No value is moved between lanes.
// (The first form, a warp row's 32 values in W consecutive words taken out by two
// shuffles and a funnel shift each, cost SSB SF 20's kernels 5.90 ms against 4.70
// byte-narrowed on the H200, 2026-11-28b run 5.) A column ends in one spare word a
// thread (B words), so loading a tile's words never reads past it.

// Words a thread loads for the I values of a tile of I items a thread: enough for them
// from any bit a tile's values can start at. A tile's first value is
// value v0 = (tile / B) % 32 of its streams, a multiple of I, so it starts at a multiple
// of gcd(I * W, 32) bits into a word.
__host__ __device__ constexpr int tessera_bits_gcd32(int x) { return (x & 31) == 0 ? 32 : (x & 15) == 0 ? 16 : (x & 7) == 0 ? 8 : (x & 3) == 0 ? 4 : (x & 1) == 0 ? 2 : 1; }
__host__ __device__ constexpr int tessera_bits_loads(int W, int I) { return (32 - tessera_bits_gcd32(I * W)) % 32 == 0 ? (I * W) / 32 : ((32 - tessera_bits_gcd32(I * W)) + I * W - 1) / 32 + 1; }

// This thread's first word of tile `tile`'s values. Tile `tile` (a multiple of B) starts
// at value v0 = k % 32 of group g = k / 32 of its streams, k = tile / B, so its first
// word is g * B * W + ((v0 * W) >> 5) * B = ((k * W) >> 5) * B from the column's start
// (32 * g * W is a whole number of words): one product and two shifts where a group's
// and a value's offsets computed apart took twice the instructions. Over a kernel whose
// rows are `int`s (at most 2^30: k * W below 2^28), in 32 bits: in 64 bits the two
// columns of SSB q3.1's probe took 20 instructions a tile to find their words.
template <int W, int B, bool PARTS = false>
__device__ __forceinline__ const unsigned int* tessera_bits_base(const unsigned int* __restrict__ col, long long tile) {
    const unsigned long long k = (unsigned long long)tile / B;
    return col + ((k * W) >> 5) * B + tessera_thread_in<B, PARTS>();
}
template <int W, int B, bool PARTS = false>
__device__ __forceinline__ const unsigned int* tessera_bits_base(const unsigned int* __restrict__ col, int tile) {
    const unsigned int k = (unsigned int)tile / B;
    return col + (((k * W) >> 5) * B + tessera_thread_in<B, PARTS>());
}

// The bit of tessera_bits_base's word at which tile `tile`'s first value starts.
template <int W, int B, typename T>
__device__ __forceinline__ unsigned int tessera_bits_shift(T tile) {
    return (((unsigned int)tile / B) * (unsigned int)W) & 31u;
}

// Over a table of at most 2^30 rows a kernel reading compact columns up front counts its
// tile by the tile's value of the streams, `tessera_stream_value` (its part's first row
// over B = 128: value k % 32 of group k / 32, below 2^23; the tile an `int` or not), and adds a grid's stride's values each tile
// (`print.rs`) instead of finding each column's words from the tile. A bit-packed
// column's words for value k start at bit k * W of its streams (below 2^28): its
// 32-bit word, times B, is the thread's word from the column's start (as
// `tessera_bits_base`), and its low 5 bits the shift (as `tessera_bits_shift`).
template <int B, typename T>
__device__ __forceinline__ unsigned int tessera_stream_value(T tile) {
    return (unsigned int)(tile / B);
}
template <int B, bool PARTS = false>
__device__ __forceinline__ const unsigned int* tessera_bits_word(const unsigned int* __restrict__ col, unsigned int pos) {
    return col + ((pos >> 5) * B + tessera_thread_in<B, PARTS>());
}

// A tile's ITEMS distances from the words a thread loaded (`w`: tessera_bits_loads of
// them, the rest 0) and the bit its first starts at (`s`). The words are first shifted
// to start at the first value (a funnel shift a word; none where every tile starts on a
// word), then value i is at bit i * W: a constant.
template <int W, int I, int N>
__device__ __forceinline__ void tessera_bits_take(const unsigned int (&w)[N], unsigned int s, unsigned int (&d)[I]) {
    constexpr int A = (I * W + 31) / 32;
    static_assert(N >= A + 1, "a word past the values' last");
    constexpr unsigned int mask = (1u << W) - 1u;
    unsigned int a[A + 1];
    #pragma unroll
    for (int k = 0; k < A; ++k) a[k] = (I * W) % 32 == 0 ? w[k] : __funnelshift_r(w[k], w[k + 1], s);
    a[A] = 0u;
    #pragma unroll
    for (int i = 0; i < I; ++i) {
        const int bit = i * W, k = bit >> 5, c = bit & 31;
        d[i] = (c + W <= 32 ? a[k] >> c : __funnelshift_r(a[k], a[k + 1], (unsigned int)c)) & mask;
    }
}

// Row r's distance, read alone: one word, two where the value crosses a word's end. A
// 64-bit row's place in its group is computed in 32 bits, the group's first word in 64.
// An `int` row (`codegen::Shape::index32`) is found all in 32 bits: it is value r / B of
// the streams counted from the column's start, so its word is that value's bit (below
// 2^29) over 32 times B, plus its stream; 64-bit rows took SSB q4.2's compact probe about
// 25 instructions a row read, 32-bit ones 17.
template <int W, int B, typename R>
__device__ __forceinline__ unsigned int tessera_bits_get(const unsigned int* __restrict__ col, R r) {
    constexpr unsigned int mask = (1u << W) - 1u;
    const unsigned int* __restrict__ p;
    unsigned int bit;
    if constexpr (sizeof(R) == 4) {
        bit = ((unsigned int)r / B) * (unsigned int)W;
        p = col + ((bit >> 5) * B + (unsigned int)r % B);
    } else {
        const unsigned int in = (unsigned int)r & (32u * B - 1u);
        bit = (in / B) * (unsigned int)W;
        p = col + ((unsigned long long)r / (32u * B)) * (unsigned long long)(B * W) + ((bit >> 5) * B + in % B);
    }
    const unsigned int s = bit & 31u;
    const unsigned int lo = __ldg(p);
    if (32 % W == 0 || s + W <= 32u) return (lo >> s) & mask;
    return __funnelshift_r(lo, __ldg(p + B), s) & mask;
}

// Columns of runs (`Narrow::Runs`, `codegen::fill_runs`): each run's distance once, and a
// directory of two words a 32 rows (bit j of the first set where row j of them starts a
// run, the second the run holding row 0 of them). A warp's 32 rows of an item share
// their directory words (one broadcast load).

// A row's distance from its 32 rows' directory words `d`, `le` the mask of the rows of
// the 32 up to it (tessera_lanemask_le for a warp's row of an item).
template <typename T>
__device__ __forceinline__ T tessera_runs_value(const T* __restrict__ values, uint2 d, unsigned int le) {
    return __ldg(values + (d.y + (unsigned int)__popc(d.x & le)));
}

// Row r's distance, read alone (an `int` row's directory pair counted in 32 bits).
template <typename T, typename R>
__device__ __forceinline__ T tessera_runs_get(const unsigned int* __restrict__ dir, const T* __restrict__ values, R r) {
    const uint2* pairs = reinterpret_cast<const uint2*>(dir);
    const uint2 d = sizeof(R) == 4 ? __ldg(pairs + ((unsigned int)r >> 5)) : __ldg(pairs + (r >> 5));
    return tessera_runs_value(values, d, 0xffffffffu >> (31u - ((unsigned int)r & 31u)));
}

// The directory words of a warp's 32 rows of item 0 of `tile` (a multiple of 32), the
// warp one of a block (or group, `tessera_part`) of B threads: item i's are B / 32 pairs
// further. A kernel loads a tile's words a tile before its values (`print.rs`); past the
// column's end they are the directory's zero padding.
template <int B, bool PARTS = false, typename T>
__device__ __forceinline__ const uint2* tessera_runs_dirs(const unsigned int* __restrict__ dir, T tile) {
    // An `int` tile (`codegen::Shape::index32`) is not negative: its pair is counted in
    // 32 bits, without a sign to extend.
    if constexpr (sizeof(T) == 4) return reinterpret_cast<const uint2*>(dir) + (((unsigned int)tile >> 5) + (tessera_thread_in<B, PARTS>() >> 5));
    else return reinterpret_cast<const uint2*>(dir) + (tile >> 5) + (tessera_thread_in<B, PARTS>() >> 5);
}

// The directory words of a warp's I items of `tile` held one a lane (`Shape::runs_lanes`):
// lane 2i + h holds word h of item i's pair (W pairs after item i - 1's, W warps a block
// or group, as `tessera_runs_dirs` reads them); lanes from 2I on hold none. One register a thread
// where every lane holding every pair takes 2I; an item's pair is shuffled out where its
// values are read (`tessera_runs_value_lane`), so every lane of the warp calls both.
template <int I, int W, bool PARTS = false, typename T>
__device__ __forceinline__ unsigned int tessera_runs_dir_lane(const unsigned int* __restrict__ dir, T tile) {
    static_assert(2 * I <= 32, "two words an item, one a lane");
    const unsigned int lane = threadIdx.x & 31u;
    if (lane >= 2u * I) return 0u;
    const uint2* pair = tessera_runs_dirs<32 * W, PARTS>(dir, tile) + (lane >> 1) * W;
    return __ldg(reinterpret_cast<const unsigned int*>(pair) + (lane & 1u));
}

// The same from the tile's value of the streams `k` (`tessera_stream_value`) over `int`
// rows: the tile's first row is k * B, so its first pair is k * B / 32 pairs on.
template <int B, bool PARTS = false>
__device__ __forceinline__ const uint2* tessera_runs_pairs_at(const unsigned int* __restrict__ dir, unsigned int k) {
    return reinterpret_cast<const uint2*>(dir) + (k * (unsigned int)(B / 32) + (tessera_thread_in<B, PARTS>() >> 5));
}
template <int I, int W, bool PARTS = false>
__device__ __forceinline__ unsigned int tessera_runs_word_at(const unsigned int* __restrict__ dir, unsigned int k) {
    static_assert(2 * I <= 32, "two words an item, one a lane");
    const unsigned int lane = threadIdx.x & 31u;
    if (lane >= 2u * I) return 0u;
    const uint2* pair = tessera_runs_pairs_at<32 * W, PARTS>(dir, k) + (lane >> 1) * W;
    return __ldg(reinterpret_cast<const unsigned int*>(pair) + (lane & 1u));
}

// Item i's value of a column of runs from directory words held one a lane (`w`,
// `tessera_runs_dir_lane`); `le` as for `tessera_runs_value`.
template <typename T>
__device__ __forceinline__ T tessera_runs_value_lane(const T* __restrict__ values, unsigned int w, int i, unsigned int le) {
    const uint2 d = make_uint2(__shfl_sync(0xffffffffu, w, 2 * i), __shfl_sync(0xffffffffu, w, 2 * i + 1));
    return tessera_runs_value(values, d, le);
}

// Bit-packed columns and columns of runs are laid out for blocks of 128 threads
// (`codegen::BLOCK_THREADS`). A kernel of larger blocks reading them splits each tile
// among its groups of B = 128 threads (`print.rs`): group g takes the rows from
// tile + g * B * I (I items a thread), and each group reads its part as a block of B
// threads would read a tile. The first row of this thread's group's part of `tile`.
template <int B, int I, typename T>
__device__ __forceinline__ T tessera_part(T tile) {
    return tile + (T)(threadIdx.x / B) * (T)(B * I);
}

// The mask of this lane and the lanes below it.
__device__ __forceinline__ unsigned int tessera_lanemask_le() {
    unsigned int m;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(m));
    return m;
}

// Whether any lane of the warp still has an item selected (`sel`: a tile's selection
// flags, one an item). A warp none of whose items is selected skips the stages left
// (`print.rs`, WARP_SKIP_MIN_SHARE); every lane of the warp must call it.
template <typename T, int N>
__device__ __forceinline__ bool tessera_warp_any(const T (&sel)[N]) {
    int any = 0;
    #pragma unroll
    for (int i = 0; i < N; ++i) any |= (int)sel[i];
    return __any_sync(0xffffffffu, any) != 0;
}

// Whether kernel tile [tile, tile + T) of a table of `rows` rows may hold a row the
// pipeline's leading filters keep, by the executor's zone bitmap (`tessera-exec`'s
// `zones::tile_bitmap`): bit g covers rows [g * 2048, (g + 1) * 2048), so a tile of at
// most 2048 rows spans one or two bits. Null: no zone rules a tile out. A kernel's tiles
// start at multiples of T (`print.rs`: the block's first tile and a grid's stride on), so
// where T divides 2048 a tile lies in one zone, and `ONE` reads one bit
// (`Experiments::zone_one`: fewer instructions, but SSB q1.3's byte-narrowed probe was
// 11% slower with it on an H200, ptxas then issuing two of its date loads late).
template <int T, bool ONE = false>
__device__ __forceinline__ bool tessera_zone_pass(const unsigned int* __restrict__ zones, long long tile, long long rows) {
    if (zones == nullptr) return true;
    if constexpr (ONE) {
        static_assert(2048 % T == 0, "a tile in one zone");
        const unsigned int a = (unsigned int)((unsigned long long)tile >> 11);
        return ((__ldg(&zones[a >> 5]) >> (a & 31u)) & 1u) != 0u;
    }
    const long long last = (tile + T < rows ? tile + T : rows) - 1;
    const long long a = tile >> 11, b = last >> 11;
    return ((__ldg(&zones[a >> 5]) >> (a & 31)) & 1u) != 0u || ((__ldg(&zones[b >> 5]) >> (b & 31)) & 1u) != 0u;
}

// A column value at `p` read by the cache policy experiment `TESSERA_COLUMN_LOADS`
// (`Experiments::column_loads`; a generated kernel defines it before including this
// header, and loads its columns through this only then): 1 `ld.global.cs` (streaming),
// 2 `ld.global.nc.L1::no_allocate`, 3 `ld.global.nc.L1::evict_first`. A column is read
// once; the probes' bitmaps and payloads are read again and again, and a column's lines
// held in L1 push them out. Types without an overload (Int128) load as usual.
template <typename T>
__device__ __forceinline__ T tessera_col(const T* p) { return *p; }
#if defined(TESSERA_COLUMN_LOADS)
#if TESSERA_COLUMN_LOADS == 1
#define TESSERA_COL_OP "ld.global.cs"
#elif TESSERA_COLUMN_LOADS == 2
#define TESSERA_COL_OP "ld.global.nc.L1::no_allocate"
#else
#define TESSERA_COL_OP "ld.global.nc.L1::evict_first"
#endif
#define TESSERA_COL_LOAD(T, R, PT, C) \
    __device__ __forceinline__ T tessera_col(const T* p) { R v; asm(TESSERA_COL_OP "." PT " %0, [%1];" : "=" C(v) : "l"(p)); return (T)v; }
TESSERA_COL_LOAD(unsigned char, unsigned int, "u8", "r")
TESSERA_COL_LOAD(signed char, int, "s8", "r")
TESSERA_COL_LOAD(unsigned short, unsigned int, "u16", "r")
TESSERA_COL_LOAD(short, int, "s16", "r")
TESSERA_COL_LOAD(unsigned int, unsigned int, "u32", "r")
TESSERA_COL_LOAD(int, int, "s32", "r")
TESSERA_COL_LOAD(unsigned long long, unsigned long long, "u64", "l")
TESSERA_COL_LOAD(long long, long long, "s64", "l")
TESSERA_COL_LOAD(float, float, "f32", "f")
TESSERA_COL_LOAD(double, double, "f64", "d")
#undef TESSERA_COL_LOAD
#undef TESSERA_COL_OP
#endif

}  // namespace tessera
