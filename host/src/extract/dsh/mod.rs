//! Extractor for DeepSeek Harness sessions (DESIGN.md §5 `dsh`,
//! FORMATS-dsh.md): `<root>/<project>/<session>/session[.vN].jsonl[.zstd]`.
//!
//! A session directory may hold several generations; only the highest is
//! read (lower ones are frozen pre-migration copies of its prefix), the
//! `.zstd` encoding of a generation before its plain twin. Neither the
//! project nor the session directory name is decoded: identity and cwd come
//! from the header line. `.zstd` files are read frame by frame
//! ([`frames`]); plain files line by line. What the events yield is
//! [`events`]'s.

pub mod events;
pub mod frames;

use super::agent::Agent;
use super::feed::{Call, Fed, Outcome};
use super::{ExtractError, SessionSource};
use recall_core::model::{SessionMeta, Source};
use std::fs;
use std::path::{Path, PathBuf};

/// A DSH file's state for resuming ([`super::resume`]).
pub type Resume = events::State;

/// DeepSeek Harness in the registry.
pub struct Dsh;

impl Agent for Dsh {
    const ID: &'static str = "dsh";
    const SOURCE: Source = Source::Dsh;
    const ENV: &'static str = "DSH_HOME";
    type Resume = events::State;

    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf {
        env.unwrap_or_else(|| home.join(".dsh")).join("sessions")
    }

    fn discover(root: &Path) -> Vec<SessionSource> {
        discover(root)
    }

    fn scratch(call: &mut Call) -> Result<Outcome<events::State>, ExtractError> {
        scratch(call)
    }

    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &events::State,
    ) -> Result<Option<Outcome<events::State>>, ExtractError> {
        resume(call, files, state)
    }

    /// DSH 0.1.x ships no CLI flag that resumes a session (FORMATS-dsh.md §9).
    fn resume_command(_meta: &SessionMeta, _subagent: bool) -> Option<String> {
        None
    }
}

/// The generation number of a canonical log file name and whether it is
/// zstd-framed: `session.jsonl[.zstd]` = 0, `session.vN.jsonl[.zstd]` = N
/// (N ≥ 1, no leading zero). Anything else (`*.tmp`, other artifacts) is
/// not a log.
pub fn generation(name: &str) -> Option<(u64, bool)> {
    let (rest, zstd) = match name.strip_suffix(".zstd") {
        Some(r) => (r, true),
        None => (name, false),
    };
    let rest = rest.strip_prefix("session")?.strip_suffix(".jsonl")?;
    if rest.is_empty() {
        return Some((0, zstd));
    }
    let n = rest.strip_prefix(".v")?;
    let canonical = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0');
    canonical.then(|| n.parse().ok().map(|n| (n, zstd)))?
}

/// Whether `path` is a zstd-framed DSH log.
pub fn is_framed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zstd")
}

/// The file of a session directory that is read: the highest generation,
/// `.zstd` before plain.
pub fn current_generation(dir: &Path) -> Option<PathBuf> {
    let rd = fs::read_dir(dir).ok()?;
    rd.filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let g = generation(&name)?;
            e.file_type().ok()?.is_file().then(|| (g, e.path()))
        })
        .max_by_key(|(g, _)| *g)
        .map(|(_, p)| p)
}

/// Finds every session directory `<root>/<project>/<session>/` with a log.
pub fn discover(root: &Path) -> Vec<SessionSource> {
    let mut out = Vec::new();
    for project in sorted_dirs(root) {
        for dir in sorted_dirs(&project) {
            if let Some(file) = current_generation(&dir) {
                out.push(SessionSource {
                    source: Source::Dsh,
                    unit: dir.to_string_lossy().into_owned(),
                    files: vec![file],
                    context: serde_json::Value::Null,
                });
            }
        }
    }
    out
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// Extracts from byte 0.
pub(crate) fn scratch(call: &mut Call) -> Result<Outcome<events::State>, ExtractError> {
    let Some(path) = call.src.files.first() else {
        return Ok(Outcome::none());
    };
    let from = Fed::start(path);
    run(call, events::State::default(), &from)?.ok_or_else(|| ExtractError::Io {
        path: path.clone(),
        source: std::io::Error::other("cannot read"),
    })
}

/// Continues from a checkpoint; `Ok(None)` = cannot resume exactly.
pub(crate) fn resume(
    call: &mut Call,
    files: &[Fed],
    state: &events::State,
) -> Result<Option<Outcome<events::State>>, ExtractError> {
    match (files, call.src.files.first()) {
        ([fed], Some(path)) if fed.path == *path => run(call, state.clone(), fed),
        _ => Ok(None),
    }
}

fn run(
    call: &mut Call,
    mut s: events::State,
    from: &Fed,
) -> Result<Option<Outcome<events::State>>, ExtractError> {
    let path = from.path.clone();
    let io = |source| ExtractError::Io {
        path: path.clone(),
        source,
    };
    let mut bad = 0u64;
    let mut on_line = |line: super::common::Line<'_>| {
        if !s.line(line.bytes, line.no) && !super::json::blank(&String::from_utf8_lossy(line.bytes))
        {
            bad += 1;
        }
    };
    let fed = if is_framed(&path) {
        let end = call.end_of(&path);
        if from.offset > 0 {
            let len = fs::metadata(&path).map_err(io)?.len();
            if len < from.offset || end.is_some_and(|e| e < from.offset) {
                return Ok(None);
            }
        }
        let f = frames::feed_frames(
            &path,
            from.offset,
            from.lines,
            end,
            &mut call.diag,
            &mut on_line,
        )
        .map_err(io)?;
        Fed {
            path: path.clone(),
            offset: f.offset,
            lines: f.lines,
        }
    } else {
        match call.feed(from, &mut on_line, &mut |_| {}).map_err(io)? {
            Some(fed) => fed,
            None => return Ok(None),
        }
    };
    call.diag.bad_lines += bad;
    let state = call.want.then(|| {
        s.seal();
        s.clone()
    });
    Ok(Some(Outcome {
        extracted: s.finish(&path),
        files: vec![fed],
        state,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_names() {
        assert_eq!(generation("session.jsonl"), Some((0, false)));
        assert_eq!(generation("session.jsonl.zstd"), Some((0, true)));
        assert_eq!(generation("session.v4.jsonl.zstd"), Some((4, true)));
        assert_eq!(generation("session.v12.jsonl"), Some((12, false)));
        for bad in [
            "session.v0.jsonl",
            "session.v04.jsonl",
            "session.v.jsonl",
            "session.jsonl.zstd.0123456789ab.tmp",
            "session.V4.jsonl",
            "other.jsonl",
        ] {
            assert_eq!(generation(bad), None, "{bad}");
        }
        assert!(generation("session.v2.jsonl.zstd") > generation("session.v2.jsonl"));
    }
}
