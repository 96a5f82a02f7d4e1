//! Golden-file support for the extractor tests: the corpus location, the
//! JSON shape an extraction is compared in, and bless mode.
//!
//! A golden holds the session meta (paths relative to `shared/`), every
//! record (role, ts_ms, text, truncated, subagent, active after
//! `derive_active`, locator kind, seq, item_id), the marks and the
//! diagnostics. Tool rows keep the first 160 chars of their text plus its
//! length and hash, so a golden stays readable while any change still
//! shows. `RECALL_BLESS=1` rewrites goldens, keeping their hand-written
//! `"verified"` note; a golden still marked unverified fails the test.

#![allow(dead_code)]

use recall_core::model::{Locator, Role};
use recall_host::extract::common::content_hash16;
use recall_host::extract::Extracted;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The note a freshly blessed golden gets until someone checks it by hand.
pub const UNVERIFIED: &str =
    "UNVERIFIED: check every field against the source file, then describe the check here";

/// The vendored copy of the shared folder, `<repo>/tests/shared` (the real
/// transcripts under `corpus/`, the generator under `corpus-gen/`); panics
/// with a clear message when it is missing.
pub fn shared_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared");
    assert!(
        dir.join("corpus").is_dir(),
        "the vendored real-transcript corpus is missing: expected {}",
        dir.join("corpus").display()
    );
    dir
}

/// `host/tests/<rel>`.
pub fn test_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(rel)
}

/// The JSON a golden compares: `x` with paths made relative to `base`.
pub fn golden_json(x: &Extracted, base: &Path) -> Value {
    let active = recall_core::derive_active(&x.records, &x.marks);
    let mut meta = serde_json::to_value(&x.meta).unwrap_or(Value::Null);
    let base_str = base.to_string_lossy().into_owned();
    if let Some(paths) = meta.get_mut("paths").and_then(Value::as_array_mut) {
        for p in paths.iter_mut() {
            if let Some(s) = p.as_str() {
                let rel = Path::new(s)
                    .strip_prefix(&base_str)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| s.to_string());
                *p = Value::String(rel);
            }
        }
    }
    if let Some(r) = meta.get_mut("resume") {
        if let Some(s) = r.as_str() {
            *r = Value::String(s.replace(&format!("{base_str}/"), ""));
        }
    }
    let records: Vec<Value> = x
        .records
        .iter()
        .zip(&active)
        .map(|(r, a)| {
            let mut v = json!({
                "role": r.role.as_str(),
                "ts_ms": r.ts_ms,
                "truncated": r.truncated,
                "subagent": r.subagent,
                "active": a,
                "locator": locator_kind(&r.locator),
            });
            if r.role == Role::Tool {
                v["text_head"] = Value::String(r.text.chars().take(160).collect());
                v["text_chars"] = json!(r.text.chars().count());
                v["text_hash16"] = Value::String(content_hash16(&r.text));
            } else {
                v["text"] = Value::String(r.text.clone());
            }
            if let Some(s) = r.seq {
                v["seq"] = json!(s);
            }
            if let Some(id) = &r.item_id {
                v["item_id"] = json!(id);
            }
            v
        })
        .collect();
    let mut diagnostics = serde_json::to_value(&x.diagnostics).unwrap_or(Value::Null);
    if let Some(list) = diagnostics
        .get_mut("unreadable")
        .and_then(Value::as_array_mut)
    {
        for p in list.iter_mut() {
            if let Some(s) = p.as_str() {
                *p = Value::String(s.replace(&format!("{base_str}/"), ""));
            }
        }
    }
    json!({
        "meta": meta,
        "records": records,
        "marks": x.marks,
        "diagnostics": diagnostics,
    })
}

fn locator_kind(l: &Locator) -> &'static str {
    match l {
        Locator::NativeMessageId { .. } => "native_message_id",
        Locator::NativeEvent { .. } => "native_event",
        Locator::NativeSidecarSpan { .. } => "native_sidecar_span",
        Locator::ExternalRecordId { .. } => "external_record_id",
        Locator::ExternalLine { .. } => "external_line",
    }
}

/// Compares `got` with the golden at `golden` (relative to `host/tests/`),
/// or rewrites it under `RECALL_BLESS=1`. Returns a description of the
/// first difference, `None` when equal.
pub fn check(golden: &str, got: Value) -> Option<String> {
    let path = test_path(golden);
    let old: Option<Value> = std::fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let verified = old
        .as_ref()
        .and_then(|o| o.get("verified"))
        .cloned()
        .unwrap_or_else(|| Value::String(UNVERIFIED.into()));
    let mut want_body = old.clone().unwrap_or(Value::Null);
    if let Some(o) = want_body.as_object_mut() {
        o.remove("verified");
    }
    if std::env::var_os("RECALL_BLESS").is_some() {
        let mut out = serde_json::Map::new();
        out.insert("verified".into(), verified);
        if let Value::Object(body) = got {
            out.extend(body);
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create golden dir");
        }
        let text = serde_json::to_string_pretty(&Value::Object(out)).expect("serialize golden");
        std::fs::write(&path, text + "\n").expect("write golden");
        return None;
    }
    let Some(_) = old else {
        return Some(format!(
            "{golden}: no golden yet (run with RECALL_BLESS=1, then check it by hand)"
        ));
    };
    if verified
        .as_str()
        .is_none_or(|v| v.starts_with("UNVERIFIED"))
    {
        return Some(format!("{golden}: not verified by hand yet"));
    }
    first_difference(&want_body, &got, "").map(|d| format!("{golden}: {d}"))
}

/// The JSON path of the first difference between two values.
pub fn first_difference(want: &Value, got: &Value, at: &str) -> Option<String> {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, va) in a {
                let p = format!("{at}.{k}");
                match b.get(k) {
                    Some(vb) => {
                        if let Some(d) = first_difference(va, vb, &p) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{p}: missing")),
                }
            }
            b.keys()
                .find(|k| !a.contains_key(*k))
                .map(|k| format!("{at}.{k}: unexpected"))
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                if let Some(d) = first_difference(va, vb, &format!("{at}[{i}]")) {
                    return Some(d);
                }
            }
            (a.len() != b.len()).then(|| format!("{at}: {} items, expected {}", b.len(), a.len()))
        }
        _ => (want != got).then(|| format!("{at}: expected {want}, got {got}")),
    }
}
