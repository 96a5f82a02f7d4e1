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
