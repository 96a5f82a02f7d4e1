//! A report payload as the viewer decodes it (`recall_host::fuzzing::report_payload`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::report_payload(data);
});
