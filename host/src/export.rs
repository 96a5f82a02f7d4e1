//! The session export: one ZIP holding the source files of a session and of
//! all its descendants, exactly as the agents wrote them, plus
//! `recall-export.json` describing what is where. Shared by
//! `GET /api/session/{key}/export` and `recall export`.
//!
//! Only the files the manifest lists for those sessions are read, each up to
//! the length it had when the export started (an agent may be appending);
//! only regular files, opened without blocking, and never one whose real
//! path lies outside the source roots (a symlink planted in a session's
//! folder): those are listed under `missing` with the reason.

pub mod markdown;

use crate::lineage;
use recall_core::model::Manifest;
use serde_json::json;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

/// Why an export failed part-way.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The session is not indexed.
    #[error("no session with this key is indexed")]
    NotFound,
    /// Writing the archive failed (e.g. the client went away).
    #[error("writing the archive failed: {0}")]
    Zip(#[from] zip::result::ZipError),
    /// Writing the archive failed.
    #[error("writing the archive failed: {0}")]
    Io(#[from] io::Error),
}

/// One file to put in the archive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportFile {
    /// Name inside the ZIP.
    pub name: String,
    /// Where it is on disk (from the manifest).
    pub path: PathBuf,
}

/// What an export will contain.
#[derive(Clone, Debug)]
pub struct ExportPlan {
    /// The exported session's key.
    pub key: String,
    /// Files, session by session (parents before children).
    pub files: Vec<ExportFile>,
    /// The `recall-export.json` body.
    pub index: serde_json::Value,
    /// The real paths (symlinks resolved) files must lie under; `None` =
    /// no roots known: only regular files that are not symlinks.
    pub roots: Option<Vec<PathBuf>>,
}

impl ExportPlan {
    /// Confines the export to files under `roots` (resolved now; an empty
    /// list leaves the plan unconfined but still refusing symlinks).
    pub fn confined_to(mut self, roots: Vec<PathBuf>) -> ExportPlan {
        if !roots.is_empty() {
            let real = roots
                .iter()
                .filter_map(|r| std::fs::canonicalize(r).ok())
                .collect();
            self.roots = Some(real);
        }
        self
    }
}

/// Opens one listed file for the archive, or says why it is left out.
fn open_listed(path: &Path, roots: Option<&[PathBuf]>) -> Result<(File, u64), String> {
    let reason = |e: io::Error| e.kind().to_string();
    let link = std::fs::symlink_metadata(path).map_err(reason)?;
    let real = match roots {
        None if link.file_type().is_symlink() => return Err("a symlink".into()),
        None => path.to_path_buf(),
        Some(roots) => {
            let real = std::fs::canonicalize(path).map_err(reason)?;
            if !roots.iter().any(|r| real.starts_with(r)) {
                return Err("outside the source roots".into());
            }
            real
        }
    };
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    // A FIFO swapped in must not block the export.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(&real).map_err(reason)?;
    let meta = file.metadata().map_err(reason)?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    Ok((file, meta.len()))
}

/// Plans the export of `key` and its descendants from `manifest`.
pub fn plan(manifest: &Manifest, key: &str, now_ms: i64) -> Result<ExportPlan, ExportError> {
    if !manifest.sessions.contains_key(key) {
        return Err(ExportError::NotFound);
    }
    let mut files = Vec::new();
    let mut sessions = Vec::new();
    let mut taken = std::collections::HashSet::new();
    for k in lineage::subtree_keys(manifest, key) {
        let Some(e) = manifest.sessions.get(&k) else {
            continue;
        };
        let dir = safe_name(&k);
        let paths: Vec<PathBuf> = e.meta.paths.iter().map(PathBuf::from).collect();
        let base = common_dir(&paths);
        let mut listed = Vec::new();
        for p in &paths {
            let rel = base
                .as_deref()
                .and_then(|b| p.strip_prefix(b).ok())
                .map(zip_path)
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| {
                    p.file_name()
                        .map_or_else(|| "file".into(), |n| safe_name(&n.to_string_lossy()))
                });
            let mut name = format!("{dir}/{rel}");
            let mut n = 1;
            while !taken.insert(name.clone()) {
                n += 1;
                name = format!("{dir}-{n}/{rel}");
            }
            listed.push(json!({"name": name, "original_path": p}));
            files.push(ExportFile {
                name,
                path: p.clone(),
            });
        }
        let mut summary = lineage::summary(&k, e);
        summary["files"] = json!(listed);
        sessions.push(summary);
    }
    let index = json!({
        "format": "recall-export/1",
        "exported_at_ms": now_ms,
        "session_key": key,
        "store_id": manifest.store_id,
        "revision": manifest.revision,
        "sessions": sessions,
    });
    Ok(ExportPlan {
        key: key.to_string(),
        files,
        index,
        roots: None,
    })
}

/// What went into an archive.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ZipReport {
    /// How many of the plan's files were written.
    pub written: usize,
    /// The files left out, each with the reason (also listed under
    /// `missing` in `recall-export.json`).
    pub left_out: Vec<(String, String)>,
}

/// Writes the archive to `out` (which need not be seekable). Files that have
/// disappeared or are refused are skipped and listed under `missing` in the
/// index; the report says what was written and what was left out.
pub fn write_zip<W: Write>(plan: &ExportPlan, out: W) -> Result<ZipReport, ExportError> {
    let mut zip = ZipWriter::new_stream(out);
    let deflate = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    let mut missing = Vec::new();
    let mut report = ZipReport::default();
    let mut buf = vec![0u8; 64 << 10];
    for f in &plan.files {
        let (file, len) = match open_listed(&f.path, plan.roots.as_deref()) {
            Ok(x) => x,
            Err(reason) => {
                missing.push(json!({"name": f.name, "reason": reason}));
                report.left_out.push((f.name.clone(), reason));
                continue;
            }
        };
        let opts = deflate.large_file(len >= u64::from(u32::MAX) / 2);
        zip.start_file(f.name.as_str(), opts)?;
        let mut reader = file.take(len);
        loop {
            let n = reader.read(&mut buf)?;
            if n == 0 {
                break;
            }
            zip.write_all(&buf[..n])?;
        }
        report.written += 1;
    }
    let mut index = plan.index.clone();
    index["missing"] = json!(missing);
    zip.start_file("recall-export.json", deflate)?;
    let body = serde_json::to_vec_pretty(&index).map_err(io::Error::other)?;
    zip.write_all(&body)?;
    zip.finish()?.into_inner().flush()?;
    Ok(report)
}

/// The file name offered for an export of `key`.
pub fn file_name(key: &str) -> String {
    format!("recall-{}.zip", safe_name(key))
}

/// Replaces everything outside `[A-Za-z0-9._-]` with `_` (and never yields
/// `.`/`..`).
pub fn safe_name(s: &str) -> String {
    let out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.chars().all(|c| c == '.') {
        format!("_{out}")
    } else {
        out
    }
}

/// A relative path as ZIP entry components, each made safe.
fn zip_path(rel: &Path) -> String {
    rel.components()
        .map(|c| safe_name(&c.as_os_str().to_string_lossy()))
        .collect::<Vec<_>>()
        .join("/")
}

/// The deepest directory containing every path.
fn common_dir(paths: &[PathBuf]) -> Option<PathBuf> {
    let first = paths.first()?.parent()?.to_path_buf();
    let mut base = first;
    for p in &paths[1..] {
        while !p.starts_with(&base) {
            base = base.parent()?.to_path_buf();
        }
    }
    Some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe() {
        assert_eq!(safe_name("claude-code:ab/../c"), "claude-code_ab_.._c");
        assert_eq!(safe_name(".."), "_..");
        assert_eq!(file_name("pi:x y"), "recall-pi_x_y.zip");
    }

    #[test]
    fn common_dir_of_session_files() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            common_dir(&[p("/h/p/s.jsonl"), p("/h/p/s/subagents/a.jsonl")]),
            Some(p("/h/p"))
        );
        assert_eq!(common_dir(&[p("/h/x/w.jsonl")]), Some(p("/h/x")));
    }
}
