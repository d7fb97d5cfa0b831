//! Module sources for the device library's own kernels: the kernels the runtime launches
//! besides generated pipelines. Each is one `#include` of a header in `cuda/` (embedded
//! in [`DEVICE_HEADERS`](crate::DEVICE_HEADERS)), so that the CUDA text lives in the
//! device library and a caller holds none; load one with
//! [`KernelCache::load`](crate::KernelCache::load) and look its kernels up by name.
//! These headers are not part of `tessera.cuh`, so generated modules do not carry them.

/// The group-record kernels (`records.cuh`): `tessera_fill_u64`,
/// `tessera_having`, `tessera_count_seen`, `tessera_compact_records_ordered`,
/// `tessera_gather_records`, `tessera_rank_records`.
pub const RECORDS_SOURCE: &str = "#include \"records.cuh\"\n";

/// The bandwidth-measuring kernel (`bandwidth.cuh`): `tessera_read`.
pub const BANDWIDTH_SOURCE: &str = "#include \"bandwidth.cuh\"\n";

/// The join study's kernels (`join_study.cuh`, see [`crate::join_study`]): a no-partition
/// hash join and a radix-partitioned one over generated data.
pub const JOIN_STUDY_SOURCE: &str = "#include \"join_study.cuh\"\n";
