//! recall-tests: cross-crate integration tests.

pub mod parity;
pub mod truth;
