//! Shared vocabulary of every Tessera crate: the error type, split by who is at fault.
//!
//! Entry point of this crate is [`TesseraError`] with its [`Result`] alias and the
//! `plan_err!`, `exec_err!`, `not_impl_err!`, `resources_err!` and `internal_err!` macros.
//! Modelled on DataFusion's `DataFusionError`: the variant tells the user whether the
//! statement was wrong (plan), the data or environment was (execution, I/O), the engine
//! cannot do it yet (not implemented), it ran out of memory (resources), or it is a bug
//! in Tessera (internal).
#![warn(missing_docs)]

use std::fmt;

pub mod trace;

/// Result alias used throughout Tessera.
pub type Result<T, E = TesseraError> = std::result::Result<T, E>;

/// Every error Tessera reports, split by cause.
#[derive(Debug)]
pub enum TesseraError {
    /// The statement is wrong: unknown table or column, type mismatch, bad syntax.
    Plan(String),
    /// Running the statement failed because of the data or the environment
    /// (malformed CSV, division by zero, overflow, a missing file).
    Execution(String),
    /// The statement is valid SQL that Tessera does not support yet.
    NotImplemented(String),
    /// A resource limit was hit (memory budget, GPU memory).
    ResourcesExhausted(String),
    /// A bug in Tessera: an invariant did not hold.
    Internal(String),
    /// A GPU run gave up and the statement runs again on the CPU backend, which is exact
    /// and reports the error if there is one (a kernel raised a flag: arithmetic
    /// overflow, or build keys the plan did not expect). Never reaches the user.
    RetryOnCpu(String),
    /// A table changed (another session committed a write) between planning the query
    /// and reading the table: the statement is planned and run again. Never reaches the
    /// user unless it keeps happening.
    StalePlan(String),
    /// An operating-system I/O error, with what was being done.
    Io {
        /// What Tessera was doing, e.g. "writing manifest /data/t/manifest.json".
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An error raised inside DataFusion or arrow, already classified there.
    External(Box<dyn std::error::Error + Send + Sync>),
}

impl TesseraError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        TesseraError::Io { context: context.into(), source }
    }

    /// Adds context in front of the message, keeping the variant.
    pub fn context(self, what: impl fmt::Display) -> Self {
        match self {
            TesseraError::Plan(m) => TesseraError::Plan(format!("{what}: {m}")),
            TesseraError::Execution(m) => TesseraError::Execution(format!("{what}: {m}")),
            TesseraError::NotImplemented(m) => TesseraError::NotImplemented(format!("{what}: {m}")),
            TesseraError::ResourcesExhausted(m) => {
                TesseraError::ResourcesExhausted(format!("{what}: {m}"))
            }
            TesseraError::Internal(m) => TesseraError::Internal(format!("{what}: {m}")),
            TesseraError::RetryOnCpu(m) => TesseraError::RetryOnCpu(format!("{what}: {m}")),
            TesseraError::StalePlan(m) => TesseraError::StalePlan(format!("{what}: {m}")),
            TesseraError::Io { context, source } => {
                TesseraError::Io { context: format!("{what}: {context}"), source }
            }
            TesseraError::External(e) => TesseraError::Execution(format!("{what}: {e}")),
        }
    }
}

impl fmt::Display for TesseraError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TesseraError::Plan(m) => write!(f, "Error during planning: {m}"),
            TesseraError::Execution(m) => write!(f, "Execution error: {m}"),
            TesseraError::NotImplemented(m) => write!(f, "Not implemented: {m}"),
            TesseraError::ResourcesExhausted(m) => write!(f, "Resources exhausted: {m}"),
            TesseraError::Internal(m) => write!(
                f,
                "Internal error: {m}. This is a bug in Tessera; please report it"
            ),
            TesseraError::RetryOnCpu(m) => write!(f, "Retry on the CPU: {m}"),
            TesseraError::StalePlan(m) => write!(f, "Tables changed while the query was planned: {m}"),
            TesseraError::Io { context, source } => write!(f, "I/O error while {context}: {source}"),
            TesseraError::External(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TesseraError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TesseraError::Io { source, .. } => Some(source),
            TesseraError::External(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

/// Returns `Err(TesseraError::Plan(format!(...)))`.
#[macro_export]
macro_rules! plan_err {
    ($($arg:tt)*) => { Err($crate::TesseraError::Plan(format!($($arg)*))) };
}

/// Returns `Err(TesseraError::Execution(format!(...)))`.
#[macro_export]
macro_rules! exec_err {
    ($($arg:tt)*) => { Err($crate::TesseraError::Execution(format!($($arg)*))) };
}

/// Returns `Err(TesseraError::NotImplemented(format!(...)))`.
#[macro_export]
macro_rules! not_impl_err {
    ($($arg:tt)*) => { Err($crate::TesseraError::NotImplemented(format!($($arg)*))) };
}

/// Returns `Err(TesseraError::ResourcesExhausted(format!(...)))`.
#[macro_export]
macro_rules! resources_err {
    ($($arg:tt)*) => { Err($crate::TesseraError::ResourcesExhausted(format!($($arg)*))) };
}

/// Returns `Err(TesseraError::Internal(format!(...)))`.
#[macro_export]
macro_rules! internal_err {
    ($($arg:tt)*) => { Err($crate::TesseraError::Internal(format!($($arg)*))) };
}

/// A map from text keys to values shared between threads, cleared whole when it reaches
/// its capacity (what is repeated comes back quickly; nothing is evicted one by one).
/// Used by the caches of plans (per statement) and of GPU placements (per plan).
#[derive(Debug)]
pub struct TextCache<V> {
    entries: std::sync::Mutex<std::collections::HashMap<String, V>>,
    capacity: usize,
}

impl<V: Clone> TextCache<V> {
    /// An empty cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        TextCache { entries: std::sync::Mutex::new(std::collections::HashMap::new()), capacity }
    }

    /// The value under `key`, if any.
    pub fn get(&self, key: &str) -> Option<V> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    /// Keeps `value` under `key`, first clearing the cache when it is full.
    pub fn insert(&self, key: String, value: V) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= self.capacity {
                entries.clear();
            }
            entries.insert(key, value);
        }
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TextCache;

    #[test]
    fn text_cache_clears_when_full() {
        let cache = TextCache::new(2);
        cache.insert("a".into(), 1);
        cache.insert("b".into(), 2);
        assert_eq!((cache.get("a"), cache.get("b"), cache.get("c")), (Some(1), Some(2), None));
        // The third entry finds the cache full: it alone remains.
        cache.insert("c".into(), 3);
        assert_eq!((cache.get("a"), cache.get("b"), cache.get("c")), (None, None, Some(3)));
        cache.clear();
        assert_eq!(cache.get("c"), None);
    }

    use super::*;

    #[test]
    fn messages_name_the_cause() {
        let e: Result<()> = plan_err!("table '{}' not found", "t");
        assert_eq!(e.unwrap_err().to_string(), "Error during planning: table 't' not found");
        let e: Result<()> = internal_err!("bad state");
        assert!(e.unwrap_err().to_string().contains("please report it"));
    }

    #[test]
    fn context_keeps_the_variant() {
        let e = TesseraError::Execution("bad number".into()).context("file a.csv line 3");
        assert!(matches!(e, TesseraError::Execution(_)));
        assert_eq!(e.to_string(), "Execution error: file a.csv line 3: bad number");
    }
}
