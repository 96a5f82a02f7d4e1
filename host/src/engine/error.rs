//! [`EngineError`]: why the engine could not answer, with its typed cause.
//! Every face maps it in one place (HTTP: 500 `store_unavailable` in
//! `http::errors`; the CLI and MCP print it); its message never holds
//! query text.

use crate::extract::ExtractError;
use crate::index::IndexError;
use crate::store::policy::PolicyError;
use crate::store::StoreError;

/// Why the engine could not answer.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A sweep failed.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The store's policy could not be read or written.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// A session's sources could not be read again.
    #[error(transparent)]
    Extract(#[from] ExtractError),
    /// Reading a file failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// This engine has no indexer (a server of a fixed catalog): what was
    /// asked needs one.
    #[error("this server has no {0}")]
    NoIndexer(&'static str),
    /// A read side other than the store's (team search, a test catalog)
    /// could not answer.
    #[error("{0}")]
    Unavailable(String),
}

impl EngineError {
    /// A read side other than the store's could not answer.
    pub fn unavailable(message: impl Into<String>) -> EngineError {
        EngineError::Unavailable(message.into())
    }
}
