//! Finding a search hit's record in a session by its locator (`?locate=`):
//! parsing the value the clients send (locator JSON or base64url of it) and
//! looking it up among the indexed records — exact, moved (same content
//! elsewhere) or changed (another record at its place). Re-reading the
//! source to verify the record is the host's job (it owns the extractors);
//! it hands the core a [`Verdict`].

use crate::model::{Locator, MessageRecord};
use crate::query::QueryError;
use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;

/// Largest accepted `locate` value, in bytes.
pub const MAX_LOCATE_BYTES: usize = 4096;

/// Parses `locate`: locator JSON, or base64url (padded or not) of it; a bad
/// value is `invalid_param`.
pub fn parse_locate(raw: &str) -> Result<Locator, QueryError> {
    let bad = || {
        QueryError::new(
            crate::ErrorCode::InvalidParam,
            "locate must be a locator as JSON or base64url JSON",
        )
    };
    let raw = raw.trim();
    if raw.is_empty() || raw.len() > MAX_LOCATE_BYTES {
        return Err(bad());
    }
    let json: Vec<u8> = if raw.starts_with('{') {
        raw.as_bytes().to_vec()
    } else {
        URL_SAFE_NO_PAD
            .decode(raw)
            .or_else(|_| URL_SAFE.decode(raw))
            .map_err(|_| bad())?
    };
    serde_json::from_slice(&json).map_err(|_| bad())
}

/// The content hash a locator carries, if its kind has one.
pub fn content_hash(loc: &Locator) -> Option<&str> {
    match loc {
        Locator::NativeEvent { content_hash16, .. }
        | Locator::NativeSidecarSpan { content_hash16, .. }
        | Locator::ExternalLine { content_hash16, .. } => Some(content_hash16),
        Locator::NativeMessageId { .. } | Locator::ExternalRecordId { .. } => None,
    }
}

/// Two locators name the same place (ignoring the content hash).
pub fn same_place(a: &Locator, b: &Locator) -> bool {
    use Locator::*;
    match (a, b) {
        (NativeEvent { line_no: x, .. }, NativeEvent { line_no: y, .. }) => x == y,
        (
            NativeSidecarSpan {
                file: f1,
                offset: o1,
                ..
            },
            NativeSidecarSpan {
                file: f2,
                offset: o2,
                ..
            },
        ) => f1 == f2 && o1 == o2,
        (
            ExternalLine {
                generation: g1,
                line_no: l1,
                ..
            },
            ExternalLine {
                generation: g2,
                line_no: l2,
                ..
            },
        ) => g1 == g2 && l1 == l2,
        (NativeMessageId { message_id: x }, NativeMessageId { message_id: y }) => x == y,
        (ExternalRecordId { record_id: x }, ExternalRecordId { record_id: y }) => x == y,
        _ => false,
    }
}

/// Where a locator is in the indexed records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// A record with exactly this locator.
    Exact(usize),
    /// The same content (kind and hash) at another place: the source moved it.
    Moved(usize),
    /// Another record now holds this place: its content changed.
    Changed(usize),
    /// Nothing.
    Missing,
}

/// Looks `loc` up among `records`.
pub fn find(records: &[MessageRecord], loc: &Locator) -> Found {
    if let Some(i) = records.iter().position(|r| r.locator == *loc) {
        return Found::Exact(i);
    }
    if let Some(h) = content_hash(loc) {
        let kind = std::mem::discriminant(loc);
        if let Some(i) = records.iter().position(|r| {
            std::mem::discriminant(&r.locator) == kind && content_hash(&r.locator) == Some(h)
        }) {
            return Found::Moved(i);
        }
    }
    match records.iter().position(|r| same_place(&r.locator, loc)) {
        Some(i) => Found::Changed(i),
        None => Found::Missing,
    }
}

/// The verdict of re-reading the source for a found record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The source still holds the record as indexed.
    Verified,
    /// The source no longer holds it as indexed.
    Stale(String),
    /// The source cannot be read.
    Unavailable(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn rec(line_no: u64, hash: &str) -> MessageRecord {
        MessageRecord {
            role: Role::User,
            ts_ms: 1,
            text: "t".into(),
            truncated: false,
            locator: Locator::NativeEvent {
                line_no,
                content_hash16: hash.into(),
            },
            seq: None,
            turn: None,
            item_id: None,
            subagent: false,
            generation: 0,
        }
    }

    #[test]
    fn parses_json_and_base64url() {
        let json = r#"{"kind":"native_event","line_no":3,"content_hash16":"00112233aabbccdd"}"#;
        let a = parse_locate(json).unwrap();
        let b = parse_locate(&URL_SAFE_NO_PAD.encode(json)).unwrap();
        let c = parse_locate(&URL_SAFE.encode(json)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, c);
        for bad in ["", "{", "!!!", r#"{"kind":"nope"}"#, &"a".repeat(5000)] {
            assert_eq!(parse_locate(bad).unwrap_err().code, "invalid_param");
        }
    }

    #[test]
    fn finds_exact_moved_changed() {
        let recs = vec![rec(1, "aaaa"), rec(2, "bbbb"), rec(5, "cccc")];
        let loc = |n, h: &str| Locator::NativeEvent {
            line_no: n,
            content_hash16: h.into(),
        };
        assert_eq!(find(&recs, &loc(2, "bbbb")), Found::Exact(1));
        assert_eq!(find(&recs, &loc(4, "cccc")), Found::Moved(2));
        assert_eq!(find(&recs, &loc(2, "zzzz")), Found::Changed(1));
        assert_eq!(find(&recs, &loc(9, "zzzz")), Found::Missing);
    }
}
