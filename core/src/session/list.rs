//! The session list filter (issue #14): sources, cwd prefixes, time, id or
//! id prefix, title text, sessions with no cwd, source presence, parent,
//! branch, model and metadata terms; newest first. One definition of a session's activity time for every surface:
//! `updated_ms`, else the newest record (`max_ts_ms`), else `created_ms`.

use super::text::TextClause;
use crate::fold::fold_str;
use crate::model::{Manifest, ManifestEntry, Source};
use crate::query::{
    model_matches, parse_models, parse_terms, path_has_prefix, QueryError, TimeFields,
};
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
    /// `Some(None)` = top-level sessions only (`parent=none`);
    /// `Some(Some(key))` = the children of `key`.
    pub parent: Option<Option<String>>,
    /// Branch names (exact), any of them.
    pub branches: Vec<String>,
    /// Lowercased model names (case-insensitive exact), any of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
    /// Folded query terms, all of which must occur in the title, cwd or branch.
    pub terms: Vec<String>,
    /// The bounds as given when one is relative (`7d`): what the cursor
    /// fingerprints instead of `since_ms`/`until_ms`, which move with `now`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative: Option<String>,
}

/// Which filters a facet ignores (so the picker still offers the others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignore {
    /// None.
    Nothing,
    /// The cwd prefixes (the project picker).
    Cwd,
    /// `since` and `until` (the activity chart).
    Time,
    /// The model names (the model picker).
    Model,
}

/// A session's activity time.
pub fn activity_ms(e: &ManifestEntry) -> Option<i64> {
    e.meta.updated_ms.or(e.max_ts_ms).or(e.meta.created_ms)
}

fn invalid(m: impl Into<String>) -> QueryError {
    QueryError::new(crate::ErrorCode::InvalidParam, m)
}

/// Reads a page size as every listing does: an integer clamped later,
/// a huge one the largest page, a hugely negative one 1, anything else
/// the default (`None`).
pub fn parse_limit(v: &str) -> Option<u64> {
    use std::num::IntErrorKind;
    match v.trim().parse::<i64>() {
        Ok(n) => Some(n.max(1) as u64),
        Err(e) if *e.kind() == IntErrorKind::PosOverflow => Some(u64::MAX),
        Err(e) if *e.kind() == IntErrorKind::NegOverflow => Some(1),
        Err(_) => None,
    }
}

/// A comma list, trimmed, empty items dropped.
fn list(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

impl SessionListRequest {
    /// Builds the filter from raw pairs: `source` (comma list), `cwd` (comma
    /// list), `since`, `until`, `id`, `title`, `no_cwd` (`true`/`false`),
    /// `presence` (`present`/`gone`), `parent` (a key, or `none`), `branch`
    /// (comma list, exact), `model` (comma list, case-insensitive exact),
    /// `q` (terms and phrases). Other keys are ignored.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<SessionListRequest, QueryError> {
        let mut r = SessionListRequest::default();
        let mut times = TimeFields::default();
        for (k, v) in pairs {
            if times.take(k, v) {
                continue;
            }
            match k {
                "source" => {
                    let mut out = Vec::new();
                    for s in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        let src = Source::parse(s)
                            .ok_or_else(|| invalid(format!("unknown source {s:?}")))?;
                        if !out.contains(&src) {
                            out.push(src);
                        }
                    }
                    if out.is_empty() {
                        return Err(invalid("source is empty"));
                    }
                    r.sources = Some(out);
                }
                "parent" => {
                    r.parent = match v {
                        "" => None,
                        "none" => Some(None),
                        k => Some(Some(k.to_string())),
                    }
                }
                "branch" => r.branches = list(v),
                "model" => r.models = parse_models(v),
                "q" => r.terms = parse_terms(v),
                "cwd" => {
                    r.cwds = v
                        .split(',')
                        .map(|p| p.trim().trim_end_matches('/'))
                        .filter(|p| !p.is_empty())
                        .map(str::to_string)
                        .collect()
                }
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
        (r.since_ms, r.until_ms) = times.resolve()?;
        r.relative = times.relative_key();
        Ok(r)
    }
}

impl SessionListRequest {
    /// Checks the request as a whole (`since` after `until`, a title that
    /// folds to nothing) and compiles its title clause.
    pub fn compile(&self) -> Result<Compiled<'_>, QueryError> {
        if let (Some(a), Some(b)) = (self.since_ms, self.until_ms) {
            if a > b {
                return Err(invalid("since is after until"));
            }
        }
        let title = match &self.title {
            None => None,
            Some(t) => Some(TextClause::new(t).ok_or_else(|| invalid("title folds to nothing"))?),
        };
        Ok(Compiled { r: self, title })
    }
}

/// A checked [`SessionListRequest`], ready to test sessions.
pub struct Compiled<'r> {
    r: &'r SessionListRequest,
    title: Option<TextClause>,
}

impl Compiled<'_> {
    /// Whether session `k` passes every filter but those `ignore` names.
    pub fn matches(&self, k: &str, e: &ManifestEntry, ignore: Ignore) -> bool {
        let r = self.r;
        let meta = &e.meta;
        let act = activity_ms(e);
        r.sources.as_ref().is_none_or(|s| s.contains(&meta.source))
            && (ignore == Ignore::Cwd
                || r.cwds.is_empty()
                || meta.cwd.as_deref().is_some_and(|c| {
                    r.cwds
                        .iter()
                        .any(|p| path_has_prefix(c, if p.is_empty() { "/" } else { p }))
                }))
            && (ignore == Ignore::Time || r.since_ms.is_none_or(|s| act.is_some_and(|t| t >= s)))
            && (ignore == Ignore::Time
                || r.until_ms
                    .is_none_or(|u| meta.created_ms.or(act).is_some_and(|c| c <= u)))
            && r.id
                .as_deref()
                .is_none_or(|id| meta.session_id.starts_with(id) || k.starts_with(id))
            && self
                .title
                .as_ref()
                .is_none_or(|t| meta.title.as_deref().is_some_and(|x| t.matches(x)))
            && (!r.no_cwd || meta.cwd.is_none())
            && r.presence
                .is_none_or(|p| (p == Presence::Gone) == e.source_gone)
            && (r.branches.is_empty()
                || meta.branch.as_ref().is_some_and(|b| r.branches.contains(b)))
            && (ignore == Ignore::Model || model_matches(&r.models, &meta.models))
            && match &r.parent {
                None => true,
                Some(None) => meta.parent.is_none(),
                Some(Some(p)) => meta.parent.as_ref().is_some_and(|x| &x.key == p),
            }
            && self.terms_match(e)
    }

    /// Every query term occurs in the folded title, cwd or branch (folded
    /// as search folds message text, so `"Straße"` finds `strasse`).
    fn terms_match(&self, e: &ManifestEntry) -> bool {
        if self.r.terms.is_empty() {
            return true;
        }
        let m = &e.meta;
        let fields = [m.title.as_deref(), m.cwd.as_deref(), m.branch.as_deref()];
        let hay: Vec<String> = fields.iter().flatten().map(|f| fold_str(f)).collect();
        self.r
            .terms
            .iter()
            .all(|t| hay.iter().any(|h| h.contains(t.as_str())))
    }
}

/// The sort key of the list: newest activity first, then key.
pub fn order(a: (&String, &ManifestEntry), b: (&String, &ManifestEntry)) -> std::cmp::Ordering {
    activity_ms(b.1).cmp(&activity_ms(a.1)).then(a.0.cmp(b.0))
}

/// The sessions of `m` that pass `r`, newest activity first, then key.
pub fn list_sessions<'m>(
    m: &'m Manifest,
    r: &SessionListRequest,
) -> Result<Vec<(&'m String, &'m ManifestEntry)>, QueryError> {
    let c = r.compile()?;
    let mut rows: Vec<(&String, &ManifestEntry)> = m
        .sessions
        .iter()
        .filter(|(k, e)| c.matches(k, e, Ignore::Nothing))
        .collect();
    rows.sort_by(|a, b| order(*a, *b));
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
