//! The command line (DESIGN.md §9): one module per command.
pub fn main() -> anyhow::Result<()> { anyhow::bail!("todo") }
