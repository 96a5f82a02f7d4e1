//! Scratch files for the extractor tests: a temporary directory removed on
//! drop, and writers for the bad inputs every extractor must survive (torn
//! final line, garbage, invalid UTF-8, a 100 MB line).

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// A temporary directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A fresh directory named after `tag`.
    pub fn new(tag: &str) -> Scratch {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("recall-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// `dir/rel`, with its parent directories created.
    pub fn path(&self, rel: &str) -> PathBuf {
        let p = self.0.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).expect("create scratch subdir");
        }
        p
    }

    /// Writes `bytes` to `dir/rel` and returns the path.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(rel);
        std::fs::write(&p, bytes).expect("write scratch file");
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The bad lines every extractor test mixes into a valid file: a merge
/// marker, raw non-UTF-8 bytes, and (given a valid JSON line prefix) a
/// line that is JSON-shaped but holds invalid UTF-8 inside a string.
pub fn garbage_lines(json_prefix: &[u8]) -> Vec<Vec<u8>> {
    let mut bad_utf8 = json_prefix.to_vec();
    bad_utf8.extend_from_slice(b"\"bad \xff\xfe utf8\"}");
    vec![
        b"<<<<<<< HEAD".to_vec(),
        b"\xff\xfe\x00garbage-bytes".to_vec(),
        bad_utf8,
    ]
}

/// Appends one line of `size` bytes (a JSON string of `x`s) plus `\n`,
/// written in chunks so the test never holds it in memory.
pub fn append_huge_line(path: &Path, size: usize) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("open for huge line");
    let chunk = vec![b'x'; 1 << 20];
    f.write_all(b"{\"huge\":\"").expect("write");
    let mut left = size;
    while left > 0 {
        let n = left.min(chunk.len());
        f.write_all(&chunk[..n]).expect("write");
        left -= n;
    }
    f.write_all(b"\"}\n").expect("write");
}

/// Appends raw bytes.
pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("open for append");
    f.write_all(bytes).expect("append");
}

/// A symlink that points at itself (opening it fails with ELOOP).
#[cfg(unix)]
pub fn symlink_loop(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink(path, path).expect("symlink loop");
}

/// Deterministic damaged copies of `bytes`: cut at many points, bytes
/// replaced by JSON-significant or invalid ones, lines swapped. An
/// extractor must survive every one of them without a panic.
pub fn mutations(bytes: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let len = bytes.len().max(1);
    let noise: &[u8] = b"\"{}[]:,\\\n\xff\xc3 0-";
    (0..count)
        .map(|i| {
            let mut v = bytes.to_vec();
            match i % 3 {
                0 => v.truncate((next() as usize) % len),
                1 => {
                    for _ in 0..1 + next() % 4 {
                        let at = (next() as usize) % len;
                        if let Some(b) = v.get_mut(at) {
                            *b = noise[(next() as usize) % noise.len()];
                        }
                    }
                }
                _ => {
                    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
                    if lines.len() > 2 {
                        let a = (next() as usize) % lines.len();
                        let b = (next() as usize) % lines.len();
                        lines.swap(a, b);
                        let dup = lines[(next() as usize) % lines.len()];
                        lines.push(dup);
                    }
                    v = lines.join(&b'\n');
                }
            }
            v
        })
        .collect()
}
