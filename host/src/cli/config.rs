//! `recall config get|set`: the store's index policy (`host/src/store/policy.rs`):
//! `enabled`, `history-days` and `exclude-paths` (a comma list of absolute
//! paths whose sessions, by cwd, are kept out of the index). A change says what it will retire before
//! it is saved; the next sweep (of any command, or a running `recall
//! serve`'s next start) then applies it. The global `--retention-days N` is
//! the same change as `recall config set history-days N`, made explicit on
//! stderr when it changes the stored value.

use super::{Context, Found, Globals};
use crate::store::policy::{self, Policy};
use crate::store::Store;
use clap::{Args, Subcommand, ValueEnum};

/// `recall config` options.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: Action,
}

/// `get` or `set`.
#[derive(Debug, Subcommand)]
pub enum Action {
    /// Print a policy value (both as `key = value` lines without a key).
    Get {
        /// Which value.
        key: Option<Key>,
        /// Print the whole policy as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Change a policy value: `history-days N` (0 keeps everything), `enabled true|false`
    /// or `exclude-paths '/abs/a,/abs/b'` (empty: none).
    Set {
        /// Which value.
        key: Key,
        /// The new value.
        value: String,
    },
}

/// The policy's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Key {
    /// Days of history kept (0 = everything).
    HistoryDays,
    /// Whether the indexer runs.
    Enabled,
    /// Paths whose sessions (by cwd) are kept out of the index.
    ExcludePaths,
}

/// Runs `recall config`.
pub fn run(g: &Globals, a: ConfigArgs) -> anyhow::Result<Found> {
    let ctx = Context::new(g)?;
    match a.action {
        Action::Get { json: true, .. } => {
            outln!("{}", serde_json::to_string(&ctx.policy)?)?;
        }
        Action::Get { key: Some(k), .. } => outln!("{}", value(&ctx.policy, k))?,
        Action::Get { key: None, .. } => {
            for k in [Key::Enabled, Key::HistoryDays, Key::ExcludePaths] {
                let line = format!("{} = {}", name(k), value(&ctx.policy, k));
                outln!("{}", line.trim_end())?;
            }
        }
        Action::Set { key, value: raw } => {
            let mut p = ctx.policy.clone();
            match key {
                Key::HistoryDays => {
                    let days = raw.trim().parse::<u32>().map_err(|_| {
                        anyhow::anyhow!(
                            "history-days takes a whole number of days (0 keeps everything)"
                        )
                    })?;
                    p = set_history_days(&ctx.store, ctx.now_ms, days)?;
                }
                Key::Enabled => {
                    p.enabled = match raw.trim() {
                        "true" | "on" | "yes" | "1" => true,
                        "false" | "off" | "no" | "0" => false,
                        _ => anyhow::bail!("enabled takes true or false"),
                    };
                    policy::save(ctx.store.dir(), &p)?;
                    eprintln!(
                        "recall: indexing {} for {}{}",
                        if p.enabled { "enabled" } else { "disabled" },
                        ctx.store.dir().display(),
                        if p.enabled {
                            ""
                        } else {
                            " (the index stays searchable; nothing new is indexed)"
                        }
                    );
                }
                Key::ExcludePaths => {
                    p.exclude_paths =
                        policy::parse_exclude_paths(&raw).map_err(|e| anyhow::anyhow!(e))?;
                    let manifest = ctx.store.current()?;
                    let n = manifest
                        .sessions
                        .values()
                        .filter(|e| policy::excluded(&p.exclude_paths, e.meta.cwd.as_deref()))
                        .count();
                    policy::save(ctx.store.dir(), &p)?;
                    eprintln!(
                        "recall: {} of {} indexed sessions lie under an excluded path and {} retired at the next sweep; \
                         sessions there are never indexed again while excluded",
                        n,
                        manifest.sessions.len(),
                        if n == 1 { "is" } else { "are" },
                    );
                }
            }
            outln!("{} = {}", name(key), value(&p, key))?;
        }
    }
    Ok(Found::Yes)
}

fn value(p: &Policy, k: Key) -> String {
    match k {
        Key::HistoryDays => p.history_days.to_string(),
        Key::Enabled => p.enabled.to_string(),
        Key::ExcludePaths => p.exclude_paths.join(","),
    }
}

fn name(k: Key) -> &'static str {
    match k {
        Key::HistoryDays => "history-days",
        Key::Enabled => "enabled",
        Key::ExcludePaths => "exclude-paths",
    }
}

/// Sets the store's `history_days` to `days`, first saying on stderr what
/// the change retires (nothing is said when the value does not change).
/// Returns the policy now stored.
pub fn set_history_days(store: &Store, now_ms: i64, days: u32) -> anyhow::Result<Policy> {
    let (p, change) = crate::engine::set_history_days(store, now_ms, days)?;
    if let Some(change) = change {
        eprintln!("recall: {change}");
    }
    Ok(p)
}

/// The policy a command runs under: the stored one, after the explicit
/// `--retention-days` change when it was given.
pub fn resolve(store: &Store, g: &Globals, now_ms: i64) -> anyhow::Result<Policy> {
    match g.retention_days {
        Some(days) => set_history_days(store, now_ms, days),
        None => Ok(policy::load(store.dir())?),
    }
}
