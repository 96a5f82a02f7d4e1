//! `recall tui [q…]`: the interactive search ([`crate::tui`]). The index is
//! refreshed first, as for `recall search`; the chosen session's resume
//! command is printed on stdout (exit 0), so `$(recall tui)` resumes it.
//! Quitting without choosing prints nothing and exits 1.

use super::{Context, Found, Globals};
use crate::tui::data::{Data, Filters};
use anyhow::bail;
use clap::Args;
use recall_core::model::Source;
use std::io::IsTerminal;

/// `recall tui` options.
#[derive(Debug, Args)]
pub struct TuiArgs {
    /// The query to start with (words joined with single spaces).
    #[arg(value_name = "Q")]
    pub words: Vec<String>,
    /// Only this source (`s` changes it).
    #[arg(long, help = format!("Only this source: {} (`s` changes it)", crate::extract::source_ids()))]
    pub source: Option<String>,
    /// Only sessions under this working directory (`p` changes it).
    #[arg(long, value_name = "DIR")]
    pub project: Option<String>,
    /// Read the store as it is, without the sweep first.
    #[arg(long)]
    pub no_refresh: bool,
}

/// Runs `recall tui`.
pub fn run(g: &Globals, a: TuiArgs) -> anyhow::Result<Found> {
    let source = match a.source.as_deref() {
        None => None,
        Some(s) => match Source::parse(s) {
            Some(s) => Some(s),
            None => bail!("invalid_param: unknown source {s:?}"),
        },
    };
    if !std::io::stdin().is_terminal() && !has_tty() {
        bail!("the TUI needs a terminal (stdin is not one and /dev/tty cannot be opened)");
    }
    let ctx = Context::new(g)?;
    // A running `recall serve` of this store keeps it fresh by its watch and
    // answers the searches (as for `recall search`); else sweep here first.
    let daemon = crate::http::client::find(ctx.store.dir());
    if daemon.is_none() && !a.no_refresh {
        ctx.refresh();
    }
    let data = Data::new(ctx.store.clone(), !ctx.indexer.backfilled()).through(daemon);
    let looked_in = ctx
        .indexer
        .options()
        .roots
        .all()
        .into_iter()
        .map(|(source, root)| format!("{:<12} {}", source.as_str(), root.display()))
        .collect();
    let opts = crate::tui::Options {
        looked_in,
        query: a.words.join(" "),
        filters: Filters {
            source,
            project: a
                .project
                .map(|p| p.trim_end_matches('/').to_string())
                .filter(|p| !p.is_empty()),
        },
    };
    match crate::tui::run(data, opts)? {
        Some(cmd) => {
            outln!("{cmd}")?;
            Ok(Found::Yes)
        }
        None => Ok(Found::No),
    }
}

/// Whether a controlling terminal can be opened.
fn has_tty() -> bool {
    #[cfg(unix)]
    {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok()
    }
    #[cfg(not(unix))]
    {
        std::io::stderr().is_terminal()
    }
}
