//! `catalog.json` and `metas/<hash16>.meta`: how the manifest is persisted
//! so that a publish writes in proportion to what changed.
//!
//! The in-memory [`Manifest`] (every session's entry) is what the core and
//! the indexer use; on disk it is split into
//! - **metas**: immutable, content-named files (`metas/<hash16>.meta`, the
//!   hash16 of their bytes) each holding the entries of some sessions, as
//!   one publish (or one merge) wrote them;
//! - **the catalog** (`catalog.json`, small, atomic replace): store id,
//!   revision, parser version, tombstones and the live metas, oldest first,
//!   each with the keys it holds that were removed since (`deleted`). A key
//!   held by several metas belongs to the newest: superseded entries need no
//!   list. Its size follows the number of metas, not of sessions.
//!
//! A publish writes one meta with the entries it added or changed, marks
//! the keys it removed, and merges metas like a binary counter (the newest
//! two merge while the older holds at most twice the live entries of the
//! newer), so a store of N sessions has O(log N) metas and a live append to
//! one session writes a one-entry meta and the catalog. A meta with too
//! many removed keys is rewritten alone. A meta whose bytes do not match its
//! name is never trusted: the catalog that names it is treated as corrupt.

use recall_core::model::{Manifest, ManifestEntry};
use recall_core::naming::hash16;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

pub use recall_core::layout::store::{CATALOG, METAS, META_EXT};
/// The catalog schema this build reads and writes (the legacy
/// `manifest.json` was schema 1).
pub const SCHEMA: u32 = 2;
/// A meta listing more removed keys than this is rewritten with its live
/// entries only (keeps the catalog small).
pub const MAX_DELETED: usize = 64;

/// `catalog.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalog {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// Version of the extractors that wrote it.
    pub parser_version: u32,
    /// Random id made when the store is created or cleared.
    pub store_id: String,
    /// Increases by one on every write.
    pub revision: u64,
    /// When it was written.
    pub updated_at_ms: i64,
    /// Live metas, oldest first.
    pub metas: Vec<MetaRef>,
    /// Deleted session keys and when.
    #[serde(default)]
    pub tombstones: BTreeMap<String, i64>,
}

/// One live meta of the catalog.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaRef {
    /// `<hash16>.meta`.
    pub name: String,
    /// Entries the file holds.
    pub sessions: u64,
    /// Entries of it still current (not superseded by a newer meta, not removed).
    pub live: u64,
    /// Keys it holds that were removed from the store since.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<String>,
}

/// The body of a meta file.
#[derive(Debug, Serialize, Deserialize)]
struct MetaFile {
    sessions: BTreeMap<String, ManifestEntry>,
}

/// A parsed meta: its entries by key.
pub type Entries = Arc<BTreeMap<String, ManifestEntry>>;

/// The content name of meta bytes.
pub fn meta_name(bytes: &[u8]) -> String {
    format!("{}.{META_EXT}", hash16(bytes))
}

/// Whether `name` is a meta file name (`<16 hex>.meta`).
pub fn is_meta_name(name: &str) -> bool {
    name.len() == 16 + 1 + META_EXT.len()
        && name.ends_with(&format!(".{META_EXT}"))
        && name[..16]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses catalog bytes; another schema or a malformed meta name is refused.
pub fn parse(bytes: &[u8]) -> Result<Catalog, String> {
    let c: Catalog = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    if c.schema != SCHEMA {
        return Err(format!("unsupported catalog schema {}", c.schema));
    }
    if let Some(bad) = c.metas.iter().find(|m| !is_meta_name(&m.name)) {
        return Err(format!("not a meta name: {:?}", bad.name));
    }
    Ok(c)
}

/// The bytes of a catalog (compact, deterministic).
pub fn to_bytes(c: &Catalog) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(c)
}

/// Parses meta bytes found under `name`; bytes that are not named by their
/// content (torn, altered, copied) are refused.
pub fn parse_meta(name: &str, bytes: &[u8]) -> Result<BTreeMap<String, ManifestEntry>, String> {
    if meta_name(bytes) != name {
        return Err(format!("{name}: the bytes do not match the name"));
    }
    serde_json::from_slice::<MetaFile>(bytes)
        .map(|m| m.sessions)
        .map_err(|e| format!("{name}: {e}"))
}

/// The bytes of a meta holding `entries`.
pub fn meta_bytes(entries: &BTreeMap<String, ManifestEntry>) -> Result<Vec<u8>, serde_json::Error> {
    #[derive(Serialize)]
    struct Out<'a> {
        sessions: &'a BTreeMap<String, ManifestEntry>,
    }
    serde_json::to_vec(&Out { sessions: entries })
}

/// An empty catalog.
pub fn empty(store_id: String, parser_version: u32, revision: u64, now_ms: i64) -> Catalog {
    Catalog {
        schema: SCHEMA,
        parser_version,
        store_id,
        revision,
        updated_at_ms: now_ms,
        metas: Vec::new(),
        tombstones: BTreeMap::new(),
    }
}

/// A meta's entries as [`assemble`] gets them: shared with a cache (each
/// entry is copied into the manifest) or owned (moved into it).
pub enum MetaEntries {
    /// Kept by the store's cache too.
    Shared(Entries),
    /// Parsed for this manifest alone.
    Owned(BTreeMap<String, ManifestEntry>),
}

/// Assembles the manifest a catalog describes from its metas (`load`
/// yields a meta's entries by name): newer metas override older ones, and a
/// meta's removed keys are skipped.
pub fn assemble(
    c: &Catalog,
    mut load: impl FnMut(&str) -> Result<MetaEntries, String>,
) -> Result<Manifest, String> {
    let mut m = Manifest::empty(c.store_id.clone(), c.parser_version);
    m.revision = c.revision;
    m.updated_at_ms = c.updated_at_ms;
    m.tombstones = c.tombstones.clone();
    for r in &c.metas {
        let deleted: HashSet<&str> = r.deleted.iter().map(String::as_str).collect();
        let live = |k: &String| !deleted.contains(k.as_str());
        match load(&r.name)? {
            MetaEntries::Shared(entries) => {
                for (k, e) in entries.iter().filter(|(k, _)| live(k)) {
                    m.sessions.insert(k.clone(), e.clone());
                }
            }
            MetaEntries::Owned(entries) => {
                m.sessions
                    .extend(entries.into_iter().filter(|(k, _)| live(k)));
            }
        }
    }
    Ok(m)
}

/// What a publish writes: the new catalog and the meta files it names that
/// are not on disk yet.
#[derive(Debug)]
pub struct Written {
    /// The catalog to write.
    pub catalog: Catalog,
    /// `(name, bytes, entries)` of the new metas.
    pub metas: Vec<(String, Vec<u8>, Entries)>,
}

/// One meta while a publish plans: its entries, the keys of it that stay
/// current, and its name when its bytes are already on disk.
struct Work {
    entries: Entries,
    live: Vec<String>,
    name: Option<String>,
}

/// Plans the catalog for `next` given the metas of the base catalog
/// (`base`, oldest first, with their entries; empty for a new or legacy
/// store): one meta for the entries that changed, removed keys marked, then
/// the merges (see the module docs). Unchanged metas are not serialized.
pub fn plan(base: &[(MetaRef, Entries)], next: &Manifest) -> Result<Written, serde_json::Error> {
    // Owner of every current key in the base: the newest meta holding it
    // that does not list it as removed.
    let mut owner: HashMap<&str, usize> = HashMap::new();
    for (i, (r, entries)) in base.iter().enumerate() {
        let deleted: HashSet<&str> = r.deleted.iter().map(String::as_str).collect();
        for k in entries.keys() {
            if !deleted.contains(k.as_str()) {
                owner.insert(k.as_str(), i);
            }
        }
    }
    let mut changed: BTreeMap<String, ManifestEntry> = BTreeMap::new();
    for (k, e) in &next.sessions {
        let same = owner
            .get(k.as_str())
            .is_some_and(|&i| base[i].1.get(k) == Some(e));
        if !same {
            changed.insert(k.clone(), e.clone());
        }
    }
    let mut metas: Vec<Work> = base
        .iter()
        .enumerate()
        .map(|(i, (r, entries))| Work {
            entries: entries.clone(),
            live: entries
                .keys()
                .filter(|k| {
                    owner.get(k.as_str()) == Some(&i)
                        && next.sessions.contains_key(*k)
                        && !changed.contains_key(*k)
                })
                .cloned()
                .collect(),
            name: Some(r.name.clone()),
        })
        .collect();
    if !changed.is_empty() {
        let live = changed.keys().cloned().collect();
        metas.push(Work {
            entries: Arc::new(changed),
            live,
            name: None,
        });
    }
    metas.retain(|w| !w.live.is_empty());
    // Binary-counter merges of the newest metas.
    while metas.len() >= 2 {
        let n = metas.len();
        if metas[n - 2].live.len() > 2 * metas[n - 1].live.len() {
            break;
        }
        let (Some(b), Some(a)) = (metas.pop(), metas.pop()) else {
            break;
        };
        metas.push(live_only(&[a, b]));
    }
    let mut fresh: Vec<(String, Vec<u8>, Entries)> = Vec::new();
    let mut refs = Vec::with_capacity(metas.len());
    for mut w in metas {
        // Keys of it no longer current: superseded by a newer meta (still
        // in `next`, implicit) or removed (listed).
        let live: HashSet<&str> = w.live.iter().map(String::as_str).collect();
        let mut deleted: Vec<String> = w
            .entries
            .keys()
            .filter(|k| !live.contains(k.as_str()) && !next.sessions.contains_key(*k))
            .cloned()
            .collect();
        drop(live);
        if deleted.len() > MAX_DELETED || w.live.len() * 2 < w.entries.len() {
            w = live_only(&[w]);
            deleted.clear();
        }
        let name = match w.name {
            Some(n) => n,
            None => {
                let bytes = meta_bytes(&w.entries)?;
                let name = meta_name(&bytes);
                if !fresh.iter().any(|(n, _, _)| *n == name) {
                    fresh.push((name.clone(), bytes, w.entries.clone()));
                }
                name
            }
        };
        refs.push(MetaRef {
            name,
            sessions: w.entries.len() as u64,
            live: w.live.len() as u64,
            deleted,
        });
    }
    Ok(Written {
        catalog: Catalog {
            schema: SCHEMA,
            parser_version: next.parser_version,
            store_id: next.store_id.clone(),
            revision: next.revision,
            updated_at_ms: next.updated_at_ms,
            metas: refs,
            tombstones: next.tombstones.clone(),
        },
        metas: fresh,
    })
}

/// One new meta holding the live entries of `parts`.
fn live_only(parts: &[Work]) -> Work {
    let mut merged = BTreeMap::new();
    for w in parts {
        for k in &w.live {
            if let Some(e) = w.entries.get(k) {
                merged.insert(k.clone(), e.clone());
            }
        }
    }
    Work {
        live: merged.keys().cloned().collect(),
        entries: Arc::new(merged),
        name: None,
    }
}

/// The manifest of the store folder `dir` as a fresh reader finds it (no
/// cache, no write): the catalog and its metas, else a legacy
/// `manifest.json`; `None` when there is neither. For tools and tests that
/// check a store from outside.
pub fn read_store(dir: &std::path::Path) -> Result<Option<Manifest>, String> {
    let path = dir.join(CATALOG);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let c = parse(&bytes).map_err(|e| format!("{CATALOG}: {e}"))?;
            let m = assemble(&c, |n| {
                let b = std::fs::read(dir.join(METAS).join(n)).map_err(|e| format!("{n}: {e}"))?;
                parse_meta(n, &b).map(MetaEntries::Owned)
            })?;
            Ok(Some(m))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            match std::fs::read(dir.join(super::manifest::MANIFEST)) {
                Ok(b) => serde_json::from_slice(&b)
                    .map(Some)
                    .map_err(|e| format!("manifest.json: {e}")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("manifest.json: {e}")),
            }
        }
        Err(e) => Err(format!("{CATALOG}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use recall_core::model::{SessionMeta, Source};

    fn entry(id: &str, v: u32) -> ManifestEntry {
        ManifestEntry {
            meta: SessionMeta {
                source: Source::Pi,
                session_id: id.into(),
                title: None,
                cwd: None,
                branch: None,
                created_ms: None,
                updated_ms: None,
                messages: v as u64,
                parent: None,
                resume: None,
                paths: vec![],
                models: vec![],
            },
            generation_file: format!("{:016x}.json", v),
            records: 1,
            max_ts_ms: None,
            bytes: 1,
            source_gone: false,
            files: vec![],
            watermark: 0,
            state: serde_json::Value::Null,
        }
    }

    /// Meta files by name, and their parsed entries (parsed once, as the
    /// store's cache does).
    #[derive(Default)]
    struct Files {
        bytes: HashMap<String, Vec<u8>>,
        parsed: HashMap<String, Entries>,
    }

    impl Files {
        fn load(&mut self, n: &str) -> Result<Entries, String> {
            if let Some(e) = self.parsed.get(n) {
                return Ok(e.clone());
            }
            let b = self.bytes.get(n).ok_or("absent")?;
            let e = Arc::new(parse_meta(n, b)?);
            self.parsed.insert(n.to_string(), e.clone());
            Ok(e)
        }
    }

    /// Applies `next` through plan → files → assemble, as a publish and a
    /// fresh reader would; returns the new catalog and its new meta bytes.
    fn step(files: &mut Files, cat: &Catalog, next: &Manifest) -> (Catalog, u64) {
        let base: Vec<(MetaRef, Entries)> = cat
            .metas
            .iter()
            .map(|r| (r.clone(), files.load(&r.name).unwrap()))
            .collect();
        let w = plan(&base, next).unwrap();
        let mut written = 0;
        for (n, b, _) in w.metas {
            written += b.len() as u64;
            files.bytes.insert(n, b);
        }
        let back = assemble(&w.catalog, |n| files.load(n).map(MetaEntries::Shared)).unwrap();
        assert_eq!(back, *next, "a reader assembles exactly what was published");
        // A one-shot reader moves the entries of metas it parsed alone.
        let owned = |n: &str| {
            let b = files.bytes.get(n).ok_or("absent")?;
            parse_meta(n, b).map(MetaEntries::Owned)
        };
        let back = assemble(&w.catalog, owned).unwrap();
        assert_eq!(
            back, *next,
            "moving the entries assembles the same manifest"
        );
        (w.catalog, written)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Any sequence of upserts and removals: the assembled manifest is
        /// the naive map, metas stay logarithmic, removed-key lists bounded.
        #[test]
        fn assembled_catalog_equals_the_naive_manifest(
            ops in proptest::collection::vec(
                proptest::collection::vec((0u8..40, 0u32..1000, any::<bool>()), 1..12),
                1..40,
            )
        ) {
            let mut files = Files::default();
            let mut naive = Manifest::empty("s".into(), 1);
            let mut cat = empty("s".into(), 1, 0, 0);
            for batch in ops {
                for (k, v, remove) in batch {
                    let key = format!("pi:{k}");
                    if remove {
                        naive.sessions.remove(&key);
                    } else {
                        naive.sessions.insert(key, entry(&k.to_string(), v));
                    }
                }
                naive.revision += 1;
                let (c, _) = step(&mut files, &cat, &naive);
                cat = c;
                let n = naive.sessions.len().max(1) as f64;
                prop_assert!(cat.metas.len() as f64 <= 2.0 * n.log2() + 2.0, "{} metas", cat.metas.len());
                prop_assert!(cat.metas.iter().all(|r| r.deleted.len() <= MAX_DELETED));
                prop_assert_eq!(cat.metas.iter().map(|r| r.live).sum::<u64>(), naive.sessions.len() as u64);
            }
        }
    }

    /// At the session count of the 10 GB bench home (19,697), with entries
    /// the size of real ones (a title, a cwd, one file cursor): a publish
    /// of one changed session writes a one-entry meta and a catalog of a
    /// few hundred bytes, where the manifest was rewritten whole.
    #[test]
    fn one_changed_session_writes_one_small_meta() {
        let mut files = Files::default();
        let mut m = Manifest::empty("s".into(), 1);
        for i in 0..20_000u32 {
            let mut e = entry(&i.to_string(), i);
            e.meta.title = Some(format!("a session about the ledger report number {i}"));
            e.meta.cwd = Some(format!("/home/mara/code/project-{}", i % 40));
            e.files.push(recall_core::model::FileCursor {
                path: format!(
                    "/home/mara/.pi/agent/sessions/--home-mara-code--/2026-10-07_{i:08}.jsonl"
                ),
                dev: 2049,
                ino: 1_000_000 + u64::from(i),
                len: 250_000,
                mtime_ns: 1_790_000_000_000_000_000,
                offset: 250_000,
                head_sha: "ab".repeat(32),
                tail_sha: "cd".repeat(32),
                generation: 0,
            });
            m.sessions.insert(format!("pi:{i:05}"), e);
        }
        let whole = serde_json::to_vec(&m).unwrap().len() as u64;
        let (mut cat, _) = step(&mut files, &empty("s".into(), 1, 0, 0), &m);
        assert_eq!(cat.metas.len(), 1);
        let (mut most, mut total, mut catalog) = (0, 0, 0);
        for round in 0..40u32 {
            // A live append: one session changes (its cursor moves on).
            let k = format!("pi:{:05}", (round * 7_919) % 20_000);
            let e = m.sessions.get_mut(&k).unwrap();
            e.records += 1;
            e.files[0].offset += 120;
            m.revision += 1;
            let (c, written) = step(&mut files, &cat, &m);
            cat = c;
            most = most.max(written);
            total += written;
            catalog = catalog.max(to_bytes(&cat).unwrap().len() as u64);
        }
        let mean = total / 40;
        eprintln!(
            "20,000 sessions: manifest {whole} B; per one-session publish: metas {mean} B on average, \
             {most} B at most (a merge), catalog ≤ {catalog} B, {} metas",
            cat.metas.len()
        );
        // Binary-counter merges: O(log t) entries per change on average; the
        // change that completes a merge of 2^k metas rewrites 2^k entries.
        assert!(
            mean < 8 << 10,
            "{mean} B of metas per append (manifest {whole} B)"
        );
        assert!(most < 64 << 10, "{most} B at most");
        assert!(catalog < 2048, "catalog {catalog} B");
        assert!(cat.metas.len() <= 8, "{:?}", cat.metas);
    }

    #[test]
    fn torn_and_foreign_metas_are_refused() {
        let mut m = BTreeMap::new();
        m.insert("pi:a".to_string(), entry("a", 1));
        let b = meta_bytes(&m).unwrap();
        let name = meta_name(&b);
        assert_eq!(parse_meta(&name, &b).unwrap(), m);
        assert!(parse_meta(&name, &b[..b.len() - 1]).is_err(), "torn");
        let mut other = m.clone();
        other.insert("pi:b".to_string(), entry("b", 2));
        assert!(
            parse_meta(&name, &meta_bytes(&other).unwrap()).is_err(),
            "foreign"
        );
        assert!(parse(b"{\"schema\":1}").is_err());
        let mut c = empty("s".into(), 1, 1, 0);
        c.metas.push(MetaRef {
            name: "../x.meta".into(),
            sessions: 1,
            live: 1,
            deleted: vec![],
        });
        assert!(
            parse(&to_bytes(&c).unwrap()).is_err(),
            "a name that escapes the folder"
        );
    }
}
