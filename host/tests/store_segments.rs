//! Index segments in the store: written after each sweep that changes the
//! manifest, a small one per live append, merged under the tiered policy,
//! collected once unlisted, never trusted when torn (the search scans and the
//! next sweep rebuilds), and answers identical to a search without them.

mod store_support;

use recall_core::search::Budgets;
use recall_core::{Request, Response};
use recall_host::engine::arena::Arena;
use recall_host::engine::catalog::StoreCatalog;
use recall_host::store::segments::{self, MERGE_FACTOR};
use recall_host::store::Store;
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use store_support::*;

fn open(home: &Path) -> Arc<Store> {
    Arc::new(Store::open(&store_dir(home)).unwrap())
}

fn search(store: &Arc<Store>, q: &str, sort: &str) -> Response {
    let catalog = StoreCatalog::new(store.clone(), Arc::new(Arena::default()));
    let mut r = Request::new(q);
    r.sort = Some(sort.into());
    r.scope = Some("all".into());
    r.limit = Some("100".into());
    let mut resp = catalog
        .search(&r.parse().unwrap(), false, Budgets::default())
        .unwrap();
    resp.took_ms = 0;
    resp
}

/// Every generation of the manifest is covered by exactly one live segment.
fn assert_covered(store: &Store) {
    let m = store.current().unwrap();
    let segs = store.live_segments();
    let list = store.segment_list().unwrap();
    assert_eq!(
        segs.len(),
        list.segments.len(),
        "every listed segment opens"
    );
    let mut seen = HashSet::new();
    for s in &segs {
        for n in s.names() {
            if m.sessions.values().any(|e| &e.generation_file == n) {
                assert!(seen.insert(n.clone()), "{n} is covered twice");
            }
        }
    }
    for e in m.sessions.values() {
        assert!(
            seen.contains(&e.generation_file),
            "{} is not covered",
            e.generation_file
        );
    }
}

fn append(path: &Path, n: usize, m: usize, text: &str) {
    let id = format!("{n:04x}{m:04x}");
    let parent = format!("{n:04x}{:04x}", m - 1);
    let ts = 1_790_000_000_000 + n as i64 * 3_600_000 + m as i64 * 1000;
    let line = pi_message(&id, Some(&parent), "user", text, ts);
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(line.as_bytes())
        .unwrap();
}

#[test]
fn segments_cover_the_store_and_change_no_answer() {
    let home = temp_dir("seg-cover");
    for n in 1..=6 {
        write_session(&home, n, 3, 300);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let queries = ["lorem", "w3x1", "w5x0 ipsum", "am", "nothing-here", "x"];
    let mut with = Vec::new();
    for q in queries {
        for sort in ["newest", "relevance"] {
            with.push(serde_json::to_string(&search(&store, q, sort)).unwrap());
        }
    }
    assert!(with[2].contains(&session_key(3)));
    // Without the list, nothing is covered: every session is filtered and
    // scanned. The answers are the same bytes.
    fs::remove_file(store_dir(&home).join(segments::LIST)).unwrap();
    let bare = open(&home);
    assert!(bare.live_segments().is_empty());
    let mut without = Vec::new();
    for q in queries {
        for sort in ["newest", "relevance"] {
            without.push(serde_json::to_string(&search(&bare, q, sort)).unwrap());
        }
    }
    assert_eq!(with, without);
}

#[test]
fn a_live_append_writes_a_small_segment_and_small_ones_merge() {
    let home = temp_dir("seg-append");
    let mut paths = Vec::new();
    for n in 1..=8 {
        paths.push(write_session(&home, n, 2, 2000));
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let first = store.segment_list().unwrap();
    assert_eq!(first.segments.len(), 1);
    let big = first.segments[0].clone();
    assert_eq!(big.generations, 8);
    let mut most = 0;
    for (round, path) in paths.iter().enumerate().take(MERGE_FACTOR) {
        // Each round appends to another session.
        let n = round + 1;
        append(path, n, 4, &format!("freshword{round}"));
        run_ok(&home, &["index"], 0);
        let store = open(&home);
        assert_covered(&store);
        let list = store.segment_list().unwrap();
        most = most.max(list.segments.len());
        let r = search(&store, &format!("freshword{round}"), "newest");
        assert_eq!(r.sessions.len(), 1, "round {round}");
        assert_eq!(r.sessions[0].session_key, session_key(n));
        if round == 0 {
            // The big segment stays; the append got a segment of its own.
            assert!(list.segments.contains(&big), "{list:?}");
            let small = list.segments.iter().find(|s| s != &&big).unwrap();
            assert_eq!(small.generations, 1);
            let bytes = fs::metadata(store.segments_dir().join(&small.name))
                .unwrap()
                .len();
            assert!(bytes < 64 << 10, "a one-session segment is small: {bytes}");
        }
    }
    // The pass that lists a tier's MERGE_FACTOR-th segment merges the tier
    // (from postings, so a live append can afford it).
    assert_eq!(
        most,
        MERGE_FACTOR - 1,
        "small segments accumulate up to a tier"
    );
    let store = open(&home);
    let list = store.segment_list().unwrap();
    assert_eq!(
        list.segments.len(),
        2,
        "the full tier was merged into one segment, beside the newest: {list:?}"
    );
    // The merged segment still indexes the copy of the last round's session
    // that the append superseded (7 of its 8 generations are live).
    assert_covered(&store);
    assert_eq!(list.segments.iter().map(|s| s.generations).sum::<u64>(), 9);
    // Unlisted segments go once past the grace period.
    let store = open(&home);
    let listed: HashSet<String> = store
        .segment_list()
        .unwrap()
        .segments
        .into_iter()
        .map(|s| s.name)
        .collect();
    let on_disk = |store: &Store| -> HashSet<String> {
        fs::read_dir(store.segments_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    assert!(
        on_disk(&store).len() > listed.len(),
        "old segments wait for the grace"
    );
    store.collect_segments(0);
    assert_eq!(on_disk(&store), listed);
}

#[test]
fn a_merge_of_fresh_segments_equals_one_build_over_their_shards() {
    let home = temp_dir("seg-fresh-merge");
    for n in 1..=8 {
        write_session(&home, n, 2, 500);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let mut gens: Vec<(String, u64)> = store
        .current()
        .unwrap()
        .sessions
        .values()
        .map(|e| (e.generation_file.clone(), e.bytes))
        .collect();
    gens.sort();
    assert_eq!(gens.len(), 8);
    let shard = |g: &str| {
        recall_core::PreparedShard::from_bytes(&store.generation_bytes(g).unwrap()).unwrap()
    };
    // Four segments of two shards each, as four worker drafts would be.
    let mut fresh = Vec::new();
    for pair in gens.chunks(2) {
        let mut d = segments::SegmentDraft::default();
        for (g, b) in pair {
            d.add(g, &shard(g), *b);
        }
        fresh.push(store.write_draft(d).unwrap().unwrap().0);
    }
    let merged = store.merge_fresh(&fresh).unwrap().unwrap();
    assert_eq!(merged.generations, 8);
    assert_eq!(
        merged.source_bytes,
        gens.iter().map(|(_, b)| b).sum::<u64>()
    );
    let mut whole = segments::SegmentDraft::default();
    for (g, b) in &gens {
        whole.add(g, &shard(g), *b);
    }
    let whole = store.write_draft(whole).unwrap().unwrap().0;
    assert_eq!(merged.name, whole.name, "the same bytes, so the same name");
    assert_eq!(store.merge_fresh(&[]).unwrap(), None);
}

#[test]
fn a_torn_segment_is_never_trusted_and_is_rebuilt() {
    let home = temp_dir("seg-torn");
    for n in 1..=4 {
        write_session(&home, n, 2, 300);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let list = store.segment_list().unwrap();
    let name = list.segments[0].name.clone();
    let path = store.segments_dir().join(&name);
    let bytes = fs::read(&path).unwrap();
    // Torn: the first half only. A search scans instead of trusting it.
    fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let fresh = open(&home);
    assert!(
        fresh.live_segments().is_empty(),
        "a torn segment never opens"
    );
    let r = search(&fresh, "w4x1", "newest");
    assert_eq!(r.sessions.len(), 1);
    assert_eq!(r.sessions[0].session_key, session_key(4));
    // The next sweep drops it and indexes its sessions again.
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let listed = store.segment_list().unwrap();
    assert!(
        listed.segments.iter().all(|s| s.name != name) || fs::read(&path).unwrap() == bytes,
        "the torn file is no longer listed (or was replaced whole)"
    );
    // An unlisted torn file is garbage: collected after the grace.
    store.collect_segments(0);
    assert!(
        fs::read(&path).map_or(true, |b| b == bytes),
        "the torn file was replaced or collected"
    );
}

/// A pi session of `messages` messages of pseudo-random words (many
/// distinct trigrams, so the segment's tables span several blocks), one
/// message in three also saying `marker`.
fn write_words(home: &Path, n: usize, messages: usize, marker: &str) {
    let dir = pi_dir(home).join("--home-u-code-w--");
    fs::create_dir_all(&dir).unwrap();
    let base = 1_790_000_000_000i64 + n as i64 * 3_600_000;
    let mut out = format!(
        r#"{{"type":"session","version":3,"id":"0e{n:06}-0000-7000-8000-000000000000","timestamp":"{}","cwd":"/home/u/code/w"}}"#,
        iso(base)
    ) + "\n";
    let mut x = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut parent: Option<String> = None;
    for m in 0..messages {
        let mut text = String::new();
        for _ in 0..40 {
            for _ in 0..7 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push((b'a' + (x % 26) as u8) as char);
            }
            text.push(' ');
        }
        if m % 3 == 0 {
            text.push_str(marker);
        }
        let id = format!("{n:04x}{m:04x}");
        let role = if m % 2 == 0 { "user" } else { "assistant" };
        out += &pi_message(&id, parent.as_deref(), role, &text, base + m as i64 * 1000);
        parent = Some(id);
    }
    fs::write(dir.join(format!("w{n:04}.jsonl")), out).unwrap();
}

/// The byte of a segment file (this version's layout: trailer, footer,
/// then each lane's prefix table) where the conversation lane's table rows
/// for the gram prefix of `g` start.
fn rows_of(bytes: &[u8], g: &[u8; 3]) -> usize {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let footer = u64_at(bytes.len() - 16);
    // Block shift, names length; then mask, follow, grams, table, blob,
    // blob length and the prefix table of the conversation lane.
    let table = u64_at(footer + 4 + 8 + 12);
    let prefix = ((g[0] as usize) << 16 | (g[1] as usize) << 8 | g[2] as usize) >> 12;
    let row = u32_at(footer + 4 + 8 + 12 + 24 + 4 * prefix);
    table + row * 12
}

#[test]
fn a_bad_block_changes_no_answer_and_the_indexer_rebuilds_its_segment() {
    let home = temp_dir("seg-block");
    for n in 1..=12 {
        write_words(&home, n, 30, if n % 4 == 0 { "quartz" } else { "" });
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let queries = ["quartz", "qua", "quartz abc", "zzz", "quartz | mno"];
    let answers = |store: &Arc<Store>| -> Vec<String> {
        let mut out = Vec::new();
        for q in queries {
            for sort in ["newest", "relevance"] {
                out.push(serde_json::to_string(&search(store, q, sort)).unwrap());
            }
        }
        out
    };
    let before = answers(&store);
    assert!(before[0].contains(&session_key(4)));
    // One flipped byte in the block holding the table rows of "qua".
    let list = store.segment_list().unwrap();
    assert_eq!(list.segments.len(), 1, "one segment for a dozen sessions");
    let name = list.segments[0].name.clone();
    let path = store.segments_dir().join(&name);
    let mut bytes = fs::read(&path).unwrap();
    let at = rows_of(&bytes, b"qua");
    assert!(at >= 16 << 10, "the rows are past the first (names) block");
    bytes[at + 5] ^= 0x10;
    fs::write(&path, &bytes).unwrap();
    // It opens (its footer and names hold), its bad block is never
    // trusted, and every answer is the same.
    let damaged = open(&home);
    assert_eq!(damaged.live_segments().len(), 1);
    assert_eq!(answers(&damaged), before);
    assert!(damaged.live_segments()[0].damaged());
    // `debug` says so.
    let catalog = StoreCatalog::new(damaged.clone(), Arc::new(Arena::default()));
    let mut q = Request::new("quartz").parse().unwrap();
    q.debug = true;
    let resp = catalog.search(&q, false, Budgets::default()).unwrap();
    assert_eq!(resp.debug.unwrap().planner.damaged_segments, 1);
    // The reader left a note; the next `recall index` checks the segment,
    // drops it and indexes its sessions again.
    assert!(store_dir(&home).join("damaged").join(&name).exists());
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let listed = store.segment_list().unwrap();
    assert!(listed.segments.iter().all(|s| s.name != name));
    assert!(!store_dir(&home).join("damaged").join(&name).exists());
    assert!(store.live_segments().iter().all(|s| !s.damaged()));
    assert_eq!(answers(&store), before);
}

/// Copies a directory tree.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else if e.file_name() != "README.md" {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn a_store_of_the_previous_segment_format_is_read_and_reindexed() {
    let home = temp_dir("seg-v3");
    for f in ["pi-alpha.jsonl", "pi-beta.jsonl", "pi-gamma.jsonl"] {
        add_fixture(&home, f);
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/store-v3");
    copy_tree(&fixture, &store_dir(&home));
    let store = open(&home);
    let list = store.segment_list().unwrap();
    let path = store.segments_dir().join(&list.segments[0].name);
    assert!(fs::read(&path).unwrap().starts_with(b"RCSEG\0\0\x03"));
    assert_eq!(store.live_segments().len(), 1, "a version-3 segment opens");
    assert_covered(&store);
    let queries = [
        "zebrafinch",
        "strasse",
        "pangolin crate",
        "nothing-here",
        "the",
    ];
    let answers = |store: &Arc<Store>| -> Vec<String> {
        queries
            .iter()
            .flat_map(|q| ["newest", "relevance"].map(|s| search(store, q, s)))
            .map(|r| serde_json::to_string(&r).unwrap())
            .collect()
    };
    let with = answers(&store);
    assert!(with[0].contains("0a1fa001"), "{}", with[0]);
    // The same bytes as a search that trusts no segment.
    let list_path = store_dir(&home).join(segments::LIST);
    let saved = fs::read(&list_path).unwrap();
    fs::remove_file(&list_path).unwrap();
    assert_eq!(answers(&open(&home)), with);
    fs::write(&list_path, saved).unwrap();
    // The next `recall index` keeps the store searchable and covered.
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    assert_covered(&store);
    let r = search(&store, "zebrafinch", "newest");
    assert!(r
        .sessions
        .iter()
        .any(|s| s.session_key.contains("0a1fa001")));
}

/// The resident bytes of this process's mappings of `path`
/// (`/proc/self/smaps`: a mapping's line, `start-end perms offset dev inode
/// path`, then its `Field: value` lines), summed.
fn mapped_rss(path: &Path) -> u64 {
    let smaps = fs::read_to_string("/proc/self/smaps").unwrap();
    let name = path.to_string_lossy();
    let (mut ours, mut kb) = (false, 0);
    for line in smaps.lines() {
        match line.split_once(':') {
            Some(("Rss", v)) if ours => {
                kb += v
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap()
            }
            Some((field, _)) if !field.contains(' ') => {}
            _ => ours = line.ends_with(&*name),
        }
    }
    kb << 10
}

#[test]
fn a_search_leaves_the_segment_pages_it_touched_to_the_page_cache_past_the_bound() {
    let home = temp_dir("seg-bound");
    for n in 1..=6 {
        write_session(&home, n, 40, 2_000);
    }
    run_ok(&home, &["index"], 0);
    let store = open(&home);
    let list = store.segment_list().unwrap();
    assert!(!list.segments.is_empty());
    let paths: Vec<_> = list
        .segments
        .iter()
        .map(|s| store.segments_dir().join(&s.name))
        .collect();
    let resident = || paths.iter().map(|p| mapped_rss(p)).sum::<u64>();
    let answer =
        |store: &Arc<Store>| serde_json::to_string(&search(store, "lorem", "newest")).unwrap();
    let before = answer(&store);
    assert!(
        resident() > 0,
        "the search read the segments through their maps"
    );
    // Under a bound the process does not exceed, nothing is dropped.
    assert!(!store.bound_segment_pages_to(u64::MAX));
    assert!(resident() > 0);
    // Past it, every map's pages leave this process.
    assert!(store.bound_segment_pages_to(0));
    assert_eq!(resident(), 0, "the maps' pages were dropped");
    // The maps stay usable: the next search reads the same bytes again.
    assert_eq!(answer(&store), before);
    assert!(resident() > 0);
}
