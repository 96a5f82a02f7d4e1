//! Arbitrary bytes to `recall_host::fuzzing::locator`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::locator(data);
});
