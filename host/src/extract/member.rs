//! Member paths: one session inside a database file, named as a path.
//!
//! The indexer matches a unit to its manifest entry by its main file and
//! keeps a cursor per file. A database that holds many sessions (OpenCode's
//! `opencode.db`) gives each of them a *member path*, `<database>/<id>`: a
//! path below a regular file, which no file system can hold, so it never
//! names a real file. Its cursor is the database file's identity with
//! nothing read ([`crate::index::cursor`]); whether the member changed is
//! told by the unit's discovery context (the session's own update time),
//! which the sweep's plan compares already.

use std::path::{Path, PathBuf};

/// The member path of session `id` in `db`; `None` when `id` could not be
/// one path component (empty, `.`, `..`, or holding `/` or NUL).
pub fn path(db: &Path, id: &str) -> Option<PathBuf> {
    let ok = !id.is_empty() && id != "." && id != ".." && !id.contains(['/', '\0']);
    ok.then(|| db.join(id))
}

/// The database and the member id of `path`, when `path` is a member path:
/// its parent is a regular file. One `stat` of the parent.
pub fn split(path: &Path) -> Option<(&Path, &str)> {
    let db = path.parent()?;
    let id = path.file_name()?.to_str()?;
    std::fs::metadata(db)
        .is_ok_and(|m| m.is_file())
        .then_some((db, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_path_is_below_a_regular_file_and_never_a_file() {
        let dir = std::env::temp_dir().join(format!("recall-member-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("opencode.db");
        std::fs::write(&db, b"x").unwrap();
        let m = path(&db, "ses_1").unwrap();
        assert_eq!(split(&m), Some((db.as_path(), "ses_1")));
        assert!(std::fs::metadata(&m).is_err(), "no file system holds it");
        assert_eq!(
            split(&dir.join("plain")),
            None,
            "a directory's child is not"
        );
        assert_eq!(path(&db, "../x"), None);
        assert_eq!(path(&db, ".."), None);
        assert_eq!(path(&db, ""), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
