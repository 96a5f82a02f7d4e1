//! The session list filter (issue #14): sources, cwd prefixes, time, id or
//! id prefix, title text, sessions with no cwd, source presence; newest
//! first. One definition of a session's activity time for every surface:
//! `updated_ms`, else the newest record (`max_ts_ms`), else `created_ms`.

use super::text::TextClause;
use crate::model::{Manifest, ManifestEntry, Source};
use crate::query::{parse_time, path_has_prefix, QueryError};
use serde::{Deserialize, Serialize};

/// Whether a session's source files are still there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Presence {
    /// The source files exist.
    Present,
    /// The source files are gone (the index keeps the session).
    Gone,
}

/// The list filter; absent fields do not constrain, clauses are ANDed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionListRequest {
    /// Only these sources.
    pub sources: Option<Vec<Source>>,
    /// cwd path prefixes, by whole components (ORed).
    pub cwds: Vec<String>,
    /// Active at or after (activity time ≥ since).
    pub since_ms: Option<i64>,
    /// Started at or before (`created_ms`, else activity time ≤ until).
    pub until_ms: Option<i64>,
    /// The session id, or a prefix of it or of the key.
    pub id: Option<String>,
    /// A literal title clause (folded, whitespace runs as in the filter).
    pub title: Option<String>,
    /// Only sessions with no cwd.
    pub no_cwd: bool,
    /// Present or gone.
    pub presence: Option<Presence>,
}

/// A session's activity time.
pub fn activity_ms(e: &ManifestEntry) -> Option<i64> {
    e.meta.updated_ms.or(e.max_ts_ms).or(e.meta.created_ms)
}

fn invalid(m: impl Into<String>) -> QueryError {
    QueryError::new(crate::ErrorCode::InvalidParam, m)
}

impl SessionListRequest {
    /// Builds the filter from raw pairs: `source` (comma list), `cwd` (comma
    /// list), `since`, `until`, `id`, `title`, `no_cwd` (`true`/`false`),
    /// `presence` (`present`/`gone`). Other keys are ignored.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<SessionListRequest, QueryError> {
        let mut r = SessionListRequest::default();
        for (k, v) in pairs {
            match k {
                "source" => {
                    let mut list = Vec::new();
                    for s in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        list.push(
                            Source::parse(s)
                                .ok_or_else(|| invalid(format!("unknown source {s:?}")))?,
                        );
                    }
                    r.sources = Some(list);
                }
                "cwd" => {
                    r.cwds = v
                        .split(',')
                        .map(|p| p.trim().trim_end_matches('/'))
                        .filter(|p| !p.is_empty())
                        .map(str::to_string)
                        .collect()
                }
                "since" => r.since_ms = Some(parse_time(v, "since")?),
                "until" => r.until_ms = Some(parse_time(v, "until")?),
                "id" => r.id = Some(v.trim().to_string()).filter(|s| !s.is_empty()),
                "title" => r.title = Some(v.to_string()),
                "no_cwd" => {
                    r.no_cwd = match v.trim() {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(invalid("no_cwd must be true or false")),
                    }
                }
                "presence" => {
                    r.presence = Some(match v.trim() {
                        "present" => Presence::Present,
                        "gone" => Presence::Gone,
                        _ => return Err(invalid("presence must be present or gone")),
                    })
                }
                _ => {}
            }
        }
        Ok(r)
    }
}

/// The sessions of `m` that pass `r`, newest activity first, then key.
pub fn list_sessions<'m>(
    m: &'m Manifest,
    r: &SessionListRequest,
) -> Result<Vec<(&'m String, &'m ManifestEntry)>, QueryError> {
    if let (Some(a), Some(b)) = (r.since_ms, r.until_ms) {
        if a > b {
            return Err(invalid("since is after until"));
        }
    }
    let title = match &r.title {
        None => None,
        Some(t) => Some(TextClause::new(t).ok_or_else(|| invalid("title folds to nothing"))?),
    };
    let mut rows: Vec<(&String, &ManifestEntry)> = m
        .sessions
        .iter()
        .filter(|(k, e)| {
            let meta = &e.meta;
            let act = activity_ms(e);
            r.sources.as_ref().is_none_or(|s| s.contains(&meta.source))
                && (r.cwds.is_empty()
                    || meta.cwd.as_deref().is_some_and(|c| {
                        r.cwds
                            .iter()
                            .any(|p| path_has_prefix(c, if p.is_empty() { "/" } else { p }))
                    }))
                && r.since_ms.is_none_or(|s| act.is_some_and(|t| t >= s))
                && r.until_ms
                    .is_none_or(|u| meta.created_ms.or(act).is_some_and(|c| c <= u))
                && r.id
                    .as_deref()
                    .is_none_or(|id| meta.session_id.starts_with(id) || k.starts_with(id))
                && title
                    .as_ref()
                    .is_none_or(|t| meta.title.as_deref().is_some_and(|x| t.matches(x)))
                && (!r.no_cwd || meta.cwd.is_none())
                && r.presence
                    .is_none_or(|p| (p == Presence::Gone) == e.source_gone)
        })
        .collect();
    rows.sort_by(|a, b| activity_ms(b.1).cmp(&activity_ms(a.1)).then(a.0.cmp(b.0)));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> Manifest {
        let e = |id: &str,
                 title: &str,
                 cwd: Option<&str>,
                 updated: Option<i64>,
                 max: i64,
                 gone: bool| {
            json!({
                "source": "pi", "session_id": id, "title": title, "cwd": cwd, "branch": null,
                "created_ms": 10, "updated_ms": updated, "messages": 1, "parent": null,
                "resume": null, "paths": [], "generation_file": "g.json", "records": 1,
                "max_ts_ms": max, "source_gone": gone
            })
        };
        serde_json::from_value(json!({
            "schema": 1, "parser_version": 1, "store_id": "s", "revision": 1, "updated_at_ms": 0,
            "sessions": {
                "pi:abc1": e("abc1", "Fix the Straße parser", Some("/p/a"), Some(300), 300, false),
                "pi:abc2": e("abc2", "Plot tides", None, None, 500, true),
                "pi:xyz9": e("xyz9", "fix  THE strasse\tparser", Some("/q"), Some(100), 100, false),
            }
        }))
        .unwrap()
    }

    fn keys(r: &SessionListRequest) -> Vec<String> {
        list_sessions(&manifest(), r)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn req(pairs: &[(&str, &str)]) -> SessionListRequest {
        SessionListRequest::from_pairs(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn newest_activity_first_with_the_max_ts_fallback() {
        assert_eq!(keys(&req(&[])), ["pi:abc2", "pi:abc1", "pi:xyz9"]);
        assert_eq!(keys(&req(&[("since", "400")])), ["pi:abc2"]);
    }

    #[test]
    fn id_title_cwd_and_presence() {
        assert_eq!(keys(&req(&[("id", "abc")])), ["pi:abc2", "pi:abc1"]);
        assert_eq!(keys(&req(&[("id", "pi:xy")])), ["pi:xyz9"]);
        assert_eq!(
            keys(&req(&[("title", "fix the strasse parser")])),
            ["pi:abc1", "pi:xyz9"]
        );
        assert_eq!(keys(&req(&[("no_cwd", "true")])), ["pi:abc2"]);
        assert_eq!(keys(&req(&[("presence", "gone")])), ["pi:abc2"]);
        assert_eq!(
            keys(&req(&[("presence", "present"), ("cwd", "/p")])),
            ["pi:abc1"]
        );
        let bad = |p: &[(&str, &str)]| {
            SessionListRequest::from_pairs(p.iter().copied())
                .unwrap_err()
                .code
        };
        assert_eq!(bad(&[("presence", "maybe")]), "invalid_param");
        assert_eq!(bad(&[("source", "emacs")]), "invalid_param");
        assert_eq!(
            list_sessions(&manifest(), &req(&[("since", "5"), ("until", "4")]))
                .unwrap_err()
                .code,
            "invalid_param"
        );
    }
}
