//! Session keys reach the terminal sanitized (issue 12, item 9): a session
//! id chosen by a transcript, carrying escape sequences (retitle the
//! terminal, write the clipboard), prints without its control characters in
//! `recall sessions`, `recall search` and `recall show`.

mod store_support;

use store_support::{iso, pi_dir, pi_message, recall, temp_dir};

const ID: &str = "evil\u{1b}]0;owned\u{7}\u{1b}]52;c;ZXZpbA==\u{7}";

fn home_with_hostile_id() -> store_support::TempDir {
    let home = temp_dir("sanitize");
    let dir = pi_dir(&home).join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    let ts = 1_790_000_000_000i64;
    let head = serde_json::json!({
        "type": "session", "version": 3, "id": ID, "timestamp": iso(ts), "cwd": "/w"
    });
    let body = format!(
        "{head}\n{}{}",
        pi_message("m1", None, "user", "hello zanzibar", ts + 1000),
        pi_message("m2", Some("m1"), "assistant", "zanzibar indeed", ts + 2000)
    );
    std::fs::write(dir.join("s.jsonl"), body).unwrap();
    home
}

fn stdout(home: &std::path::Path, args: &[&str]) -> String {
    let out = recall(home).args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn hostile_session_ids_never_reach_the_terminal_raw() {
    let home = home_with_hostile_id();
    let listed = stdout(&home, &["sessions"]);
    let found = stdout(&home, &["search", "zanzibar", "--color", "never"]);
    let shown = stdout(&home, &["show", "pi:evil"]);
    let mut seen = 0;
    for (what, out) in [("sessions", &listed), ("search", &found), ("show", &shown)] {
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}'),
            "{what} printed a control character: {out:?}"
        );
        seen += usize::from(out.contains("evil ]0;owned"));
    }
    // Unless the extractor refuses such ids outright, the key is shown,
    // cleaned, by all three.
    if listed.contains("zanzibar") {
        assert_eq!(seen, 3, "{listed:?}\n{found:?}\n{shown:?}");
    }
}

/// The key `recall sessions --json` lists for the one session of `home`.
fn only_key(home: &std::path::Path) -> String {
    let out = recall(home).args(["sessions", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<String> = v
        .as_array()
        .or_else(|| v["sessions"].as_array())
        .expect("a session list")
        .iter()
        .map(|s| s["session_key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys.len(), 1, "{v}");
    keys[0].clone()
}

/// `recall export KEY -o ZIP`.
fn export(home: &std::path::Path, key: &str, zip: &std::path::Path) -> std::process::Output {
    recall(home)
        .args(["export", key, "-o"])
        .arg(zip)
        .output()
        .unwrap()
}

#[test]
fn export_names_the_key_and_the_output_path_without_control_characters() {
    let home = home_with_hostile_id();
    let key = only_key(&home);
    let zip = home.join("out\u{1b}]0;owned\u{7}.zip");
    let out = export(&home, &key, &zip);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(zip.is_file());
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{7}'),
        "export printed a control character: {err:?}"
    );
    assert!(err.contains("out ]0;owned .zip"), "{err:?}");
    // Nor does the refusal of an unknown key echo it raw.
    let out = recall(&home)
        .args(["export", "pi:no\u{1b}]0;x\u{7}such", "-o"])
        .arg(home.join("x.zip"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
}

#[test]
fn export_counts_only_the_files_it_wrote_and_names_the_ones_left_out() {
    // The only transcript is a symlink to a file outside the source roots:
    // indexing follows it, the export refuses it.
    let home = temp_dir("export-refused");
    let outside = home.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    let ts = 1_790_000_000_000i64;
    let head = serde_json::json!({
        "type": "session", "version": 3, "id": "refused-1", "timestamp": iso(ts), "cwd": "/w"
    });
    let body = format!(
        "{head}\n{}",
        pi_message("m1", None, "user", "hello zanzibar", ts + 1000)
    );
    std::fs::write(outside.join("s.jsonl"), body).unwrap();
    let dir = pi_dir(&home).join("--w--");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(outside.join("s.jsonl"), dir.join("s.jsonl")).unwrap();
    let key = only_key(&home);
    let zip = home.join("out.zip");
    let out = export(&home, &key, &zip);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "a partial export exits 3: {err}"
    );
    assert!(err.contains("exported 0 of 1 source file(s)"), "{err}");
    assert!(
        err.contains("left out") && err.contains("outside the source roots"),
        "{err}"
    );
    // The archive still says what is missing.
    assert!(zip.is_file());
}
