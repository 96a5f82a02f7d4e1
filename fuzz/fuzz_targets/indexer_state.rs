//! `indexer.json` bytes (`recall_host::fuzzing::indexer_state`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::indexer_state(data);
});
