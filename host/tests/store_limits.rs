//! Store limits (issue #12, item 11): the manifest revision never wraps,
//! and corrupt manifests moved aside do not pile up.

mod store_support;

use std::fs;
use store_support::*;

#[test]
fn a_manifest_at_the_largest_revision_is_refused_not_wrapped() {
    let home = temp_dir("revmax");
    write_session(&home, 1, 2, 50);
    run_ok(&home, &["index"], 0);
    let path = store_dir(&home).join("catalog.json");
    let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    m["revision"] = serde_json::json!(u64::MAX);
    fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    write_session(&home, 2, 2, 50);
    let out = run(&home, &["index"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a clear error (exit 2), not a panic (101)"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("revision is at its maximum"), "{err}");
    let after = manifest(&home).unwrap();
    assert_eq!(after.revision, u64::MAX, "never wrapped to 0");
    // `recall clear` gets out of it (a new store id).
    run_ok(&home, &["clear"], 0);
    run_ok(&home, &["index"], 0);
    assert_eq!(manifest(&home).unwrap().sessions.len(), 2);
}

#[test]
fn only_the_newest_corrupt_manifests_are_kept() {
    let home = temp_dir("corrupt");
    write_session(&home, 1, 2, 50);
    run_ok(&home, &["index"], 0);
    let dir = store_dir(&home);
    for i in 0..6 {
        fs::write(dir.join("catalog.json"), format!("{{not json {i}")).unwrap();
        run_ok(&home, &["index"], 0);
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
    let mut corrupt: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.starts_with("catalog.corrupt-"))
        .collect();
    corrupt.sort();
    assert_eq!(corrupt.len(), 3, "{corrupt:?}");
    let newest = fs::read_to_string(dir.join(corrupt.last().unwrap())).unwrap();
    assert_eq!(newest, "{not json 5", "the newest is kept");
    assert_eq!(manifest(&home).unwrap().sessions.len(), 1);
}
