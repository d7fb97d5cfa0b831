//! Presenting a [`BenchReport`]: a table for the terminal, JSON for the record, and an
//! SVG bar chart (engines side by side per query, log scale).

use std::path::Path;

use comfy_table::{CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use plotters::prelude::*;
use tessera_common::{Result, TesseraError};

use crate::bench::{BenchReport, Check, EngineKind, QueryRun};

fn engines(report: &BenchReport) -> Vec<EngineKind> {
    let mut out: Vec<EngineKind> = Vec::new();
    for r in &report.results {
        if !out.contains(&r.engine) {
            out.push(r.engine);
        }
    }
    out
}

fn queries(report: &BenchReport) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &report.results {
        if !out.contains(&r.query) {
            out.push(r.query.clone());
        }
    }
    out
}

fn find<'a>(report: &'a BenchReport, query: &str, engine: EngineKind) -> Option<&'a QueryRun> {
    report.results.iter().find(|r| r.query == query && r.engine == engine)
}

fn mark(check: &Check) -> &'static str {
    match check {
        Check::Pass => "✓",
        Check::Fail(_) => "✗",
        Check::Unchecked(_) => "–",
    }
}

/// The terminal table: per query, rows and per engine median (min–max) ms and check;
/// with several engines, the ratio of each peer's median to Tessera's.
pub fn table(report: &BenchReport) -> String {
    let engines = engines(report);
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["query".to_string(), "rows".to_string()];
    for e in &engines {
        header.push(format!("{} median ms (min–max)", e.name()));
        header.push("check".to_string());
    }
    let peers: Vec<EngineKind> = engines.iter().copied().filter(|e| *e != EngineKind::Tessera).collect();
    let with_ratio = engines.contains(&EngineKind::Tessera) && !peers.is_empty();
    if with_ratio {
        for p in &peers {
            header.push(format!("{} / tessera", p.name()));
        }
    }
    // Tessera on a GPU: its kernels beside the bandwidth model (bytes read ÷ the read
    // bandwidth measured in the same run).
    let with_gpu = report.results.iter().any(|r| r.gpu.is_some());
    if with_gpu {
        header.extend(["GPU kernels ms".to_string(), "model ms".to_string(), "kernels / model".to_string()]);
    }
    let (mut kernel_total, mut model_total) = (0.0f64, 0.0f64);
    t.set_header(header);
    let mut totals = vec![0.0f64; engines.len()];
    for q in queries(report) {
        let rows = engines.iter().find_map(|e| find(report, &q, *e)).map_or(0, |r| r.rows);
        let mut row = vec![q.clone(), rows.to_string()];
        for (i, e) in engines.iter().enumerate() {
            match find(report, &q, *e) {
                Some(r) if r.error.is_none() => {
                    let (lo, hi) = r.warm_ms.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                    let median = r.median_ms();
                    totals[i] += median;
                    row.push(if r.warm_ms.is_empty() { format!("{median:.1}") } else { format!("{median:.1} ({lo:.1}–{hi:.1})") });
                    row.push(mark(&r.check).to_string());
                }
                Some(r) => {
                    row.push("error".into());
                    row.push(mark(&r.check).to_string());
                }
                None => {
                    row.push("".into());
                    row.push("".into());
                }
            }
        }
        if with_ratio {
            let tessera = find(report, &q, EngineKind::Tessera).map(|r| r.median_ms());
            for p in &peers {
                let peer = find(report, &q, *p).filter(|r| r.error.is_none()).map(|r| r.median_ms());
                row.push(match (tessera, peer) {
                    (Some(t), Some(p)) if t > 0.0 => format!("{:.2}×", p / t),
                    _ => String::new(),
                });
            }
        }
        if with_gpu {
            match find(report, &q, EngineKind::Tessera).and_then(|r| r.gpu.as_ref()) {
                Some(g) => {
                    kernel_total += g.kernel_ms;
                    model_total += g.model_ms;
                    row.push(format!("{:.3}", g.kernel_ms));
                    row.push(format!("{:.3}", g.model_ms));
                    row.push(format!("{:.2}×", g.kernel_ms / g.model_ms));
                }
                None => row.extend([String::new(), String::new(), String::new()]),
            }
        }
        t.add_row(row);
    }
    let mut total = vec!["total".to_string(), String::new()];
    for v in &totals {
        total.push(format!("{v:.1}"));
        total.push(String::new());
    }
    if with_gpu {
        if with_ratio {
            total.extend(peers.iter().map(|_| String::new()));
        }
        total.push(format!("{kernel_total:.3}"));
        total.push(format!("{model_total:.3}"));
        total.push(if model_total > 0.0 { format!("{:.2}×", kernel_total / model_total) } else { String::new() });
    }
    t.add_row(total);
    let columns = t.column_count();
    for i in 1..columns {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = format!(
        "{} SF {} — {} warm runs after 1 cold, {} threads, {} ({} cores){}\n{t}",
        report.suite,
        report.sf,
        report.runs,
        report.threads,
        report.machine.cpu,
        report.machine.cores,
        report.machine.gpu.as_ref().map(|g| format!(", GPU {g}")).unwrap_or_default()
    );
    if let Some(g) = report.results.iter().find_map(|r| r.gpu.as_ref()) {
        out.push_str(&format!("\nmodel: bytes the kernels read ÷ {:.0} GB/s, the read bandwidth a copy kernel measured in this run", g.peak_gbs));
    }
    for r in &report.results {
        if let Check::Fail(why) = &r.check {
            out.push_str(&format!("\n✗ {} on {}: {why}", r.query, r.engine.name()));
        }
    }
    for n in &report.notes {
        out.push_str(&format!("\nnote: {n}"));
    }
    out
}

/// Writes the report as pretty JSON.
pub fn write_json(report: &BenchReport, path: &Path) -> Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(|e| TesseraError::Internal(e.to_string()))?;
    std::fs::write(path, text).map_err(|e| TesseraError::io(format!("writing {}", path.display()), e))
}

/// Draws a bar chart of warm median times per query, engines side by side, log scale.
pub fn write_svg(report: &BenchReport, path: &Path) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| TesseraError::Execution(format!("drawing {}: {e}", path.display()));
    let engines = engines(report);
    let queries = queries(report);
    let values: Vec<f64> = report.results.iter().filter(|r| r.error.is_none()).map(|r| r.median_ms().max(1e-3)).collect();
    let (lo, hi) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let (lo, hi) = if values.is_empty() { (0.1, 1.0) } else { (lo / 2.0, hi * 2.0) };
    let width = (120 + 60 * queries.len() as u32).max(640);
    let root = SVGBackend::new(path, (width, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let title = format!(
        "{} SF {} — warm median ms ({}{})",
        report.suite,
        report.sf,
        report.machine.cpu,
        report.machine.gpu.as_ref().map(|g| format!(", {g}")).unwrap_or_default()
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..queries.len() as f64, (lo..hi).log_scale())
        .map_err(|e| err(&e))?;
    let names = queries.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(queries.len() + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.26 { names.get(i).cloned().unwrap_or_default() } else { String::new() }
        })
        .y_desc("ms (log)")
        .draw()
        .map_err(|e| err(&e))?;
    let palette = [RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(44, 160, 44)];
    let slot = 0.8 / engines.len().max(1) as f64;
    for (k, engine) in engines.iter().enumerate() {
        let color = palette[k % palette.len()];
        let bars: Vec<_> = queries
            .iter()
            .enumerate()
            .filter_map(|(i, q)| find(report, q, *engine).filter(|r| r.error.is_none()).map(|r| (i, r.median_ms().max(1e-3))))
            .map(|(i, v)| {
                let x0 = i as f64 + 0.1 + k as f64 * slot;
                Rectangle::new([(x0, lo), (x0 + slot * 0.9, v)], color.filled())
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| err(&e))?
            .label(engine.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
