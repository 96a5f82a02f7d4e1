//! The sweep's progress bar on a terminal (nothing when stderr is not one).

use crate::index::Progress;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A running progress bar, fed from the sweep's counters.
pub struct Bar {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Bar {
    /// Starts drawing `progress` on stderr if it is a terminal.
    pub fn start(progress: Arc<Progress>) -> Bar {
        let stop = Arc::new(AtomicBool::new(false));
        if !std::io::stderr().is_terminal() {
            return Bar { stop, handle: None };
        }
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let style = ProgressStyle::with_template(
                "{spinner} {msg} [{bar:20}] {binary_bytes}/{binary_total_bytes} {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            let bar = ProgressBar::new(0).with_style(style);
            while !flag.load(Relaxed) {
                let s = progress.snapshot();
                if s.files_due > 0 {
                    bar.set_length(s.bytes_due);
                    bar.set_position(s.bytes_done);
                    bar.set_message(format!("{}/{} files", s.files_done, s.files_due));
                    bar.tick();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Bar {
            stop,
            handle: Some(handle),
        }
    }
}

/// Dropping the bar stops and clears it.
impl Drop for Bar {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
