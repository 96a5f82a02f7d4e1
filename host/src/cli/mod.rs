//! The command line (DESIGN.md §9): one module per command.
//!
//! Exit codes follow grep: 0 found (or done), 1 nothing found, 2 error —
//! usage errors included. `serve`, `demo`, `export` and `report` join the
//! [`Command`] enum with their own modules when they land.

#[macro_use]
pub(crate) mod out;
mod agent;
mod bar;
mod bench;
mod clear;
mod completions;
mod config;
mod demo;
mod export;
mod forget;
mod grep;

mod index;
mod man;
mod mcp;
mod open;
mod pages;
mod publish;
mod render;
mod report;
mod search;
mod serve;
mod service;
mod sessions;
mod show;
mod show_page;
mod show_query;
mod status;
mod team;
mod trace;
mod tui;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

pub use open::Context;

/// recall: find anything said in any coding-agent conversation on this machine.
#[derive(Debug, Parser)]
#[command(name = "recall", version = version(), about, max_term_width = 100)]
pub struct Cli {
    /// Options every command takes.
    #[command(flatten)]
    pub globals: Globals,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Clone, Debug, Args)]
pub struct Globals {
    /// Resolve every source root and the store (DIR/.recall) relative to DIR
    /// instead of $HOME; a set $RECALL_HOME or source variable still wins.
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Fix the clock (epoch ms) used for retention, horizons and relative
    /// times (`--since 7d`).
    #[arg(long, global = true, value_name = "MS")]
    pub now: Option<i64>,
    /// Print times (and read `today`/`yesterday`) in UTC instead of the
    /// local zone (`TZ`, else the system zone).
    #[arg(long, global = true)]
    pub utc: bool,
    /// Set the store's history policy to N days first, exactly as `recall
    /// config set history-days N` (0 keeps everything); without it every
    /// command uses the stored policy (default 0: everything).
    #[arg(long, global = true, value_name = "N")]
    pub retention_days: Option<u32>,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one sweep: discover, extract what changed, publish (progress bar on a terminal).
    Index(index::IndexArgs),
    /// Search every conversation (words are joined with single spaces into q).
    Search(search::SearchArgs),
    /// Deep Search: scan the sessions' source files themselves (every record kind, .zst decoded).
    Grep(grep::GrepArgs),
    /// Upload this store's index for team search: recall publish s3://bucket/prefix.
    Publish(publish::PublishArgs),
    /// List sessions, newest first.
    Sessions(sessions::SessionsArgs),
    /// Print one session's records in order.
    Show(show::ShowArgs),
    /// A session's lineage, or with --index/--locator what superseded one record.
    Trace(trace::TraceArgs),
    /// Show the store and the indexer's state.
    Status(status::StatusArgs),
    /// Show or change the store's index policy: `config get|set history-days N`, `config set enabled true|false`.
    Config(config::ConfigArgs),
    /// Empty the store (a new store id expires every cursor).
    Clear(clear::ClearArgs),
    /// Take one session out of the index and keep it out while its transcript is unchanged.
    Forget(forget::ForgetArgs),
    /// Index continuously and serve search, sessions and shards over HTTP (127.0.0.1:7979).
    Serve(serve::ServeArgs),
    /// Write a small bundled demo home and serve it.
    Demo(demo::DemoArgs),
    /// Write a session's source files (and its descendants') to a ZIP.
    Export(export::ExportArgs),
    /// Write one self-contained HTML file that shows and searches sessions offline.
    Report(report::ReportArgs),
    /// Search interactively: type to search, Enter to read, `r` to print the resume command.
    Tui(tui::TuiArgs),
    /// Print a shell completion script (e.g. `recall completions bash > /etc/bash_completion.d/recall`).
    Completions(completions::CompletionsArgs),
    /// Print the man page recall(1) (`recall man > ~/.local/share/man/man1/recall.1`).
    Man(man::ManArgs),
    /// Run `recall serve` at login (a systemd user unit or a launchd agent): install, uninstall, status.
    Service(service::ServiceArgs),
    /// Serve the read-only agent tools over MCP on stdio (`claude mcp add recall -- recall mcp`).
    Mcp(mcp::McpArgs),
    /// Time a fixed query mix against a warm arena (benchmarks).
    #[command(hide = true)]
    BenchSearch(bench::BenchArgs),
}

/// `recall --version`: the release and the on-disk formats it reads and
/// writes (a store of another index format is not this build's).
pub fn version() -> &'static str {
    static V: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    V.get_or_init(|| {
        let format = crate::store::store_dir(std::path::Path::new(""));
        format!(
            "{} (index format {}, parser {})",
            env!("CARGO_PKG_VERSION"),
            format.file_name().and_then(|f| f.to_str()).unwrap_or("?"),
            crate::index::PARSER_VERSION
        )
    })
}

/// How a command ended, for the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Something was found (or the command simply succeeded): exit 0.
    Yes,
    /// Nothing was found: exit 1.
    No,
    /// The command did its work but some of it could not be done (`recall
    /// index`: units not indexed, or a root that cannot be read; `recall
    /// export`: source files left out — each named in the report; `recall
    /// search`: sessions left out because their index files are damaged): exit 3,
    /// so a script notices.
    Partial,
}

/// Runs the CLI and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => ExitCode::from(2),
            };
        }
    };
    match run(cli) {
        Ok(Found::Yes) => ExitCode::SUCCESS,
        Ok(Found::No) => ExitCode::from(1),
        Ok(Found::Partial) => ExitCode::from(3),
        // The reader went away (`recall show … | head`): end quietly.
        Err(e) if out::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("recall: {}", out::message(&e));
            ExitCode::from(2)
        }
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<Found> {
    let g = &cli.globals;
    crate::clock::init(g.now, g.utc);
    match cli.command {
        Command::Index(a) => index::run(g, a),
        Command::Search(a) => search::run(g, a),
        Command::Grep(a) => grep::run(g, a),
        Command::Publish(a) => publish::run(g, a),
        Command::Sessions(a) => sessions::run(g, a),
        Command::Show(a) => show::run(g, a),
        Command::Trace(a) => trace::run(g, a),
        Command::Status(a) => status::run(g, a),
        Command::Clear(a) => clear::run(g, a),
        Command::Forget(a) => forget::run(g, a),
        Command::Config(a) => config::run(g, a),
        Command::Serve(a) => serve::run(g, a),
        Command::Demo(a) => demo::run(g, a),
        Command::Export(a) => export::run(g, a),
        Command::Report(a) => report::run(g, a),
        Command::Tui(a) => tui::run(g, a),
        Command::Completions(a) => completions::run(a),
        Command::Man(a) => man::run(a),
        Command::Service(a) => service::run(g, a),
        Command::Mcp(a) => mcp::run(g, a),
        Command::BenchSearch(a) => bench::run(g, a),
    }
}
