//! The tools' JSON Schemas as real clients accept them: one JSON type per
//! property (optional = absent from `required`, never a `null` union), no
//! `format` words, every `$ref` inlined; and the output schema each tool's
//! `structuredContent` follows.

use serde_json::{json, Map, Value};

/// `schemars`' schema of `T`, cleaned by [`clean`].
pub fn input<T: schemars::JsonSchema>() -> Map<String, Value> {
    let v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({}));
    let defs = v.get("$defs").cloned().unwrap_or(Value::Null);
    let mut v = clean(v, &defs);
    if let Value::Object(m) = &mut v {
        m.remove("$defs");
        m.remove("$schema");
        m.remove("title");
        m.insert("additionalProperties".into(), json!(false));
        return m.clone();
    }
    Map::new()
}

/// One type per node: `["x", "null"]` becomes `"x"`, `anyOf [A, null]`
/// becomes `A`, `$ref`s are replaced by their definitions, `format` and
/// `default: null` are dropped.
pub fn clean(v: Value, defs: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.into_iter().map(|x| clean(x, defs)).collect()),
        Value::Object(mut m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                let name = r.rsplit('/').next().unwrap_or("");
                if let Some(def) = defs.get(name) {
                    let mut d = clean(def.clone(), defs);
                    if let (Value::Object(dm), Some(desc)) = (&mut d, m.get("description")) {
                        dm.insert("description".into(), desc.clone());
                    }
                    return d;
                }
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(Value::Array(alts)) = m.get(key) {
                    let rest: Vec<Value> = alts
                        .iter()
                        .filter(|a| a.get("type") != Some(&json!("null")))
                        .cloned()
                        .collect();
                    let consts: Option<Vec<Value>> =
                        rest.iter().map(|a| a.get("const").cloned()).collect();
                    let one_type = rest.iter().all(|a| a.get("type") == rest[0].get("type"));
                    if let (Some(consts), true, false) = (consts, one_type, rest.is_empty()) {
                        let mut e = Map::new();
                        if let Some(t) = rest[0].get("type") {
                            e.insert("type".into(), t.clone());
                        }
                        e.insert("enum".into(), Value::Array(consts));
                        if let Some(d) = m.get("description") {
                            e.insert("description".into(), d.clone());
                        }
                        return Value::Object(e);
                    }
                    if rest.len() == 1 {
                        let desc = m.get("description").cloned();
                        let mut one = clean(rest[0].clone(), defs);
                        if let (Value::Object(om), Some(d)) = (&mut one, desc) {
                            om.insert("description".into(), d);
                        }
                        return one;
                    }
                }
            }
            if let Some(Value::Array(types)) = m.get("type") {
                let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                if rest.len() == 1 {
                    m.insert("type".into(), rest[0].clone());
                }
            }
            if let Some(Value::Array(e)) = m.get_mut("enum") {
                e.retain(|x| !x.is_null());
            }
            m.remove("format");
            if m.get("default") == Some(&Value::Null) {
                m.remove("default");
            }
            Value::Object(m.into_iter().map(|(k, x)| (k, clean(x, defs))).collect())
        }
        other => other,
    }
}

/// The output schema of a tool whose answer's main field is `main` (an
/// array of objects, or an object): `index` always, `cursor`, `truncated`
/// and `empty` when they apply.
pub fn output(main: &str, array: bool) -> Map<String, Value> {
    let main_schema = if array {
        json!({"type": "array", "items": {"type": "object"}})
    } else {
        json!({"type": "object"})
    };
    let v = json!({
        "type": "object",
        "properties": {
            main: main_schema,
            "index": {
                "type": "object",
                "description": "The index revision that answered, when it was published (epoch ms) and who answered (daemon or store).",
                "properties": {
                    "revision": {"type": "integer"},
                    "updated_ms": {"type": "integer"},
                    "via": {"type": "string", "enum": ["daemon", "store"]}
                },
                "required": ["revision", "updated_ms", "via"]
            },
            "cursor": {"type": "string", "description": "Pass back as `cursor` for the next page; absent on the last page."},
            "truncated": {
                "type": "object",
                "description": "What the budget cut: items from the end of the page, hits of shown sessions, characters of shown texts.",
                "properties": {
                    "sessions": {"type": "integer"},
                    "hits": {"type": "integer"},
                    "chars": {"type": "integer"}
                },
                "required": ["sessions", "hits", "chars"]
            },
            "empty": {"type": "object", "description": "Why nothing was found: the project scope, sessions outside it, and how to widen it."}
        },
        "required": [main, "index"]
    });
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_have_one_type_and_no_format() {
        let s = input::<crate::mcp::args::EventArgs>();
        let text = Value::Object(s.clone()).to_string();
        assert!(!text.contains("null"), "{text}");
        assert!(!text.contains("format"), "{text}");
        assert!(!text.contains("$ref"), "{text}");
        let p = &s["properties"];
        assert_eq!(p["index"]["type"], "integer");
        assert_eq!(p["before"]["maximum"], 50);
        assert_eq!(p["locator"]["type"], "object");
        assert_eq!(s["required"], json!(["session"]));
        let f = input::<crate::mcp::args::SearchArgs>();
        assert_eq!(f["properties"]["sources"]["type"], "array");
        assert_eq!(f["properties"]["limit"]["minimum"], 1);
        assert_eq!(f["properties"]["sort"]["type"], "string");
    }
}
