//! The host's identity in team search: `host.json` in the store folder, a
//! random 16-hex id made once per store (kept across `recall clear`, which
//! gives the store a new store id = a new incarnation) and a human name
//! (the hostname unless `--host-name` set one, which is remembered).

use super::RemoteError;
use recall_core::layout::is_host_id;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

pub use recall_core::layout::store::HOST as HOST_FILE;

/// Who this host is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostIdentity {
    /// Stable id (16 hex).
    pub id: String,
    /// Human name.
    pub name: String,
}

/// Reads (or makes) the identity of the store at `store_dir`; `name` set ⇒
/// the name is changed to it and remembered.
pub fn identity(store_dir: &Path, name: Option<&str>) -> Result<HostIdentity, RemoteError> {
    let path = store_dir.join(HOST_FILE);
    let found = fs::read(&path)
        .ok()
        .and_then(|b| serde_json::from_slice::<HostIdentity>(&b).ok())
        .filter(|h| is_host_id(&h.id));
    let mut ident = match &found {
        Some(h) => h.clone(),
        None => HostIdentity {
            id: random_id()?,
            name: hostname(),
        },
    };
    if let Some(n) = name {
        let n = n.trim();
        if n.is_empty() || n.len() > 128 || n.chars().any(char::is_control) {
            return Err(RemoteError::Invalid(
                "--host-name must be 1–128 printable characters".to_string(),
            ));
        }
        ident.name = n.to_string();
    }
    if found.as_ref() != Some(&ident) {
        let body = serde_json::to_vec(&ident).map_err(|e| RemoteError::Invalid(e.to_string()))?;
        let tmp = store_dir.join(format!(".host.json.tmp-{}", std::process::id()));
        let io = |source| RemoteError::Io {
            path: path.display().to_string(),
            source,
        };
        if let Err(e) = fs::write(&tmp, body).and_then(|()| fs::rename(&tmp, &path)) {
            let _ = fs::remove_file(&tmp);
            return Err(io(e));
        }
    }
    Ok(ident)
}

/// The identity a team search leaves out of the bucket as its own: the
/// store's [`identity`], or — when `host.json` cannot be written (a full
/// disk, a read-only store) — a fresh id kept for this search only: a store
/// without `host.json` has never published, so no catalog is its own.
pub fn searcher(store_dir: &Path) -> Result<HostIdentity, RemoteError> {
    match identity(store_dir, None) {
        Err(RemoteError::Io { .. }) => Ok(HostIdentity {
            id: random_id()?,
            name: hostname(),
        }),
        r => r,
    }
}

fn random_id() -> Result<String, RemoteError> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| RemoteError::Invalid(format!("no randomness: {e}")))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// The machine's hostname (`host` if it has none).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname NUL-terminates
    // or truncates within it.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    match (rc, std::str::from_utf8(&buf[..end])) {
        (0, Ok(s)) if !s.is_empty() => s.to_string(),
        _ => "host".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_made_once_and_the_name_remembered() {
        let d = std::env::temp_dir().join(format!("recall-hostid-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        let a = identity(&d, None).unwrap();
        assert!(is_host_id(&a.id));
        let b = identity(&d, Some("ci-runner")).unwrap();
        assert_eq!(
            (b.id.as_str(), b.name.as_str()),
            (a.id.as_str(), "ci-runner")
        );
        assert_eq!(identity(&d, None).unwrap(), b);
        assert!(identity(&d, Some("bad\u{1b}name")).is_err());
        fs::remove_dir_all(&d).unwrap();
    }
}
