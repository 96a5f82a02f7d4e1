//! `generations/<hash16>.json`: immutable, content-named shard bodies.
//!
//! A body is written to a temp file, fsynced, then hard-linked to its final
//! name, which fails if the name exists: an existing generation of the right
//! length is never modified (it has the same bytes by construction); its
//! mtime is refreshed instead, so the garbage collector's grace period starts
//! again. One of another length (truncated or overwritten) is replaced whole
//! by rename.
//!
//! Beside each generation may sit `<hash16>.grams`: the shard's trigram
//! filters (`recall_core::ShardGrams`), behind a header that binds them to
//! the bytes they describe: a 4-byte magic, the CRC-32 of the generation's
//! hash16 and the filter bytes, and that hash16. A torn file, or one copied
//! from another generation, is never trusted (a wrong filter could hide a
//! match; a missing one only costs speed). A CRC, not a cryptographic hash:
//! a cold search checks thousands of these files.

use super::fsutil::{random_hex, sync_dir};
use super::StoreError;
use recall_core::naming::{generation_file_name, is_generation_file_name};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use recall_core::layout::store::{GRAMS_EXT, TMP_PREFIX};
pub use recall_core::layout::GENERATIONS;

/// First bytes of a filter sidecar (then the CRC-32 of the rest, LE, then
/// the generation's hash16, then the filters).
const GRAMS_MAGIC: &[u8; 4] = b"RCG\x02";
/// Magic + CRC + hash16.
const GRAMS_HEADER: usize = 8 + 16;

fn grams_file(stem: &str, grams: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(grams.len() + GRAMS_HEADER);
    body.extend_from_slice(GRAMS_MAGIC);
    body.extend_from_slice(&[0; 4]);
    body.extend_from_slice(stem.as_bytes());
    body.extend_from_slice(grams);
    let crc = crc32fast::hash(&body[8..]);
    body[4..8].copy_from_slice(&crc.to_le_bytes());
    body
}

/// The hash16 part of a generation name (`<hash16>.json`).
fn stem(name: &str) -> &str {
    name.strip_suffix(".json").unwrap_or(name)
}

/// Writes a shard body unless a generation with its name exists; returns
/// the file name. `sync` fsyncs the body before it gets its name; the
/// folder is fsynced once per publish ([`sync_names`]).
pub fn write(dir: &Path, body: &[u8], sync: bool) -> Result<String, StoreError> {
    match write_pending(dir, body, sync)? {
        Written::Named(name) => Ok(name),
        Written::Pending(p) => p.commit(),
    }
}

/// What [`write_pending`] left to do.
#[derive(Debug)]
pub enum Written {
    /// The generation exists under its name (its mtime refreshed).
    Named(String),
    /// The body sits in a temp file: [`Pending::commit`] names it.
    Pending(Pending),
}

/// A shard body written to a temp file, not yet fsynced nor named: a sweep
/// worker hands it to a thread of its own that commits it, so the worker's
/// core goes on preparing the next unit while the disk syncs. Dropped
/// uncommitted, the temp file is removed.
#[derive(Debug)]
pub struct Pending {
    name: String,
    tmp: PathBuf,
    dest: PathBuf,
    file: Option<File>,
    sync: bool,
}

impl Pending {
    /// The file name the body gets.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Fsyncs the body (when asked) and links it to its name; returns the
    /// name.
    pub fn commit(mut self) -> Result<String, StoreError> {
        let file = self.file.take();
        let result = (|| -> io::Result<()> {
            if let (Some(f), true) = (&file, self.sync) {
                f.sync_all()?;
            }
            drop(file);
            match fs::hard_link(&self.tmp, &self.dest) {
                Ok(()) => fs::remove_file(&self.tmp),
                // A concurrent writer linked the same bytes, or a damaged file
                // sits under the name: replace it whole.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    fs::rename(&self.tmp, &self.dest)
                }
                Err(e) => Err(e),
            }
        })();
        // Linked (and the temp name gone) or failed: either way `Drop`
        // has nothing left to remove but a failed attempt's temp file.
        match result {
            Ok(()) => {
                self.tmp = PathBuf::new();
                Ok(std::mem::take(&mut self.name))
            }
            Err(e) => Err(StoreError::io(&self.dest, e)),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// The first half of [`write`]: the body's name, and unless a generation
/// of that name exists, the body written to a temp file (not fsynced).
pub fn write_pending(dir: &Path, body: &[u8], sync: bool) -> Result<Written, StoreError> {
    let name = generation_file_name(body);
    let dest = dir.join(&name);
    // Same name and length: the same bytes (a truncated or overwritten file
    // of another length is replaced when the pending body is committed).
    if fs::metadata(&dest).is_ok_and(|m| m.len() == body.len() as u64) {
        touch(&dest);
        return Ok(Written::Named(name));
    }
    let tmp = dir.join(format!("{TMP_PREFIX}{}", random_hex(8)));
    let file = (|| -> io::Result<File> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(body)?;
        Ok(f)
    })();
    match file {
        Ok(f) => Ok(Written::Pending(Pending {
            name,
            tmp,
            dest,
            file: Some(f),
            sync,
        })),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(StoreError::io(&dest, e))
        }
    }
}

/// Makes the names written so far durable: one directory fsync before a
/// manifest that references them is published (not one per generation).
pub fn sync_names(dir: &Path) -> Result<(), StoreError> {
    sync_dir(dir).map_err(|e| StoreError::io(dir, e))
}

/// Refreshes a generation's mtime (best effort).
fn touch(path: &Path) {
    if let Ok(f) = File::options().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// The sidecar path of a generation's trigram filters.
pub fn grams_path(dir: &Path, name: &str) -> Option<PathBuf> {
    path(dir, name).map(|p| p.with_extension(GRAMS_EXT))
}

/// Writes a generation's trigram filters, replacing a different file (an
/// older format). Not fsynced: a torn file fails its hash check and is
/// ignored.
pub fn write_grams(dir: &Path, name: &str, grams: &[u8]) -> Result<(), StoreError> {
    let dest = grams_path(dir, name).ok_or_else(|| StoreError::BadName(name.to_string()))?;
    let body = grams_file(stem(name), grams);
    // Filters are a pure function of the generation, but an older format
    // (or a damaged file) is replaced.
    if fs::read(&dest).is_ok_and(|old| old == body) {
        return Ok(());
    }
    let tmp = dir.join(format!("{TMP_PREFIX}{}", random_hex(8)));
    let result = (|| -> io::Result<()> {
        let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(&body)?;
        drop(f);
        fs::rename(&tmp, &dest)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(StoreError::io(&dest, e));
    }
    Ok(())
}

/// Reads a generation's trigram filter bytes, verified against their
/// checksum and bound to this generation; `None` when absent, not intact, or
/// describing another generation.
pub fn read_grams(dir: &Path, name: &str) -> Option<Vec<u8>> {
    let mut bytes = fs::read(grams_path(dir, name)?).ok()?;
    let head = bytes.get(..GRAMS_HEADER)?;
    let crc = u32::from_le_bytes(head[4..8].try_into().ok()?);
    if &head[..4] != GRAMS_MAGIC
        || &head[8..GRAMS_HEADER] != stem(name).as_bytes()
        || crc32fast::hash(&bytes[8..]) != crc
    {
        return None;
    }
    bytes.drain(..GRAMS_HEADER);
    Some(bytes)
}

/// The path of a generation, if `name` has the shape of one (refuses path
/// traversal).
pub fn path(dir: &Path, name: &str) -> Option<PathBuf> {
    is_generation_file_name(name).then(|| dir.join(name))
}

/// Reads a generation's bytes.
pub fn read(dir: &Path, name: &str) -> Result<Vec<u8>, StoreError> {
    let p = path(dir, name).ok_or_else(|| StoreError::BadName(name.to_string()))?;
    fs::read(&p).map_err(|e| StoreError::io(&p, e))
}

/// Every generation file name in the folder (temp files excluded).
pub fn list(dir: &Path) -> Result<Vec<String>, StoreError> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut out = Vec::new();
    for ent in rd.flatten() {
        if let Some(n) = ent.file_name().to_str() {
            if is_generation_file_name(n) {
                out.push(n.to_string());
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_named_and_never_rewritten() {
        let d = std::env::temp_dir().join(format!("recall-gen-{}", random_hex(6)));
        fs::create_dir_all(&d).unwrap();
        let n1 = write(&d, b"{\"a\":1}", true).unwrap();
        assert_eq!(n1, generation_file_name(b"{\"a\":1}"));
        let n2 = write(&d, b"{\"a\":1}", false).unwrap();
        assert_eq!(n1, n2);
        assert_eq!(read(&d, &n1).unwrap(), b"{\"a\":1}");
        assert_eq!(list(&d).unwrap(), vec![n1.clone()]);
        assert!(read(&d, "../x.json").is_err());
        write_grams(&d, &n1, b"filters").unwrap();
        assert_eq!(read_grams(&d, &n1).as_deref(), Some(&b"filters"[..]));
        let path = grams_path(&d, &n1).unwrap();
        let good = fs::read(&path).unwrap();
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        for bad in [
            b"0000000000000000filters".to_vec(),
            good[..good.len() - 1].to_vec(),
            flipped,
            good[..6].to_vec(),
            Vec::new(),
        ] {
            fs::write(&path, &bad).unwrap();
            assert_eq!(read_grams(&d, &n1), None, "never trusted: {bad:?}");
        }
        write_grams(&d, &n1, b"filters").unwrap();
        assert_eq!(fs::read(&path).unwrap(), good, "a bad sidecar is replaced");
        // Another generation's intact sidecar copied over this one's.
        let n2 = write(&d, b"{\"a\":2}", false).unwrap();
        write_grams(&d, &n2, b"filters").unwrap();
        assert!(read_grams(&d, &n2).is_some());
        fs::copy(&path, grams_path(&d, &n2).unwrap()).unwrap();
        assert_eq!(read_grams(&d, &n2), None, "a foreign sidecar is refused");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_pending_body_is_named_only_when_committed() {
        let d = std::env::temp_dir().join(format!("recall-gen-{}", random_hex(6)));
        fs::create_dir_all(&d).unwrap();
        let temps = || {
            fs::read_dir(&d)
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(TMP_PREFIX))
                .count()
        };
        let Written::Pending(p) = write_pending(&d, b"{\"b\":1}", true).unwrap() else {
            panic!("a new body is pending");
        };
        let name = p.name().to_string();
        assert!(list(&d).unwrap().is_empty(), "not named before its commit");
        assert_eq!(p.commit().unwrap(), name);
        assert_eq!(read(&d, &name).unwrap(), b"{\"b\":1}");
        assert_eq!(temps(), 0);
        // An existing generation is only touched; one dropped uncommitted
        // leaves neither a name nor a temp file.
        assert!(matches!(
            write_pending(&d, b"{\"b\":1}", true).unwrap(),
            Written::Named(n) if n == name
        ));
        let Written::Pending(p) = write_pending(&d, b"{\"b\":2}", false).unwrap() else {
            panic!("a new body is pending");
        };
        assert_eq!(temps(), 1);
        drop(p);
        assert_eq!(temps(), 0);
        assert_eq!(list(&d).unwrap(), vec![name]);
        fs::remove_dir_all(&d).unwrap();
    }
}
