//! The ledger journal (`ledger.jsonl`) through its reader (`recall_host::fuzzing::ledger`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    recall_host::fuzzing::ledger(data);
});
