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
// Tile t holds rows [t * 2048, (t + 1) * 2048). Every row decodes alone, so a kernel
// loads a packed column exactly where it would load a plain one (all of a tile, or
// only the rows still selected), and a warp's 32 consecutive rows read 32 * bits
// consecutive bits.
#pragma once

namespace tessera {

// log2 of the rows of a tile (tessera_storage::tiles::TILE_ROWS).
constexpr int TILE_ROWS_LOG2 = 11;

// Row `row` of packed column `col`.
__device__ __forceinline__ long long tessera_unpack(const unsigned long long* __restrict__ col, long long row) {
    const long long t = row >> TILE_ROWS_LOG2;
    const long long reference = (long long)__ldg(&col[2 * t]);
    const unsigned long long meta = __ldg(&col[2 * t + 1]);
    const unsigned int bits = (unsigned int)(meta & 0xffu);
    const unsigned long long pos = (unsigned long long)(row & ((1 << TILE_ROWS_LOG2) - 1)) * bits;
    const unsigned long long w = (meta >> 8) + (pos >> 6);
    const unsigned int off = (unsigned int)(pos & 63u);
    unsigned long long v = __ldg(&col[w]) >> off;
    // A value crossing into the next word; the spare word keeps w + 1 inside the tile.
    if (off + bits > 64u) v |= __ldg(&col[w + 1]) << (64u - off);
    const unsigned long long mask = bits >= 64u ? ~0ull : ((1ull << bits) - 1ull);
    return reference + (long long)(v & mask);
}

}  // namespace tessera
