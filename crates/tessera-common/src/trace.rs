//! Host timeline of a statement, for finding where the wall time outside the kernels
//! goes: the session, the executor and the GPU runtime [`mark`] the steps they reach,
//! and `tessera bench` prints each warm run's marks when `TESSERA_TRACE_HOST=1`
//! ([`take`]). Off (one relaxed load a mark) unless that variable is set when the
//! process starts.
//!
//! The marks of all threads go to one list: meant for one statement at a time.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// 0: not read yet, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static MARKS: Mutex<Vec<(&'static str, Instant)>> = Mutex::new(Vec::new());

/// Whether marks are recorded (`TESSERA_TRACE_HOST=1`).
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var("TESSERA_TRACE_HOST").is_ok_and(|v| v == "1");
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
        s => s == 2,
    }
}

/// Marks kept at most: a process tracing statements that nobody [`take`]s (a shell or
/// server started with the variable set) drops the oldest statements' marks rather than
/// growing without end.
const MAX_MARKS: usize = 1 << 16;

/// Records that the step `what` is reached now.
pub fn mark(what: &'static str) {
    if enabled() {
        let now = Instant::now();
        if let Ok(mut m) = MARKS.lock() {
            if m.len() >= MAX_MARKS {
                m.clear();
            }
            m.push((what, now));
        }
    }
}

/// The marks recorded since the last call, in order, emptied.
pub fn take() -> Vec<(&'static str, Instant)> {
    MARKS.lock().map(|mut m| std::mem::take(&mut *m)).unwrap_or_default()
}

/// `marks` as one line: each step with its µs after the first.
pub fn render(marks: &[(&'static str, Instant)]) -> String {
    let Some(&(_, start)) = marks.first() else {
        return String::new();
    };
    marks.iter().map(|(what, at)| format!("{what}@{:.1}", at.duration_since(start).as_secs_f64() * 1e6)).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_each_step_after_the_first() {
        let t0 = Instant::now();
        let t1 = t0 + std::time::Duration::from_micros(15);
        assert_eq!(render(&[("a", t0), ("b", t1)]), "a@0.0 b@15.0");
        assert_eq!(render(&[]), "");
    }
}
