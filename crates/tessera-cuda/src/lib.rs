//! tessera-cuda
