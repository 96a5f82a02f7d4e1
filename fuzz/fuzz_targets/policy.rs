//! `policy.json` bytes (`recall_host::fuzzing::policy`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::policy(data);
});
