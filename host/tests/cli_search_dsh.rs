//! `recall search --source dsh` end to end: DeepSeek Harness logs under
//! `~/.dsh/sessions` (real samples, plain and zstd-framed) are indexed by
//! `recall index` and found by the CLI and over HTTP, under every spelling
//! of the source name.

mod http_support;
mod store_support;

use serde_json::Value;
use std::path::Path;
use store_support::*;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

fn home() -> TempDir {
    let home = temp_dir("cli-dsh");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared/corpus/dsh");
    let sessions = home.join(".dsh/sessions");
    copy_tree(&corpus.join("real/subagent-fork/sessions"), &sessions);
    copy_tree(&corpus.join("derived/bash-tool-zstd/sessions"), &sessions);
    run_ok(&home, &["index"], 0);
    home
}

fn keys(json_line: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json_line.trim()).expect("JSON");
    v["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["session_key"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_cli_finds_dsh_sessions_by_every_source_spelling() {
    let home = home();
    for spelling in ["dsh", "deepseek-harness", "DeepSeek Harness"] {
        let out = run_ok(
            &home,
            &["search", "--json", "MARMALADE", "--source", spelling],
            0,
        );
        let mut got = keys(&out);
        got.sort();
        assert_eq!(
            got,
            [
                "dsh:96cf59c9-b347-48b9-b234-a5200913ad05",
                "dsh:ada8966c-9fa3-441b-8721-37ff1e795e6a"
            ],
            "--source {spelling:?}"
        );
    }
    // The zstd-framed log is read too.
    let out = run_ok(
        &home,
        &["search", "--json", "dsh-sdk-proof-7391", "--source", "dsh"],
        0,
    );
    assert_eq!(keys(&out), ["dsh:sdk-snapshot-bash"]);
    run_ok(
        &home,
        &["search", "MARMALADE", "--source", "pi coding agent"],
        1,
    );
    run_ok(&home, &["search", "MARMALADE", "--source", "deepseek"], 2);
    let listed = run_ok(&home, &["sessions", "--source", "dsh"], 0);
    assert!(listed.contains("Remember this fact for later"), "{listed}");
}

#[test]
fn http_search_filters_on_dsh() {
    let demo = http_support::Demo::start("http-dsh");
    let search = |source: &str| {
        let v = demo
            .get(&format!(
                "/api/sessions/message-search?q=centimetres&source={}",
                http_support::enc(source)
            ))
            .json();
        v["sessions"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|s| s["session_key"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    let got = search("dsh");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with("dsh:session-"), "{got:?}");
    assert_eq!(search("deepseek-harness"), got);
    assert_eq!(search("DeepSeek Harness"), got);
    let claude = search("claude code");
    assert!(
        !claude.is_empty() && claude.iter().all(|k| k.starts_with("claude-code:")),
        "a spaced source name filters too: {claude:?}"
    );
}

/// One checksummed zstd frame holding `text`.
fn frame(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).expect("encoder");
    e.include_checksum(true).expect("checksum");
    e.write_all(text.as_bytes()).expect("write");
    e.finish().expect("finish")
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("append");
}

/// A frame appended to a live `.zstd` log is indexed by the next sweep; a
/// torn one is not, until DSH's repair completes it.
#[test]
fn an_appended_frame_is_indexed_and_a_torn_one_waits() {
    let home = home();
    let log =
        home.join(".dsh/sessions/--~007B~007Bcwd~007D~007D--/sdk-snapshot-bash/session.jsonl.zstd");
    assert!(log.is_file());
    let line = serde_json::json!({"type":"user/message","seq":200,"time":1_785_498_600_000u64,
        "data":{"content":[{"type":"text","text":"now the quokkaprobe follow-up"}],
        "source":{"kind":"user"},"role":"user","id":"late-1"},"surfaceOp":"append"})
    .to_string()
        + "\n";
    let f = frame(&line);
    append(&log, &f[..f.len() - 5]);
    run_ok(&home, &["index"], 0);
    run_ok(&home, &["search", "quokkaprobe"], 1);
    append(&log, &f[f.len() - 5..]);
    run_ok(&home, &["index"], 0);
    let out = run_ok(
        &home,
        &["search", "--json", "quokkaprobe", "--source", "dsh"],
        0,
    );
    assert_eq!(keys(&out), ["dsh:sdk-snapshot-bash"]);
    // The earlier records are still there, once each.
    let out = run_ok(&home, &["search", "--json", "dsh-sdk-proof-7391"], 0);
    assert_eq!(keys(&out), ["dsh:sdk-snapshot-bash"]);
}
