//! Checking a hit against its source, once for every face: [`SourceCheck`]
//! says what re-reading the session's files found, and
//! [`SourceCheck::verdict`] turns it into the core's [`Verdict`], redacting
//! by variant what a remote client may not see (a file error can name
//! paths).

use super::{EngineError, IndexerHandle};
use crate::extract::Extracted;
use recall_core::model::{ManifestEntry, MessageRecord};
use recall_core::session::locate::Verdict;

/// What re-reading a hit's source found.
#[derive(Debug)]
pub enum SourceCheck {
    /// The source still holds the record as indexed.
    Verified,
    /// The source holds the session, but not this record as indexed.
    Stale,
    /// The session's files no longer yield the session.
    Gone,
    /// The source could not be read.
    SourceUnreadable(EngineError),
    /// This server has no indexer to read sources with.
    NoIndexer,
}

/// A record whose hash cannot be checked is the same when its text and
/// role are.
fn same_record(indexed: &MessageRecord, fresh: &Extracted) -> bool {
    let hashless = recall_core::session::locate::content_hash(&indexed.locator).is_none();
    fresh.records.iter().any(|r| {
        r.locator == indexed.locator
            && (!hashless || (r.text == indexed.text && r.role == indexed.role))
    })
}

impl SourceCheck {
    /// Judges `indexed` against a fresh extraction of its session.
    pub fn of(
        indexed: &MessageRecord,
        fresh: Result<Option<Extracted>, EngineError>,
    ) -> SourceCheck {
        match fresh {
            Err(e) => SourceCheck::SourceUnreadable(e),
            Ok(None) => SourceCheck::Gone,
            Ok(Some(x)) if same_record(indexed, &x) => SourceCheck::Verified,
            Ok(Some(_)) => SourceCheck::Stale,
        }
    }

    /// Checks `indexed` of session `key` by re-reading exactly the files its
    /// entry lists, through `indexer` (a server without one cannot).
    pub fn through(
        indexer: Option<&IndexerHandle>,
        key: &str,
        entry: &ManifestEntry,
        indexed: &MessageRecord,
    ) -> SourceCheck {
        match indexer {
            Some(ix) => SourceCheck::of(indexed, ix.reextract(key, entry)),
            None => SourceCheck::NoIndexer,
        }
    }

    /// Checks `indexed` by re-reading its files in this process.
    pub fn here(key: &str, entry: &ManifestEntry, indexed: &MessageRecord) -> SourceCheck {
        let fresh = crate::index::verify::reextract(key, entry).map_err(EngineError::from);
        SourceCheck::of(indexed, fresh)
    }

    /// The core's verdict; `redact` (a remote client) withholds the text
    /// of a read error.
    pub fn verdict(self, redact: bool) -> Verdict {
        match self {
            SourceCheck::Verified => Verdict::Verified,
            SourceCheck::Stale => {
                Verdict::Stale("the source changed since this was indexed".into())
            }
            SourceCheck::Gone => {
                Verdict::Unavailable("the session's source files no longer yield it".into())
            }
            SourceCheck::SourceUnreadable(_) if redact => {
                Verdict::Unavailable("the source could not be read".into())
            }
            SourceCheck::SourceUnreadable(e) => {
                Verdict::Unavailable(format!("the source could not be read: {e}"))
            }
            SourceCheck::NoIndexer => {
                Verdict::Unavailable("this server has no indexer to read sources".into())
            }
        }
    }
}
