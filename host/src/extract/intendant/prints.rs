//! What a resumable Intendant extraction remembers of the sidecar spans it
//! read: per file, its length, mtime and inode when first read, and each
//! span's outcome (the text's hash, or the error). Before a resume, every
//! file whose fingerprint changed has its spans read again; any span that
//! reads differently now means the stored state is stale, and the log is
//! extracted from byte 0 instead. Span text is never cached here.

use super::sidecar::Sidecars;
use crate::extract::common::content_hash16;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Sidecar files (relative paths) and the spans read from them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prints(BTreeMap<String, File>);

/// One sidecar file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct File {
    /// Fingerprint when its spans were last read (`None` = missing).
    stat: Option<Stat>,
    spans: Vec<Span>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    len: u64,
    mtime_ns: i64,
    ino: u64,
}

/// One span read and what it gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Span {
    offset: u64,
    len: u64,
    /// `Ok(content_hash16)` or `Err(message)`.
    got: Result<String, String>,
}

impl Prints {
    /// Fingerprints `rel` unless it already is: called before a span of
    /// it is read, so any change after the read shows.
    pub fn before_read(&mut self, sidecars: &Sidecars, rel: &str) {
        if !self.0.contains_key(rel) {
            let stat = stat(sidecars, rel);
            self.0.insert(
                rel.to_string(),
                File {
                    stat,
                    spans: Vec::new(),
                },
            );
        }
    }

    /// Records a span read of `rel` (after [`Prints::before_read`]) and
    /// what it gave: the text or the error message.
    pub fn note(&mut self, rel: &str, offset: u64, len: u64, got: Result<&str, String>) {
        if let Some(file) = self.0.get_mut(rel) {
            file.spans.push(Span {
                offset,
                len,
                got: got.map(content_hash16),
            });
        }
    }

    /// Whether every span read so far reads the same now. Files whose
    /// fingerprint changed are read again (their bytes added to `bytes`)
    /// and fingerprinted anew.
    pub fn verify(&mut self, sidecars: &Sidecars, bytes: &mut u64) -> bool {
        for (rel, file) in self.0.iter_mut() {
            let now = stat(sidecars, rel);
            if now == file.stat {
                continue;
            }
            for span in &file.spans {
                let got = sidecars.read(rel, span.offset, span.len);
                if got.is_ok() {
                    *bytes += span.len;
                }
                let got = got.map(|t| content_hash16(&t)).map_err(|e| e.to_string());
                if got != span.got {
                    return false;
                }
            }
            file.stat = now;
        }
        true
    }
}

/// Length, mtime and inode of `rel` (symlinks followed); `None` = missing.
fn stat(sidecars: &Sidecars, rel: &str) -> Option<Stat> {
    let m = std::fs::metadata(sidecars.path(rel)).ok()?;
    let mtime_ns = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some(Stat {
        len: m.len(),
        mtime_ns,
        ino,
    })
}
