//! Request parsing and validation (DESIGN.md §4): terms and phrases, the
//! filters, sort, limit and their error codes.
//!
//! A [`Request`] carries the raw string fields exactly as the HTTP query
//! string, the CLI flags and the wasm API give them; [`Request::parse`] turns
//! them into a normalized [`Query`] or a [`QueryError`].

use crate::error::ErrorCode;
use crate::expr;
use crate::fold::fold_str;
use crate::model::{Role, Source};
use crate::time::{Clock, TimeSpec};
use serde::{Deserialize, Serialize};

/// Largest raw `q`, in bytes.
pub const MAX_QUERY_BYTES: usize = 1024;
/// Most terms after folding and de-duplication.
pub const MAX_TERMS: usize = 16;
/// Default sessions per page.
pub const DEFAULT_LIMIT: usize = 20;
/// Largest page.
pub const MAX_LIMIT: usize = 100;

/// Which lanes a query reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    /// user + assistant records.
    pub conversation: bool,
    /// tool rows.
    pub tool: bool,
}

impl Lanes {
    /// The lanes of a query's roles and scope.
    pub fn of(query: &Query) -> Lanes {
        Lanes {
            conversation: query.roles.iter().any(|r| *r != Role::Tool),
            tool: query.scope == Scope::All && query.roles.contains(&Role::Tool),
        }
    }
}

/// A request error with its §4/§7 code.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct QueryError {
    /// The stable error code (`q_required`, `invalid_param`, …).
    pub code: ErrorCode,
    /// A human-readable explanation (never contains the query text).
    pub message: String,
    /// For `invalid_query`: the byte offset in `q` the error points at.
    pub at: Option<usize>,
}

impl QueryError {
    /// Builds an error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> QueryError {
        QueryError {
            code,
            message: message.into(),
            at: None,
        }
    }

    /// `invalid_query` at byte `at` of `q`.
    pub fn at(at: usize, message: impl Into<String>) -> QueryError {
        QueryError {
            at: Some(at),
            ..QueryError::new(ErrorCode::InvalidQuery, message)
        }
    }

    /// The §7 error body `{ok:false, error, message}` (+ `at`).
    pub fn to_json(&self) -> String {
        let mut v = serde_json::json!({"ok": false, "error": self.code, "message": self.message});
        if let Some(at) = self.at {
            v["at"] = at.into();
        }
        v.to_string()
    }

    fn invalid(message: impl Into<String>) -> QueryError {
        QueryError::new(ErrorCode::InvalidParam, message)
    }
}

/// Raw request fields, as strings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// The query text.
    pub q: Option<String>,
    /// Comma list of source ids.
    pub source: Option<String>,
    /// Comma list of roles.
    pub role: Option<String>,
    /// `conversation` or `all`.
    pub scope: Option<String>,
    /// Inclusive lower bound on `ts_ms` (epoch ms or RFC 3339).
    pub since: Option<String>,
    /// Inclusive upper bound on `ts_ms`.
    pub until: Option<String>,
    /// Comma list of path prefixes.
    pub cwd: Option<String>,
    /// Comma list of model names (case-insensitive, exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `true`/`false`.
    pub include_superseded: Option<String>,
    /// `true`/`false`.
    pub subagents: Option<String>,
    /// `newest` or `relevance`.
    pub sort: Option<String>,
    /// Sessions per page.
    pub limit: Option<String>,
    /// Opaque cursor from the previous page.
    pub cursor: Option<String>,
    /// The caller's now (epoch ms), which relative times (`7d`) are read
    /// against; set by the host edge, or by a client that keeps its own clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub now_ms: Option<String>,
    /// The caller's zone offset from UTC in minutes (places `today`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset_min: Option<String>,
}

impl Request {
    /// A request for `q` with every other field defaulted.
    pub fn new(q: &str) -> Request {
        Request {
            q: Some(q.to_string()),
            ..Request::default()
        }
    }

    /// Builds a request from key/value pairs (e.g. a parsed query string).
    /// Unknown keys are ignored; a repeated key keeps its last value.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Request {
        let mut r = Request::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match k {
                "q" => r.q = v,
                "source" => r.source = v,
                "role" => r.role = v,
                "scope" => r.scope = v,
                "since" => r.since = v,
                "until" => r.until = v,
                "cwd" => r.cwd = v,
                "model" => r.model = v,
                "include_superseded" => r.include_superseded = v,
                "subagents" => r.subagents = v,
                "sort" => r.sort = v,
                "limit" => r.limit = v,
                "cursor" => r.cursor = v,
                "now_ms" => r.now_ms = v,
                "utc_offset_min" => r.utc_offset_min = v,
                _ => {}
            }
        }
        r
    }

    /// Builds a request from a JSON object whose values are strings, numbers
    /// or booleans (the wasm and byte ABIs). Null values are absent.
    pub fn from_json(json: &str) -> Result<Request, QueryError> {
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| QueryError::invalid(format!("request is not JSON: {e}")))?;
        let obj = value
            .as_object()
            .ok_or_else(|| QueryError::invalid("request must be a JSON object"))?;
        let mut pairs = Vec::new();
        for (k, v) in obj {
            let s = match v {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Bool(b) => b.to_string(),
                serde_json::Value::Number(n) => n.to_string(),
                _ => return Err(QueryError::invalid(format!("{k} must be a string"))),
            };
            pairs.push((k.clone(), s));
        }
        Ok(Request::from_pairs(
            pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        ))
    }

    /// Validates and normalizes the request.
    pub fn parse(&self) -> Result<Query, QueryError> {
        let q = self.q.as_deref().unwrap_or("");
        if q.len() > MAX_QUERY_BYTES {
            return Err(QueryError::new(
                ErrorCode::QueryTooLong,
                format!("q is longer than {MAX_QUERY_BYTES} bytes"),
            ));
        }
        let parsed = expr::parse(q).map_err(|e| match e.kind {
            expr::ExprErrorKind::TooManyTerms => {
                QueryError::new(ErrorCode::TooManyTerms, e.message)
            }
            expr::ExprErrorKind::Invalid => QueryError::at(e.at, e.message),
        })?;
        let Some(node) = parsed.node else {
            return Err(QueryError::new(
                ErrorCode::QRequired,
                "q has no searchable term",
            ));
        };
        let terms: Vec<String> = node.positive().into_iter().map(|l| l.text).collect();
        let expr = (!node.is_plain()).then_some(node);
        let with_filters = self.with_inline(&parsed.filters)?;
        let mut query = with_filters.parse_params(terms)?;
        query.expr = expr;
        Ok(query)
    }

    /// This request with `q`'s inline filters as its parameters. A filter
    /// whose parameter is also given is an error (which would win is not
    /// obvious); list filters given twice inline are joined (any of them).
    fn with_inline(&self, filters: &[expr::Filter]) -> Result<Request, QueryError> {
        use expr::FilterKey as K;
        let mut r = self.clone();
        for f in filters {
            let (slot, given, list) = match (f.key, f.value.as_str()) {
                (K::Role, _) => (&mut r.role, &self.role, true),
                (K::Source, _) => (&mut r.source, &self.source, true),
                (K::Model, _) => (&mut r.model, &self.model, true),
                (K::Cwd, _) => (&mut r.cwd, &self.cwd, true),
                (K::Since, _) => (&mut r.since, &self.since, false),
                (K::Until, _) => (&mut r.until, &self.until, false),
                (K::Scope, _) => (&mut r.scope, &self.scope, false),
                (K::Is, "superseded") => {
                    (&mut r.include_superseded, &self.include_superseded, false)
                }
                (K::Is, "subagent") => (&mut r.subagents, &self.subagents, false),
                (K::Is, _) => return Err(QueryError::at(f.at, "is: takes superseded or subagent")),
            };
            let name = f.key.name();
            if given.is_some() {
                return Err(QueryError::at(
                    f.at,
                    format!("{name}: is also given as a parameter"),
                ));
            }
            let value = match f.key {
                K::Is => (!f.negated).to_string(),
                _ => f.value.clone(),
            };
            *slot = match slot.take() {
                None => Some(value),
                Some(before) if list => Some(format!("{before},{value}")),
                Some(_) => {
                    return Err(QueryError::at(f.at, format!("{name}: is given twice")));
                }
            };
        }
        Ok(r)
    }

    /// The parameters (`q` already parsed into `terms`).
    fn parse_params(&self, terms: Vec<String>) -> Result<Query, QueryError> {
        let scope = match self.scope.as_deref() {
            None | Some("conversation") => Scope::Conversation,
            Some("all") => Scope::All,
            Some(_) => return Err(QueryError::invalid("scope must be conversation or all")),
        };
        let sources = match self.source.as_deref() {
            None => None,
            Some(list) => Some(parse_sources(list)?),
        };
        let roles = parse_roles(self.role.as_deref(), scope)?;
        let clock = self.clock()?;
        let since_spec = self
            .since
            .as_deref()
            .map(|s| parse_spec(s, "since"))
            .transpose()?;
        let until_spec = self
            .until
            .as_deref()
            .map(|s| parse_spec(s, "until"))
            .transpose()?;
        let since = since_spec
            .map(|t| resolve(t, clock.as_ref(), "since"))
            .transpose()?;
        let until = until_spec
            .map(|t| resolve(t, clock.as_ref(), "until"))
            .transpose()?;
        let cwd = self.cwd.as_deref().map(parse_cwds).unwrap_or_default();
        let models = self.model.as_deref().map(parse_models).unwrap_or_default();
        let include_superseded = parse_bool(
            self.include_superseded.as_deref(),
            "include_superseded",
            true,
        )?;
        let subagents = parse_bool(self.subagents.as_deref(), "subagents", true)?;
        let sort = match self.sort.as_deref() {
            None | Some("newest") => Sort::Newest,
            Some("relevance") => Sort::Relevance,
            Some(_) => return Err(QueryError::invalid("sort must be newest or relevance")),
        };
        let limit = parse_limit(self.limit.as_deref());
        Ok(Query {
            terms,
            expr: None,
            sources,
            roles,
            scope,
            since,
            until,
            since_spec,
            until_spec,
            cwd,
            models,
            include_superseded,
            subagents,
            sort,
            limit,
            cursor: self.cursor.clone().filter(|c| !c.is_empty()),
            debug: false,
        })
    }
}

/// What a query searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// user + assistant records.
    Conversation,
    /// also tool rows.
    All,
}

/// Result order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sort {
    /// Sessions by their newest hit.
    Newest,
    /// Sessions by their best-scoring record.
    Relevance,
}

/// A validated, normalized request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// The folded positive terms, each once, in query order (for a plain
    /// query: all of them, ANDed).
    pub terms: Vec<String>,
    /// The expression when `q` is more than terms ANDed (`OR`, groups,
    /// exclusions, whole words); `None` for a plain query.
    pub expr: Option<expr::Node>,
    /// Allowed sources; `None` = all.
    pub sources: Option<Vec<Source>>,
    /// Allowed roles (already intersected with the scope).
    pub roles: Vec<Role>,
    /// The scope.
    pub scope: Scope,
    /// Inclusive lower bound on `ts_ms`.
    pub since: Option<i64>,
    /// Inclusive upper bound on `ts_ms`.
    pub until: Option<i64>,
    /// `since` as given (a relative form fingerprints as itself, so a
    /// cursor stays valid while `now` moves).
    pub since_spec: Option<TimeSpec>,
    /// `until` as given.
    pub until_spec: Option<TimeSpec>,
    /// Path prefixes on the session cwd (empty = any).
    pub cwd: Vec<String>,
    /// Lowercased model names; a session passes when it records any of
    /// them (empty = any, including sessions that record none).
    pub models: Vec<String>,
    /// Whether superseded records may match.
    pub include_superseded: bool,
    /// Whether subagent records may match.
    pub subagents: bool,
    /// The order.
    pub sort: Sort,
    /// Sessions per page (1–100).
    pub limit: usize,
    /// The cursor, when paging.
    pub cursor: Option<String>,
    /// Add the planner's report (`debug`) to the response. Set by the HTTP
    /// and CLI edges ([`parse_debug`]); never changes results, and not part
    /// of the cursor fingerprint.
    pub debug: bool,
}

/// The `debug` request field: `true`/`false`/`1`/`0`, absent = false.
pub fn parse_debug(v: Option<&str>) -> Result<bool, QueryError> {
    parse_bool(v, "debug", false)
}

impl Query {
    /// Whether a session's cwd passes the `cwd` filter: some prefix equals
    /// the cwd or is a whole-component ancestor of it.
    pub fn cwd_matches(&self, cwd: Option<&str>) -> bool {
        if self.cwd.is_empty() {
            return true;
        }
        let Some(cwd) = cwd else { return false };
        self.cwd.iter().any(|p| path_has_prefix(cwd, p))
    }

    /// Whether a session recording `models` passes the `model` filter.
    pub fn model_matches(&self, models: &[String]) -> bool {
        model_matches(&self.models, models)
    }

    /// The terms every matching record holds as substrings: what the
    /// index (segment postings, filters) may prune by. All of them for a
    /// plain query; none for `a OR b`.
    pub fn required_terms(&self) -> Vec<&str> {
        match &self.expr {
            None => self.terms.iter().map(String::as_str).collect(),
            Some(e) => e.required(),
        }
    }

    /// Whether the index's score bounds (sums over the required terms)
    /// bound a record's score: not when an `OR` makes a term optional.
    pub fn score_bounds_hold(&self) -> bool {
        self.expr.as_ref().is_none_or(|e| !e.has_or())
    }

    /// Whether a source passes the `source` filter.
    pub fn source_matches(&self, source: Source) -> bool {
        self.sources.as_ref().is_none_or(|s| s.contains(&source))
    }
}

/// Parses a `model` comma list: trimmed, lowercased, de-duplicated, empty
/// items dropped.
pub fn parse_models(list: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in list.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        let m = m.to_lowercase();
        if !out.contains(&m) {
            out.push(m);
        }
    }
    out
}

/// Whether a session recording `models` passes a filter of lowercased
/// `wanted` names (any of them, case-insensitive exact; empty = any).
pub fn model_matches(wanted: &[String], models: &[String]) -> bool {
    wanted.is_empty() || models.iter().any(|m| wanted.contains(&m.to_lowercase()))
}

/// Splits `q` into folded, de-duplicated terms (DESIGN.md §4).
pub fn parse_terms(q: &str) -> Vec<String> {
    let mut raw: Vec<&str> = Vec::new();
    let mut rest = q;
    loop {
        rest = rest.trim_start_matches(char::is_whitespace);
        if rest.is_empty() {
            break;
        }
        if let Some(after) = rest.strip_prefix('"') {
            match after.find('"') {
                Some(end) => {
                    raw.push(&after[..end]);
                    rest = &after[end + 1..];
                }
                None => {
                    raw.push(after);
                    rest = "";
                }
            }
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            raw.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    let mut terms: Vec<String> = Vec::new();
    for t in raw {
        let f = fold_str(t);
        if f.is_empty() || terms.contains(&f) {
            continue;
        }
        terms.push(f);
    }
    terms
}

fn parse_sources(list: &str) -> Result<Vec<Source>, QueryError> {
    let mut out = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let s = Source::parse(part)
            .ok_or_else(|| QueryError::invalid(format!("unknown source {part:?}")))?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(QueryError::invalid("source names no source"));
    }
    out.sort();
    Ok(out)
}

fn parse_roles(list: Option<&str>, scope: Scope) -> Result<Vec<Role>, QueryError> {
    let scope_roles: &[Role] = match scope {
        Scope::Conversation => &[Role::User, Role::Assistant],
        Scope::All => &[Role::User, Role::Assistant, Role::Tool],
    };
    let Some(list) = list else {
        return Ok(scope_roles.to_vec());
    };
    let mut asked = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let r = match part {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => return Err(QueryError::invalid(format!("unknown role {part:?}"))),
        };
        asked.push(r);
    }
    let mut roles: Vec<Role> = scope_roles
        .iter()
        .copied()
        .filter(|r| asked.contains(r))
        .collect();
    roles.sort();
    if roles.is_empty() {
        return Err(QueryError::invalid("role selects nothing in this scope"));
    }
    Ok(roles)
}

fn parse_bool(v: Option<&str>, name: &str, default: bool) -> Result<bool, QueryError> {
    match v {
        None => Ok(default),
        Some("true") | Some("1") => Ok(true),
        Some("false") | Some("0") => Ok(false),
        Some(_) => Err(QueryError::invalid(format!("{name} must be true or false"))),
    }
}

fn parse_limit(v: Option<&str>) -> usize {
    use core::num::IntErrorKind;
    // An integer too large for i64 is still an integer: clamped, not ignored.
    match v.map(str::trim).map(str::parse::<i64>) {
        Some(Ok(n)) => n.clamp(1, MAX_LIMIT as i64) as usize,
        Some(Err(e)) if *e.kind() == IntErrorKind::PosOverflow => MAX_LIMIT,
        Some(Err(e)) if *e.kind() == IntErrorKind::NegOverflow => 1,
        _ => DEFAULT_LIMIT,
    }
}

fn parse_cwds(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let t = p.trim_end_matches('/');
            if t.is_empty() { "/" } else { t }.to_string()
        })
        .collect()
}

/// Whether `prefix` equals `path` or is an ancestor of it by whole components.
pub fn path_has_prefix(path: &str, prefix: &str) -> bool {
    let path = path.trim_end_matches('/');
    if prefix == "/" {
        return path.starts_with('/') || path.is_empty();
    }
    match path.strip_prefix(prefix) {
        Some("") => true,
        Some(rest) => rest.starts_with('/'),
        None => false,
    }
}

/// Parses `since`/`until` through the one time parser
/// ([`crate::time::TimeSpec`]): epoch ms, RFC 3339 (a date-time with no
/// offset is UTC; a bare date is its midnight UTC), or a relative form
/// (`7d`, `24h`, `2w`, `today`, `yesterday`) read against `clock`.
pub fn parse_time(s: &str, name: &str, clock: Option<&Clock>) -> Result<i64, QueryError> {
    resolve(parse_spec(s, name)?, clock, name)
}

fn parse_spec(s: &str, name: &str) -> Result<TimeSpec, QueryError> {
    TimeSpec::parse(s).map_err(|e| QueryError::invalid(format!("{name}: {e}")))
}

fn resolve(t: TimeSpec, clock: Option<&Clock>, name: &str) -> Result<i64, QueryError> {
    t.resolve(clock)
        .map_err(|e| QueryError::invalid(format!("{name}: {e}")))
}

/// The time fields of a pairs-built request (`since`, `until`, `now_ms`,
/// `utc_offset_min`), gathered first and read together once every pair is
/// in, so the clock may come after the times it reads.
#[derive(Debug, Default)]
pub struct TimeFields<'a> {
    since: Option<&'a str>,
    until: Option<&'a str>,
    now_ms: Option<&'a str>,
    utc_offset_min: Option<&'a str>,
}

impl<'a> TimeFields<'a> {
    /// Takes the pair if it is a time field.
    pub fn take(&mut self, k: &str, v: &'a str) -> bool {
        let slot = match k {
            "since" => &mut self.since,
            "until" => &mut self.until,
            "now_ms" => &mut self.now_ms,
            "utc_offset_min" => &mut self.utc_offset_min,
            _ => return false,
        };
        *slot = Some(v);
        true
    }

    /// `(since, until)` in epoch ms.
    pub fn resolve(&self) -> Result<(Option<i64>, Option<i64>), QueryError> {
        let clock =
            Clock::from_fields(self.now_ms, self.utc_offset_min).map_err(QueryError::invalid)?;
        let read =
            |v: Option<&str>, name| v.map(|v| parse_time(v, name, clock.as_ref())).transpose();
        Ok((read(self.since, "since")?, read(self.until, "until")?))
    }

    /// When a bound is relative (`7d`), the canonical text of both bounds,
    /// which a listing's cursor fingerprints instead of the epoch ms that
    /// move with `now`; `None` when both are instants (or absent).
    pub fn relative_key(&self) -> Option<String> {
        let spec = |v: Option<&str>| v.and_then(|v| TimeSpec::parse(v).ok());
        let (a, b) = (spec(self.since), spec(self.until));
        if !a.is_some_and(|t| t.is_relative()) && !b.is_some_and(|t| t.is_relative()) {
            return None;
        }
        let text = |t: Option<TimeSpec>| t.map(|t| t.canonical()).unwrap_or_default();
        Some(format!("{}..{}", text(a), text(b)))
    }
}

impl Request {
    /// The caller's clock from `now_ms` / `utc_offset_min`, if given.
    pub fn clock(&self) -> Result<Option<Clock>, QueryError> {
        Clock::from_fields(self.now_ms.as_deref(), self.utc_offset_min.as_deref())
            .map_err(QueryError::invalid)
    }

    /// Sets the clock unless the request carries one already (the host's
    /// clock is the default; a client's own wins).
    pub fn with_default_clock(mut self, clock: Clock) -> Request {
        if self.now_ms.is_none() {
            self.now_ms = Some(clock.now_ms.to_string());
            self.utc_offset_min = Some(clock.utc_offset_min.to_string());
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_filter() {
        let q = Request::from_pairs([("q", "x"), ("model", " GPT-5.5,claude-opus-4-6,gpt-5.5,, ")])
            .parse()
            .unwrap();
        assert_eq!(q.models, ["gpt-5.5", "claude-opus-4-6"]);
        assert!(q.model_matches(&["Claude-Opus-4-6".to_string()]));
        assert!(!q.model_matches(&["claude-opus-4".to_string()]));
        assert!(!q.model_matches(&[]));
        let any = Request::new("x").parse().unwrap();
        assert!(any.models.is_empty() && any.model_matches(&[]));
        // Cursors of unfiltered queries keep their fingerprint; a model
        // filter changes it.
        assert_ne!(
            crate::cursor::fingerprint(&q),
            crate::cursor::fingerprint(&any)
        );
        let json = Request::from_json(r#"{"q":"x","model":"A"}"#).unwrap();
        assert_eq!(json.parse().unwrap().models, ["a"]);
    }

    #[test]
    fn terms_and_phrases() {
        assert_eq!(parse_terms("foo  Bar"), vec!["foo", "bar"]);
        assert_eq!(parse_terms("\"a  b\" c"), vec!["a  b", "c"]);
        assert_eq!(parse_terms("\"open phrase"), vec!["open phrase"]);
        assert_eq!(parse_terms("don\"t"), vec!["don\"t"]);
        assert_eq!(parse_terms("\"\" x"), vec!["x"]);
        assert_eq!(parse_terms("Foo foo FOO"), vec!["foo"]);
        assert_eq!(parse_terms("\u{301} x"), vec!["x"]);
        assert!(parse_terms(" \u{3000}\t").is_empty());
    }

    #[test]
    fn errors() {
        let code = |r: Request| r.parse().unwrap_err().code;
        assert_eq!(code(Request::default()), "q_required");
        assert_eq!(code(Request::new("  ")), "q_required");
        assert_eq!(code(Request::new(&"x".repeat(1025))), "query_too_long");
        let many: Vec<String> = (0..17).map(|i| format!("t{i}")).collect();
        assert_eq!(code(Request::new(&many.join(" "))), "too_many_terms");
        let mut r = Request::new("x");
        r.source = Some("nope".into());
        assert_eq!(code(r), "invalid_param");
        let mut r = Request::new("x");
        r.role = Some("tool".into());
        assert_eq!(code(r), "invalid_param");
        let mut r = Request::new("x");
        r.since = Some("yesterday".into());
        assert_eq!(code(r), "invalid_param", "a relative time with no clock");
        let mut r = Request::new("x").with_default_clock(Clock::utc(10 * 86_400_000));
        r.since = Some("yesterday".into());
        r.until = Some("2d".into());
        let q = r.parse().unwrap();
        assert_eq!(
            (q.since, q.until),
            (Some(9 * 86_400_000), Some(8 * 86_400_000))
        );
        let mut r = Request::new("x");
        r.since = Some("soon".into());
        assert_eq!(code(r), "invalid_param");
    }

    #[test]
    fn source_lists_take_aliases_and_spaced_names() {
        let sources = |list: &str| parse_sources(list).map_err(|e| e.code);
        assert_eq!(
            sources("Claude Code, kimi code,PI Coding Agent"),
            Ok(vec![Source::ClaudeCode, Source::Kimi, Source::Pi])
        );
        assert_eq!(
            sources("deepseek-harness,dsh,DeepSeek Harness"),
            Ok(vec![Source::Dsh])
        );
        assert_eq!(sources("claude  code"), Err(ErrorCode::InvalidParam));
        assert_eq!(sources("deepseek"), Err(ErrorCode::InvalidParam));
    }

    #[test]
    fn limits_clamp() {
        let lim = |s: &str| {
            let mut r = Request::new("x");
            r.limit = Some(s.into());
            r.parse().unwrap().limit
        };
        assert_eq!(lim("0"), 1);
        assert_eq!(lim("500"), 100);
        assert_eq!(lim("abc"), 20);
        assert_eq!(lim("7"), 7);
        assert_eq!(lim("12345678901234567890"), 100);
        assert_eq!(lim("-12345678901234567890"), 1);
    }

    #[test]
    fn times_or_invalid_param() {
        assert_eq!(
            parse_time("1788479147120", "since", None),
            Ok(1788479147120)
        );
        assert_eq!(parse_time("1970-01-01T00:00:01Z", "since", None), Ok(1000));
        assert_eq!(
            parse_time("soon", "until", None).unwrap_err().code,
            "invalid_param"
        );
    }

    #[test]
    fn cwd_prefixes_by_component() {
        assert!(path_has_prefix("/home/mara/code", "/home/mara"));
        assert!(path_has_prefix("/home/mara", "/home/mara"));
        assert!(!path_has_prefix("/home/marab", "/home/mara"));
        assert!(path_has_prefix("/x", "/"));
    }
}
