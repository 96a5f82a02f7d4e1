//! Content naming: shards are named by the first 16 hex digits of the
//! SHA-256 of their exact bytes, and locators carry `content_hash16` of the
//! full record text.

use sha2::{Digest, Sha256};

/// First 16 lowercase hex digits of SHA-256 of `bytes`.
pub fn hash16(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(16);
    for b in &digest[..8] {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// The generation file name of a shard body: `<hash16>.json`.
pub fn generation_file_name(body: &[u8]) -> String {
    format!("{}.json", hash16(body))
}

/// Whether `name` has the shape of a generation file name (16 lowercase hex +
/// `.json`). Hosts use this to refuse path traversal.
pub fn is_generation_file_name(name: &str) -> bool {
    name.len() == 21
        && name.ends_with(".json")
        && name.as_bytes()[..16]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash16_is_sha256_prefix() {
        // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223...
        assert_eq!(hash16(b"abc"), "ba7816bf8f01cfea");
        assert_eq!(generation_file_name(b"abc"), "ba7816bf8f01cfea.json");
    }

    #[test]
    fn generation_names_are_recognised() {
        assert!(is_generation_file_name("ba7816bf8f01cfea.json"));
        assert!(!is_generation_file_name("../etc/passwd.json"));
        assert!(!is_generation_file_name("BA7816BF8F01CFEA.json"));
        assert!(!is_generation_file_name("ba7816bf8f01cfea.jsonx"));
    }
}
