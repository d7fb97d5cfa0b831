//! `tessera serve`: a Tessera [`Database`] served over the PostgreSQL wire protocol, so
//! psql, drivers (libpq, JDBC, psycopg, tokio-postgres) and BI tools reach it.
//!
//! One database per server process, shared by every connection; each connection is a
//! [`tessera_engine::Session`] of it (its own settings and plan cache). Statements of
//! different connections run at the same time; writes are serialized by the store and
//! each is atomic.
//!
//! - [`handler`]: the simple and extended query protocols, transactions, settings,
//!   cancel and `statement_timeout`.
//! - `copy`: `COPY … FROM STDIN` and `COPY … TO STDOUT` (the COPY sub-protocol).
//! - [`pgtypes`]: Arrow types as PostgreSQL types, rows in the text and binary formats.
//! - [`auth`]: users and SCRAM-SHA-256.
//! - [`errors`]: Tessera errors with their SQLSTATE.
//! - [`flight`]: the same database over Arrow Flight SQL ([`FlightServer`], beside the
//!   PostgreSQL server on its own address).
//!
//! TLS is offered when a certificate and key are given (rustls with the ring provider:
//! no C toolchain or system OpenSSL needed to build).
//!
//! Without users, the server admits clients without a password and then listens only
//! on a loopback address; with users (a file or `--user`), every client authenticates
//! with SCRAM-SHA-256.

#![warn(missing_docs)]

pub mod auth;
mod copy;
pub mod errors;
pub mod flight;
pub mod handler;
pub mod pgtypes;
mod statement;

use std::fmt::Debug;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use futures::Sink;
use pgwire::api::auth::noop::NoopStartupHandler;
use pgwire::api::auth::sasl::SASLAuthStartupHandler;
use pgwire::api::auth::sasl::scram::ScramAuth;
use pgwire::api::auth::{DefaultServerParameterProvider, StartupHandler};
use pgwire::api::cancel::{CancelHandler, DefaultCancelHandler};
use pgwire::api::copy::CopyHandler;
use pgwire::api::query::{ExtendedQueryHandler, SimpleQueryHandler};
use pgwire::api::{ClientInfo, ConnectionManager, PgWireConnectionState, PgWireServerHandlers};
use pgwire::error::{PgWireError, PgWireResult};
use pgwire::messages::{PgWireBackendMessage, PgWireFrontendMessage};
use pgwire::tokio::TlsAcceptor;
use tessera_common::{Result, TesseraError};
use tessera_engine::Database;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::auth::{SCRAM_ITERATIONS, Users};
use crate::handler::{Backend, Limits};

pub use crate::flight::FlightServer;

/// The port PostgreSQL's clients do not assume (5432 is PostgreSQL's own).
pub const DEFAULT_PORT: u16 = 5433;
/// Connections served at once by default (PostgreSQL's `max_connections` default).
pub const DEFAULT_MAX_CONNECTIONS: usize = 100;
/// Largest result a statement may return by default: 1 GiB of Arrow data, far above an
/// analytical answer, below what would let one client exhaust the server's memory.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1 << 30;

/// How a server listens and whom it admits.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Users and passwords (none: no password, loopback only).
    pub users: Users,
    /// Connections served at once; more are refused with SQLSTATE 53300.
    pub max_connections: usize,
    /// Largest result of one statement, in Arrow bytes; also the most data one
    /// `COPY … FROM STDIN` may send (it is held until CopyDone).
    pub max_result_bytes: usize,
    /// Certificate and key (PEM files) for TLS; clients may then ask for it
    /// (`sslmode=require`). None: plain connections only.
    pub tls: Option<TlsFiles>,
}

/// A TLS certificate chain and its private key, as PEM files.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain (server certificate first).
    pub cert: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// A TLS acceptor for `files`, with rustls' safe defaults over the ring provider.
fn tls_acceptor(files: &TlsFiles) -> Result<TlsAcceptor> {
    use pgwire::tokio::tokio_rustls::rustls::{self, pki_types::pem::PemObject};
    let read = |path: &PathBuf| std::fs::read(path).map_err(|e| TesseraError::io(format!("reading {}", path.display()), e));
    let bad = |path: &PathBuf, e: &dyn std::fmt::Display| TesseraError::Plan(format!("TLS: {}: {e}", path.display()));
    let cert_pem = read(&files.cert)?;
    let certs = rustls::pki_types::CertificateDer::pem_slice_iter(&cert_pem).collect::<std::result::Result<Vec<_>, _>>().map_err(|e| bad(&files.cert, &e))?;
    if certs.is_empty() {
        return Err(bad(&files.cert, &"no certificate in the file"));
    }
    let key = rustls::pki_types::PrivateKeyDer::from_pem_slice(&read(&files.key)?).map_err(|e| bad(&files.key, &e))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&files.cert, &e))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(&files.cert, &e))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            users: Users::none(),
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            tls: None,
        }
    }
}

/// Checks the rules both servers follow: without users, only a loopback address may be
/// listened on (anyone who can reach the port would otherwise get the database).
fn check_options(options: &ServerOptions) -> Result<()> {
    if options.users.is_empty() && !options.listen.ip().is_loopback() {
        return Err(TesseraError::Plan(format!(
            "listening on {} needs users with passwords (--users FILE or --user NAME with TESSERA_PASSWORD); without them only a loopback address such as 127.0.0.1 is allowed",
            options.listen
        )));
    }
    if options.max_connections == 0 {
        return Err(TesseraError::Plan("--max-connections must be at least 1".into()));
    }
    Ok(())
}

/// A bound server: [`Server::run`] serves connections until the task is dropped.
pub struct Server {
    listener: TcpListener,
    handlers: Arc<Handlers>,
    refuse: Arc<Handlers>,
    slots: Arc<Semaphore>,
    tls: Option<TlsAcceptor>,
}

impl Server {
    /// Binds `options.listen` for `db`. Without users, only a loopback address may be
    /// listened on (see `check_options`).
    pub async fn bind(db: Arc<Database>, options: ServerOptions) -> Result<Server> {
        check_options(&options)?;
        let tls = options.tls.as_ref().map(tls_acceptor).transpose()?;
        let listener = TcpListener::bind(options.listen).await.map_err(|e| TesseraError::io(format!("listening on {}", options.listen), e))?;
        let manager = Arc::new(ConnectionManager::new());
        let startup = if options.users.is_empty() {
            Startup::Trust(Trust { manager: Arc::clone(&manager) })
        } else {
            let mut scram = ScramAuth::new(Arc::new(options.users));
            scram.set_iterations(SCRAM_ITERATIONS);
            let mut parameters = DefaultServerParameterProvider::default();
            parameters.server_version = handler::SERVER_VERSION.to_string();
            Startup::Scram(Box::new(
                SASLAuthStartupHandler::new(Arc::new(parameters)).with_scram(scram).with_connection_manager(Arc::clone(&manager)),
            ))
        };
        let backend = Arc::new(Backend::new(db, Limits { max_result_bytes: options.max_result_bytes }));
        let cancel = Arc::new(DefaultCancelHandler::new(manager));
        let handlers = Arc::new(Handlers { backend: Arc::clone(&backend), startup: Arc::new(startup), cancel: Arc::clone(&cancel) });
        let refuse = Arc::new(Handlers { backend, startup: Arc::new(Startup::Refuse), cancel });
        Ok(Server { listener, handlers, refuse, slots: Arc::new(Semaphore::new(options.max_connections)), tls })
    }

    /// The address it listens on (the port chosen when bound to port 0).
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|e| TesseraError::io("reading the listening address", e))
    }

    /// Serves connections, each on its own task, until this future is dropped.
    pub async fn run(self) -> Result<()> {
        loop {
            let (socket, peer) = match self.listener.accept().await {
                Ok(s) => s,
                // A connection that failed before it was accepted (reset, out of file
                // descriptors): the server goes on.
                Err(e) => {
                    log::warn!("accepting a connection: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            let _ = socket.set_nodelay(true);
            match Arc::clone(&self.slots).try_acquire_owned() {
                Ok(slot) => {
                    let handlers = Arc::clone(&self.handlers);
                    let tls = self.tls.clone();
                    tokio::spawn(async move {
                        if let Err(e) = pgwire::tokio::process_socket(socket, tls, handlers).await {
                            log::debug!("connection from {peer}: {e}");
                        }
                        drop(slot);
                    });
                }
                Err(_) => {
                    let refuse = Arc::clone(&self.refuse);
                    let tls = self.tls.clone();
                    tokio::spawn(async move { pgwire::tokio::process_socket(socket, tls, refuse).await });
                }
            }
        }
    }
}

/// The protocol handlers of a server's connections.
struct Handlers {
    backend: Arc<Backend>,
    startup: Arc<Startup>,
    cancel: Arc<DefaultCancelHandler>,
}

impl PgWireServerHandlers for Handlers {
    fn simple_query_handler(&self) -> Arc<impl SimpleQueryHandler> {
        Arc::clone(&self.backend)
    }

    fn extended_query_handler(&self) -> Arc<impl ExtendedQueryHandler> {
        Arc::clone(&self.backend)
    }

    fn startup_handler(&self) -> Arc<impl StartupHandler> {
        Arc::clone(&self.startup)
    }

    fn cancel_handler(&self) -> Arc<impl CancelHandler> {
        Arc::clone(&self.cancel)
    }

    fn copy_handler(&self) -> Arc<impl CopyHandler> {
        Arc::clone(&self.backend)
    }
}

/// How a connection starts: without a password, with SCRAM, or refused (the server
/// is full).
enum Startup {
    Trust(Trust),
    Scram(Box<SASLAuthStartupHandler<DefaultServerParameterProvider>>),
    Refuse,
}

/// Admits without a password; registers the connection for cancel requests.
struct Trust {
    manager: Arc<ConnectionManager>,
}

impl NoopStartupHandler for Trust {
    fn connection_manager(&self) -> Option<Arc<ConnectionManager>> {
        Some(Arc::clone(&self.manager))
    }
}

#[async_trait]
impl StartupHandler for Startup {
    async fn on_startup<C>(&self, client: &mut C, message: PgWireFrontendMessage) -> PgWireResult<()>
    where
        C: ClientInfo + Sink<PgWireBackendMessage> + Unpin + Send + Sync,
        C::Error: Debug,
        PgWireError: From<<C as Sink<PgWireBackendMessage>>::Error>,
    {
        match self {
            Startup::Trust(t) => t.on_startup(client, message).await?,
            Startup::Scram(s) => s.on_startup(client, message).await?,
            Startup::Refuse => return Err(errors::fatal(errors::TOO_MANY_CONNECTIONS, "sorry, too many clients already")),
        }
        // Startup done (the handlers left it ready for queries): the only way a
        // connection gets a session (see `handler::connection`).
        if matches!(client.state(), PgWireConnectionState::ReadyForQuery) {
            client.session_extensions().insert(handler::Authenticated);
        }
        Ok(())
    }
}
