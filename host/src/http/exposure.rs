//! Exposure by transport (Orca's `redactForTransport`, DESIGN.md §7): what a
//! client may see depends on where its connection comes from, decided once
//! per request from the peer address and applied by each route's renderer.
//!
//! A same-machine client (a loopback peer) sees everything. A remote client
//! (any other peer; it got past the guard with the token or the login
//! cookie) sees no file path and no resume command: a session's source
//! carries its presence only, degraded roots carry only
//! [`UNVERIFIED_ROOT`] (their count is kept), and export and the offline
//! shards (manifest, generation files, whose content-named bytes hold the
//! paths) are refused unless the server allows them. cwd, titles and
//! snippets stay visible.
//!
//! The peer address comes from the `ConnectInfo<SocketAddr>` extension the
//! connection loop ([`super::conn`]) puts on every request. A request
//! without one is treated as remote: failing closed.

use super::errors::ApiError;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde_json::Value;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

/// The only thing a remote client learns about a degraded source root.
pub const UNVERIFIED_ROOT: &str = "Source root could not be verified.";

/// What a remote client reads for a unit that could not be indexed.
pub const UNINDEXED_FILE: &str = "A source file could not be indexed.";

/// Who is asking, as far as what they may see is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exposure {
    /// A loopback peer: everything.
    Local,
    /// Any other peer (token-authenticated): no paths, no resume commands.
    Remote,
}

impl Exposure {
    /// The exposure of a peer; `None` (no peer known) is remote.
    pub fn of_peer(peer: Option<SocketAddr>) -> Exposure {
        match peer.map(|p| p.ip()) {
            Some(ip) if is_loopback(ip) => Exposure::Local,
            _ => Exposure::Remote,
        }
    }

    /// True for [`Exposure::Remote`].
    pub fn is_remote(self) -> bool {
        self == Exposure::Remote
    }

    /// Withholds the resume command of one search result session.
    pub fn search_session(self, s: &mut recall_core::response::SessionHits) {
        if self.is_remote() {
            s.resume = None;
        }
    }

    /// Withholds paths and resume commands from a session summary or detail
    /// object (the JSON the session routes render: `resume`, `paths`), at
    /// any depth (nested summaries, lineage trees). A `locate` verdict is
    /// redacted where it is made (`engine::verify::SourceCheck::verdict`).
    pub fn session_json(self, v: &mut Value) {
        if !self.is_remote() {
            return;
        }
        match v {
            Value::Object(m) => {
                if m.contains_key("resume") {
                    m.insert("resume".into(), Value::Null);
                }
                if m.contains_key("paths") {
                    m.insert("paths".into(), Value::Array(Vec::new()));
                }
                for (_, x) in m.iter_mut() {
                    if x.is_object() || x.is_array() {
                        self.session_json(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.session_json(x)),
            _ => {}
        }
    }

    /// Degraded roots as the client may see them: `{source, dir, reason,
    /// message}` locally; for a remote client only the fixed reason per
    /// root, `{reason: "unverified", message: UNVERIFIED_ROOT}` (the count is
    /// kept; no source, directory or system message).
    pub fn degraded_roots(self, roots: Vec<crate::index::DegradedRoot>) -> Value {
        match self {
            Exposure::Local => serde_json::to_value(roots).unwrap_or_default(),
            Exposure::Remote => Value::Array(
                roots
                    .iter()
                    .map(
                        |_| serde_json::json!({"reason": "unverified", "message": UNVERIFIED_ROOT}),
                    )
                    .collect(),
            ),
        }
    }

    /// Units that could not be indexed, and a full discovery's left-out
    /// files, as the client may see them: everything locally; for a remote
    /// client no path and no system message (either can name files) — a
    /// failed unit keeps its session key, and each keeps its place (the
    /// count).
    pub fn failed_units(self, units: Vec<crate::index::FailedUnit>) -> Value {
        match self {
            Exposure::Local => serde_json::to_value(units).unwrap_or_default(),
            Exposure::Remote => Value::Array(
                units
                    .iter()
                    .map(|u| serde_json::json!({"key": u.key, "reason": UNINDEXED_FILE}))
                    .collect(),
            ),
        }
    }

    /// Left-out files (`path: reason` lines) as the client may see them:
    /// only their count for a remote client (an array of `null`s).
    pub fn skipped_files(self, files: Vec<String>) -> Value {
        match self {
            Exposure::Local => serde_json::to_value(files).unwrap_or_default(),
            Exposure::Remote => Value::Array(files.iter().map(|_| Value::Null).collect()),
        }
    }

    /// The agent directories looked in, as `{source, dir?, exists}`: no
    /// `dir` for a remote client.
    pub fn root(self, source: recall_core::model::Source, dir: &std::path::Path) -> Value {
        let mut v = serde_json::json!({"source": source, "exists": dir.is_dir()});
        if !self.is_remote() {
            v["dir"] = Value::String(dir.to_string_lossy().into_owned());
        }
        v
    }

    /// Refuses a remote client what only same-machine clients may have
    /// (403 `remote_forbidden`), unless `allowed`.
    pub fn require_local(self, what: &str, allowed: bool) -> Result<(), ApiError> {
        if self.is_remote() && !allowed {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "remote_forbidden",
                format!("{what} is only served to clients on this machine"),
            ));
        }
        Ok(())
    }
}

/// Loopback, including IPv4-mapped IPv6 loopback (`::ffff:127.0.0.1`).
fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

impl<S: Send + Sync> FromRequestParts<S> for Exposure {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Exposure, Infallible> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        Ok(Exposure::of_peer(peer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_peers_are_local() {
        let at = |s: &str| Exposure::of_peer(Some(s.parse().unwrap()));
        assert_eq!(at("127.0.0.1:5"), Exposure::Local);
        assert_eq!(at("127.9.9.9:5"), Exposure::Local);
        assert_eq!(at("[::1]:5"), Exposure::Local);
        assert_eq!(at("[::ffff:127.0.0.1]:5"), Exposure::Local);
        assert_eq!(at("192.168.1.4:5"), Exposure::Remote);
        assert_eq!(at("[::ffff:10.0.0.1]:5"), Exposure::Remote);
        assert_eq!(at("0.0.0.0:5"), Exposure::Remote);
        assert_eq!(Exposure::of_peer(None), Exposure::Remote);
    }

    #[test]
    fn remote_session_json_has_no_paths_or_resume_at_any_depth() {
        let mut v = serde_json::json!({
            "session": {"resume": "claude --resume x", "paths": ["/h/a.jsonl"], "cwd": "/w",
                        "title": "t"},
            "descendants": [{"resume": "codex resume y", "children": [{"resume": "z"}]}],
        });
        let local = v.clone();
        Exposure::Local.session_json(&mut v);
        assert_eq!(v, local);
        Exposure::Remote.session_json(&mut v);
        assert_eq!(v["session"]["resume"], Value::Null);
        assert_eq!(v["session"]["paths"], serde_json::json!([]));
        assert_eq!(v["session"]["cwd"], "/w");
        assert_eq!(v["session"]["title"], "t");
        assert_eq!(v["descendants"][0]["resume"], Value::Null);
        assert_eq!(v["descendants"][0]["children"][0]["resume"], Value::Null);
    }

    #[test]
    fn remote_failed_units_and_left_out_files_name_no_file() {
        use crate::index::FailedUnit;
        let units = vec![
            FailedUnit {
                path: "/h/.codex/sessions/a.jsonl".into(),
                key: Some("codex:a".into()),
                reason: "/h/.codex/sessions/a.jsonl: truncated zstd".into(),
            },
            FailedUnit {
                path: "/h/.claude/projects/p/b.jsonl".into(),
                key: None,
                reason: "not a regular file".into(),
            },
        ];
        let local = Exposure::Local.failed_units(units.clone());
        assert_eq!(local, serde_json::to_value(&units).unwrap());
        let remote = Exposure::Remote.failed_units(units);
        assert_eq!(
            remote,
            serde_json::json!([
                {"key": "codex:a", "reason": UNINDEXED_FILE},
                {"key": null, "reason": UNINDEXED_FILE},
            ])
        );
        let files = vec!["/h/.kimi/sessions/x/wire.jsonl: not a regular file".to_string()];
        assert_eq!(
            Exposure::Local.skipped_files(files.clone()),
            serde_json::json!(files)
        );
        assert_eq!(
            Exposure::Remote.skipped_files(files),
            serde_json::json!([null])
        );
    }

    #[test]
    fn remote_degraded_roots_keep_their_count_only() {
        use crate::index::progress::{DegradedRoot, RootProblem};
        use recall_core::model::Source;
        let root = |source, dir: &str| DegradedRoot {
            source,
            dir: dir.into(),
            reason: RootProblem::PermissionDenied,
            message: format!("Permission denied: {dir}"),
        };
        let roots = vec![root(Source::Codex, "/h/.codex"), root(Source::Pi, "/h/.pi")];
        let local = Exposure::Local.degraded_roots(roots.clone());
        assert_eq!(local[0]["reason"], "permission_denied");
        assert_eq!(local[1]["dir"], "/h/.pi");
        let fixed = serde_json::json!({"reason": "unverified", "message": UNVERIFIED_ROOT});
        assert_eq!(
            Exposure::Remote.degraded_roots(roots),
            Value::Array(vec![fixed.clone(), fixed])
        );
    }
}
