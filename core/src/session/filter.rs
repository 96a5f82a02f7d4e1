//! Filtering a session's entries [DSH filterEvents]: index range, time
//! range, roles, state, subagent, and a literal text clause. Clauses are
//! ANDed, values inside a list ORed, an empty list matches nothing; a
//! malformed or inverted range is `invalid_filter`.

use super::text::TextClause;
use super::{page_size, Entry, SessionRef};
use crate::model::Role;
use crate::prepared::PreparedShard;
use crate::query::{QueryError, TimeFields};
use serde::{Deserialize, Serialize};

/// Which records by state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StateFilter {
    /// Active records only.
    Active,
    /// Superseded records only.
    Superseded,
    /// Both (the default).
    #[default]
    Both,
}

/// The clauses of a filter. Absent fields do not constrain.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Filter {
    /// First record index, inclusive.
    pub from_index: Option<u64>,
    /// Last record index, inclusive.
    pub to_index: Option<u64>,
    /// Earliest `ts_ms`, inclusive.
    pub since_ms: Option<i64>,
    /// Latest `ts_ms`, inclusive.
    pub until_ms: Option<i64>,
    /// Roles (ORed); an empty list matches nothing.
    pub roles: Option<Vec<Role>>,
    /// Active, superseded or both.
    pub state: StateFilter,
    /// `Some(true)` subagent records only, `Some(false)` none of them.
    pub subagent: Option<bool>,
    /// A literal text clause (see [`TextClause`]).
    pub text: Option<String>,
}

fn invalid(message: impl Into<String>) -> QueryError {
    QueryError::new(crate::ErrorCode::InvalidFilter, message)
}

impl Filter {
    /// Builds a filter from raw string pairs (HTTP query string, CLI flags):
    /// `from`, `to` (indices), `since`, `until` (epoch ms or RFC 3339),
    /// `role` (comma list), `state`, `subagent` (`true`/`false`), `text`.
    /// Other keys are ignored. Unparsable values are `invalid_filter`.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Filter, QueryError> {
        let mut f = Filter::default();
        let mut times = TimeFields::default();
        for (k, v) in pairs {
            if times.take(k, v) {
                continue;
            }
            match k {
                "from" => f.from_index = Some(parse_index(v, "from")?),
                "to" => f.to_index = Some(parse_index(v, "to")?),
                "role" => f.roles = Some(parse_roles(v)?),
                "state" => {
                    f.state = match v.trim() {
                        "active" | "current" => StateFilter::Active,
                        "superseded" => StateFilter::Superseded,
                        "both" | "all" => StateFilter::Both,
                        _ => return Err(invalid("state must be active, superseded or both")),
                    }
                }
                "subagent" => {
                    f.subagent = Some(match v.trim() {
                        "true" | "1" => true,
                        "false" | "0" => false,
                        _ => return Err(invalid("subagent must be true or false")),
                    })
                }
                "text" => f.text = Some(v.to_string()),
                _ => {}
            }
        }
        (f.since_ms, f.until_ms) = times.resolve().map_err(|e| invalid(e.message))?;
        Ok(f)
    }

    /// Checks the ranges and compiles the text clause.
    pub fn compile(&self) -> Result<Compiled<'_>, QueryError> {
        if let (Some(a), Some(b)) = (self.from_index, self.to_index) {
            if a > b {
                return Err(invalid("from is after to"));
            }
        }
        if let (Some(a), Some(b)) = (self.since_ms, self.until_ms) {
            if a > b {
                return Err(invalid("since is after until"));
            }
        }
        let text = match &self.text {
            None => None,
            Some(t) => Some(
                TextClause::new(t).ok_or_else(|| invalid("the text clause folds to nothing"))?,
            ),
        };
        Ok(Compiled { filter: self, text })
    }
}

/// A validated filter, ready to test records.
#[derive(Debug)]
pub struct Compiled<'a> {
    filter: &'a Filter,
    text: Option<TextClause>,
}

impl Compiled<'_> {
    /// Whether record `i` of `p` passes every clause.
    pub fn accepts(&self, p: &PreparedShard, i: usize) -> bool {
        let f = self.filter;
        let r = &p.shard.records[i];
        let idx = i as u64;
        let active = p.active.get(i).copied().unwrap_or(true);
        f.from_index.is_none_or(|a| idx >= a)
            && f.to_index.is_none_or(|b| idx <= b)
            && f.since_ms.is_none_or(|a| r.ts_ms >= a)
            && f.until_ms.is_none_or(|b| r.ts_ms <= b)
            && f.roles.as_ref().is_none_or(|rs| rs.contains(&r.role))
            && match f.state {
                StateFilter::Active => active,
                StateFilter::Superseded => !active,
                StateFilter::Both => true,
            }
            && f.subagent.is_none_or(|s| r.subagent == s)
            && self.text.as_ref().is_none_or(|t| t.matches(&r.text))
    }
}

fn parse_index(v: &str, name: &str) -> Result<u64, QueryError> {
    v.trim()
        .parse::<u64>()
        .map_err(|_| invalid(format!("{name} must be a record index (0 or more)")))
}

/// Parses a comma list of roles; an empty list is allowed (matches nothing).
pub fn parse_roles(v: &str) -> Result<Vec<Role>, QueryError> {
    v.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p {
            "user" => Ok(Role::User),
            "assistant" => Ok(Role::Assistant),
            "tool" => Ok(Role::Tool),
            _ => Err(invalid(format!("unknown role {p:?}"))),
        })
        .collect()
}

/// The filter request: clauses plus a page.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FilterRequest {
    /// The clauses.
    pub filter: Filter,
    /// Matching entries to skip.
    pub offset: u64,
    /// Page size (default 100, at most 500).
    pub limit: Option<u64>,
}

/// The filter response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterResponse {
    /// Always true.
    pub ok: bool,
    /// The session.
    pub session: SessionRef,
    /// Matching entries (all pages).
    pub total: u64,
    /// Entries skipped.
    pub offset: u64,
    /// This page, in record order.
    pub entries: Vec<Entry>,
    /// True when more entries follow this page.
    pub more: bool,
}

/// Filters the entries of `p`.
pub fn filter(p: &PreparedShard, req: &FilterRequest) -> Result<FilterResponse, QueryError> {
    let c = req.filter.compile()?;
    let limit = page_size(req.limit);
    let matched: Vec<usize> = (0..p.shard.records.len())
        .filter(|&i| c.accepts(p, i))
        .collect();
    let entries: Vec<Entry> = matched
        .iter()
        .skip(req.offset as usize)
        .take(limit)
        .map(|&i| Entry::of(p, i))
        .collect();
    Ok(FilterResponse {
        ok: true,
        session: SessionRef::of(p),
        total: matched.len() as u64,
        offset: req.offset,
        more: (req.offset as usize).saturating_add(entries.len()) < matched.len(),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;
    use proptest::prelude::*;

    fn run(p: &PreparedShard, f: Filter) -> Vec<u64> {
        let req = FilterRequest {
            filter: f,
            offset: 0,
            limit: Some(500),
        };
        filter(p, &req)
            .unwrap()
            .entries
            .iter()
            .map(|e| e.index)
            .collect()
    }

    #[test]
    fn errors_are_invalid_filter() {
        let bad = |pairs: &[(&str, &str)]| {
            Filter::from_pairs(pairs.iter().copied())
                .and_then(|f| f.compile().map(|_| ()))
                .unwrap_err()
                .code
        };
        assert_eq!(bad(&[("from", "5"), ("to", "2")]), "invalid_filter");
        assert_eq!(bad(&[("since", "10"), ("until", "9")]), "invalid_filter");
        assert_eq!(bad(&[("from", "-1")]), "invalid_filter");
        assert_eq!(bad(&[("since", "noon")]), "invalid_filter");
        assert_eq!(bad(&[("role", "robot")]), "invalid_filter");
        assert_eq!(bad(&[("state", "maybe")]), "invalid_filter");
        assert_eq!(bad(&[("text", "\u{301}")]), "invalid_filter");
    }

    #[test]
    fn empty_role_list_matches_nothing() {
        let p = shard();
        let f = Filter::from_pairs([("role", "")]).unwrap();
        assert!(run(&p, f).is_empty());
        assert_eq!(run(&p, Filter::default()).len(), p.shard.records.len());
    }

    #[test]
    fn state_follows_marks() {
        let p = shard();
        let sup = run(
            &p,
            Filter {
                state: StateFilter::Superseded,
                ..Filter::default()
            },
        );
        let act = run(
            &p,
            Filter {
                state: StateFilter::Active,
                ..Filter::default()
            },
        );
        assert!(!sup.is_empty() && !act.is_empty());
        for i in &sup {
            assert!(!p.active[*i as usize]);
        }
        assert_eq!(sup.len() + act.len(), p.shard.records.len());
    }

    #[test]
    fn paging() {
        let p = shard();
        let req = FilterRequest {
            filter: Filter::default(),
            offset: 2,
            limit: Some(3),
        };
        let r = filter(&p, &req).unwrap();
        assert_eq!(
            r.entries.iter().map(|e| e.index).collect::<Vec<_>>(),
            vec![2, 3, 4]
        );
        assert!(r.more);
        assert_eq!(r.total, p.shard.records.len() as u64);
    }

    fn naive(p: &PreparedShard, f: &Filter) -> Vec<u64> {
        let text = f.text.as_ref().and_then(|t| TextClause::new(t));
        (0..p.shard.records.len())
            .filter(|&i| {
                let r = &p.shard.records[i];
                let mut ok = true;
                if let Some(a) = f.from_index {
                    ok &= i as u64 >= a;
                }
                if let Some(b) = f.to_index {
                    ok &= i as u64 <= b;
                }
                if let Some(a) = f.since_ms {
                    ok &= r.ts_ms >= a;
                }
                if let Some(b) = f.until_ms {
                    ok &= r.ts_ms <= b;
                }
                if let Some(rs) = &f.roles {
                    ok &= rs.contains(&r.role);
                }
                ok &= match f.state {
                    StateFilter::Active => p.active[i],
                    StateFilter::Superseded => !p.active[i],
                    StateFilter::Both => true,
                };
                if let Some(s) = f.subagent {
                    ok &= r.subagent == s;
                }
                if let Some(t) = &text {
                    ok &= t.matches(&r.text);
                }
                ok
            })
            .map(|i| i as u64)
            .collect()
    }

    proptest! {
        #[test]
        fn agrees_with_naive(
            from in prop::option::of(0u64..12),
            len in prop::option::of(0u64..12),
            since in prop::option::of(0i64..12),
            span in prop::option::of(0i64..12),
            roles in prop::option::of(prop::sample::subsequence(vec![Role::User, Role::Assistant, Role::Tool], 0..=3)),
            state in prop::sample::select(vec![StateFilter::Active, StateFilter::Superseded, StateFilter::Both]),
            subagent in prop::option::of(any::<bool>()),
            text in prop::option::of(prop::sample::select(vec!["fix", "FIX  the", "bug", "é", " "])),
        ) {
            let p = shard();
            let f = Filter {
                from_index: from,
                to_index: from.zip(len).map(|(a, l)| a + l),
                since_ms: since.map(|s| s * 1000),
                until_ms: since.zip(span).map(|(s, l)| (s + l) * 1000),
                roles,
                state,
                subagent,
                text: text.map(str::to_string),
            };
            prop_assert_eq!(run(&p, f.clone()), naive(&p, &f));
        }
    }
}
