//! Embeds the static front end into the binary (DESIGN.md §1: `recall serve`
//! needs nothing beside it). Every file under the listed workspace folders
//! becomes an entry of `$OUT_DIR/assets.rs`, read by `crate::assets`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// (workspace folder, URL prefix). A folder that does not exist is
/// skipped (then `/` serves the placeholder page); add a folder here to
/// embed and serve it.
const EMBED: &[(&str, &str)] = &[("pkg", "/pkg/"), ("web", "/")];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut entries = Vec::new();
    for (folder, prefix) in EMBED {
        let dir = root.join(folder);
        if dir.is_dir() {
            println!("cargo:rerun-if-changed={}", dir.display());
            collect(&dir, &dir, prefix, &mut entries);
        }
    }
    entries.sort();
    let mut out = String::from(
        "/// Embedded files: (URL path, bytes).\npub static ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for (url, path) in &entries {
        let _ = writeln!(
            out,
            "    ({url:?}, include_bytes!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::write(out_dir.join("assets.rs"), out) {
        println!("cargo:warning=cannot write assets.rs: {e}");
    }
}

fn collect(base: &Path, dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in read.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(base, &path, prefix, out);
        } else if let Ok(rel) = path.strip_prefix(base) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.push((format!("{prefix}{rel}"), path.clone()));
        }
    }
}
