//! The session list as clients page it (`GET /api/sessions`, `recall
//! sessions`, offline mode, reports): the [`list`](super::list) filter,
//! newest activity first, a keyset cursor that survives publishes, and the
//! dashboard's home-page facets (projects, activity per day and source).

use super::list::{activity_ms, order, parse_limit, Ignore, SessionListRequest};
use super::summary::SessionSummary;
use crate::model::{Manifest, ManifestEntry};
use crate::naming::hash16;
use crate::query::QueryError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Default page size.
pub const DEFAULT_LIMIT: usize = 50;
/// Largest page.
pub const MAX_LIMIT: usize = 500;
/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// One page of the list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionsRequest {
    /// The filter.
    pub filter: SessionListRequest,
    /// Page size (default 50, 1–500).
    pub limit: Option<u64>,
    /// The previous page's cursor.
    pub cursor: Option<String>,
    /// Add the home page's `projects` and `activity`.
    pub facets: bool,
    /// The viewer's UTC offset in minutes east (activity days are local).
    pub tz_min: i64,
}

fn invalid(m: &str) -> QueryError {
    QueryError::new(crate::ErrorCode::InvalidParam, m)
}

impl SessionsRequest {
    /// Builds the request from raw pairs: the filter's keys
    /// ([`SessionListRequest::from_pairs`]) and `limit`, `cursor`,
    /// `facets` (`true`/`1`), `tz`.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
    ) -> Result<SessionsRequest, QueryError> {
        let mut r = SessionsRequest {
            filter: SessionListRequest::from_pairs(pairs.clone())?,
            ..SessionsRequest::default()
        };
        for (k, v) in pairs {
            match k {
                "limit" => r.limit = parse_limit(v),
                "cursor" => r.cursor = Some(v.to_string()).filter(|c| !c.is_empty()),
                "facets" => r.facets = matches!(v, "true" | "1"),
                "tz" => {
                    r.tz_min = v
                        .trim()
                        .parse::<i64>()
                        .map_err(|_| invalid("tz must be minutes east of UTC"))?
                        .clamp(-24 * 60, 24 * 60)
                }
                _ => {}
            }
        }
        Ok(r)
    }

    /// The page size asked for.
    pub fn page(&self) -> usize {
        self.limit
            .map_or(DEFAULT_LIMIT, |n| (n.min(MAX_LIMIT as u64) as usize).max(1))
    }

    /// The filter's fingerprint, which a cursor must carry.
    fn fingerprint(&self) -> String {
        let mut filter = self.filter.clone();
        if filter.relative.is_some() {
            (filter.since_ms, filter.until_ms) = (None, None);
        }
        hash16(
            serde_json::to_string(&filter)
                .unwrap_or_default()
                .as_bytes(),
        )
    }

    /// The position after which this page starts: the cursor's last
    /// `(sort ts, key)`, or `invalid_cursor`.
    pub fn after(&self) -> Result<Option<(i64, String)>, QueryError> {
        let Some(raw) = &self.cursor else {
            return Ok(None);
        };
        let bad = || {
            QueryError::new(
                crate::ErrorCode::InvalidCursor,
                "the cursor is not valid for this listing",
            )
        };
        let bytes = URL_SAFE_NO_PAD.decode(raw.trim()).map_err(|_| bad())?;
        let cur: ListCursor = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        if cur.v != 1 || cur.qh != self.fingerprint() {
            return Err(bad());
        }
        Ok(Some((cur.ts, cur.key)))
    }
}

/// The list cursor: the filters' fingerprint and the last key returned.
#[derive(Debug, Serialize, Deserialize)]
struct ListCursor {
    v: u32,
    qh: String,
    ts: i64,
    key: String,
}

/// A listed session: its summary and how many children it has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    /// The session.
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// Sessions whose parent it is.
    pub children: u64,
}

/// A project of the home page's picker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Project {
    /// The cwd.
    pub cwd: String,
    /// Sessions in it.
    pub sessions: u64,
    /// Its newest activity.
    pub newest_ms: Option<i64>,
}

/// A model of the home page's picker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCount {
    /// The model name, as the source records it.
    pub model: String,
    /// Sessions that record it.
    pub sessions: u64,
}

/// Sessions and messages of one source on one (local) day.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActivityDay {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// The source id.
    pub source: String,
    /// Sessions last active that day.
    pub sessions: u64,
    /// Their messages.
    pub messages: u64,
}

/// One page of the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsResponse {
    /// Always true.
    pub ok: bool,
    /// The manifest revision read.
    pub revision: u64,
    /// Sessions passing the filter.
    pub total: u64,
    /// The page.
    pub sessions: Vec<SessionRow>,
    /// The next page's cursor.
    pub cursor: Option<String>,
    /// Distinct cwds with counts, most sessions first (with `facets`;
    /// ignores the cwd filter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projects: Option<Vec<Project>>,
    /// Per day and source, oldest first (with `facets`; ignores the time
    /// filter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity: Option<Vec<ActivityDay>>,
    /// Distinct model names with counts, most sessions first (with
    /// `facets`; ignores the model filter; absent when no session records
    /// a model, so homes without models keep their bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ModelCount>>,
}

/// The sort ts a cursor carries (`i64::MIN` for sessions with no time).
fn sort_ts(e: &ManifestEntry) -> i64 {
    activity_ms(e).unwrap_or(i64::MIN)
}

/// One page of the sessions of `m` that pass `r`.
pub fn sessions(m: &Manifest, r: &SessionsRequest) -> Result<SessionsResponse, QueryError> {
    let c = r.filter.compile()?;
    let after = r.after()?;
    let page = r.page();
    let mut rows: Vec<(&String, &ManifestEntry)> = m
        .sessions
        .iter()
        .filter(|(k, e)| c.matches(k, e, Ignore::Nothing))
        .collect();
    rows.sort_by(|a, b| order(*a, *b));
    let start = match &after {
        None => 0,
        Some((ts, key)) => rows.partition_point(|(k, e)| {
            (Reverse(sort_ts(e)), k.as_str()) <= (Reverse(*ts), key.as_str())
        }),
    };
    let end = (start + page).min(rows.len());
    let kids = super::lineage::children(m);
    let sessions = rows[start..end]
        .iter()
        .map(|(k, e)| SessionRow {
            summary: SessionSummary::of(k, e),
            children: kids.get(k.as_str()).map_or(0, Vec::len) as u64,
        })
        .collect();
    let cursor = (end < rows.len()).then(|| {
        let (k, e) = rows[end - 1];
        let cur = ListCursor {
            v: 1,
            qh: r.fingerprint(),
            ts: sort_ts(e),
            key: k.clone(),
        };
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&cur).unwrap_or_default())
    });
    let (projects, activity, models) = if r.facets {
        let c = &c;
        let all = |ignore| {
            m.sessions
                .iter()
                .filter(move |(k, e)| c.matches(k, e, ignore))
                .map(|(_, e)| e)
        };
        (
            Some(projects(all(Ignore::Cwd))),
            Some(activity(all(Ignore::Time), r.tz_min)),
            Some(model_counts(all(Ignore::Model))).filter(|m| !m.is_empty()),
        )
    } else {
        (None, None, None)
    };
    Ok(SessionsResponse {
        ok: true,
        revision: m.revision,
        total: rows.len() as u64,
        sessions,
        cursor,
        projects,
        activity,
        models,
    })
}

/// Distinct model names with their session counts, most sessions first,
/// then name.
fn model_counts<'a>(entries: impl Iterator<Item = &'a ManifestEntry>) -> Vec<ModelCount> {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for e in entries {
        for m in &e.meta.models {
            *counts.entry(m.as_str()).or_insert(0) += 1;
        }
    }
    let mut rows: Vec<(&str, u64)> = counts.into_iter().collect();
    rows.sort_by_key(|(m, n)| (Reverse(*n), *m));
    rows.into_iter()
        .map(|(m, n)| ModelCount {
            model: m.to_string(),
            sessions: n,
        })
        .collect()
}

/// Distinct cwds with their session counts, most sessions first.
fn projects<'a>(entries: impl Iterator<Item = &'a ManifestEntry>) -> Vec<Project> {
    let mut counts: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
    for e in entries {
        if let Some(cwd) = e.meta.cwd.as_deref() {
            let c = counts.entry(cwd).or_insert((0, i64::MIN));
            c.0 += 1;
            c.1 = c.1.max(sort_ts(e));
        }
    }
    let mut rows: Vec<(&str, (u64, i64))> = counts.into_iter().collect();
    rows.sort_by_key(|(cwd, (n, ts))| (Reverse(*n), Reverse(*ts), *cwd));
    rows.into_iter()
        .map(|(cwd, (n, ts))| Project {
            cwd: cwd.to_string(),
            sessions: n,
            newest_ms: (ts > i64::MIN).then_some(ts),
        })
        .collect()
}

/// Sessions and messages per day and source, oldest day first. A session
/// counts on the (local) day of its activity time, with all its messages.
fn activity<'a>(entries: impl Iterator<Item = &'a ManifestEntry>, tz_min: i64) -> Vec<ActivityDay> {
    let mut days: BTreeMap<(i64, &'static str), (u64, u64)> = BTreeMap::new();
    for e in entries {
        let Some(ts) = activity_ms(e) else {
            continue;
        };
        let local = ts.saturating_add(tz_min.clamp(-24 * 60, 24 * 60) * 60_000);
        let c = days
            .entry((local.div_euclid(DAY_MS), e.meta.source.as_str()))
            .or_insert((0, 0));
        c.0 += 1;
        c.1 += e.meta.messages;
    }
    days.into_iter()
        .map(|((day, source), (s, n))| {
            let (y, mo, d) = crate::time::civil_from_days(day);
            ActivityDay {
                day: format!("{y:04}-{mo:02}-{d:02}"),
                source: source.to_string(),
                sessions: s,
                messages: n,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> Manifest {
        let e = |id: &str,
                 cwd: Option<&str>,
                 branch: &str,
                 updated: Option<i64>,
                 max: i64,
                 parent: Option<&str>| {
            json!({
                "source": "pi", "session_id": id, "title": format!("title {id}"), "cwd": cwd,
                "branch": branch, "created_ms": 10, "updated_ms": updated, "messages": 2,
                "parent": parent.map(|p| json!({"key": p, "relation": "fork"})),
                "resume": null, "paths": [], "generation_file": "g.json", "records": 3,
                "max_ts_ms": max, "source_gone": false
            })
        };
        serde_json::from_value(json!({
            "schema": 1, "parser_version": 1, "store_id": "s", "revision": 7, "updated_at_ms": 0,
            "sessions": {
                "pi:a": e("a", Some("/p/x"), "main", Some(3 * DAY_MS), 0, None),
                "pi:b": e("b", Some("/p/x"), "dev", None, 2 * DAY_MS, Some("pi:a")),
                "pi:c": e("c", Some("/q"), "main", Some(DAY_MS), 0, Some("pi:a")),
                "pi:d": e("d", None, "main", Some(DAY_MS), 0, None),
            }
        }))
        .unwrap()
    }

    fn req(p: &[(&str, &str)]) -> SessionsRequest {
        SessionsRequest::from_pairs(p.iter().copied()).unwrap()
    }

    fn keys(r: &SessionsResponse) -> Vec<&str> {
        r.sessions
            .iter()
            .map(|s| s.summary.session_key.as_str())
            .collect()
    }

    #[test]
    fn pages_add_up_to_the_whole_list() {
        let m = manifest();
        let whole = sessions(&m, &req(&[])).unwrap();
        // b has no updated_ms: its newest record places it (the one fallback).
        assert_eq!(keys(&whole), ["pi:a", "pi:b", "pi:c", "pi:d"]);
        assert_eq!(whole.sessions[0].children, 2);
        let mut got = Vec::new();
        let mut r = req(&[("limit", "1")]);
        loop {
            let p = sessions(&m, &r).unwrap();
            got.extend(keys(&p).into_iter().map(str::to_string));
            match p.cursor {
                None => break,
                Some(c) => r.cursor = Some(c),
            }
        }
        assert_eq!(got, ["pi:a", "pi:b", "pi:c", "pi:d"]);
        let c = sessions(&m, &req(&[("limit", "1")]))
            .unwrap()
            .cursor
            .unwrap();
        let foreign = req(&[("limit", "1"), ("branch", "main"), ("cursor", &c)]);
        assert_eq!(sessions(&m, &foreign).unwrap_err().code, "invalid_cursor");
        assert_eq!(
            sessions(&m, &req(&[("cursor", "!!")])).unwrap_err().code,
            "invalid_cursor"
        );
    }

    #[test]
    fn model_filter_and_facet() {
        let mut m = manifest();
        let set = |m: &mut Manifest, k: &str, models: &[&str]| {
            if let Some(e) = m.sessions.get_mut(k) {
                e.meta.models = models.iter().map(|s| s.to_string()).collect();
            }
        };
        set(&mut m, "pi:a", &["gpt-5.5", "Claude-Opus-4-6"]);
        set(&mut m, "pi:b", &["claude-opus-4-6"]);
        set(&mut m, "pi:c", &["gpt-5.5"]);
        // Case-insensitive exact names, ORed; d records none and never passes.
        let r = req(&[("model", "CLAUDE-opus-4-6")]);
        assert_eq!(keys(&sessions(&m, &r).unwrap()), ["pi:a", "pi:b"]);
        let r = req(&[("model", "claude-opus-4-6, gpt-5.5")]);
        assert_eq!(keys(&sessions(&m, &r).unwrap()), ["pi:a", "pi:b", "pi:c"]);
        // A prefix is not a name.
        let r = req(&[("model", "gpt-5")]);
        assert!(sessions(&m, &r).unwrap().sessions.is_empty());
        // The facet ignores the model filter but keeps the others.
        let r = req(&[("model", "gpt-5.5"), ("branch", "main"), ("facets", "true")]);
        let page = sessions(&m, &r).unwrap();
        assert_eq!(keys(&page), ["pi:a", "pi:c"]);
        let facet: Vec<(String, u64)> = page
            .models
            .unwrap()
            .into_iter()
            .map(|c| (c.model, c.sessions))
            .collect();
        assert_eq!(
            facet,
            [
                ("gpt-5.5".to_string(), 2),
                ("Claude-Opus-4-6".to_string(), 1)
            ]
        );
        // No session records a model: the facet is absent, the bytes unchanged.
        let plain = sessions(&manifest(), &req(&[("facets", "true")])).unwrap();
        assert!(plain.models.is_none());
        assert!(!serde_json::to_string(&plain).unwrap().contains("models"));
    }

    #[test]
    fn filters_and_facets() {
        let m = manifest();
        assert_eq!(
            keys(&sessions(&m, &req(&[("branch", "main")])).unwrap()),
            ["pi:a", "pi:c", "pi:d"]
        );
        assert_eq!(
            keys(&sessions(&m, &req(&[("parent", "none")])).unwrap()),
            ["pi:a", "pi:d"]
        );
        assert_eq!(
            keys(&sessions(&m, &req(&[("parent", "pi:a")])).unwrap()),
            ["pi:b", "pi:c"]
        );
        assert_eq!(
            keys(&sessions(&m, &req(&[("q", "TITLE c")])).unwrap()),
            ["pi:c"]
        );
        let f = sessions(&m, &req(&[("facets", "true"), ("cwd", "/p")])).unwrap();
        assert_eq!(keys(&f), ["pi:a", "pi:b"]);
        let projects = f.projects.unwrap();
        assert_eq!(projects[0].cwd, "/p/x");
        assert_eq!(projects[0].sessions, 2);
        assert_eq!(projects.len(), 2, "the picker ignores the cwd filter");
        let days: Vec<(&str, u64)> = f
            .activity
            .as_ref()
            .unwrap()
            .iter()
            .map(|d| (d.day.as_str(), d.sessions))
            .collect();
        assert_eq!(
            days,
            [("1970-01-03", 1), ("1970-01-04", 1)],
            "the cwd filter holds"
        );
        let west = sessions(&m, &req(&[("facets", "1"), ("tz", "-60")])).unwrap();
        assert_eq!(west.activity.unwrap()[0].day, "1970-01-01");
        assert!(SessionsRequest::from_pairs([("tz", "east")]).is_err());
        assert!(SessionsRequest::from_pairs([("source", ",")]).is_err());
    }
}
