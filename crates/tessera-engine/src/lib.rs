//! The SQL front end of Tessera: sessions over an embedded store, on DataFusion.
//!
//! Entry point of this crate is [`Session`]: open a data directory, run SQL, get Arrow
//! batches back. DataFusion parses, binds and optimizes every statement; Tessera runs the
//! statements that write the store ([`session`]), parses `COPY … FROM` itself ([`copy`]),
//! exposes the store through DataFusion's catalog ([`catalog`]) and adds the
//! `read_parquet`/`read_csv` table functions ([`table_functions`]).
#![warn(missing_docs)]

pub mod catalog;
pub mod checked;
pub mod copy;
pub mod error;
pub mod options;
pub mod session;
pub mod split;
pub mod table_functions;

pub use session::{QueryOutput, Session};
pub use tessera_plan::Target;
pub use split::{is_complete, split_statements};
