//! tessera-exec
