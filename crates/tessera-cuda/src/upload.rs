//! Host↔device copies staged through pinned host memory.
//!
//! A copy from pageable memory runs at 6.9 GB/s on the H200's PCIe 5 link, from pinned
//! memory at 55 GB/s (figures in GPU.md). Pinning a column in place costs more than it
//! saves, so data goes through two reusable pinned staging buffers per direction,
//! [`STAGING_CHUNK_BYTES`] each: while the DMA engine copies one chunk, the CPU fills (or
//! drains) the other. Each buffer has an event recorded after its copy; the CPU waits on it
//! before touching the buffer again.
//!
//! Upload buffers are write-combined (the CPU only writes them, and write-combining speeds
//! up those writes and the PCIe reads); download buffers are ordinary pinned memory,
//! because the CPU reads write-combined memory very slowly.

use std::sync::Arc;

use cudarc::driver::sys::CU_MEMHOSTALLOC_WRITECOMBINED;
use cudarc::driver::{
    CudaContext, CudaEvent, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, PinnedHostSlice,
};
use tessera_common::{Result, internal_err};

use crate::device::{GpuDevice, driver_err};
use crate::memory::{DeviceBuffer, MemoryPool};
use crate::stream::GpuStream;

/// Size of one pinned staging buffer. 64 MiB moves in about 1.2 ms at 55 GB/s, long
/// enough that the per-copy overhead (a few µs) is noise, and four of them (two per
/// direction) pin only 256 MiB of host memory.
pub const STAGING_CHUNK_BYTES: usize = 64 << 20;

/// Most threads that copy between a column and a staging buffer. Measured on the H100
/// device (16 cores, PCIe 5, link 55 GB/s pinned), 1 GiB: one copy thread gave 5.5 GB/s
/// staged upload and 1.4 GB/s download (into a fresh `Vec`, page faults included); eight
/// give 31 GB/s and 9.6 GB/s (`gpu_transfer_throughput`, median of 5).
pub const MAX_COPY_THREADS: usize = 8;

/// Smallest piece one copy thread takes: below this, starting a thread (~20 µs) costs
/// more than it saves (4 MiB copy in ~0.5 ms on one core).
const MIN_COPY_PIECE: usize = 4 << 20;

/// `dst.copy_from_slice(src)` split over up to [`MAX_COPY_THREADS`] threads.
fn parallel_copy(dst: &mut [u8], src: &[u8]) {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_COPY_THREADS);
    let pieces = (src.len() / MIN_COPY_PIECE).clamp(1, threads);
    if pieces == 1 {
        dst.copy_from_slice(src);
        return;
    }
    let piece = src.len().div_ceil(pieces);
    std::thread::scope(|scope| {
        for (d, s) in dst.chunks_mut(piece).zip(src.chunks(piece)) {
            scope.spawn(move || d.copy_from_slice(s));
        }
    });
}

/// The pinned buffers of both directions, each pair allocated on first use.
pub(crate) struct Staging {
    chunk_bytes: usize,
    up: Option<BufferPair>,
    down: Option<BufferPair>,
}

/// Two pinned buffers with an event each.
struct BufferPair {
    buffers: [PinnedHostSlice<u8>; 2],
    /// Recorded on the stream after the copy that used the buffer of the same index.
    copied: [CudaEvent; 2],
}

impl BufferPair {
    fn new(ctx: &Arc<CudaContext>, bytes: usize, flags: u32) -> Result<Self> {
        let what = "allocating pinned staging memory";
        // SAFETY: the contents are never read before being written (uploads fill a buffer
        // before copying it, downloads copy into it before reading).
        let alloc = || unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes, flags) };
        Ok(BufferPair {
            buffers: [
                alloc().map_err(|e| driver_err(what, e))?,
                alloc().map_err(|e| driver_err(what, e))?,
            ],
            copied: [
                ctx.new_event(None).map_err(|e| driver_err(what, e))?,
                ctx.new_event(None).map_err(|e| driver_err(what, e))?,
            ],
        })
    }

    /// Waits for the last copy through buffer `b` and returns its memory.
    fn wait_and_get(&mut self, b: usize) -> Result<*mut u8> {
        self.copied[b]
            .synchronize()
            .map_err(|e| driver_err("waiting for a staged copy", e))?;
        self.buffers[b]
            .as_mut_ptr()
            .map_err(|e| driver_err("waiting for a staged copy", e))
    }
}

impl Staging {
    pub(crate) fn new(chunk_bytes: usize) -> Self {
        Staging {
            chunk_bytes: chunk_bytes.max(1),
            up: None,
            down: None,
        }
    }

    /// Copies `src` to the device memory at `dst` (at least `src.len()` bytes), in stream order.
    fn upload_bytes(&mut self, stream: &Arc<CudaStream>, src: &[u8], dst: u64) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        let chunk_bytes = self.chunk_bytes;
        if self.up.is_none() {
            self.up = Some(BufferPair::new(
                stream.context(),
                chunk_bytes,
                CU_MEMHOSTALLOC_WRITECOMBINED,
            )?);
        }
        let Some(pair) = self.up.as_mut() else {
            return internal_err!("staging buffers missing");
        };
        for (k, chunk) in src.chunks(chunk_bytes).enumerate() {
            let b = k % 2;
            let host = pair.wait_and_get(b)?;
            // SAFETY: `host` is a pinned buffer of chunk_bytes >= chunk.len() bytes that no
            // copy is using (we waited on its event); the regions do not overlap.
            let staging = unsafe { std::slice::from_raw_parts_mut(host, chunk.len()) };
            parallel_copy(staging, chunk);
            let staged: &[u8] = staging;
            let offset = (k * chunk_bytes) as u64;
            // SAFETY: dst + offset .. + chunk.len() lies inside the destination allocation;
            // the staged bytes stay untouched until the event below has completed.
            unsafe {
                cudarc::driver::result::memcpy_htod_async(dst + offset, staged, stream.cu_stream())
            }
            .map_err(|e| driver_err("copying to the GPU", e))?;
            pair.copied[b]
                .record(stream)
                .map_err(|e| driver_err("copying to the GPU", e))?;
        }
        Ok(())
    }

    /// Copies `dst.len()` bytes from the device memory at `src` into `dst`; returns when
    /// the bytes are in `dst`.
    fn download_bytes(&mut self, stream: &Arc<CudaStream>, src: u64, dst: &mut [u8]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let chunk_bytes = self.chunk_bytes;
        if self.down.is_none() {
            self.down = Some(BufferPair::new(stream.context(), chunk_bytes, 0)?);
        }
        let Some(pair) = self.down.as_mut() else {
            return internal_err!("staging buffers missing");
        };
        let total = dst.len();
        let chunks = total.div_ceil(chunk_bytes);
        let chunk_range = |k: usize| k * chunk_bytes..((k + 1) * chunk_bytes).min(total);
        // Iteration k queues chunk k into buffer k % 2, then drains chunk k - 1 from the
        // other buffer; chunk k - 2, the previous user of buffer k % 2, was drained in
        // iteration k - 1, so the buffer is free.
        for k in 0..=chunks {
            if k < chunks {
                let b = k % 2;
                let range = chunk_range(k);
                let host = pair.wait_and_get(b)?;
                // SAFETY: the buffer holds chunk_bytes >= range.len() bytes and no copy uses it.
                let staging = unsafe { std::slice::from_raw_parts_mut(host, range.len()) };
                // SAFETY: src + range lies inside the source allocation.
                unsafe {
                    cudarc::driver::result::memcpy_dtoh_async(
                        staging,
                        src + range.start as u64,
                        stream.cu_stream(),
                    )
                }
                .map_err(|e| driver_err("copying from the GPU", e))?;
                pair.copied[b]
                    .record(stream)
                    .map_err(|e| driver_err("copying from the GPU", e))?;
            }
            if k >= 1 {
                let j = k - 1;
                let range = chunk_range(j);
                let host = pair.wait_and_get(j % 2)?;
                // SAFETY: the copy into this buffer has completed (waited on its event).
                let staged = unsafe { std::slice::from_raw_parts(host as *const u8, range.len()) };
                parallel_copy(&mut dst[range], staged);
            }
        }
        Ok(())
    }
}

/// Uploads up to this size (kernel arguments, pointer arrays, small lookup arrays) are
/// copied straight from pageable memory: the driver stages them itself without waiting
/// for earlier work on the stream (CUDA documents this for pageable host-to-device
/// `cuMemcpyHtoDAsync`), where our pinned staging buffers would wait for the previous
/// copy through the same buffer — and so for every kernel queued after it.
const SMALL_UPLOAD_BYTES: usize = 64 << 10;

/// The bytes of a slice of plain device-representable values.
fn as_bytes<T: DeviceRepr>(data: &[T]) -> &[u8] {
    // SAFETY: DeviceRepr types are plain data copied bytewise to the device anyway.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

impl GpuDevice {
    /// Copies `data` to a new buffer from the device's memory pool, on the device's own
    /// stream (see [`GpuStream::upload`]).
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.default_stream().upload(data)
    }

    /// As [`GpuStream::download`], on the device's own stream.
    pub fn download<T: DeviceRepr + Copy, S: DevicePtr<T>>(&self, src: &S) -> Result<Vec<T>> {
        self.default_stream().download(src)
    }

    /// As [`GpuStream::download_regions`], on the device's own stream.
    pub fn download_regions(&self, regions: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        self.default_stream().download_regions(regions)
    }
}

impl GpuStream {
    /// Copies `data` to a new buffer from this stream's allocator, staged through pinned
    /// memory. The copy is ordered on this stream: kernels launched on it after this call
    /// see the data, and `data` may be reused as soon as this returns.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        self.upload_with(self.memory(), data)
    }

    /// As [`GpuStream::upload`], allocating from `pool` (whose stream must be this one).
    pub fn upload_with<T: DeviceRepr>(
        &self,
        pool: &MemoryPool,
        data: &[T],
    ) -> Result<DeviceBuffer<T>> {
        // SAFETY: filled completely by the copy below before anything can read it.
        let mut buffer = unsafe { pool.alloc_uninit::<T>(data.len()) }?;
        self.copy_into(data, &mut buffer)?;
        Ok(buffer)
    }

    /// Copies `data` into the front of an existing device buffer (of at least `data.len()`
    /// elements), staged through pinned memory, in stream order.
    pub fn copy_into<T: DeviceRepr, D: DevicePtrMut<T>>(
        &self,
        data: &[T],
        dst: &mut D,
    ) -> Result<()> {
        if dst.len() < data.len() {
            return internal_err!(
                "copying {} elements into a device buffer of {}",
                data.len(),
                dst.len()
            );
        }
        let stream = self.stream().clone();
        let (dptr, _record) = dst.device_ptr_mut(&stream);
        let bytes = as_bytes(data);
        if bytes.len() <= SMALL_UPLOAD_BYTES {
            // SAFETY: dptr points at >= bytes.len() bytes of device memory (checked above).
            // From pageable memory, the driver copies the bytes into its own staging
            // buffer before returning, so `data` may be reused at once.
            return unsafe { cudarc::driver::result::memcpy_htod_async(dptr, bytes, stream.cu_stream()) }
                .map_err(|e| driver_err("copying to the GPU", e));
        }
        let mut staging = self.staging.lock().map_err(|_| poisoned())?;
        staging.upload_bytes(&stream, bytes, dptr)
    }

    /// Copies a device buffer (or a view of one) back into a `Vec`, staged through pinned
    /// memory; waits for all earlier work on this stream.
    pub fn download<T: DeviceRepr + Copy, S: DevicePtr<T>>(&self, src: &S) -> Result<Vec<T>> {
        let len = src.len();
        let mut out: Vec<T> = Vec::with_capacity(len);
        let stream = self.stream().clone();
        {
            let (sptr, _record) = src.device_ptr(&stream);
            // SAFETY: the spare capacity holds len * size_of::<T>() bytes; they are only
            // written here, and exposed as T values (plain data) after being filled.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(
                    out.as_mut_ptr() as *mut u8,
                    len * std::mem::size_of::<T>(),
                )
            };
            let mut staging = self.staging.lock().map_err(|_| poisoned())?;
            staging.download_bytes(&stream, sptr, bytes)?;
        }
        // SAFETY: all len elements were written by download_bytes.
        unsafe { out.set_len(len) };
        Ok(out)
    }
}

impl GpuStream {
    /// Copies several device regions (`(address, bytes)`) back in one round trip: the
    /// copies are queued behind all earlier work on this stream into one pinned
    /// buffer and waited for once. Regions that together exceed one staging chunk are
    /// downloaded one by one instead.
    pub fn download_regions(&self, regions: &[(u64, usize)]) -> Result<Vec<Vec<u8>>> {
        self.download_regions_then(regions, || Ok(()))
    }

    /// As [`GpuStream::download_regions`], calling `then` once the copies are queued and
    /// before waiting for them: work it queues on this stream runs after the copies (it
    /// may overwrite what they read) while the host waits anyway.
    pub fn download_regions_then(&self, regions: &[(u64, usize)], then: impl FnOnce() -> Result<()>) -> Result<Vec<Vec<u8>>> {
        let total: usize = regions.iter().map(|r| r.1).sum();
        let stream = self.stream().clone();
        let mut staging = self.staging.lock().map_err(|_| poisoned())?;
        if total > staging.chunk_bytes {
            let got = regions
                .iter()
                .map(|&(src, bytes)| {
                    let mut out = vec![0u8; bytes];
                    staging.download_bytes(&stream, src, &mut out)?;
                    Ok(out)
                })
                .collect::<Result<Vec<_>>>()?;
            then()?;
            return Ok(got);
        }
        staging.download_gathered(&stream, regions, total, then)
    }
}

impl Staging {
    /// Queues the copies of `regions` (`total` bytes, at most one chunk) into one download
    /// buffer, waits once, and returns their bytes.
    fn download_gathered(&mut self, stream: &Arc<CudaStream>, regions: &[(u64, usize)], total: usize, then: impl FnOnce() -> Result<()>) -> Result<Vec<Vec<u8>>> {
        if self.down.is_none() {
            self.down = Some(BufferPair::new(stream.context(), self.chunk_bytes, 0)?);
        }
        let Some(pair) = self.down.as_mut() else {
            return internal_err!("staging buffers missing");
        };
        let host = pair.wait_and_get(0)?;
        let mut at = 0usize;
        for &(src, bytes) in regions {
            if bytes == 0 {
                continue;
            }
            // SAFETY: the buffer holds chunk_bytes >= total bytes; [at, at + bytes) is this
            // region's own part of it, and no other copy uses the buffer (waited above).
            let staging = unsafe { std::slice::from_raw_parts_mut(host.add(at), bytes) };
            // SAFETY: src .. src + bytes lies inside a live device allocation (the caller's).
            unsafe { cudarc::driver::result::memcpy_dtoh_async(staging, src, stream.cu_stream()) }
                .map_err(|e| driver_err("copying from the GPU", e))?;
            at += bytes;
        }
        debug_assert_eq!(at, total);
        pair.copied[0].record(stream).map_err(|e| driver_err("copying from the GPU", e))?;
        then()?;
        let host = pair.wait_and_get(0)?;
        let mut out = Vec::with_capacity(regions.len());
        let mut at = 0usize;
        for &(_, bytes) in regions {
            // SAFETY: the copies have completed (waited on the event recorded after them).
            out.push(unsafe { std::slice::from_raw_parts(host.add(at) as *const u8, bytes) }.to_vec());
            at += bytes;
        }
        Ok(out)
    }
}

fn poisoned() -> tessera_common::TesseraError {
    tessera_common::TesseraError::Internal(
        "GPU staging buffers poisoned by an earlier panic".into(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::gpu_or_skip;

    #[test]
    fn gpu_round_trip_through_small_staging_chunks() {
        let Some(device) = gpu_or_skip("gpu_round_trip_through_small_staging_chunks") else {
            return;
        };
        // Odd sizes around a tiny chunk exercise the double-buffering and the last partial chunk.
        let mut staging = Staging::new(4096 + 8);
        let stream = device.stream().clone();
        for len in [0usize, 1, 4103, 4104, 4105, 100_003] {
            let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let mut buf = device.memory().alloc::<u8>(len.max(1)).unwrap();
            {
                let (dptr, _record) = buf.device_ptr_mut(&stream);
                staging.upload_bytes(&stream, &data, dptr).unwrap();
            }
            let mut back = vec![0u8; len];
            {
                let (sptr, _record) = buf.device_ptr(&stream);
                staging.download_bytes(&stream, sptr, &mut back).unwrap();
            }
            assert_eq!(back, data, "length {len}");
        }
    }

    #[test]
    fn gpu_download_regions_returns_each_region_in_one_round_trip() {
        let Some(device) = gpu_or_skip("gpu_download_regions_returns_each_region_in_one_round_trip") else {
            return;
        };
        let a: Vec<u64> = (0..1000).collect();
        let b: Vec<u32> = (0..333).map(|x| x * 7).collect();
        let (da, db) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
        let stream = device.stream().clone();
        let (pa, _ra) = da.device_ptr(&stream);
        let (pb, _rb) = db.device_ptr(&stream);
        // Regions out of order, one empty, one a slice from the middle.
        let got = device.download_regions(&[(pb, 333 * 4), (pa + 8 * 10, 8 * 5), (pa, 0)]).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], b.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        assert_eq!(got[1], (10u64..15).flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
        assert!(got[2].is_empty());
    }

    #[test]
    fn gpu_upload_download_spans_several_default_chunks() {
        let Some(device) = gpu_or_skip("gpu_upload_download_spans_several_default_chunks") else {
            return;
        };
        // 20 M i64 = 160 MB: two full 64 MiB chunks and a partial one, in both directions.
        let data: Vec<i64> = (0..20_000_001i64).map(|i| i * 7 - 3).collect();
        let buf = device.upload(&data).unwrap();
        assert!(device.memory().used() >= buf.num_bytes());
        let back = device.download(&buf).unwrap();
        assert!(back == data, "round trip differs");
        let view = buf.slice(10..20);
        assert_eq!(device.download(&view).unwrap(), data[10..20].to_vec());
        device.synchronize().unwrap();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod throughput {
    use crate::test_support::gpu_or_skip;

    /// Prints staged upload/download rates for 1 GiB; run by hand:
    /// `cargo test --release -p tessera-cuda gpu_transfer_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore = "measurement, run by hand on the device"]
    fn gpu_transfer_throughput() {
        let Some(device) = gpu_or_skip("gpu_transfer_throughput") else {
            return;
        };
        let data: Vec<u64> = (0..(1u64 << 27)).collect();
        let bytes = (data.len() * 8) as f64;
        let _warm = device.upload(&data[..1024]).unwrap();
        let _ = device.download(&_warm).unwrap();
        let mut up = Vec::new();
        let mut down = Vec::new();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let buf = device.upload(&data).unwrap();
            device.synchronize().unwrap();
            up.push(bytes / t.elapsed().as_secs_f64() / 1e9);
            let t = std::time::Instant::now();
            let back = device.download(&buf).unwrap();
            down.push(bytes / t.elapsed().as_secs_f64() / 1e9);
            assert_eq!(back.len(), data.len());
        }
        // The link alone: one pinned buffer copied 16 times, no staging copy.
        let mut pinned =
            unsafe { device.context().alloc_pinned_with_flags::<u8>(64 << 20, 0) }.unwrap();
        pinned.as_mut_slice().unwrap().fill(1);
        let mut target = device.memory().alloc::<u8>(1 << 30).unwrap();
        let stream = device.stream().clone();
        let mut link = Vec::new();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            for k in 0..16 {
                let mut view = target.slice_mut(k * (64 << 20)..(k + 1) * (64 << 20));
                stream.memcpy_htod(&pinned, &mut view).unwrap();
            }
            device.synchronize().unwrap();
            link.push(bytes / t.elapsed().as_secs_f64() / 1e9);
        }
        link.sort_by(f64::total_cmp);
        println!(
            "{}: pinned host->device link {:.1} GB/s",
            device.name(),
            link[2]
        );
        up.sort_by(f64::total_cmp);
        down.sort_by(f64::total_cmp);
        println!(
            "{}: 1 GiB staged upload {:.1} GB/s, download {:.1} GB/s (median of 5)",
            device.name(),
            up[2],
            down[2]
        );
    }
}
