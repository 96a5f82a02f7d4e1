//! `recall clear`: empty the store; its new store id expires every cursor.

use super::{Context, Found, Globals};
use clap::Args;

/// `recall clear` options.
#[derive(Debug, Args)]
pub struct ClearArgs {}

/// Runs `recall clear`.
pub fn run(g: &Globals, _a: ClearArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let m = ctx.store.clear()?;
    outln!(
        "cleared {} (store id {}, revision {}); the next index or search rebuilds it",
        ctx.store.dir().display(),
        m.store_id,
        m.revision
    )?;
    Ok(Found::Yes)
}
