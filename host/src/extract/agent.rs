//! The [`Agent`] trait: everything the rest of recall knows about one
//! transcript source, and its type-erased registry row ([`Entry`]).
//!
//! An agent has a registry id, the source it yields, its root (an
//! environment variable, else a default under the home), the part of the
//! root that discovery reads (the roots watch's scope), discovery, the
//! extraction from scratch and from a checkpoint (with its own `Resume`
//! state type) and its resume command. The registry table itself is
//! `extract::AGENTS`; adding a source means one module and one row there.
//! Source ids and their aliases are `recall_core::model::Source`'s (the
//! wasm core parses them too).

use super::feed::{Call, Fed, Outcome};
use super::{ExtractError, SessionSource};
use recall_core::model::{SessionMeta, Source};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One transcript source (see the module doc).
pub(crate) trait Agent {
    /// Registry id: the key of its root in [`super::Roots`] and the tag of
    /// its checkpoints (`claude`, `codex`, `kimi_code`, `kimi_legacy`, `pi`,
    /// `intendant`, `dsh`).
    const ID: &'static str;
    /// The source its sessions belong to.
    const SOURCE: Source;
    /// The environment variable that overrides its home.
    const ENV: &'static str;
    /// The top-level entries of the root that discovery and extraction
    /// read (`None` = everything below it): what the roots watch sees.
    const SCOPE: Option<&'static [&'static str]> = None;
    /// The extraction state a checkpoint carries.
    type Resume: Clone + Serialize + DeserializeOwned;

    /// Whether the root may be one regular file (a database named by the
    /// agent's variable) rather than a directory.
    const FILE_ROOT: bool = false;

    /// The root: `env` (the value of [`Agent::ENV`]) when set, else the
    /// default under `home`.
    fn root(home: &Path, env: Option<PathBuf>) -> PathBuf;

    /// The root from any variables of the environment (`var` gives a set,
    /// non-empty one): [`Agent::root`] of [`Agent::ENV`] unless the agent
    /// reads more than one (OpenCode: `OPENCODE_DB`, `XDG_DATA_HOME`).
    fn root_with(home: &Path, var: &dyn Fn(&str) -> Option<PathBuf>) -> PathBuf {
        Self::root(home, var(Self::ENV))
    }

    /// Every session unit under `root`.
    fn discover(root: &Path) -> Vec<SessionSource>;

    /// Whether this agent reads `src` (two agents may share a source).
    fn reads(src: &SessionSource) -> bool {
        src.source == Self::SOURCE
    }

    /// Extracts from byte 0.
    fn scratch(call: &mut Call) -> Result<Outcome<Self::Resume>, ExtractError>;

    /// Continues from a checkpoint; `Ok(None)` = cannot resume exactly.
    fn resume(
        call: &mut Call,
        files: &[Fed],
        state: &Self::Resume,
    ) -> Result<Option<Outcome<Self::Resume>>, ExtractError>;

    /// The command that resumes `meta`'s session, every interpolated value
    /// shell-quoted (`subagent` = all its records are subagent records);
    /// `None` = the agent has none.
    fn resume_command(meta: &SessionMeta, subagent: bool) -> Option<String>;
}

/// An extraction's outcome with its state serialized.
pub(crate) type Erased = Outcome<Value>;

/// [`Agent::resume`] from a serialized state.
pub(crate) type ResumeFn = fn(&mut Call, &[Fed], &Value) -> Result<Option<Erased>, ExtractError>;

/// [`Agent::root_with`].
pub(crate) type RootFn = fn(&Path, &dyn Fn(&str) -> Option<PathBuf>) -> PathBuf;

/// One row of the registry: an [`Agent`] as plain function pointers.
pub(crate) struct Entry {
    /// [`Agent::ID`].
    pub id: &'static str,
    /// [`Agent::SOURCE`].
    pub source: Source,
    /// [`Agent::ENV`].
    pub env: &'static str,
    /// [`Agent::SCOPE`].
    pub scope: Option<&'static [&'static str]>,
    /// [`Agent::FILE_ROOT`].
    pub file_root: bool,
    /// [`Agent::root_with`].
    pub root: RootFn,
    /// [`Agent::discover`].
    pub discover: fn(&Path) -> Vec<SessionSource>,
    /// [`Agent::reads`].
    pub reads: fn(&SessionSource) -> bool,
    /// [`Agent::scratch`], state serialized.
    pub scratch: fn(&mut Call) -> Result<Erased, ExtractError>,
    /// [`Agent::resume`] from a serialized state (`Ok(None)` also when the
    /// state is not this agent's shape).
    pub resume: ResumeFn,
    /// [`Agent::resume_command`].
    pub resume_command: fn(&SessionMeta, bool) -> Option<String>,
}

/// The registry row of `A`.
pub(crate) const fn entry<A: Agent>() -> Entry {
    Entry {
        id: A::ID,
        source: A::SOURCE,
        env: A::ENV,
        scope: A::SCOPE,
        file_root: A::FILE_ROOT,
        root: A::root_with,
        discover: A::discover,
        reads: A::reads,
        scratch: scratch::<A>,
        resume: resume::<A>,
        resume_command: guarded_resume::<A>,
    }
}

/// Whether `id` is in the syntax every agent's ids share (UUIDs, ULIDs,
/// Kimi's folder names, Intendant's ids): it begins with a letter or digit
/// and holds no whitespace or control character. An id that begins with
/// `-` would be read as an option by the agent (`codex resume -c…`,
/// `claude --resume --dangerously-skip-permissions`).
pub fn is_resumable_id(id: &str) -> bool {
    id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !id.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// [`Agent::resume_command`], refused (`None`) for a session whose id is
/// not [`is_resumable_id`] or whose resume path is not absolute (Pi resumes
/// by file path): a resume command is run by a shell, so nothing in it may
/// come from a transcript in a form the agent reads as an option.
fn guarded_resume<A: Agent>(meta: &SessionMeta, subagent: bool) -> Option<String> {
    if !is_resumable_id(&meta.session_id) {
        return None;
    }
    let cmd = A::resume_command(meta, subagent)?;
    let absolute = meta
        .paths
        .iter()
        .filter(|p| cmd.ends_with(&super::common::shell_quote(p)))
        .all(|p| p.starts_with('/'));
    absolute.then_some(cmd)
}

fn erase<S: Serialize>(out: Outcome<S>) -> Erased {
    Outcome {
        extracted: out.extracted,
        files: out.files,
        // A state that cannot be serialized only costs the next resume.
        state: out.state.and_then(|s| serde_json::to_value(s).ok()),
    }
}

fn scratch<A: Agent>(call: &mut Call) -> Result<Erased, ExtractError> {
    A::scratch(call).map(erase)
}

fn resume<A: Agent>(
    call: &mut Call,
    files: &[Fed],
    state: &Value,
) -> Result<Option<Erased>, ExtractError> {
    let Ok(state) = <A::Resume as Deserialize>::deserialize(state) else {
        return Ok(None);
    };
    Ok(A::resume(call, files, &state)?.map(erase))
}
