//! The coordinator's side of a unit: its result folded into the batch
//! being gathered (key claims between units, exclusion, retention, the
//! ledger's skipped units) and into the report.

use super::unit::{Done, ABANDONED};
use super::Sweep;
use crate::index::plan::{expired, Work};
use crate::store::retention::newest_ms;
use crate::store::{SkipReason, SkippedUnit};

impl Sweep<'_> {
    /// Adds one unit's result to the batch.
    pub(super) fn absorb(&mut self, w: &Work, done: Done) {
        let Sweep {
            st,
            horizon,
            claims,
            fresh,
            batch,
            report,
            ..
        } = self;
        let horizon = *horizon;
        let was_skipped = |main: &str| st.skipped.contains_key(main);
        match done {
            Done::Failed {
                main,
                reason,
                files,
                store_fault,
            } => {
                report.failed += 1;
                report.abandoned += usize::from(reason.starts_with(ABANDONED));
                if store_fault {
                    return;
                }
                // The old entry (if any) stays; the unit is not re-read until
                // its files change.
                if let Some(k) = &w.old_key {
                    claims.insert(k.clone(), main.clone());
                }
                let unit = SkippedUnit {
                    reason: SkipReason::Failed,
                    key: w.old_key.clone(),
                    newest_ms: None,
                    context: w.context.clone(),
                    files,
                    error: Some(reason),
                    cwd: None,
                };
                batch.skipped.push((main, Some(unit)));
            }
            Done::Empty { main, files } => {
                report.empty += 1;
                if let Some(k) = &w.old_key {
                    batch.gone.push(k.clone());
                }
                let unit = SkippedUnit {
                    reason: SkipReason::Empty,
                    key: None,
                    newest_ms: None,
                    context: w.context.clone(),
                    files,
                    error: None,
                    cwd: None,
                };
                batch.skipped.push((main, Some(unit)));
            }
            Done::Session { main, key, entry } => {
                report.extracted += 1;
                let skip = |reason| SkippedUnit {
                    reason,
                    key: Some(key.clone()),
                    newest_ms: newest_ms(&entry),
                    context: w.context.clone(),
                    files: entry.files.clone(),
                    error: None,
                    cwd: None,
                };
                // Under an excluded path: never indexed (an old entry leaves
                // the manifest at this batch's publish).
                if crate::store::policy::excluded(&batch.exclude_paths, entry.meta.cwd.as_deref()) {
                    let unit = SkippedUnit {
                        cwd: entry.meta.cwd.clone(),
                        ..skip(SkipReason::Excluded)
                    };
                    batch.skipped.push((main, Some(unit)));
                    return;
                }
                if expired(&entry, horizon) {
                    report.retired += usize::from(w.old_key.is_none());
                    batch.skipped.push((main, Some(skip(SkipReason::Retired))));
                    return;
                }
                match claims.get(&key) {
                    // Within one sweep the unit with more records owns a key: a
                    // partial copy (or anything else yielding that id) that was
                    // read first never keeps a healthy session's key. An owner
                    // from an earlier sweep keeps it (DESIGN §5 identity).
                    Some(owner) if *owner != main => {
                        let takes_over = fresh.get(&key).is_some_and(|(n, _)| entry.records > *n);
                        if !takes_over {
                            batch
                                .skipped
                                .push((main, Some(skip(SkipReason::Duplicate))));
                            return;
                        }
                        if let Some((_, displaced)) = fresh.remove(&key) {
                            batch.upserts.retain(|(k, _)| *k != key);
                            batch.skipped.push((owner.clone(), Some(displaced)));
                        }
                        claims.insert(key.clone(), main.clone());
                    }
                    _ => {
                        claims.insert(key.clone(), main.clone());
                    }
                }
                fresh.insert(key.clone(), (entry.records, skip(SkipReason::Duplicate)));
                if let Some(old) = &w.old_key {
                    if *old != key {
                        batch.gone.push(old.clone());
                    }
                }
                if w.old_key.as_deref() == Some(key.as_str()) {
                    report.updated_sessions += 1;
                } else {
                    report.new_sessions += 1;
                }
                if was_skipped(&main) {
                    batch.skipped.push((main, None));
                }
                batch.upserts.push((key, *entry));
            }
        }
    }
}
