//! recall-tests: cross-crate integration tests.

pub mod truth;
