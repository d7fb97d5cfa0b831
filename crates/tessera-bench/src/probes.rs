//! `tessera bench probes`: a probe of SSB q3.1's shape with its membership bitmaps in
//! global memory or copied into shared memory, with blocks of 128 to 1024 threads (the
//! study itself is `tessera_cuda::probe_study`). Prints a table and optionally writes JSON.

use std::path::Path;

use comfy_table::Table;
use serde_json::json;
use tessera_common::{Result, TesseraError};
use tessera_cuda::probe_study::{self, ProbeStudy};
use tessera_cuda::{GpuDevice, KernelCache};

/// Rows probed by default: SSB SF 20's lineorder.
pub const DEFAULT_ROWS: usize = 119_994_608;

/// Timed runs per variant by default.
pub const DEFAULT_RUNS: usize = 10;

/// Measures every variant; fails without a GPU.
pub fn run(rows: usize, runs: usize) -> Result<ProbeStudy> {
    let Some(device) = GpuDevice::get()? else {
        return Err(TesseraError::Execution("`tessera bench probes` needs a GPU".into()));
    };
    let cache = KernelCache::new(None);
    probe_study::measure(&device, &cache, rows, runs)
}

/// The study as a table: each variant's blocks an SM, median time and the rate at which
/// it read the keys every row loads.
pub fn table(study: &ProbeStudy) -> String {
    let mut t = Table::new();
    t.set_header(["bitmaps", "threads a block", "shared memory a block (bytes)", "blocks an SM", "probe (ms, median)", "keys read (GB/s)"]);
    for v in &study.variants {
        let rate = if v.median_ms > 0.0 { study.key_bytes as f64 / v.median_ms / 1e6 } else { 0.0 };
        t.add_row([v.placement.name().to_string(), v.threads.to_string(), v.placement.shared_bytes().to_string(), v.blocks_per_sm.to_string(), format!("{:.3}", v.median_ms), format!("{rate:.0}")]);
    }
    format!(
        "{t}\n{} rows, {} passing all three tests; medians of {} runs; every answer checked against the host's",
        study.rows,
        study.passing,
        study.variants.first().map_or(0, |v| v.runs_ms.len())
    )
}

/// Writes the study as JSON, with the device's name.
pub fn write_json(study: &ProbeStudy, path: &Path) -> Result<()> {
    let variants: Vec<_> = study
        .variants
        .iter()
        .map(|v| {
            json!({
                "bitmaps": v.placement.name(),
                "threads": v.threads,
                "shared_bytes": v.placement.shared_bytes(),
                "blocks_per_sm": v.blocks_per_sm,
                "median_ms": v.median_ms,
                "runs_ms": v.runs_ms,
            })
        })
        .collect();
    crate::joins::write_study(path, json!({ "rows": study.rows, "passing": study.passing, "key_bytes": study.key_bytes, "items_per_thread": probe_study::ITEMS, "variants": variants }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_cuda::probe_study::{Placement, Variant};

    /// The table shows each variant's placement, shape and time, and the rows checked.
    #[test]
    fn the_table_shows_every_variant() {
        let v = |placement, threads, blocks_per_sm, median_ms| Variant { placement, threads, blocks_per_sm, median_ms, runs_ms: vec![median_ms; 3] };
        let study = ProbeStudy { rows: 1_000_000, passing: 34_000, key_bytes: 8_000_000, variants: vec![v(Placement::Global, 128, 12, 0.5), v(Placement::SharedCustomer, 512, 3, 0.25)] };
        let text = table(&study);
        for want in ["global", "customer in shared", "75000", "0.500", "0.250", "16", "32", "1000000 rows, 34000 passing", "medians of 3 runs"] {
            assert!(text.contains(want), "{want} missing from\n{text}");
        }
    }
}
