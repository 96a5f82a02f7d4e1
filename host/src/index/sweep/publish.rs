//! The batches a sweep publishes: one every few seconds while it runs,
//! then the last one (gone flags, retention, completion).

use super::SweepReport;
use crate::index::{IndexError, PARSER_VERSION};
use crate::store::{Batch, Store};

pub(super) fn new_batch(store_id: &str, watermark: i64, exclude: &[String]) -> Batch {
    Batch {
        base_store_id: store_id.to_string(),
        parser_version: PARSER_VERSION,
        watermark,
        exclude_paths: exclude.to_vec(),
        ..Batch::default()
    }
}

pub(super) fn publish(
    store: &Store,
    batch: Batch,
    report: &mut SweepReport,
) -> Result<bool, IndexError> {
    let out = store.publish(batch)?;
    report.refused += out.stale + out.tombstoned + out.missing;
    report.gone += out.gone;
    report.retired += out.retired.len();
    if out.written {
        report.publishes += 1;
    }
    Ok(out.written)
}
