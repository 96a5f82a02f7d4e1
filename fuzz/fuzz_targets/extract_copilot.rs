//! Arbitrary bytes as the main file of a Copilot CLI session (`events.jsonl`), through discovery and
//! extraction (see `recall_host::fuzzing::extract`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::extract(recall_core::model::Source::Copilot, data);
});
