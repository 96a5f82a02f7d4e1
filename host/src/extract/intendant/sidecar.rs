//! Reading Intendant model-text sidecars (`turns/turn_NNN_model.txt`) by byte
//! span, refusing any path that leaves the session's log directory.

use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

/// Largest span read (a larger one is refused, never held in memory).
pub const MAX_SPAN: u64 = super::super::common::MAX_LINE_BYTES as u64;

/// Why a span was not read.
#[derive(Debug, thiserror::Error)]
pub enum SpanError {
    /// The path is absolute, has `..`, or resolves outside the log dir.
    #[error("sidecar path {0:?} is outside the log directory: refused")]
    Outside(String),
    /// The span is larger than [`MAX_SPAN`].
    #[error("sidecar span of {0} bytes is over the cap: skipped")]
    TooLarge(u64),
    /// The file ends before the span does.
    #[error("sidecar {0:?} is shorter than the span: skipped")]
    Short(String),
    /// The file could not be read.
    #[error("sidecar {0:?}: {1}")]
    Io(String, io::Error),
}

/// Resolves sidecar paths against one log directory.
pub struct Sidecars {
    dir: PathBuf,
    /// The log dir with symlinks resolved (`None` when it cannot be).
    canonical: Option<PathBuf>,
}

impl Sidecars {
    /// Sidecars of the log directory `dir`.
    pub fn new(dir: &Path) -> Sidecars {
        Sidecars {
            dir: dir.to_path_buf(),
            canonical: dir.canonicalize().ok(),
        }
    }

    /// `rel` joined to the log directory, unchecked (for fingerprints).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The checked absolute path of `rel`: relative, no `..`, and (after
    /// resolving symlinks) inside the log directory.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, SpanError> {
        let outside = || SpanError::Outside(rel.to_string());
        let p = Path::new(rel);
        if rel.is_empty()
            || !p
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(outside());
        }
        let joined = self.dir.join(p);
        let real = joined
            .canonicalize()
            .map_err(|e| SpanError::Io(rel.to_string(), e))?;
        match &self.canonical {
            Some(base) if real.starts_with(base) => Ok(real),
            _ => Err(outside()),
        }
    }

    /// Reads `[offset, offset + len)` of `rel` as text (invalid UTF-8 is
    /// replaced, never fatal).
    pub fn read(&self, rel: &str, offset: u64, len: u64) -> Result<String, SpanError> {
        if len > MAX_SPAN {
            return Err(SpanError::TooLarge(len));
        }
        let path = self.resolve(rel)?;
        let io_err = |e| SpanError::Io(rel.to_string(), e);
        let mut f = crate::extract::open::open_regular(&path).map_err(io_err)?;
        f.seek(SeekFrom::Start(offset)).map_err(io_err)?;
        let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        f.take(len).read_to_end(&mut buf).map_err(io_err)?;
        if (buf.len() as u64) < len {
            return Err(SpanError::Short(rel.to_string()));
        }
        Ok(match String::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_paths_leaving_the_log_dir() {
        let tmp = std::env::temp_dir().join(format!("recall-sidecar-{}", std::process::id()));
        let log = tmp.join("log");
        std::fs::create_dir_all(log.join("turns")).unwrap();
        std::fs::write(log.join("turns/t.txt"), "hello world").unwrap();
        std::fs::write(tmp.join("secret.txt"), "secret").unwrap();
        let s = Sidecars::new(&log);
        assert_eq!(s.read("turns/t.txt", 6, 5).unwrap(), "world");
        assert!(matches!(
            s.read("turns/t.txt", 6, 50),
            Err(SpanError::Short(_))
        ));
        assert!(matches!(
            s.read("../secret.txt", 0, 6),
            Err(SpanError::Outside(_))
        ));
        let abs = tmp.join("secret.txt").to_string_lossy().into_owned();
        assert!(matches!(s.read(&abs, 0, 6), Err(SpanError::Outside(_))));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.join("secret.txt"), log.join("turns/link.txt")).unwrap();
            assert!(matches!(
                s.read("turns/link.txt", 0, 6),
                Err(SpanError::Outside(_))
            ));
        }
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
