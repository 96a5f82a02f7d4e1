//! End to end over a generated home (`shared/corpus-gen/gen.py`, all five
//! sources): `recall index`, then every truth record's prose token is found
//! through the store — in its own session only, once, with the right
//! superseded/subagent flags — distractors never, tool tokens only with
//! `scope=all`. What the store and the search add to the extractors must
//! neither lose nor duplicate a record.

mod store_support;

use recall_core::query::Request;
use recall_core::search::Budgets;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::store::Store;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use store_support::*;

fn token(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let crockford = |c: &u8| c.is_ascii_digit() || (c.is_ascii_lowercase() && !b"ilou".contains(c));
    (0..b.len().saturating_sub(10)).find_map(|i| {
        let w = &b[i..i + 11];
        let ok = w[0] == b'u'
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
            && b.get(i + 11).is_none_or(|c| !c.is_ascii_alphanumeric())
            && w[1..].iter().all(crockford);
        ok.then(|| &text[i..i + 11])
    })
}

#[test]
fn every_truth_record_is_found_through_the_store() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared/corpus-gen/gen.py");
    assert!(
        gen.exists(),
        "corpus generator missing at {}",
        gen.display()
    );
    let out = temp_dir("truth");
    let status = Command::new("python3")
        .arg(&gen)
        .args(["--out"])
        .arg(&*out)
        .args(["--seed", "2", "--sessions", "40"])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("python3");
    assert!(status.success());
    let home = out.join("home");
    run_ok(&home, &["index"], 0);

    let store = Arc::new(Store::open(&store_dir(&home)).unwrap());
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    let search = |q: &str, scope: Option<&str>| {
        let mut r = Request::new(q);
        r.scope = scope.map(str::to_string);
        r.limit = Some("100".into());
        catalog
            .search(&r.parse().unwrap(), false, Budgets::default())
            .expect("search")
    };
    let manifest = store.current().unwrap();
    let truth = std::fs::read_to_string(out.join("truth.jsonl")).unwrap();
    let (mut records, mut sessions) = (0, 0);
    for line in truth.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("session") => {
                sessions += 1;
                let key = v["key"].as_str().unwrap();
                let e = manifest
                    .sessions
                    .get(key)
                    .unwrap_or_else(|| panic!("{key} not in the manifest"));
                assert_eq!(
                    e.meta.messages,
                    v["messages"].as_u64().unwrap(),
                    "{key} messages"
                );
            }
            Some("record") => {
                records += 1;
                let text = v["text"].as_str().unwrap();
                let tok = token(text).unwrap_or_else(|| panic!("no token in a truth record"));
                let r = search(tok, None);
                let key = v["key"].as_str().unwrap();
                assert_eq!(r.sessions.len(), 1, "{tok}: sessions");
                let s = &r.sessions[0];
                assert_eq!(s.session_key, key, "{tok}");
                assert_eq!(s.total_hits, 1, "{tok}: hits");
                assert_eq!(
                    s.hits[0].superseded,
                    !v["active"].as_bool().unwrap(),
                    "{tok}: superseded"
                );
                assert_eq!(
                    s.hits[0].subagent,
                    v["subagent"].as_bool().unwrap(),
                    "{tok}: subagent"
                );
            }
            Some("distractor") => {
                let tok = v["token"].as_str().unwrap();
                assert!(
                    search(tok, Some("all")).sessions.is_empty(),
                    "distractor {tok} found"
                );
            }
            Some("tool_token") => {
                let tok = v["token"].as_str().unwrap();
                assert!(
                    search(tok, None).sessions.is_empty(),
                    "tool token {tok} in conversation"
                );
                let all = search(tok, Some("all"));
                assert!(
                    all.sessions
                        .iter()
                        .any(|s| s.session_key == v["key"].as_str().unwrap()),
                    "tool token {tok}"
                );
            }
            _ => {}
        }
    }
    assert_eq!(manifest.sessions.len(), sessions, "no extra sessions");
    assert!(records > 300, "the home has records ({records})");
}
