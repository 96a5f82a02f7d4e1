//! Team search through S3-compatible object storage: the bucket connection
//! and its errors. `local` is the one reader of this store's folder, `hostid` its identity, `publish` uploads (and `gc` collects) this
//! host's objects, `follow` republishes from `recall serve`, `fetch` reads
//! other hosts' (through a local content-named cache), `union` searches this
//! host plus every host under a prefix, `reader` + `memo` keep what a daemon's
//! searches verified in memory, and `serve` puts that behind HTTP.
//!
//! Object layout under `s3://bucket/prefix`, named by `recall_core::layout`
//! (`bucket` and `host`): `hosts/<host-id>/{generations/<hash16>.json,
//! segments/<hash16>.seg, snapshots/<store_id>-<rev>.json, catalog.json}`;
//! the catalog is written last and names only objects already uploaded.

pub mod cache;
pub mod fetch;
pub mod follow;
pub mod gc;
pub mod hostid;
pub mod local;
pub mod memo;
pub mod publish;
pub mod reader;
pub mod serve;
pub mod union;

use object_store::aws::AmazonS3Builder;
use object_store::{ClientOptions, ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// Why a team operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The `s3://bucket/prefix` URL is not one.
    #[error("not an s3://bucket/prefix URL: {0}")]
    BadUrl(String),
    /// The object store client could not be built or a request failed.
    #[error("object storage: {0}")]
    Object(#[from] object_store::Error),
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The local store could not be read.
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    /// Something in the bucket or the store is not what it should be.
    #[error("{0}")]
    Invalid(String),
}

/// A prefix of a bucket, with its client.
#[derive(Clone, Debug)]
pub struct Remote {
    /// The client.
    pub store: Arc<dyn ObjectStore>,
    /// The key prefix without leading or trailing `/` (may be empty).
    pub prefix: String,
    /// The URL as given.
    pub url: String,
}

/// Splits `s3://bucket/prefix` into bucket and prefix.
pub fn parse_url(url: &str) -> Result<(String, String), RemoteError> {
    let rest = url
        .strip_prefix("s3://")
        .ok_or_else(|| RemoteError::BadUrl(url.to_string()))?;
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    let prefix = prefix.trim_matches('/');
    let ok_bucket = !bucket.is_empty()
        && bucket
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_');
    let ok_prefix = prefix
        .split('/')
        .all(|p| prefix.is_empty() || (!p.is_empty() && p != "." && p != ".."));
    if !ok_bucket || !ok_prefix {
        return Err(RemoteError::BadUrl(url.to_string()));
    }
    Ok((bucket.to_string(), prefix.to_string()))
}

impl Remote {
    /// Connects to `s3://bucket/prefix` with the standard AWS environment
    /// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    /// `AWS_ENDPOINT_URL`; an `http://` endpoint is accepted). Requests time
    /// out after `timeout` and are retried at most twice.
    pub fn connect(url: &str, timeout: Duration) -> Result<Remote, RemoteError> {
        Remote::connect_with(url, timeout, std::env::vars())
    }

    /// [`Remote::connect`] with the `AWS_*` variables given (tests).
    pub fn connect_with(
        url: &str,
        timeout: Duration,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Remote, RemoteError> {
        let (bucket, prefix) = parse_url(url)?;
        let vars: std::collections::BTreeMap<String, String> = vars
            .into_iter()
            .filter(|(k, _)| k.starts_with("AWS_"))
            .collect();
        let var = |k: &str| vars.get(k).cloned();
        let endpoint = var("AWS_ENDPOINT_URL")
            .or_else(|| var("AWS_ENDPOINT"))
            .unwrap_or_default();
        let allow_http = endpoint.starts_with("http://")
            || var("AWS_ALLOW_HTTP").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let mut b = AmazonS3Builder::new();
        for (k, v) in &vars {
            if let Ok(key) = k.to_ascii_lowercase().parse() {
                b = b.with_config(key, v);
            }
        }
        let mut b = b
            .with_bucket_name(bucket)
            .with_client_options(
                ClientOptions::new()
                    .with_timeout(timeout)
                    .with_connect_timeout(Duration::from_secs(3)),
            )
            .with_allow_http(allow_http)
            .with_retry(RetryConfig {
                max_retries: 2,
                retry_timeout: timeout,
                ..RetryConfig::default()
            });
        if std::env::var_os("AWS_REGION").is_none()
            && std::env::var_os("AWS_DEFAULT_REGION").is_none()
        {
            b = b.with_region("us-east-1");
        }
        Ok(Remote {
            store: Arc::new(b.build()?),
            prefix,
            url: url.to_string(),
        })
    }
}

/// A small runtime for the CLI's object storage requests.
pub fn runtime() -> Result<tokio::runtime::Runtime, RemoteError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|source| RemoteError::Io {
            path: "tokio runtime".to_string(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::parse_url;

    #[test]
    fn urls_split_into_bucket_and_prefix() {
        assert_eq!(
            parse_url("s3://team/a/b/").unwrap(),
            ("team".into(), "a/b".into())
        );
        assert_eq!(parse_url("s3://team").unwrap(), ("team".into(), "".into()));
        for bad in [
            "http://x/y",
            "s3://",
            "s3:///p",
            "s3://b/../x",
            "s3://b/a//c",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }
}
