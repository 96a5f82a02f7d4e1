//! Token budgets for answers an agent reads (DESIGN.md §13, "Agent answers"):
//! the MCP tools and the CLI's `--max-tokens` both fit their JSON here.
//!
//! A budget is counted in characters of the answer's JSON text, four to a
//! token (no model needed). What does not fit is cut in one stated order:
//! hits per session first, then whole sessions from the end of the page,
//! then the length of every text (snippets, record windows). What is kept is
//! always a prefix, in rank order, of the full answer; the answer's caller
//! names what was cut (`truncated: {sessions, hits, chars}`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The budget when the caller names none.
pub const DEFAULT_MAX_TOKENS: u64 = 8_000;
/// The smallest budget accepted (an answer's envelope must fit).
pub const MIN_MAX_TOKENS: u64 = 200;
/// The largest budget accepted.
pub const MAX_MAX_TOKENS: u64 = 250_000;
/// Characters counted as one token.
pub const CHARS_PER_TOKEN: u64 = 4;

/// How much of each item an answer carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fields {
    /// Keys, titles, times and one snippet.
    Minimal,
    /// The default: what a reader needs to pick a session and follow it.
    #[default]
    Summary,
    /// Every field the core returns.
    Full,
}

impl std::str::FromStr for Fields {
    type Err = String;
    fn from_str(s: &str) -> Result<Fields, String> {
        match s.trim() {
            "minimal" => Ok(Fields::Minimal),
            "summary" => Ok(Fields::Summary),
            "full" => Ok(Fields::Full),
            other => Err(format!(
                "fields must be minimal, summary or full, not {other:?}"
            )),
        }
    }
}

/// What an answer left out to stay within its budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncated {
    /// Items (sessions, hits of one session, list rows) dropped from the
    /// end of the page; the cursor continues with them.
    pub sessions: u64,
    /// Hits dropped from the sessions that are shown.
    pub hits: u64,
    /// Characters cut from the texts that are shown.
    pub chars: u64,
}

impl Truncated {
    /// Whether anything was cut.
    pub fn any(&self) -> bool {
        *self != Truncated::default()
    }
}

/// How far one rendering cuts: the first `items` items, the first `hits`
/// hits of each, every text clipped to `text` characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Items kept.
    pub items: usize,
    /// Hits kept per item.
    pub hits: usize,
    /// Characters kept per text.
    pub text: usize,
}

/// The budget in characters of `max_tokens` (clamped to the accepted range
/// by [`check_tokens`] first).
pub fn max_chars(max_tokens: u64) -> usize {
    (max_tokens.saturating_mul(CHARS_PER_TOKEN)).min(usize::MAX as u64) as usize
}

/// `max_tokens` as given, or the default; `Err` outside the accepted range.
pub fn check_tokens(max_tokens: Option<u64>) -> Result<u64, String> {
    let n = max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if (MIN_MAX_TOKENS..=MAX_MAX_TOKENS).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "max_tokens must be {MIN_MAX_TOKENS}–{MAX_MAX_TOKENS}, not {n}"
        ))
    }
}

/// The length of `v`'s JSON text in characters: what the budget counts.
pub fn size(v: &Value) -> usize {
    v.to_string().chars().count()
}

/// `s` clipped to `n` characters, and how many were cut.
pub fn clip(s: &str, n: usize) -> (&str, u64) {
    match s.char_indices().nth(n) {
        Some((i, _)) => (&s[..i], s[i..].chars().count() as u64),
        None => (s, 0),
    }
}

/// The largest `x` in `lo..=hi` with `ok(x)`, given `ok` is monotone
/// (true up to some point, false after); `None` when `ok(lo)` is false.
fn largest(lo: usize, hi: usize, mut ok: impl FnMut(usize) -> bool) -> Option<usize> {
    if lo > hi || !ok(lo) {
        return None;
    }
    let (mut good, mut bad) = (lo, hi + 1);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if ok(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

/// Renders the answer with the least cutting that fits in `limit`
/// characters, cutting in the stated order: hits per item (down to one),
/// then items from the end (down to one), then text length (down to none).
/// `items`, `hits` and `text` are the uncut sizes (the most items, most hits
/// of any item, longest text). `None`: not even one item with one hit and
/// no text fits (the budget is smaller than the answer's envelope).
pub fn fit(
    limit: usize,
    items: usize,
    hits: usize,
    text: usize,
    mut render: impl FnMut(Cut) -> Value,
) -> Option<Value> {
    let mut attempt = |c: Cut| {
        let v = render(c);
        (size(&v) <= limit).then_some(v)
    };
    let full = Cut { items, hits, text };
    if let Some(v) = attempt(full) {
        return Some(v);
    }
    if items == 0 {
        return None;
    }
    let one_hit = hits.min(1);
    if let Some(h) = largest(one_hit, hits, |h| {
        attempt(Cut { hits: h, ..full }).is_some()
    }) {
        return attempt(Cut { hits: h, ..full });
    }
    let base = Cut {
        items,
        hits: one_hit,
        text,
    };
    if let Some(k) = largest(1, items, |k| attempt(Cut { items: k, ..base }).is_some()) {
        return attempt(Cut { items: k, ..base });
    }
    let one = Cut { items: 1, ..base };
    let t = largest(0, text, |t| attempt(Cut { text: t, ..one }).is_some())?;
    attempt(Cut { text: t, ..one })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// A page of sessions, each with hits, rendered under a cut, the way the
    /// MCP search renders it.
    fn render(page: &[(String, Vec<String>)], c: Cut) -> Value {
        let mut t = Truncated {
            sessions: page.len().saturating_sub(c.items) as u64,
            ..Truncated::default()
        };
        let sessions: Vec<Value> = page
            .iter()
            .take(c.items)
            .map(|(key, hits)| {
                t.hits += hits.len().saturating_sub(c.hits) as u64;
                let hits: Vec<Value> = hits
                    .iter()
                    .take(c.hits)
                    .map(|h| {
                        let (s, cut) = clip(h, c.text);
                        t.chars += cut;
                        json!({"snippet": s})
                    })
                    .collect();
                json!({"session": key, "hits": hits})
            })
            .collect();
        json!({"sessions": sessions, "truncated": t, "index": {"revision": 7}})
    }

    fn page() -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
        proptest::collection::vec(
            (
                "[a-z]{1,12}",
                proptest::collection::vec("[a-zé ]{0,300}", 0..4),
            ),
            0..30,
        )
        .prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (k, h))| (format!("{i}:{k}"), h))
                .collect()
        })
    }

    proptest! {
        /// For random budgets the answer never exceeds its budget, and what
        /// it keeps is a prefix (sessions, then hits, then text) of the full
        /// answer in rank order.
        #[test]
        fn answers_fit_and_keep_a_prefix(p in page(), tokens in 20u64..3_000) {
            let limit = max_chars(tokens);
            let hits = p.iter().map(|s| s.1.len()).max().unwrap_or(0);
            let text = p.iter().flat_map(|s| &s.1).map(|h| h.chars().count()).max().unwrap_or(0);
            let full = render(&p, Cut { items: p.len(), hits, text });
            match fit(limit, p.len(), hits, text, |c| render(&p, c)) {
                None => {
                    // Only when not even one session, one hit, no text fits.
                    let least = render(&p, Cut { items: 1.min(p.len()), hits: 1.min(hits), text: 0 });
                    prop_assert!(size(&least) > limit);
                }
                Some(v) => {
                    prop_assert!(size(&v) <= limit);
                    let kept = v["sessions"].as_array().unwrap();
                    let all = full["sessions"].as_array().unwrap();
                    prop_assert!(kept.len() <= all.len());
                    for (k, f) in kept.iter().zip(all) {
                        prop_assert_eq!(&k["session"], &f["session"]);
                        let kh = k["hits"].as_array().unwrap();
                        let fh = f["hits"].as_array().unwrap();
                        prop_assert!(kh.len() <= fh.len());
                        for (a, b) in kh.iter().zip(fh) {
                            let (a, b) = (a["snippet"].as_str().unwrap(), b["snippet"].as_str().unwrap());
                            prop_assert!(b.starts_with(a));
                        }
                    }
                    if size(&full) <= limit {
                        prop_assert_eq!(&v, &full);
                    }
                }
            }
        }
    }

    #[test]
    fn clip_counts_code_points() {
        assert_eq!(clip("héllo", 2), ("hé", 3));
        assert_eq!(clip("hi", 5), ("hi", 0));
    }

    #[test]
    fn budgets_outside_the_range_are_refused() {
        assert_eq!(check_tokens(None), Ok(DEFAULT_MAX_TOKENS));
        assert!(check_tokens(Some(10)).is_err());
        assert!(check_tokens(Some(u64::MAX)).is_err());
    }
}
