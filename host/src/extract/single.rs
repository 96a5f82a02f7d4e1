//! The feeding loop shared by the sources whose session is one line-fed
//! JSONL file with a per-file streaming state (Gemini CLI's replay log,
//! Copilot CLI's `events.jsonl`, Qwen Code's chat log), and the id-syntax
//! checks their resume commands are built behind.
//!
//! A [`LineState`] sees every complete line once, in order; a checkpoint
//! clones it (after [`LineState::seal`]) so the next sweep feeds only the
//! bytes past the checkpoint's offset.

use super::draft::Draft;
use super::feed::{Call, Fed, Outcome};
use super::json::blank;
use super::{ExtractError, Extracted};
use recall_core::model::Mark;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// The streaming state of one single-file source.
pub(crate) trait LineState: Clone + Default + Serialize + DeserializeOwned {
    /// Handles one complete line (1-based `no`); false when it was not
    /// valid JSON (counted as a bad line unless blank).
    fn line(&mut self, bytes: &[u8], no: u64) -> bool;
    /// Cuts what can no longer change before the state is cloned.
    fn seal(&mut self) {}
    /// The session of the lines fed so far, for the unit `call`.
    fn finish(self, call: &Call, path: &Path) -> Option<Extracted>;
}

/// Extracts the unit's first file from byte 0.
pub(crate) fn scratch<S: LineState>(call: &mut Call) -> Result<Outcome<S>, ExtractError> {
    let Some(path) = call.src.files.first().cloned() else {
        return Ok(Outcome::none());
    };
    run(call, S::default(), &Fed::start(&path))?.ok_or_else(|| ExtractError::Io {
        path,
        source: std::io::Error::other("cannot read"),
    })
}

/// Continues from a checkpoint of the same file; `Ok(None)` = cannot.
pub(crate) fn resume<S: LineState>(
    call: &mut Call,
    files: &[Fed],
    state: &S,
) -> Result<Option<Outcome<S>>, ExtractError> {
    match (files, call.src.files.first()) {
        ([fed], Some(path)) if fed.path == *path => run(call, state.clone(), fed),
        _ => Ok(None),
    }
}

fn run<S: LineState>(
    call: &mut Call,
    mut s: S,
    from: &Fed,
) -> Result<Option<Outcome<S>>, ExtractError> {
    let path = from.path.clone();
    let mut bad = 0u64;
    let fed = call
        .feed(
            from,
            &mut |line| {
                if !s.line(line.bytes, line.no) && !blank(&String::from_utf8_lossy(line.bytes)) {
                    bad += 1;
                }
            },
            &mut |_| {},
        )
        .map_err(|source| ExtractError::Io {
            path: path.clone(),
            source,
        })?;
    let Some(fed) = fed else { return Ok(None) };
    call.diag.bad_lines += bad;
    let state = call.want.then(|| {
        s.seal();
        s.clone()
    });
    Ok(Some(Outcome {
        extracted: s.finish(call, &path),
        files: vec![fed],
        state,
    }))
}

/// A UUID in its canonical 8-4-4-4-12 hex form: the session ids of Gemini
/// CLI, Copilot CLI and Qwen Code (never starts with `-`, never needs
/// quoting).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `program <id>` when `id` is a UUID ([`is_uuid`]), else `None`: an id in
/// any other syntax could be read as an option (issue 24 item 5).
pub fn uuid_resume(program: &str, id: &str) -> Option<String> {
    is_uuid(id).then(|| super::common::resume_command(program, id))
}

/// `v[key]` as a non-empty string.
pub(crate) fn str_of<'v>(v: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    v.get(key)?.as_str().filter(|s| !s.is_empty())
}

/// `v[key]` as an RFC 3339 or epoch timestamp, in ms.
pub(crate) fn ts_of(v: &serde_json::Value, key: &str) -> Option<i64> {
    v.get(key).and_then(super::common::json_ts_ms)
}

/// The text of a Gemini-API content value: a string, or the `text` of its
/// parts (`{text}` objects, a bare `{text}` object, string items) joined
/// with no separator, skipping `thought: true` parts (reasoning).
pub(crate) fn parts_text(v: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    fn part(out: &mut String, p: &Value) {
        match p {
            Value::String(s) => out.push_str(s),
            Value::Object(o) => {
                let thought = o.get("thought").and_then(Value::as_bool) == Some(true);
                if let (false, Some(t)) = (thought, o.get("text").and_then(Value::as_str)) {
                    out.push_str(t);
                }
            }
            _ => {}
        }
    }
    let mut out = String::new();
    match v {
        Some(Value::Array(a)) => a.iter().for_each(|p| part(&mut out, p)),
        Some(p) => part(&mut out, p),
        None => {}
    }
    out
}

/// One `record_ids` mark (reason `branch`) over the drafts whose
/// `item_id` is off the parent walk from `leaf` through `tree` (`id →
/// parent id`); nothing without a leaf or when the walk reaches an id the
/// tree lacks (a cycle ends the walk).
pub(crate) fn off_branch(
    leaf: Option<&str>,
    tree: &HashMap<String, Option<String>>,
    drafts: &[Draft],
) -> Vec<Mark> {
    let Some(leaf) = leaf else {
        return Vec::new();
    };
    let mut path: HashSet<&str> = HashSet::new();
    let mut cur = Some(leaf);
    while let Some(id) = cur {
        if !path.insert(id) {
            break; // a cycle: the path so far is all there is
        }
        match tree.get(id) {
            Some(parent) => cur = parent.as_deref(),
            None => return Vec::new(),
        }
    }
    let mut ids: Vec<String> = Vec::new();
    for d in drafts {
        if let Some(id) = &d.item_id {
            if !path.contains(id.as_str()) && ids.last() != Some(id) {
                ids.push(id.clone());
            }
        }
    }
    if ids.is_empty() {
        return Vec::new();
    }
    vec![Mark::RecordIds {
        at: drafts.len() as u64,
        ids,
        reason: "branch".into(),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_canonical_uuids_get_a_resume_command() {
        let id = "27d495d1-de2d-449d-af11-d42d4d6ef80d";
        assert_eq!(
            uuid_resume("qwen --resume", id).as_deref(),
            Some("qwen --resume 27d495d1-de2d-449d-af11-d42d4d6ef80d")
        );
        for bad in [
            "--yolo",
            "-27d495d1-de2d-449d-af11-d42d4d6ef80",
            "27d495d1-de2d-449d-af11-d42d4d6ef80d;rm",
            "27d495d1de2d449daf11d42d4d6ef80d",
            "",
            "$(touch x)0000000000000000000000000",
        ] {
            assert_eq!(uuid_resume("qwen --resume", bad), None, "{bad}");
        }
    }
}
