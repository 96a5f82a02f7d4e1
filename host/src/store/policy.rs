//! The store's index policy (DESIGN.md §6 "Policy", Orca's
//! `aiVaultSearch { enabled, historyDays }`), persisted as `policy.json` in
//! the store directory beside the index it governs: whether indexing is
//! enabled, how many days of history to keep (0 = everything), and the
//! paths whose sessions are kept out of the index (`exclude_paths`: a
//! session whose cwd is one of them or lies under one is never indexed).
//!
//! Every command reads it; only an explicit change (`recall config set`,
//! the dashboard's settings) writes it. Clearing the store keeps it. A
//! store without the file has the defaults (enabled, history kept in full);
//! a store keeps the policy it persisted (an explicit 90 stays 90).

use super::fsutil::write_replace;
use super::retention::{horizon, newest_ms, DEFAULT_RETENTION_DAYS};
use recall_core::model::Manifest;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use recall_core::layout::store::POLICY;

/// The index policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Whether the indexer runs. Disabled, the index stays readable.
    pub enabled: bool,
    /// Days of history kept (sessions whose newest message is older are
    /// retired); 0 keeps everything.
    pub history_days: u32,
    /// Absolute paths whose sessions (by cwd) are kept out of the index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_paths: Vec<String>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            enabled: true,
            history_days: DEFAULT_RETENTION_DAYS,
            exclude_paths: Vec::new(),
        }
    }
}

/// Whether `cwd` is one of `paths` or lies under one (whole path
/// components: `/a/b` covers `/a/b` and `/a/b/c`, not `/a/bc`). A session
/// without a cwd is never excluded.
pub fn excluded(paths: &[String], cwd: Option<&str>) -> bool {
    let Some(cwd) = cwd.map(|c| c.trim_end_matches('/')) else {
        return false;
    };
    paths.iter().any(|p| {
        let p = p.trim_end_matches('/');
        if p.is_empty() {
            // `/` itself: everything absolute.
            return cwd.starts_with('/');
        }
        cwd == p
            || cwd
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Parses the `exclude-paths` value of `recall config set`: a comma list of
/// absolute paths (empty = none), trailing slashes dropped, duplicates
/// removed; a relative path is an error (it would match nothing anyone
/// meant).
pub fn parse_exclude_paths(text: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for raw in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if !raw.starts_with('/') {
            return Err(format!(
                "exclude-paths takes absolute paths; `{raw}` is not one"
            ));
        }
        let p = match raw.trim_end_matches('/') {
            "" => "/".to_string(),
            p => p.to_string(),
        };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Why the policy could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file exists but cannot be read or written.
    #[error("cannot access the index policy {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a policy (hand-edited, or damaged). It is left as it
    /// is: nothing is retired on a guess.
    #[error("the index policy {path} is not valid ({source}); fix it or set it again with `recall config set`")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
}

/// Reads the policy of the store at `dir` (the defaults without a file).
pub fn load(dir: &Path) -> Result<Policy, PolicyError> {
    let path = dir.join(POLICY);
    match std::fs::read(&path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes).map_err(|source| PolicyError::Invalid { path, source })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::default()),
        Err(source) => Err(PolicyError::Io { path, source }),
    }
}

/// Writes the policy of the store at `dir` (atomically replaced).
pub fn save(dir: &Path, p: &Policy) -> Result<(), PolicyError> {
    let path = dir.join(POLICY);
    let mut bytes = serde_json::to_vec_pretty(p).map_err(|source| PolicyError::Invalid {
        path: path.clone(),
        source,
    })?;
    bytes.push(b'\n');
    write_replace(dir, ".policy.json.tmp", &path, &bytes)
        .map_err(|source| PolicyError::Io { path, source })
}

/// Sessions the history policy keeps out of the index, and why: what a
/// retiring sweep says in the CLI, `recall status` and the status route
/// (`retired`), so nothing is left out silently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Retired {
    /// How many.
    pub sessions: usize,
    /// The history window that left them out.
    pub history_days: u32,
    /// The sentence, with the command that keeps them.
    pub message: String,
}

impl Retired {
    /// The note for `sessions` retired under `history_days` (`None` when
    /// nothing was retired).
    pub fn note(sessions: usize, history_days: u32) -> Option<Retired> {
        (sessions > 0).then(|| Retired {
            sessions,
            history_days,
            message: format!(
                "retired {sessions} session{} older than {history_days} day{} (recall config set history-days 0 keeps everything)",
                if sessions == 1 { "" } else { "s" },
                if history_days == 1 { "" } else { "s" },
            ),
        })
    }

    /// The retired units the ledger remembers under the policy in force.
    pub fn of_state(st: &super::IndexerState, history_days: u32) -> Option<Retired> {
        let n = st
            .skipped
            .values()
            .filter(|u| u.reason == super::SkipReason::Retired)
            .count();
        Retired::note(n, history_days)
    }
}

/// The indexed sessions a history of `days` would retire at `now_ms`
/// (their keys, sorted): what a change says before it is made.
pub fn would_retire(manifest: &Manifest, now_ms: i64, days: u32) -> Vec<String> {
    let Some(h) = horizon(now_ms, days) else {
        return Vec::new();
    };
    manifest
        .sessions
        .iter()
        .filter(|(_, e)| newest_ms(e).is_some_and(|n| n < h))
        .map(|(k, _)| k.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("recall-policy-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_store_without_a_policy_has_the_defaults_and_a_saved_one_persists() {
        let d = temp("persist");
        assert_eq!(load(&d).unwrap(), Policy::default());
        let p = Policy {
            enabled: false,
            history_days: 0,
            exclude_paths: vec!["/home/me/client-x".into()],
        };
        save(&d, &p).unwrap();
        assert_eq!(load(&d).unwrap(), p);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn excluded_paths_cover_whole_components_only() {
        let paths =
            parse_exclude_paths(" /home/me/client-x/, /srv/private,/home/me/client-x").unwrap();
        assert_eq!(paths, vec!["/home/me/client-x", "/srv/private"]);
        for yes in [
            "/home/me/client-x",
            "/home/me/client-x/",
            "/home/me/client-x/app/src",
            "/srv/private/a",
        ] {
            assert!(excluded(&paths, Some(yes)), "{yes}");
        }
        for no in [
            "/home/me/client-xy",
            "/home/me",
            "/srv",
            "/srv/privateer",
            "",
        ] {
            assert!(!excluded(&paths, Some(no)), "{no}");
        }
        assert!(!excluded(&paths, None));
        assert!(parse_exclude_paths("relative/dir").is_err());
        assert_eq!(parse_exclude_paths("").unwrap(), Vec::<String>::new());
        assert!(excluded(&parse_exclude_paths("/").unwrap(), Some("/x")));
    }

    #[test]
    fn a_retiring_sweep_says_why_and_how_to_keep_everything() {
        assert_eq!(Retired::note(0, 90), None);
        assert_eq!(
            Retired::note(91, 90).unwrap().message,
            "retired 91 sessions older than 90 days (recall config set history-days 0 keeps everything)"
        );
        assert_eq!(
            Retired::note(1, 1).unwrap().message,
            "retired 1 session older than 1 day (recall config set history-days 0 keeps everything)"
        );
    }

    #[test]
    fn the_default_keeps_everything() {
        assert_eq!(Policy::default().history_days, 0);
    }

    #[test]
    fn a_damaged_policy_is_an_error_not_the_defaults() {
        let d = temp("damaged");
        std::fs::write(d.join(POLICY), b"{\"enabled\": tru").unwrap();
        assert!(matches!(load(&d), Err(PolicyError::Invalid { .. })));
        std::fs::write(d.join(POLICY), b"{\"enabled\": true}").unwrap();
        assert!(matches!(load(&d), Err(PolicyError::Invalid { .. })));
        let _ = std::fs::remove_dir_all(&d);
    }
}
