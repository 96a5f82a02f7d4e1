//! Hosts for the team tests: generated homes indexed at a fixed `NOW`,
//! published to a SeaweedFS prefix, and a union catalog opened over one.

use super::Weed;
use crate::store_support::*;
use recall_core::query::Request;
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::remote::hostid::{self, HostIdentity};
use recall_host::remote::union::{TeamOptions, UnionCatalog};
use recall_host::remote::Remote;
use recall_host::store::Store;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The clock every home is generated and indexed at.
pub const NOW: i64 = 1_764_590_000_000;

/// A generated home, indexed.
pub fn home(root: &Path, seed: u32, sessions: u32) -> PathBuf {
    let out = root.join(format!("g{seed}"));
    let st = std::process::Command::new("python3")
        .arg(super::gen_py())
        .arg("--out")
        .arg(&out)
        .args(["--seed", &seed.to_string()])
        .args(["--sessions", &sessions.to_string()])
        .args(["--now", &NOW.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 gen.py");
    assert!(st.success(), "gen.py failed");
    let h = out.join("home");
    run_ok(&h, &["--now", &NOW.to_string(), "index"], 0);
    h
}

/// Copies a home (without its store).
pub fn copy_tree(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for e in std::fs::read_dir(src).expect("read_dir") {
        let e = e.expect("entry");
        if e.file_name() == ".recall" {
            continue;
        }
        let d = dst.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &d);
        } else {
            std::fs::copy(e.path(), &d).expect("copy");
        }
    }
}

/// Publishes `home` to `url` as `name`; its host id.
pub fn publish(home: &Path, weed: &Weed, url: &str, name: &str) -> String {
    let mut c = recall(home);
    for (k, v) in weed.env() {
        c.env(k, v);
    }
    let out = c
        .args(["publish", url, "--host-name", name, "--json"])
        .output()
        .expect("publish");
    assert!(
        out.status.success(),
        "publish: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).expect("report");
    rep["host_id"].as_str().expect("host id").to_string()
}

/// The union catalog of `home` and every host under `url`.
pub fn open(
    home: &Path,
    env: Vec<(String, String)>,
    url: &str,
    deadline: Duration,
    req: &Request,
) -> (UnionCatalog, HostIdentity, tokio::runtime::Runtime) {
    let store = Arc::new(Store::open(&store_dir(home)).expect("store"));
    let ident = hostid::identity(store.dir(), None).expect("identity");
    let remote = Remote::connect_with(url, deadline, env).expect("remote");
    let rt = recall_host::remote::runtime().expect("runtime");
    let opts = TeamOptions {
        deadline,
        ..TeamOptions::default()
    };
    let cat = UnionCatalog::open(
        StoreCatalog::new(store, Arc::new(Arena::default())),
        &ident,
        Some(Arc::new(remote)),
        rt.handle().clone(),
        &opts,
        &req.parse().expect("query"),
    )
    .expect("open");
    (cat, ident, rt)
}

/// Every session holding "the", in every scope.
pub fn everything(limit: &str) -> Request {
    Request {
        q: Some("the".into()),
        scope: Some("all".into()),
        limit: Some(limit.into()),
        ..Request::default()
    }
}
