//! Who gets one of the server's connection slots. Loopback peers (the
//! person at this machine) and remote peers draw from separate pools, so
//! remote connections never lock the local user out; one remote address
//! holds at most [`MAX_PER_PEER`] connections; and a full pool makes room
//! by closing the connection that has waited longest for a request head (a
//! head sent slowly or not at all, a kept-alive connection between
//! requests) once it has waited [`EVICT_AFTER`]. Slow or silent
//! connections therefore cannot keep out a client that sends its request,
//! authenticated or not: a pool turns a connection away only when every
//! slot is serving a request or was idle for less than [`EVICT_AFTER`].
//!
//! A connection is *serving* from the moment its request head is parsed
//! until its response body is dropped (sent, or abandoned): [`Slot::busy`]
//! and the guard it returns.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Connections one remote address may hold at once.
pub const MAX_PER_PEER: usize = 16;
/// Slots kept for loopback peers, beside the remote pool (the default of
/// [`super::ConnLimits::loopback_connections`]).
pub const LOOPBACK_SLOTS: usize = 64;
/// How long a connection must have waited for a request head before a full
/// pool closes it to admit another.
pub const EVICT_AFTER: Duration = Duration::from_millis(250);
/// How long an admitted connection waits for the slot its eviction frees.
const EVICTION_WAIT: Duration = Duration::from_secs(2);

/// Which pool a peer draws from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pool {
    Loopback,
    Remote,
}

impl Pool {
    fn of(peer: &SocketAddr) -> Pool {
        if peer.ip().to_canonical().is_loopback() {
            Pool::Loopback
        } else {
            Pool::Remote
        }
    }
}

/// The slots of a server.
#[derive(Debug)]
pub struct Admission {
    loopback: Arc<Semaphore>,
    remote: Arc<Semaphore>,
    slots: (usize, usize),
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    conns: HashMap<u64, Conn>,
    per_peer: HashMap<IpAddr, usize>,
}

#[derive(Debug)]
struct Conn {
    pool: Pool,
    /// Requests being served (0 or 1 on HTTP/1.1).
    serving: usize,
    /// Since when it waits for a request head (`None` while serving, or
    /// once chosen for eviction).
    waiting_since: Option<Instant>,
    evict: Arc<Notify>,
}

/// What [`Admission::admit`] decided.
pub enum Admit {
    /// A slot, now.
    Now(Slot),
    /// A slot once the connection evicted for it has closed: await
    /// [`Pending::slot`].
    Soon(Pending),
    /// No slot: answer `busy`.
    Refused,
}

/// A connection admitted against an eviction, waiting for the freed slot.
pub struct Pending {
    admission: Arc<Admission>,
    pool: Pool,
    peer: Option<PeerHold>,
}

impl Pending {
    /// The slot, or `None` when none came free in time.
    pub async fn slot(self) -> Option<Slot> {
        let sem = self.admission.semaphore(self.pool);
        let permit = tokio::time::timeout(EVICTION_WAIT, sem.acquire_owned())
            .await
            .ok()?
            .ok()?;
        Some(self.admission.register(self.pool, permit, self.peer))
    }
}

/// A remote address's count of open connections, given back on drop.
struct PeerHold {
    admission: Arc<Admission>,
    ip: IpAddr,
}

impl Drop for PeerHold {
    fn drop(&mut self) {
        let mut st = self.admission.lock();
        if let Some(n) = st.per_peer.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                st.per_peer.remove(&self.ip);
            }
        }
    }
}

/// An admitted connection's slot: freed on drop.
pub struct Slot {
    admission: Arc<Admission>,
    id: u64,
    evict: Arc<Notify>,
    _permit: OwnedSemaphorePermit,
    _peer: Option<PeerHold>,
}

/// A request being served: the connection waits for its next head once
/// this is dropped (with the response body).
pub struct Serving {
    admission: Arc<Admission>,
    id: u64,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let mut st = self.admission.lock();
        if let Some(c) = st.conns.get_mut(&self.id) {
            c.serving = c.serving.saturating_sub(1);
            if c.serving == 0 {
                c.waiting_since = Some(Instant::now());
            }
        }
    }
}

impl Slot {
    /// A request head was parsed: the connection is serving until the
    /// returned guard is dropped.
    pub fn busy(&self) -> Serving {
        if let Some(c) = self.admission.lock().conns.get_mut(&self.id) {
            c.serving += 1;
            c.waiting_since = None;
        }
        Serving {
            admission: self.admission.clone(),
            id: self.id,
        }
    }

    /// Resolves when the pool closes this connection to admit another.
    pub fn evicted(&self) -> Arc<Notify> {
        self.evict.clone()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.admission.lock().conns.remove(&self.id);
    }
}

impl Admission {
    /// `loopback` slots for loopback peers and `remote` for the others
    /// (each at least 1).
    pub fn with_slots(loopback: usize, remote: usize) -> Arc<Admission> {
        let (loopback, remote) = (loopback.max(1), remote.max(1));
        Arc::new(Admission {
            loopback: Arc::new(Semaphore::new(loopback)),
            remote: Arc::new(Semaphore::new(remote)),
            slots: (loopback, remote),
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn semaphore(&self, pool: Pool) -> Arc<Semaphore> {
        match pool {
            Pool::Loopback => self.loopback.clone(),
            Pool::Remote => self.remote.clone(),
        }
    }

    /// Decides for a new connection from `peer`.
    pub fn admit(self: &Arc<Self>, peer: &SocketAddr) -> Admit {
        let pool = Pool::of(peer);
        let hold = match pool {
            Pool::Loopback => None,
            Pool::Remote => {
                let ip = peer.ip().to_canonical();
                let mut st = self.lock();
                let n = st.per_peer.entry(ip).or_insert(0);
                if *n >= MAX_PER_PEER {
                    return Admit::Refused;
                }
                *n += 1;
                Some(PeerHold {
                    admission: self.clone(),
                    ip,
                })
            }
        };
        if let Ok(permit) = self.semaphore(pool).try_acquire_owned() {
            return Admit::Now(self.register(pool, permit, hold));
        }
        if self.evict_one(pool) {
            return Admit::Soon(Pending {
                admission: self.clone(),
                pool,
                peer: hold,
            });
        }
        Admit::Refused
    }

    /// Closes the connection of `pool` that has waited longest for a
    /// request head, if it has waited [`EVICT_AFTER`].
    fn evict_one(&self, pool: Pool) -> bool {
        let now = Instant::now();
        let mut st = self.lock();
        let victim = st
            .conns
            .iter_mut()
            .filter(|(_, c)| c.pool == pool)
            .filter_map(|(_, c)| c.waiting_since.map(|t| (t, c)))
            .filter(|(t, _)| now.saturating_duration_since(*t) >= EVICT_AFTER)
            .min_by_key(|(t, _)| *t);
        match victim {
            Some((_, c)) => {
                c.waiting_since = None;
                c.evict.notify_one();
                true
            }
            None => false,
        }
    }

    fn register(
        self: &Arc<Self>,
        pool: Pool,
        permit: OwnedSemaphorePermit,
        peer: Option<PeerHold>,
    ) -> Slot {
        let evict = Arc::new(Notify::new());
        let mut st = self.lock();
        st.next_id += 1;
        let id = st.next_id;
        st.conns.insert(
            id,
            Conn {
                pool,
                serving: 0,
                waiting_since: Some(Instant::now()),
                evict: evict.clone(),
            },
        );
        Slot {
            admission: self.clone(),
            id,
            evict,
            _permit: permit,
            _peer: peer,
        }
    }

    /// Waits until every slot is free again, or `grace` passed.
    pub async fn drained(&self, grace: Duration) {
        let all = async {
            let _ = self.loopback.acquire_many(self.slots.0 as u32).await;
            let _ = self.remote.acquire_many(self.slots.1 as u32).await;
        };
        let _ = tokio::time::timeout(grace, all).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().expect("an address")
    }

    fn now(a: Admit) -> Slot {
        match a {
            Admit::Now(s) => s,
            _ => panic!("not admitted at once"),
        }
    }

    #[tokio::test]
    async fn a_full_pool_evicts_the_longest_waiting_connection_and_never_a_serving_one() {
        let adm = Admission::with_slots(2, 2);
        let lo = addr("127.0.0.1:1");
        let a = now(adm.admit(&lo));
        let b = now(adm.admit(&lo));
        let _serving = b.busy();
        // Both just arrived: nothing has waited long enough.
        assert!(matches!(adm.admit(&lo), Admit::Refused));
        tokio::time::sleep(EVICT_AFTER).await;
        let evicted = a.evicted();
        let pending = match adm.admit(&lo) {
            Admit::Soon(p) => p,
            _ => panic!("no eviction"),
        };
        // `a` is told to close; `b` is serving and stays.
        tokio::time::timeout(Duration::from_millis(1), evicted.notified())
            .await
            .expect("a was evicted");
        assert!(
            matches!(adm.admit(&lo), Admit::Refused),
            "b is serving, a already chosen"
        );
        drop(a);
        assert!(pending.slot().await.is_some());
    }

    #[tokio::test]
    async fn remote_peers_never_take_the_loopback_pool_and_each_has_a_cap() {
        let adm = Admission::with_slots(1, 64);
        let mut held = Vec::new();
        for _ in 0..MAX_PER_PEER {
            held.push(now(adm.admit(&addr("192.0.2.7:1"))));
        }
        assert!(matches!(adm.admit(&addr("192.0.2.7:2")), Admit::Refused));
        assert!(matches!(
            adm.admit(&addr("[::ffff:192.0.2.7]:2")),
            Admit::Refused
        ));
        let other = now(adm.admit(&addr("192.0.2.8:1")));
        let local = now(adm.admit(&addr("127.0.0.1:9")));
        drop(held.pop());
        let _again = now(adm.admit(&addr("192.0.2.7:3")));
        drop((other, local));
        assert!(matches!(adm.admit(&addr("[::1]:5")), Admit::Now(_)));
    }
}
