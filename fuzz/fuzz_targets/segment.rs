//! Index segment bytes opened and searched (`recall_host::fuzzing::segment`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::segment(data);
});
