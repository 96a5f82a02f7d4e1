//! The literal text clause of a session filter: Unicode case-insensitive
//! through the core's fold (DESIGN.md §3), and each whitespace run in the
//! clause matches one or more whitespace chars of the record (a leading or
//! trailing run too, so `" foo"` needs whitespace before `foo`).

use crate::fold::{fold, fold_str, OffsetMap};
use crate::matcher::{is_boundary, Term};

#[derive(Clone, Debug)]
enum Token {
    /// One or more whitespace chars.
    Space,
    /// A folded literal piece (never empty, never starts with whitespace).
    Lit(Box<Term>),
}

/// A compiled text clause.
#[derive(Clone, Debug)]
pub struct TextClause {
    tokens: Vec<Token>,
}

impl TextClause {
    /// Compiles `clause`; `None` when it folds to nothing at all.
    pub fn new(clause: &str) -> Option<TextClause> {
        let mut tokens = Vec::new();
        let mut rest = clause;
        while !rest.is_empty() {
            let ws = rest.len() - rest.trim_start_matches(char::is_whitespace).len();
            if ws > 0 {
                if !matches!(tokens.last(), Some(Token::Space)) {
                    tokens.push(Token::Space);
                }
                rest = &rest[ws..];
                continue;
            }
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let folded = fold_str(&rest[..end]);
            rest = &rest[end..];
            if folded.is_empty() {
                continue;
            }
            // A piece whose fold starts or ends with whitespace (a compatibility
            // space) folds into the neighbouring run rule.
            let trimmed = folded.trim_matches(char::is_whitespace);
            if trimmed.len() != folded.len()
                && folded.starts_with(char::is_whitespace)
                && !matches!(tokens.last(), Some(Token::Space))
            {
                tokens.push(Token::Space);
            }
            if !trimmed.is_empty() {
                tokens.push(Token::Lit(Box::new(Term::new(trimmed))));
            }
            if trimmed.len() != folded.len() && folded.ends_with(char::is_whitespace) {
                tokens.push(Token::Space);
            }
        }
        tokens.dedup_by(|a, b| matches!((a, b), (Token::Space, Token::Space)));
        if tokens.is_empty() {
            None
        } else {
            Some(TextClause { tokens })
        }
    }

    /// Whether the clause occurs in `text`.
    pub fn matches(&self, text: &str) -> bool {
        let f = fold(text);
        self.matches_folded(f.text.as_bytes(), f.map.as_ref())
    }

    /// Whether the clause occurs in a folded text with boundary map `map`.
    pub fn matches_folded(&self, hay: &[u8], map: Option<&OffsetMap>) -> bool {
        match &self.tokens[0] {
            Token::Lit(t) => {
                let mut pos = 0;
                while pos <= hay.len() {
                    let Some(i) = t.find(&hay[pos..]) else {
                        return false;
                    };
                    let start = pos + i;
                    if self.match_at(hay, map, start) {
                        return true;
                    }
                    pos = start + 1;
                }
                false
            }
            Token::Space => {
                let mut pos = 0;
                while pos < hay.len() {
                    if space_len(hay, pos) > 0 && self.match_at(hay, map, pos) {
                        return true;
                    }
                    pos += char_len(hay[pos]);
                }
                false
            }
        }
    }

    fn match_at(&self, hay: &[u8], map: Option<&OffsetMap>, mut pos: usize) -> bool {
        for tok in &self.tokens {
            match tok {
                Token::Space => {
                    let mut n = 0;
                    loop {
                        let l = space_len(hay, pos);
                        if l == 0 {
                            break;
                        }
                        pos += l;
                        n += 1;
                    }
                    if n == 0 {
                        return false;
                    }
                }
                Token::Lit(t) => {
                    let needle = t.needle();
                    let end = pos + needle.len();
                    if !hay[pos..].starts_with(needle)
                        || !is_boundary(map, pos, hay.len())
                        || !is_boundary(map, end, hay.len())
                    {
                        return false;
                    }
                    pos = end;
                }
            }
        }
        true
    }
}

/// Byte length of the whitespace char at `pos` of folded `hay`, or 0.
fn space_len(hay: &[u8], pos: usize) -> usize {
    if pos >= hay.len() {
        return 0;
    }
    let l = char_len(hay[pos]);
    match std::str::from_utf8(&hay[pos..(pos + l).min(hay.len())]) {
        Ok(s) if s.chars().next().is_some_and(char::is_whitespace) => l,
        _ => 0,
    }
}

fn char_len(lead: u8) -> usize {
    match lead {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: over ORIGINAL chars, each folded on its own; a literal
    /// is a run of whole chars whose folds concatenate to it, a space token
    /// one or more chars that are whitespace or fold to whitespace only.
    fn naive(clause: &str, text: &str) -> bool {
        let Some(c) = TextClause::new(clause) else {
            return false;
        };
        let chars: Vec<String> = text.chars().map(|ch| fold_str(&ch.to_string())).collect();
        (0..=chars.len()).any(|i| naive_at(&c.tokens, &chars, i))
    }

    fn is_space(f: &str) -> bool {
        !f.is_empty() && f.chars().all(char::is_whitespace)
    }

    fn naive_at(tokens: &[Token], chars: &[String], i: usize) -> bool {
        let Some((tok, rest)) = tokens.split_first() else {
            return true;
        };
        match tok {
            Token::Space => {
                let mut j = i;
                while j < chars.len() && (is_space(&chars[j]) || (j > i && chars[j].is_empty())) {
                    j += 1;
                    if is_space(&chars[j - 1]) && naive_at(rest, chars, j) {
                        return true;
                    }
                }
                false
            }
            Token::Lit(t) => {
                let want = std::str::from_utf8(t.needle()).unwrap_or("");
                let mut acc = String::new();
                let mut j = i;
                while j < chars.len() && want.starts_with(acc.as_str()) {
                    acc.push_str(&chars[j]);
                    j += 1;
                    if acc == want && naive_at(rest, chars, j) {
                        return true;
                    }
                }
                false
            }
        }
    }

    #[test]
    fn whitespace_runs_match_one_or_more() {
        let c = TextClause::new("fix  the\tbug").unwrap();
        assert!(c.matches("please fix the bug"));
        assert!(c.matches("fix\n\n   the \u{3000}bug now"));
        assert!(!c.matches("fixthe bug"));
        assert!(!c.matches("fix the-bug"));
        let lead = TextClause::new(" bug").unwrap();
        assert!(lead.matches("a bug"));
        assert!(!lead.matches("bug"));
    }

    #[test]
    fn unicode_case_folding() {
        assert!(TextClause::new("STRASSE").unwrap().matches("die Straße"));
        assert!(TextClause::new("café")
            .unwrap()
            .matches("CAFE\u{301} au lait"));
        assert!(TextClause::new("Ελληνικά").unwrap().matches("ελληνικα"));
        assert!(!TextClause::new("stras").unwrap().matches("Straße"));
        assert!(TextClause::new("   ").unwrap().matches("a b"));
        assert!(TextClause::new("\u{301}").is_none());
    }

    #[test]
    fn overlapping_first_piece() {
        assert!(TextClause::new("aa b").unwrap().matches("aaa b"));
    }

    fn piece() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "a", "A", "b", "é", "e\u{301}", "E", "ß", "ss", "S", " ", "  ", "\t", "\n", "\u{3000}",
            "\u{a0}", "ﬁ", "fi", "\u{301}", "x", "-",
        ])
        .prop_map(str::to_string)
    }

    proptest! {
        #[test]
        fn agrees_with_naive(
            clause in prop::collection::vec(piece(), 1..5),
            text in prop::collection::vec(piece(), 0..14),
        ) {
            let clause = clause.concat();
            let text = text.concat();
            let fast = TextClause::new(&clause).is_some_and(|c| c.matches(&text));
            prop_assert_eq!(fast, naive(&clause, &text), "clause {:?} text {:?}", clause, text);
        }
    }
}
