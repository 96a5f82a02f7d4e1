//! `recall forget KEY`: takes one session out of the index and keeps it
//! out while its transcript is unchanged (a tombstone; see
//! `store/publish.rs`). Every cursor minted before expires; the generation
//! and segment files holding its text are deleted after the cursor grace.
//! Its transcript is never touched.

use super::{Context, Found, Globals};
use clap::Args;

/// `recall forget` options.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The session key (`source:session-id`, as `recall sessions` lists it).
    pub key: String,
}

/// Runs `recall forget`.
pub fn run(g: &Globals, a: ForgetArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    let key = a.key.trim();
    match ctx.store.forget(key)? {
        Some(out) => {
            outln!(
                "forgot {key} (revision {}); it stays out of the index until its transcript changes",
                out.revision
            )?;
            Ok(Found::Yes)
        }
        None => {
            eprintln!("recall: no session {key} is indexed (see `recall sessions`)");
            Ok(Found::No)
        }
    }
}
