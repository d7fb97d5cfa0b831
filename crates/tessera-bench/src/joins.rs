//! `tessera bench joins`: the no-partition hash join of generated pipelines against
//! radix-partitioned joins, over build sides from L2-sized to far larger (the study itself
//! is `tessera_cuda::join_study`). Prints a table and optionally writes JSON.

use std::path::Path;

use comfy_table::Table;
use serde_json::json;
use tessera_common::{Result, TesseraError};
use tessera_cuda::join_study::{self, JoinStudy, Timing};
use tessera_cuda::{GpuDevice, KernelCache};

/// Build sides measured by default: 2^18 rows (a 6 MiB table, inside L2) to 2^26 (1.5 GiB).
pub const DEFAULT_BUILD_ROWS: [usize; 5] = [1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26];
/// Probe rows by default: 2^28 (3 GiB of keys and payloads).
pub const DEFAULT_PROBE_ROWS: usize = 1 << 28;

/// Measures every build size (`runs` warm runs each); fails without a GPU.
pub fn run(build_rows: &[usize], probe_rows: usize, runs: usize) -> Result<Vec<JoinStudy>> {
    let Some(device) = GpuDevice::get()? else {
        return Err(TesseraError::Execution("`tessera bench joins` needs a GPU".into()));
    };
    let kernels = KernelCache::new(None);
    build_rows.iter().map(|&n| join_study::measure(&device, &kernels, n, probe_rows, runs.max(1))).collect()
}

/// The studies as a table: each join's median times, and the best radix join against the
/// no-partition one.
pub fn table(studies: &[JoinStudy]) -> String {
    let mut t = Table::new();
    t.set_header(["build rows", "table", "no partition: build + probe", "radix: passes", "partition + join", "radix / no partition"]);
    for s in studies {
        let np = &s.no_partition;
        for (i, r) in s.radix.iter().enumerate() {
            let first = i == 0;
            t.add_row([
                if first { s.build_rows.to_string() } else { String::new() },
                if first { format!("{:.1} MiB ({:.1}× L2)", np.table_bytes as f64 / 1048576.0, np.table_bytes as f64 / s.l2_bytes.max(1) as f64) } else { String::new() },
                if first { format!("{:.3} + {:.3} = {:.3} ms", np.build.median_ms, np.probe.median_ms, np.total.median_ms) } else { String::new() },
                format!("{:?}", r.pass_bits),
                format!("{:.3} + {:.3} = {:.3} ms", r.partition.median_ms, r.join.median_ms, r.total.median_ms),
                format!("{:.2}×", r.total.median_ms / np.total.median_ms),
            ]);
        }
    }
    t.to_string()
}

fn timing(t: &Timing) -> serde_json::Value {
    json!({ "median_ms": t.median_ms, "runs_ms": t.runs_ms })
}

/// Writes the studies as JSON, with the device's name.
pub fn write_json(studies: &[JoinStudy], path: &Path) -> Result<()> {
    let rows: Vec<_> = studies
        .iter()
        .map(|s| {
            json!({
                "build_rows": s.build_rows,
                "probe_rows": s.probe_rows,
                "l2_bytes": s.l2_bytes,
                "no_partition": {
                    "table_bytes": s.no_partition.table_bytes,
                    "build": timing(&s.no_partition.build),
                    "probe": timing(&s.no_partition.probe),
                    "total": timing(&s.no_partition.total),
                },
                "radix": s.radix.iter().map(|r| json!({
                    "pass_bits": r.pass_bits,
                    "partition": timing(&r.partition),
                    "join": timing(&r.join),
                    "total": timing(&r.total),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    write_study(path, json!({ "studies": rows }))
}

/// Writes a GPU study's figures (`body`, an object) as JSON with the device's name added:
/// what `tessera bench joins` and `tessera bench launches` write.
pub(crate) fn write_study(path: &Path, mut body: serde_json::Value) -> Result<()> {
    let device = GpuDevice::get().ok().flatten().map(|d| d.name().to_string()).unwrap_or_default();
    if let Some(fields) = body.as_object_mut() {
        fields.insert("device".into(), json!(device));
    }
    let text = serde_json::to_string_pretty(&body).map_err(|e| TesseraError::Internal(e.to_string()))?;
    std::fs::write(path, text).map_err(|source| TesseraError::Io { context: format!("writing {}", path.display()), source })
}
