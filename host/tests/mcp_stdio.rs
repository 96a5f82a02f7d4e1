//! `recall mcp` driven as an MCP client drives it: JSON-RPC lines over
//! stdio on a generated home — initialize, list the tools, call each one,
//! malformed arguments, the project scope, self-exclusion and read-only.

mod store_support;

use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use store_support::*;

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(home: &Path, args: &[&str]) -> Client {
        let mut child = recall(home)
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn recall mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = c.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "recall-test", "version": "0"}
            }),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "recall", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed"
            );
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// Calls a tool: `Ok(json)` on success, `Err(message)` for a tool error
    /// or a JSON-RPC error.
    fn call(&mut self, name: &str, args: Value) -> Result<Value, String> {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        if let Some(e) = r.get("error") {
            return Err(e["message"].as_str().unwrap_or("").to_string());
        }
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if r["result"]["isError"] == json!(true) {
            return Err(text);
        }
        Ok(serde_json::from_str(&text).expect("tool output is JSON"))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn generated_home() -> (TempDir, PathBuf) {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared/corpus-gen/gen.py");
    let out = temp_dir("mcp");
    let status = Command::new("python3")
        .arg(&gen)
        .arg("--out")
        .arg(&*out)
        .args(["--seed", "5", "--sessions", "30"])
        .stderr(Stdio::null())
        .status()
        .expect("python3");
    assert!(status.success());
    let home = out.join("home");
    run_ok(&home, &["index"], 0);
    (out, home)
}

fn files(dir: &Path, out: &mut BTreeSet<(PathBuf, u64)>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.insert((p.clone(), e.metadata().unwrap().len()));
        }
    }
}

fn keys(v: &Value) -> Vec<String> {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn tools_over_stdio_scoped_to_the_project() {
    let (_out, home) = generated_home();
    let all: Value =
        serde_json::from_str(&run_ok(&home, &["sessions", "--json", "--limit", "0"], 0)).unwrap();
    let all = all.as_array().unwrap().clone();
    // The project: the cwd with the most sessions.
    let mut by_cwd: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for s in &all {
        if let Some(c) = s["cwd"].as_str() {
            by_cwd.entry(c.to_string()).or_default().push(s.clone());
        }
    }
    let (project, _) = by_cwd.iter().max_by_key(|(_, v)| v.len()).unwrap();
    let under = |c: &str| c == project || c.starts_with(&format!("{project}/"));
    let mine_keys: BTreeSet<String> = all
        .iter()
        .filter(|s| s["cwd"].as_str().is_some_and(under))
        .map(|s| s["session_key"].as_str().unwrap().to_string())
        .collect();
    let outsider = all
        .iter()
        .find(|s| !mine_keys.contains(s["session_key"].as_str().unwrap()))
        .unwrap()["session_key"]
        .as_str()
        .unwrap()
        .to_string();
    let mut before = BTreeSet::new();
    files(&store_dir(&home), &mut before);

    let mut c = Client::start(&home, &["--project", project, "--self-window", "0"]);
    let tools = c.request("tools/list", json!({}));
    let names: BTreeSet<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert!(t["inputSchema"]["properties"].is_object(), "{t}");
            t["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "session_search",
            "session_event_search",
            "session_event_read",
            "session_trace",
            "session_event_trace",
            "session_list",
            "session_deep_search"
        ])
    );

    // session_list: exactly the project's sessions.
    let list = c.call("session_list", json!({})).unwrap();
    assert_eq!(keys(&list).into_iter().collect::<BTreeSet<_>>(), mine_keys);
    assert_eq!(
        c.call("session_list", json!({"until": "1970-01-02"}))
            .unwrap()["sessions"],
        json!([])
    );

    // A word of the first user message of a project session.
    let key = mine_keys.iter().next().unwrap().clone();
    let shown: Value = serde_json::from_str(&run_ok(&home, &["show", "--json", &key], 0)).unwrap();
    let record = shown["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "user")
        .unwrap();
    let word = record["text"]
        .as_str()
        .unwrap()
        .split(|ch: char| !ch.is_alphanumeric())
        .max_by_key(|w| w.len())
        .unwrap()
        .to_string();

    let found = c.call("session_search", json!({"query": word})).unwrap();
    let hit_keys = keys(&found);
    assert!(hit_keys.contains(&key), "{found}");
    assert!(hit_keys.iter().all(|k| mine_keys.contains(k)), "{found}");
    for s in found["sessions"].as_array().unwrap() {
        for h in s["hits"].as_array().unwrap() {
            assert!(h["snippet"].as_str().unwrap().chars().count() <= 240);
        }
    }

    // Inside one session, addressed by its bare id.
    let id = key.split_once(':').unwrap().1;
    let inside = c
        .call(
            "session_event_search",
            json!({"session": id, "query": word}),
        )
        .unwrap();
    assert_eq!(inside["session"], json!(key));
    let first = inside["hits"][0]["index"].as_u64().unwrap();
    let read = c
        .call(
            "session_event_read",
            json!({"session": key, "index": first, "before": 1000, "after": 1}),
        )
        .unwrap();
    assert_eq!(read["center"], json!(first));
    let centre = read["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["index"] == json!(first))
        .unwrap();
    assert_eq!(centre["text"], shown["records"][first as usize]["text"]);
    let by_locator = c
        .call(
            "session_event_read",
            json!({"session": key, "locator": shown["records"][first as usize]["locator"], "before": 0, "after": 0}),
        )
        .unwrap();
    assert_eq!(by_locator["center"], json!(first));
    let t = c
        .call(
            "session_event_trace",
            json!({"session": key, "index": first}),
        )
        .unwrap();
    assert_eq!(t["record"]["index"], json!(first));
    let lineage = c.call("session_trace", json!({"session": key})).unwrap();
    assert!(lineage["ancestors"].is_array() && lineage["descendants"].is_array());
    // No session id outside the project leaks through any lineage.
    for k in &mine_keys {
        let l = c
            .call("session_trace", json!({"session": k}))
            .unwrap()
            .to_string();
        for s in &all {
            let other = s["session_key"].as_str().unwrap();
            if !mine_keys.contains(other) {
                let other_id = other.split_once(':').unwrap().1;
                assert!(!l.contains(other_id), "{other_id} in {l}");
            }
        }
    }

    // Outside the project, unknown or malformed: clear errors.
    let e = c
        .call("session_trace", json!({"session": outsider}))
        .unwrap_err();
    assert!(e.contains("session_not_found"), "{e}");
    let e = c
        .call("session_event_read", json!({"session": key}))
        .unwrap_err();
    assert!(e.contains("index and locator"), "{e}");
    let e = c
        .call(
            "session_event_read",
            json!({"session": key, "index": 1_000_000}),
        )
        .unwrap_err();
    assert!(e.contains("record_not_found"), "{e}");
    assert!(c.call("session_search", json!({})).is_err());
    assert!(c
        .call("session_event_read", json!({"session": key, "index": "x"}))
        .is_err());
    let e = c
        .call("session_search", json!({"query": "   "}))
        .unwrap_err();
    assert!(e.contains("q_required"), "{e}");
    let e = c
        .call("session_list", json!({"since": "whenever"}))
        .unwrap_err();
    assert!(e.contains("since"), "{e}");
    drop(c);

    // Self-exclusion: the transcript written just now is the caller's own.
    let entry = manifest(&home).unwrap().sessions[&key].clone();
    let path = PathBuf::from(&entry.meta.paths[0]);
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for s in manifest(&home).unwrap().sessions.values() {
        for p in &s.meta.paths {
            let f = std::fs::File::options().append(true).open(p).unwrap();
            f.set_modified(old).unwrap();
        }
    }
    std::fs::File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let mut c = Client::start(&home, &["--project", project, "--self-window", "30"]);
    let list = keys(&c.call("session_list", json!({})).unwrap());
    assert!(!list.contains(&key), "{list:?}");
    assert_eq!(list.len(), mine_keys.len() - 1);
    let mut c2 = Client::start(&home, &["--all-projects", "--self-window", "0"]);
    assert_eq!(
        keys(&c2.call("session_list", json!({"limit": 100})).unwrap()).len(),
        all.len().min(100)
    );
    drop(c);
    drop(c2);

    // Read-only: the store is byte-for-byte as it was.
    let mut after = BTreeSet::new();
    files(&store_dir(&home), &mut after);
    assert_eq!(before, after);
}

impl Client {
    /// Writes `bytes` as one line and reads the next JSON-RPC line back.
    fn raw(&mut self, bytes: &[u8]) -> Value {
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        assert!(
            self.stdout.read_line(&mut line).unwrap() > 0,
            "server closed"
        );
        serde_json::from_str(&line).expect("a JSON-RPC line")
    }

    fn still_serves(&mut self) {
        let pong = self.request("ping", json!({}));
        assert!(pong["result"].is_object(), "{pong}");
    }
}

/// Issue 24 item 14: a non-JSON line, array `params`, a 50 MB request and
/// JSON nested 100,000 deep each get the JSON-RPC error the spec names, and
/// the server keeps serving.
#[test]
fn malformed_json_rpc_lines_get_an_error_and_the_server_keeps_serving() {
    let (_out, home) = generated_home();
    let mut c = Client::start(&home, &["--all-projects"]);
    let e = c.raw(b"this is not json");
    assert_eq!(e["error"]["code"], -32700, "{e}");
    c.still_serves();
    let e = c.raw(br#"{"jsonrpc":"2.0","id":77,"method":"tools/list","params":[1,2]}"#);
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(77), json!(-32602)),
        "{e}"
    );
    c.still_serves();
    let mut big = br#"{"jsonrpc":"2.0","id":78,"method":"ping","params":{"x":""#.to_vec();
    big.resize(50 << 20, b'a');
    big.extend_from_slice(br#""}}"#);
    let e = c.raw(&big);
    assert_eq!(e["error"]["code"], -32600, "{e}");
    c.still_serves();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let e = c.raw(deep.as_bytes());
    assert_eq!(e["error"]["code"], -32700, "{e}");
    c.still_serves();
}

/// With no index the server still completes the handshake; each tool call
/// is a tool error saying what to run.
#[test]
fn no_index_is_a_tool_error_after_the_handshake() {
    let home = temp_dir("mcp-noindex");
    let mut c = Client::start(&home, &["--all-projects"]);
    let e = c.call("session_search", json!({"query": "x"})).unwrap_err();
    assert!(
        e.starts_with("no_index") && e.contains("recall index"),
        "{e}"
    );
    c.still_serves();
}

/// `session_deep_search` reads the project's source files only, finds what
/// a message search finds and what it does not index, answers within the
/// budget, and refuses malformed arguments with a code.
#[test]
fn deep_search_over_stdio_reads_only_the_project_within_the_budget() {
    let (_out, home) = generated_home();
    let all: Value =
        serde_json::from_str(&run_ok(&home, &["sessions", "--json", "--limit", "0"], 0)).unwrap();
    let all = all.as_array().unwrap().clone();
    let mut by_cwd: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for s in &all {
        if let Some(c) = s["cwd"].as_str() {
            by_cwd
                .entry(c.to_string())
                .or_default()
                .push(s["session_key"].as_str().unwrap().to_string());
        }
    }
    let (project, mine) = by_cwd.iter().max_by_key(|(_, v)| v.len()).unwrap();
    let mine: BTreeSet<String> = mine.iter().cloned().collect();
    let key = mine.iter().next().unwrap().clone();
    let shown: Value = serde_json::from_str(&run_ok(&home, &["show", "--json", &key], 0)).unwrap();
    let word = shown["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "user")
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .split(|ch: char| !ch.is_alphanumeric())
        .max_by_key(|w| w.len())
        .unwrap()
        .to_string();
    let mut c = Client::start(&home, &["--project", project, "--self-window", "0"]);
    let in_scope = |v: &Value| {
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| mine.contains(s["session_key"].as_str().unwrap()))
    };

    // The word of a user message: found in its session, as the indexed
    // record (its locator), with the match highlighted.
    let v = c
        .call(
            "session_deep_search",
            json!({"pattern": word, "fixed_strings": true, "limit": 100, "max_tokens": 250000}),
        )
        .unwrap();
    assert!(in_scope(&v), "{v}");
    let session = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["session_key"] == json!(key))
        .unwrap_or_else(|| panic!("{key} not found: {v}"));
    let hit = session["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "user")
        .unwrap_or_else(|| panic!("no user hit: {session}"));
    assert!(hit["locator"].is_object(), "{hit}");
    let text = hit["text"].as_str().unwrap();
    let r = &hit["highlights"][0];
    let (a, b) = (
        r[0].as_u64().unwrap() as usize,
        r[1].as_u64().unwrap() as usize,
    );
    assert_eq!(&text[a..b], word);

    // Every line of every kind: only the project's sessions, and the kind
    // filter keeps its kind.
    let v = c
        .call(
            "session_deep_search",
            json!({"pattern": ".", "limit": 100, "max_tokens": 250000}),
        )
        .unwrap();
    assert!(in_scope(&v), "{v}");
    assert_eq!(v["stopped"], "limit", "{v}");
    let kinds: BTreeSet<String> = v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["hits"].as_array().unwrap().clone())
        .map(|h| h["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(kinds.len() > 1, "{kinds:?}");
    let v = c
        .call(
            "session_deep_search",
            json!({"pattern": ".", "kind": "tool", "limit": 30}),
        )
        .unwrap();
    for s in v["sessions"].as_array().unwrap() {
        for h in s["hits"].as_array().unwrap() {
            assert_eq!(h["kind"], "tool", "{h}");
        }
    }

    // The smallest budget: a cut answer that says what it cut.
    let v = c
        .call(
            "session_deep_search",
            json!({"pattern": ".", "limit": 100, "max_tokens": 200}),
        )
        .unwrap();
    assert!(v.to_string().len() <= 800, "{} chars", v.to_string().len());
    assert!(v["truncated"].is_object(), "{v}");

    // Nothing found: an explanation, not a bare empty list.
    let v = c
        .call(
            "session_deep_search",
            json!({"pattern": "zq9xv7nothing", "fixed_strings": true}),
        )
        .unwrap();
    assert_eq!(v["sessions"], json!([]));
    assert!(
        v["empty"]["hint"].as_str().unwrap().contains("no line"),
        "{v}"
    );

    // Malformed arguments and sessions outside the project.
    let outsider = all
        .iter()
        .map(|s| s["session_key"].as_str().unwrap())
        .find(|k| !mine.contains(*k))
        .unwrap();
    for (args, code) in [
        (json!({"pattern": "("}), "invalid_pattern"),
        (json!({"pattern": ""}), "invalid_param"),
        (json!({"pattern": "x", "limit": 0}), "invalid_param"),
        (json!({"pattern": "x", "kind": "thoughts"}), "invalid_param"),
        (json!({"pattern": "x", "bogus": 1}), "invalid_param"),
        (json!({"pattern": "x", "since": "whenever"}), "since"),
        (
            json!({"pattern": "x", "session": outsider}),
            "session_not_found",
        ),
    ] {
        let e = c.call("session_deep_search", args.clone()).unwrap_err();
        assert!(e.contains(code), "{args}: {e}");
    }
}
