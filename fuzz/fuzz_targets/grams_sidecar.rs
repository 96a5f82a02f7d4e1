//! A `.grams` sidecar as the store reads it (`recall_host::fuzzing::grams_sidecar`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::grams_sidecar(data);
});
