//! `?locate=` on the host side: checking a found hit against its source.
//! Parsing the value and finding the record in the indexed shard are the
//! core's (`recall_core::session::locate`); here the session is re-read
//! from exactly the files its manifest entry lists and the record's
//! identity and `content_hash16` re-computed: a hit whose source has
//! changed since it was indexed is `stale`, one whose source is gone or
//! unreadable `unavailable`.

use super::errors::ApiError;
use crate::extract::Extracted;
use recall_core::model::{Locator, MessageRecord};
pub use recall_core::session::locate::{content_hash, find, Found, Verdict, MAX_LOCATE_BYTES};

/// Parses `locate`: locator JSON, or base64url (padded or not) of it.
pub fn parse(raw: &str) -> Result<Locator, ApiError> {
    recall_core::session::parse_locate(raw).map_err(ApiError::from)
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
