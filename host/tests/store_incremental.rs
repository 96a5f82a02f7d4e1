//! The incremental store as a user sees it through the `recall` binary:
//! appends, rewrites, deletions, a corrupt manifest, and cursors that
//! survive publishes.

mod store_support;

use recall_core::Response;
use std::fs::{self, OpenOptions};
use std::io::Write;
use store_support::*;

fn search(home: &std::path::Path, args: &[&str], code: i32) -> Response {
    let mut a = vec!["search", "--json"];
    a.extend_from_slice(args);
    let out = run_ok(home, &a, code);
    serde_json::from_str(&out).expect("response JSON")
}

#[test]
fn appended_line_is_found_by_the_next_search() {
    let home = temp_dir("append");
    let f = add_fixture(&home, "pi-alpha.jsonl");
    run_ok(&home, &["index"], 0);
    search(&home, &["capybara"], 1);
    let mut w = OpenOptions::new().append(true).open(&f).unwrap();
    w.write_all(
        pi_message(
            "a0000005",
            Some("a0000004"),
            "user",
            "Now port it to the capybara runtime.",
            1_790_845_300_000,
        )
        .as_bytes(),
    )
    .unwrap();
    drop(w);
    // A search reads the index as `recall index` left it: the line is not
    // there yet (a search does no indexing of its own once the store is
    // backfilled) ...
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let before = search(&home, &["capybara"], 1);
    assert!(before.sessions.is_empty());
    // ... until a search asks for a sweep first (`--refresh`).
    let r = search(&home, &["--refresh", "capybara"], 0);
    assert_eq!(r.sessions.len(), 1);
    assert_eq!(
        r.sessions[0].hits[0].snippet,
        "Now port it to the capybara runtime."
    );
    // The earlier records are still there, and the generation did not move.
    let m = manifest(&home).unwrap();
    let e = &m.sessions["pi:0a1fa001-0000-7000-8000-000000000001"];
    assert_eq!(e.meta.messages, 5);
    assert!(e.files.iter().all(|c| c.generation == 0));
}

#[test]
fn unchanged_files_are_not_reextracted() {
    let home = temp_dir("unchanged");
    add_fixture(&home, "pi-alpha.jsonl");
    add_fixture(&home, "pi-beta.jsonl");
    let first: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["index", "--json"], 0)).unwrap();
    assert_eq!(first["new_sessions"], 2);
    let rev = manifest(&home).unwrap().revision;
    let again: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["index", "--json"], 0)).unwrap();
    assert_eq!(again["extracted"], 0);
    assert_eq!(again["unchanged"], 2);
    assert_eq!(again["files_read"], 0);
    assert_eq!(
        manifest(&home).unwrap().revision,
        rev,
        "a sweep with no change writes nothing"
    );
}

#[test]
fn rewritten_file_bumps_generation_and_old_text_stays_superseded() {
    let home = temp_dir("rewrite");
    let f = add_fixture(&home, "pi-beta.jsonl");
    run_ok(&home, &["index"], 0);
    // The agent rewrites the file in place: same session, the plan changed.
    let text = fs::read_to_string(&f).unwrap().replace(
        "Step one of the marmoset migration: copy billing rows in batches of 500.",
        "Step one: snapshot the billing tables, then migrate with the axolotl tool.",
    );
    fs::write(&f, text).unwrap();
    run_ok(&home, &["index"], 0);

    let m = manifest(&home).unwrap();
    let e = &m.sessions["pi:0b2fb002-0000-7000-8000-000000000002"];
    assert!(e.files.iter().all(|c| c.generation == 1), "{:?}", e.files);
    let new = search(&home, &["axolotl"], 0);
    assert!(!new.sessions[0].hits[0].superseded);
    let old = search(&home, &["batches of 500"], 0);
    assert_eq!(old.sessions.len(), 1);
    assert!(old.sessions[0].hits[0].superseded, "old text is superseded");
    search(
        &home,
        &["batches of 500", "--include-superseded", "false"],
        1,
    );
    // The unchanged user message is not duplicated.
    assert_eq!(search(&home, &["marmoset"], 0).sessions[0].total_hits, 2);
}

#[test]
fn deleted_file_leaves_session_source_gone() {
    let home = temp_dir("gone");
    let f = add_fixture(&home, "pi-gamma.jsonl");
    add_fixture(&home, "pi-alpha.jsonl");
    run_ok(&home, &["index"], 0);
    fs::remove_file(&f).unwrap();
    run_ok(&home, &["index"], 0);
    let m = manifest(&home).unwrap();
    assert!(m.sessions["pi:0c3fc003-0000-7000-8000-000000000003"].source_gone);
    assert!(!m.sessions["pi:0a1fa001-0000-7000-8000-000000000001"].source_gone);
    let r = search(&home, &["pangolin"], 0);
    assert!(r.sessions[0].source_gone);
    assert_eq!(r.coverage["pi"].source_gone, 1);
}

#[test]
fn corrupt_manifest_is_quarantined_and_rebuilt() {
    let home = temp_dir("corrupt");
    add_fixture(&home, "pi-alpha.jsonl");
    add_fixture(&home, "pi-beta.jsonl");
    run_ok(&home, &["index"], 0);
    let before = manifest(&home).unwrap();
    let dir = store_dir(&home);
    fs::write(dir.join("catalog.json"), b"{\"schema\":2,\"metas\":[tor").unwrap();
    let out = run(&home, &["index"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("catalog.corrupt-"));
    let quarantined: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("catalog.corrupt-"))
        .collect();
    assert_eq!(quarantined.len(), 1);
    let after = check_store(&home).unwrap().unwrap();
    assert_ne!(
        after.store_id, before.store_id,
        "a rebuilt store has a new id"
    );
    let keys = |m: &recall_core::Manifest| m.sessions.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&after), keys(&before));
    search(&home, &["marmoset"], 0);
}

#[test]
fn cursor_minted_before_a_publish_still_pages() {
    let home = temp_dir("cursor");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    run_ok(&home, &["index"], 0);
    let p1 = search(&home, &["zebrafinch", "--limit", "1"], 0);
    assert_eq!(
        p1.sessions[0].session_key,
        "pi:0c3fc003-0000-7000-8000-000000000003"
    );
    let cursor = p1.cursor.clone().expect("a second page");
    // A new session is published: the manifest moves on.
    let f = add_fixture(&home, "pi-gamma.jsonl");
    fs::rename(&f, f.with_file_name("pi-delta.jsonl")).unwrap();
    let text = fs::read_to_string(f.with_file_name("pi-delta.jsonl"))
        .unwrap()
        .replace("0c3fc003", "0d4fd004");
    fs::write(f.with_file_name("pi-delta.jsonl"), text).unwrap();
    run_ok(&home, &["index"], 0);
    assert!(manifest(&home).unwrap().revision > p1.revision);

    let p2 = search(
        &home,
        &["zebrafinch", "--limit", "1", "--cursor", &cursor],
        0,
    );
    assert_eq!(
        p2.revision, p1.revision,
        "page 2 is served from the snapshot"
    );
    assert_eq!(
        p2.sessions[0].session_key,
        "pi:0a1fa001-0000-7000-8000-000000000001"
    );
    assert!(p2.cursor.is_none());

    // Clearing the store expires every cursor (410 cursor_expired).
    run_ok(&home, &["clear"], 0);
    let out = run_ok(
        &home,
        &[
            "search",
            "--json",
            "--no-refresh",
            "zebrafinch",
            "--cursor",
            &cursor,
        ],
        2,
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["error"], "cursor_expired");
}

#[test]
fn moved_file_keeps_its_session_and_is_not_gone() {
    let home = temp_dir("moved");
    let f = add_fixture(&home, "pi-alpha.jsonl");
    run_ok(&home, &["index"], 0);
    let other = pi_dir(&home).join("--home-u-elsewhere--");
    fs::create_dir_all(&other).unwrap();
    let moved = other.join("pi-alpha.jsonl");
    fs::rename(&f, &moved).unwrap();
    run_ok(&home, &["index"], 0);
    let m = manifest(&home).unwrap();
    assert_eq!(m.sessions.len(), 1);
    let e = &m.sessions["pi:0a1fa001-0000-7000-8000-000000000001"];
    assert!(!e.source_gone, "a moved file is not a lost source");
    assert_eq!(e.files[0].path, moved.to_string_lossy());
    let again: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["index", "--json"], 0)).unwrap();
    assert_eq!(
        again["extracted"], 0,
        "and the next sweep has nothing to do"
    );
}

#[test]
fn a_duplicate_unit_takes_over_when_the_owner_goes() {
    let home = temp_dir("dup");
    let owner = add_fixture(&home, "pi-gamma.jsonl");
    let copy = pi_dir(&home).join("--home-u-backup--");
    fs::create_dir_all(&copy).unwrap();
    let copy = copy.join("pi-gamma-copy.jsonl");
    fs::copy(&owner, &copy).unwrap();
    run_ok(&home, &["index"], 0);
    let m = manifest(&home).unwrap();
    assert_eq!(m.sessions.len(), 1, "one session, not two");
    let key = "pi:0c3fc003-0000-7000-8000-000000000003";
    let first = m.sessions[key].files[0].path.clone();
    let v: serde_json::Value =
        serde_json::from_str(&run_ok(&home, &["index", "--json"], 0)).unwrap();
    assert_eq!(
        v["extracted"], 0,
        "the duplicate is not re-read while nothing changes"
    );
    fs::remove_file(&first).unwrap();
    run_ok(&home, &["index"], 0);
    let e = &manifest(&home).unwrap().sessions[key];
    assert!(!e.source_gone);
    assert_ne!(e.files[0].path, first);
}

/// DESIGN.md §6: an appended file is read only past its offset. The first
/// append after the backfill is read whole (the backfill keeps no
/// checkpoints) and leaves a checkpoint; from then on a sweep reads just the
/// new lines, and the session equals a from-scratch index of the same file.
#[test]
fn a_live_session_is_read_only_past_its_offset() {
    let home = temp_dir("tail");
    let f = write_session(&home, 3, 40, 2000);
    let sweep = |home: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&run_ok(home, &["index", "--json"], 0)).unwrap()
    };
    sweep(&home);
    let size = fs::metadata(&f).unwrap().len();
    let mut parent = "0003004f".to_string();
    let mut append = |n: usize| -> u64 {
        let id = format!("{:08x}", 0xa000 + n);
        let line = pi_message(
            &id,
            Some(&parent),
            "user",
            &format!("tail marker tapir{n}"),
            1_790_100_000_000 + n as i64,
        );
        parent = id;
        let mut w = OpenOptions::new().append(true).open(&f).unwrap();
        w.write_all(line.as_bytes()).unwrap();
        line.len() as u64
    };
    append(1);
    let first = sweep(&home);
    assert_eq!(first["updated_sessions"], 1);
    assert_eq!(first["resumed"], 0, "no checkpoint after a backfill");
    assert!(first["bytes_read"].as_u64().unwrap() >= size);
    for n in 2..5 {
        let added = append(n);
        let r = sweep(&home);
        assert_eq!(r["updated_sessions"], 1, "{r}");
        assert_eq!(r["resumed"], 1, "{r}");
        assert_eq!(
            r["bytes_read"].as_u64().unwrap(),
            added,
            "only the new line is read"
        );
        let found = search(&home, &[&format!("tapir{n}")], 0);
        assert_eq!(found.sessions.len(), 1);
    }
    // The resumed session equals a from-scratch extraction of the file.
    let m = manifest(&home).unwrap();
    let e = &m.sessions[&session_key(3)];
    let fresh = temp_dir("tail-fresh");
    let g = write_session(&fresh, 3, 40, 2000);
    fs::copy(&f, &g).unwrap();
    sweep(&fresh);
    let m2 = manifest(&fresh).unwrap();
    let e2 = &m2.sessions[&session_key(3)];
    assert_eq!(e.records, e2.records);
    assert_eq!(e.meta.messages, e2.meta.messages);
    let body = |home: &std::path::Path, name: &str| {
        fs::read(store_dir(home).join("generations").join(name)).unwrap()
    };
    let shard = |b: Vec<u8>| -> recall_core::model::Shard { serde_json::from_slice(&b).unwrap() };
    let (s1, s2) = (
        shard(body(&home, &e.generation_file)),
        shard(body(&fresh, &e2.generation_file)),
    );
    assert_eq!(s1.records, s2.records);
    assert_eq!(s1.marks, s2.marks);
    // A rewrite is never resumed: the file is read whole again.
    let text = fs::read_to_string(&f).unwrap().replace("tapir2", "okapi2");
    fs::write(&f, text).unwrap();
    let r = sweep(&home);
    assert_eq!(r["resumed"], 0);
    assert!(search(&home, &["okapi2"], 0).sessions.len() == 1);
}

/// Every file under the store: relative path → (inode, length, mtime ns).
fn files_of(dir: &std::path::Path) -> std::collections::BTreeMap<String, (u64, u64, i128)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let m = e.metadata().unwrap();
            if m.is_dir() {
                todo.push(e.path());
            } else {
                let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                let mt = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
                out.insert(rel, (m.ino(), m.len(), mt));
            }
        }
    }
    out
}

/// Issue #11: a live append to one session writes in proportion to the
/// change, not to the store: besides its generation (and that generation's
/// filter sidecar and index segment, which follow the session's size), the
/// catalog, meta, snapshot, ledger and checkpoint writes stay small while
/// the manifest they describe is several times larger.
#[test]
fn a_live_append_writes_in_proportion_to_the_change() {
    let home = temp_dir("append-bytes");
    let mut paths = Vec::new();
    for n in 1..=150 {
        paths.push(write_session(&home, n, 1, 60));
    }
    run_ok(&home, &["index"], 0);
    let dir = store_dir(&home);
    let whole = serde_json::to_vec(&manifest(&home).unwrap()).unwrap().len() as u64;
    let before = files_of(&dir);
    let n = 7;
    let line = pi_message(
        &format!("{n:04x}{:04x}", 2),
        Some(&format!("{n:04x}{:04x}", 1)),
        "user",
        "appendedword one more line",
        1_790_000_000_000 + n as i64 * 3_600_000 + 9_000,
    );
    OpenOptions::new()
        .append(true)
        .open(&paths[n - 1])
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
    run_ok(&home, &["index"], 0);
    let after = files_of(&dir);
    let mut by_kind: std::collections::BTreeMap<&str, u64> = Default::default();
    for (rel, (ino, len, _)) in &after {
        // New or replaced (another inode): all of it; the same inode grown
        // (the ledger's journal): what was appended; an mtime refreshed
        // alone (an existing generation linked again) writes nothing.
        let written = match before.get(rel) {
            Some((i, l, _)) if i == ino => len.saturating_sub(*l),
            _ => *len,
        };
        if written == 0 {
            continue;
        }
        let kind = if rel.starts_with("generations/") && rel.ends_with(".json") {
            "generation"
        } else if rel.ends_with(".grams") {
            "grams"
        } else if rel.starts_with("segments/") || rel == "segments.json" {
            "segments"
        } else if rel.starts_with("metas/") {
            "meta"
        } else if rel.starts_with("snapshots/") {
            "snapshot"
        } else if rel.starts_with("checkpoints/") {
            "checkpoint"
        } else {
            match rel.as_str() {
                "catalog.json" => "catalog",
                "ledger.jsonl" | "indexer.json" => "ledger",
                "writer.lock" => "lock",
                other => panic!("unexpected write: {other}"),
            }
        };
        *by_kind.entry(kind).or_default() += written;
    }
    eprintln!("one live append, bytes written by kind: {by_kind:?}; whole manifest {whole} B");
    assert!(by_kind.contains_key("generation"), "{by_kind:?}");
    let bookkeeping: u64 = ["meta", "catalog", "snapshot", "ledger", "checkpoint"]
        .iter()
        .filter_map(|k| by_kind.get(k))
        .sum();
    assert!(
        whole > 64 << 10,
        "the store is big enough to tell: {whole} B"
    );
    assert!(
        bookkeeping < 16 << 10 && bookkeeping * 8 < whole,
        "{bookkeeping} B of bookkeeping for one appended line ({by_kind:?}, manifest {whole} B)"
    );
    assert!(
        by_kind.get("meta").is_some_and(|&b| b < 4096),
        "{by_kind:?}"
    );
    let found = search(&home, &["appendedword"], 0);
    assert_eq!(found.sessions.len(), 1);
}
