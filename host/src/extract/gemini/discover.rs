//! Gemini CLI discovery: every `tmp/<project>/chats/session-*.json[l]`
//! (main sessions) and `chats/<parent id>/*.jsonl` (subagents), with the
//! project folder's cwd in the unit's context.
//!
//! A project folder is a slug named in `~/.gemini/projects.json`
//! (`{projects: {<abs path>: <slug>}}`) and holding a `.project_root`
//! marker with the absolute path (`config/projectRegistry.ts`), or, before
//! slugs, the hex SHA-256 of the path (`utils/paths.ts` `getProjectHash`),
//! which maps back only through a path `projects.json` lists.

use super::super::common::{read_small, secondary_file};
use super::super::SessionSource;
use recall_core::model::Source;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

/// Every session unit under the Gemini `tmp/` root.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let registry = projects(root);
    let mut out = Vec::new();
    for project in sorted_dirs(root) {
        let cwd = project_cwd(&project, &registry);
        let chats = project.join("chats");
        let (mut files, mut subdirs) = (Vec::new(), Vec::new());
        for p in entries(&chats) {
            if p.is_dir() {
                subdirs.push(p);
            } else if is_main(&p) && secondary_file(&p) {
                files.push(p);
            }
        }
        // A resumed legacy `X.json` is migrated to `X.jsonl`
        // (chatRecordingService.ts): the copy supersedes the original.
        files.retain(|p| {
            !(p.extension().is_some_and(|x| x == "json") && p.with_extension("jsonl").is_file())
        });
        out.extend(files.into_iter().map(|f| unit(f, &cwd, None)));
        for dir in subdirs {
            let parent = dir.file_name().and_then(|n| n.to_str()).map(str::to_string);
            for f in entries(&dir) {
                if f.extension().is_some_and(|x| x == "jsonl") && secondary_file(&f) {
                    out.push(unit(f, &cwd, parent.as_deref()));
                }
            }
        }
    }
    out
}

fn unit(f: PathBuf, cwd: &Option<String>, parent: Option<&str>) -> SessionSource {
    let mut ctx = serde_json::Map::new();
    if let Some(c) = cwd {
        ctx.insert("cwd".into(), json!(c));
    }
    if let Some(p) = parent {
        ctx.insert("parent".into(), json!(p));
    }
    SessionSource {
        source: Source::Gemini,
        unit: f.to_string_lossy().into_owned(),
        files: vec![f],
        context: Value::Object(ctx),
    }
}

fn is_main(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("session-") && (name.ends_with(".json") || name.ends_with(".jsonl"))
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    v.sort();
    v
}

fn sorted_dirs(root: &Path) -> Vec<PathBuf> {
    entries(root).into_iter().filter(|p| p.is_dir()).collect()
}

/// `(path, slug)` pairs of `<root>/../projects.json`.
fn projects(root: &Path) -> Vec<(String, String)> {
    let Some(file) = root.parent().map(|g| g.join("projects.json")) else {
        return Vec::new();
    };
    let Ok(bytes) = read_small(&file, 8 << 20) else {
        return Vec::new();
    };
    let Ok(v) = serde_json::from_slice::<Value>(&bytes) else {
        return Vec::new();
    };
    v.get("projects")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(path, slug)| Some((path.clone(), slug.as_str()?.to_string())))
        .collect()
}

/// The project directory of `project` (a `tmp/` child): its
/// `.project_root` marker, else the `projects.json` path whose slug or
/// SHA-256 is the folder's name.
pub fn project_cwd(project: &Path, registry: &[(String, String)]) -> Option<String> {
    if let Ok(b) = read_small(&project.join(".project_root"), 64 << 10) {
        let s = String::from_utf8_lossy(&b).trim().to_string();
        if !s.is_empty() {
            return Some(s);
        }
    }
    let name = project.file_name()?.to_str()?;
    registry
        .iter()
        .find(|(path, slug)| slug == name || hex_sha256(path) == name)
        .map(|(path, _)| path.clone())
}

fn hex_sha256(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
