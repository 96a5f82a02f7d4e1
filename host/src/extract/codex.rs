//! Extractor for codex transcripts (DESIGN.md §5). Not implemented yet.

use super::{ExtractError, Extracted, SessionSource};
use std::path::Path;

/// Finds this source's sessions under `root`.
pub fn discover(_root: &Path) -> Vec<SessionSource> {
    Vec::new()
}

/// Extracts one session.
pub fn extract(_src: &SessionSource) -> Result<Option<Extracted>, ExtractError> {
    Ok(None)
}
