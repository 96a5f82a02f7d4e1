//! recall-tests: cross-crate integration tests.
