//! COPY over the PostgreSQL protocol: `COPY table [(columns)] FROM STDIN` (psql's
//! `\copy … FROM`, drivers' `copy_in`) and `COPY table | (query) TO STDOUT` (psql's
//! `\copy … TO`, drivers' `copy_out`), in PostgreSQL's text and CSV formats.
//!
//! - FROM STDIN: the server answers CopyInResponse, keeps the CopyData the client sends
//!   (at most the server's `--max-result-bytes`; more is refused with SQLSTATE 54000 and
//!   nothing is kept), and at CopyDone loads them into the table in one store
//!   transaction through the engine's COPY reader ([`tessera_engine::copy`]): a value
//!   that does not parse, a CopyFail from the client or a client gone before CopyDone
//!   leave the table as it was. The tag is `COPY n`.
//! - TO STDOUT: the query runs as any other (cancel, `statement_timeout`, the result
//!   limit), then its rows go out as CopyData, one a row, each value as the text
//!   format of the protocol writes it (exact decimals, ISO dates), escaped or quoted
//!   for the COPY format.
//! - The binary format is refused (SQLSTATE 0A000). A header line travels with the
//!   first row, so that pgwire's count of CopyData messages (the `COPY n` tag) is the
//!   count of rows; a header with no rows after it is counted as one.

// An ErrorInfo (all of PostgreSQL's error fields) is large, but one is made per
// statement, never per row.
#![allow(clippy::result_large_err)]

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use datafusion::arrow::array::RecordBatch;
use futures::{Sink, SinkExt, StreamExt, stream};
use pgwire::api::ClientInfo;
use pgwire::api::copy::CopyHandler;
use pgwire::api::results::{CopyResponse, Response, Tag};
use pgwire::error::{ErrorInfo, PgWireError, PgWireResult};
use pgwire::messages::PgWireBackendMessage;
use pgwire::messages::copy::{CopyData, CopyDone, CopyFail};
use pgwire::messages::response::TransactionStatus;
use tessera_common::Result;
use tessera_engine::QueryOutput;
use tessera_engine::copy::{CopyFrom, CopyInput, CopyTo, parse_copy_from, parse_copy_to_stdout};

use crate::errors::{self, error, from_tessera, user_error};
use crate::handler::{Backend, Connection, connection, row_count};
use crate::pgtypes::BatchEncoder;

/// The format code of CopyInResponse and CopyOutResponse: text (CSV is text too).
const TEXT_FORMAT: i8 = 0;

/// A COPY the server runs over the protocol.
pub(crate) enum WireCopy {
    /// `COPY … FROM STDIN`.
    In(CopyFrom),
    /// `COPY … TO STDOUT`.
    Out(CopyTo),
}

/// `sql` as a COPY over the protocol, or None (any other statement, COPY with a file
/// included).
pub(crate) fn parse(sql: &str) -> Result<Option<WireCopy>> {
    if let Some(copy) = parse_copy_from(sql)? {
        return Ok((copy.input == CopyInput::Stdin).then_some(WireCopy::In(copy)));
    }
    Ok(parse_copy_to_stdout(sql)?.map(WireCopy::Out))
}

/// A `COPY … FROM STDIN` in progress on a connection: the statement and the data
/// received so far.
pub(crate) struct Incoming {
    copy: CopyFrom,
    data: BytesMut,
}

impl Backend {
    /// Starts a COPY of the protocol: for FROM STDIN, checks the table and asks the
    /// client for the rows; for TO STDOUT, runs the query and streams its rows.
    pub(crate) async fn start_copy(
        &self,
        conn: &Connection,
        copy: WireCopy,
        has_params: bool,
        timeout: Option<Duration>,
    ) -> std::result::Result<Response, ErrorInfo> {
        if has_params {
            return Err(error("42P02", "COPY takes no parameters"));
        }
        match copy {
            WireCopy::In(copy) => {
                let columns = conn.session.copy_columns(&copy).map_err(|e| from_tessera(&e))?;
                let mut pending = conn.copy_in.lock().map_err(|_| error("XX000", "COPY state poisoned"))?;
                *pending = Some(Incoming { copy, data: BytesMut::new() });
                Ok(Response::CopyIn(CopyResponse::new(TEXT_FORMAT, columns, stream::empty())))
            }
            WireCopy::Out(to) => {
                let output = self.execute(conn, &to.query, None, timeout).await?;
                self.check_result_size(&output)?;
                Ok(Response::CopyOut(copy_out(output, to)))
            }
        }
    }
}

/// The rows of `output` as CopyData messages in `to`'s format, the header (if any)
/// before the first row.
fn copy_out(output: QueryOutput, to: CopyTo) -> CopyResponse {
    let columns = output.schema.fields().len();
    let mut header = to.header.then(|| {
        let mut line = Vec::new();
        to.write_header(output.schema.fields().iter().map(|f| f.name().as_str()), &mut line);
        line
    });
    if output.num_rows() == 0 {
        let only = header.map(|h| Ok(CopyData::new(Bytes::from(h))));
        return CopyResponse::new(TEXT_FORMAT, columns, stream::iter(only));
    }
    let rows = stream::iter(output.batches).flat_map(move |batch| {
        stream::iter(match copy_rows(&batch, &to, &mut header) {
            Ok(rows) => rows.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(PgWireError::UserError(Box::new(from_tessera(&e))))],
        })
    });
    CopyResponse::new(TEXT_FORMAT, columns, rows)
}

/// The rows of `batch` as CopyData messages; `header`, when still there, goes before
/// the first.
fn copy_rows(batch: &RecordBatch, to: &CopyTo, header: &mut Option<Vec<u8>>) -> Result<Vec<CopyData>> {
    let encoder = BatchEncoder::new(batch, |_| false)?;
    let mut value = BytesMut::new();
    let mut rows = Vec::with_capacity(batch.num_rows());
    for row in 0..batch.num_rows() {
        let mut line = header.take().unwrap_or_default();
        for column in 0..encoder.len() {
            value.clear();
            let present = encoder.encode(row, column, &mut value)?;
            to.write_field(column, present.then_some(&value[..]), &mut line);
        }
        to.end_row(&mut line);
        rows.push(CopyData::new(Bytes::from(line)));
    }
    Ok(rows)
}

#[async_trait]
impl CopyHandler for Backend {
    async fn on_copy_data<C>(&self, client: &mut C, copy_data: CopyData) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let conn = connection(&self.db, client)?;
        let mut pending = conn.copy_in.lock().map_err(|_| user_error("XX000", "COPY state poisoned"))?;
        let Some(incoming) = pending.as_mut() else {
            return Err(user_error("08P01", "CopyData without a COPY FROM STDIN in progress"));
        };
        let total = incoming.data.len().saturating_add(copy_data.data.len());
        if total > self.limits.max_result_bytes {
            // Nothing is kept: the rest the client sends is discarded, as after any
            // error in COPY.
            *pending = None;
            return Err(user_error(
                errors::PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "COPY FROM STDIN: the data sent exceeds the server's limit of {} bytes (tessera serve --max-result-bytes); nothing was loaded, send it in several COPYs",
                    self.limits.max_result_bytes
                ),
            ));
        }
        incoming.data.extend_from_slice(&copy_data.data);
        Ok(())
    }

    async fn on_copy_done<C>(&self, client: &mut C, _done: CopyDone) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        let conn = connection(&self.db, client)?;
        let incoming = conn.copy_in.lock().map_err(|_| user_error("XX000", "COPY state poisoned"))?.take();
        let Some(Incoming { copy, data }) = incoming else {
            return Err(user_error("08P01", "CopyDone without a COPY FROM STDIN in progress"));
        };
        let timeout = conn.statement_timeout.lock().map(|t| *t).unwrap_or(None);
        let running = crate::statement::spawn_copy_in(Arc::clone(&conn.session), copy, data.freeze());
        let output = self.wait(running, true, timeout).await.map_err(|e| PgWireError::UserError(Box::new(e)))?;
        let rows = row_count(&output).ok_or_else(|| user_error("XX000", "COPY returned no row count"))?;
        if client.transaction_status() != TransactionStatus::Idle {
            conn.writes_in_block.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let tag = Tag::new("COPY").with_rows(usize::try_from(rows).unwrap_or(usize::MAX));
        client.send(PgWireBackendMessage::CommandComplete(tag.into())).await?;
        Ok(())
    }

    async fn on_copy_fail<C>(&self, client: &mut C, fail: CopyFail) -> PgWireError
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        if let Ok(conn) = connection(&self.db, client)
            && let Ok(mut pending) = conn.copy_in.lock()
        {
            *pending = None;
        }
        user_error(errors::QUERY_CANCELED, format!("COPY from stdin failed: {}", fail.message))
    }
}
