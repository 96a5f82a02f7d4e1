//! Generation bodies and trigram filter bytes from untrusted storage.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(shard) = recall_core::PreparedShard::from_bytes(data) {
        let _ = shard.heap_bytes();
    }
    let _ = recall_core::ShardGrams::from_bytes(data);
    let mut index = recall_core::MemIndex::new();
    let _ = index.set_manifest(data);
});
