//! `catalog.json` bytes through the catalog reader (`recall_host::fuzzing::catalog`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::catalog(data);
});
