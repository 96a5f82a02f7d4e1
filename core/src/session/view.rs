//! The session view (`GET /api/session/{key}`, `recall show --json`,
//! offline mode and reports): one page of a session's entries at a scope,
//! optionally centred on a search hit's locator. Verifying the hit against
//! the source is the host's (it re-extracts); offline there is no source,
//! so a found hit is `resolved` and a lost one `unavailable`.

use super::locate::{find, Found, Verdict};
use super::summary::SessionSummary;
use crate::model::{Locator, ManifestEntry, Role};
use crate::prepared::PreparedShard;
use crate::query::QueryError;
use serde::{Deserialize, Serialize};

/// Default page size.
pub const DEFAULT_LIMIT: usize = 50;
/// Largest page.
pub const MAX_LIMIT: usize = 500;

/// Which records are listed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// user + assistant records (the default).
    #[default]
    Conversation,
    /// Tool rows too.
    All,
}

/// A session view request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionViewRequest {
    /// The listed scope.
    pub scope: Scope,
    /// Entries skipped (ignored when `locate` finds its record).
    pub offset: u64,
    /// Page size (default 50, 1–500).
    pub limit: Option<u64>,
    /// Centre the page on the record with this locator.
    pub locate: Option<Locator>,
}

impl SessionViewRequest {
    /// Builds the request from raw pairs: `scope`, `offset`, `limit`,
    /// `locate` (JSON or base64url). Other keys are ignored.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<SessionViewRequest, QueryError> {
        let invalid = |m: &str| QueryError::new(crate::ErrorCode::InvalidParam, m);
        let mut r = SessionViewRequest::default();
        for (k, v) in pairs {
            match k {
                "scope" => {
                    r.scope = match v {
                        "conversation" => Scope::Conversation,
                        "all" => Scope::All,
                        _ => return Err(invalid("scope must be conversation or all")),
                    }
                }
                "offset" if !v.is_empty() => {
                    r.offset = v
                        .trim()
                        .parse::<u64>()
                        .map_err(|_| invalid("offset must be a non-negative integer"))?
                }
                "limit" => r.limit = super::list::parse_limit(v),
                "locate" if !v.is_empty() => r.locate = Some(super::locate::parse_locate(v)?),
                _ => {}
            }
        }
        Ok(r)
    }

    /// The page size this request asks for.
    pub fn page(&self) -> usize {
        self.limit
            .map_or(DEFAULT_LIMIT, |n| (n as usize).clamp(1, MAX_LIMIT))
    }
}

/// The session as its view shows it: the summary, its source paths and
/// its generation file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionDetail {
    /// The summary.
    #[serde(flatten)]
    pub summary: SessionSummary,
    /// The source files.
    pub paths: Vec<String>,
    /// The shard's file name.
    pub generation_file: String,
}

/// One listed entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewEntry {
    /// Position in the listing (at this scope).
    pub index: u64,
    /// Where the record lives.
    pub locator: Locator,
    /// Who said it.
    pub role: Role,
    /// Native seq, if any.
    pub seq: Option<u64>,
    /// A subagent record.
    pub subagent: bool,
    /// Superseded by a rollback, undo or branch choice.
    pub superseded: bool,
    /// The text.
    pub text: String,
    /// Index of the record in the shard (all roles).
    pub total_index: u64,
    /// The text was cut by the cap.
    pub truncated: bool,
    /// When (epoch ms).
    pub ts_ms: i64,
}

/// What became of a `locate`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Located {
    /// `resolved`, `stale` or `unavailable`.
    pub state: String,
    /// `exact` or `nearest` (resolved only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// Why it is stale or unavailable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The position in `entries` of the entry showing the record (or the
    /// nearest one before it): `entries[entry_index]` is the hit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry_index: Option<u64>,
    /// The record's index in the shard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_index: Option<u64>,
}

impl Located {
    fn only(state: &str, reason: &str) -> Located {
        Located {
            state: state.into(),
            anchor: None,
            reason: Some(reason.into()),
            entry_index: None,
            total_index: None,
        }
    }
}

/// One page of a session view.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionViewResponse {
    /// Always true.
    pub ok: bool,
    /// The manifest revision read.
    pub revision: u64,
    /// The session.
    pub session: SessionDetail,
    /// The listed scope.
    pub scope: Scope,
    /// Entries at this scope.
    pub total: u64,
    /// First entry of the page.
    pub offset: u64,
    /// Page size.
    pub limit: u64,
    /// The page.
    pub entries: Vec<ViewEntry>,
    /// What became of `locate` (null without one).
    pub locate: Option<Located>,
}

/// How a found hit is checked against its source: `Some(verify)` re-reads
/// it (native), `None` = there is no source to read (offline, reports).
pub type Verifier<'a> = Option<&'a mut dyn FnMut(usize) -> Verdict>;

/// One page of session `key` (entry `e`, shard `p`) as `r` asks.
pub fn session_view(
    key: &str,
    e: &ManifestEntry,
    revision: u64,
    p: &PreparedShard,
    r: &SessionViewRequest,
    verify: Verifier<'_>,
) -> SessionViewResponse {
    let records = &p.shard.records;
    let all = r.scope == Scope::All;
    let visible: Vec<usize> = (0..records.len())
        .filter(|&i| all || records[i].role != Role::Tool)
        .collect();
    let page = r.page();
    let (mut located, anchor) = match &r.locate {
        None => (None, None),
        Some(loc) => {
            let (l, a) = locate(e, p, loc, &visible, verify);
            (Some(l), a)
        }
    };
    let start = match anchor {
        Some(n) => n
            .saturating_sub(page / 2)
            .min(visible.len().saturating_sub(page)),
        None => (r.offset.min(visible.len() as u64)) as usize,
    };
    let end = (start + page).min(visible.len());
    // The hit's place is given within `entries` (the page), not the listing.
    if let (Some(l), Some(n)) = (located.as_mut(), anchor) {
        l.entry_index = Some((n - start) as u64);
    }
    let entries = visible[start..end]
        .iter()
        .enumerate()
        .map(|(n, &i)| {
            let rec = &records[i];
            ViewEntry {
                index: (start + n) as u64,
                locator: rec.locator.clone(),
                role: rec.role,
                seq: rec.seq,
                subagent: rec.subagent,
                superseded: !p.active.get(i).copied().unwrap_or(true),
                text: rec.text.clone(),
                total_index: i as u64,
                truncated: rec.truncated,
                ts_ms: rec.ts_ms,
            }
        })
        .collect();
    SessionViewResponse {
        ok: true,
        revision,
        session: SessionDetail {
            summary: SessionSummary::of(key, e),
            paths: e.meta.paths.clone(),
            generation_file: e.generation_file.clone(),
        },
        scope: r.scope,
        total: visible.len() as u64,
        offset: start as u64,
        limit: page as u64,
        entries,
        locate: located,
    }
}

/// Resolves a locator: what became of it and, when the hit has a place in
/// the listing, its entry index (the page is centred on it).
fn locate(
    e: &ManifestEntry,
    p: &PreparedShard,
    loc: &Locator,
    visible: &[usize],
    verify: Verifier<'_>,
) -> (Located, Option<usize>) {
    let offline = verify.is_none();
    let (record, exact) = match find(&p.shard.records, loc) {
        Found::Exact(i) => (i, true),
        Found::Moved(i) => (i, false),
        Found::Changed(_) | Found::Missing if offline => {
            return (
                Located::only("unavailable", "this record is not in the offline copy"),
                None,
            )
        }
        Found::Changed(_) => {
            return (
                Located::only(
                    "stale",
                    "the record at this place changed since the hit was found",
                ),
                None,
            )
        }
        Found::Missing => {
            return (
                Located::only("stale", "the record is no longer in this session"),
                None,
            )
        }
    };
    // The entry showing the record, or the nearest one before it (e.g. a
    // tool row while only the conversation is listed).
    let (entry_index, shown) = match visible.binary_search(&record) {
        Ok(n) => (n, true),
        Err(n) => (
            n.saturating_sub(1).min(visible.len().saturating_sub(1)),
            false,
        ),
    };
    let place = (!visible.is_empty()).then_some(entry_index);
    let verdict = match verify {
        None => Verdict::Verified,
        Some(_) if e.source_gone => {
            Verdict::Unavailable("the session's source files are gone".into())
        }
        Some(check) => check(record),
    };
    let mut l = match verdict {
        Verdict::Verified => Located {
            state: "resolved".into(),
            anchor: Some(if exact && shown { "exact" } else { "nearest" }.into()),
            reason: None,
            entry_index: None,
            total_index: None,
        },
        Verdict::Stale(reason) => Located::only("stale", &reason),
        Verdict::Unavailable(reason) => Located::only("unavailable", &reason),
    };
    if let Some(n) = place {
        // Also given for stale/unavailable: the indexed copy is still shown.
        // (Made relative to the page by the caller, once the page is known.)
        l.entry_index = Some(n as u64);
        l.total_index = Some(record as u64);
    }
    (l, place)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;

    fn entry(p: &PreparedShard, gone: bool) -> ManifestEntry {
        ManifestEntry {
            meta: p.shard.session.clone(),
            generation_file: "g.json".into(),
            records: p.shard.records.len() as u64,
            max_ts_ms: p.max_ts_ms,
            bytes: 0,
            source_gone: gone,
            files: vec![],
            watermark: 0,
            state: serde_json::Value::Null,
        }
    }

    fn req(pairs: &[(&str, &str)]) -> SessionViewRequest {
        SessionViewRequest::from_pairs(pairs.iter().copied()).unwrap()
    }

    fn loc(p: &PreparedShard, i: usize) -> String {
        serde_json::to_string(&p.shard.records[i].locator).unwrap()
    }

    #[test]
    fn pages_list_the_scope_and_flag_superseded_records() {
        let p = shard();
        let e = entry(&p, false);
        let v = session_view("codex:s1", &e, 3, &p, &req(&[]), None);
        assert_eq!(v.total, 9, "the tool row is not listed");
        let totals: Vec<u64> = v.entries.iter().map(|x| x.total_index).collect();
        assert_eq!(totals, [0, 1, 3, 4, 5, 6, 7, 8, 9]);
        let superseded: Vec<u64> = v
            .entries
            .iter()
            .filter(|x| x.superseded)
            .map(|x| x.total_index)
            .collect();
        assert_eq!(superseded, [3, 4, 7]);
        let all = session_view(
            "codex:s1",
            &e,
            3,
            &p,
            &req(&[("scope", "all"), ("offset", "8"), ("limit", "5")]),
            None,
        );
        assert_eq!((all.total, all.offset, all.entries.len()), (10, 8, 2));
        assert_eq!(all.entries[0].index, 8);
        assert!(all.locate.is_none());
        for bad in [("scope", "tools"), ("offset", "-1"), ("locate", "{")] {
            assert_eq!(
                SessionViewRequest::from_pairs([bad]).unwrap_err().code,
                "invalid_param",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn locate_centres_the_page_and_says_what_became_of_the_hit() {
        let p = shard();
        let e = entry(&p, false);
        // Exact, verified: the page is centred on it.
        let mut verified = |_: usize| Verdict::Verified;
        let v = session_view(
            "codex:s1",
            &e,
            3,
            &p,
            &req(&[("locate", &loc(&p, 7)), ("limit", "3")]),
            Some(&mut verified),
        );
        let l = v.locate.unwrap();
        assert_eq!(
            (l.state.as_str(), l.anchor.as_deref()),
            ("resolved", Some("exact"))
        );
        assert_eq!((l.entry_index, l.total_index), (Some(1), Some(7)));
        assert_eq!(v.offset, 5);
        // `entry_index` is the hit's place in the page.
        assert_eq!(v.entries[1].total_index, 7);
        // A tool row under the conversation scope: the entry before it.
        let v = session_view(
            "codex:s1",
            &e,
            3,
            &p,
            &req(&[("locate", &loc(&p, 2))]),
            Some(&mut verified),
        );
        let l = v.locate.unwrap();
        assert_eq!(
            (l.anchor.as_deref(), l.entry_index),
            (Some("nearest"), Some(1))
        );
        // The source says stale; a gone source is unavailable without asking it.
        let mut stale = |_: usize| Verdict::Stale("changed".into());
        let v = session_view(
            "codex:s1",
            &e,
            3,
            &p,
            &req(&[("locate", &loc(&p, 4))]),
            Some(&mut stale),
        );
        assert_eq!(v.locate.as_ref().unwrap().state, "stale");
        assert_eq!(
            v.locate.unwrap().total_index,
            Some(4),
            "the indexed copy is still shown"
        );
        let gone = entry(&p, true);
        let mut never = |_: usize| -> Verdict { panic!("a gone source is not re-read") };
        let v = session_view(
            "codex:s1",
            &gone,
            3,
            &p,
            &req(&[("locate", &loc(&p, 4))]),
            Some(&mut never),
        );
        assert_eq!(v.locate.unwrap().state, "unavailable");
        // A locator the shard never had: stale natively, unavailable offline.
        let lost = r#"{"kind":"native_event","line_no":99,"content_hash16":"ffffffffffffffff"}"#;
        let v = session_view(
            "codex:s1",
            &e,
            3,
            &p,
            &req(&[("locate", lost)]),
            Some(&mut verified),
        );
        assert_eq!(v.locate.unwrap().state, "stale");
        let v = session_view("codex:s1", &e, 3, &p, &req(&[("locate", lost)]), None);
        let l = v.locate.unwrap();
        assert_eq!(l.state, "unavailable");
        assert!(l.entry_index.is_none());
        // Moved: the same content at another line resolves as nearest.
        let moved = r#"{"kind":"native_event","line_no":42,"content_hash16":"0000000000000005"}"#;
        let v = session_view("codex:s1", &e, 3, &p, &req(&[("locate", moved)]), None);
        let l = v.locate.unwrap();
        assert_eq!(
            (l.anchor.as_deref(), l.total_index),
            (Some("nearest"), Some(5))
        );
    }
}
