//! Snippets and highlight ranges (DESIGN.md §3–§4), in byte offsets of the
//! ORIGINAL record text.

use crate::fold::OffsetMap;
use crate::matcher::Term;

/// Bytes of context before the earliest occurrence.
pub const BEFORE: usize = 120;
/// Window length from its start.
pub const WINDOW: usize = 280;

/// A snippet window with its highlight ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// Byte offset of the window in the original text.
    pub offset: usize,
    /// The window's text.
    pub text: String,
    /// Merged `[start, end]` ranges into the original text, within the window.
    pub ranges: Vec<[u64; 2]>,
}

/// The original byte range `[start, end)` covered by the folded occurrence
/// `[s, e)`: from the char that produced folded byte `s` to the one that
/// produced byte `e - 1`, extended over following chars whose fold is empty.
pub fn original_range(
    map: Option<&OffsetMap>,
    folded_len: usize,
    original_len: usize,
    s: usize,
    e: usize,
) -> (usize, usize) {
    match map {
        None => (s, e),
        Some(m) => {
            let end = if e < folded_len {
                m.original(e)
            } else {
                original_len
            };
            (m.original(s), end)
        }
    }
}

/// Builds the snippet of a matching record.
///
/// The window starts [`BEFORE`] bytes ahead of the earliest occurrence of
/// any term, so only that first occurrence of each term is needed to place
/// it; a term's occurrences then come leftmost first, so its scan stops at
/// the window's end instead of running through the whole record.
pub fn snippet(original: &str, folded: &[u8], map: Option<&OffsetMap>, terms: &[Term]) -> Snippet {
    let range = |s, e| original_range(map, folded.len(), original.len(), s, e);
    let first = terms
        .iter()
        .filter_map(|t| {
            let mut at = None;
            t.for_each(folded, map, |s, e| {
                at = Some(range(s, e).0);
                false
            });
            at
        })
        .min()
        .unwrap_or(0);
    let (start, end) = window(original, first);
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for t in terms {
        t.for_each(folded, map, |s, e| {
            let (s, e) = range(s, e);
            if s >= end {
                return false;
            }
            if e > start {
                ranges.push((s.max(start), e.min(end)));
            }
            true
        });
    }
    Snippet {
        offset: start,
        text: original[start..end].to_string(),
        ranges: merged(ranges),
    }
}

/// The window around the earliest occurrence (at `first`): [`BEFORE`]
/// bytes ahead of it, [`WINDOW`] bytes long, widened to char boundaries.
fn window(original: &str, first: usize) -> (usize, usize) {
    let mut start = first.saturating_sub(BEFORE);
    while !original.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + WINDOW).min(original.len());
    while !original.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

/// Highlight ranges sorted, overlapping or touching ones merged.
fn merged(mut ranges: Vec<(usize, usize)>) -> Vec<[u64; 2]> {
    ranges.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s as u64 <= last[1] => last[1] = last[1].max(e as u64),
            _ => out.push([s as u64, e as u64]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::{fold, fold_str};
    use proptest::prelude::*;

    /// The reference: every occurrence of every term through the whole
    /// record, then the window around the earliest (what `snippet` did
    /// before it stopped at the window's end).
    fn naive(original: &str, folded: &[u8], map: Option<&OffsetMap>, terms: &[Term]) -> Snippet {
        let mut occ = Vec::new();
        for t in terms {
            t.for_each(folded, map, |s, e| {
                occ.push(original_range(map, folded.len(), original.len(), s, e));
                true
            });
        }
        let first = occ.iter().map(|o| o.0).min().unwrap_or(0);
        let (start, end) = window(original, first);
        let ranges: Vec<(usize, usize)> = occ
            .into_iter()
            .filter(|&(s, e)| s < end && e > start)
            .map(|(s, e)| (s.max(start), e.min(end)))
            .collect();
        Snippet {
            offset: start,
            text: original[start..end].to_string(),
            ranges: merged(ranges),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Stopping each term's scan at the window's end changes nothing:
        /// long texts of a small alphabet (many occurrences, past the
        /// window too), with chars that fold to several bytes, to nothing,
        /// and from several chars to one term.
        #[test]
        fn equals_the_full_scan(
            parts in proptest::collection::vec(
                prop_oneof![Just("ab"), Just("a"), Just(" "), Just("ß"), Just("SS"), Just("é"),
                    Just("e\u{301}"), Just("ﬁ"), Just("数据"), Just("x".repeat(90).leak() as &str)],
                0..120,
            ),
            terms in proptest::collection::vec(
                prop_oneof![Just("a"), Just("ab"), Just("b a"), Just("ss"), Just("e"), Just("fi"),
                    Just("据"), Just("xx"), Just("ba")],
                1..4,
            ),
        ) {
            let text: String = parts.concat();
            let f = fold(&text);
            let terms: Vec<Term> = terms.iter().map(|t| Term::new(&fold_str(t))).collect();
            prop_assert_eq!(
                snippet(&text, f.text.as_bytes(), f.map.as_ref(), &terms),
                naive(&text, f.text.as_bytes(), f.map.as_ref(), &terms)
            );
        }
    }

    fn snip(text: &str, terms: &[&str]) -> Snippet {
        let f = fold(text);
        let terms: Vec<Term> = terms.iter().map(|t| Term::new(&fold_str(t))).collect();
        snippet(text, f.text.as_bytes(), f.map.as_ref(), &terms)
    }

    #[test]
    fn ranges_cover_whole_original_chars() {
        let s = snip("Die Straße ist lang", &["strasse"]);
        assert_eq!(s.ranges, vec![[4, 11]]);
        assert_eq!(&s.text[4..11], "Straße");
    }

    #[test]
    fn extends_over_empty_folds() {
        // "cafe" + combining acute: the accent folds to nothing.
        let s = snip("cafe\u{301}s", &["cafe"]);
        assert_eq!(s.ranges, vec![[0, 6]]);
    }

    #[test]
    fn window_and_merging() {
        let text = format!("{}needle needle{}", "x".repeat(200), "y".repeat(400));
        let s = snip(&text, &["needle", "le ne"]);
        assert_eq!(s.offset, 80);
        assert_eq!(s.text.len(), 280);
        assert_eq!(s.ranges, vec![[200, 213]]);
    }

    #[test]
    fn window_moves_to_char_boundaries() {
        let text = format!("{}é{}needle", "x".repeat(10), "é".repeat(60));
        let s = snip(&text, &["needle"]);
        assert!(text.is_char_boundary(s.offset));
        assert!(s.offset <= text.len() - 6 - 120);
    }
}
