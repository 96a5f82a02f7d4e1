//! Real sessions of the agents corpus-gen does not write (Gemini CLI,
//! Copilot CLI, Qwen Code, OpenCode): the files vendored under
//! `tests/shared/corpus/<corpus>/` (or, for an agent with none there, the
//! repository's own fixtures: a database built from SQL, a folder tree),
//! laid out in a temporary home as each agent writes them and read by the
//! host's own discovery and extractors, so the parity corpus holds exactly
//! what `recall` would index from them.
//!
//! Which agents, and where their files go, is data shared with the Chromium
//! runs: `tests/fixtures/parity-agents.json` (one line per agent; its
//! `about` says the placement rule).

use super::ParityError;
use crate::truth::shared_dir;
use recall_core::model::Source;
use recall_host::extract::{self, Extracted, Roots};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One agent of the table.
#[derive(Clone, Debug, Deserialize)]
pub struct Agent {
    /// Its source id.
    pub source: Source,
    /// Its folder under `tests/shared/corpus/`, if it has one.
    #[serde(default)]
    pub corpus: Option<String>,
    /// Where its corpus files go, relative to the home.
    #[serde(default)]
    pub home: String,
    /// Further files to write, home-relative path → contents.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// SQLite databases to build, home-relative path → repository-relative
    /// SQL file.
    #[serde(default)]
    pub sql: BTreeMap<String, String>,
    /// Folders to copy, home-relative path → repository-relative folder.
    #[serde(default)]
    pub trees: BTreeMap<String, String>,
}

impl Agent {
    /// Where its sessions come from, for messages.
    pub fn origin(&self) -> String {
        match &self.corpus {
            Some(c) => format!("tests/shared/corpus/{c}"),
            None => self
                .sql
                .values()
                .chain(self.trees.values())
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

#[derive(Deserialize)]
struct Table {
    agents: Vec<Agent>,
}

/// `tests/fixtures/parity-agents.json`.
pub fn table_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/parity-agents.json")
}

fn err(path: &Path, message: impl ToString) -> ParityError {
    ParityError::Truth {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// The agents of the table.
pub fn table() -> Result<Vec<Agent>, ParityError> {
    let path = table_path();
    let bytes = std::fs::read(&path).map_err(|e| err(&path, e))?;
    let t: Table = serde_json::from_slice(&bytes).map_err(|e| err(&path, e))?;
    Ok(t.agents)
}

/// The repository's root (the parent of the `tests` crate).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from(".."), Path::to_path_buf)
}

/// Copies the folder `from` into `to`, files and folders only.
fn copy_tree(from: &Path, to: &Path, out: &mut Vec<PathBuf>) -> Result<(), ParityError> {
    std::fs::create_dir_all(to).map_err(|e| err(to, e))?;
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(|e| err(from, e))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        match e.file_type() {
            Ok(t) if t.is_dir() => copy_tree(&src, &dst, out)?,
            Ok(t) if t.is_file() => {
                std::fs::copy(&src, &dst).map_err(|e| err(&dst, e))?;
                out.push(dst);
            }
            _ => {}
        }
    }
    Ok(())
}

/// A home-relative path that stays inside the home.
fn relative(path: &Path, rel: &str) -> Result<PathBuf, ParityError> {
    let p = PathBuf::from(rel);
    if p.components()
        .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        Ok(p)
    } else {
        Err(err(path, format!("{rel:?} is not a plain relative path")))
    }
}

/// Places every agent's corpus files, databases, trees and extra files in
/// `home`; returns the home paths written per agent, extra files excepted.
pub fn place(home: &Path, agents: &[Agent]) -> Result<Vec<Vec<PathBuf>>, ParityError> {
    let table = table_path();
    let mut placed = Vec::new();
    for a in agents {
        for (rel, text) in &a.files {
            let dst = home.join(relative(&table, rel)?);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(|e| err(parent, e))?;
            }
            std::fs::write(&dst, text).map_err(|e| err(&dst, e))?;
        }
        let mut mine = Vec::new();
        for (rel, sql) in &a.sql {
            let dst = home.join(relative(&table, rel)?);
            let src = repo_root().join(relative(&table, sql)?);
            let text = std::fs::read_to_string(&src).map_err(|e| err(&src, e))?;
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(|e| err(parent, e))?;
            }
            recall_host::extract::opencode::db::write_from_sql(&dst, &text)
                .map_err(|e| err(&src, e))?;
            mine.push(dst);
        }
        for (rel, tree) in &a.trees {
            let src = repo_root().join(relative(&table, tree)?);
            copy_tree(&src, &home.join(relative(&table, rel)?), &mut mine)?;
        }
        let Some(corpus) = &a.corpus else {
            placed.push(mine);
            continue;
        };
        let dir = shared_dir().join("corpus").join(corpus);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| err(&dir, e))?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n != "SOURCES.md")
            .collect();
        names.sort();
        if names.is_empty() {
            return Err(err(&dir, "no corpus files"));
        }
        for name in names {
            let rel = relative(&table, &format!("{}/{}", a.home, name.replace("__", "/")))?;
            let dst = home.join(rel);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(|e| err(parent, e))?;
            }
            std::fs::copy(dir.join(&name), &dst).map_err(|e| err(&dst, e))?;
            mine.push(dst);
        }
        placed.push(mine);
    }
    Ok(placed)
}

/// A temporary home, removed on drop.
struct Home(PathBuf);

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every session of the table's agents, as the host extracts it, in
/// discovery order. Each agent must yield at least one session with
/// records, every session must come from a placed file, and an extraction
/// error is an error.
pub fn sessions(agents: &[Agent]) -> Result<Vec<Extracted>, ParityError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let home = Home(std::env::temp_dir().join(format!(
        "recall-parity-agents-{}-{nanos}",
        std::process::id()
    )));
    let placed = place(&home.0, agents)?;
    let all_placed: Vec<&PathBuf> = placed.iter().flatten().collect();
    let mut out = Vec::new();
    for unit in extract::discover(&Roots::resolve(&home.0, |_| None)) {
        let main = unit.files.first().cloned().unwrap_or_default();
        // A database's session is the member path `<db>/<id>`.
        let file =
            extract::member::split(&main).map_or_else(|| main.clone(), |(db, _)| db.to_path_buf());
        if !all_placed.contains(&&file) {
            return Err(err(
                &main,
                "discovered, but no corpus file was placed there",
            ));
        }
        let x = extract::extract(&unit).map_err(|e| err(&main, e))?;
        let Some(x) = x else { continue };
        if x.records.is_empty() {
            continue;
        }
        out.push(x);
    }
    for a in agents {
        if !out.iter().any(|x| x.meta.source == a.source) {
            return Err(err(
                &table_path(),
                format!(
                    "{}: no session with records extracted from {}",
                    a.source.as_str(),
                    a.origin()
                ),
            ));
        }
    }
    Ok(out)
}
