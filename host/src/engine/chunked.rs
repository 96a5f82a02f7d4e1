//! Reading and preparing one generation in chunks (issue #12 item 2), so a
//! search checks its deadline between chunks instead of reading and
//! preparing a big shard whole: the file is read [`CHUNK_BYTES`] at a time
//! while its SHA-256 is computed (a body that does not hash to its name is
//! refused, as `catalog::read_verified` does), then
//! [`recall_core::Preparing`] parses, folds and indexes it a chunk at a time.
//! A [`Pending`] load that did not finish is kept by the arena, so the next
//! query goes on where this one stopped.

use recall_core::{LoadError, PreparedShard, Preparing, ShardGrams};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes of work per chunk: read from the file, or parsed and prepared.
pub const CHUNK_BYTES: usize = 1 << 20;

/// A generation being read or prepared.
#[derive(Debug)]
pub struct Pending {
    name: String,
    tools: bool,
    stage: Stage,
    /// Bytes read from storage so far (the query's `fresh_bytes` once done).
    pub fresh: u64,
    /// The file's size when opened.
    len: u64,
}

#[derive(Debug)]
enum Stage {
    Reading {
        file: File,
        bytes: Vec<u8>,
        hasher: Box<Sha256>,
    },
    Preparing(Box<Preparing>),
}

impl Pending {
    /// Opens the generation `name` at `path`, for a query that needs tool
    /// rows when `tools`.
    pub fn open(path: &Path, name: &str, tools: bool) -> Result<Pending, LoadError> {
        let file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LoadError::Missing {
                name: name.to_string(),
            },
            _ => LoadError::Io {
                name: name.to_string(),
                reason: e.to_string(),
            },
        })?;
        let len = file.metadata().map_or(0, |m| m.len());
        Ok(Pending {
            name: name.to_string(),
            tools,
            stage: Stage::Reading {
                file,
                bytes: Vec::with_capacity(usize::try_from(len).unwrap_or(0)),
                hasher: Box::default(),
            },
            fresh: 0,
            len,
        })
    }

    /// A generation of at most one chunk: read in one chunk and prepared in
    /// about one more, so it is not worth interrupting (a page then ends
    /// within its deadline plus two chunks, and a small shard is never
    /// left half-prepared by a deadline spent elsewhere).
    pub fn small(&self) -> bool {
        self.len <= CHUNK_BYTES as u64
    }

    /// Whether this load prepares tool rows.
    pub fn tools(&self) -> bool {
        self.tools
    }

    /// Does one chunk of work (adding its bytes to `worked`): the shard once
    /// it is ready. `known` gives the shard's filters when the caller holds
    /// them (asked once, when reading ends).
    pub fn chunk(
        &mut self,
        known: impl FnOnce() -> Option<Arc<ShardGrams>>,
        worked: &AtomicU64,
    ) -> Result<Option<PreparedShard>, LoadError> {
        match &mut self.stage {
            Stage::Reading {
                file,
                bytes,
                hasher,
            } => {
                let start = bytes.len();
                let n = file
                    .by_ref()
                    .take(CHUNK_BYTES as u64)
                    .read_to_end(bytes)
                    .map_err(|e| LoadError::Io {
                        name: self.name.clone(),
                        reason: e.to_string(),
                    })?;
                hasher.update(&bytes[start..]);
                self.fresh += n as u64;
                worked.fetch_add(n as u64, Ordering::Relaxed);
                if n > 0 {
                    return Ok(None);
                }
                let h: Sha256 = *std::mem::take(hasher);
                let digest = h.finalize();
                let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
                if format!("{hash}.json") != self.name {
                    return Err(LoadError::Damaged {
                        name: self.name.clone(),
                        reason: "its bytes do not hash to its name".to_string(),
                    });
                }
                let body = std::mem::take(bytes);
                self.stage = Stage::Preparing(Box::new(Preparing::new(body, known(), self.tools)));
                Ok(None)
            }
            Stage::Preparing(p) => {
                let before = p.worked();
                let done = p.chunk(CHUNK_BYTES).map_err(|e| LoadError::Damaged {
                    name: self.name.clone(),
                    reason: e.to_string(),
                })?;
                worked.fetch_add(p.worked() - before, Ordering::Relaxed);
                Ok(done)
            }
        }
    }
}
