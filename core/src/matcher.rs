//! Term matching over folded text (DESIGN.md §3): substring occurrences that
//! start and end on the fold of whole original chars, leftmost first and
//! non-overlapping; a whole-word term (`w:`, §13) only those that also start
//! and end on Unicode word boundaries (UAX #29) of the folded text.

use crate::fold::OffsetMap;
use memchr::memmem::Finder;
use unicode_segmentation::UnicodeSegmentation;

/// A folded query term with its compiled searcher.
#[derive(Clone, Debug)]
pub struct Term {
    finder: Finder<'static>,
    word: bool,
}

impl Term {
    /// Compiles a folded, non-empty term.
    pub fn new(folded: &str) -> Term {
        Term {
            finder: Finder::new(folded.as_bytes()).into_owned(),
            word: false,
        }
    }

    /// Compiles a folded, non-empty term that matches whole words only.
    pub fn word(folded: &str) -> Term {
        Term {
            word: true,
            ..Term::new(folded)
        }
    }

    /// Whether it matches whole words only.
    pub fn is_word(&self) -> bool {
        self.word
    }

    /// The folded term's bytes.
    pub fn needle(&self) -> &[u8] {
        self.finder.needle()
    }

    /// The first raw position of the term in `hay`, ignoring char
    /// boundaries (used to find candidate records in a shard buffer).
    #[inline]
    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        self.finder.find(hay)
    }

    /// Calls `f(start, end)` for every occurrence in a folded record text
    /// (`hay`) whose boundary map is `map` (`None` = identity). Returns early
    /// when `f` returns `false`.
    pub fn for_each(
        &self,
        hay: &[u8],
        map: Option<&OffsetMap>,
        mut f: impl FnMut(usize, usize) -> bool,
    ) {
        if self.word {
            return self.for_each_word(hay, map, f);
        }
        let n = self.finder.needle().len();
        if map.is_none() {
            // Every position of an all-ASCII text is a char boundary, so
            // memmem's own leftmost non-overlapping iteration is exact (and its
            // iterator keeps prefilter state across matches).
            for start in self.finder.find_iter(hay) {
                if !f(start, start + n) {
                    return;
                }
            }
            return;
        }
        let mut pos = 0;
        while pos + n <= hay.len() {
            let Some(i) = self.finder.find(&hay[pos..]) else {
                return;
            };
            let start = pos + i;
            let end = start + n;
            if is_boundary(map, start, hay.len()) && is_boundary(map, end, hay.len()) {
                if !f(start, end) {
                    return;
                }
                pos = end;
            } else {
                pos = start + 1;
            }
        }
    }

    /// [`Term::for_each`] of a whole-word term: the substring occurrences
    /// whose both ends are word boundaries; after a refused one the search
    /// goes on one char later (`aa` in `aaa aa` is the second word).
    fn for_each_word(
        &self,
        hay: &[u8],
        map: Option<&OffsetMap>,
        mut f: impl FnMut(usize, usize) -> bool,
    ) {
        let Ok(text) = std::str::from_utf8(hay) else {
            return;
        };
        let n = self.finder.needle().len();
        let mut bounds: Option<Vec<usize>> = None;
        let mut pos = 0;
        while pos + n <= hay.len() {
            let Some(i) = self.finder.find(&hay[pos..]) else {
                return;
            };
            let (start, end) = (pos + i, pos + i + n);
            let b = bounds
                .get_or_insert_with(|| text.split_word_bound_indices().map(|(i, _)| i).collect());
            let at_bound = |i: usize| i == hay.len() || b.binary_search(&i).is_ok();
            if is_boundary(map, start, hay.len())
                && is_boundary(map, end, hay.len())
                && at_bound(start)
                && at_bound(end)
            {
                if !f(start, end) {
                    return;
                }
                pos = end;
            } else {
                pos = start + text[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
    }

    /// Whether the term occurs at least once.
    pub fn occurs(&self, hay: &[u8], map: Option<&OffsetMap>) -> bool {
        let mut found = false;
        self.for_each(hay, map, |_, _| {
            found = true;
            false
        });
        found
    }

    /// Number of non-overlapping occurrences.
    pub fn count(&self, hay: &[u8], map: Option<&OffsetMap>) -> u64 {
        let mut n = 0;
        self.for_each(hay, map, |_, _| {
            n += 1;
            true
        });
        n
    }
}

/// Whether folded position `i` of a text of `len` folded bytes lies between
/// the folds of two original chars.
#[inline]
pub fn is_boundary(map: Option<&OffsetMap>, i: usize, len: usize) -> bool {
    match map {
        None => true,
        Some(m) => i == 0 || i >= len || m.is_boundary(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold::{fold, fold_str};

    fn occ(text: &str, term: &str) -> Vec<(usize, usize)> {
        occurrences(text, &Term::new(&fold_str(term)))
    }

    fn words(text: &str, term: &str) -> Vec<(usize, usize)> {
        occurrences(text, &Term::word(&fold_str(term)))
    }

    fn occurrences(text: &str, t: &Term) -> Vec<(usize, usize)> {
        let f = fold(text);
        let mut v = Vec::new();
        t.for_each(f.text.as_bytes(), f.map.as_ref(), |s, e| {
            v.push((s, e));
            true
        });
        v
    }

    #[test]
    fn whole_chars_only() {
        assert!(occ("かな", "か").len() == 1);
        assert!(occ("が", "か").is_empty());
        assert!(occ("ﬁle", "f").is_empty());
        assert!(occ("Straße", "stras").is_empty());
        assert_eq!(occ("Straße", "strasse").len(), 1);
        assert!(occ("한국", "하").is_empty());
        assert_eq!(occ("하다", "하").len(), 1);
    }

    #[test]
    fn whole_words_only_at_word_boundaries() {
        assert!(words("because", "cause").is_empty());
        assert_eq!(words("the cause.", "cause"), vec![(4, 9)]);
        assert_eq!(
            words("Cause, because cause", "cause"),
            vec![(0, 5), (15, 20)]
        );
        assert_eq!(words("aaa aa", "aa"), vec![(4, 6)]);
        assert_eq!(words("snake_case case", "case"), vec![(11, 15)]);
        assert!(words("renderRoute", "route").is_empty());
        assert_eq!(
            words("é-cause", "cause"),
            vec![(2, 7)],
            "offsets in the folded text"
        );
    }

    #[test]
    fn non_overlapping_leftmost() {
        assert_eq!(occ("aaaa", "aa"), vec![(0, 2), (2, 4)]);
        assert_eq!(occ("aaa", "aa"), vec![(0, 2)]);
    }
}
