//! Arbitrary bytes as the main file of a Gemini CLI session (a JSONL replay log), through discovery and
//! extraction (see `recall_host::fuzzing::extract`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::extract(recall_core::model::Source::Gemini, data);
});
