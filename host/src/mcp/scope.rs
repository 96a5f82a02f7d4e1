//! What the MCP tools may see: sessions whose cwd is the project directory
//! or under it (all sessions with `--all-projects`), minus the calling
//! agent's own live session; and the id-free marker that stands in for
//! lineage outside that set.
//!
//! A cwd is in the project when its canonical path (symlinks resolved) lies
//! under the project's, where the cwd still exists; otherwise when its
//! lexically normalized form does (`.` and `..` folded; a `..` that climbs
//! out of the root never matches). The caller's own session is the one it
//! names (`--self`, `RECALL_SELF_SESSION`), else every session of the project
//! whose transcript was written within the self window.

use recall_core::model::Manifest;
use recall_core::query::path_has_prefix;
use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// A transcript modified this recently is taken for the caller's own live
/// session (the agent appends to it while it calls the tool).
pub const SELF_WINDOW: Duration = Duration::from_secs(10);

/// The authorization rule of one server.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    /// The project directory as given (`None` = every project).
    pub project: Option<String>,
    /// How recent a write marks the caller's own session (zero = never).
    pub self_window: Duration,
    /// The caller's own session, when it says which (a key or a bare id).
    pub self_session: Option<String>,
}

/// The sessions one call may see.
#[derive(Clone, Debug)]
pub struct View {
    /// The whole manifest (lineage walks through it).
    pub all: Arc<Manifest>,
    /// Authorized sessions only.
    pub visible: Arc<Manifest>,
    /// The sessions excluded as the caller's own.
    pub excluded: Vec<String>,
    /// The project the server is scoped to (`None` = every project).
    pub project: Option<String>,
    /// The rule it was cut by.
    pub scope: Scope,
}

/// `p` with `.` and `..` folded, or `None` when a `..` climbs above the
/// root (or the path is relative).
pub fn normalize(p: &str) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in Path::new(p).components() {
        match c {
            Component::RootDir | Component::Prefix(_) => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out.has_root().then_some(out)
}

/// `p` with its longest existing ancestor canonicalized (symlinks
/// resolved) and the rest appended; `None` when no ancestor but the root
/// exists.
fn canonical(p: &Path) -> Option<PathBuf> {
    let mut rest = Vec::new();
    let mut at = p;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            if at.parent().is_none() && !rest.is_empty() {
                return None;
            }
            return Some(rest.iter().rev().fold(real, |acc, c| acc.join(c)));
        }
        rest.push(at.file_name()?.to_os_string());
        at = at.parent()?;
    }
}

fn under(path: &Path, project: &Path) -> bool {
    path_has_prefix(&path.to_string_lossy(), &project.to_string_lossy())
}

impl Scope {
    /// Whether a session with this cwd lies in the project.
    pub fn covers(&self, cwd: Option<&str>) -> bool {
        let Some(p) = &self.project else {
            return true;
        };
        let Some(cwd) = cwd else { return false };
        let Some(lexical) = normalize(cwd) else {
            return false;
        };
        let project = normalize(p).unwrap_or_else(|| PathBuf::from(p));
        let canon_project = std::fs::canonicalize(&project).unwrap_or_else(|_| project.clone());
        match canonical(&lexical) {
            Some(real) => under(&real, &canon_project),
            None => under(&lexical, &project) || under(&lexical, &canon_project),
        }
    }

    /// The view of `all` at `now`: authorized sessions, minus the caller's
    /// own (see the module doc).
    pub fn view(&self, all: Arc<Manifest>, now: SystemTime) -> View {
        let mut visible = Manifest::clone(&all);
        visible
            .sessions
            .retain(|_, e| self.covers(e.meta.cwd.as_deref()));
        let excluded = self.own_sessions(&visible, now);
        for k in &excluded {
            visible.sessions.remove(k);
        }
        View {
            all,
            visible: Arc::new(visible),
            excluded,
            project: self.project.clone(),
            scope: self.clone(),
        }
    }

    fn own_sessions(&self, m: &Manifest, now: SystemTime) -> Vec<String> {
        if let Some(s) = self.self_session.as_deref().map(str::trim) {
            return m
                .sessions
                .iter()
                .filter(|(k, e)| k.as_str() == s || e.meta.session_id == s)
                .map(|(k, _)| k.clone())
                .collect();
        }
        if self.self_window.is_zero() {
            return Vec::new();
        }
        m.sessions
            .iter()
            .filter(|(_, e)| {
                e.meta.paths.iter().any(|p| {
                    std::fs::metadata(p)
                        .and_then(|m| m.modified())
                        .is_ok_and(|t| {
                            now.duration_since(t).unwrap_or(Duration::ZERO) <= self.self_window
                        })
                })
            })
            .map(|(k, _)| k.clone())
            .collect()
    }
}

impl View {
    /// `m` (a retained snapshot) cut to what this view may see.
    pub fn restrict(&self, m: &Manifest) -> Manifest {
        let mut out = m.clone();
        out.sessions
            .retain(|k, e| !self.excluded.contains(k) && self.scope.covers(e.meta.cwd.as_deref()));
        out
    }

    /// Replaces every lineage node outside the view by an id-free marker,
    /// keeping the shape of the tree. Nodes are objects with a
    /// `session_key`; `parent` fields naming a hidden session are masked.
    pub fn redact(&self, v: &mut Value) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(|x| self.redact(x)),
            Value::Object(map) => {
                let hidden = map
                    .get("session_key")
                    .and_then(Value::as_str)
                    .is_some_and(|k| !self.visible.sessions.contains_key(k));
                if hidden {
                    let children = map.remove("children");
                    map.clear();
                    map.insert("outside_scope".into(), json!(true));
                    if let Some(mut c) = children {
                        self.redact(&mut c);
                        map.insert("children".into(), c);
                    }
                    return;
                }
                if let Some(p) = map.get_mut("parent") {
                    let hidden_parent = p
                        .get("key")
                        .and_then(Value::as_str)
                        .is_some_and(|k| !self.visible.sessions.contains_key(k));
                    if hidden_parent {
                        *p = json!({"outside_scope": true});
                    }
                }
                if let Some(c) = map.get_mut("children") {
                    self.redact(c);
                }
            }
            _ => {}
        }
    }

    /// The visible session `s` names: a key, or an unambiguous bare id.
    pub fn resolve(&self, s: &str) -> Result<String, String> {
        let s = s.trim();
        if self.visible.sessions.contains_key(s) {
            return Ok(s.to_string());
        }
        let found: Vec<&String> = self
            .visible
            .sessions
            .iter()
            .filter(|(_, e)| e.meta.session_id == s)
            .map(|(k, _)| k)
            .collect();
        match found.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(format!(
                "session_not_found: no session {s:?} among the sessions this server may read"
            )),
            many => Err(format!(
                "ambiguous_session: {s:?} is the id of {} sessions; pass the key <source>:<id>",
                many.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_covers_by_whole_components() {
        let s = Scope {
            project: Some("/home/u/code/a".into()),
            ..Scope::default()
        };
        assert!(s.covers(Some("/home/u/code/a")));
        assert!(s.covers(Some("/home/u/code/a/sub")));
        assert!(!s.covers(Some("/home/u/code/ab")));
        assert!(!s.covers(None));
        let all = Scope::default();
        assert!(all.covers(None));
    }
}

#[cfg(test)]
mod redact_tests {
    use super::*;

    fn manifest() -> Arc<Manifest> {
        let entry = |id: &str, cwd: &str, parent: Option<&str>| {
            json!({
                "source": "codex", "session_id": id, "title": null, "cwd": cwd, "branch": null,
                "created_ms": 1, "updated_ms": 2, "messages": 1,
                "parent": parent.map(|p| json!({"key": p, "relation": "fork"})),
                "resume": null, "paths": [], "generation_file": "g.json", "records": 1
            })
        };
        let m = json!({
            "schema": 1, "parser_version": 1, "store_id": "s", "revision": 1, "updated_at_ms": 0,
            "sessions": {
                "codex:root": entry("root", "/elsewhere", None),
                "codex:mid": entry("mid", "/p", Some("codex:root")),
                "codex:kid": entry("kid", "/other", Some("codex:mid")),
                "codex:grandkid": entry("grandkid", "/p/sub", Some("codex:kid")),
            }
        });
        Arc::new(serde_json::from_value(m).unwrap())
    }

    #[test]
    fn lineage_outside_the_project_reveals_no_id() {
        let scope = Scope {
            project: Some("/p".into()),
            ..Scope::default()
        };
        let all = manifest();
        let view = scope.view(all.clone(), SystemTime::now());
        assert_eq!(view.visible.sessions.len(), 2);
        let mut anc = Value::Array(crate::lineage::ancestors(&all, "codex:mid"));
        let mut desc = Value::Array(crate::lineage::descendants(&all, "codex:mid"));
        view.redact(&mut anc);
        view.redact(&mut desc);
        assert_eq!(anc, json!([{"outside_scope": true}]));
        let text = desc.to_string();
        assert!(
            !text.contains("codex:kid") && !text.contains("\"kid\""),
            "{text}"
        );
        assert_eq!(desc[0]["outside_scope"], true);
        let grandkid = &desc[0]["children"][0];
        assert_eq!(grandkid["session_key"], "codex:grandkid");
        assert_eq!(grandkid["parent"], json!({"outside_scope": true}));
    }
}

#[cfg(test)]
mod path_tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("recall-scope-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::canonicalize(&d).unwrap()
    }

    /// Issue 24 item 10: `..` escapes and symlinks out of the project are
    /// outside it; a symlink into the project is inside.
    #[test]
    fn project_scope_compares_normalized_and_canonical_paths() {
        let root = tmp("paths");
        let proj = root.join("proj");
        let secret = root.join("secret");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(&secret).unwrap();
        std::os::unix::fs::symlink(&secret, proj.join("link")).unwrap();
        std::os::unix::fs::symlink(&proj, root.join("alias")).unwrap();
        let s = Scope {
            project: Some(proj.to_string_lossy().into_owned()),
            ..Scope::default()
        };
        let p = |x: &str| format!("{}/{x}", proj.display());
        assert!(s.covers(Some(&p("sub/../sub"))));
        assert!(!s.covers(Some(&p("../secret"))), "a .. escape");
        assert!(!s.covers(Some(&p("../../../../../../../../etc"))));
        assert!(!s.covers(Some(&p("link"))), "a symlink out of the project");
        assert!(!s.covers(Some(&p("link/deeper"))), "under a symlink out");
        assert!(
            s.covers(Some(&format!("{}/alias", root.display()))),
            "recorded through a symlink to the project"
        );
        assert!(!s.covers(Some("relative/path")));
        let _ = std::fs::remove_dir_all(&root);
    }

    fn manifest_with(paths: &[(&str, &Path)], cwd: &str) -> Arc<Manifest> {
        let sessions: serde_json::Map<String, Value> = paths
            .iter()
            .map(|(id, p)| {
                (
                    format!("codex:{id}"),
                    json!({
                        "source": "codex", "session_id": id, "title": null, "cwd": cwd, "branch": null,
                        "created_ms": 1, "updated_ms": 2, "messages": 1, "parent": null,
                        "resume": null, "paths": [p], "generation_file": "g.json", "records": 1
                    }),
                )
            })
            .collect();
        let m = json!({
            "schema": 1, "parser_version": 1, "store_id": "s", "revision": 1, "updated_at_ms": 0,
            "sessions": sessions
        });
        Arc::new(serde_json::from_value(m).unwrap())
    }

    /// Issue 24 item 11: every session of the project written within the
    /// window is hidden (not only the newest), and an explicit identity
    /// hides exactly that session.
    #[test]
    fn self_exclusion_hides_every_recent_session_or_the_named_one() {
        let root = tmp("self");
        let (a, b, old) = (root.join("a"), root.join("b"), root.join("old"));
        for f in [&a, &b, &old] {
            std::fs::write(f, "x").unwrap();
        }
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .append(true)
            .open(&old)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
        let cwd = root.to_string_lossy().into_owned();
        let m = manifest_with(&[("a", &a), ("b", &b), ("old", &old)], &cwd);
        let by_window = Scope {
            project: Some(cwd.clone()),
            self_window: Duration::from_secs(30),
            self_session: None,
        };
        let v = by_window.view(m.clone(), SystemTime::now());
        assert_eq!(v.excluded.len(), 2, "{:?}", v.excluded);
        assert_eq!(v.visible.sessions.keys().collect::<Vec<_>>(), ["codex:old"]);
        let named = Scope {
            self_session: Some("b".into()),
            ..by_window
        };
        let v = named.view(m, SystemTime::now());
        assert_eq!(v.excluded, ["codex:b"]);
        assert_eq!(v.visible.sessions.len(), 2);
        let _ = std::fs::remove_dir_all(&root);
    }
}
