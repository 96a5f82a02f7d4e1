//! Build tasks for recall, run as `cargo xtask <task>`.
//!
//! * `cargo xtask wasm` — builds `recall-core` for `wasm32-unknown-unknown`
//!   (release, `+simd128`, size-tuned, paths remapped so the bytes do not
//!   depend on where the repository or the toolchain live) and writes the
//!   `wasm-bindgen --target web` output to `pkg/`.
//! * `cargo xtask wasm --check` — the same build into a temporary directory;
//!   fails, listing the files, when `pkg/` differs from it.
//!
//! The wasm-bindgen CLI must be exactly the version of the `wasm-bindgen`
//! crate in `Cargo.lock` (their output formats are tied together);
//! `scripts/test.sh` installs it when missing.

mod wasm;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("wasm") => wasm::run(&args[1..]),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("xtask: {msg}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: cargo xtask wasm [--check]\n\
    \x20 wasm          rebuild pkg/ (recall-core for wasm32 + wasm-bindgen --target web)\n\
    \x20 wasm --check  rebuild into a temp dir and fail if pkg/ differs";
