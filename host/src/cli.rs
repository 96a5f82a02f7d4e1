//! The command line (DESIGN.md §9).

/// Runs the CLI.
pub fn main() -> anyhow::Result<()> {
    anyhow::bail!("recall: not built yet")
}
