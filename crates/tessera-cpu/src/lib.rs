//! tessera-cpu
