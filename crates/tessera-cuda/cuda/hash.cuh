// hash.cuh: open-addressing hash tables in global memory, for generated hash builds,
// probes and hash aggregations.
//
// A table is an array of `mask + 1` (a power of two) 64-bit slots, each empty
// (TESSERA_EMPTY_KEY) or holding one packed key: the row's key columns, each minus its
// smallest planned value, side by side in one word (codegen/hash.rs packs them). The
// arrays a table carries besides (a build's payload columns, an aggregation's
// accumulators) are indexed by the same slot. Slots are claimed with one atomicCAS from
// empty to the key and never change again, so a reader that sees a key sees its final
// value, and one that sees "empty" (a stale read) at worst tries the CAS and learns the
// truth from it. Linear probing from a hash of the key: tables are sized at least twice
// the rows that can be inserted (codegen/hash.rs), so runs stay short and a probe always
// ends at an empty slot; a full table is still reported, never looped on.
#pragma once
#include "types.cuh"

namespace tessera {

// No packed key takes this value: a key that would is refused by the generated code.
#define TESSERA_EMPTY_KEY 0xffffffffffffffffull

// The first slot for `key`: the murmur3 64-bit finalizer, so that consecutive keys (the
// usual primary keys) spread over the whole table rather than filling one run.
__device__ __forceinline__ unsigned long long tessera_hash_slot(unsigned long long key, unsigned long long mask) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return key & mask;
}

// The slot of `key`, looking from slot `s` on and claiming the first empty one unless
// the key is found first, or -2 when the table is full. `claimed` says whether this call
// put the key there.
__device__ __forceinline__ long long tessera_hash_claim_from(unsigned long long* keys, unsigned long long mask, unsigned long long key, unsigned long long s, bool* claimed) {
    *claimed = false;
    for (unsigned long long n = 0; n <= mask; ++n) {
        const unsigned long long seen = keys[s];
        if (seen == key) return (long long)s;
        if (seen == TESSERA_EMPTY_KEY) {
            const unsigned long long old = atomicCAS(&keys[s], TESSERA_EMPTY_KEY, key);
            *claimed = old == TESSERA_EMPTY_KEY;
            if (old == TESSERA_EMPTY_KEY || old == key) return (long long)s;
        }
        s = (s + 1) & mask;
    }
    return -2;
}

// Inserts a key that must not be there yet (a join's build side on unique keys): its
// slot, or -1 when the key is there already (a duplicate), or -2 when the table is full.
__device__ __forceinline__ long long tessera_hash_insert_unique(unsigned long long* keys, unsigned long long mask, unsigned long long key) {
    bool claimed;
    const long long s = tessera_hash_claim_from(keys, mask, key, tessera_hash_slot(key, mask), &claimed);
    return s < 0 || claimed ? s : -1;
}

// The slot of `key`, inserted if it is not there yet (a group of a hash aggregation),
// looking from slot `s` on (generated aggregations read the first slot themselves, see
// codegen/aggregate.rs), or -2 when the table is full.
__device__ __forceinline__ long long tessera_hash_find_or_insert_from(unsigned long long* keys, unsigned long long mask, unsigned long long key, unsigned long long s) {
    bool claimed;
    return tessera_hash_claim_from(keys, mask, key, s, &claimed);
}

// The slot of `key`, inserted if it is not there yet, or -2 when the table is full.
__device__ __forceinline__ long long tessera_hash_find_or_insert(unsigned long long* keys, unsigned long long mask, unsigned long long key) {
    return tessera_hash_find_or_insert_from(keys, mask, key, tessera_hash_slot(key, mask));
}

// The slot of `key` in a table no thread writes any more (built by an earlier kernel),
// looking from the slot after `s` on (generated probes test the first slot themselves,
// see codegen/probe.rs), or -1 when it is not there.
__device__ __forceinline__ long long tessera_hash_find_after(const unsigned long long* __restrict__ keys, unsigned long long mask, unsigned long long key, unsigned long long s) {
    for (unsigned long long n = 0; n < mask; ++n) {
        s = (s + 1) & mask;
        const unsigned long long seen = __ldg(&keys[s]);
        if (seen == key) return (long long)s;
        if (seen == TESSERA_EMPTY_KEY) return -1;
    }
    return -1;
}

// The slot of `key` in a table no thread writes any more, or -1 when it is not there.
__device__ __forceinline__ long long tessera_hash_find(const unsigned long long* __restrict__ keys, unsigned long long mask, unsigned long long key) {
    const unsigned long long s = tessera_hash_slot(key, mask);
    const unsigned long long seen = __ldg(&keys[s]);
    if (seen == key) return (long long)s;
    if (seen == TESSERA_EMPTY_KEY) return -1;
    return tessera_hash_find_after(keys, mask, key, s);
}

}  // namespace tessera
