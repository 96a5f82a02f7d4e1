//! `recall demo`: writes the bundled demo home (one fictional project, a few
//! sessions per agent in each agent's real format) and serves it like
//! `recall serve --home DIR`, ignoring the real agents' environment.

use super::serve::{open_home_store, serve_home, ServeArgs};
use super::{Found, Globals};
use clap::Args;
use std::path::PathBuf;

/// Flags of `recall demo`.
#[derive(Clone, Debug, Args)]
pub struct DemoArgs {
    /// Where to write the demo home (default: recall-demo in the temp dir).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Only write the demo home and print its path; do not serve.
    #[arg(long)]
    pub no_serve: bool,
    /// Server flags.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Runs `recall demo`.
pub fn run(g: &Globals, a: DemoArgs) -> anyhow::Result<Found> {
    let dir = a
        .dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("recall-demo"));
    let written = crate::demo::write(&dir)?;
    eprintln!(
        "recall: wrote the demo home to {} ({} files, {} sessions)",
        dir.display(),
        written.files,
        written.sessions
    );
    if a.no_serve {
        outln!("{}", dir.display())?;
        return Ok(Found::Yes);
    }
    let (store, opts) = open_home_store(&dir, g)?;
    serve_home(store, opts, &a.serve, true)
}
