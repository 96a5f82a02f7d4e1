//! A window around one record [DSH readEvent]: the record in full with at
//! most N records before and after it (N ≤ 50), addressed by index or by
//! locator.

use super::{not_found, Entry, SessionRef};
use crate::model::Locator;
use crate::prepared::PreparedShard;
use crate::query::QueryError;
use serde::{Deserialize, Serialize};

/// Most records on either side of the centre.
pub const MAX_SIDE: u64 = 50;
/// Records on either side when the request does not say.
pub const DEFAULT_SIDE: u64 = 5;

/// How a record is addressed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Address {
    /// By record index.
    Index(u64),
    /// By the record's locator.
    Locator(Locator),
}

impl Address {
    /// The record index `self` names in `p`, or `record_not_found`.
    pub fn resolve(&self, p: &PreparedShard) -> Result<usize, QueryError> {
        let n = p.shard.records.len();
        match self {
            Address::Index(i) => usize::try_from(*i)
                .ok()
                .filter(|&i| i < n)
                .ok_or_else(|| not_found(format!("the session has {n} records"))),
            Address::Locator(l) => {
                // A rewritten source keeps the old text as a superseded
                // record with the same locator: the active one wins.
                let mut same = (0..n).filter(|&i| &p.shard.records[i].locator == l);
                let first = same.next();
                first
                    .into_iter()
                    .chain(same)
                    .find(|&i| p.active.get(i).copied().unwrap_or(true))
                    .or(first)
                    .ok_or_else(|| not_found("no record of this session has that locator"))
            }
        }
    }

    /// Parses an address from an index string or locator JSON.
    pub fn parse(index: Option<&str>, locator: Option<&str>) -> Result<Address, QueryError> {
        match (index, locator) {
            (Some(i), None) => i.trim().parse::<u64>().map(Address::Index).map_err(|_| {
                QueryError::new(
                    crate::ErrorCode::InvalidParam,
                    "index must be a record index",
                )
            }),
            (None, Some(l)) => serde_json::from_str(l).map(Address::Locator).map_err(|_| {
                QueryError::new(
                    crate::ErrorCode::InvalidParam,
                    "locator is not a locator object",
                )
            }),
            _ => Err(QueryError::new(
                crate::ErrorCode::InvalidParam,
                "give exactly one of index and locator",
            )),
        }
    }
}

/// The window request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowRequest {
    /// The centre record.
    pub at: Address,
    /// Records before (default 5, clamped to 50).
    pub before: Option<u64>,
    /// Records after (default 5, clamped to 50).
    pub after: Option<u64>,
}

/// The window response.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowResponse {
    /// Always true.
    pub ok: bool,
    /// The session.
    pub session: SessionRef,
    /// Index of the centre record.
    pub center: u64,
    /// The records, in order, the centre among them.
    pub entries: Vec<Entry>,
}

/// Reads a window of `p`.
pub fn window(p: &PreparedShard, req: &WindowRequest) -> Result<WindowResponse, QueryError> {
    let c = req.at.resolve(p)?;
    let side = |n: Option<u64>| n.unwrap_or(DEFAULT_SIDE).min(MAX_SIDE) as usize;
    let start = c.saturating_sub(side(req.before));
    let end = c
        .saturating_add(side(req.after))
        .min(p.shard.records.len() - 1);
    Ok(WindowResponse {
        ok: true,
        session: SessionRef::of(p),
        center: c as u64,
        entries: (start..=end).map(|i| Entry::of(p, i)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::fixture::shard;

    fn idx(r: &WindowResponse) -> Vec<u64> {
        r.entries.iter().map(|e| e.index).collect()
    }

    #[test]
    fn by_index_and_locator() {
        let p = shard();
        let w = window(
            &p,
            &WindowRequest {
                at: Address::Index(1),
                before: Some(3),
                after: Some(2),
            },
        )
        .unwrap();
        assert_eq!(idx(&w), vec![0, 1, 2, 3]);
        let loc = p.shard.records[8].locator.clone();
        let w = window(
            &p,
            &WindowRequest {
                at: Address::Locator(loc),
                before: Some(0),
                after: Some(99),
            },
        )
        .unwrap();
        assert_eq!((w.center, idx(&w)), (8, vec![8, 9]));
        assert_eq!(w.entries[0].text, "thanks");
    }

    #[test]
    fn a_shared_locator_resolves_to_the_active_record() {
        let mut p = shard();
        p.shard.records[8].locator = p.shard.records[7].locator.clone();
        let at = Address::Locator(p.shard.records[7].locator.clone());
        assert_eq!(at.resolve(&p).unwrap(), 8);
        p.active[8] = false;
        assert_eq!(at.resolve(&p).unwrap(), 7);
    }

    #[test]
    fn sides_are_capped_at_50() {
        let p = shard();
        let w = window(
            &p,
            &WindowRequest {
                at: Address::Index(9),
                before: Some(1000),
                after: None,
            },
        )
        .unwrap();
        assert_eq!(w.entries.len(), 10);
    }

    #[test]
    fn missing_records_are_errors() {
        let p = shard();
        let e = window(
            &p,
            &WindowRequest {
                at: Address::Index(10),
                before: None,
                after: None,
            },
        )
        .unwrap_err();
        assert_eq!(e.code, "record_not_found");
        assert_eq!(
            Address::parse(Some("x"), None).unwrap_err().code,
            "invalid_param"
        );
        assert_eq!(
            Address::parse(None, None).unwrap_err().code,
            "invalid_param"
        );
        assert_eq!(
            Address::parse(None, Some("{}")).unwrap_err().code,
            "invalid_param"
        );
        let l = serde_json::to_string(&p.shard.records[2].locator).unwrap();
        assert_eq!(
            Address::parse(None, Some(&l)).unwrap().resolve(&p).unwrap(),
            2
        );
    }
}
