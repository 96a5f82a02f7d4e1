//! `recall serve --publish s3://…`: a background thread that publishes the
//! store whenever its catalog moved (a sweep wrote: new store id or
//! revision), checking every few seconds; a failed publish is logged and
//! retried at the next check (uploads already done are skipped then).

use super::hostid::HostIdentity;
use super::{publish, Remote};
use crate::store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The running publisher; stops (and joins) on drop.
pub struct Follower {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts publishing `store` as `ident` to `remote`, checking every `every`.
pub fn spawn(store: Arc<Store>, remote: Remote, ident: HostIdentity, every: Duration) -> Follower {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("recall-publish".into())
        .spawn(move || {
            let rt = match super::runtime() {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::error!("team publish disabled: {e}");
                    return;
                }
            };
            let mut last: Option<(String, u64)> = None;
            let mut next = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                if Instant::now() >= next {
                    next = Instant::now() + every;
                    let now = match store.current() {
                        Ok(m) => (m.store_id.clone(), m.revision),
                        Err(e) => {
                            tracing::warn!("team publish: store unreadable: {e}");
                            continue;
                        }
                    };
                    if last.as_ref() != Some(&now) {
                        let ms = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_millis() as i64);
                        match rt.block_on(publish::publish(
                            &remote,
                            &store,
                            &ident,
                            8,
                            ms,
                            crate::store::snapshots::GRACE_MS,
                        )) {
                            Ok(r) => {
                                tracing::info!(
                                    "team publish: revision {} ({} uploaded, {} skipped)",
                                    r.revision,
                                    r.uploaded,
                                    r.skipped
                                );
                                last = Some((r.store_id, r.revision));
                            }
                            Err(e) => tracing::warn!("team publish failed (retrying): {e}"),
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        })
        .ok();
    Follower { stop, thread }
}
