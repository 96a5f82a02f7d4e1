//! `recall search --remote s3://…`: this store plus every host published
//! under the prefix (`remote::union`), with the CLI's unlimited budgets;
//! `recall serve --publish s3://…` (`remote::follow`) and `--remote`
//! (`remote::serve`).

use super::Context;
use crate::engine::arena::Arena;
use crate::engine::catalog::StoreCatalog;
use crate::remote::union::{TeamOptions, UnionCatalog};
use crate::remote::{self, hostid, Remote};
use recall_core::query::Query;
use recall_core::search::Budgets;
use recall_core::Response;
use std::sync::Arc;
use std::time::Duration;

/// The team flags of `recall search --remote`.
#[derive(Clone, Debug)]
pub struct Flags<'a> {
    /// `--host`.
    pub hosts: Option<&'a str>,
    /// `--remote-cache-mb`, in bytes.
    pub cache_cap: u64,
    /// `--stats`: what was fetched, on stderr.
    pub stats: bool,
}

/// Searches the union; a `QueryError` comes back inside the `anyhow::Error`.
pub fn search(
    ctx: &Context,
    url: &str,
    flags: &Flags<'_>,
    refresh: bool,
    query: &Query,
) -> anyhow::Result<Response> {
    if refresh {
        ctx.refresh();
    }
    let opts = TeamOptions {
        hosts: flags.hosts.map(crate::remote::union::host_list),
        cache_cap: flags.cache_cap,
        ..TeamOptions::default()
    };
    let ident = hostid::searcher(ctx.store.dir())?;
    let remote = Remote::connect(url, Duration::from_secs(10))?;
    let rt = remote::runtime()?;
    let local = StoreCatalog::new(ctx.store.clone(), Arc::new(Arena::default()));
    let building = !ctx.indexer.backfilled();
    let budgets = Budgets {
        scan_ms: u64::MAX,
        fresh_bytes: u64::MAX,
        ..Budgets::default()
    };
    let catalog = UnionCatalog::open(
        local,
        &ident,
        Some(Arc::new(remote)),
        rt.handle().clone(),
        &opts,
        query,
    )?;
    let searched = std::time::Instant::now();
    let r = catalog.search(query, building, budgets);
    if flags.stats {
        eprintln!(
            "recall: fetched {}; verified {}; opened in {} ms, searched in {} ms",
            catalog.fetched(),
            catalog.verified(),
            catalog.open_time().as_millis(),
            searched.elapsed().as_millis()
        );
    }
    let r = r?;
    drop(catalog);
    rt.shutdown_timeout(Duration::from_secs(1));
    Ok(r)
}

/// Starts publishing `store` to `url` after every sweep that wrote.
pub fn follow(
    store: &Arc<crate::store::Store>,
    url: &str,
    name: Option<&str>,
) -> anyhow::Result<crate::remote::follow::Follower> {
    let ident = hostid::identity(store.dir(), name)?;
    let remote = Remote::connect(url, Duration::from_secs(60))?;
    eprintln!(
        "recall: publishing to {url} as {} ({})",
        ident.name, ident.id
    );
    Ok(crate::remote::follow::spawn(
        store.clone(),
        remote,
        ident,
        Duration::from_secs(5),
    ))
}

/// `recall serve --remote`: the catalog of `local` with its searches over
/// the union.
pub fn catalog(
    local: StoreCatalog,
    url: &str,
    name: Option<&str>,
    cache_cap: u64,
) -> anyhow::Result<Arc<dyn crate::engine::ReadCatalog>> {
    let ident = match name {
        Some(_) => hostid::identity(local.store().dir(), name)?,
        None => hostid::searcher(local.store().dir())?,
    };
    let remote = Remote::connect(url, Duration::from_secs(10))?;
    eprintln!("recall: searches also cover the hosts published under {url}");
    Ok(Arc::new(
        crate::remote::serve::TeamCatalog::new(local, ident, remote)?.with_cache_cap(cache_cap),
    ))
}
