//! `recall`: indexes coding-agent transcripts and serves search.

fn main() -> anyhow::Result<()> {
    recall_host::cli::main()
}
