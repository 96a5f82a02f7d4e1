//! Deep Search (`recall grep`, `GET /api/sessions/deep-search`): an
//! exhaustive scan of the sessions' source files themselves — every line,
//! every record kind, `.zst` logs decoded — for what the message index
//! leaves out (long tool output, reasoning, records of other kinds).
//!
//! The pipeline: the request ([`DeepRequest`], parsed once at the edge)
//! selects sessions from the manifest with the session list's own filters;
//! [`scan`] runs ripgrep's searcher over each of their files; [`decode`]
//! turns a matching line into the record field that matched, and the
//! session's indexed records give it a locator and a role when it is one
//! of them. Results stream to a [`DeepSink`] session by session, with
//! progress, and stop at `max_results` or when the sink says so (a client
//! that went away).

mod ahead;
mod decode;
mod scan;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use recall_core::model::{Locator, Manifest, ManifestEntry, Role};
use recall_core::session::list::SessionListRequest;
use recall_core::{Catalog, QueryError};
use serde::Serialize;
use std::path::Path;

pub use decode::Kind;

/// The most results a deep search returns unless asked for fewer.
pub const DEFAULT_MAX_RESULTS: usize = 200;
/// The most it returns at all.
pub const MAX_RESULTS: usize = 10_000;

/// Why a deep search could not run.
#[derive(Debug, thiserror::Error)]
pub enum DeepError {
    /// The pattern is not a valid regular expression.
    #[error("invalid pattern: {0}")]
    Pattern(String),
    /// A filter is not valid.
    #[error("{}", .0.message)]
    Filter(QueryError),
    /// A parameter is not valid.
    #[error("{0}")]
    Param(String),
}

/// A parsed deep search.
pub struct DeepRequest {
    matcher: RegexMatcher,
    /// Which records' matches to keep.
    pub kind: KindFilter,
    /// The session filters (`source`, `cwd`, `since`, `until`, …).
    pub sessions: SessionListRequest,
    /// Only these session keys (from a message search, `--in-results`).
    pub only_keys: Option<Vec<String>>,
    /// Stop after this many matching lines.
    pub max_results: usize,
}

/// `--kind`: which records to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindFilter {
    /// Every line.
    All,
    /// Only lines of this kind.
    Only(Kind),
}

impl KindFilter {
    /// Parses `user`, `assistant`, `reasoning`, `tool` or `all`.
    pub fn parse(s: &str) -> Result<KindFilter, DeepError> {
        Ok(match s.trim() {
            "" | "all" => KindFilter::All,
            "user" => KindFilter::Only(Kind::User),
            "assistant" => KindFilter::Only(Kind::Assistant),
            "reasoning" => KindFilter::Only(Kind::Reasoning),
            "tool" => KindFilter::Only(Kind::Tool),
            _ => {
                return Err(DeepError::Param(
                    "kind must be user, assistant, reasoning, tool or all".into(),
                ))
            }
        })
    }

    fn keeps(self, k: Kind) -> bool {
        match self {
            KindFilter::All => true,
            KindFilter::Only(want) => want == k,
        }
    }
}

/// How to read the pattern.
#[derive(Clone, Copy, Debug, Default)]
pub struct PatternOptions {
    /// The pattern is a literal string, not a regex.
    pub fixed_strings: bool,
    /// Letters match either case.
    pub ignore_case: bool,
}

impl DeepRequest {
    /// Builds a request: the pattern, how to read it, and the session
    /// filters as raw pairs (the session list's names).
    pub fn new<'a>(
        pattern: &str,
        opts: PatternOptions,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<DeepRequest, DeepError> {
        if pattern.is_empty() {
            return Err(DeepError::Param("the pattern is empty".into()));
        }
        let matcher = RegexMatcherBuilder::new()
            .fixed_strings(opts.fixed_strings)
            .case_insensitive(opts.ignore_case)
            .build(pattern)
            .map_err(|e| DeepError::Pattern(e.to_string()))?;
        let sessions = SessionListRequest::from_pairs(pairs).map_err(DeepError::Filter)?;
        sessions.compile().map_err(DeepError::Filter)?;
        Ok(DeepRequest {
            matcher,
            kind: KindFilter::All,
            sessions,
            only_keys: None,
            max_results: DEFAULT_MAX_RESULTS,
        })
    }
}

/// One matching line.
#[derive(Clone, Debug, Serialize)]
pub struct DeepHit {
    /// The record kind (from the indexed record when the line is one,
    /// else from the field that matched).
    pub kind: Kind,
    /// The matched field's text around the match (at most
    /// [`decode::WINDOW_CHARS`] characters), or the line's when it is not
    /// JSON.
    pub text: String,
    /// Byte ranges of the match in `text`.
    pub highlights: Vec<[usize; 2]>,
    /// Where in the JSON record the match is (`message.content[0].text`);
    /// absent for a line that is not JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The indexed record this line is, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<Locator>,
    /// The file (withheld from remote clients).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line number in the (decoded) file.
    pub line_no: u64,
    /// Byte offset of the line in the (decoded) file.
    pub offset: u64,
}

/// One session's matches.
#[derive(Clone, Debug, Serialize)]
pub struct DeepSession {
    /// The session key.
    pub session_key: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its source id.
    pub source: &'static str,
    /// Its activity time (epoch ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_ms: Option<i64>,
    /// The matching lines, in file order.
    pub hits: Vec<DeepHit>,
}

/// Progress, after each file.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct DeepProgress {
    /// Files scanned.
    pub files_done: u64,
    /// Files to scan.
    pub files_total: u64,
    /// Bytes read (decoded).
    pub bytes: u64,
}

/// How a deep search ended.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeepSummary {
    /// The final progress.
    pub progress: DeepProgress,
    /// Sessions with a match.
    pub sessions: u64,
    /// Matching lines returned.
    pub hits: u64,
    /// It stopped at `max_results` with files left.
    pub truncated: bool,
    /// It was cancelled by its receiver.
    pub cancelled: bool,
    /// Files that could not be read: `path: reason` (withheld remotely).
    pub unreadable: Vec<String>,
}

/// Where results go. Each method returns false to stop the search.
pub trait DeepSink {
    /// A session with its matches.
    fn session(&mut self, s: DeepSession) -> bool;
    /// Progress after a file.
    fn progress(&mut self, p: DeepProgress) -> bool;
}

fn role_kind(r: Role) -> Kind {
    match r {
        Role::User => Kind::User,
        Role::Assistant => Kind::Assistant,
        Role::Tool => Kind::Tool,
    }
}

/// The indexed record a source line is, if any: a `NativeEvent` of the
/// session's main file at that line, or a `NativeMessageId` the line names.
fn indexed<'a>(
    records: &'a [recall_core::model::MessageRecord],
    main_file: bool,
    line_no: u64,
    ids: &[String],
) -> Option<&'a recall_core::model::MessageRecord> {
    records.iter().find(|r| match &r.locator {
        Locator::NativeEvent { line_no: n, .. } => main_file && *n == line_no,
        Locator::NativeMessageId { message_id } => ids.iter().any(|i| i == message_id),
        _ => false,
    })
}

/// Where a deep search may read: the agents' source folders of this
/// machine. A session path outside them (a manifest entry from elsewhere)
/// is never opened.
#[derive(Clone, Debug, Default)]
pub struct Roots(Vec<std::path::PathBuf>);

impl Roots {
    /// The folders (made absolute and canonical where they exist).
    pub fn new(dirs: impl IntoIterator<Item = std::path::PathBuf>) -> Roots {
        Roots(
            dirs.into_iter()
                .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
                .collect(),
        )
    }

    /// Whether `path` (canonicalized; a member path by its database) lies
    /// under one of the folders.
    fn holds(&self, path: &Path) -> bool {
        let file = crate::extract::member::split(path).map_or(path, |(db, _)| db);
        let Ok(real) = std::fs::canonicalize(file) else {
            return false;
        };
        self.0.iter().any(|r| real.starts_with(r))
    }
}

/// Runs a deep search over `manifest`'s sessions, reading only files under
/// `roots`; `catalog` supplies their indexed records (for locators and
/// roles), `with_paths` says whether hits may name files (false for remote
/// clients).
pub fn run(
    req: &DeepRequest,
    manifest: &Manifest,
    catalog: &dyn Catalog,
    roots: &Roots,
    with_paths: bool,
    sink: &mut dyn DeepSink,
) -> DeepSummary {
    let mut summary = DeepSummary::default();
    let Ok(filter) = req.sessions.compile() else {
        return summary;
    };
    let mut chosen: Vec<(&String, &ManifestEntry)> = manifest
        .sessions
        .iter()
        .filter(|(k, e)| filter.matches(k, e, recall_core::session::list::Ignore::Nothing))
        .filter(|(k, _)| {
            req.only_keys
                .as_ref()
                .is_none_or(|keys| keys.iter().any(|x| x == *k))
        })
        .collect();
    chosen.sort_by(|a, b| recall_core::session::list::order(*a, *b));
    summary.progress.files_total = chosen.iter().map(|(_, e)| e.meta.paths.len() as u64).sum();
    let paths: Vec<&str> = chosen
        .iter()
        .flat_map(|(_, e)| e.meta.paths.iter().map(String::as_str))
        .collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4));
    let never = std::sync::atomic::AtomicBool::new(false);
    let mut left = req.max_results.clamp(1, MAX_RESULTS);
    ahead::Ahead::run(&paths, roots, &req.matcher, workers, |ahead| {
        let mut job = 0;
        'sessions: for (key, entry) in chosen {
            let mut hits = Vec::new();
            let mut records: Option<Vec<recall_core::model::MessageRecord>> = None;
            for (i, path) in entry.meta.paths.iter().enumerate() {
                if left == 0 {
                    summary.truncated = true;
                    break;
                }
                let verdict = ahead.take(job);
                job += 1;
                let mut on_line = |line_no: u64, offset: u64, raw: &[u8]| {
                    let d = decode::line(raw, &req.matcher);
                    let recs = records.get_or_insert_with(|| {
                        catalog
                            .load(key, entry, true)
                            .map(|l| l.shard.shard.records.clone())
                            .unwrap_or_default()
                    });
                    let rec = indexed(recs, i == 0, line_no, &d.ids);
                    let kind = rec.map_or(d.kind, |r| role_kind(r.role));
                    if req.kind.keeps(kind) {
                        hits.push(DeepHit {
                            kind,
                            text: d.text,
                            highlights: d.highlights,
                            field: d.field,
                            locator: rec.map(|r| r.locator.clone()),
                            file: with_paths.then(|| path.clone()),
                            line_no,
                            offset,
                        });
                        left -= 1;
                    }
                    left > 0
                };
                // Only a file that holds a match is read again, here, in order.
                let scanned = if !verdict.matched {
                    verdict.scanned
                } else if roots.holds(Path::new(path)) {
                    scan::file(Path::new(path), &req.matcher, &never, true, &mut on_line)
                } else {
                    ahead::outside()
                };
                summary.progress.files_done += 1;
                summary.progress.bytes += scanned.bytes;
                if let Some(e) = scanned.error {
                    summary.unreadable.push(if with_paths {
                        format!("{path}: {e}")
                    } else {
                        format!("{key}: {e}")
                    });
                }
                if !sink.progress(summary.progress) {
                    summary.cancelled = true;
                    break 'sessions;
                }
            }
            if !hits.is_empty() {
                summary.sessions += 1;
                summary.hits += hits.len() as u64;
                let s = DeepSession {
                    session_key: key.clone(),
                    title: entry.meta.title.clone(),
                    source: entry.meta.source.as_str(),
                    updated_ms: recall_core::session::list::activity_ms(entry),
                    hits,
                };
                if !sink.session(s) {
                    summary.cancelled = true;
                    break;
                }
            }
            if left == 0 {
                break;
            }
        }
    });
    summary.truncated |= left == 0 && summary.progress.files_done < summary.progress.files_total;
    summary
}
