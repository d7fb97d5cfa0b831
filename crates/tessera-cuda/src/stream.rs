//! Query streams and admission to the GPU.
//!
//! Each GPU query runs on a CUDA stream of its own ([`QueryStream`]), so the kernels and
//! copies of concurrent queries overlap instead of queueing behind each other on one
//! stream, and one query waiting for its results does not wait for another's work. A
//! stream comes with its own pinned staging buffers and an allocator on it that shares
//! the device's memory budget ([`GpuStream`]); streams are kept in a pool and reused.
//!
//! Before it starts, a query is *admitted* ([`GpuDevice::admit`]): it reserves the device
//! memory it expects to need besides the cached columns it reads (which the executor pins
//! for it; they are shared with other queries and counted once), and waits while the
//! reservations of the running queries and the pinned columns leave too little of the
//! budget (or [`MAX_GPU_QUERIES`] run already). A query that cannot fit even alone, or
//! that waits longer than its caller allows, is refused with a resources error, on which the executor runs it on the CPU backend: no
//! query fails for memory that another one holds. Reservations are admission's bookkeeping;
//! the allocations themselves are still checked against the budget by [`MemoryPool`].

use std::ops::Deref;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use tessera_common::{Result, TesseraError, resources_err};

use crate::device::{GpuDevice, driver_err};
use crate::memory::{MemoryPool, format_bytes};
use crate::upload::Staging;

/// Most GPU queries running at once. Kernels are sized to fill the GPU (a few blocks per
/// SM), so beyond a handful of concurrent queries more streams add no throughput, and each
/// stream may pin up to four staging buffers of [`QUERY_STAGING_CHUNK_BYTES`] on the host:
/// 16 streams bound that to 2 GiB.
pub const MAX_GPU_QUERIES: usize = 16;

/// Size of a query stream's pinned staging buffers: half the device stream's
/// ([`crate::upload::STAGING_CHUNK_BYTES`]), still long enough that a copy's fixed cost
/// (a few µs) is noise at 55 GB/s, and large enough for eight copy threads of 4 MiB.
pub const QUERY_STAGING_CHUNK_BYTES: usize = 32 << 20;

/// A CUDA stream with what work on it needs: an allocator ordered on it (sharing the
/// device's budget) and pinned staging buffers for copies.
pub struct GpuStream {
    stream: Arc<CudaStream>,
    memory: MemoryPool,
    pub(crate) staging: Mutex<Staging>,
}

impl GpuStream {
    /// A new stream of `ctx` allocating under `budget`'s budget.
    pub(crate) fn new(ctx: &Arc<CudaContext>, budget: &MemoryPool, staging_bytes: usize) -> Result<GpuStream> {
        let stream = ctx.new_stream().map_err(|e| driver_err("creating a CUDA stream", e))?;
        let memory = budget.on_stream(stream.clone());
        Ok(GpuStream::on(stream, memory, staging_bytes))
    }

    /// A stream over an existing cudarc stream and its pool (the device's own).
    pub(crate) fn on(stream: Arc<CudaStream>, memory: MemoryPool, staging_bytes: usize) -> GpuStream {
        GpuStream { stream, memory, staging: Mutex::new(Staging::new(staging_bytes)) }
    }

    /// The cudarc stream: launch kernels on it.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The allocator ordered on this stream.
    pub fn memory(&self) -> &MemoryPool {
        &self.memory
    }

    /// Waits until all work queued on this stream has finished, and reports any error the
    /// driver recorded meanwhile.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| driver_err("synchronizing a GPU stream", e))?;
        self.stream.context().check_err().map_err(|e| driver_err("running GPU work", e))
    }

    /// An event recorded after the work queued on this stream so far: another stream
    /// that [`waits`](GpuStream::wait) for it sees that work done (a column uploaded here
    /// and read by other queries).
    pub fn record(&self) -> Result<CudaEvent> {
        self.stream.record_event(None).map_err(|e| driver_err("recording a CUDA event", e))
    }

    /// Orders the work queued on this stream from now on after `event`.
    pub fn wait(&self, event: &CudaEvent) -> Result<()> {
        self.stream.wait(event).map_err(|e| driver_err("waiting for a CUDA event", e))
    }
}

/// A query's stream and memory reservation, given back when dropped (the stream returns
/// to the pool; queries waiting for admission are woken).
pub struct QueryStream {
    device: Arc<GpuDevice>,
    stream: Option<GpuStream>,
    reserved: usize,
}

impl Deref for QueryStream {
    type Target = GpuStream;
    fn deref(&self) -> &GpuStream {
        // None only under `TESSERA_EXP_ONE_STREAM=1`.
        self.stream.as_ref().unwrap_or_else(|| self.device.default_stream())
    }
}

impl Drop for QueryStream {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            self.device.admission.leave(stream, self.reserved);
        }
    }
}

impl GpuDevice {
    /// Admits a query that expects to need `bytes` of device memory besides `pinned()`
    /// (the bytes of cached data that running queries, this one included, hold and so
    /// cannot be evicted): waits (at most `wait`) until the running queries' reservations
    /// and the pinned bytes leave room for it under the memory limit and fewer than
    /// [`MAX_GPU_QUERIES`] run, then returns its stream. A resources error when it does
    /// not fit even with no other query running, or the wait runs out.
    ///
    /// Under `TESSERA_EXP_ONE_STREAM=1` (an experiment, for measuring what the streams
    /// bring) every query runs on the device's own stream, unreserved, as before query
    /// streams existed.
    pub fn admit(self: &Arc<Self>, bytes: usize, wait: Duration, pinned: &dyn Fn() -> usize) -> Result<QueryStream> {
        if one_stream() {
            return Ok(QueryStream { device: Arc::clone(self), stream: None, reserved: 0 });
        }
        let limit = self.memory().limit();
        let stream = self.admission.enter(bytes, limit, wait, pinned, || {
            GpuStream::new(self.context(), self.memory(), QUERY_STAGING_CHUNK_BYTES)
        })?;
        Ok(QueryStream { device: Arc::clone(self), stream: Some(stream), reserved: bytes })
    }

    /// Device memory reserved by the queries running now, and how many run.
    pub fn admitted(&self) -> (usize, usize) {
        self.admission.load()
    }
}

/// Whether `TESSERA_EXP_ONE_STREAM=1` puts every query on the device's own stream.
fn one_stream() -> bool {
    static ONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ONE.get_or_init(|| std::env::var("TESSERA_EXP_ONE_STREAM").is_ok_and(|v| v == "1"))
}

/// Admission's bookkeeping, over a pool of idle items `S` (streams; plain values in tests).
pub(crate) struct Admission<S> {
    state: Mutex<AdmissionState<S>>,
    changed: Condvar,
    max_running: usize,
}

struct AdmissionState<S> {
    reserved: usize,
    running: usize,
    idle: Vec<S>,
}

impl<S> Admission<S> {
    pub(crate) fn new(max_running: usize) -> Self {
        Admission {
            state: Mutex::new(AdmissionState { reserved: 0, running: 0, idle: Vec::new() }),
            changed: Condvar::new(),
            max_running: max_running.max(1),
        }
    }

    /// Reserves `bytes` under `limit` less `pinned()` and takes an idle item (or makes
    /// one), waiting at most `wait` for running queries to leave room.
    pub(crate) fn enter(&self, bytes: usize, limit: usize, wait: Duration, pinned: &dyn Fn() -> usize, make: impl FnOnce() -> Result<S>) -> Result<S> {
        let deadline = Instant::now() + wait;
        let mut state = self.state.lock().map_err(|_| poisoned())?;
        loop {
            let pinned = pinned();
            let room = limit.saturating_sub(pinned);
            let fits = state.reserved.checked_add(bytes).is_some_and(|total| total <= room);
            if fits && state.running < self.max_running {
                break;
            }
            if !fits && state.running == 0 {
                // Nothing running can leave: it will never fit.
                return resources_err!(
                    "the query needs about {} of GPU memory besides {} of cached columns in use, more than the limit of {}",
                    format_bytes(bytes),
                    format_bytes(pinned),
                    format_bytes(limit)
                );
            }
            let now = Instant::now();
            if now >= deadline {
                return resources_err!(
                    "waited {:.1} s for {} of GPU memory: {} running queries hold {} and {} of cached columns of the {} limit",
                    wait.as_secs_f64(),
                    format_bytes(bytes),
                    state.running,
                    format_bytes(state.reserved),
                    format_bytes(pinned),
                    format_bytes(limit)
                );
            }
            state = self.changed.wait_timeout(state, deadline - now).map_err(|_| poisoned())?.0;
        }
        state.reserved += bytes;
        state.running += 1;
        let item = match state.idle.pop() {
            Some(item) => Ok(item),
            None => {
                // Made outside the lock: creating a stream takes the driver's time.
                drop(state);
                make()
            }
        };
        if item.is_err() {
            self.release(bytes);
        }
        item
    }

    /// Gives back an item and its reservation.
    pub(crate) fn leave(&self, item: S, bytes: usize) {
        if let Ok(mut state) = self.state.lock() {
            state.idle.push(item);
        }
        self.release(bytes);
    }

    fn release(&self, bytes: usize) {
        if let Ok(mut state) = self.state.lock() {
            state.reserved = state.reserved.saturating_sub(bytes);
            state.running = state.running.saturating_sub(1);
        }
        self.changed.notify_all();
    }

    /// (bytes reserved, queries running).
    pub(crate) fn load(&self) -> (usize, usize) {
        self.state.lock().map(|s| (s.reserved, s.running)).unwrap_or((0, 0))
    }
}

fn poisoned() -> TesseraError {
    TesseraError::Internal("GPU admission state poisoned by a panic".into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const NO_WAIT: Duration = Duration::ZERO;

    fn none() -> usize {
        0
    }

    #[test]
    fn reservations_add_up_to_the_limit() {
        let a: Admission<u32> = Admission::new(8);
        let one = a.enter(600, 1000, NO_WAIT, &none, || Ok(1)).unwrap();
        assert_eq!(a.load(), (600, 1));
        // 600 + 500 > 1000: refused at once without waiting.
        let err = a.enter(500, 1000, NO_WAIT, &none, || Ok(2)).unwrap_err();
        assert!(matches!(err, TesseraError::ResourcesExhausted(_)), "{err}");
        assert!(err.to_string().contains("1 running queries"), "{err}");
        let two = a.enter(400, 1000, NO_WAIT, &none, || Ok(2)).unwrap();
        assert_eq!(a.load(), (1000, 2));
        a.leave(one, 600);
        a.leave(two, 400);
        assert_eq!(a.load(), (0, 0));
        // Idle items are reused before new ones are made.
        let again = a.enter(10, 1000, NO_WAIT, &none, || Ok(99)).unwrap();
        assert!(again == 1 || again == 2);
    }

    #[test]
    fn more_than_the_limit_is_refused_outright() {
        let a: Admission<u32> = Admission::new(8);
        let err = a.enter(2000, 1000, Duration::from_secs(60), &none, || Ok(1)).unwrap_err();
        assert!(err.to_string().contains("more than the limit"), "{err}");
        assert_eq!(a.load(), (0, 0));
        // Pinned cached columns take their share of the limit.
        let pinned = || 700;
        assert!(a.enter(400, 1000, Duration::from_secs(60), &pinned, || Ok(1)).is_err());
        let ok = a.enter(300, 1000, NO_WAIT, &pinned, || Ok(1)).unwrap();
        a.leave(ok, 300);
    }

    #[test]
    fn a_waiting_query_is_admitted_when_another_leaves() {
        let a: Arc<Admission<u32>> = Arc::new(Admission::new(8));
        let held = a.enter(900, 1000, NO_WAIT, &none, || Ok(1)).unwrap();
        let waiter = {
            let a = Arc::clone(&a);
            std::thread::spawn(move || a.enter(500, 1000, Duration::from_secs(30), &none, || Ok(2)).map(|s| (s, Instant::now())))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(a.load(), (900, 1), "the second query must still wait");
        let left = Instant::now();
        a.leave(held, 900);
        let (_, admitted) = waiter.join().unwrap().unwrap();
        assert!(admitted >= left);
        assert_eq!(a.load(), (500, 1));
    }

    #[test]
    fn running_queries_are_bounded() {
        let a: Admission<u32> = Admission::new(2);
        let x = a.enter(1, 1000, NO_WAIT, &none, || Ok(1)).unwrap();
        let _y = a.enter(1, 1000, NO_WAIT, &none, || Ok(2)).unwrap();
        assert!(a.enter(1, 1000, Duration::from_millis(20), &none, || Ok(3)).is_err());
        a.leave(x, 1);
        assert!(a.enter(1, 1000, NO_WAIT, &none, || Ok(3)).is_ok());
    }

    #[test]
    fn a_failed_make_gives_the_reservation_back() {
        let a: Admission<u32> = Admission::new(2);
        assert!(a.enter(100, 1000, NO_WAIT, &none, || resources_err!("no stream")).is_err());
        assert_eq!(a.load(), (0, 0));
    }
}
