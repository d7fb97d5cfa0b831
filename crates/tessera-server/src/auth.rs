//! Who may connect: users with passwords, checked by SCRAM-SHA-256 (PostgreSQL's
//! default password method: the password never crosses the wire, and the client also
//! verifies the server).
//!
//! Users come from a file of `name:password` lines (`#` starts a comment) or from one
//! `--user` with its password in an environment variable. Each password is salted and
//! hashed once when the server starts; only the hash is kept in memory.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;

use async_trait::async_trait;
use pgwire::api::auth::sasl::scram::gen_salted_password;
use pgwire::api::auth::{AuthSource, LoginInfo, Password};
use pgwire::error::{PgWireError, PgWireResult};
use tessera_common::{Result, TesseraError};


/// PBKDF2 iterations of the salted password: PostgreSQL's default (`scram_iterations`).
pub const SCRAM_ITERATIONS: usize = 4096;

/// The users a server accepts, each with its salt and salted password.
#[derive(Default, Clone)]
pub struct Users {
    users: HashMap<String, (Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for Users {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Users").field("count", &self.users.len()).finish()
    }
}

impl Users {
    /// No users (the server then admits only loopback clients without a password).
    pub fn none() -> Users {
        Users::default()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// Adds (or replaces) a user.
    pub fn add(&mut self, name: &str, password: &str) -> Result<()> {
        if name.is_empty() || password.is_empty() {
            return Err(TesseraError::Plan("a user needs a name and a non-empty password".into()));
        }
        let salt = random_salt();
        let salted = gen_salted_password(password, &salt, SCRAM_ITERATIONS);
        self.users.insert(name.to_string(), (salt, salted));
        Ok(())
    }

    /// Users from `name:password` lines; blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> Result<Users> {
        let mut users = Users::default();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, password) = line
                .split_once(':')
                .ok_or_else(|| TesseraError::Plan(format!("users file, line {}: expected name:password", n + 1)))?;
            users.add(name.trim(), password).map_err(|e| e.context(format!("users file, line {}", n + 1)))?;
        }
        Ok(users)
    }

    /// Whether `password` is `name`'s (Flight SQL's basic authentication, where the client
    /// sends the password itself): salted and hashed as when the user was added, then
    /// compared in constant time. An unknown user costs the same hashing, so the time
    /// taken does not tell which users exist.
    pub fn verify(&self, name: &str, password: &str) -> bool {
        match self.users.get(name) {
            Some((salt, salted)) => constant_time_eq(&gen_salted_password(password, salt, SCRAM_ITERATIONS), salted),
            None => {
                let _ = gen_salted_password(password, b"no such user", SCRAM_ITERATIONS);
                false
            }
        }
    }

    /// Users from a file of `name:password` lines.
    pub fn from_file(path: &Path) -> Result<Users> {
        let text = std::fs::read_to_string(path).map_err(|e| TesseraError::io(format!("reading users file {}", path.display()), e))?;
        Users::parse(&text)
    }
}

/// Whether `a` and `b` are equal, in a time that depends only on their lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 16 bytes from the OS-seeded hasher keys of the standard library (random per process
/// and per call): a salt only has to differ between users and servers, not be secret.
fn random_salt() -> Vec<u8> {
    let mut salt = Vec::with_capacity(16);
    for i in 0..2u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        salt.extend_from_slice(&h.finish().to_le_bytes());
    }
    salt
}

#[async_trait]
impl AuthSource for Users {
    async fn get_password(&self, login: &LoginInfo) -> PgWireResult<Password> {
        let name = login.user().unwrap_or_default();
        match self.users.get(name) {
            Some((salt, salted)) => Ok(Password::new(Some(salt.clone()), salted.clone())),
            // The same answer as a wrong password (28P01, FATAL: the connection closes;
            // an ERROR would leave it open and ready for queries), as PostgreSQL gives.
            None => Err(PgWireError::InvalidPassword(name.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_file() {
        let users = Users::parse("# team\nalice:s3cret:with colon\n\n bob : pw\n").unwrap_or_default();
        assert_eq!(users.users.len(), 2);
        assert!(users.users.contains_key("alice") && users.users.contains_key("bob"));
        assert!(Users::parse("nocolon\n").is_err());
        assert!(Users::parse("carol:\n").is_err());
        // Salted differently each time, so equal passwords do not show.
        let (a, b) = (&users.users["alice"].0, &Users::parse("alice:x").unwrap_or_default().users["alice"].0);
        assert_ne!(a, b);
    }

    #[test]
    fn plaintext_passwords_verified() {
        let users = Users::parse("alice:s3cret\n").unwrap_or_default();
        assert!(users.verify("alice", "s3cret"));
        assert!(!users.verify("alice", "s3cret "));
        assert!(!users.verify("alice", ""));
        assert!(!users.verify("bob", "s3cret"));
        assert!(constant_time_eq(b"ab", b"ab") && !constant_time_eq(b"ab", b"ac") && !constant_time_eq(b"ab", b"abc"));
    }
}
