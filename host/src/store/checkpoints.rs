//! Extraction checkpoints: where the extraction of a live session stopped,
//! so that the next sweep reads its appended files only past their offsets
//! (DESIGN.md §6, "Appended: read only past the offset").
//!
//! One file per unit, `checkpoints/<hash16 of the unit id>.json`, replaced
//! atomically (temp file + rename). The body is opaque here: the indexer
//! writes and validates it. Every file is sealed: a first line
//! `recall-checkpoint/1 <SHA-256 of the body, hex>` then the body, and
//! [`read`] hands back only a body that matches its seal, so a damaged or
//! altered checkpoint — even one that still parses and agrees with itself —
//! is refused (deleted) and costs a full read instead of shaping records.
//! Checkpoints are a cache — a missing, stale or damaged one only costs a
//! full re-read — so they are not fsynced, and the full garbage collection
//! deletes those not rewritten for [`KEEP_MS`].

use super::fsutil::random_hex;
use super::generations::TMP_PREFIX;
use sha2::{Digest, Sha256};
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use recall_core::layout::store::CHECKPOINTS;

/// How long an untouched checkpoint is kept (its session went quiet).
pub const KEEP_MS: i64 = 3 * 24 * 3600 * 1000;

fn path(dir: &Path, unit: &str) -> PathBuf {
    dir.join(CHECKPOINTS).join(format!(
        "{}.json",
        recall_core::naming::hash16(unit.as_bytes())
    ))
}

/// The first word of a sealed checkpoint file.
pub const SEAL: &str = "recall-checkpoint/1";

fn seal_line(body: &[u8]) -> String {
    let hex: String = Sha256::digest(body)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{SEAL} {hex}\n")
}

/// The body of a sealed file, when its seal matches.
pub fn unseal(bytes: &[u8]) -> Option<&[u8]> {
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let (line, body) = (&bytes[..=nl], &bytes[nl + 1..]);
    (line == seal_line(body).as_bytes()).then_some(body)
}

/// The checkpoint body of `unit`, if there is one and its seal matches (a
/// file that does not is removed).
pub fn read(dir: &Path, unit: &str) -> Option<Vec<u8>> {
    let p = path(dir, unit);
    let bytes = fs::read(&p).ok()?;
    match unseal(&bytes) {
        Some(body) => Some(body.to_vec()),
        None => {
            let _ = fs::remove_file(&p);
            None
        }
    }
}

/// Replaces the checkpoint of `unit` with `body`, sealed.
pub fn write(dir: &Path, unit: &str, body: &[u8]) -> io::Result<()> {
    let folder = dir.join(CHECKPOINTS);
    fs::create_dir_all(&folder)?;
    let tmp = folder.join(format!("{TMP_PREFIX}{}", random_hex(8)));
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(seal_line(body).as_bytes())?;
        f.write_all(body)?;
        drop(f);
        fs::rename(&tmp, path(dir, unit))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the checkpoint of `unit` (absent is fine).
pub fn remove(dir: &Path, unit: &str) {
    let _ = fs::remove_file(path(dir, unit));
}

/// Deletes checkpoints (and temp files) not written for `keep_ms`; all of
/// them with `keep_ms == 0`. Returns how many went.
pub fn prune(dir: &Path, now_ms: i64, keep_ms: i64) -> usize {
    let Ok(rd) = fs::read_dir(dir.join(CHECKPOINTS)) else {
        return 0;
    };
    let mut n = 0;
    for ent in rd.flatten() {
        let age = ent
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(i64::MAX, |d| now_ms.saturating_sub(d.as_millis() as i64));
        if (keep_ms == 0 || age > keep_ms) && fs::remove_file(ent.path()).is_ok() {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_replace_remove_prune() {
        let dir = std::env::temp_dir().join(format!("recall-cp-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        assert_eq!(read(&dir, "/a/b.jsonl"), None);
        write(&dir, "/a/b.jsonl", b"one").unwrap();
        write(&dir, "/a/b.jsonl", b"two").unwrap();
        write(&dir, "/a/c.jsonl", b"three").unwrap();
        assert_eq!(read(&dir, "/a/b.jsonl").as_deref(), Some(&b"two"[..]));
        remove(&dir, "/a/b.jsonl");
        assert_eq!(read(&dir, "/a/b.jsonl"), None);
        assert_eq!(prune(&dir, super::super::wall_ms(), KEEP_MS), 0);
        assert_eq!(prune(&dir, super::super::wall_ms(), 0), 1);
        assert_eq!(read(&dir, "/a/c.jsonl"), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_altered_or_unsealed_checkpoint_is_refused() {
        let dir = std::env::temp_dir().join(format!("recall-cp-seal-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        write(&dir, "/u", br#"{"lines":3}"#).unwrap();
        let file = path(&dir, "/u");
        let sealed = fs::read(&file).unwrap();
        assert!(sealed.starts_with(SEAL.as_bytes()));
        assert_eq!(read(&dir, "/u").as_deref(), Some(&br#"{"lines":3}"#[..]));
        // Same length, one digit changed: refused, and the file goes.
        let altered = String::from_utf8(sealed.clone())
            .unwrap()
            .replace(r#""lines":3"#, r#""lines":2"#);
        fs::write(&file, altered).unwrap();
        assert_eq!(read(&dir, "/u"), None);
        assert!(!file.exists());
        // A bare body (no seal) is refused too.
        fs::write(&file, br#"{"lines":3}"#).unwrap();
        assert_eq!(read(&dir, "/u"), None);
        for junk in [
            &b""[..],
            b"\n",
            b"recall-checkpoint/1 00\n{}",
            &sealed[..sealed.len() - 1],
        ] {
            assert_eq!(unseal(junk), None);
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
