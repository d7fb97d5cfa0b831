// hash.cuh: hash tables for joins and grouping, built and probed by whole blocks.
//
// Two kinds, chosen by the planner from the build side's key statistics:
//
// * Dense ("perfect hash") tables: when the build keys are integers in a small range
//   [key_min, key_min + len), the table is an array indexed by key - key_min and a probe
//   is one load, with no hashing and no collisions (Crystal's SSB joins: dates, suppliers,
//   parts). A slot holding `empty_value` means "no build row with that key".
//
// * Open-addressing tables with linear probing over a power-of-two number of slots, keys
//   and values in two arrays (keys are compared without touching values). Inserts claim a
//   slot with atomicCAS on the key, so a build kernel needs no locks. `empty_key` marks a
//   free slot and so cannot itself be stored: the planner picks a value outside the key
//   column's range (e.g. INT64_MIN when the column has no such value). Keys of 32 and 64 bits.
//   Keep the load factor at or below 0.5 so probe sequences stay short.
#pragma once
#include "types.cuh"

namespace tessera {

/// Murmur3's 32-bit finalizer: cheap and mixes every input bit into every output bit.
__device__ __forceinline__ uint32_t hash_mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/// Murmur3's 64-bit finalizer.
__device__ __forceinline__ uint64_t hash_mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

__device__ __forceinline__ uint32_t hash_mix(int32_t x) { return hash_mix((uint32_t)x); }
__device__ __forceinline__ uint64_t hash_mix(int64_t x) { return hash_mix((uint64_t)x); }

namespace detail {

/// atomicCAS for the four key types, through the unsigned types the hardware provides.
__device__ __forceinline__ uint32_t atomic_cas(uint32_t* addr, uint32_t expected, uint32_t desired) {
    return atomicCAS((unsigned int*)addr, expected, desired);
}
__device__ __forceinline__ int32_t atomic_cas(int32_t* addr, int32_t expected, int32_t desired) {
    return (int32_t)atomicCAS((unsigned int*)addr, (unsigned int)expected, (unsigned int)desired);
}
__device__ __forceinline__ uint64_t atomic_cas(uint64_t* addr, uint64_t expected, uint64_t desired) {
    return atomicCAS((unsigned long long*)addr, expected, desired);
}
__device__ __forceinline__ int64_t atomic_cas(int64_t* addr, int64_t expected, int64_t desired) {
    return (int64_t)atomicCAS((unsigned long long*)addr, (unsigned long long)expected,
                              (unsigned long long)desired);
}

}  // namespace detail

/// A dense table: value of key k at values[k - key_min], `empty_value` where absent.
template <typename K, typename V>
struct DenseTable {
    /// len values, device memory.
    V* values;
    /// Number of slots; keys outside [key_min, key_min + len) are absent.
    int64_t len;
    /// Key of slot 0.
    K key_min;
    /// Value marking an empty slot.
    V empty_value;
};

/// An open-addressing table with linear probing.
template <typename K, typename V>
struct HashTable {
    /// capacity keys, initialised to empty_key before the build.
    K* keys;
    /// capacity values.
    V* values;
    /// Number of slots, a power of two.
    uint64_t capacity;
    /// Key marking a free slot; never stored.
    K empty_key;
};

/// Looks `key` up in a dense table; returns false when absent.
template <typename K, typename V>
__device__ __forceinline__ bool dense_lookup(const DenseTable<K, V>& table, K key, V& value) {
    int64_t slot = (int64_t)key - (int64_t)table.key_min;
    if (slot < 0 || slot >= table.len) return false;
    value = table.values[slot];
    return !(value == table.empty_value);
}

/// Claims the slot of `key`, inserting the key if it is new; returns the slot index, or
/// -1 when the table is full. Concurrent calls with the same key return the same slot,
/// which makes this the building block of hash aggregation (atomics on values[slot]).
template <typename K, typename V>
__device__ __forceinline__ int64_t hash_insert_slot(const HashTable<K, V>& table, K key) {
    const uint64_t mask = table.capacity - 1;
    uint64_t slot = (uint64_t)hash_mix(key) & mask;
    for (uint64_t probes = 0; probes < table.capacity; ++probes) {
        K prev = detail::atomic_cas(&table.keys[slot], table.empty_key, key);
        if (prev == table.empty_key || prev == key) return (int64_t)slot;
        slot = (slot + 1) & mask;
    }
    return -1;
}

/// Inserts (key, value); a later insert of the same key overwrites the value (unique build
/// keys, e.g. a primary key). Returns false when the table is full.
template <typename K, typename V>
__device__ __forceinline__ bool hash_insert(const HashTable<K, V>& table, K key, V value) {
    int64_t slot = hash_insert_slot(table, key);
    if (slot < 0) return false;
    table.values[slot] = value;
    return true;
}

/// Returns the slot of `key`, or -1 when absent. Only valid once the build has finished
/// (i.e. in a later kernel).
template <typename K, typename V>
__device__ __forceinline__ int64_t hash_find_slot(const HashTable<K, V>& table, K key) {
    const uint64_t mask = table.capacity - 1;
    uint64_t slot = (uint64_t)hash_mix(key) & mask;
    for (uint64_t probes = 0; probes < table.capacity; ++probes) {
        K k = table.keys[slot];
        if (k == key) return (int64_t)slot;
        if (k == table.empty_key) return -1;
        slot = (slot + 1) & mask;
    }
    return -1;
}

/// Looks `key` up; returns false when absent.
template <typename K, typename V>
__device__ __forceinline__ bool hash_lookup(const HashTable<K, V>& table, K key, V& value) {
    int64_t slot = hash_find_slot(table, key);
    if (slot < 0) return false;
    value = table.values[slot];
    return true;
}

/// Probes a dense table with a tile of keys: for each selected item, values[i] receives
/// the build value and flags[i] is cleared when the key is absent (an inner join's filter).
///   T                 key type
///   BLOCK_THREADS     threads in the block
///   ITEMS_PER_THREAD  items each thread holds
///   V                 value type (defaults to T)
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD, typename V = T>
__device__ __forceinline__ void block_probe_dense(const T (&keys)[ITEMS_PER_THREAD],
                                                  V (&values)[ITEMS_PER_THREAD],
                                                  int (&flags)[ITEMS_PER_THREAD],
                                                  const DenseTable<T, V>& table) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        if (flags[i]) flags[i] = dense_lookup(table, keys[i], values[i]);
    }
}

/// Probes an open-addressing table with a tile of keys, as block_probe_dense.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD, typename V = T>
__device__ __forceinline__ void block_probe_hash(const T (&keys)[ITEMS_PER_THREAD],
                                                 V (&values)[ITEMS_PER_THREAD],
                                                 int (&flags)[ITEMS_PER_THREAD],
                                                 const HashTable<T, V>& table) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        if (flags[i]) flags[i] = hash_lookup(table, keys[i], values[i]);
    }
}

/// Inserts the selected items of a tile into an open-addressing table. Returns false in a
/// thread that found the table full (the host then retries with a larger table).
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD, typename V = T>
__device__ __forceinline__ bool block_build_hash(const T (&keys)[ITEMS_PER_THREAD],
                                                 const V (&values)[ITEMS_PER_THREAD],
                                                 const int (&flags)[ITEMS_PER_THREAD],
                                                 const HashTable<T, V>& table) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
    bool ok = true;
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        if (flags[i]) ok = hash_insert(table, keys[i], values[i]) && ok;
    }
    return ok;
}

/// Builds a dense table from the selected items of a tile: values[key - key_min] = value.
/// Keys outside the table's range are ignored and reported by returning false.
template <typename T, int BLOCK_THREADS, int ITEMS_PER_THREAD, typename V = T>
__device__ __forceinline__ bool block_build_dense(const T (&keys)[ITEMS_PER_THREAD],
                                                  const V (&values)[ITEMS_PER_THREAD],
                                                  const int (&flags)[ITEMS_PER_THREAD],
                                                  const DenseTable<T, V>& table) {
    (void)sizeof(BlockShape<BLOCK_THREADS, ITEMS_PER_THREAD>);
    bool ok = true;
#pragma unroll
    for (int i = 0; i < ITEMS_PER_THREAD; ++i) {
        if (!flags[i]) continue;
        int64_t slot = (int64_t)keys[i] - (int64_t)table.key_min;
        if (slot < 0 || slot >= table.len) {
            ok = false;
        } else {
            table.values[slot] = values[i];
        }
    }
    return ok;
}

}  // namespace tessera
