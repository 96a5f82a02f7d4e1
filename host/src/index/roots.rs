//! Discovery under a deadline (issue #12 item 2): each configured root is
//! listed and walked on a thread of its own, and a root that does not
//! answer within [`IndexOptions::root_deadline`] (a hung network mount, a
//! directory whose `readdir` or `stat` never returns) is a degraded root
//! with a reason. The other roots are indexed; the stalled root's sessions
//! are neither found gone nor forgotten (their sources were not looked at),
//! and its thread is left behind until the directory answers.

use super::plan::Plan;
use super::progress::{DegradedRoot, RootProblem};
use super::{IndexError, IndexOptions};
use crate::extract::{self, Roots, SessionSource};
use recall_core::model::{Manifest, Source};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Default [`IndexOptions::root_deadline`].
pub const ROOT_DEADLINE: Duration = Duration::from_secs(60);

/// A test's fault injected on a root's discovery thread before the root is
/// read ([`IndexOptions::root_fault`], e.g. to hang like a dead mount).
#[derive(Clone)]
pub struct RootHook(Arc<dyn Fn(&Path) + Send + Sync>);

impl RootHook {
    /// A hook calling `f` with the root's (or file's) path.
    pub fn new(f: impl Fn(&Path) + Send + Sync + 'static) -> RootHook {
        RootHook(Arc::new(f))
    }

    pub(crate) fn call(&self, path: &Path) {
        (self.0)(path)
    }
}

impl std::fmt::Debug for RootHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RootHook")
    }
}

/// What a bounded discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The units of every root that answered.
    pub units: Vec<SessionSource>,
    /// Roots that exist but cannot be listed, or did not answer in time.
    pub degraded: Vec<DegradedRoot>,
    /// Roots that did not answer in time: what is under them is unknown.
    pub stalled: Vec<PathBuf>,
    /// A root's index files (Codex's and Kimi's `session_index.jsonl`,
    /// read at discovery for titles) that are not regular files: ignored,
    /// and named (`path: reason`).
    pub skipped_files: Vec<String>,
}

/// Files at the top of a root that discovery reads as context.
const ROOT_INDEX_FILES: &[&str] = &["session_index.jsonl"];

/// The root's index files that exist but are not regular files (a `stat`
/// never blocks on a FIFO or a device; an `open` could).
fn irregular_index_files(root: &Path) -> Vec<String> {
    ROOT_INDEX_FILES
        .iter()
        .map(|n| root.join(n))
        .filter_map(|p| {
            let m = std::fs::metadata(&p).ok()?;
            (!m.is_file()).then(|| format!("{}: not a regular file, ignored", p.display()))
        })
        .collect()
}

/// One root's answer.
enum Answer {
    /// Listed and walked, with its irregular index files and the
    /// databases in it that could not be read (`path`, reason).
    Units(Vec<SessionSource>, Vec<String>, Vec<(PathBuf, String)>),
    /// Exists but cannot be listed (nothing of it is indexed).
    Unlistable(RootProblem, String),
}

/// Runs `work` over every configured root, each on its own thread, waiting
/// for all of them at most `deadline` (from the start). `None` = the root
/// did not answer in time.
fn per_root<T: Send + 'static>(
    roots: &Roots,
    deadline: Duration,
    work: impl Fn(&Roots, &Path) -> T + Send + Sync + 'static,
) -> Vec<(Source, PathBuf, Option<T>)> {
    let work = Arc::new(work);
    let (tx, rx) = mpsc::channel::<(usize, T)>();
    let all: Vec<(Source, PathBuf, Roots)> = roots.each();
    let mut answers: Vec<Option<T>> = all.iter().map(|_| None).collect();
    let mut waiting = 0;
    for (i, (_, path, one)) in all.iter().enumerate() {
        let (tx, work, path, one) = (tx.clone(), work.clone(), path.clone(), one.clone());
        let spawned = std::thread::Builder::new()
            .name("recall-discover".into())
            .spawn(move || {
                let _ = tx.send((i, work(&one, &path)));
            });
        if spawned.is_ok() {
            waiting += 1;
        }
    }
    drop(tx);
    let end = Instant::now() + deadline;
    while waiting > 0 {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, t)) => {
                answers[i] = Some(t);
                waiting -= 1;
            }
            Err(_) => break,
        }
    }
    all.into_iter()
        .zip(answers)
        .map(|((s, p, _), a)| (s, p, a))
        .collect()
}

/// Discovers every root's units, bounded by the options' root deadline.
pub fn discover(opts: &IndexOptions) -> Discovery {
    let hook = opts.root_fault.clone();
    let answers = per_root(&opts.roots, opts.root_deadline, move |one, root| {
        if let Some(h) = &hook {
            (h.0)(root);
        }
        let source = one.all().first().map(|(s, _)| *s);
        let problem = source.and_then(|s| RootProblem::of_root(s, root));
        if let Some((problem, message)) = problem {
            Answer::Unlistable(problem, message)
        } else {
            let units = extract::discover(one);
            let mut skipped = irregular_index_files(root);
            skipped.extend(extract::common::take_irregular());
            Answer::Units(units, skipped, extract::common::take_unreadable_stores())
        }
    });
    let mut found = Discovery::default();
    for (source, path, answer) in answers {
        match answer {
            Some(Answer::Units(u, skipped, stores)) => {
                found.units.extend(u);
                found.skipped_files.extend(skipped);
                // A database that cannot be read now (locked, corrupt): a
                // degraded root whose sessions are kept as they are.
                for (db, message) in stores {
                    let problem = RootProblem::Unreadable;
                    found
                        .degraded
                        .push(DegradedRoot::new(source, &db, problem, message));
                    found.stalled.push(db);
                }
            }
            Some(Answer::Unlistable(problem, message)) => found
                .degraded
                .push(DegradedRoot::new(source, &path, problem, message)),
            None => {
                found
                    .degraded
                    .push(not_answering(source, &path, opts.root_deadline));
                found.stalled.push(path);
            }
        }
    }
    found
}

/// Roots that exist but cannot be listed or did not answer within
/// `deadline` (status, without a discovery).
pub fn degraded(roots: &Roots, deadline: Duration) -> Vec<DegradedRoot> {
    per_root(roots, deadline, |one, root| {
        let source = one.all().first().map(|(s, _)| *s)?;
        RootProblem::of_root(source, root)
    })
    .into_iter()
    .filter_map(|(source, path, a)| match a {
        Some(None) => None,
        Some(Some((problem, message))) => Some(DegradedRoot::new(source, &path, problem, message)),
        None => Some(not_answering(source, &path, deadline)),
    })
    .collect()
}

/// A root whose listing did not answer within `deadline`.
fn not_answering(source: Source, path: &Path, deadline: Duration) -> DegradedRoot {
    let message = format!(
        "did not answer within {} s (a hung mount?)",
        deadline.as_secs_f64()
    );
    DegradedRoot::new(source, path, RootProblem::NotAnswering, message)
}

/// [`super::plan::plan`] on a thread of its own, waited for at most the
/// root deadline: planning `stat`s every source file, and a mount that hangs
/// after discovery listed it must not stall the sweep (nor a daemon's
/// indexer loop) for good. Past the deadline the thread is left behind and
/// the sweep fails with [`IndexError::PlanStalled`].
pub fn plan_bounded(
    opts: &IndexOptions,
    units: Vec<SessionSource>,
    m: &Arc<Manifest>,
    st: &crate::store::IndexerState,
    reparse: bool,
    horizon: Option<i64>,
    focused: bool,
) -> Result<Plan, IndexError> {
    let (tx, rx) = mpsc::channel();
    let (m, st, hook) = (m.clone(), st.clone(), opts.plan_fault.clone());
    let spawned = std::thread::Builder::new()
        .name("recall-plan".into())
        .spawn(move || {
            if let Some(h) = &hook {
                for u in &units {
                    if let Some(main) = u.files.first() {
                        h.call(main);
                    }
                }
            }
            let _ = tx.send(super::plan::plan(units, &m, &st, reparse, horizon, focused));
        });
    if spawned.is_err() {
        return Err(IndexError::PlanStalled(Duration::ZERO));
    }
    rx.recv_timeout(opts.root_deadline)
        .map_err(|_| IndexError::PlanStalled(opts.root_deadline))
}

/// Keeps what a stalled root holds out of `plan`'s losses: its sessions
/// are not gone and its skipped units not forgotten (nobody looked).
pub fn spare_stalled(plan: &mut Plan, m: &Manifest, stalled: &[PathBuf]) {
    if stalled.is_empty() {
        return;
    }
    let under = |p: &str| stalled.iter().any(|r| Path::new(p).starts_with(r));
    plan.gone.retain(|k| {
        m.sessions
            .get(k)
            .and_then(|e| e.files.first())
            .is_none_or(|c| !under(&c.path))
    });
    plan.forget.retain(|p| !under(p));
}
