//! Kimi extractors (DESIGN.md §5 "kimi"): Kimi Code session directories
//! ([`code`]) and legacy kimi-cli sessions ([`legacy`]). This module finds the
//! sessions; the submodules read them.

pub mod code;
pub mod legacy;
mod wire;

use super::agent::Agent;
use super::common::resume_command;
use super::feed::{align, Call, Fed, Outcome};
use super::{ExtractError, Extracted, SessionSource};
use recall_core::model::{SessionMeta, Source};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Context key telling which of the two layouts a unit uses.
const FLAVOR: &str = "flavor";

/// Finds Kimi Code sessions under `KIMI_CODE_HOME`: every
/// `sessions/*/<sid>/` with `agents/main/wire.jsonl`, listed by
/// `session_index.jsonl` (whose `sessionDir` is a path on the original
/// machine, so sessions are located by id under `root`). Session
/// directories on disk that the index does not list are found too.
pub fn discover_code(root: &Path) -> Vec<SessionSource> {
    let index = read_index(&root.join("session_index.jsonl"));
    let mut out = Vec::new();
    for wd in sorted_dirs(&root.join("sessions")) {
        for dir in sorted_dirs(&wd) {
            let main = dir.join("agents").join("main").join("wire.jsonl");
            if !main.is_file() {
                continue;
            }
            let sid = file_name(&dir);
            let mut files = vec![main];
            let state = dir.join("state.json");
            if super::common::secondary_file(&state) {
                files.push(state);
            }
            for agent in natural(sorted_dirs(&dir.join("agents"))) {
                let wire = agent.join("wire.jsonl");
                if file_name(&agent) != "main" && super::common::secondary_file(&wire) {
                    files.push(wire);
                }
            }
            let work_dir = index.get(&sid).cloned();
            out.push(SessionSource {
                source: Source::Kimi,
                unit: dir.to_string_lossy().into_owned(),
                files,
                context: serde_json::json!({ FLAVOR: "code", "work_dir": work_dir }),
            });
        }
    }
    out
}

/// Finds legacy kimi-cli sessions under `KIMI_SHARE_DIR`:
/// `sessions/<md5(cwd)>/<uuid>/wire.jsonl` plus `subagents/<id>/wire.jsonl`;
/// the cwd comes from `kimi.json` `work_dirs` (the only map from the hashed
/// directory name back to a path).
pub fn discover_legacy(root: &Path) -> Vec<SessionSource> {
    let cwds = legacy_work_dirs(&root.join("kimi.json"));
    let mut out = Vec::new();
    for wd in sorted_dirs(&root.join("sessions")) {
        let cwd = cwds.get(&file_name(&wd)).cloned();
        for dir in sorted_dirs(&wd) {
            let main = dir.join("wire.jsonl");
            if !main.is_file() {
                continue;
            }
            let mut files = vec![main];
            let state = dir.join("state.json");
            if super::common::secondary_file(&state) {
                files.push(state);
            }
            for sub in natural(sorted_dirs(&dir.join("subagents"))) {
                let wire = sub.join("wire.jsonl");
                if super::common::secondary_file(&wire) {
                    files.push(wire);
                }
            }
            out.push(SessionSource {
                source: Source::Kimi,
                unit: dir.to_string_lossy().into_owned(),
                files,
                context: serde_json::json!({ FLAVOR: "legacy", "cwd": cwd }),
            });
        }
    }
    out
}

/// Extracts one Kimi session of either layout.
pub fn extract(src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    super::resume::run(src, &[], None, false).map(|r| r.extracted)
}

/// Whether a unit is a legacy kimi-cli session (else Kimi Code): its
/// discovery context says so, else its first file is not a main wire.
pub(crate) fn is_legacy(src: &SessionSource) -> bool {
    match src.context.get(FLAVOR).and_then(|v| v.as_str()) {
        Some(flavor) => flavor == "legacy",
        None => !src
            .files
            .first()
            .is_some_and(|f| f.ends_with("agents/main/wire.jsonl")),
    }
}

/// `kimi --session <id>`.
fn kimi_resume(meta: &SessionMeta) -> Option<String> {
    (!meta.session_id.is_empty()).then(|| resume_command("kimi --session", &meta.session_id))
}

/// Kimi Code in the registry.
pub struct KimiCode;

impl Agent for KimiCode {
    const ID: &'static str = "kimi_code";
    const SOURCE: Source = Source::Kimi;
    const ENV: &'static str = "KIMI_CODE_HOME";
    const SCOPE: Option<&'static [&'static str]> = Some(&["sessions", "session_index.jsonl"]);
    type Resume = code::Resume;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".kimi-code"))
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover_code(root)
    }

    fn reads(src: &SessionSource) -> bool {
        src.source == Source::Kimi && !is_legacy(src)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<code::Resume>, ExtractError> {
        code::scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &code::Resume,
    ) -> Result<Option<Outcome<code::Resume>>, ExtractError> {
        code::resume(call, files, state)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        kimi_resume(meta)
    }
}

/// Legacy kimi-cli in the registry.
pub struct KimiLegacy;

impl Agent for KimiLegacy {
    const ID: &'static str = "kimi_legacy";
    const SOURCE: Source = Source::Kimi;
    const ENV: &'static str = "KIMI_SHARE_DIR";
    const SCOPE: Option<&'static [&'static str]> = Some(&["sessions", "kimi.json"]);
    type Resume = legacy::Resume;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".kimi"))
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover_legacy(root)
    }

    fn reads(src: &SessionSource) -> bool {
        src.source == Source::Kimi && is_legacy(src)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<legacy::Resume>, ExtractError> {
        legacy::scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &legacy::Resume,
    ) -> Result<Option<Outcome<legacy::Resume>>, ExtractError> {
        legacy::resume(call, files, state)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        kimi_resume(meta)
    }
}

/// A session's wires in feed order: the main wire (`files[0]`), then every
/// other `wire.jsonl` (`state.json` is read whole, apart).
fn wire_paths(src: &SessionSource) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = src.files.iter().take(1).cloned().collect();
    v.extend(
        src.files
            .iter()
            .skip(1)
            .filter(|f| f.file_name().is_some_and(|n| n == "wire.jsonl"))
            .cloned(),
    );
    v
}

/// The unit's `state.json`, if discovery found one.
fn state_json(src: &SessionSource) -> Option<PathBuf> {
    src.files
        .iter()
        .find(|f| f.file_name().is_some_and(|n| n == "state.json"))
        .cloned()
}

/// Where each of `paths` continues from a checkpoint of per-wire states
/// (`fed[i]` with `wires[i]`): its offset and state, or `None` for a new
/// wire. `None` overall when a fed wire is gone, the order changed or the
/// main wire is another one.
#[allow(clippy::type_complexity)]
fn continued<W: Clone>(
    fed: &[Fed],
    wires: &[W],
    paths: &[PathBuf],
) -> Option<Vec<Option<(Fed, W)>>> {
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let map = align(fed, &refs)?;
    if fed.len() != wires.len() || map.first() != Some(&Some(0)) {
        return None;
    }
    Some(
        map.into_iter()
            .map(|old| old.map(|i| (fed[i].clone(), wires[i].clone())))
            .collect(),
    )
}

/// `sessionId → workDir` from `session_index.jsonl` (last line wins).
fn read_index(path: &Path) -> BTreeMap<String, String> {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        #[serde(rename = "workDir")]
        work_dir: Option<String>,
    }
    let mut map = BTreeMap::new();
    let mut diag = super::Diagnostics::default();
    let _ = super::common::for_each_line(path, 0, 0, &mut diag, |line| {
        if let Ok(Entry {
            session_id: Some(sid),
            work_dir: Some(wd),
        }) = serde_json::from_slice::<Entry>(line.bytes)
        {
            map.insert(sid, wd);
        }
    });
    map
}

/// Hashed directory name (`<md5>` or `<kaos>_<md5>`) → work dir path, from
/// kimi-cli's `kimi.json`.
fn legacy_work_dirs(path: &Path) -> BTreeMap<String, String> {
    #[derive(Deserialize)]
    struct Config {
        #[serde(default)]
        work_dirs: Vec<WorkDir>,
    }
    #[derive(Deserialize)]
    struct WorkDir {
        path: Option<String>,
        kaos: Option<String>,
    }
    let mut map = BTreeMap::new();
    let Ok(bytes) = super::common::read_small(path, 16 << 20) else {
        return map;
    };
    let Ok(cfg) = serde_json::from_slice::<Config>(&bytes) else {
        return map;
    };
    for wd in cfg.work_dirs {
        let Some(p) = wd.path else { continue };
        let hash = md5_hex(p.as_bytes());
        if let Some(kaos) = wd.kaos.filter(|k| !k.is_empty()) {
            map.insert(format!("{kaos}_{hash}"), p.clone());
        }
        map.insert(hash, p);
    }
    map
}

/// MD5 (RFC 1321, the `md-5` crate) as lowercase hex: kimi-cli names a work
/// dir's session folder by it. Only used to match directory names, never
/// for security.
fn md5_hex(bytes: &[u8]) -> String {
    use md5::{Digest, Md5};
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Subdirectories of `dir`, sorted by name; unreadable entries (including
/// symlink loops) are skipped.
fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

/// Directories ordered by name with a trailing number compared as a number
/// (`agent-2` before `agent-10`), so sub-agents keep their spawn order.
fn natural(mut dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    fn key(p: &Path) -> (String, u64, String) {
        let name = file_name(p);
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (stem, num) = name.split_at(name.len() - digits);
        (stem.to_string(), num.parse().unwrap_or(0), name.clone())
    }
    dirs.sort_by_cached_key(|p| key(p));
    dirs
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_agents_sort_by_number() {
        let v = natural(
            ["agent-10", "agent-2", "agent-0", "x"]
                .iter()
                .map(PathBuf::from)
                .collect(),
        );
        let names: Vec<String> = v.iter().map(|p| file_name(p)).collect();
        assert_eq!(names, ["agent-0", "agent-2", "agent-10", "x"]);
    }

    #[test]
    fn md5_matches_kimi_cli_directory_names() {
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex(b"/tmp/work"), "a70cd606fdf06596dff816f4b9b8bc27");
        let long = "/home/mara/Documents/Side Projects/ray tracer/".repeat(3);
        assert_eq!(md5_hex(long.as_bytes()), "e4a530eab41ec21001e9c2aadcd133f7");
    }
}
