//! Arbitrary bytes as the main file of a Qwen Code session, through discovery and
//! extraction (see `recall_host::fuzzing::extract`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::extract(recall_core::model::Source::Qwen, data);
});
