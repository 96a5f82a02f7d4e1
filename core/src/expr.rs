//! The query expression (DESIGN.md §13, "Query grammar"): `q` parsed once
//! into a tree of folded terms — AND by juxtaposition within one record,
//! `OR` / `|`, parentheses, `-term` / `-"phrase"` exclusions, `w:word` /
//! `=word` whole words — and the inline filters it names (`role:user`,
//! `since:7d`, `-is:subagent`, …), which the request applies as its
//! parameters. An unknown `key:` is text, so `http://x` searches for itself.
//!
//! Grammar, on whitespace-separated tokens:
//!
//! ```text
//! query  = or
//! or     = and { ("OR" | "|") and }
//! and    = unary { unary }
//! unary  = "(" or ")" | "-" leaf | leaf | filter
//! leaf   = ["w:" | "="] (word | "quoted phrase")
//! filter = key ":" (word | "quoted value")   key ∈ role source model cwd since until scope is
//! ```
//!
//! `(` opens a group only at the start of a token and `)` closes one only at
//! its end while a group is open, so `f(x)` is one term; `OR` and `|` are
//! operators only as whole tokens. Errors carry the byte offset they point
//! at.

use crate::fold::fold_str;
use std::fmt;

pub mod compiled;
pub use compiled::Compiled;

use crate::query::MAX_TERMS;

/// A folded term of the expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Leaf {
    /// The folded text (never empty).
    pub text: String,
    /// Matches only at Unicode word boundaries (`w:` / `=`).
    pub word: bool,
}

/// The expression tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A record holding the term.
    Leaf(Leaf),
    /// A record not holding the term.
    Not(Leaf),
    /// Every child (two or more).
    And(Vec<Node>),
    /// Any child (two or more).
    Or(Vec<Node>),
}

/// The parameter an inline filter sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKey {
    /// `role:`
    Role,
    /// `source:`
    Source,
    /// `model:`
    Model,
    /// `cwd:`
    Cwd,
    /// `since:`
    Since,
    /// `until:`
    Until,
    /// `scope:`
    Scope,
    /// `is:superseded`, `is:subagent` (negatable).
    Is,
}

impl FilterKey {
    fn of(key: &str) -> Option<FilterKey> {
        Some(match key {
            "role" => FilterKey::Role,
            "source" => FilterKey::Source,
            "model" => FilterKey::Model,
            "cwd" => FilterKey::Cwd,
            "since" => FilterKey::Since,
            "until" => FilterKey::Until,
            "scope" => FilterKey::Scope,
            "is" => FilterKey::Is,
            _ => return None,
        })
    }

    /// The key as written.
    pub fn name(self) -> &'static str {
        match self {
            FilterKey::Role => "role",
            FilterKey::Source => "source",
            FilterKey::Model => "model",
            FilterKey::Cwd => "cwd",
            FilterKey::Since => "since",
            FilterKey::Until => "until",
            FilterKey::Scope => "scope",
            FilterKey::Is => "is",
        }
    }
}

/// An inline filter, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    /// Its key.
    pub key: FilterKey,
    /// Its value (quotes removed).
    pub value: String,
    /// Written `-key:value` (only `is:` may be).
    pub negated: bool,
    /// Byte offset of the filter in `q`.
    pub at: usize,
}

/// A parsed `q`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The terms; `None` when `q` holds only filters (or nothing).
    pub node: Option<Node>,
    /// The inline filters, in order.
    pub filters: Vec<Filter>,
}

/// Why `q` does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprError {
    /// What kind of failure.
    pub kind: ExprErrorKind,
    /// Byte offset in `q` it points at.
    pub at: usize,
    /// What is wrong (never the query text).
    pub message: String,
}

/// The kinds of [`ExprError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprErrorKind {
    /// Not the grammar.
    Invalid,
    /// More than [`MAX_TERMS`] distinct terms.
    TooManyTerms,
}

fn invalid(at: usize, message: impl Into<String>) -> ExprError {
    ExprError {
        kind: ExprErrorKind::Invalid,
        at,
        message: message.into(),
    }
}

#[derive(Debug)]
enum Tok {
    Open(usize),
    Close,
    Or(usize),
    Leaf {
        leaf: Leaf,
        negated: bool,
    },
    Filter(Filter),
    /// A token that folds to nothing (punctuation only, say).
    Nothing,
}

/// Reads a word or a quoted phrase at `s[i..]`; returns it and where it
/// ends (a phrase without its closing quote runs to the end).
fn word_or_phrase(s: &str, i: usize) -> (&str, usize, bool) {
    let rest = &s[i..];
    if let Some(after) = rest.strip_prefix('"') {
        return match after.find('"') {
            Some(end) => (&after[..end], i + 1 + end + 1, true),
            None => (after, s.len(), true),
        };
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    (&rest[..end], i + end, false)
}

fn tokens(q: &str) -> Result<Vec<Tok>, ExprError> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < q.len() {
        let c = q[i..].chars().next().unwrap_or(' ');
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let bare_end = q[i..].find(char::is_whitespace).map_or(q.len(), |e| i + e);
        let bare = &q[i..bare_end];
        if bare == "OR" || bare == "|" {
            out.push(Tok::Or(i));
            i = bare_end;
            continue;
        }
        if c == '(' {
            out.push(Tok::Open(i));
            depth += 1;
            i += 1;
            continue;
        }
        let at = i;
        let (negated, j) = match bare.strip_prefix('-') {
            Some(r) if !r.is_empty() => (true, i + 1),
            _ => (false, i),
        };
        if negated && q[j..].starts_with('(') {
            return Err(invalid(at, "- applies to a term or a phrase, not a group"));
        }
        // `w:` / `=`, or a known `key:`.
        let rest = &q[j..];
        let (word, j) = if rest.starts_with("w:") && rest.len() > 2 {
            (true, j + 2)
        } else if rest.starts_with('=') && rest.len() > 1 {
            (true, j + 1)
        } else {
            (false, j)
        };
        let key = (!word)
            .then(|| rest.split_once(':'))
            .flatten()
            .filter(|(k, v)| {
                !v.is_empty() && !v.starts_with(char::is_whitespace) && !k.contains('"')
            })
            .and_then(|(k, _)| FilterKey::of(k).map(|key| (key, k.len())));
        let (text, mut end, quoted, filter) = match key {
            Some((key, klen)) => {
                let (v, end, quoted) = word_or_phrase(q, j + klen + 1);
                (v, end, quoted, Some(key))
            }
            None => {
                let (t, end, quoted) = word_or_phrase(q, j);
                (t, end, quoted, None)
            }
        };
        // Trailing `)`s of a bare word close open groups.
        let mut text = text;
        let mut closes = 0;
        if !quoted {
            while depth > closes && text.ends_with(')') {
                text = &text[..text.len() - 1];
                closes += 1;
            }
        } else {
            let after = &q[end..];
            let n = after.len() - after.trim_start_matches(')').len();
            let take = n.min(depth);
            end += take;
            closes = take;
        }
        match filter {
            Some(key) => {
                if negated && key != FilterKey::Is {
                    return Err(invalid(at, "only is: filters can be excluded"));
                }
                if text.is_empty() {
                    return Err(invalid(at, format!("{}: has no value", key.name())));
                }
                out.push(Tok::Filter(Filter {
                    key,
                    value: text.to_string(),
                    negated,
                    at,
                }));
            }
            None => {
                let folded = fold_str(text);
                if folded.is_empty() {
                    out.push(Tok::Nothing);
                } else {
                    out.push(Tok::Leaf {
                        leaf: Leaf { text: folded, word },
                        negated,
                    });
                }
            }
        }
        for _ in 0..closes {
            out.push(Tok::Close);
        }
        depth -= closes;
        i = end;
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    filters: Vec<Filter>,
    depth: usize,
}

impl Parser {
    fn or(&mut self) -> Result<Option<Node>, ExprError> {
        let mut alts = Vec::new();
        alts.extend(self.and()?);
        while let Some(Tok::Or(at)) = self.toks.get(self.pos) {
            let at = *at;
            if alts.is_empty() {
                return Err(invalid(at, "OR needs a term on each side"));
            }
            self.pos += 1;
            match self.and()? {
                Some(n) => alts.push(n),
                None => {
                    // At the operator that follows, else at this one.
                    let at = match self.toks.get(self.pos) {
                        Some(Tok::Or(next)) => *next,
                        _ => at,
                    };
                    return Err(invalid(at, "OR needs a term on each side"));
                }
            }
        }
        Ok(group(alts, true))
    }

    fn and(&mut self) -> Result<Option<Node>, ExprError> {
        let mut items = Vec::new();
        while let Some(t) = self.toks.get(self.pos) {
            match t {
                Tok::Or(_) | Tok::Close => break,
                Tok::Open(at) => {
                    let at = *at;
                    self.pos += 1;
                    self.depth += 1;
                    let inner = self.or()?;
                    self.depth -= 1;
                    if !matches!(self.toks.get(self.pos), Some(Tok::Close)) {
                        return Err(invalid(at, "this parenthesis is never closed"));
                    }
                    self.pos += 1;
                    match inner {
                        Some(n) => items.push(n),
                        None => return Err(invalid(at, "empty parentheses")),
                    }
                }
                Tok::Leaf { leaf, negated } => {
                    let leaf = leaf.clone();
                    items.push(if *negated {
                        Node::Not(leaf)
                    } else {
                        Node::Leaf(leaf)
                    });
                    self.pos += 1;
                }
                Tok::Filter(f) => {
                    if self.depth > 0 {
                        return Err(invalid(
                            f.at,
                            "filters apply to the whole query: put them outside parentheses",
                        ));
                    }
                    self.filters.push(f.clone());
                    self.pos += 1;
                }
                Tok::Nothing => self.pos += 1,
            }
        }
        Ok(group(items, false))
    }
}

/// The node of `children` under one operator: none, the only one, or the
/// operator over them (flattened).
fn group(children: Vec<Node>, or: bool) -> Option<Node> {
    let mut v = flatten(children, or);
    match v.len() {
        0 => None,
        1 => v.pop(),
        _ if or => Some(Node::Or(v)),
        _ => Some(Node::And(v)),
    }
}

/// Lifts children of the same operator into their parent and drops
/// repeated children.
fn flatten(children: Vec<Node>, or: bool) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for c in children {
        let lifted = match c {
            Node::Or(v) if or => v,
            Node::And(v) if !or => v,
            other => vec![other],
        };
        for n in lifted {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// Parses `q`.
pub fn parse(q: &str) -> Result<Parsed, ExprError> {
    let toks = tokens(q)?;
    let mut p = Parser {
        toks,
        pos: 0,
        filters: Vec::new(),
        depth: 0,
    };
    let node = p.or()?;
    if let Some(Tok::Or(at)) = p.toks.get(p.pos) {
        return Err(invalid(*at, "OR needs a term on each side"));
    }
    if let Some(n) = &node {
        let mut leaves = Vec::new();
        n.leaves(&mut leaves);
        leaves.sort();
        leaves.dedup();
        if leaves.len() > MAX_TERMS {
            return Err(ExprError {
                kind: ExprErrorKind::TooManyTerms,
                at: 0,
                message: format!("q has more than {MAX_TERMS} distinct terms"),
            });
        }
        if !n.has_positive() {
            return Err(invalid(
                0,
                "a query of only exclusions has nothing to exclude from: add a term",
            ));
        }
    }
    Ok(Parsed {
        node,
        filters: p.filters,
    })
}

impl Node {
    /// Every leaf, excluded ones included, with whether it is excluded.
    fn leaves<'a>(&'a self, out: &mut Vec<(&'a Leaf, bool)>) {
        match self {
            Node::Leaf(l) => out.push((l, false)),
            Node::Not(l) => out.push((l, true)),
            Node::And(v) | Node::Or(v) => v.iter().for_each(|n| n.leaves(out)),
        }
    }

    fn has_positive(&self) -> bool {
        match self {
            Node::Leaf(_) => true,
            Node::Not(_) => false,
            Node::And(v) | Node::Or(v) => v.iter().any(Node::has_positive),
        }
    }

    /// Whether this is today's plain query: substring terms ANDed.
    pub fn is_plain(&self) -> bool {
        match self {
            Node::Leaf(l) => !l.word,
            Node::And(v) => v.iter().all(|n| matches!(n, Node::Leaf(l) if !l.word)),
            _ => false,
        }
    }

    /// The positive terms, each once, in query order (what relevance and
    /// highlights count).
    pub fn positive(&self) -> Vec<Leaf> {
        let mut all = Vec::new();
        self.leaves(&mut all);
        let mut out: Vec<Leaf> = Vec::new();
        for (l, excluded) in all {
            if !excluded && !out.contains(l) {
                out.push(l.clone());
            }
        }
        out
    }

    /// The terms every matching record holds as substrings (a whole word is
    /// one too): what the index may prune by.
    pub fn required(&self) -> Vec<&str> {
        match self {
            Node::Leaf(l) => vec![l.text.as_str()],
            Node::And(v) => v
                .iter()
                .filter_map(|n| match n {
                    Node::Leaf(l) => Some(l.text.as_str()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Whether some `OR` makes a positive term optional (then the index's
    /// score bounds, sums over required terms, bound nothing).
    pub fn has_or(&self) -> bool {
        match self {
            Node::Or(_) => true,
            Node::And(v) => v.iter().any(Node::has_or),
            _ => false,
        }
    }
}

impl fmt::Display for Leaf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quoted = serde_json::Value::String(self.text.clone()).to_string();
        write!(f, "{}{quoted}", if self.word { "w:" } else { "" })
    }
}

/// The normalized expression (the cursor fingerprint's): every term
/// quoted, groups parenthesized, ` | ` between alternatives.
impl fmt::Display for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let join = |f: &mut fmt::Formatter<'_>, v: &[Node], sep: &str| -> fmt::Result {
            for (i, n) in v.iter().enumerate() {
                if i > 0 {
                    f.write_str(sep)?;
                }
                write!(f, "{n}")?;
            }
            Ok(())
        };
        match self {
            Node::Leaf(l) => write!(f, "{l}"),
            Node::Not(l) => write!(f, "-{l}"),
            Node::And(v) => join(f, v, " "),
            Node::Or(v) => {
                f.write_str("(")?;
                join(f, v, " | ")?;
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests;
