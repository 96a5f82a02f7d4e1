//! A sweep worker's helper thread: runs one job at a time under a deadline
//! on a thread that outlives the job, so a sweep does not start a thread
//! per unit and per file (thousands in a backfill: 5 % of its CPU went to
//! creating and tearing them down).
//!
//! A job that does not finish within its deadline (a read stalled on a hung
//! mount) is abandoned with its thread, exactly as a thread of its own
//! would be: the thread finishes that job on its own, finds no more work
//! and ends; the next job gets a fresh thread. A job that panics is
//! reported as such and the thread goes on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::Duration;

type Job = Box<dyn FnOnce() + Send>;

/// Why a job gave no answer.
#[derive(Debug)]
pub(super) enum HelperError {
    /// No thread could be started.
    Spawn(std::io::Error),
    /// The job did not finish within its deadline (its thread was left
    /// behind).
    TimedOut,
    /// The job panicked.
    Panicked,
}

/// One worker's helper (no thread until the first job).
#[derive(Default)]
pub(super) struct Helper {
    jobs: Option<mpsc::Sender<Job>>,
}

impl Helper {
    /// Runs `f` on the helper thread and waits for its answer at most
    /// `deadline`.
    pub(super) fn run<T: Send + 'static>(
        &mut self,
        deadline: Duration,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, HelperError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        let job = match &self.jobs {
            Some(jobs) => match jobs.send(job) {
                Ok(()) => None,
                // Its thread is gone: start another.
                Err(mpsc::SendError(job)) => Some(job),
            },
            // No thread yet.
            None => Some(job),
        };
        if let Some(job) = job {
            let jobs = self.spawn().map_err(HelperError::Spawn)?;
            // The thread just started and only ends when `jobs` is dropped.
            if jobs.send(job).is_err() {
                return Err(HelperError::Panicked);
            }
            self.jobs = Some(jobs);
        }
        match rx.recv_timeout(deadline) {
            Ok(v) => Ok(v),
            // The job unwound (its answer's sender dropped unsent).
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(HelperError::Panicked),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                // Abandoned: the thread ends once this job does.
                self.jobs = None;
                Err(HelperError::TimedOut)
            }
        }
    }

    fn spawn(&self) -> std::io::Result<mpsc::Sender<Job>> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("recall-extract".into())
            .spawn(move || {
                for job in rx {
                    // A panicking job only loses its own answer.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            })?;
        Ok(tx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;

    #[test]
    fn one_thread_serves_jobs_until_one_stalls_or_panics() {
        let mut h = Helper::default();
        let ids: Vec<_> = (0..3)
            .map(|_| {
                h.run(Duration::from_secs(5), || std::thread::current().id())
                    .unwrap()
            })
            .collect();
        assert!(ids.windows(2).all(|w| w[0] == w[1]), "one thread: {ids:?}");

        // A panic is reported and the same thread serves the next job.
        assert!(matches!(
            h.run(Duration::from_secs(5), || -> u8 { panic!("job") }),
            Err(HelperError::Panicked)
        ));
        let after = h
            .run(Duration::from_secs(5), || std::thread::current().id())
            .unwrap();
        assert_eq!(after, ids[0]);

        // A stalled job is abandoned with its thread; the next job runs at
        // once on a new one, and the stalled one still finishes.
        let finished = Arc::new(AtomicUsize::new(0));
        let f = finished.clone();
        let (release, wait) = mpsc::channel::<()>();
        assert!(matches!(
            h.run(Duration::from_millis(50), move || {
                let _ = wait.recv();
                f.fetch_add(1, SeqCst);
            }),
            Err(HelperError::TimedOut)
        ));
        let fresh = h
            .run(Duration::from_secs(5), || std::thread::current().id())
            .unwrap();
        assert_ne!(fresh, ids[0]);
        release.send(()).unwrap();
        for _ in 0..500 {
            if finished.load(SeqCst) == 1 {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the abandoned job never finished");
    }
}
