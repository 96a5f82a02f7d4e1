//! Extractor for OpenCode sessions (anomalyco/opencode, formerly
//! sst/opencode): the SQLite database `opencode.db` of OpenCode 1.2 and
//! later ([`db`]), and the JSON tree of earlier versions ([`legacy`]),
//! both turned into records by the same rules ([`convert`]).
//!
//! Root: `$OPENCODE_DB` when set (the database file; a relative path is
//! relative to the data directory, as OpenCode resolves it), else the data
//! directory `${XDG_DATA_HOME:-~/.local/share}/opencode`, which holds
//! `opencode.db`, the databases of other release channels
//! (`opencode-<channel>.db`) and the legacy `storage/` tree.
//!
//! Units: one per session. A database session is the member path
//! `<database>/<session id>` ([`super::member`]); its discovery context is
//! the session's `time_updated` with its message count and newest message
//! update, so a sweep reads again only the sessions that moved. A legacy
//! session is its JSON files; a session in both is read from the database.
//! A database that cannot be read at discovery (locked past the busy
//! timeout, corrupt, not a database) is reported as a degraded root and
//! its sessions are kept as they were.

pub mod convert;
pub mod db;
pub mod legacy;

use super::agent::Agent;
use super::draft::mtime_ms;
use super::feed::{Call, Fed, Outcome};
use super::{member, ExtractError, SessionSource};
use recall_core::model::{SessionMeta, Source};
use serde_json::json;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// OpenCode in the registry.
pub struct OpenCode;

/// The default database of the data directory.
const DB: &str = "opencode.db";

impl Agent for OpenCode {
    const ID: &'static str = "opencode";
    const SOURCE: Source = Source::OpenCode;
    const ENV: &'static str = "OPENCODE_DB";
    const FILE_ROOT: bool = true;
    // The data directory also holds logs, tool output and git snapshots.
    const SCOPE: Option<&'static [&'static str]> = Some(&[
        "opencode.db",
        "opencode.db-wal",
        "opencode-beta.db",
        "opencode-beta.db-wal",
        "opencode-dev.db",
        "opencode-dev.db-wal",
        "storage",
    ]);
    type Resume = ();

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".local/share/opencode"))
    }

    fn root_with(home: &Path, var: &dyn Fn(&str) -> Option<PathBuf>) -> PathBuf {
        let data = var("XDG_DATA_HOME")
            .filter(|d| d.is_absolute())
            .unwrap_or_else(|| home.join(".local/share"))
            .join("opencode");
        match var(Self::ENV) {
            // `:memory:` keeps nothing on disk: only the legacy tree is left.
            Some(db) if db.file_name().is_some_and(|n| n == ":memory:") => data,
            Some(db) => data.join(db),
            None => data,
        }
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<()>, ExtractError> {
        let main = call.src.files.first().cloned().unwrap_or_default();
        let fail = |e| ExtractError::Io {
            path: main.clone(),
            source: e,
        };
        let mut reading = convert::Reading::default();
        let (loaded, paths, fallback) = match member::split(&main) {
            Some((database, id)) => (
                db::load(database, id, &mut reading).map_err(fail)?,
                vec![main.to_string_lossy().into_owned()],
                mtime_ms(database),
            ),
            // Every file of the unit: re-reading the session (a hit's
            // check, Deep Search) reads exactly the files listed.
            None => (
                legacy::load(call, &mut reading).map_err(fail)?,
                call.src
                    .files
                    .iter()
                    .map(|f| f.to_string_lossy().into_owned())
                    .collect(),
                mtime_ms(&main),
            ),
        };
        let d = reading.diagnostics();
        call.diag.bytes += d.bytes;
        call.diag.lines += d.lines;
        call.diag.bad_lines += d.bad_lines;
        call.diag.huge_lines += d.huge_lines;
        call.diag.truncated |= d.truncated;
        let extracted = loaded.and_then(|(s, messages)| {
            convert::session(&s, &messages, paths, Default::default(), fallback)
        });
        Ok(Outcome {
            extracted,
            files: Vec::new(),
            state: None,
        })
    }

    fn resume(_: &mut Call, _: &[Fed], _: &()) -> Result<Option<Outcome<()>>, ExtractError> {
        // Rows are not a log: a changed session is read whole.
        Ok(None)
    }

    fn resume_command(meta: &SessionMeta, _subagent: bool) -> Option<String> {
        // `opencode --session <id>` / `-s` (opencode.ai/docs/cli; the TUI's
        // `--session` option): ids are `ses_` and base62.
        is_session_id(&meta.session_id)
            .then(|| super::common::resume_command("opencode --session", &meta.session_id))
    }
}

/// OpenCode's session id syntax: `ses_` then ASCII letters and digits
/// (`Identifier.ascending("session")`).
pub fn is_session_id(id: &str) -> bool {
    id.strip_prefix("ses_").is_some_and(|rest| {
        !rest.is_empty() && rest.len() <= 64 && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

/// The databases of data directory `dir`: `opencode.db` first, then the
/// other channels' `opencode-*.db`, in name order.
fn databases(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == DB || (n.starts_with("opencode-") && n.ends_with(".db")))
        })
        .collect();
    v.sort_by_key(|p| (p.file_name().is_none_or(|n| n != DB), p.clone()));
    v
}

/// Every session under `root` (a database file, or the data directory).
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let file = std::fs::metadata(root).is_ok_and(|m| m.is_file());
    let dbs = if file {
        vec![root.to_path_buf()]
    } else {
        databases(root)
    };
    let mut out = Vec::new();
    let mut ids = HashSet::new();
    for database in dbs {
        if !super::common::secondary_file(&database) {
            continue;
        }
        let listed = match db::list(&database) {
            Ok(l) => l,
            Err(e) => {
                super::common::note_unreadable_store(&database, format!("cannot read: {e}"));
                continue;
            }
        };
        for l in listed {
            let Some(path) = member::path(&database, &l.session.id) else {
                continue;
            };
            if !ids.insert(l.session.id.clone()) {
                continue; // the first database holding it wins
            }
            out.push(SessionSource {
                source: Source::OpenCode,
                unit: path.to_string_lossy().into_owned(),
                files: vec![path],
                context: json!({ "v": l.version, "parent": l.session.parent }),
            });
        }
    }
    if !file {
        out.extend(legacy::discover(&root.join("storage"), &ids));
    }
    out
}
