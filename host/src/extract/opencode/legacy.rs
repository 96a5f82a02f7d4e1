//! OpenCode's JSON tree before 1.2 (`<data>/storage/`), which upgraded
//! installs keep beside the database: `session/<project>/<ses>.json`
//! (`Session.Info`: `id`, `directory`, `parentID`, `title`, `time`),
//! `message/<ses>/<msg>.json` (`MessageV2.Info` with its ids) and
//! `part/<msg>/<prt>.json` (`MessageV2.Part`). The layout is that of
//! OpenCode's `storage/json-migration.ts`, which moves it into the
//! database; a session the database holds is read from the database.
//!
//! A unit is one session: its session file first, then its message files
//! and their part files, each directory listed in name order (OpenCode's
//! ids ascend with time).

use super::super::common::{read_small, secondary_file, MAX_LINE_BYTES};
use super::super::feed::Call;
use super::convert::{MessageRow, Reading, SessionRow};
use recall_core::model::Source;
use serde_json::Value;
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

/// The `*.json` files of `dir`, in name order.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

fn stem(p: &Path) -> Option<&str> {
    p.file_stem()?.to_str()
}

/// Every session of the tree at `storage` that `skip` (the ids the
/// databases hold) does not name.
pub fn discover(storage: &Path, skip: &HashSet<String>) -> Vec<super::super::SessionSource> {
    let Ok(rd) = std::fs::read_dir(storage.join("session")) else {
        return Vec::new();
    };
    let mut projects: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    projects.sort();
    let mut out = Vec::new();
    for session in projects.iter().flat_map(|p| json_files(p)) {
        let Some(id) = stem(&session).map(str::to_string) else {
            continue;
        };
        if skip.contains(&id) || !secondary_file(&session) {
            continue;
        }
        let mut files = vec![session.clone()];
        for m in json_files(&storage.join("message").join(&id)) {
            if !secondary_file(&m) {
                continue;
            }
            let parts = stem(&m).map(|mid| json_files(&storage.join("part").join(mid)));
            files.push(m);
            files.extend(parts.into_iter().flatten().filter(|p| secondary_file(p)));
        }
        out.push(super::super::SessionSource {
            source: Source::OpenCode,
            unit: session.to_string_lossy().into_owned(),
            files,
            context: Value::Null,
        });
    }
    out
}

/// One JSON file of the unit, parsed (counted as a row).
fn read(path: &Path, reading: &mut Reading) -> io::Result<Option<Value>> {
    let len = std::fs::metadata(path)?.len();
    if len as usize > MAX_LINE_BYTES {
        reading.huge += 1;
        return Ok(None);
    }
    if !reading.admit(len) {
        return Ok(None);
    }
    let bytes = read_small(path, MAX_LINE_BYTES as u64)?;
    Ok(reading.parse(&bytes))
}

/// The unit's session row and messages with their parts. The session file
/// must be read; a message or part file that vanished since discovery is
/// left out.
pub(crate) fn load(
    call: &Call,
    reading: &mut Reading,
) -> io::Result<Option<(SessionRow, Vec<MessageRow>)>> {
    let files = call.src.files.clone();
    let Some(main) = files.first() else {
        return Ok(None);
    };
    let Some(s) = read(main, reading)? else {
        return Ok(None);
    };
    let str_at = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let session = SessionRow {
        id: str_at(&s, "id")
            .or(stem(main).map(str::to_string))
            .unwrap_or_default(),
        directory: str_at(&s, "directory"),
        title: str_at(&s, "title"),
        parent: str_at(&s, "parentID"),
        updated_ms: s
            .get("time")
            .and_then(|t| t.get("updated"))
            .and_then(Value::as_i64),
    };
    let mut messages: Vec<MessageRow> = Vec::new();
    for f in &files[1..] {
        let kind = f.parent().and_then(Path::parent).and_then(Path::file_name);
        let data = match read(f, reading) {
            Ok(Some(v)) => v,
            Ok(None) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let Some(id) = stem(f).map(str::to_string) else {
            continue;
        };
        if kind.is_some_and(|k| k == "message") {
            let time_ms = data
                .get("time")
                .and_then(|t| t.get("created"))
                .and_then(Value::as_i64);
            messages.push(MessageRow {
                id,
                time_ms,
                data,
                parts: Vec::new(),
            });
        } else if let Some(m) = messages.last_mut() {
            // A part file follows its message's file (see `discover`).
            let owner = f.parent().and_then(Path::file_name);
            if owner.is_some_and(|o| o.to_str() == Some(m.id.as_str())) {
                m.parts.push((id, data));
            }
        }
    }
    messages.sort_by(|a, b| (a.time_ms, &a.id).cmp(&(b.time_ms, &b.id)));
    Ok(Some((session, messages)))
}
