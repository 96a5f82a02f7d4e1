//! Reading other hosts: their ids (folders under `<prefix>/hosts/`), their
//! catalogs, and single objects with the failure kinds a reader reports.
//! Every object is bounded by its [`Kind`]: one that says (or turns out,
//! while its body streams) it weighs more is a corrupt host, refused before
//! its bytes are held. Catalog snapshots and content-named objects go
//! through the local cache (`cache.rs`), which also counts what a search
//! fetched.

use super::{Remote, RemoteError};
use futures_util::StreamExt;
use object_store::path::Path as ObjPath;
use object_store::ObjectStoreExt;
use recall_core::layout::{self, bucket, host, HostCatalog};

pub use super::cache::{Cache, Fetched, CACHE_DIR};

/// Why a host, or one of its objects, could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The object is not there.
    Missing(String),
    /// The object is there but not what its name or format says.
    Corrupt(String),
    /// The bucket did not answer.
    Unreachable(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Missing(s) => write!(f, "missing: {s}"),
            Failure::Corrupt(s) => write!(f, "corrupt: {s}"),
            Failure::Unreachable(s) => write!(f, "unreachable: {s}"),
        }
    }
}

/// What a bucket object is, and so the most it may weigh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `catalog.json`: a store id, a revision and the live segments' names.
    Catalog,
    /// A catalog snapshot: the host's manifest.
    Snapshot,
    /// An index segment.
    Segment,
    /// A session's generation (its snapshot entry also says its size).
    Generation,
}

impl Kind {
    /// The most an object of this kind may weigh. Each is far above what a
    /// real store writes: a catalog names a segment in about 24 bytes
    /// (4 MiB ≈ 170,000 segments); a manifest entry is about 1 KiB (256 MiB
    /// ≈ 250,000 sessions); the largest live segment of a 10 GB home is
    /// under 400 MB; a generation is the folded text of one session, whose
    /// sources are read up to 256 MiB.
    pub const fn max_bytes(self) -> u64 {
        match self {
            Kind::Catalog => 4 << 20,
            Kind::Snapshot => 256 << 20,
            Kind::Segment => 4 << 30,
            Kind::Generation => 512 << 20,
        }
    }

    /// How the kind is named in a failure.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Catalog => "catalog",
            Kind::Snapshot => "catalog snapshot",
            Kind::Segment => "segment",
            Kind::Generation => "generation",
        }
    }
}

/// Why [`stream`] stopped.
#[derive(Debug)]
pub enum StreamError {
    /// The bucket or the object failed.
    Remote(Failure),
    /// The sink could not take a chunk (a full disk, a read-only cache).
    Local(std::io::Error),
}

impl From<Failure> for StreamError {
    fn from(f: Failure) -> StreamError {
        StreamError::Remote(f)
    }
}

/// The failure of an object over `bound` bytes.
fn over(what: &str, kind: Kind, bytes: u64, bound: u64) -> Failure {
    Failure::Corrupt(format!(
        "{what}: {bytes} bytes or more, over the {bound} a {} may weigh",
        kind.name()
    ))
}

/// Streams one object's body into `sink`, chunk by chunk, and returns its
/// length. An object whose declared length is over `bound` is refused
/// before its body is read; one whose body runs past `bound` anyway (a
/// server that lies) is refused at the chunk that crosses it.
pub async fn stream(
    remote: &Remote,
    key: &str,
    kind: Kind,
    bound: u64,
    sink: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> Result<u64, StreamError> {
    let what = key.rsplit('/').next().unwrap_or(key).to_string();
    let failed = |e: object_store::Error| match e {
        object_store::Error::NotFound { .. } => Failure::Missing(what.clone()),
        e => Failure::Unreachable(format!("{what}: {e}")),
    };
    let got = remote
        .store
        .get(&ObjPath::from(key))
        .await
        .map_err(failed)?;
    let declared = got.range.end.saturating_sub(got.range.start);
    if declared > bound {
        return Err(over(&what, kind, declared, bound).into());
    }
    drain(got.into_stream(), &what, kind, bound, sink, failed).await
}

/// The bounded part of [`stream`], over any body (tested with one that
/// sends more than it declared).
async fn drain<S, C, E>(
    mut body: S,
    what: &str,
    kind: Kind,
    bound: u64,
    mut sink: impl FnMut(&[u8]) -> std::io::Result<()>,
    failed: impl Fn(E) -> Failure,
) -> Result<u64, StreamError>
where
    S: futures_util::Stream<Item = Result<C, E>> + Unpin,
    C: AsRef<[u8]>,
{
    let mut len = 0u64;
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(&failed)?;
        let chunk = chunk.as_ref();
        len += chunk.len() as u64;
        if len > bound {
            return Err(over(what, kind, len, bound).into());
        }
        sink(chunk).map_err(StreamError::Local)?;
    }
    Ok(len)
}

/// Fetches one object's bytes, at most `bound` of them (see [`stream`]).
pub async fn get(remote: &Remote, key: &str, kind: Kind, bound: u64) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    let got = stream(remote, key, kind, bound, |c| {
        out.extend_from_slice(c);
        Ok(())
    })
    .await;
    match got {
        Ok(_) => Ok(out),
        Err(StreamError::Remote(f)) => Err(f),
        Err(StreamError::Local(e)) => Err(Failure::Unreachable(e.to_string())),
    }
}

/// The host ids under the prefix (folders that are not host ids are skipped).
pub async fn host_ids(remote: &Remote) -> Result<Vec<String>, RemoteError> {
    let dir = ObjPath::from(bucket::hosts(&remote.prefix));
    let listed = remote.store.list_with_delimiter(Some(&dir)).await?;
    let mut ids: Vec<String> = listed
        .common_prefixes
        .iter()
        .filter_map(|p| p.filename().map(str::to_string))
        .filter(|id| layout::is_host_id(id))
        .collect();
    ids.sort();
    Ok(ids)
}

/// A host's current catalog.
pub async fn catalog(remote: &Remote, id: &str) -> Result<HostCatalog, Failure> {
    let key = bucket::key(&remote.prefix, id, host::CATALOG);
    let bytes = get(remote, &key, Kind::Catalog, Kind::Catalog.max_bytes()).await?;
    parse_catalog(&bytes)
}

/// Parses and checks `catalog.json`.
pub fn parse_catalog(bytes: &[u8]) -> Result<HostCatalog, Failure> {
    let c: HostCatalog = serde_json::from_slice(bytes)
        .map_err(|e| Failure::Corrupt(format!("catalog.json: {e}")))?;
    if c.schema != 1 || !layout::is_store_id(&c.store_id) {
        return Err(Failure::Corrupt(
            "catalog.json: unknown schema or store id".into(),
        ));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(chunks: &[usize]) -> impl futures_util::Stream<Item = Result<Vec<u8>, ()>> + Unpin {
        let v: Vec<Result<Vec<u8>, ()>> = chunks.iter().map(|&n| Ok(vec![b'x'; n])).collect();
        futures_util::stream::iter(v)
    }

    fn run(chunks: &[usize], bound: u64) -> (Result<u64, StreamError>, usize) {
        let mut taken = 0;
        let r = block_on(drain(
            body(chunks),
            "catalog.json",
            Kind::Catalog,
            bound,
            |c| {
                taken += c.len();
                Ok(())
            },
            |_| Failure::Unreachable("x".into()),
        ));
        (r, taken)
    }

    /// Runs a future whose body streams are always ready.
    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn a_body_that_runs_past_its_bound_is_refused_at_the_chunk_that_crosses_it() {
        let (r, taken) = run(&[600, 600, 600, 600], 1000);
        match r {
            Err(StreamError::Remote(Failure::Corrupt(m))) => {
                assert!(m.contains("over the 1000 a catalog may weigh"), "{m}")
            }
            other => panic!("expected a corrupt host, got {other:?}"),
        }
        assert_eq!(taken, 600, "nothing past the bound reaches the sink");
    }

    #[test]
    fn a_body_within_its_bound_is_streamed_whole() {
        let (r, taken) = run(&[400, 600], 1000);
        assert_eq!(r.ok(), Some(1000));
        assert_eq!(taken, 1000);
    }

    #[test]
    fn a_sink_that_fails_is_a_local_error_not_a_corrupt_host() {
        let r = block_on(drain(
            body(&[10]),
            "x.seg",
            Kind::Segment,
            100,
            |_| Err(std::io::Error::other("no space")),
            |_: ()| Failure::Unreachable("x".into()),
        ));
        assert!(matches!(r, Err(StreamError::Local(_))), "{r:?}");
    }
}
