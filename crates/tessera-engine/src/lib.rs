//! The SQL front end of Tessera: sessions over an embedded store, on DataFusion.
//!
//! Entry points of this crate are [`Database`] (a data directory opened by this process)
//! and its [`Session`]s (connections): run SQL, get Arrow batches back. `Session::open`
//! opens a database with one session. DataFusion parses, binds and optimizes every statement; Tessera runs the
//! statements that write the store ([`session`]), parses `COPY … FROM` (a file, or
//! rows a client sends) and `COPY … TO STDOUT` itself ([`copy`]), exposes the store
//! through DataFusion's catalog ([`catalog`]) and adds the `read_parquet`/`read_csv`
//! table functions ([`table_functions`]). For clients of the
//! PostgreSQL protocol it has PostgreSQL's system catalogs ([`pg_catalog`]) and reads
//! the PostgreSQL-only spellings of their catalog queries ([`pg_compat`]).
#![warn(missing_docs)]

pub mod catalog;
pub mod checked;
pub mod copy;
mod copy_text;
pub mod distinct;
pub mod error;
pub mod options;
pub mod pg_catalog;
pub mod pg_compat;
pub mod session;
pub mod split;
pub mod table_functions;

pub use session::{Database, Description, QueryOutput, Session};
pub use tessera_plan::Target;
pub use split::{is_complete, split_statements};
