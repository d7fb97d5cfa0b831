//! Running the serial-looking steps of a sink's finish on several threads: one thread
//! per item, contiguous ranges of rows, partitions taken from a shared counter, and a
//! large array of atomics initialized in parallel. (Morsels use
//! `CpuBackend::for_each_morsel`.) A panic in a thread becomes an internal error.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use tessera_common::{Result, TesseraError};

fn panicked() -> TesseraError {
    TesseraError::Internal("a worker thread panicked".into())
}

/// `f` of each item, each on a thread of its own (the calling thread alone for one
/// item); the results in item order.
pub fn on_threads<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> Result<R> + Sync) -> Result<Vec<R>> {
    if items.len() <= 1 {
        return items.into_iter().map(&f).collect();
    }
    std::thread::scope(|scope| {
        let f = &f;
        let handles: Vec<_> = items.into_iter().map(|item| scope.spawn(move || f(item))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(panicked()))).collect()
    })
}

/// `f(start, len)` over `ranges` contiguous ranges of `rows` rows, each on a thread of
/// its own; the results in range order.
pub(crate) fn in_ranges<T: Send>(rows: usize, ranges: usize, f: impl Fn(usize, usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let per = rows.div_ceil(ranges.max(1)).max(1);
    let starts: Vec<usize> = (0..rows).step_by(per).collect();
    if starts.len() <= 1 {
        return Ok(vec![f(0, rows)?]);
    }
    on_threads(starts, |a| f(a, per.min(rows - a)))
}

/// `f(p)` for partitions `0..count` on up to `threads` threads taking partitions from a
/// shared counter (so one crowded partition does not hold up the others); the results in
/// partition order.
pub(crate) fn per_partition<T: Send>(count: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Result<Vec<T>> {
    if threads <= 1 || count <= 1 {
        return Ok((0..count).map(f).collect());
    }
    let taken = AtomicUsize::new(0);
    let mut built: Vec<(usize, T)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.min(count))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let p = taken.fetch_add(1, Ordering::Relaxed);
                        if p >= count {
                            break;
                        }
                        mine.push((p, f(p)));
                    }
                    mine
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_default()).collect()
    });
    if built.len() != count {
        return Err(panicked());
    }
    built.sort_by_key(|b| b.0);
    Ok(built.into_iter().map(|b| b.1).collect())
}

/// `n` atomics holding `value`, written by `threads` threads: filling a 15 M-row build's
/// 60 MB on one core took 25-45 ms, most of it page faults (TPC-H SF 10 on 16 cores).
pub(crate) fn atomics(n: usize, value: u32, threads: usize) -> Vec<AtomicU32> {
    if threads <= 1 {
        return (0..n).map(|_| AtomicU32::new(value)).collect();
    }
    let mut v: Vec<AtomicU32> = Vec::with_capacity(n);
    let per = n.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for piece in v.spare_capacity_mut()[..n].chunks_mut(per) {
            scope.spawn(move || {
                piece.iter_mut().for_each(|x| {
                    x.write(AtomicU32::new(value));
                })
            });
        }
    });
    // SAFETY: the threads above initialized each of the first `n` elements (a panic in
    // one would have propagated out of the scope before this point).
    unsafe { v.set_len(n) };
    v
}
