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
    }
}

impl ConfigExtension for TesseraOptions {
    const PREFIX: &'static str = "tessera";
}
