//! Extractor for Kimi Code and legacy kimi-cli transcripts (DESIGN.md §5). Not implemented yet.

use super::{ExtractError, Extracted, SessionSource};
use std::path::Path;

/// Finds Kimi Code sessions under `KIMI_CODE_HOME`.
pub fn discover_code(_root: &Path) -> Vec<SessionSource> {
    Vec::new()
}

/// Finds legacy kimi-cli sessions under `KIMI_SHARE_DIR`.
pub fn discover_legacy(_root: &Path) -> Vec<SessionSource> {
    Vec::new()
}

/// Extracts one session.
pub fn extract(_src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    Ok(None)
}
