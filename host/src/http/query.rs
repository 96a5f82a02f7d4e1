//! The query-string reader every route uses: `application/x-www-form-urlencoded`
//! pairs (`+` is a space, `%XX` a byte), decoded strictly. A parameter whose
//! bytes are not UTF-8 (`q=%ff%fe`) is refused with 400 `invalid_param`
//! instead of being searched as U+FFFD, and so is a malformed escape.

use super::errors::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;

/// Query-string pairs in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryPairs(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<QueryPairs, ApiError> {
        parse(parts.uri.query().unwrap_or("")).map(QueryPairs)
    }
}

/// Decodes a query string into its pairs; the error names the parameter,
/// never its value.
pub fn parse(query: &str) -> Result<Vec<(String, String)>, ApiError> {
    let mut out = Vec::new();
    for part in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        let key =
            decode(k).ok_or_else(|| ApiError::invalid("a parameter name is not valid UTF-8"))?;
        let value = decode(v).ok_or_else(|| {
            let name: String = key.chars().take(32).collect();
            ApiError::invalid(format!(
                "parameter {name} is not valid percent-encoded UTF-8"
            ))
        })?;
        out.push((key, value));
    }
    Ok(out)
}

/// One component: `+` ⇒ space, `%XX` ⇒ the byte; `None` when an escape is
/// malformed or the bytes are not UTF-8.
fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = b.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pairs(q: &str) -> Vec<(String, String)> {
        parse(q).unwrap()
    }

    #[test]
    fn decodes_like_a_form() {
        assert_eq!(
            pairs("q=a+b%20c&limit=5&&flag&x=%E6%BD%AE"),
            vec![
                ("q".into(), "a b c".into()),
                ("limit".into(), "5".into()),
                ("flag".into(), "".into()),
                ("x".into(), "潮".into()),
            ]
        );
        assert_eq!(pairs("q=a%3Db%26c"), vec![("q".into(), "a=b&c".into())]);
        assert!(pairs("").is_empty());
    }

    #[test]
    fn refuses_invalid_utf8_and_bad_escapes() {
        for bad in ["q=%ff%fe", "q=%c3", "%80=x", "q=%zz", "q=%4", "q=%"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code, "invalid_param", "{bad}");
            assert!(!e.message.contains("%"), "no value echoed: {}", e.message);
        }
    }

    proptest! {
        /// Against a naive reference: percent-encoding any string and
        /// decoding it gives it back.
        #[test]
        fn round_trips(k in "[a-z_]{1,8}", v in any::<String>()) {
            let enc: String = v.bytes().map(|b| format!("%{b:02X}")).collect();
            let got = parse(&format!("{k}={enc}")).unwrap();
            prop_assert_eq!(got, vec![(k, v)]);
        }

        /// Arbitrary input never panics; the answer is pairs or invalid_param.
        #[test]
        fn never_panics(q in any::<String>()) {
            if let Err(e) = parse(&q) {
                prop_assert_eq!(e.code, "invalid_param");
            }
        }
    }
}
