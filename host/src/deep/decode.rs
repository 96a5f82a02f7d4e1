//! A matching source line as a person reads it: the JSON record's string
//! field that holds the match (not the raw JSON, whose escapes hide the
//! text), a window of it around the match with the match's byte ranges,
//! the ids the record names (to find it among the indexed records), and a
//! kind from the field's name when the record is not an indexed one.

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use serde::Serialize;
use serde_json::Value;

/// Characters of text kept around a match.
pub const WINDOW_CHARS: usize = 240;
/// Lines longer than this are shown raw (not parsed as JSON).
const MAX_PARSE: usize = 16 << 20;

/// What kind of record a matching line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An indexed user message.
    User,
    /// An indexed assistant message.
    Assistant,
    /// Reasoning (a `thinking`, `reasoning` or `thought` field).
    Reasoning,
    /// An indexed tool row.
    Tool,
    /// Anything else: tool traffic past the index's cap, metadata, events.
    Other,
}

/// A decoded matching line.
#[derive(Debug)]
pub struct Decoded {
    /// The text window.
    pub text: String,
    /// Byte ranges of the match in `text`.
    pub highlights: Vec<[usize; 2]>,
    /// The JSON path of the field, when the line is JSON.
    pub field: Option<String>,
    /// `uuid` / `id` / `message.id` strings the record carries.
    pub ids: Vec<String>,
    /// The kind the field's name suggests.
    pub kind: Kind,
}

/// The first string leaf of `v` the matcher finds, with its path.
fn find_leaf<'v>(v: &'v Value, m: &RegexMatcher, path: &mut String) -> Option<&'v str> {
    match v {
        Value::String(s) => m.is_match(s.as_bytes()).ok()?.then_some(s.as_str()),
        Value::Array(a) => a.iter().enumerate().find_map(|(i, x)| {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            let r = find_leaf(x, m, path);
            if r.is_none() {
                path.truncate(len);
            }
            r
        }),
        Value::Object(o) => o.iter().find_map(|(k, x)| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(k);
            let r = find_leaf(x, m, path);
            if r.is_none() {
                path.truncate(len);
            }
            r
        }),
        _ => None,
    }
}

fn ids(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for p in ["/uuid", "/id", "/message/id", "/payload/id"] {
        if let Some(Value::String(s)) = v.pointer(p) {
            out.push(s.clone());
        }
    }
    out
}

/// The kind of field `field` of record `v`: reasoning by the field's name,
/// or by the record's own `type` (an OpenCode `reasoning` part's `text`).
fn kind_of(v: &Value, field: &str) -> Kind {
    let f = field.to_ascii_lowercase();
    if v.get("type").and_then(Value::as_str) == Some("reasoning") && field == "text" {
        return Kind::Reasoning;
    }
    if ["thinking", "reasoning", "thought"]
        .iter()
        .any(|w| f.contains(w))
    {
        Kind::Reasoning
    } else {
        Kind::Other
    }
}

/// The window of `text` around its first match, at most [`WINDOW_CHARS`]
/// characters, on character boundaries, with every match inside it.
fn window(text: &str, m: &RegexMatcher) -> (String, Vec<[usize; 2]>) {
    let bytes = text.as_bytes();
    let first = m.find(bytes).ok().flatten().map_or(0, |r| r.start());
    let before: usize = text[..first]
        .chars()
        .rev()
        .take(WINDOW_CHARS / 3)
        .map(char::len_utf8)
        .sum();
    let start = first - before;
    let end = text[start..]
        .char_indices()
        .nth(WINDOW_CHARS)
        .map_or(text.len(), |(i, _)| start + i);
    let cut = &text[start..end];
    let mut marks = Vec::new();
    let _ = m.find_iter(cut.as_bytes(), |r| {
        if r.start() < r.end() {
            marks.push([r.start(), r.end()]);
        }
        marks.len() < 64
    });
    let mut s = String::with_capacity(cut.len() + 6);
    let lead = if start > 0 { "…" } else { "" };
    s.push_str(lead);
    s.push_str(cut);
    if end < text.len() {
        s.push('…');
    }
    let shift = lead.len();
    (
        s,
        marks
            .into_iter()
            .map(|[a, b]| [a + shift, b + shift])
            .collect(),
    )
}

/// Decodes one matching line.
pub fn line(raw: &[u8], m: &RegexMatcher) -> Decoded {
    let parsed = (raw.len() <= MAX_PARSE)
        .then(|| serde_json::from_slice::<Value>(raw).ok())
        .flatten();
    if let Some(v) = parsed {
        let mut path = String::new();
        if let Some(leaf) = find_leaf(&v, m, &mut path) {
            let (text, highlights) = window(leaf, m);
            return Decoded {
                text,
                highlights,
                kind: kind_of(&v, &path),
                field: Some(path),
                ids: ids(&v),
            };
        }
        // The match spans JSON syntax (a key, an escape): show the line.
        let lossy = String::from_utf8_lossy(raw);
        let (text, highlights) = window(&lossy, m);
        return Decoded {
            text,
            highlights,
            field: None,
            ids: ids(&v),
            kind: Kind::Other,
        };
    }
    let lossy = String::from_utf8_lossy(raw);
    let (text, highlights) = window(&lossy, m);
    Decoded {
        text,
        highlights,
        field: None,
        ids: Vec::new(),
        kind: Kind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_regex::RegexMatcherBuilder;

    fn m(p: &str) -> RegexMatcher {
        RegexMatcherBuilder::new()
            .fixed_strings(true)
            .build(p)
            .unwrap()
    }

    #[test]
    fn a_json_line_shows_the_field_that_matched() {
        let raw = br#"{"uuid":"u-1","message":{"content":[{"type":"thinking","thinking":"the \"flaky\" test\nagain"}]}}"#;
        let d = line(raw, &m("\"flaky\" test\nagain"));
        assert_eq!(d.field.as_deref(), Some("message.content[0].thinking"));
        assert_eq!(d.text, "the \"flaky\" test\nagain");
        assert_eq!(d.highlights, vec![[4, 22]]);
        assert_eq!(d.kind, Kind::Reasoning);
        assert_eq!(d.ids, vec!["u-1".to_string()]);
    }

    #[test]
    fn a_long_field_is_windowed_around_the_match_on_char_boundaries() {
        let text = format!("{}needle{}", "é".repeat(500), "ü".repeat(500));
        let raw = serde_json::json!({"output": text}).to_string();
        let d = line(raw.as_bytes(), &m("needle"));
        assert!(d.text.starts_with('…') && d.text.ends_with('…'));
        assert!(d.text.chars().count() <= WINDOW_CHARS + 2);
        let [a, b] = d.highlights[0];
        assert_eq!(&d.text[a..b], "needle");
    }

    #[test]
    fn a_plain_line_is_itself() {
        let d = line(b"not json: needle here", &m("needle"));
        assert_eq!(d.text, "not json: needle here");
        assert_eq!(d.field, None);
        assert_eq!(d.highlights, vec![[10, 16]]);
    }
}
