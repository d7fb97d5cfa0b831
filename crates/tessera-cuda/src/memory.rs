//! The GPU memory budget: an allocator that refuses, with a
//! [`TesseraError::ResourcesExhausted`](tessera_common::TesseraError::ResourcesExhausted), any allocation that would take the bytes in use
//! past a limit, instead of letting the driver fail (or another process suffer).
//!
//! Allocations are stream-ordered (`cuMemAllocAsync` on the pool's stream, through cudarc),
//! never managed memory. A [`DeviceBuffer`] gives its bytes back to the budget when dropped;
//! the device memory itself is freed in stream order. Pools on other streams
//! ([`MemoryPool::on_stream`], one per query stream) share one budget.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
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

/// Bytes in use against a limit, lock-free.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: AtomicUsize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Self {
        Budget {
            limit: AtomicUsize::new(limit),
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }

    /// Reserves `bytes`, or explains why not.
    pub(crate) fn try_reserve(&self, bytes: usize) -> Result<()> {
        let limit = self.limit.load(Ordering::Relaxed);
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let new = match used.checked_add(bytes) {
                Some(new) if new <= limit => new,
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
        let reservation = self.reserve::<T>(len)?;
        let slice = self.inner.stream.alloc_zeros::<T>(len).map_err(|e| {
            driver_err(
                &format!("allocating {}", format_bytes(reservation.bytes)),
                e,
            )
        })?;
        Ok(DeviceBuffer {
            slice,
            _reservation: reservation,
        })
    }

    /// Allocates `len` elements without initialising them.
    ///
    /// # Safety
    /// The contents are undefined until written; read them only after a copy or kernel has
    /// filled them.
    pub unsafe fn alloc_uninit<T: DeviceRepr>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let reservation = self.reserve::<T>(len)?;
        // SAFETY: the caller promises to write before reading.
        let slice = unsafe { self.inner.stream.alloc::<T>(len) }.map_err(|e| {
            driver_err(
                &format!("allocating {}", format_bytes(reservation.bytes)),
                e,
            )
        })?;
        Ok(DeviceBuffer {
            slice,
            _reservation: reservation,
        })
    }

    fn reserve<T>(&self, len: usize) -> Result<Reservation> {
        let Some(bytes) = len.checked_mul(std::mem::size_of::<T>()) else {
            return resources_err!("GPU allocation of {len} elements overflows the address space");
        };
        self.inner.budget.try_reserve(bytes)?;
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

/// Bytes held against a pool's budget, given back on drop.
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
    // Field order matters: the slice is freed before the reservation is given back.
    slice: CudaSlice<T>,
    _reservation: Reservation,
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
    fn bytes_are_readable() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(141 << 30), "141.0 GiB");
    }
}
