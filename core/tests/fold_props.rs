//! Property tests: the fast fold and matcher against a naive per-char
//! reference on random Unicode drawn from the scripts DESIGN.md §3 names.

use caseless::Caseless;
use proptest::prelude::*;
use recall_core::fold::{fold, fold_str};
use recall_core::matcher::Term;
use recall_core::snippet::original_range;
use unicode_normalization::UnicodeNormalization;

/// The reference fold of one char, written straight from the §3 rules.
fn ref_fold_char(c: char) -> String {
    let u = c as u32;
    if u < 0x80 {
        return c.to_ascii_lowercase().to_string();
    }
    if (0xAC00..=0xD7A3).contains(&u) {
        return c.to_string();
    }
    match c {
        '‘' | '’' | '‚' | '‛' | '′' => return "'".into(),
        '“' | '”' | '„' | '‟' | '″' => return "\"".into(),
        '‐' | '‑' | '‒' | '–' | '—' | '―' | '−' => return "-".into(),
        '…' => return "...".into(),
        _ => {}
    }
    if is_zs(c) {
        return " ".into();
    }
    let a: String = c.to_string().nfkd().collect();
    let b: String = a.chars().default_case_fold().collect();
    let d: String = b.nfkd().collect();
    d.chars()
        .filter(|&x| !('\u{300}'..='\u{36f}').contains(&x))
        .collect()
}

fn is_zs(c: char) -> bool {
    // General category Zs, minus U+0020 (ASCII).
    [
        0x00A0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008,
        0x2009, 0x200A, 0x202F, 0x205F, 0x3000,
    ]
    .contains(&(c as u32))
}

/// Reference fold with map.
fn ref_fold(text: &str) -> (String, Vec<usize>) {
    let mut out = String::new();
    let mut map = Vec::new();
    for (i, c) in text.char_indices() {
        let f = ref_fold_char(c);
        for _ in 0..f.len() {
            map.push(i);
        }
        out.push_str(&f);
    }
    (out, map)
}

/// Reference occurrences: scan every position, accept whole-char starts/ends,
/// resume after the end of an accepted occurrence.
fn ref_occurrences(text: &str, term: &str) -> Vec<(usize, usize)> {
    let (f, map) = ref_fold(text);
    let (f, t) = (f.as_bytes(), term.as_bytes());
    let boundary = |i: usize| i == 0 || i == f.len() || map[i - 1] != map[i];
    let mut out = Vec::new();
    let mut i = 0;
    while !t.is_empty() && i + t.len() <= f.len() {
        if &f[i..i + t.len()] == t && boundary(i) && boundary(i + t.len()) {
            let s = map[i];
            let e = if i + t.len() < f.len() {
                map[i + t.len()]
            } else {
                text.len()
            };
            out.push((s, e));
            i += t.len();
        } else {
            i += 1;
        }
    }
    out
}

fn fast_occurrences(text: &str, term: &str) -> Vec<(usize, usize)> {
    let f = fold(text);
    let t = Term::new(term);
    let mut v = Vec::new();
    let hay = f.text.as_bytes();
    t.for_each(hay, f.map.as_ref(), |s, e| {
        v.push(original_range(f.map.as_ref(), hay.len(), text.len(), s, e));
        true
    });
    v
}

/// Pieces of text from the scripts the fold must handle.
const PIECES: &[&str] = &[
    "a",
    "B",
    "z",
    " ",
    "-",
    "'",
    "\"",
    "x1",
    "Straße",
    "STRASSE",
    "straẞe",
    "ß",
    "ẞ",
    "ss",
    "s",
    "ΣΊΣΥΦΟΣ",
    "σίσυφος",
    "ς",
    "Σ",
    "İstanbul",
    "ı",
    "I",
    "i",
    "cafés",
    "CAFÉ",
    "e\u{301}",
    "\u{301}",
    "\u{308}",
    "ﬁle",
    "ﬁ",
    "ｆｉｌｅ",
    "Ｆ",
    "don’t",
    "‘",
    "“",
    "”",
    "„",
    "a–b",
    "—",
    "−",
    "…",
    "\u{a0}",
    "\u{3000}",
    "한국",
    "하다",
    "하",
    "한",
    "かな",
    "が",
    "か",
    "\u{3099}",
    "ガ",
    "ｶﾞ",
    "数据库",
    "使用",
    "😀",
    "👨‍👩‍👧",
    "\u{200d}",
    "Å",
    "Å",
    "ǅ",
    "ﬀ",
    "½",
    "¨",
    "Ω",
    "Ω",
    "K",
    "µ",
    "ŉ",
    "ᾳ",
    "ΐ",
    "\t",
    "\n",
];

fn text_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => prop::sample::select(PIECES).prop_map(str::to_string),
            1 => any::<char>().prop_map(|c| c.to_string()),
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn fold_equals_reference(text in text_strategy()) {
        let (want, want_map) = ref_fold(&text);
        let got = fold(&text);
        prop_assert_eq!(&got.text, &want);
        let got_map: Vec<usize> = (0..got.text.len()).map(|i| got.original_offset(i)).collect();
        prop_assert_eq!(got_map, want_map);
        prop_assert_eq!(fold_str(&text), want);
    }

    #[test]
    fn matcher_equals_reference(text in text_strategy(), q in text_strategy()) {
        let term = fold_str(&q);
        prop_assume!(!term.is_empty());
        prop_assert_eq!(fast_occurrences(&text, &term), ref_occurrences(&text, &term));
    }

    #[test]
    fn infix_terms_match_reference(text in text_strategy(), a in 0usize..40, len in 1usize..12) {
        // Terms cut from the folded text itself, so matches are common.
        let (f, _) = ref_fold(&text);
        let bytes = f.as_bytes();
        prop_assume!(!bytes.is_empty());
        let s = a % bytes.len();
        let e = (s + len).min(bytes.len());
        let Ok(term) = std::str::from_utf8(&bytes[s..e]) else { return Ok(()) };
        prop_assert_eq!(fast_occurrences(&text, term), ref_occurrences(&text, term));
    }
}

#[test]
fn design_table_rows() {
    let matches = |q: &str, text: &str| !fast_occurrences(text, &fold_str(q)).is_empty();
    let rows: &[(&str, &[&str], &[&str])] = &[
        ("strasse", &["Straße", "STRASSE", "straẞe"], &[]),
        ("σίσυφος", &["ΣΊΣΥΦΟΣ", "σίσυφοσ"], &[]),
        ("istanbul", &["İstanbul", "ISTANBUL"], &[]),
        ("cafes", &["cafés", "CAFÉS"], &[]),
        ("file", &["ﬁle", "ｆｉｌｅ"], &[]),
        ("don't", &["don’t", "DON'T"], &[]),
        ("a-b", &["a–b", "a—b"], &[]),
        ("数据库", &["使用数据库连接"], &[]),
        ("하", &["하다"], &["한국"]),
        ("か", &["かな"], &["が"]),
    ];
    for (q, yes, no) in rows {
        for t in *yes {
            assert!(matches(q, t), "{q:?} should match {t:?}");
        }
        for t in *no {
            assert!(!matches(q, t), "{q:?} must not match {t:?}");
        }
    }
    assert!(!matches("stras", "Straße"));
    assert!(!matches("f", "ﬁ"));
    assert!(matches(" ", "¨"));
}
