//! Standard output for every command, and how a run's error is reported.
//!
//! Commands print with `outln!`, which returns the write's
//! `io::Result` instead of panicking as `println!` does. A reader that went
//! away (`recall show … | head`) makes the write fail with `BrokenPipe`; the
//! error travels up to [`super::main`], which ends the run quietly with exit 0,
//! like ripgrep: nothing on stderr, no panic.

use std::io;

/// Writes one line to stdout, returning the write's `io::Result`.
macro_rules! outln {
    () => {
        $crate::cli::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::line(format_args!($($arg)*))
    };
}

/// Writes `args` and a newline to stdout (what `outln!` calls).
pub fn line(args: std::fmt::Arguments<'_>) -> io::Result<()> {
    use io::Write;
    let mut out = io::stdout().lock();
    out.write_fmt(args)?;
    out.write_all(b"\n")
}

/// Whether `e` (or anything it was caused by) is a write to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .and_then(|j| j.io_error_kind())
                .is_some_and(|k| k == io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes on one line, each cause once: a message that
/// already quotes its source (`cannot listen on …: Address in use`) is not
/// followed by the same text again.
pub fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot listen on 127.0.0.1:1: {source}")]
    struct Bind {
        source: io::Error,
    }

    #[test]
    fn a_cause_already_quoted_is_not_repeated() {
        let e = anyhow::Error::new(Bind {
            source: io::Error::new(io::ErrorKind::AddrInUse, "Address in use"),
        });
        assert_eq!(format!("{e:#}").matches("Address in use").count(), 2);
        assert_eq!(message(&e), "cannot listen on 127.0.0.1:1: Address in use");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(message(&e), "outer: inner");
    }

    #[test]
    fn broken_pipes_are_recognised_through_context() {
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("broken pipe")));
    }
}
