//! The GPU memory budget: an allocator that refuses, with a
//! [`TesseraError::ResourcesExhausted`](tessera_common::TesseraError::ResourcesExhausted), any allocation that would take the bytes in use
//! past a limit, instead of letting the driver fail (or another process suffer).
//!
//! Allocations are stream-ordered (`cuMemAllocAsync` on the pool's stream, through cudarc),
//! never managed memory. A [`DeviceBuffer`] gives its bytes back to the budget when dropped;
//! the device memory itself is freed in stream order. Pools on other streams
//! ([`MemoryPool::on_stream`], one per query stream) share one budget.
//!
//! Freed blocks of up to [`MAX_KEPT_BLOCK`] are kept for the next allocation of the same
//! size on the same stream (`KeptBlocks`), up to [`MAX_KEPT_BYTES`] in all: a warm
//! query allocates its pipelines' outputs without asking the driver again. Kept blocks
//! count against the budget and are freed when an allocation needs their room.

use std::collections::HashMap;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};
use std::sync::atomic::{AtomicUsize, Ordering};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DeviceSlice, LaunchArgs,
    PushKernelArg, SyncOnDrop, ValidAsZeroBits,
};
use tessera_common::{Result, resources_err};

use crate::device::driver_err;

/// A budgeted allocator of device memory; cheap to clone (clones share the budget).
#[derive(Clone)]
pub struct MemoryPool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    /// Stream the allocations are ordered on.
    stream: Arc<CudaStream>,
    /// The byte accounting, shared by the pools of every stream of the device.
    budget: Arc<Budget>,
}

/// Bytes in use against a limit (lock-free), and the freed blocks kept for reuse, which
/// count against the limit too.
pub(crate) struct Budget {
    limit: AtomicUsize,
    used: AtomicUsize,
    peak: AtomicUsize,
    /// Bytes of the blocks in `kept` (read without its lock).
    kept_bytes: AtomicUsize,
    kept: Mutex<KeptBlocks<Block>>,
}

/// A kept block: the stream that freed it, and its address.
type Block = (Arc<CudaStream>, CUdeviceptr);

/// The largest freed block kept for reuse. Allocating costs the same driver calls at any
/// size, so only small blocks are worth holding on to: SSB SF 20's pipelines reserve
/// 0.5-107 MB a query, in arrays of at most a few MB.
pub const MAX_KEPT_BLOCK: usize = 64 << 20;

/// The most bytes kept for reuse on a device (all streams together).
pub const MAX_KEPT_BYTES: usize = 1 << 30;

/// Whether a freed block of `bytes` may be kept for reuse.
fn keepable(bytes: usize) -> bool {
    bytes > 0 && bytes <= MAX_KEPT_BLOCK
}

/// Whether freed blocks are kept for reuse: on unless `TESSERA_EXP_KEEP_BLOCKS=0` (an
/// experiment switch, to measure what keeping them brings).
fn keep_blocks() -> bool {
    static KEEP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KEEP.get_or_init(|| std::env::var("TESSERA_EXP_KEEP_BLOCKS").map_or(true, |v| v != "0"))
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("limit", &self.limit)
            .field("used", &self.used)
            .field("kept_bytes", &self.kept_bytes)
            .finish()
    }
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Self {
        Budget {
            limit: AtomicUsize::new(limit),
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            kept_bytes: AtomicUsize::new(0),
            kept: Mutex::new(KeptBlocks::default()),
        }
    }

    /// Reserves `bytes` beside the bytes in use and those kept, or explains why not.
    pub(crate) fn try_reserve(&self, bytes: usize) -> Result<()> {
        let limit = self.limit.load(Ordering::Relaxed);
        let kept = self.kept_bytes.load(Ordering::Relaxed);
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let new = match used.checked_add(bytes) {
                Some(new) if new.saturating_add(kept) <= limit => new,
                _ => {
                    return resources_err!(
                        "GPU memory limit of {} exceeded: allocating {} with {} already in use",
                        format_bytes(limit),
                        format_bytes(bytes),
                        format_bytes(used)
                    );
                }
            };
            match self
                .used
                .compare_exchange_weak(used, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(new, Ordering::Relaxed);
                    return Ok(());
                }
                Err(current) => used = current,
            }
        }
    }

    pub(crate) fn release(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::AcqRel);
    }

    /// A kept block of `bytes` freed on `stream`, now in use again.
    fn take_kept(&self, stream: &Arc<CudaStream>, bytes: usize) -> Option<CUdeviceptr> {
        let mut kept = self.kept.lock().ok()?;
        let (_, ptr) = kept.take(stream.cu_stream() as usize, bytes)?;
        // Counted as used before it stops being counted as kept: a concurrent reservation
        // may see both at once, never neither.
        self.peak.fetch_max(self.used.fetch_add(bytes, Ordering::AcqRel) + bytes, Ordering::Relaxed);
        self.kept_bytes.store(kept.bytes, Ordering::Relaxed);
        Some(ptr)
    }

    /// Keeps a block of `bytes` that was in use (the bytes move from used to kept), and
    /// frees the blocks that make room for it, or the block itself where none can.
    fn keep(&self, block: Block, bytes: usize) {
        let freed = match self.kept.lock() {
            Ok(mut kept) => {
                let freed = kept.keep(block.0.cu_stream() as usize, bytes, block);
                self.kept_bytes.store(kept.bytes, Ordering::Relaxed);
                freed
            }
            Err(_) => vec![(bytes, block)],
        };
        self.release(bytes);
        free_blocks(freed);
    }

    /// Frees every kept block (an allocation needs their room).
    fn free_kept(&self) {
        let freed = match self.kept.lock() {
            Ok(mut kept) => {
                let freed = kept.drain();
                self.kept_bytes.store(0, Ordering::Relaxed);
                freed
            }
            Err(_) => return,
        };
        free_blocks(freed);
    }
}

impl Drop for Budget {
    fn drop(&mut self) {
        self.free_kept();
    }
}

/// Frees blocks, each on the stream that freed it.
fn free_blocks(blocks: Vec<(usize, Block)>) {
    for (bytes, (stream, ptr)) in blocks {
        // SAFETY: `ptr` is a block of `bytes` allocated on the device's memory pool and
        // owned by nothing else (leaked from its slice when it was kept); the slice frees
        // it on `stream`, after the work queued there that used it.
        drop(unsafe { stream.upgrade_device_ptr::<u8>(ptr, bytes) });
    }
}

/// Freed blocks kept for reuse, by the stream that freed them and their size. A block is
/// only reused on its own stream, so that the work queued there before it was freed is
/// done before the new owner's work runs (the ordering `cuMemFreeAsync` gives).
#[derive(Debug)]
struct KeptBlocks<B> {
    blocks: HashMap<(usize, usize), Vec<B>>,
    /// Their bytes in all.
    bytes: usize,
}

impl<B> Default for KeptBlocks<B> {
    fn default() -> Self {
        KeptBlocks { blocks: HashMap::new(), bytes: 0 }
    }
}

impl<B> KeptBlocks<B> {
    /// A block of `bytes` freed on `stream`, if one is kept.
    fn take(&mut self, stream: usize, bytes: usize) -> Option<B> {
        let list = self.blocks.get_mut(&(stream, bytes))?;
        let block = list.pop()?;
        if list.is_empty() {
            self.blocks.remove(&(stream, bytes));
        }
        self.bytes -= bytes;
        Some(block)
    }

    /// Keeps `block`, of `bytes`, freed on `stream`. Returns the blocks to free instead
    /// (with their sizes): kept blocks of other sizes until it fits under
    /// [`MAX_KEPT_BYTES`], or `block` itself when it is larger than [`MAX_KEPT_BLOCK`].
    fn keep(&mut self, stream: usize, bytes: usize, block: B) -> Vec<(usize, B)> {
        if !keepable(bytes) {
            return vec![(bytes, block)];
        }
        let mut freed = Vec::new();
        while self.bytes + bytes > MAX_KEPT_BYTES {
            let Some(&key) = self.blocks.keys().find(|k| **k != (stream, bytes)).or_else(|| self.blocks.keys().next()) else { break };
            if let Some(b) = self.take(key.0, key.1) {
                freed.push((key.1, b));
            }
        }
        self.blocks.entry((stream, bytes)).or_default().push(block);
        self.bytes += bytes;
        freed
    }

    /// Every kept block, with its size; none is kept after.
    fn drain(&mut self) -> Vec<(usize, B)> {
        self.bytes = 0;
        self.blocks.drain().flat_map(|((_, bytes), list)| list.into_iter().map(move |b| (bytes, b))).collect()
    }
}

impl MemoryPool {
    /// A pool allocating on `stream` with a limit of `limit_bytes`.
    pub fn new(stream: Arc<CudaStream>, limit_bytes: usize) -> Self {
        MemoryPool {
            inner: Arc::new(PoolInner {
                stream,
                budget: Arc::new(Budget::new(limit_bytes)),
            }),
        }
    }

    /// A pool allocating on `stream` under this pool's budget (same limit, same bytes in
    /// use): what each query stream allocates from.
    pub fn on_stream(&self, stream: Arc<CudaStream>) -> MemoryPool {
        MemoryPool {
            inner: Arc::new(PoolInner {
                stream,
                budget: Arc::clone(&self.inner.budget),
            }),
        }
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.inner.budget.limit.load(Ordering::Relaxed)
    }

    /// Changes the limit. Lowering it below the bytes in use frees nothing; it only makes
    /// further allocations fail until enough is dropped.
    pub fn set_limit(&self, limit_bytes: usize) {
        self.inner
            .budget
            .limit
            .store(limit_bytes, Ordering::Relaxed);
    }

    /// Bytes currently allocated through this pool.
    pub fn used(&self) -> usize {
        self.inner.budget.used.load(Ordering::Relaxed)
    }

    /// The most bytes ever in use at once.
    pub fn peak(&self) -> usize {
        self.inner.budget.peak.load(Ordering::Relaxed)
    }

    /// Bytes that may still be allocated.
    pub fn available(&self) -> usize {
        self.limit().saturating_sub(self.used())
    }

    /// The stream allocations are ordered on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// Allocates `len` zeroed elements.
    pub fn alloc<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // SAFETY: zeroed below, in stream order before anything else reads it.
        let mut buffer = unsafe { self.alloc_uninit::<T>(len) }?;
        self.inner
            .stream
            .memset_zeros(&mut *buffer.slice)
            .map_err(|e| driver_err("zeroing a GPU buffer", e))?;
        Ok(buffer)
    }

    /// Allocates `len` elements without initialising them: a kept block of their size
    /// freed on this pool's stream if there is one, else from the driver.
    ///
    /// # Safety
    /// The contents are undefined until written; read them only after a copy or kernel has
    /// filled them.
    pub unsafe fn alloc_uninit<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let Some(bytes) = len.checked_mul(std::mem::size_of::<T>()) else {
            return resources_err!("GPU allocation of {len} elements overflows the address space");
        };
        let budget = &self.inner.budget;
        if keep_blocks() && keepable(bytes) {
            if let Some(ptr) = budget.take_kept(&self.inner.stream, bytes) {
                // SAFETY: a block of `bytes` this stream freed, owned by nothing else.
                let slice = unsafe { self.inner.stream.upgrade_device_ptr::<T>(ptr, len) };
                let reservation = Reservation { pool: self.inner.clone(), bytes };
                return Ok(DeviceBuffer { slice: ManuallyDrop::new(slice), reservation });
            }
        }
        let reservation = self.reserve(bytes)?;
        // SAFETY: the caller promises to write before reading.
        let alloc = || unsafe { self.inner.stream.alloc::<T>(len) };
        let slice = match alloc() {
            // The kept blocks hold device memory the driver may need.
            Err(_) if budget.kept_bytes.load(Ordering::Relaxed) > 0 => {
                budget.free_kept();
                alloc()
            }
            got => got,
        }
        .map_err(|e| driver_err(&format!("allocating {}", format_bytes(bytes)), e))?;
        Ok(DeviceBuffer { slice: ManuallyDrop::new(slice), reservation })
    }

    /// Bytes of freed blocks kept for reuse (see [`MAX_KEPT_BYTES`]).
    pub fn kept(&self) -> usize {
        self.inner.budget.kept_bytes.load(Ordering::Relaxed)
    }

    /// `bytes` held against the budget, the kept blocks freed first if they are in the way.
    fn reserve(&self, bytes: usize) -> Result<Reservation> {
        let budget = &self.inner.budget;
        if budget.try_reserve(bytes).is_err() {
            // The kept blocks' room first, then the limit's verdict.
            budget.free_kept();
            budget.try_reserve(bytes)?;
        }
        Ok(Reservation {
            pool: self.inner.clone(),
            bytes,
        })
    }
}

impl fmt::Debug for MemoryPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MemoryPool({} of {} in use)",
            format_bytes(self.used()),
            format_bytes(self.limit())
        )
    }
}

/// Bytes held against a pool's budget, given back on drop (unless its block is kept).
struct Reservation {
    pool: Arc<PoolInner>,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.pool.budget.release(self.bytes);
    }
}

/// Device memory allocated through a [`MemoryPool`]: a cudarc [`CudaSlice`] (to which it
/// dereferences) that counts against the pool's budget until dropped. Pass it to kernels
/// with `launch_builder(&f).arg(&buffer)`.
pub struct DeviceBuffer<T> {
    /// Taken in `drop`: freed, or kept for reuse.
    slice: ManuallyDrop<CudaSlice<T>>,
    reservation: Reservation,
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the field is not used again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        let bytes = self.reservation.bytes;
        if keep_blocks() && keepable(bytes) {
            let stream = Arc::clone(slice.stream());
            let block = (stream, slice.leak());
            // Its bytes move from used to kept: the reservation gives back nothing.
            self.reservation.bytes = 0;
            self.reservation.pool.budget.keep(block, bytes);
        } else {
            // Freed before the reservation is given back (its field drops after this).
            drop(slice);
        }
    }
}

impl<T> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.len() == 0
    }

    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.slice.num_bytes()
    }

    /// The underlying cudarc slice.
    pub fn as_slice(&self) -> &CudaSlice<T> {
        &self.slice
    }

    /// The underlying cudarc slice, mutably.
    pub fn as_slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}

impl<T> Deref for DeviceBuffer<T> {
    type Target = CudaSlice<T>;
    fn deref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> DerefMut for DeviceBuffer<T> {
    fn deref_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}

impl<T> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceBuffer<{}>[{}]",
            std::any::type_name::<T>(),
            self.len()
        )
    }
}

impl<T> DeviceSlice<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        self.slice.len()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.slice.stream()
    }
}

impl<T> DevicePtr<T> for DeviceBuffer<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice.device_ptr(stream)
    }
}

impl<T> DevicePtrMut<T> for DeviceBuffer<T> {
    fn device_ptr_mut<'a>(&'a mut self, stream: &'a CudaStream) -> (CUdeviceptr, SyncOnDrop<'a>) {
        self.slice.device_ptr_mut(stream)
    }
}

// SAFETY: both delegate to cudarc's own implementations for the wrapped CudaSlice, which
// push the device pointer and register the slice's read/write events.
unsafe impl<'a, 'b: 'a, T> PushKernelArg<&'b DeviceBuffer<T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b DeviceBuffer<T>) -> &mut Self {
        <Self as PushKernelArg<&'b CudaSlice<T>>>::arg(self, &arg.slice)
    }
}

// SAFETY: as above.
unsafe impl<'a, 'b: 'a, T> PushKernelArg<&'b mut DeviceBuffer<T>> for LaunchArgs<'a> {
    #[inline(always)]
    fn arg(&mut self, arg: &'b mut DeviceBuffer<T>) -> &mut Self {
        <Self as PushKernelArg<&'b mut CudaSlice<T>>>::arg(self, &mut arg.slice)
    }
}

/// "1.5 GiB"-style byte counts for messages.
pub(crate) fn format_bytes(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use tessera_common::TesseraError;

    #[test]
    fn budget_refuses_past_the_limit_and_recovers_on_release() {
        let budget = Budget::new(1000);
        budget.try_reserve(600).unwrap();
        let err = budget.try_reserve(500).unwrap_err();
        assert!(matches!(err, TesseraError::ResourcesExhausted(_)), "{err}");
        assert!(
            err.to_string()
                .contains("GPU memory limit of 1000 B exceeded"),
            "{err}"
        );
        budget.try_reserve(400).unwrap();
        budget.release(600);
        budget.try_reserve(600).unwrap();
        assert_eq!(budget.peak.load(Ordering::Relaxed), 1000);
        assert!(budget.try_reserve(usize::MAX).is_err());
    }

    #[test]
    fn kept_bytes_count_against_the_limit() {
        let budget = Budget::new(1000);
        budget.try_reserve(300).unwrap();
        budget.kept_bytes.store(600, Ordering::Relaxed);
        assert!(budget.try_reserve(200).is_err());
        budget.try_reserve(100).unwrap();
        budget.kept_bytes.store(0, Ordering::Relaxed);
        budget.try_reserve(600).unwrap();
        assert_eq!(budget.used.load(Ordering::Relaxed), 1000);
    }

    #[test]
    fn kept_blocks_are_reused_by_stream_and_size() {
        let mut kept = KeptBlocks::default();
        assert!(kept.keep(1, 256, 'a').is_empty());
        assert!(kept.keep(1, 256, 'b').is_empty());
        assert!(kept.keep(2, 256, 'c').is_empty());
        assert_eq!(kept.bytes, 768);
        // Another size, or another stream's block, is not handed out.
        assert_eq!(kept.take(1, 512), None);
        assert_eq!(kept.take(3, 256), None);
        assert_eq!(kept.take(1, 256), Some('b'));
        assert_eq!(kept.take(1, 256), Some('a'));
        assert_eq!(kept.take(1, 256), None);
        assert_eq!(kept.bytes, 256);
        // Empty and oversized blocks are freed at once.
        assert_eq!(kept.keep(1, 0, 'd'), vec![(0, 'd')]);
        assert_eq!(kept.keep(1, MAX_KEPT_BLOCK + 1, 'e'), vec![(MAX_KEPT_BLOCK + 1, 'e')]);
        let mut drained = kept.drain();
        drained.sort();
        assert_eq!(drained, vec![(256, 'c')]);
        assert_eq!((kept.bytes, kept.take(2, 256)), (0, None));
    }

    #[test]
    fn kept_blocks_make_room_by_freeing_other_sizes() {
        let mut kept = KeptBlocks::default();
        let n = MAX_KEPT_BYTES / MAX_KEPT_BLOCK;
        for i in 0..n {
            assert!(kept.keep(1, MAX_KEPT_BLOCK, i).is_empty());
        }
        assert_eq!(kept.bytes, MAX_KEPT_BYTES);
        // A block of another size frees one of the full size to fit.
        let freed = kept.keep(1, 4096, n);
        assert_eq!(freed.len(), 1);
        assert_eq!(freed[0].0, MAX_KEPT_BLOCK);
        assert_eq!(kept.bytes, MAX_KEPT_BYTES - MAX_KEPT_BLOCK + 4096);
        assert_eq!(kept.take(1, 4096), Some(n));
    }

    #[test]
    fn bytes_are_readable() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(141 << 30), "141.0 GiB");
    }
}
