//! Two indexers running at once on one store (two processes, and two
//! indexers in one process) leave it correct: every session present once,
//! every referenced generation on disk, no lock left behind.

mod store_support;

use recall_host::extract::Roots;
use recall_host::index::{IndexOptions, Indexer};
use recall_host::store::Store;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::sync::Arc;
use store_support::*;

const SESSIONS: usize = 20;

fn expected() -> Vec<String> {
    (0..SESSIONS).map(session_key).collect()
}

#[test]
fn two_processes_sweeping_together_leave_the_store_correct() {
    let home = temp_dir("conc-proc");
    let files: Vec<_> = (0..SESSIONS)
        .map(|n| write_session(&home, n, 6, 800))
        .collect();
    for (round, file) in files.iter().enumerate().take(8) {
        if round % 2 == 0 {
            let _ = fs::remove_dir_all(store_dir(&home));
        } else {
            let mut f = OpenOptions::new().append(true).open(file).unwrap();
            f.write_all(
                pi_message(
                    &format!("x{round}"),
                    None,
                    "user",
                    &format!("late word w{round}late"),
                    1_795_000_000_000,
                )
                .as_bytes(),
            )
            .unwrap();
        }
        let children: Vec<_> = (0..2)
            .map(|_| {
                recall(&home)
                    .arg("index")
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for mut c in children {
            assert!(
                c.wait().unwrap().success(),
                "round {round}: an indexer failed"
            );
        }
        let m = check_store(&home).unwrap().expect("manifest");
        assert_eq!(
            m.sessions.keys().cloned().collect::<Vec<_>>(),
            expected(),
            "round {round}"
        );
        assert!(!store_dir(&home).join("writer.lock").exists());
        if round % 2 == 1 {
            let out = run_ok(
                &home,
                &["search", "--json", "--no-refresh", &format!("w{round}late")],
                0,
            );
            assert!(out.contains(&session_key(round)));
        }
    }
}

#[test]
fn two_indexers_in_one_process_agree() {
    let home = temp_dir("conc-threads");
    for n in 0..SESSIONS {
        write_session(&home, n, 4, 400);
    }
    let dir = store_dir(&home);
    let make = || {
        let store = Arc::new(Store::open(&dir).unwrap());
        let roots = Roots::resolve(&home, |_| None);
        let mut o = IndexOptions::new(roots);
        o.retention_days = 0;
        Indexer::new(store, o)
    };
    let (a, b) = (make(), make());
    std::thread::scope(|s| {
        let ha = s.spawn(|| a.sweep());
        let hb = s.spawn(|| b.sweep());
        ha.join().unwrap().unwrap();
        hb.join().unwrap().unwrap();
    });
    let m = check_store(&home).unwrap().expect("manifest");
    assert_eq!(m.sessions.keys().cloned().collect::<Vec<_>>(), expected());
    // Both agree the store is current: a third sweep reads nothing.
    let r = make().sweep().unwrap();
    assert_eq!(r.extracted, 0);
    assert_eq!(r.unchanged, SESSIONS);
}
