//! Re-reading a session from exactly the files its manifest entry lists,
//! for checking a hit against its source (the judging is the engine's:
//! `engine::verify::SourceCheck`).

use crate::extract::{self, ExtractError, Extracted, SessionSource};
use recall_core::model::ManifestEntry;
use std::path::PathBuf;

/// Re-extracts a session from exactly the files its manifest entry lists.
pub fn reextract(key: &str, entry: &ManifestEntry) -> Result<Option<Extracted>, ExtractError> {
    let files: Vec<PathBuf> = entry.meta.paths.iter().map(PathBuf::from).collect();
    let Some(main) = files.first() else {
        return Ok(None);
    };
    // A database session's path names a member of its database file.
    if !main.exists() && extract::member::split(main).is_none() {
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
