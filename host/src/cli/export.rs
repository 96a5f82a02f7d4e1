//! `recall export <key> -o FILE.zip`: the same ZIP as
//! `GET /api/session/{key}/export` — the session's source files and its
//! descendants', plus `recall-export.json`.

use super::{Context, Found, Globals};
use crate::export::{self, ExportError};
use crate::fit::sanitize;
use anyhow::{bail, Context as _};
use clap::Args;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

/// Flags of `recall export`.
#[derive(Clone, Debug, Args)]
pub struct ExportArgs {
    /// The session key (`<source>:<session_id>`).
    pub key: String,
    /// Where to write the ZIP.
    #[arg(short = 'o', long = "output", value_name = "FILE.zip")]
    pub output: PathBuf,
}

/// Runs `recall export`.
pub fn run(g: &Globals, a: ExportArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    ctx.refresh();
    let manifest = ctx.store.current()?;
    let plan = match export::plan(&manifest, &a.key, ctx.now_ms) {
        // As over HTTP: nothing from outside the source roots.
        Ok(p) => p.confined_to(roots(&ctx.indexer.options().roots)),
        Err(ExportError::NotFound) => {
            bail!("session_not_found: no session {}", sanitize(&a.key))
        }
        Err(e) => return Err(e.into()),
    };
    let tmp = a.output.with_extension("zip.partial");
    let file = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    let report = match export::write_zip(&plan, BufWriter::new(file)) {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e).context("export failed");
        }
    };
    std::fs::rename(&tmp, &a.output)
        .with_context(|| format!("cannot write {}", a.output.display()))?;
    // The key and the path come from the command line: never echo control
    // characters to the terminal.
    eprintln!(
        "recall: exported {} of {} source file(s) of {} to {}",
        report.written,
        plan.files.len(),
        sanitize(&a.key),
        sanitize(&a.output.display().to_string())
    );
    for (name, reason) in &report.left_out {
        eprintln!("recall: left out {}: {}", sanitize(name), sanitize(reason));
    }
    Ok(if report.left_out.is_empty() {
        Found::Yes
    } else {
        Found::Partial
    })
}

fn roots(r: &crate::extract::Roots) -> Vec<PathBuf> {
    r.all().into_iter().map(|(_, p)| p.to_path_buf()).collect()
}
