//! tessera-plan
