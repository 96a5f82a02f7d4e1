//! The shard of one extracted unit: built, its generation written (named
//! later by the worker's syncer), its filters and segment draft fed, and a
//! live unit's prepared shard handed to the arena.

use super::merge::WorkerSegments;
use super::unit::Units;
use crate::extract::Extracted;
use crate::index::build::{self, Previous};
use crate::index::plan::{Kind, Work};
use crate::store::generations::{Pending, Written};
use recall_core::model::{FileCursor, ManifestEntry, Shard};
use recall_core::PreparedShard;
use std::sync::Arc;

impl Units<'_> {
    /// Builds, writes and filters the shard of an extracted unit; returns
    /// its key, its manifest entry and its generation body when it still
    /// has to be committed ([`Processed::pending`]).
    pub(super) fn write_shard(
        &self,
        w: &Work,
        x: Extracted,
        generation: u32,
        files: Vec<FileCursor>,
        seg: &mut WorkerSegments,
    ) -> Option<(String, ManifestEntry, Option<Pending>)> {
        // Only a rewrite carries old records (those of generations below the
        // current one): a session never rewritten has none to carry.
        let prev_shard = match (&w.old_file, w.kind) {
            (Some(_), Kind::Appended) if w.old_generation == 0 => None,
            (Some(name), Kind::Appended | Kind::Rewritten | Kind::Reparse) => self
                .store
                .generation_bytes(name)
                .ok()
                .and_then(|b| serde_json::from_slice::<Shard>(&b).ok()),
            _ => None,
        };
        let key = x.meta.key();
        let truncated = x.diagnostics.truncated;
        let previous = prev_shard
            .as_ref()
            .filter(|_| w.old_key.as_deref() == Some(key.as_str()))
            .map(|s| Previous {
                shard: s,
                generation: w.old_generation,
                rewritten: w.kind == Kind::Rewritten,
            });
        let shard = build::shard(x, generation, previous);
        let body = serde_json::to_vec(&shard).ok()?;
        let (name, pending) = match self.store.write_generation_pending(&body).ok()? {
            Written::Named(name) => (name, None),
            Written::Pending(p) => (p.name().to_string(), Some(p)),
        };
        let mut entry = build::entry(
            &shard,
            name,
            body.len() as u64,
            files,
            self.watermark,
            w.context.clone(),
        );
        if truncated {
            build::mark_truncated(&mut entry);
        }
        // The trigram filters let searches skip this shard without loading
        // it. Without them searches only load more: not a reason to fail.
        // A long-lived indexer's live shard gets neither filters on disk nor
        // a segment now: it goes to the arena (filters included) and its
        // segment is deferred to the window's.
        let prepared = PreparedShard::new(shard);
        if !(self.checkpoints.is_some() && self.live(w)) {
            let _ = self
                .store
                .write_grams(&entry.generation_file, &prepared.grams.to_bytes());
            seg.add(self.store, &entry.generation_file, &prepared, entry.bytes);
        }
        if let Some(hook) = self.hook.as_ref().filter(|_| self.live(w)) {
            hook.call(&entry.generation_file, Arc::new(prepared));
        }
        Some((key, entry, pending))
    }
}
