//! The client of a running `recall serve` of the same store: how `recall
//! search` (and the TUI) ask it instead of opening the store themselves.
//!
//! While it serves, the daemon keeps `serve.json` (`{pid, addr, token}`) in
//! the store folder. `recall search` asks that daemon when its process is
//! alive and needs no token: the daemon's watch keeps its index fresh, so the
//! CLI sweeps nothing itself. Any answer but a `ready` 200 (an error, a
//! partial answer under the daemon's budgets, a daemon still building its
//! first backfill, no daemon at all) falls back
//! to the local search, which then prints exactly what it always did, so the
//! output is the same either way.

use recall_core::response::State;
use recall_core::{Request, Response};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The advert's file name in the store folder.
pub const FILE: &str = "serve.json";

/// What a serving daemon advertises.
#[derive(Debug, Serialize, Deserialize)]
struct Advert {
    pid: u32,
    addr: SocketAddr,
    token: bool,
    /// The store folder it serves (canonical): an advert copied with the
    /// store (`cp -r`) names the original and is not used for the copy.
    #[serde(default)]
    store: Option<PathBuf>,
}

/// Removes the advert when the daemon stops (if it is still this one's).
#[derive(Debug)]
pub struct Advertised(PathBuf);

impl Drop for Advertised {
    fn drop(&mut self) {
        let ours = std::fs::read(&self.0)
            .ok()
            .and_then(|b| serde_json::from_slice::<Advert>(&b).ok())
            .is_some_and(|a| a.pid == std::process::id());
        if ours {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

/// Advertises a daemon serving `addr` for the store at `dir` (best effort).
pub fn advertise(dir: &Path, addr: SocketAddr, token: bool) -> Option<Advertised> {
    let a = Advert {
        pid: std::process::id(),
        addr,
        token,
        store: std::fs::canonicalize(dir).ok(),
    };
    let path = dir.join(FILE);
    let tmp = dir.join(format!(".serve.tmp-{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(&a).ok()?).ok()?;
    std::fs::rename(&tmp, &path).ok()?;
    Some(Advertised(path))
}

/// The address of a live daemon of the store at `dir` that needs no token
/// and serves this very folder (an advert without the folder, or naming
/// another one — a copied store — is not used).
pub fn find(dir: &Path) -> Option<SocketAddr> {
    let a: Advert = serde_json::from_slice(&std::fs::read(dir.join(FILE)).ok()?).ok()?;
    let here = std::fs::canonicalize(dir).ok()?;
    let same = a.store.as_deref() == Some(here.as_path());
    (same && !a.token && alive(a.pid) && a.addr.ip().is_loopback()).then_some(a.addr)
}

/// Whether `pid` is a running recall (a dead daemon's advert may remain).
fn alive(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| String::from_utf8_lossy(&c).contains("recall"))
}

/// The daemon's complete answer to `request`, or `None` (ask locally).
pub fn search(addr: SocketAddr, request: &Request) -> Option<Response> {
    search_with(addr, request, false)
}

/// [`search`], asking for the planner's report when `debug`.
pub fn search_with(addr: SocketAddr, request: &Request, debug: bool) -> Option<Response> {
    // Partial (budgets) or building (backfill running): not the answer
    // the local search gives.
    answer(addr, request, debug).filter(|r| r.state == State::Ready)
}

/// Whatever the daemon answers to `request`, in any state (`building`
/// while its backfill runs, `partial` when a budget ran out), or `None`
/// when it does not answer: what `--via daemon` shows.
pub fn answer(addr: SocketAddr, request: &Request, debug: bool) -> Option<Response> {
    let debug = if debug { "&debug=true" } else { "" };
    let body = get(
        addr,
        &format!(
            "/api/sessions/message-search?{}{debug}",
            query_string(request)
        ),
    )?;
    serde_json::from_slice(&body).ok()
}

fn query_string(r: &Request) -> String {
    let fields = [
        ("q", &r.q),
        ("source", &r.source),
        ("role", &r.role),
        ("scope", &r.scope),
        ("since", &r.since),
        ("until", &r.until),
        ("cwd", &r.cwd),
        ("model", &r.model),
        ("include_superseded", &r.include_superseded),
        ("subagents", &r.subagents),
        ("sort", &r.sort),
        ("limit", &r.limit),
        ("cursor", &r.cursor),
    ];
    fields
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", encode(v))))
        .collect::<Vec<_>>()
        .join("&")
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A plain HTTP/1.1 GET on loopback; the body of a 200 with a known length.
fn get(addr: SocketAddr, path: &str) -> Option<Vec<u8>> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    s.set_write_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let split = memchr::memmem::find(&raw, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let body = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?;
    if status != "200" {
        return None;
    }
    let mut length = None;
    for l in lines {
        let (k, v) = l.split_once(':')?;
        match k.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = v.trim().parse::<usize>().ok(),
            // Only identity bodies of a known length are read.
            "transfer-encoding" | "content-encoding" => return None,
            _ => {}
        }
    }
    (length? == body.len()).then(|| body.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_are_percent_encoded() {
        let mut r = Request::new("straße \"a b\"&x=1");
        r.limit = Some("5".into());
        assert_eq!(
            query_string(&r),
            "q=stra%C3%9Fe%20%22a%20b%22%26x%3D1&limit=5"
        );
    }
}
