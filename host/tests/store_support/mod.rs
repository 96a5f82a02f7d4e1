//! Shared helpers of the store and CLI integration tests: temp homes with
//! pi transcripts (fixtures in `fixtures/`, plus generated ones for load),
//! running the built `recall` binary hermetically, and store invariants.
#![allow(dead_code)]

use recall_core::model::Manifest;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

/// The built binary.
pub const RECALL: &str = env!("CARGO_BIN_EXE_recall");

/// A fresh empty directory under the system temp dir, removed on drop
/// unless the test failed (then it is kept for inspection).
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

/// A fresh empty directory under the system temp dir.
pub fn temp_dir(tag: &str) -> TempDir {
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "recall-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).expect("create temp dir");
    TempDir(d)
}

/// The pi sessions folder of a home.
pub fn pi_dir(home: &Path) -> PathBuf {
    home.join(".pi").join("agent").join("sessions")
}

/// Copies a fixture transcript into a home as a pi session; returns its path.
pub fn add_fixture(home: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/store_support/fixtures")
        .join(name);
    let dir = pi_dir(home).join("--home-u-code--");
    fs::create_dir_all(&dir).expect("mkdir");
    let dest = dir.join(name);
    fs::copy(&src, &dest).expect("copy fixture");
    dest
}

/// One pi message line, keys in the order pi writes them.
pub fn pi_message(id: &str, parent: Option<&str>, role: &str, text: &str, ts_ms: i64) -> String {
    let t = serde_json::to_string(text).expect("string");
    let content = if role == "user" {
        t
    } else {
        format!(r#"[{{"type":"text","text":{t}}}]"#)
    };
    let parent = parent.map_or("null".to_string(), |p| format!("{p:?}"));
    format!(
        r#"{{"type":"message","id":{id:?},"parentId":{parent},"timestamp":"{}","message":{{"role":"{role}","content":{content},"timestamp":{ts_ms}}}}}"#,
        iso(ts_ms)
    ) + "\n"
}

/// A generated pi session: `turns` user/assistant pairs of ~`size` bytes,
/// every message carrying the word `w<session>x<message>`.
pub fn pi_session(n: usize, turns: usize, size: usize) -> String {
    let base = 1_790_000_000_000i64 + n as i64 * 3_600_000;
    let mut out = format!(
        r#"{{"type":"session","version":3,"id":"0e{n:06}-0000-7000-8000-000000000000","timestamp":"{}","cwd":"/home/u/code/p{}"}}"#,
        iso(base),
        n % 7
    ) + "\n";
    let filler = "lorem ipsum dolor sit amet consectetur ".repeat(size / 40 + 1);
    let mut parent: Option<String> = None;
    for m in 0..turns * 2 {
        let id = format!("{n:04x}{m:04x}");
        let role = if m % 2 == 0 { "user" } else { "assistant" };
        let text = format!("w{n}x{m} {}", &filler[..size.min(filler.len())]);
        out += &pi_message(&id, parent.as_deref(), role, &text, base + m as i64 * 1000);
        parent = Some(id);
    }
    out
}

/// Writes generated session `n` into a home; returns its path.
pub fn write_session(home: &Path, n: usize, turns: usize, size: usize) -> PathBuf {
    let dir = pi_dir(home).join(format!("--home-u-code-p{}--", n % 7));
    fs::create_dir_all(&dir).expect("mkdir");
    let p = dir.join(format!("s{n:04}.jsonl"));
    fs::write(&p, pi_session(n, turns, size)).expect("write session");
    p
}

/// The pi session key of generated session `n`.
pub fn session_key(n: usize) -> String {
    format!("pi:0e{n:06}-0000-7000-8000-000000000000")
}

/// RFC 3339 of epoch ms (UTC).
pub fn iso(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        tod / 3600,
        tod % 3600 / 60,
        tod % 60,
        ms.rem_euclid(1000)
    )
}

/// `recall --home <home> --retention-days 0 <args>`, with every source and
/// store variable removed from the environment.
pub fn recall(home: &Path) -> Command {
    let mut c = recall_with_retention(home);
    c.arg("--retention-days").arg("0");
    c
}

/// `recall --home <home>` (default retention), hermetic like [`recall`].
pub fn recall_with_retention(home: &Path) -> Command {
    let mut c = Command::new(RECALL);
    for v in [
        "RECALL_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "KIMI_CODE_HOME",
        "KIMI_SHARE_DIR",
        "PI_CODING_AGENT_DIR",
        "INTENDANT_HOME",
        "DSH_HOME",
        "GEMINI_CLI_HOME",
        "COPILOT_HOME",
        "QWEN_HOME",
        "OPENCODE_DB",
        "XDG_DATA_HOME",
        "NO_COLOR",
        "RECALL_TOKEN",
    ] {
        c.env_remove(v);
    }
    c.arg("--home").arg(home);
    c
}

/// Runs `recall <args>` to completion.
pub fn run(home: &Path, args: &[&str]) -> Output {
    recall(home).args(args).output().expect("run recall")
}

/// Runs `recall <args>`, asserting exit code `code`; returns stdout.
pub fn run_ok(home: &Path, args: &[&str], code: i32) -> String {
    let out = run(home, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "recall {args:?}: stdout {} stderr {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// The store folder of a home.
pub fn store_dir(home: &Path) -> PathBuf {
    home.join(".recall").join("index").join("v1")
}

/// Reads the manifest (`None` when there is none yet).
pub fn manifest(home: &Path) -> Option<Manifest> {
    recall_host::store::catalog::read_store(&store_dir(home))
        .expect("the catalog and its metas parse")
}

/// The store invariants that must hold at every instant: the manifest (if
/// any) parses and every generation it references exists and is named by
/// its content hash.
pub fn check_store(home: &Path) -> Result<Option<Manifest>, String> {
    let dir = store_dir(home);
    let Some(m) = recall_host::store::catalog::read_store(&dir)
        .map_err(|e| format!("manifest does not assemble: {e}"))?
    else {
        return Ok(None);
    };
    for (k, e) in &m.sessions {
        let p = dir.join("generations").join(&e.generation_file);
        let body = fs::read(&p)
            .map_err(|err| format!("{k}: generation {} missing: {err}", e.generation_file))?;
        if recall_core::naming::generation_file_name(&body) != e.generation_file {
            return Err(format!(
                "{k}: generation {} does not match its hash",
                e.generation_file
            ));
        }
    }
    // The index: a listed segment is never torn.
    if let Ok(list) = fs::read(dir.join("segments.json")) {
        let v: serde_json::Value =
            serde_json::from_slice(&list).map_err(|e| format!("segments.json: {e}"))?;
        for s in v["segments"].as_array().into_iter().flatten() {
            let name = s["name"].as_str().unwrap_or_default();
            let bytes = fs::read(dir.join("segments").join(name))
                .map_err(|e| format!("listed segment {name} missing: {e}"))?;
            recall_core::Segment::open(bytes)
                .map_err(|e| format!("listed segment {name} does not open: {e}"))?;
        }
    }
    Ok(Some(m))
}

/// Generations of the manifest no listed segment covers.
pub fn uncovered(home: &Path) -> Vec<String> {
    let dir = store_dir(home);
    let Some(m) = manifest(home) else {
        return Vec::new();
    };
    let mut covered = std::collections::HashSet::new();
    if let Ok(list) = fs::read(dir.join("segments.json")) {
        let v: serde_json::Value = serde_json::from_slice(&list).unwrap_or_default();
        for s in v["segments"].as_array().into_iter().flatten() {
            let name = s["name"].as_str().unwrap_or_default();
            if let Ok(seg) = fs::read(dir.join("segments").join(name))
                .map_err(|e| e.to_string())
                .and_then(|b| recall_core::Segment::open(b).map_err(|e| e.to_string()))
            {
                covered.extend(seg.names().to_vec());
            }
        }
    }
    m.sessions
        .values()
        .map(|e| e.generation_file.clone())
        .filter(|g| !covered.contains(g))
        .collect()
}

/// Starts `recall serve` on `home` (a free loopback port) and waits until it
/// listens, has advertised itself to `recall search` (`serve.json`) and its
/// first sweep has ended.
pub fn serve(home: &Path) -> std::process::Child {
    let (child, addr) = serve_with(home, &[]);
    // Until its first sweep ends, a daemon answers from the index as it
    // was when it started (a search never waits behind a running sweep):
    // tests that rely on its freshness start once it is current.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let phase = index_phase(&addr);
        if phase == "current" || phase == "degraded" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon's first sweep never ended (phase {phase:?})"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

/// Starts `recall serve` on `home` with `extra` flags and waits until it
/// listens and has advertised itself (`serve.json`); returns it and the
/// address it listens on.
pub fn serve_with(home: &Path, extra: &[&str]) -> (std::process::Child, String) {
    let mut child = recall(home)
        .args(["serve", "--bind", "127.0.0.1:0", "--no-demo"])
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn recall serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let addr = loop {
        let line = lines
            .next()
            .expect("serve says where it listens")
            .expect("stderr");
        if let Some(rest) = line.split("serving http://").nth(1) {
            break rest
                .split(|c: char| c == '/' || c.is_whitespace())
                .next()
                .unwrap_or_default()
                .to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let advert = store_dir(home).join("serve.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !advert.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the daemon advertises itself"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child, addr)
}

/// The `phase` of `GET /api/index/status` at `addr` ("" when unreadable).
fn index_phase(addr: &str) -> String {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(addr) else {
        return String::new();
    };
    let req = "GET /api/index/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    let mut body = Vec::new();
    if s.write_all(req.as_bytes()).is_err() || s.read_to_end(&mut body).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&body);
    let json = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v["phase"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Mounts a tmpfs of `size` (as `mount -o size=` reads it) at `at`;
/// false when it cannot (not root, no tmpfs).
pub fn mount_tmpfs(at: &Path, size: &str) -> bool {
    fs::create_dir_all(at).unwrap();
    Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(at)
        .status()
        .is_ok_and(|s| s.success())
}

/// Unmounts what [`mount_tmpfs`] mounted (best effort).
pub fn umount(at: &Path) {
    let _ = Command::new("umount").arg(at).status();
}
