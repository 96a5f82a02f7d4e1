//! The repository stands on its own: what the tests need from the shared
//! folder is vendored under `tests/shared/` (the real transcripts with their
//! `SOURCES.md`, the generator, the contract). This test checks the vendored
//! copy is complete, and, when `<repo>/../shared` is present, that it equals
//! it byte for byte, so a change there is noticed and re-vendored
//! (`cp -r ../shared/{corpus,corpus-gen,DESIGN.md,FORMATS.md,FORMATS-dsh.md,FORMATS-next.md} tests/shared/`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What is vendored, relative to the shared folder.
const VENDORED: &[&str] = &[
    "corpus",
    "corpus-gen",
    "DESIGN.md",
    "FORMATS.md",
    "FORMATS-dsh.md",
    "FORMATS-next.md",
];

fn vendored_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("shared")
}

/// Every regular file under `root/rel` (or `root/rel` itself), keyed by its
/// path relative to `root`, with its bytes. Python caches are skipped.
fn files(root: &Path, rel: &str) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.join(rel)];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p)
            .unwrap_or_else(|e| panic!("cannot stat {}: {e}", p.display()));
        if meta.is_dir() {
            if p.file_name().is_some_and(|n| n == "__pycache__") {
                continue;
            }
            let entries = std::fs::read_dir(&p)
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", p.display()));
            stack.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
        } else if meta.is_file() {
            let key = p
                .strip_prefix(root)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes =
                std::fs::read(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()));
            out.insert(key, bytes);
        }
    }
    out
}

#[test]
fn the_vendored_copy_is_complete() {
    let dir = vendored_dir();
    for rel in VENDORED {
        assert!(
            dir.join(rel).exists(),
            "{} is missing: vendor it from ../shared",
            dir.join(rel).display()
        );
    }
    assert!(dir.join("corpus-gen/gen.py").is_file());
    for source in ["claude-code", "codex", "dsh", "kimi", "pi"] {
        let sources = dir.join("corpus").join(source).join("SOURCES.md");
        let text = std::fs::read_to_string(&sources)
            .unwrap_or_else(|e| panic!("{}: {e}", sources.display()));
        assert!(
            text.to_lowercase().contains("licen"),
            "{} names no licence",
            sources.display()
        );
    }
}

#[test]
fn the_vendored_copy_equals_the_shared_folder_when_present() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared");
    if !shared.join("corpus").is_dir() {
        eprintln!(
            "no {} beside the repository: nothing to compare",
            shared.display()
        );
        return;
    }
    let vendored = vendored_dir();
    let mut diffs = Vec::new();
    for rel in VENDORED {
        let want = files(&shared, rel);
        let got = files(&vendored, rel);
        for (k, v) in &want {
            match got.get(k) {
                None => diffs.push(format!("missing from tests/shared: {k}")),
                Some(g) if g != v => diffs.push(format!("differs from ../shared: {k}")),
                Some(_) => {}
            }
        }
        for k in got.keys().filter(|k| !want.contains_key(*k)) {
            diffs.push(format!("not in ../shared (stale): {k}"));
        }
    }
    assert!(
        diffs.is_empty(),
        "tests/shared is out of date with ../shared; re-vendor it:\n  {}",
        diffs.join("\n  ")
    );
}
