//! Damaged checkpoints are refused (issue 12, item 8): a checkpoint altered
//! on disk in a way that still parses and still agrees with itself (line
//! counts changed consistently, a record's text or a counter changed) must
//! not shape the next extraction. Each mutation below is applied to a real
//! checkpoint the indexer wrote for a growing session; after one more append
//! and sweep, the session in the store must equal a full extraction of its
//! file.

mod store_support;

use recall_core::model::Shard;
use recall_host::extract::{self, Roots};
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use store_support::{pi_message, session_key, temp_dir, write_session};

const NOW: i64 = 1_793_000_000_000;

fn indexer(home: &Path) -> (Arc<Store>, Indexer) {
    let store = Arc::new(
        Store::open(&recall_host::store::store_dir(&home.join(".recall"))).expect("store"),
    );
    let mut opts = IndexOptions::new(Roots::resolve(home, |_| None));
    opts.retention_days = 0;
    opts.now_ms = Some(NOW);
    opts.workers = 1;
    (store.clone(), Indexer::new(store, opts))
}

fn append(path: &Path, m: usize) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    let id = format!("ff{m:06}");
    let text = format!("appended message {m} with a needle{m}");
    let role = if m.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    };
    f.write_all(pi_message(&id, None, role, &text, 1_790_000_100_000 + m as i64).as_bytes())
        .unwrap();
}

/// The only checkpoint file of the store.
fn checkpoint_file(store: &Store) -> PathBuf {
    let dir = store.dir().join("checkpoints");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// The session as stored, and as a full extraction of its file gives it.
fn stored_and_full(store: &Store, home: &Path) -> (Value, Value) {
    let m = store.current().unwrap();
    let e = &m.sessions[&session_key(1)];
    let shard: Shard =
        serde_json::from_slice(&store.generation_bytes(&e.generation_file).unwrap()).unwrap();
    let units = extract::discover(&Roots::resolve(home, |_| None));
    let full = units
        .iter()
        .filter_map(|u| extract::extract(u).ok().flatten())
        .find(|x| x.meta.key() == session_key(1))
        .expect("the session extracts");
    let strip =
        |records: &[recall_core::model::MessageRecord]| serde_json::to_value(records).unwrap();
    (strip(&shard.records), strip(&full.records))
}

/// Every leaf of `v` (path of keys/indices), strings and numbers only.
fn leaves(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(k.clone());
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                at.push(i.to_string());
                leaves(x, at, out);
                at.pop();
            }
        }
        Value::String(_) | Value::Number(_) => out.push(at.clone()),
        _ => {}
    }
}

fn leaf_mut<'a>(v: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match v {
        Value::Object(m) => m.get_mut(k),
        Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
        _ => None,
    })
}

/// A mutation of the checkpoint body; `false` when it does not apply.
type Mutation = Box<dyn Fn(&mut Value) -> bool>;

fn mutations(sample: &Value) -> Vec<(String, Mutation)> {
    let mut out: Vec<(String, Mutation)> = Vec::new();
    // Line counts changed consistently: each fed file and the tally.
    out.push((
        "line counts -1".into(),
        Box::new(|v: &mut Value| {
            let cp = &mut v["checkpoint"];
            let Some(files) = cp["files"].as_array_mut() else {
                return false;
            };
            for f in files.iter_mut() {
                let n = f["lines"].as_u64().unwrap_or(0);
                f["lines"] = Value::from(n.saturating_sub(1));
            }
            let n = cp["tally"]["lines"].as_u64().unwrap_or(0);
            cp["tally"]["lines"] = Value::from(n.saturating_sub(1));
            true
        }),
    ));
    // Every string and number leaf of the source state, one at a time.
    let mut paths = Vec::new();
    leaves(&sample["checkpoint"]["state"], &mut Vec::new(), &mut paths);
    for p in paths.into_iter().take(60) {
        let name = format!("state/{}", p.join("/"));
        out.push((
            name,
            Box::new(move |v: &mut Value| {
                let Some(leaf) = leaf_mut(&mut v["checkpoint"]["state"], &p) else {
                    return false;
                };
                *leaf = match leaf.take() {
                    Value::String(s) => Value::String(format!("{s}~")),
                    Value::Number(n) => Value::from(n.as_i64().unwrap_or(0).wrapping_add(1)),
                    other => other,
                };
                true
            }),
        ));
    }
    out
}

/// A home with one growing session and the checkpoint of its last sweep.
fn growing(tag: &str) -> (store_support::TempDir, PathBuf, Arc<Store>, Indexer) {
    let home = temp_dir(tag);
    let path = write_session(&home, 1, 6, 200);
    let (store, ix) = indexer(&home);
    ix.sweep().expect("backfill");
    append(&path, 1);
    ix.sweep().expect("sweep after an append");
    (home, path, store, ix)
}

/// Splits a checkpoint file into whatever precedes its JSON body and the body.
fn split(bytes: &[u8]) -> (Vec<u8>, Value) {
    let at = bytes.iter().position(|&b| b == b'{').expect("a JSON body");
    (
        bytes[..at].to_vec(),
        serde_json::from_slice(&bytes[at..]).expect("the body parses"),
    )
}

#[test]
fn an_intact_checkpoint_resumes_to_the_full_extraction() {
    let (home, path, store, ix) = growing("cp-intact");
    let _ = checkpoint_file(&store);
    append(&path, 2);
    let r = ix.sweep().unwrap();
    assert_eq!(r.resumed, 1, "an intact checkpoint is resumed from: {r:?}");
    let (stored, full) = stored_and_full(&store, &home);
    assert_eq!(stored, full);
}

#[test]
fn altered_checkpoints_are_refused_or_harmless() {
    let (_h, _p, store0, _ix) = growing("cp-sample");
    let (_, sample) = split(&std::fs::read(checkpoint_file(&store0)).unwrap());
    let muts = mutations(&sample);
    assert!(muts.len() > 5, "the checkpoint has state to alter");
    let mut diverged = Vec::new();
    for (name, mutate) in &muts {
        let (home, path, store, ix) = growing("cp-mut");
        let file = checkpoint_file(&store);
        let (prefix, mut body) = split(&std::fs::read(&file).unwrap());
        if !mutate(&mut body) {
            continue;
        }
        let mut bytes = prefix;
        bytes.extend_from_slice(&serde_json::to_vec(&body).unwrap());
        std::fs::write(&file, bytes).unwrap();
        append(&path, 2);
        let r = ix.sweep().unwrap();
        assert_eq!(
            r.resumed, 0,
            "{name}: an altered checkpoint is not resumed from"
        );
        let (stored, full) = stored_and_full(&store, &home);
        if stored != full {
            diverged.push(name.clone());
        }
    }
    assert!(
        diverged.is_empty(),
        "{} of {} altered checkpoints changed the records: {diverged:?}",
        diverged.len(),
        muts.len()
    );
}
