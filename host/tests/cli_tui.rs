//! `recall tui` as a person uses it, in a pseudo-terminal whose output is
//! read through a terminal emulator (vt100): recent sessions on an empty
//! query, search as you type with hits grouped per session, j/k, Enter
//! opens the session at the hit, Esc back, `/` edits the query, `p` filters
//! by project, `q` quits printing nothing, `r` prints only the resume
//! command on stdout (the screen is drawn on the terminal, not stdout).
#![cfg(unix)]

mod store_support;

use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use store_support::*;

const ROWS: u16 = 24;
const COLS: u16 = 110;

/// A running `recall tui` in a pseudo-terminal.
struct Tui {
    screen: Arc<Mutex<vt100::Parser>>,
    keys: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Tui {
    /// Starts `recall --home HOME tui ARGS > stdout_file` in a pty.
    fn start(home: &Path, args: &[&str], stdout_file: &Path) -> Tui {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pty");
        let mut cmd = CommandBuilder::new("sh");
        cmd.arg("-c");
        cmd.arg("out=$1; shift; exec \"$@\" > \"$out\"");
        cmd.arg("sh");
        cmd.arg(stdout_file);
        cmd.arg(RECALL);
        cmd.args([
            "--home",
            home.to_str().unwrap(),
            "--retention-days",
            "0",
            "tui",
        ]);
        cmd.args(args);
        for v in [
            "RECALL_HOME",
            "CLAUDE_CONFIG_DIR",
            "CODEX_HOME",
            "KIMI_CODE_HOME",
            "KIMI_SHARE_DIR",
            "PI_CODING_AGENT_DIR",
            "INTENDANT_HOME",
        ] {
            cmd.env_remove(v);
        }
        cmd.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(cmd).expect("spawn recall tui");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let keys = pair.master.take_writer().expect("pty writer");
        let screen = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let s = screen.clone();
        std::thread::spawn(move || {
            let _master = pair.master; // keep the pty open while reading
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                s.lock().unwrap().process(&buf[..n]);
            }
        });
        Tui {
            screen,
            keys,
            child,
        }
    }

    fn contents(&self) -> String {
        self.screen.lock().unwrap().screen().contents()
    }

    /// Waits until the screen shows every one of `texts`.
    fn wait_for(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let c = self.contents();
            if texts.iter().all(|t| c.contains(t)) {
                return c;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the screen never showed {texts:?}:\n{c}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The screen line holding the selection marker.
    fn selected(&self) -> String {
        self.contents()
            .lines()
            .find(|l| l.trim_start().starts_with('▶'))
            .unwrap_or_default()
            .to_string()
    }

    /// Waits until the selected line contains `text`.
    fn wait_selected(&self, text: &str) {
        let start = Instant::now();
        while !self.selected().contains(text) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the selection never reached {text:?}:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `s` (one key at a time, as a person would).
    fn send(&mut self, s: &str) {
        for b in s.bytes() {
            self.keys.write_all(&[b]).unwrap();
            self.keys.flush().unwrap();
            std::thread::sleep(Duration::from_millis(15));
        }
    }

    /// Esc, with the pause a terminal needs to tell it from Alt+key.
    fn escape(&mut self) {
        self.keys.write_all(b"\x1b").unwrap();
        self.keys.flush().unwrap();
        std::thread::sleep(Duration::from_millis(150));
    }

    /// Waits for the process to end; its exit code.
    fn exit_code(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s.exit_code();
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "recall tui did not exit:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn home() -> TempDir {
    let home = temp_dir("tui");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    run_ok(&home, &["index"], 0);
    home
}

#[test]
fn type_move_open_back_and_quit() {
    let home = home();
    let out = home.join("stdout.txt");
    let mut tui = Tui::start(&home, &[], &out);
    // An empty query lists the recent sessions, newest first.
    let screen = tui.wait_for(&["3 recent sessions", "Plan the marmoset migration"]);
    let gamma = screen.find("Rename the pangolin crate").unwrap();
    let alpha = screen.find("Why does the zebrafinch parser").unwrap();
    assert!(gamma < alpha, "newest first:\n{screen}");

    // Search as you type: grouped per session, hits under their heading.
    tui.send("zebrafinch");
    let screen = tui.wait_for(&["2 sessions, 4 hits", "Renamed pangolin to pangolin-core"]);
    assert!(!screen.contains("marmoset"), "beta has no hit:\n{screen}");
    tui.wait_selected("assistant Renamed pangolin");

    // j/k and the arrows move over the hits, skipping headings.
    tui.escape();
    tui.send("j");
    tui.wait_selected("user      Rename the pangolin crate");
    tui.send("j");
    tui.wait_selected("assistant The zebrafinch parser lowercases");
    tui.send("k");
    tui.wait_selected("user      Rename the pangolin crate");
    tui.keys.write_all(b"\x1b[B").unwrap(); // Down
    tui.wait_selected("assistant The zebrafinch parser lowercases");

    // Enter opens the session's records at the hit.
    tui.send("\r");
    let screen = tui.wait_for(&["4 records", "#3", "quokka_roundtrip passes"]);
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("▶ #1") && l.contains("assistant")),
        "the hit's record is marked:\n{screen}"
    );
    tui.escape();
    tui.wait_for(&["2 sessions, 4 hits"]);

    // `/` edits the query again.
    tui.send("/");
    tui.send(&"\x7f".repeat("zebrafinch".len()));
    tui.send("marmoset");
    tui.wait_for(&["1 session, 2 hits", "copy billing rows"]);

    // `p` filters by project.
    tui.escape();
    tui.send("p");
    tui.wait_for(&["all projects", "/home/u/code/gamma  (1)"]);
    tui.send("j"); // alpha, beta, gamma: one session each, by name
    tui.send("\r");
    tui.wait_for(&["[project: /home/u/code/alpha]", "no matches"]);

    // q quits, printing nothing: `$(recall tui)` runs nothing.
    tui.send("q");
    assert_eq!(tui.exit_code(), 1);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "");
}

#[test]
fn r_prints_only_the_resume_command() {
    let home = home();
    let out = home.join("stdout.txt");
    let mut tui = Tui::start(&home, &["marmoset"], &out);
    tui.wait_for(&["1 session, 2 hits"]);
    tui.send("r");
    assert_eq!(tui.exit_code(), 0);
    let printed = std::fs::read_to_string(&out).unwrap();
    let beta = std::fs::canonicalize(&*home)
        .unwrap()
        .join(".pi/agent/sessions/--home-u-code--/pi-beta.jsonl");
    assert_eq!(printed, format!("pi --session {}\n", beta.display()));
}

#[test]
fn without_a_terminal_it_says_so() {
    let home = home();
    // A new session has no controlling terminal; stdin is not one either.
    let Ok(out) = std::process::Command::new("setsid")
        .arg(RECALL)
        .args(["--home", home.to_str().unwrap(), "tui"])
        .stdin(std::process::Stdio::null())
        .output()
    else {
        return; // no setsid(1) here
    };
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
}

#[test]
fn an_empty_index_says_where_it_looked() {
    let home = temp_dir("tui-empty");
    let out = home.join("stdout.txt");
    let mut tui = Tui::start(&home, &[], &out);
    let pi = std::fs::canonicalize(&*home)
        .unwrap()
        .join(".pi/agent/sessions");
    tui.wait_for(&["No sessions indexed yet", &pi.display().to_string()]);
    tui.keys.write_all(&[3]).unwrap(); // Ctrl-C
    assert_eq!(tui.exit_code(), 1);
}

#[test]
fn searches_through_a_running_daemon() {
    let home = home();
    // A transcript written after the last index: a TUI that reads the store
    // as it is (`--no-refresh`) cannot see it...
    write_session(&home, 9, 2, 100);
    let out = home.join("stdout.txt");
    let mut tui = Tui::start(&home, &["--no-refresh", "w9x0"], &out);
    tui.wait_for(&["no matches"]);
    tui.send("q");
    assert_eq!(tui.exit_code(), 1);
    // ...but with `recall serve` running, the TUI asks the daemon, whose own
    // refresh has indexed it.
    let mut daemon = serve(&home);
    let mut tui = Tui::start(&home, &["--no-refresh", "w9x0"], &out);
    tui.wait_for(&["1 session", "w9x0 lorem"]);
    tui.send("q");
    assert_eq!(tui.exit_code(), 1);
    daemon.kill().unwrap();
    daemon.wait().unwrap();
}
