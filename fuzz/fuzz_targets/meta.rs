//! A segment meta file (`metas/<hash16>.meta`) through its reader (`recall_host::fuzzing::meta`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::meta(data);
});
