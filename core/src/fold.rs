//! Folding (DESIGN.md §3): the case-, diacritic-, width- and
//! typographic-punctuation-insensitive form that matching runs on.
//!
//! Each ORIGINAL char is folded on its own, and every folded byte can tell
//! the byte offset of the original char that produced it ([`OffsetMap`]).
//! That map is what keeps matches on whole original chars and turns folded
//! matches back into highlight ranges over the original text.

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;

/// A folded text and, for non-ASCII input, its folded→original offset map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// The folded text.
    pub text: String,
    /// Where each folded byte came from. `None` when the original was all
    /// ASCII (folded byte `i` is original byte `i`).
    pub map: Option<OffsetMap>,
}

impl Folded {
    /// The original offset of the char that produced folded byte `i`
    /// (`i < text.len()`).
    #[inline]
    pub fn original_offset(&self, i: usize) -> usize {
        match &self.map {
            Some(m) => m.original(i),
            None => i,
        }
    }
}

/// One non-ASCII original char: where its fold starts and how long it is.
/// ASCII chars between spans fold to one byte each and need no entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Span {
    folded: u32,
    original: u32,
    folded_len: u16,
    original_len: u8,
}

/// The folded→original map of a non-ASCII text, stored per non-ASCII char
/// (about 12 bytes each) rather than per folded byte.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OffsetMap {
    spans: Box<[Span]>,
}

impl OffsetMap {
    /// The span holding or preceding folded byte `i`. Spans that start at
    /// the same folded offset (empty folds, then a char's fold) resolve to
    /// the last one, which is the char whose fold starts there.
    #[inline]
    fn span_before(&self, i: usize) -> Option<&Span> {
        let n = self.spans.partition_point(|s| s.folded as usize <= i);
        n.checked_sub(1).map(|k| &self.spans[k])
    }

    /// Original byte offset of the char that produced folded byte `i`.
    #[inline]
    pub fn original(&self, i: usize) -> usize {
        match self.span_before(i) {
            None => i,
            Some(s) => {
                let (f, fl) = (s.folded as usize, usize::from(s.folded_len));
                if i < f + fl {
                    s.original as usize
                } else {
                    s.original as usize + usize::from(s.original_len) + (i - f - fl)
                }
            }
        }
    }

    /// Whether folded offset `i` lies between the folds of two original
    /// chars (never inside one char's multi-byte fold).
    #[inline]
    pub fn is_boundary(&self, i: usize) -> bool {
        match self.span_before(i) {
            None => true,
            Some(s) => {
                let f = s.folded as usize;
                i == f || i >= f + usize::from(s.folded_len)
            }
        }
    }

    /// Heap bytes.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.spans)
    }
}

/// Folds `text`, recording the folded→original map.
pub fn fold(text: &str) -> Folded {
    if text.is_ascii() {
        return Folded {
            text: text.to_ascii_lowercase(),
            map: None,
        };
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut spans = Vec::new();
    let mut scratch = String::new();
    let mut i = 0;
    while i < bytes.len() {
        // A run of ASCII: lowercase in bulk.
        let run = bytes[i..]
            .iter()
            .position(|b| !b.is_ascii())
            .unwrap_or(bytes.len() - i);
        if run > 0 {
            out.push_str(&text[i..i + run].to_ascii_lowercase());
            i += run;
            continue;
        }
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        let before = out.len();
        fold_char_into(c, &mut out, &mut scratch);
        // Offsets fit: texts recall folds are capped far below 4 GiB.
        spans.push(Span {
            folded: before as u32,
            original: i as u32,
            folded_len: (out.len() - before) as u16,
            original_len: c.len_utf8() as u8,
        });
        i += c.len_utf8();
    }
    Folded {
        text: out,
        map: Some(OffsetMap {
            spans: spans.into_boxed_slice(),
        }),
    }
}

/// Folds `text` without keeping the map (query terms).
pub fn fold_str(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    let mut buf = String::new();
    for c in text.chars() {
        fold_char_into(c, &mut out, &mut buf);
    }
    out
}

/// Appends the fold of one original char to `out`. `scratch` is reused
/// working space.
#[inline]
pub fn fold_char_into(c: char, out: &mut String, scratch: &mut String) {
    let u = c as u32;
    if u < 0x80 {
        out.push(c.to_ascii_lowercase());
    } else if u < TABLE_END {
        out.push_str(table().get(u));
    } else if is_identity(c) {
        out.push(c);
    } else {
        fold_char_slow(c, out, scratch);
    }
}

/// The §3 rules for one non-ASCII char, computed from the Unicode tables.
fn fold_char_slow(c: char, out: &mut String, scratch: &mut String) {
    if ('\u{AC00}'..='\u{D7A3}').contains(&c) {
        out.push(c);
        return;
    }
    if let Some(p) = punctuation(c) {
        out.push_str(p);
        return;
    }
    scratch.clear();
    scratch.extend(std::iter::once(c).nfkd().default_case_fold());
    out.extend(scratch.chars().nfkd().filter(|d| !is_dropped_mark(*d)));
}

/// Chars below this are folded through a table built once from the slow path
/// (Latin, Greek, Cyrillic, … general punctuation, CJK symbols and kana).
const TABLE_END: u32 = 0x3100;

/// Ranges whose chars fold to themselves: Hangul syllables and CJK unified
/// ideographs (no decomposition, no case). A test checks every char against
/// the slow path.
#[inline]
fn is_identity(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}')
}

/// Folds of U+0080..TABLE_END, packed.
struct Table {
    offsets: Vec<u32>,
    data: String,
}

impl Table {
    #[inline]
    fn get(&self, u: u32) -> &str {
        let i = (u - 0x80) as usize;
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

fn table() -> &'static Table {
    static TABLE: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut data = String::new();
        let mut offsets = vec![0u32];
        let mut scratch = String::new();
        for u in 0x80..TABLE_END {
            if let Some(c) = char::from_u32(u) {
                fold_char_slow(c, &mut data, &mut scratch);
            }
            offsets.push(data.len() as u32);
        }
        Table { offsets, data }
    })
}

/// Rule 3: typographic punctuation and space separators.
fn punctuation(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => "\"",
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => "-",
        '\u{2026}' => "...",
        c if is_space_separator(c) => " ",
        _ => return None,
    })
}

/// Unicode general category Zs (U+0020 is handled as ASCII before this).
fn is_space_separator(c: char) -> bool {
    matches!(
        c,
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

/// Combining Diacritical Marks, the only block rule 4 drops.
#[inline]
fn is_dropped_mark(c: char) -> bool {
    ('\u{0300}'..='\u{036F}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_paths_equal_the_slow_path() {
        let mut scratch = String::new();
        let ranges = [
            0x80..TABLE_END,
            0x3400..0x4DC0,
            0x4E00..0xA000,
            0xAC00..0xD7A4,
        ];
        for u in ranges.into_iter().flatten() {
            let Some(c) = char::from_u32(u) else { continue };
            let (mut fast, mut slow) = (String::new(), String::new());
            fold_char_into(c, &mut fast, &mut scratch);
            fold_char_slow(c, &mut slow, &mut scratch);
            assert_eq!(fast, slow, "U+{u:04X}");
        }
    }

    #[test]
    fn ascii_lowercases_without_map() {
        let f = fold("Hello WORLD");
        assert_eq!(f.text, "hello world");
        assert!(f.map.is_none());
    }

    #[test]
    fn map_points_at_original_chars() {
        let f = fold("Straße");
        assert_eq!(f.text, "strasse");
        // 'ß' is at byte 4 and folds to "ss".
        let offsets: Vec<usize> = (0..7).map(|i| f.original_offset(i)).collect();
        assert_eq!(offsets, vec![0, 1, 2, 3, 4, 4, 6]);
        let map = f.map.unwrap();
        let bounds: Vec<bool> = (0..=7).map(|i| map.is_boundary(i)).collect();
        assert_eq!(
            bounds,
            vec![true, true, true, true, true, false, true, true]
        );
    }

    #[test]
    fn rule_rows() {
        let cases = [
            ("Straße", "strasse"),
            ("straẞe", "strasse"),
            ("ΣΊΣΥΦΟΣ", "σισυφοσ"),
            ("σίσυφος", "σισυφοσ"),
            ("İstanbul", "istanbul"),
            ("CAFÉS", "cafes"),
            ("ﬁle", "file"),
            ("ｆｉｌｅ", "file"),
            ("don’t", "don't"),
            ("a–b", "a-b"),
            ("a—b", "a-b"),
            ("“q”", "\"q\""),
            ("x\u{00A0}y", "x y"),
            ("wait…", "wait..."),
            ("한국", "한국"),
            ("が", "か\u{3099}"),
            ("¨", " "),
            ("e\u{301}", "e"),
        ];
        for (input, want) in cases {
            assert_eq!(fold_str(input), want, "fold({input:?})");
            assert_eq!(fold(input).text, want, "fold({input:?})");
        }
    }
}
