//! Short continuation for `recall search`: instead of a 180-character
//! cursor the human output ends with `more: recall search … --page 2`.
//! `--page N` finds its cursor in a small file in the store,
//! `cli-pages.json`, keyed by the normalized request (the §4 fields without
//! the cursor and the clock, plus the team-search flags, hashed): printing
//! page N with a next cursor records it as page N+1 of that key. The file
//! keeps the [`KEEP`] most recent searches; it is expendable (a missing or
//! damaged file only means `--page` asks for the search to be run again, and
//! a cursor of a cleared store is refused as any stale cursor is).
//! `--cursor` keeps working for scripts; `--json` prints the full cursor.

use recall_core::query::Request;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// The file's name in the store directory.
pub const PAGES: &str = "cli-pages.json";
/// Searches remembered.
pub const KEEP: usize = 32;

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    /// Most recent first.
    searches: Vec<Search>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Search {
    key: String,
    /// Cursor of each page number (from 2).
    cursors: BTreeMap<u32, String>,
}

/// The key of a request: its §4 fields without the cursor and the clock
/// (a relative `since` is part of it as text), and `extra` (flags outside
/// the request that change the answer, such as `--remote`).
pub fn key(request: &Request, extra: &str) -> String {
    let mut r = request.clone();
    r.cursor = None;
    r.now_ms = None;
    r.utc_offset_min = None;
    let json = serde_json::to_string(&r).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(json.as_bytes());
    h.update([0]);
    h.update(extra.as_bytes());
    h.finalize()[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn load(dir: &Path) -> File {
    std::fs::read(dir.join(PAGES))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// The cursor of page `page` of the search `key`, if it was printed.
pub fn lookup(dir: &Path, key: &str, page: u32) -> Option<String> {
    load(dir)
        .searches
        .into_iter()
        .find(|s| s.key == key)
        .and_then(|s| s.cursors.get(&page).cloned())
}

/// Records `cursor` as page `page` of the search `key` (most recent first;
/// the oldest searches beyond [`KEEP`] are forgotten).
pub fn remember(dir: &Path, key: &str, page: u32, cursor: &str) -> std::io::Result<()> {
    let mut f = load(dir);
    let mut s = match f.searches.iter().position(|s| s.key == key) {
        Some(i) => f.searches.remove(i),
        None => Search {
            key: key.to_string(),
            cursors: BTreeMap::new(),
        },
    };
    s.cursors.insert(page, cursor.to_string());
    f.searches.insert(0, s);
    f.searches.truncate(KEEP);
    let bytes = serde_json::to_vec(&f).map_err(std::io::Error::other)?;
    crate::store::write_replace(dir, ".cli-pages.json.tmp", &dir.join(PAGES), &bytes)
}

/// The command line that shows page `page`: this process's arguments
/// without `--cursor`/`--page`, then `--page N`, quoted for a POSIX shell.
pub fn command(args: impl IntoIterator<Item = String>, page: u32) -> String {
    let mut out = vec!["recall".to_string()];
    let mut it = args.into_iter().skip(1);
    while let Some(a) = it.next() {
        if a == "--cursor" || a == "--page" {
            it.next();
            continue;
        }
        if a.starts_with("--cursor=") || a.starts_with("--page=") {
            continue;
        }
        out.push(quote(&a));
    }
    out.push(format!("--page {page}"));
    out.join(" ")
}

/// `s` as one POSIX shell word.
fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=,@%+".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_ignores_the_cursor_and_the_clock() {
        let r = Request {
            q: Some("tide".into()),
            since: Some("7d".into()),
            ..Request::default()
        };
        let mut other = r.clone();
        other.cursor = Some("abc".into());
        other.now_ms = Some("5".into());
        assert_eq!(key(&r, ""), key(&other, ""));
        other.q = Some("moon".into());
        assert_ne!(key(&r, ""), key(&other, ""));
        assert_ne!(key(&r, ""), key(&r, "s3://b"));
    }

    #[test]
    fn pages_are_remembered_per_search() {
        let dir = std::env::temp_dir().join(format!("recall-pages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(lookup(&dir, "k", 2), None);
        remember(&dir, "k", 2, "C2").unwrap();
        remember(&dir, "k", 3, "C3").unwrap();
        remember(&dir, "j", 2, "J2").unwrap();
        assert_eq!(lookup(&dir, "k", 2).as_deref(), Some("C2"));
        assert_eq!(lookup(&dir, "k", 3).as_deref(), Some("C3"));
        assert_eq!(lookup(&dir, "j", 2).as_deref(), Some("J2"));
        for i in 0..KEEP {
            remember(&dir, &format!("x{i}"), 2, "X").unwrap();
        }
        assert_eq!(lookup(&dir, "k", 2), None, "the oldest are forgotten");
        std::fs::write(dir.join(PAGES), b"{damaged").unwrap();
        assert_eq!(lookup(&dir, "x1", 2), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_hint_repeats_the_command_with_the_next_page() {
        let args = [
            "/usr/bin/recall",
            "search",
            "it's",
            "--cursor",
            "C",
            "--limit",
            "5",
            "--page=2",
        ];
        assert_eq!(
            command(args.map(String::from), 3),
            "recall search 'it'\\''s' --limit 5 --page 3"
        );
    }
}
