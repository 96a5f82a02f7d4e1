//! Checking an indexed record against its source (`?locate=` in the
//! session view, `recall show --locate`): the session is re-read from
//! exactly the files its manifest entry lists and the record's identity and
//! `content_hash16` re-computed — a hit whose source changed since it was
//! indexed is `stale`, one whose source is gone or unreadable
//! `unavailable`.

use crate::extract::{self, ExtractError, Extracted, SessionSource};
use recall_core::model::{ManifestEntry, MessageRecord};
use recall_core::session::locate::{content_hash, Verdict};
use std::path::PathBuf;

/// Re-extracts a session from exactly the files its manifest entry lists.
pub fn reextract(key: &str, entry: &ManifestEntry) -> Result<Option<Extracted>, ExtractError> {
    let files: Vec<PathBuf> = entry.meta.paths.iter().map(PathBuf::from).collect();
    let Some(main) = files.first() else {
        return Ok(None);
    };
    if !main.exists() {
        return Ok(None);
    }
    let src = SessionSource {
        source: entry.meta.source,
        unit: main.to_string_lossy().into_owned(),
        files,
        context: serde_json::Value::Null,
    };
    Ok(extract::extract(&src)?.filter(|x| x.meta.key() == key))
}

/// Checks an indexed record against a fresh extraction of its session.
pub fn verify(indexed: &MessageRecord, fresh: Option<&Extracted>) -> Verdict {
    let Some(fresh) = fresh else {
        return Verdict::Unavailable("the session's source files no longer yield it".into());
    };
    let hashless = content_hash(&indexed.locator).is_none();
    let same = fresh.records.iter().any(|r| {
        r.locator == indexed.locator
            && (!hashless || (r.text == indexed.text && r.role == indexed.role))
    });
    if same {
        Verdict::Verified
    } else {
        Verdict::Stale("the source changed since this was indexed".into())
    }
}
