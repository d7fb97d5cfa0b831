//! What the server's client tests share: a server over a fresh data directory.

use std::error::Error;
use std::net::SocketAddr;

use tessera_engine::Database;
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
