//! Output that fits the terminal and one time model (issue 26): `recall
//! search`, `sessions` and `tui` in pseudo-terminals of 80 and 120 columns
//! (no line longer than the width, the matched word on every hit line, one
//! line per session row); piped output keeps its stable form; `TZ` moves
//! human times and leaves JSON alone; `--since 7d` on the CLI and
//! `since=7d` over HTTP select the same sessions; `recall service install
//! --dry-run` prints a unit `systemd-analyze verify` accepts.
#![cfg(unix)]

mod store_support;

use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store_support::*;

/// 2026-07-15T12:00:00Z: summer, so New York is -04:00 and Tokyo +09:00,
/// 13 hours apart.
const NOW: i64 = 1_784_116_800_000;

const SOURCE_VARS: &[&str] = &[
    "RECALL_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "KIMI_CODE_HOME",
    "KIMI_SHARE_DIR",
    "PI_CODING_AGENT_DIR",
    "INTENDANT_HOME",
    "DSH_HOME",
    "COLUMNS",
    "NO_COLOR",
];

fn demo_home(tag: &str) -> TempDir {
    let home = temp_dir(tag);
    recall_host::demo::write_at(&home, NOW).expect("demo home");
    let now = NOW.to_string();
    let out = recall(&home)
        .args(["--now", now.as_str(), "index"])
        .output()
        .expect("index");
    assert!(out.status.success(), "{out:?}");
    home
}

fn pty(cols: u16) -> portable_pty::PtyPair {
    native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("a pty")
}

fn command(home: &Path, args: &[&str]) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(RECALL);
    let now = NOW.to_string();
    cmd.args(["--home", home.to_str().unwrap(), "--now", now.as_str()]);
    cmd.args(args);
    for v in SOURCE_VARS {
        cmd.env_remove(v);
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("TZ", "Asia/Tokyo");
    cmd
}

/// Runs a command whose stdout is a terminal of `cols` columns; its output
/// as lines, escape sequences removed.
fn in_terminal(home: &Path, cols: u16, args: &[&str]) -> Vec<String> {
    let pair = pty(cols);
    let mut child = pair
        .slave
        .spawn_command(command(home, args))
        .expect("spawn");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let raw = Arc::new(Mutex::new(Vec::new()));
    let r = raw.clone();
    let t = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            r.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "recall {args:?} hangs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(pair.master);
    let _ = t.join();
    let bytes = raw.lock().unwrap().clone();
    strip_ansi(&String::from_utf8_lossy(&bytes))
        .split('\n')
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect()
}

/// The text without CSI escape sequences.
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' && it.peek() == Some(&'[') {
            it.next();
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// A hit line of the human search output: `  YYYY-MM-DD HH:MM role  …`.
fn is_hit_line(l: &str) -> bool {
    let b = l.as_bytes();
    l.starts_with("  2") && b.len() > 19 && b[6] == b'-' && b[9] == b'-' && b[15] == b':'
}

fn json(home: &Path, args: &[&str]) -> serde_json::Value {
    let now = NOW.to_string();
    let out = recall(home)
        .args(["--now", now.as_str()])
        .args(args)
        .output()
        .expect("run");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"))
}

#[test]
fn search_and_sessions_fit_80_and_120_columns() {
    let home = demo_home("term-fit");
    let rows = json(&home, &["sessions", "--json", "--limit", "0"]);
    let n = rows.as_array().expect("rows").len();
    assert!(n > 4);
    for cols in [80u16, 120] {
        let lines = in_terminal(&home, cols, &["search", "tide", "--limit", "50"]);
        let hits: Vec<&String> = lines.iter().filter(|l| is_hit_line(l)).collect();
        assert!(hits.len() >= 3, "{lines:#?}");
        for l in &lines {
            assert!(
                width(l) <= usize::from(cols),
                "{cols}: {l:?} is {}",
                width(l)
            );
        }
        for h in hits {
            assert!(
                h.to_lowercase().contains("tide"),
                "{cols}: the hit is off the line: {h:?}"
            );
        }
        assert!(
            lines[0].starts_with("times in Asia/Tokyo +09:00"),
            "{:?}",
            lines[0]
        );

        let lines = in_terminal(&home, cols, &["sessions", "--limit", "0"]);
        let lines: Vec<&String> = lines.iter().filter(|l| !l.is_empty()).collect();
        assert_eq!(
            lines.len(),
            n + 1,
            "a header and one line per session: {lines:#?}"
        );
        assert!(lines[0].starts_with("updated +09:00"), "{:?}", lines[0]);
        for l in &lines {
            assert!(width(l) <= usize::from(cols), "{cols}: {l:?}");
        }
    }
    // Piped, the stable form: full keys, times with their offset, no header.
    let now = NOW.to_string();
    let piped = recall(&home)
        .env("TZ", "Asia/Tokyo")
        .args(["--now", now.as_str(), "sessions", "--limit", "0"])
        .output()
        .expect("sessions");
    let piped = String::from_utf8_lossy(&piped.stdout).into_owned();
    assert_eq!(piped.lines().count(), n);
    let first_key = rows[0]["session_key"].as_str().expect("key");
    assert!(piped.lines().next().unwrap().contains(first_key), "{piped}");
}

/// A running `recall tui` in a pty, read through a terminal emulator.
fn tui_screen(home: &Path, cols: u16, query: &str, wait: &str) -> String {
    let pair = pty(cols);
    let mut child = pair
        .slave
        .spawn_command(command(home, &["tui"]))
        .expect("spawn tui");
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let mut keys = pair.master.take_writer().expect("writer");
    let screen = Arc::new(Mutex::new(vt100::Parser::new(40, cols, 0)));
    let s = screen.clone();
    std::thread::spawn(move || {
        let _master = pair.master;
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            s.lock().unwrap().process(&buf[..n]);
        }
    });
    let contents = || screen.lock().unwrap().screen().contents();
    let start = Instant::now();
    while !contents().contains("recent sessions") {
        assert!(start.elapsed() < Duration::from_secs(20), "{}", contents());
        std::thread::sleep(Duration::from_millis(20));
    }
    for b in query.bytes() {
        keys.write_all(&[b]).unwrap();
        keys.flush().unwrap();
        std::thread::sleep(Duration::from_millis(15));
    }
    let start = Instant::now();
    while !contents().contains(wait) {
        assert!(start.elapsed() < Duration::from_secs(20), "{}", contents());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let c = contents();
    let _ = child.kill();
    c
}

#[test]
fn the_tui_shows_the_hit_a_short_key_and_the_date() {
    let home = demo_home("term-tui");
    for cols in [80u16, 120] {
        let screen = tui_screen(&home, cols, "tide", " hits");
        let hits: Vec<&str> = screen
            .lines()
            .filter(|l| {
                let t = l.trim_start_matches(['▶', ' ']);
                t.len() > 16 && t.as_bytes()[4] == b'-' && t.as_bytes()[13] == b':'
            })
            .collect();
        assert!(hits.len() >= 3, "{screen}");
        for h in &hits {
            assert!(h.to_lowercase().contains("tide"), "{cols}: {h:?}\n{screen}");
        }
        for l in screen.lines() {
            assert!(width(l) <= usize::from(cols), "{l:?}");
        }
        // Headings carry the short key, never the whole key.
        assert!(!screen.contains("-8c94-"), "{screen}");
        assert!(screen.contains("times in Asia/Tokyo +09:00"), "{screen}");
    }
}

/// The times of `recall sessions` (piped) under `tz`: `(local text, offset
/// minutes)` per row.
fn session_times(home: &Path, tz: &str) -> Vec<(String, i64)> {
    let now = NOW.to_string();
    let out = recall(home)
        .env("TZ", tz)
        .args(["--now", now.as_str(), "sessions", "--limit", "0"])
        .output()
        .expect("sessions");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let t = &l[..16];
            let off = &l[17..23];
            let sign = if off.starts_with('-') { -1 } else { 1 };
            let mins = off[1..3].parse::<i64>().unwrap() * 60 + off[4..6].parse::<i64>().unwrap();
            (t.to_string(), sign * mins)
        })
        .collect()
}

/// Minutes since the epoch of a local `YYYY-MM-DD HH:MM`, ignoring zones.
fn local_minutes(t: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
    let days = recall_core::time::days_from_civil(n(0..4), n(5..7), n(8..10));
    days * 1440 + n(11..13) * 60 + n(14..16)
}

#[test]
fn tz_moves_human_times_13_hours_and_leaves_json_alone() {
    let home = demo_home("term-tz");
    let tokyo = session_times(&home, "Asia/Tokyo");
    let ny = session_times(&home, "America/New_York");
    assert_eq!(tokyo.len(), ny.len());
    assert!(!tokyo.is_empty());
    for ((t, to), (n, no)) in tokyo.iter().zip(&ny) {
        assert_eq!(*to, 540, "{t}");
        assert_eq!(*no, -240, "{n}");
        assert_eq!(local_minutes(t) - local_minutes(n), 13 * 60, "{t} vs {n}");
    }
    let now = NOW.to_string();
    let j = |tz: &str| {
        recall(&home)
            .env("TZ", tz)
            .args(["--now", now.as_str(), "sessions", "--json", "--limit", "0"])
            .output()
            .expect("json")
            .stdout
    };
    assert_eq!(j("Asia/Tokyo"), j("America/New_York"), "JSON is epoch ms");
    // --utc prints UTC.
    let out = recall(&home)
        .env("TZ", "Asia/Tokyo")
        .args(["--now", now.as_str(), "--utc", "sessions", "--limit", "1"])
        .output()
        .expect("utc");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" +00:00 "),
        "{out:?}"
    );
}

/// `GET path` on `addr`: the body.
fn http_get(addr: &str, path: &str) -> serde_json::Value {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).expect("read");
    let body = raw.split_once("\r\n\r\n").expect("a body").1;
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{path}: {e}: {raw}"))
}

#[test]
fn since_7d_selects_the_same_sessions_on_the_cli_and_over_http() {
    let home = demo_home("term-since");
    let keys = |v: &serde_json::Value, field: &str| -> Vec<String> {
        v.as_array()
            .expect("rows")
            .iter()
            .map(|r| r[field].as_str().unwrap().to_string())
            .collect()
    };
    let cli = keys(
        &json(
            &home,
            &["sessions", "--json", "--since", "7d", "--limit", "0"],
        ),
        "session_key",
    );
    let all = keys(
        &json(&home, &["sessions", "--json", "--limit", "0"]),
        "session_key",
    );
    assert!(
        !cli.is_empty() && cli.len() < all.len(),
        "7d is a real cut: {cli:?} of {all:?}"
    );
    let hits = json(
        &home,
        &[
            "search", "--json", "--since", "7d", "tide", "--limit", "100",
        ],
    );
    let cli_search: Vec<String> = keys(&hits["sessions"], "session_key");

    let now = NOW.to_string();
    let mut child = recall(&home)
        .args([
            "--now",
            now.as_str(),
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--no-demo",
            "--no-index",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("serve");
    let stderr = child.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let addr = loop {
        let l = lines.next().expect("serve says where").expect("stderr");
        if let Some(rest) = l.split("serving http://").nth(1) {
            break rest.split(['/', ' ']).next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let http = http_get(&addr, "/api/sessions?since=7d&limit=100");
    let http_keys = keys(&http["sessions"], "session_key");
    let http_hits = http_get(
        &addr,
        "/api/sessions/message-search?q=tide&since=7d&limit=100",
    );
    let http_search = keys(&http_hits["sessions"], "session_key");
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(http_keys, cli);
    assert_eq!(http_search, cli_search);
    assert!(!cli_search.is_empty());
}

#[test]
fn the_service_unit_is_one_systemd_accepts() {
    let home = temp_dir("term-service");
    let out = recall(&home)
        .env("HOME", home.as_os_str())
        .env_remove("XDG_CONFIG_HOME")
        .args(["service", "install", "--dry-run"])
        .output()
        .expect("service");
    assert!(out.status.success(), "{out:?}");
    let unit = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(unit.contains("ExecStart="), "{unit}");
    assert!(
        unit.contains(&format!("\"--home\" \"{}\" \"serve\"", home.display())),
        "{unit}"
    );
    assert!(
        !home.join(".config/systemd/user/recall.service").exists(),
        "dry run writes nothing"
    );
    if cfg!(target_os = "macos") {
        return;
    }
    let Ok(probe) = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
    else {
        eprintln!("note: systemd-analyze is absent: the unit was not verified");
        return;
    };
    assert!(probe.status.success());
    let path = home.join("recall.service");
    std::fs::write(&path, &unit).unwrap();
    let v = std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .expect("verify");
    let err = String::from_utf8_lossy(&v.stderr);
    assert!(
        v.status.success() && !err.contains("recall.service"),
        "{err}"
    );
}
