//! One statement of a connection (PostgreSQL or Flight SQL) running on a blocking thread
//! of the runtime: the CPU backend and GPU launches block their thread, so a statement
//! never runs on the threads serving the protocols. It stops at its next await point
//! once its [`StopOnDrop`] is dropped (a cancel request, a timeout, a client gone); a
//! write stopped that way commits nothing.

use std::sync::Arc;

use bytes::Bytes;
use datafusion::common::ScalarValue;
use tessera_common::Result;
use tessera_engine::copy::CopyFrom;
use tessera_engine::{QueryOutput, Session};
use tokio::task::JoinHandle;

/// Tells a statement's thread to stop when dropped.
pub(crate) struct StopOnDrop(tokio::sync::watch::Sender<bool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(true);
    }
}

/// A running statement: its thread (None once stopped before it finished) and the
/// guard that stops it.
pub(crate) struct Running {
    pub task: JoinHandle<Option<Result<QueryOutput>>>,
    pub stop: StopOnDrop,
}

/// Starts `sql` (with `params` bound, for a prepared statement) in `session`.
pub(crate) fn spawn(session: Arc<Session>, sql: String, params: Option<Vec<ScalarValue>>) -> Running {
    run(async move {
        match params {
            Some(p) => session.execute_with_params(&sql, p).await,
            None => session.execute(&sql).await,
        }
    })
}

/// Starts loading `data`, the rows a client sent for `copy` (`COPY … FROM STDIN`).
pub(crate) fn spawn_copy_in(session: Arc<Session>, copy: CopyFrom, data: Bytes) -> Running {
    run(async move { session.copy_from_stdin(&copy, &data).await })
}

/// Runs `statement` on a blocking thread until it ends or is stopped.
fn run(statement: impl Future<Output = Result<QueryOutput>> + Send + 'static) -> Running {
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let runtime = tokio::runtime::Handle::current();
    let task = tokio::task::spawn_blocking(move || {
        runtime.block_on(async move {
            tokio::select! {
                r = statement => Some(r),
                _ = stopped.wait_for(|s| *s) => None,
            }
        })
    });
    Running { task, stop: StopOnDrop(stop) }
}
