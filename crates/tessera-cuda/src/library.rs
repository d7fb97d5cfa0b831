//! Module sources for the device library's own kernels: the kernels the runtime launches
//! besides generated pipelines. Each is one `#include` of a header in `cuda/` (embedded
//! in [`DEVICE_HEADERS`](crate::DEVICE_HEADERS)), so that the CUDA text lives in the
//! device library and a caller holds none; load one with
//! [`KernelCache::load`](crate::KernelCache::load) and look its kernels up by name.
//! These headers are not part of `tessera.cuh`, so generated modules do not carry them.

/// The group-record kernels (`records.cuh`): `tessera_fill_many`,
/// `tessera_having`, `tessera_count_seen`, `tessera_compact_records_ordered`,
/// `tessera_gather_records`, `tessera_gather_many`, `tessera_small_records`,
/// `tessera_rank_records`, `tessera_small_sorted_records`, and those of a LIMIT's
/// selection.
pub const RECORDS_SOURCE: &str = "#include \"records.cuh\"\n";

/// The bandwidth-measuring kernel (`bandwidth.cuh`): `tessera_read`.
pub const BANDWIDTH_SOURCE: &str = "#include \"bandwidth.cuh\"\n";

/// The join study's kernels (`join_study.cuh`, see [`crate::join_study`]): a no-partition
/// hash join and a radix-partitioned one over generated data.
pub const JOIN_STUDY_SOURCE: &str = "#include \"join_study.cuh\"\n";

/// The probe study's kernels (`probe_study.cuh`, see [`crate::probe_study`]): a probe of
/// SSB q3.1's shape with its bitmaps in global or shared memory, over generated data.
pub const PROBE_STUDY_SOURCE: &str = "#include \"probe_study.cuh\"\n";

/// The launch study's kernel (`launch_study.cuh`, see [`crate::launch_study`]): a kernel
/// with a pipeline's worth of parameters that does almost nothing.
pub const LAUNCH_STUDY_SOURCE: &str = "#include \"launch_study.cuh\"\n";

/// The arrays one launch of `tessera_fill_many` (`records.cuh`) sets, at most
/// [`FillList::MAX`]: array `k` of `words[k]` 32-bit words, each pair of them the 64-bit
/// pattern `value[k]` (its low half first; an odd last word is the low half). Passed by
/// value, laid out as the kernel's `TesseraFills`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FillList {
    ptr: [u64; FillList::MAX],
    words: [u64; FillList::MAX],
    value: [u64; FillList::MAX],
    n: i32,
}

// SAFETY: plain old data with the layout of the kernel's `TesseraFills`.
unsafe impl cudarc::driver::DeviceRepr for FillList {}

impl FillList {
    /// Arrays a launch sets at most: a query's pipelines set theirs in one launch at
    /// admission (SSB's four-join queries 13 arrays, with the query's flags). 776 bytes
    /// of parameters, well under the 4 KiB a launch passes.
    pub const MAX: usize = 32;

    /// The list of `arrays`, each (device address, 32-bit words, 64-bit pattern); `None`
    /// for more than [`FillList::MAX`].
    pub fn new(arrays: &[(u64, u64, u64)]) -> Option<FillList> {
        if arrays.len() > Self::MAX {
            return None;
        }
        let mut list = FillList { ptr: [0; Self::MAX], words: [0; Self::MAX], value: [0; Self::MAX], n: arrays.len() as i32 };
        for (k, &(ptr, words, value)) in arrays.iter().enumerate() {
            (list.ptr[k], list.words[k], list.value[k]) = (ptr, words, value);
        }
        Some(list)
    }
}

/// The accumulator arrays one launch of `tessera_small_records` or `tessera_gather_many` (`records.cuh`) gathers
/// into a small domain's group records, at most [`GatherList::MAX`]: array `k` holds
/// `words[k]` 64-bit words a group, and records take them in order after the group's
/// number. Passed by value, laid out as the kernel's `TesseraGathers`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherList {
    ptr: [u64; 16],
    words: [i64; 16],
    n: i32,
}

// SAFETY: plain old data with the layout of the kernel's `TesseraGathers`.
unsafe impl cudarc::driver::DeviceRepr for GatherList {}

impl GatherList {
    /// Arrays a launch gathers at most (TPC-H q01 has ten).
    pub const MAX: usize = 16;

    /// The list of `arrays`, each (device address, 64-bit words a group); `None` for
    /// more than [`GatherList::MAX`].
    pub fn new(arrays: &[(u64, usize)]) -> Option<GatherList> {
        if arrays.len() > Self::MAX {
            return None;
        }
        let mut list = GatherList { ptr: [0; 16], words: [0; 16], n: arrays.len() as i32 };
        for (k, &(ptr, words)) in arrays.iter().enumerate() {
            list.ptr[k] = ptr;
            list.words[k] = i64::try_from(words).ok()?;
        }
        Some(list)
    }

    /// The list's bytes as 64-bit words, as a graph's kernel node takes an argument
    /// (`graph::KernelNode`): the addresses, the words a group, then the count in the
    /// low half of the last word (the struct's tail padding).
    pub fn to_words(&self) -> Vec<u64> {
        self.ptr.iter().copied().chain(self.words.iter().map(|&w| w as u64)).chain([u64::from(self.n as u32)]).collect()
    }
}

/// The sort keys `tessera_rank_records` (`records.cuh`) orders records by, four words a
/// key as [`crate::codegen::sort::GpuSort::descriptors`] makes them, at most
/// [`SortKeys::MAX`] keys. Passed by value, laid out as the kernel's `TesseraSortKeys`:
/// no upload to queue before the rank kernel (a copy from pageable memory, one more
/// step of the chain that follows an aggregation).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SortKeys {
    d: [i64; 32],
}

// SAFETY: plain old data with the layout of the kernel's `TesseraSortKeys`.
unsafe impl cudarc::driver::DeviceRepr for SortKeys {}

impl SortKeys {
    /// Keys a rank sort takes at most (the planner's limit, `codegen::sort`).
    pub const MAX: usize = 8;

    /// The keys of `descriptors` (four words a key); `None` for more than
    /// [`SortKeys::MAX`] keys or a partial key.
    pub fn new(descriptors: &[i64]) -> Option<SortKeys> {
        if descriptors.len() > 4 * Self::MAX || !descriptors.len().is_multiple_of(4) {
            return None;
        }
        let mut keys = SortKeys { d: [0; 32] };
        keys.d[..descriptors.len()].copy_from_slice(descriptors);
        Some(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::{FillList, GatherList, RECORDS_SOURCE, SortKeys};

    /// Passed by value: the size and alignment of the kernel's `TesseraGathers` (two
    /// arrays of sixteen 64-bit words and an int, padded to 8 bytes).
    /// The runtime's record kernels compile with NVRTC alone (the GPU tests run them on
    /// the device), each one present in the CUBIN.
    #[test]
    fn record_kernels_compile_with_nvrtc() {
        if !crate::test_support::nvrtc_or_skip("record kernels compile with NVRTC") {
            return;
        }
        let cubin = crate::compile_cubin(RECORDS_SOURCE, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        for k in ["tessera_small_sorted_records", "tessera_list_seen", "tessera_listed_sorted_records", "tessera_rank_records", "tessera_compact_records_ordered"] {
            assert!(cubin.windows(k.len()).any(|w| w == k.as_bytes()), "{k} missing");
        }
    }

    #[test]
    fn gather_lists_are_laid_out_as_the_kernel_reads_them() {
        assert_eq!((std::mem::size_of::<GatherList>(), std::mem::align_of::<GatherList>()), (264, 8));
        let list = GatherList::new(&[(256, 2), (512, 1)]).unwrap();
        assert_eq!((list.n, list.ptr[..2].to_vec(), list.words[..2].to_vec()), (2, vec![256, 512], vec![2, 1]));
        assert!(list.ptr[2..].iter().all(|&x| x == 0) && list.words[2..].iter().all(|&x| x == 0));
        assert!(GatherList::new(&[(0, 1); GatherList::MAX]).is_some());
        assert!(GatherList::new(&[(0, 1); GatherList::MAX + 1]).is_none(), "more arrays than a launch gathers");
    }

    #[test]
    fn sort_keys_are_laid_out_as_the_kernel_reads_them() {
        assert_eq!((std::mem::size_of::<SortKeys>(), std::mem::align_of::<SortKeys>()), (256, 8));
        let keys = SortKeys::new(&[0, 1, 26, 1, 1, 3, 0, 0]).unwrap();
        assert_eq!(keys.d[..8], [0, 1, 26, 1, 1, 3, 0, 0]);
        assert!(keys.d[8..].iter().all(|&x| x == 0));
        assert!(SortKeys::new(&[0; 4 * SortKeys::MAX]).is_some());
        assert!(SortKeys::new(&[0; 4 * SortKeys::MAX + 4]).is_none(), "more keys than a rank sort takes");
        assert!(SortKeys::new(&[0; 6]).is_none(), "a partial key");
    }

    /// The list is passed by value: its size and alignment must be those of the kernel's
    /// `TesseraFills` (three arrays of 32 64-bit words and an int, padded to 8 bytes).
    #[test]
    fn fill_lists_are_laid_out_as_the_kernel_reads_them() {
        assert_eq!((std::mem::size_of::<FillList>(), std::mem::align_of::<FillList>()), (776, 8));
        let list = FillList::new(&[(256, 3, 7), (512, 4, u64::MAX)]).unwrap();
        assert_eq!((list.n, list.ptr[..2].to_vec(), list.words[..2].to_vec(), list.value[..2].to_vec()), (2, vec![256, 512], vec![3, 4], vec![7, u64::MAX]));
        assert!(list.ptr[2..].iter().chain(&list.words[2..]).all(|&x| x == 0));
        assert_eq!(FillList::new(&[]).unwrap().n, 0);
        assert!(FillList::new(&[(0, 1, 0); FillList::MAX]).is_some());
        assert!(FillList::new(&[(0, 1, 0); FillList::MAX + 1]).is_none(), "more arrays than a launch sets");
    }
}
