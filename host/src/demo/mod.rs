//! The bundled demo home of `recall demo`: a few coherent sessions per agent
//! about one fictional project (`tidewatch`, a tide-prediction CLI), written
//! in each agent's real on-disk format (see FORMATS.md) so the ordinary
//! discovery and extractors index it. Timestamps are relative to `now` so
//! the sessions stay inside the default retention window.

mod claude;
mod codex;
mod dsh;
mod intendant;
mod kimi;
mod next;
mod pi;

use serde_json::Value;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The project's working directory inside the transcripts.
pub const CWD: &str = "/home/demo/code/tidewatch";

/// What [`write`] produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Files written.
    pub files: usize,
    /// Sessions (children included).
    pub sessions: usize,
}

/// Writes the demo home under `dir` (replacing an earlier demo's agent
/// folders, never touching anything else), with timestamps ending shortly
/// before the wall clock.
pub fn write(dir: &Path) -> io::Result<Written> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    write_at(dir, now)
}

/// [`write`] with a fixed clock (reproducible output).
pub fn write_at(dir: &Path, now_ms: i64) -> io::Result<Written> {
    let mut home = Home {
        dir: dir.to_path_buf(),
        files: 0,
        sessions: 0,
    };
    for agent in [
        ".claude",
        ".codex",
        ".kimi-code",
        ".pi",
        ".intendant",
        ".dsh",
        ".gemini",
        ".copilot",
        ".qwen",
        ".local/share/opencode",
    ] {
        let p = dir.join(agent);
        if p.is_dir() {
            fs::remove_dir_all(&p)?;
        }
    }
    // Day offsets keep every agent's sessions apart in time; the story runs
    // over the last nine days.
    let day = 86_400_000;
    let start = now_ms - now_ms % 60_000 - 9 * day;
    claude::write(&mut home, start)?;
    next::gemini(&mut home, start + day)?;
    codex::write(&mut home, start + 2 * day)?;
    next::copilot(&mut home, start + 3 * day)?;
    next::opencode(&mut home, start + 3 * day + day / 2)?;
    kimi::write(&mut home, start + 4 * day)?;
    pi::write(&mut home, start + 5 * day)?;
    next::qwen(&mut home, start + 6 * day)?;
    intendant::write(&mut home, start + 7 * day)?;
    dsh::write(&mut home, start + 8 * day)?;
    Ok(Written {
        files: home.files,
        sessions: home.sessions,
    })
}

/// The home being written.
pub(crate) struct Home {
    dir: PathBuf,
    files: usize,
    sessions: usize,
}

impl Home {
    /// Writes `bytes` at `rel` (creating folders).
    fn file(&mut self, rel: &str, bytes: &[u8]) -> io::Result<PathBuf> {
        let p = self.dir.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&p, bytes)?;
        self.files += 1;
        Ok(p)
    }

    /// Writes JSON lines at `rel`.
    fn jsonl(&mut self, rel: &str, lines: &[Value]) -> io::Result<PathBuf> {
        let mut out = String::new();
        for l in lines {
            type_first(l, &mut out);
            out.push('\n');
        }
        self.file(rel, out.as_bytes())
    }

    fn session(&mut self) {
        self.sessions += 1;
    }
}

/// Serializes `v` with every object's `type` key first, as the agents write
/// their lines (readers may sniff the first `"type"` of a line).
fn type_first(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            out.push('{');
            let mut first = true;
            let keys = m
                .keys()
                .filter(|k| *k == "type")
                .chain(m.keys().filter(|k| *k != "type"));
            for k in keys {
                if !first {
                    out.push(',');
                }
                first = false;
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                type_first(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                type_first(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A deterministic UUID (v4 layout) derived from a label.
pub(crate) fn uuid(label: &str) -> String {
    let h = format!(
        "{}{}",
        recall_core::naming::hash16(label.as_bytes()),
        recall_core::naming::hash16(format!("{label}#2").as_bytes())
    );
    format!(
        "{}-{}-4{}-8{}-{}",
        &h[0..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

/// A deterministic hex id of `n` digits.
pub(crate) fn hex(label: &str, n: usize) -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < n {
        out.push_str(&recall_core::naming::hash16(
            format!("{label}/{i}").as_bytes(),
        ));
        i += 1;
    }
    out.truncate(n);
    out
}

/// RFC 3339 UTC with milliseconds, as the agents write it.
pub(crate) fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// `HH:MM:SS.mmm` of a UTC time (Intendant's `ts`).
pub(crate) fn hms(ms: i64) -> String {
    iso(ms)[11..23].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_formats_utc() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_793_000_000_123), "2026-10-26T07:33:20.123Z");
        assert_eq!(hms(1_793_000_000_123), "07:33:20.123");
    }

    #[test]
    fn type_comes_first() {
        let mut out = String::new();
        type_first(
            &serde_json::json!({"a": [{"text": "x", "type": "text"}], "type": "message"}),
            &mut out,
        );
        assert_eq!(
            out,
            r#"{"type":"message","a":[{"type":"text","text":"x"}]}"#
        );
    }

    #[test]
    fn every_agent_has_a_demo_session() {
        use crate::extract::{discover, extract, Roots};
        let dir = std::env::temp_dir().join(format!("recall-demo-all-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let w = write_at(&dir, 1_793_000_000_000).unwrap();
        let mut found = std::collections::BTreeSet::new();
        let mut sessions = 0;
        for u in discover(&Roots::resolve(&dir, |_| None)) {
            if let Some(x) = extract(&u).unwrap() {
                assert_eq!(x.meta.cwd.as_deref(), Some(CWD), "{:?}", x.meta);
                assert!(
                    x.meta.title.is_some() && x.meta.messages >= 2,
                    "{:?}",
                    x.meta
                );
                found.insert(x.meta.source.as_str());
                sessions += 1;
            }
        }
        let all: std::collections::BTreeSet<&str> = recall_core::model::Source::ALL
            .iter()
            .map(|s| s.as_str())
            .collect();
        assert_eq!(found, all);
        assert_eq!(sessions, w.sessions);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn ids_are_stable_and_shaped() {
        let u = uuid("x");
        assert_eq!(u, uuid("x"));
        assert_eq!(u.len(), 36);
        assert_ne!(u, uuid("y"));
        assert_eq!(hex("x", 40).len(), 40);
    }
}
