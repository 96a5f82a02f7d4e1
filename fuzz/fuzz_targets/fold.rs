//! Folding never panics and its map always points at char starts.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let f = recall_core::fold::fold(s);
        for i in 0..f.text.len() {
            assert!(s.is_char_boundary(f.original_offset(i)));
        }
    }
});
