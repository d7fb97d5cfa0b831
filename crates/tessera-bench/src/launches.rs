//! `tessera bench launches`: the host time of queueing a query's kernels one launch at a
//! time, against one CUDA graph launch (the study itself is `tessera_cuda::launch_study`).
//! Prints a table and optionally writes JSON.

use std::path::Path;

use comfy_table::Table;
use serde_json::json;
use tessera_common::{Result, TesseraError};
use tessera_cuda::launch_study::{self, LaunchStudy, Way};
use tessera_cuda::{GpuDevice, KernelCache};

/// Kernels per query measured by default: a lone scan, SSB q1.x's two pipelines, q4.x's
/// five, and a TPC-H query's eleven.
pub const DEFAULT_KERNELS: [usize; 4] = [1, 2, 5, 11];

/// Timed queries per way by default.
pub const DEFAULT_RUNS: usize = 500;

/// Measures each count of kernels a query; fails without a GPU.
pub fn run(kernels: &[usize], runs: usize) -> Result<Vec<LaunchStudy>> {
    let Some(device) = GpuDevice::get()? else {
        return Err(TesseraError::Execution("`tessera bench launches` needs a GPU".into()));
    };
    let cache = KernelCache::new(None);
    kernels.iter().map(|&k| launch_study::measure(&device, &cache, k, runs)).collect()
}

fn cell(w: &Way) -> String {
    format!("{:.1} / {:.1}", w.queued_us, w.done_us)
}

/// The studies as a table: each way's median host time to queue a query and to have it
/// done, µs.
pub fn table(studies: &[LaunchStudy]) -> String {
    let mut t = Table::new();
    t.set_header(["kernels a query", "events + launches (µs queued / done)", "launches", "one graph", "capture + graph", "a timed graph a kernel", "launches + 1 copy back", "launches + 3 copies back", "capture once"]);
    for s in studies {
        t.add_row([
            s.kernels.to_string(),
            cell(&s.events),
            cell(&s.launches),
            cell(&s.graph),
            cell(&s.capture),
            cell(&s.timed_graphs),
            cell(&s.one_copy),
            cell(&s.three_copies),
            format!("{:.1}", s.instantiate_us),
        ]);
    }
    format!("{t}\nmedians of {} queries a way; {} 64-bit parameters a kernel", studies.first().map_or(0, |s| s.runs), launch_study::PARAMS)
}

fn way(w: &Way) -> serde_json::Value {
    json!({ "queued_us": w.queued_us, "done_us": w.done_us })
}

/// Writes the studies as JSON, with the device's name.
pub fn write_json(studies: &[LaunchStudy], path: &Path) -> Result<()> {
    let rows: Vec<_> = studies
        .iter()
        .map(|s| {
            json!({
                "kernels": s.kernels,
                "runs": s.runs,
                "events": way(&s.events),
                "launches": way(&s.launches),
                "graph": way(&s.graph),
                "capture": way(&s.capture),
                "timed_graphs": way(&s.timed_graphs),
                "one_copy": way(&s.one_copy),
                "three_copies": way(&s.three_copies),
                "instantiate_us": s.instantiate_us,
            })
        })
        .collect();
    crate::joins::write_study(path, json!({ "params": launch_study::PARAMS, "studies": rows }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table shows each count of kernels with every way's two times.
    #[test]
    fn the_table_shows_every_way() {
        let w = |q, d| Way { queued_us: q, done_us: d };
        let s = LaunchStudy { kernels: 5, runs: 500, events: w(40.0, 60.0), launches: w(20.0, 41.0), graph: w(6.0, 30.0), capture: w(90.0, 120.0), timed_graphs: w(3.0, 25.0), one_copy: w(21.0, 45.0), three_copies: w(24.0, 52.0), instantiate_us: 80.0 };
        let text = table(&[s]);
        for want in ["kernels a query", "40.0 / 60.0", "20.0 / 41.0", "6.0 / 30.0", "90.0 / 120.0", "3.0 / 25.0", "21.0 / 45.0", "24.0 / 52.0", "80.0", "medians of 500 queries"] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
    }
}
