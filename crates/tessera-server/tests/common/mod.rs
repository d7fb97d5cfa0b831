//! What the server's client tests share: a server over a fresh data directory.

use std::error::Error;
use std::net::SocketAddr;

use tessera_engine::Database;
use tokio_postgres::{Client, NoTls};
use tessera_server::{Server, ServerOptions};

/// A test's outcome: any error fails it.
pub type TestResult = Result<(), Box<dyn Error>>;

/// A server with `options` over a fresh data directory, on a free loopback port: its
/// address, and the directory (removed when dropped).
pub async fn start(options: ServerOptions) -> Result<(SocketAddr, tempfile::TempDir), Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let db = Database::open(dir.path())?;
    let server = Server::bind(db, ServerOptions { listen: "127.0.0.1:0".parse()?, ..options }).await?;
    let addr = server.local_addr()?;
    tokio::spawn(server.run());
    Ok((addr, dir))
}

/// A client connected to the server at `addr` as `user`, with `auth` added to its
/// connection string (e.g. `password=...`).
#[allow(dead_code)] // not every test binary connects this way (copy.rs keeps its connection's task)
pub async fn connect_as(addr: SocketAddr, user: &str, auth: &str) -> Result<Client, tokio_postgres::Error> {
    let (client, connection) = tokio_postgres::connect(&format!("host={} port={} user={user} {auth}", addr.ip(), addr.port()), NoTls).await?;
    tokio::spawn(connection);
    Ok(client)
}
