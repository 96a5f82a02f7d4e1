//! OpenCode's SQLite database (`opencode.db`, since OpenCode 1.2), read
//! with the bundled SQLite, read-only: a reader never takes a write lock,
//! and in WAL mode (OpenCode's) it never blocks the writer; it sees the
//! newest committed turns, those still in the `-wal` file included.
//!
//! Tables (`packages/opencode/src/session/session.sql.ts`): `session(id,
//! parent_id, directory, title, time_created, time_updated, …)`,
//! `message(id, session_id, time_created, time_updated, data)` and
//! `part(id, message_id, session_id, time_created, time_updated, data)`,
//! `data` being JSON text. Columns are read by name and any of them may be
//! missing (older and forked schemas differ): a missing one is unknown.

use super::super::common::MAX_LINE_BYTES;
use super::convert::{MessageRow, Reading, SessionRow};
use rusqlite::{Connection, OpenFlags, Row};
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::time::Duration;

/// How long a read waits for a lock the writer holds (a rollback-journal
/// database mid-write; WAL readers do not wait).
const BUSY: Duration = Duration::from_secs(2);

fn other(e: rusqlite::Error) -> io::Error {
    io::Error::other(e.to_string())
}

/// Opens `db` read-only. A path that is not a regular file is refused
/// before SQLite opens it (a FIFO would block the open).
pub fn open(db: &Path) -> io::Result<Connection> {
    let meta = std::fs::metadata(db)?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(db, flags).map_err(other)?;
    conn.busy_timeout(BUSY).map_err(other)?;
    // Fails here, not later, on a file that is not a database.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
        .map_err(other)?;
    Ok(conn)
}

fn text(row: &Row<'_>, col: &str) -> Option<String> {
    row.get::<_, Option<String>>(col).ok().flatten()
}

fn int(row: &Row<'_>, col: &str) -> Option<i64> {
    row.get::<_, Option<i64>>(col).ok().flatten()
}

fn session_row(row: &Row<'_>) -> SessionRow {
    SessionRow {
        id: text(row, "id").unwrap_or_default(),
        directory: text(row, "directory"),
        title: text(row, "title"),
        parent: text(row, "parent_id").filter(|p| !p.is_empty()),
        updated_ms: int(row, "time_updated"),
    }
}

/// One session as discovery lists it: its row and what tells a sweep that
/// it changed (its update time, message count and newest message update).
#[derive(Clone, Debug)]
pub struct Listed {
    /// The session row.
    pub session: SessionRow,
    /// `[time_updated, messages, newest message time_updated]`.
    pub version: [Option<i64>; 3],
}

/// Every session of `db`, by id.
pub fn list(db: &Path) -> io::Result<Vec<Listed>> {
    let conn = open(db)?;
    let full = "SELECT s.*, \
                (SELECT count(*) FROM message m WHERE m.session_id = s.id) AS recall_n, \
                (SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id) AS recall_mu \
                FROM session s ORDER BY s.id";
    let mut stmt = match conn.prepare(full) {
        Ok(s) => s,
        // A schema without `message.time_updated`: the session rows alone.
        Err(_) => conn
            .prepare("SELECT * FROM session ORDER BY id")
            .map_err(other)?,
    };
    let rows = stmt
        .query_map([], |row| {
            Ok(Listed {
                session: session_row(row),
                version: [
                    int(row, "time_updated"),
                    int(row, "recall_n"),
                    int(row, "recall_mu"),
                ],
            })
        })
        .map_err(other)?;
    let mut out = Vec::new();
    for r in rows {
        let r = r.map_err(other)?;
        if !r.session.id.is_empty() {
            out.push(r);
        }
    }
    Ok(out)
}

/// A row's `data` bytes (text or blob), `None` when it is over the line
/// cap (its length is asked first, so it is never loaded) or absent.
fn data_of(row: &Row<'_>, reading: &mut Reading) -> rusqlite::Result<Option<Vec<u8>>> {
    let len = row.get::<_, Option<i64>>(2)?.unwrap_or(0).max(0) as u64;
    if len as usize > MAX_LINE_BYTES {
        reading.huge += 1;
        return Ok(None);
    }
    if !reading.admit(len) {
        return Ok(None);
    }
    Ok(row.get_ref(3)?.as_bytes().ok().map(<[u8]>::to_vec))
}

/// Session `id` of `db`: its row and messages with their parts, in order
/// (`None` = no such session). One read transaction: a consistent view
/// while OpenCode writes.
pub fn load(
    db: &Path,
    id: &str,
    reading: &mut Reading,
) -> io::Result<Option<(SessionRow, Vec<MessageRow>)>> {
    let mut conn = open(db)?;
    let tx = conn.transaction().map_err(other)?;
    let session = {
        let mut stmt = tx
            .prepare("SELECT * FROM session WHERE id = ?1")
            .map_err(other)?;
        let mut rows = stmt.query([id]).map_err(other)?;
        match rows.next().map_err(other)? {
            Some(row) => session_row(row),
            None => return Ok(None),
        }
    };
    let cap = MAX_LINE_BYTES as i64;
    let mut messages: Vec<MessageRow> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    {
        let mut stmt = tx
            .prepare(
                "SELECT id, time_created, octet_length(data), \
                 CASE WHEN octet_length(data) > ?2 THEN NULL ELSE data END \
                 FROM message WHERE session_id = ?1 ORDER BY time_created, id",
            )
            .map_err(other)?;
        let mut rows = stmt.query(rusqlite::params![id, cap]).map_err(other)?;
        while let Some(row) = rows.next().map_err(other)? {
            let Some(mid) = row.get::<_, Option<String>>(0).ok().flatten() else {
                continue;
            };
            let time_ms: Option<i64> = row.get(1).ok().flatten();
            let Some(bytes) = data_of(row, reading).map_err(other)? else {
                continue;
            };
            let Some(data) = reading.parse(&bytes) else {
                continue;
            };
            at.insert(mid.clone(), messages.len());
            messages.push(MessageRow {
                id: mid,
                time_ms,
                data,
                parts: Vec::new(),
            });
        }
    }
    {
        let mut stmt = tx
            .prepare(
                "SELECT p.id, p.message_id, octet_length(p.data), \
                 CASE WHEN octet_length(p.data) > ?2 THEN NULL ELSE p.data END \
                 FROM part p JOIN message m ON p.message_id = m.id \
                 WHERE m.session_id = ?1 ORDER BY p.message_id, p.id",
            )
            .map_err(other)?;
        let mut rows = stmt.query(rusqlite::params![id, cap]).map_err(other)?;
        while let Some(row) = rows.next().map_err(other)? {
            let pid = row.get::<_, Option<String>>(0).ok().flatten();
            let mid = row.get::<_, Option<String>>(1).ok().flatten();
            let (Some(pid), Some(&i)) = (pid, mid.and_then(|m| at.get(&m))) else {
                continue;
            };
            let Some(bytes) = data_of(row, reading).map_err(other)? else {
                continue;
            };
            if let Some(data) = reading.parse(&bytes) {
                messages[i].parts.push((pid, data));
            }
        }
    }
    Ok(Some((session, messages)))
}

/// Writes a database at `path` from SQL text (the test fixtures, the fuzz
/// inputs and the demo home are SQL): the one place recall writes an
/// OpenCode database, never one of the user's.
pub fn write_from_sql(path: &Path, sql: &str) -> io::Result<()> {
    let conn = Connection::open(path).map_err(other)?;
    conn.execute_batch(sql).map_err(other)?;
    conn.close().map_err(|(_, e)| other(e))
}

/// Session `id` of `db` as JSON lines for Deep Search: each message's and
/// each part's `data`, in order, with its row id as `id` (the locator of
/// an indexed record is its part id), at most `max` bytes (`Err` past it).
pub fn session_lines(db: &Path, id: &str, max: u64) -> io::Result<Vec<u8>> {
    let mut reading = Reading::default();
    let Some((_, messages)) = load(db, id, &mut reading)? else {
        return Err(io::Error::new(io::ErrorKind::NotFound, "no such session"));
    };
    let mut out = Vec::new();
    let mut put = |rid: &str, data: &serde_json::Value| -> io::Result<()> {
        let mut v = data.clone();
        if let Some(o) = v.as_object_mut() {
            o.insert("id".into(), serde_json::Value::String(rid.to_string()));
        }
        serde_json::to_writer(&mut out, &v)?;
        out.push(b'\n');
        if out.len() as u64 > max {
            return Err(io::Error::other(format!(
                "the session is larger than {max} bytes"
            )));
        }
        Ok(())
    };
    for m in &messages {
        put(&m.id, &m.data)?;
        for (pid, p) in &m.parts {
            put(pid, p)?;
        }
    }
    Ok(out)
}
