//! `recall`: indexes coding-agent transcripts and serves search.

fn main() -> std::process::ExitCode {
    recall_host::cli::main()
}
