//! Shared by the HTTP tests: a demo home indexed into a real store, a
//! server on an ephemeral loopback port, a raw HTTP/1.1 client (so tests
//! control every header, Host included) and golden-file comparison.
#![allow(dead_code)]

use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::engine::MemCatalog;
use recall_host::engine::{IndexerHandle, Served};
use recall_host::extract::{self, Roots};
use recall_host::http::{ServeOptions, Server};
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The fixed clock the demo home is written with.
pub const NOW: i64 = 1_793_000_000_000;

/// A temp dir removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "recall-http-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A demo home indexed into its own store, served on a free port.
pub struct Demo {
    pub home: TempDir,
    pub server: Option<Server>,
    pub addr: SocketAddr,
    pub indexer: Arc<Indexer>,
}

impl Demo {
    /// Writes the demo home, runs the backfill, serves it (no sweeps, so
    /// answers only change when a test changes something).
    pub fn start(tag: &str) -> Demo {
        let (home, indexer, backend) = demo_backend(tag);
        let server = serve(backend, ServeOptions::default());
        Demo {
            addr: server.addr(),
            server: Some(server),
            home,
            indexer,
        }
    }

    pub fn get(&self, path: &str) -> Resp {
        get(self.addr, path, &[])
    }
}

/// The demo home indexed into its own store (backfill done), served with
/// an indexer handle that runs no sweeps.
pub fn demo_backend(tag: &str) -> (TempDir, Arc<Indexer>, Served) {
    let (home, indexer, catalog) = demo_store(tag, true);
    let served = store_served(
        IndexerHandle::new(indexer.clone(), catalog.clone(), false),
        catalog,
    );
    (home, indexer, served)
}

/// The demo home with its own store and indexer (`backfill` = the first
/// sweep has run).
pub fn demo_store(tag: &str, backfill: bool) -> (TempDir, Arc<Indexer>, StoreCatalog) {
    let home = TempDir::new(tag);
    recall_host::demo::write_at(&home.0, NOW).expect("demo home");
    let store = Arc::new(
        Store::open(&recall_host::store::store_dir(&home.0.join(".recall"))).expect("store"),
    );
    let mut opts = IndexOptions::new(Roots::resolve(&home.0, |_| None));
    opts.retention_days = 0;
    opts.now_ms = Some(NOW);
    opts.workers = 1;
    let indexer = Arc::new(Indexer::new(store.clone(), opts));
    if backfill {
        indexer.sweep().expect("backfill");
    }
    let catalog = StoreCatalog::new(store, Arc::new(Arena::new(64 << 20)));
    (home, indexer, catalog)
}

/// `catalog` served with `indexer`.
pub fn store_served(indexer: IndexerHandle, catalog: StoreCatalog) -> Served {
    Served::indexed(Arc::new(catalog), Arc::new(indexer))
}

/// Serves `served` on an ephemeral loopback port without the indexer loop.
pub fn serve(served: Served, mut opts: ServeOptions) -> Server {
    opts.bind = "127.0.0.1:0".parse().expect("addr");
    opts.index = false;
    Server::start(served, opts).expect("server starts")
}

/// `catalog` served without an indexer.
pub fn mem_served(catalog: Arc<MemCatalog>) -> Served {
    Served::read_only(catalog)
}

/// The demo home's sessions, extracted, in a [`MemCatalog`].
pub fn mem_backend(home: &Path) -> MemCatalog {
    recall_host::demo::write_at(home, NOW).expect("demo home");
    let sessions = extract::discover(&Roots::resolve(home, |_| None))
        .iter()
        .filter_map(|s| extract::extract(s).ok().flatten())
        .collect();
    MemCatalog::new("mem", sessions)
}

/// A parsed response.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body[..self.body.len().min(300)])
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// GET `path` with extra headers (a `Host` given here replaces the default).
pub fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Resp {
    request(addr, "GET", path, headers)
}

/// Sends one request and reads the whole response (`Connection: close`).
pub fn request(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> Resp {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).ok();
    let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("send");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    parse(&raw)
}

fn parse(raw: &[u8]) -> Resp {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("header end");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Resp {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&b[..eol])
                .split(';')
                .next()
                .unwrap_or("")
                .trim(),
            16,
        )
        .expect("chunk size");
        if size == 0 {
            break;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[eol + 2 + size + 2..];
    }
    out
}

/// Base64url (no padding) of a value's JSON.
pub fn b64(v: &serde_json::Value) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

/// Percent-encodes a query value.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Replaces volatile values (store ids, times, temp paths, generation
/// names) so a response can be compared with a golden file.
pub fn normalize(v: &mut serde_json::Value, home: &Path) {
    use serde_json::Value;
    let home = home.to_string_lossy().into_owned();
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match k.as_str() {
                    "store_id" | "store" => *x = Value::String("<store_id>".into()),
                    "took_ms" | "last_sweep_ms" | "last_reconcile_ms" | "exported_at_ms" => {
                        *x = Value::from(0)
                    }
                    "generation_file" => *x = Value::String("<generation>".into()),
                    "cursor" if x.is_string() => *x = Value::String("<cursor>".into()),
                    _ => normalize(x, Path::new(&home)),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| normalize(x, Path::new(&home))),
        Value::String(s) if s.contains(&home) => *s = s.replace(&home, "<home>"),
        _ => {}
    }
}

/// Compares `actual` with `golden/http/<name>.json`; `UPDATE_GOLDEN=1`
/// rewrites the file instead.
pub fn golden(name: &str, actual: &serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/http")
        .join(format!("{name}.json"));
    let pretty = serde_json::to_string_pretty(actual).expect("json") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &pretty).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden {} (run with UPDATE_GOLDEN=1)",
            path.display()
        )
    });
    assert_eq!(pretty, expected, "response differs from {}", path.display());
}
