//! Tessera's session settings, set with `SET tessera.<name> = <value>`.

use datafusion::common::config::ConfigExtension;
use datafusion::common::extensions_options;

extensions_options! {
    /// Settings under the `tessera.` prefix.
    pub struct TesseraOptions {
        /// Who executes queries: `pipelines` (Tessera's pipeline IR on its backends,
        /// with DataFusion for the parts the IR cannot express) or `datafusion` (plain
        /// DataFusion, the peer the pipelines are verified against).
        pub engine: String, default = "pipelines".to_string()
        /// Where pipelines run: `auto` (the GPU when present, supported and the input is
        /// large enough), `gpu` (wherever supported) or `cpu`.
        pub device: String, default = "auto".to_string()
        /// The most GPU memory Tessera may use (columns cached on the GPU, hash tables,
        /// results), e.g. `'40GB'`, `'512MiB'`; empty: 90% of the memory free when the
        /// GPU was opened. Cached columns no running query reads are evicted, least
        /// recently used first, to stay under it. A query reserves what it needs besides
        /// the cached columns it reads before it starts, and waits (up to 5 s) while
        /// running queries hold the room; one that cannot fit even alone runs on the CPU.
        pub gpu_memory_limit: String, default = String::new()
        /// Which stored tables' integer columns go up to the GPU compact (bit-packed, in
        /// runs where those pay: about half their plain bytes, SSB SF 100's 0.49×, for
        /// kernels about 16% slower on an H200) rather than narrowed to whole bytes
        /// (0.78×): `auto` (a table whose columns would take more than half of
        /// `gpu_memory_limit` plain), `always` or `never`.
        pub gpu_compact_tables: String, default = "auto".to_string()
        /// How query literals reach GPU kernels: `parameters` (passed at launch: queries
        /// differing only in constants share one compiled kernel) or `inline` (written
        /// into the source: one NVRTC compile, ~70 ms, per distinct query text). On an
        /// H200 the 13 SSB kernels ran equally fast both ways (23.4 vs 23.5 ms at SF 20),
        /// so parameters are the default.
        pub kernel_literals: String, default = "parameters".to_string()
        /// Rows each GPU thread holds per tile (1 to 16): how many loads it keeps in
        /// flight. 0 (the default) chooses per pipeline: 4 with at most one probe, else 2
        /// (measured, see `tessera_cuda::codegen::ITEMS_PER_THREAD`).
        pub gpu_items_per_thread: u32, default = 0
        /// Which device plans are shaped for (`tessera_plan::Target`): `auto` (the GPU
        /// when there is one and `device` is not `cpu`), `gpu` or `cpu`. Either backend
        /// runs either shape; `gpu` on a machine without one tests that.
        pub plan_for: String, default = "auto".to_string()
        /// String columns written by COPY, INSERT or CREATE TABLE AS with at most this
        /// many distinct values are dictionary-encoded when loaded (GPU kernels compare,
        /// group and join on the codes; other strings only take LIKE there). 0: the
        /// store's default and largest value, `tessera_storage::DICTIONARY_MAX_DISTINCT`
        /// (2^20); a larger value is an error at the next write.
        pub dictionary_max_distinct: u64, default = 0
    }
}

impl ConfigExtension for TesseraOptions {
    const PREFIX: &'static str = "tessera";
}

/// Whether `options` say `SET tessera.engine = 'datafusion'`: plain DataFusion, which
/// Tessera's own rewrites (`checked`, `distinct`) leave alone.
pub fn plain_datafusion(options: &datafusion::common::config::ConfigOptions) -> bool {
    options.extensions.get::<TesseraOptions>().is_some_and(|o| o.engine.eq_ignore_ascii_case("datafusion"))
}

/// Parses a byte size: a number with an optional unit (`B`, `KB`/`MB`/`GB`/`TB` as powers
/// of 1000, `KiB`/`MiB`/`GiB`/`TiB` as powers of 1024; case-insensitive, spaces allowed).
pub fn parse_bytes(s: &str) -> Option<usize> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let value: f64 = num.parse().ok()?;
    let mul: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let bytes = value * mul;
    (bytes.is_finite() && bytes >= 0.0 && bytes < usize::MAX as f64).then_some(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn byte_sizes_parse_with_units() {
        assert_eq!(parse_bytes("40GB"), Some(40_000_000_000));
        assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("1.5kb"), Some(1500));
        assert_eq!(parse_bytes("123"), Some(123));
        assert_eq!(parse_bytes("2 gib"), Some(2 << 30));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("10 XB"), None);
        assert_eq!(parse_bytes(""), None);
    }
}
