//! Arbitrary bytes as an OpenCode database (`opencode.db`; bytes that are
//! not a SQLite file are the SQL that writes one: hostile schemas and rows),
//! through discovery and extraction (see `recall_host::fuzzing::extract`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::extract(recall_core::model::Source::OpenCode, data);
});
