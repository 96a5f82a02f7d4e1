//! Reading the live segments: `segments.json` by its file stamp, each
//! listed segment memory-mapped and checked once per process (one that does
//! not open is skipped, never trusted), and one lookup table over them.
//!
//! The maps' resident pages are bounded: after a search, when the process
//! holds more than [`RESIDENT_FILE_BYTES`] of file pages, every live map
//! drops its pages ([`Store::bound_segment_pages`]). They stay in the page
//! cache, so a later read of them is a minor fault, not a disk read; the
//! process's memory no longer grows with the postings its queries touched.

use super::{is_segment_name, read_list, SegmentList, LIST};
use crate::store::{Store, StoreError};
use recall_core::segment::{Segment, SegmentSet};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::Path;
use std::sync::Arc;

/// Opened segments, by name, and those that failed to open.
#[derive(Debug, Default)]
pub struct SegmentCache {
    open: HashMap<String, Arc<Segment>>,
    /// The memory maps of `open`, for their advice.
    maps: HashMap<String, Arc<memmap2::Mmap>>,
    pub(super) bad: HashSet<String>,
    /// Open segments a read found a bad block in, noted for the indexer.
    noted: HashSet<String>,
    /// The set last built, and the names it was built from.
    set: Option<(Vec<String>, Arc<SegmentSet>)>,
    /// `segments.json` as last read: its file stamp, for its store id (a
    /// query re-reads it only when the file was replaced).
    list: Option<(crate::store::Stamp, SegmentList)>,
}

/// Opens a segment file through a memory map, refusing one whose footer or
/// names are torn or altered (its other blocks are checked as queries read
/// them; a segment of an earlier version is checked whole).
pub fn open(sdir: &Path, name: &str) -> Result<Segment, String> {
    open_mapped(sdir, name).map(|(seg, _)| seg)
}

/// [`open`], with the segment's memory map.
fn open_mapped(sdir: &Path, name: &str) -> Result<(Segment, Arc<memmap2::Mmap>), String> {
    if !is_segment_name(name) {
        return Err(format!("not a segment name: {name:?}"));
    }
    let file = fs::File::open(sdir.join(name)).map_err(|e| e.to_string())?;
    // SAFETY: segment files are immutable: written under a temp name and
    // hard-linked to their content name, never modified in place (GC only
    // unlinks them, which keeps an existing map valid).
    let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.map_err(|e| e.to_string())?);
    let seg = Segment::open(Mapped(map.clone())).map_err(|e| e.to_string())?;
    // Opening read the footer and the names (every page, for a segment of
    // an earlier version); a query touches only the tables and the postings
    // it probes. Dropping the pages from this process's map keeps them in
    // the page cache (a later touch is a minor fault) but out of its
    // resident set. What queries touch comes back (the kernel maps 64 KiB
    // around each touched page).
    drop_pages(&map);
    Ok((seg, map))
}

/// File pages this process may hold before a search drops the segment
/// maps' pages (the binary's own text counts too: about 10 MiB).
pub const RESIDENT_FILE_BYTES: u64 = 48 << 20;

/// Drops a segment map's pages from this process (not from the page cache).
fn drop_pages(map: &memmap2::Mmap) {
    // SAFETY: a read-only shared file mapping: DONTNEED drops page table
    // entries only, and the next read sees the file's bytes again.
    let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
}

/// The file-backed bytes resident in this process (`/proc/self/statm`'s
/// shared pages); `None` where there is no such file.
fn resident_file_bytes() -> Option<u64> {
    let statm = fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(2)?.parse().ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages.saturating_mul(u64::try_from(page).ok()?))
}

/// A segment's memory map, shared with [`open`] for its advice.
struct Mapped(Arc<memmap2::Mmap>);

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Store {
    /// The live list of the current store.
    pub fn segment_list(&self) -> Result<SegmentList, StoreError> {
        let cur = self.current()?;
        // Replaced atomically (temp → rename), so a new list is a new inode.
        let Some(stamp) = crate::store::stamp(&self.dir().join(LIST)) else {
            return Ok(read_list(self.dir(), &cur.store_id));
        };
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, list)) = &cache.list {
            if *s == stamp && list.store_id == cur.store_id {
                return Ok(list.clone());
            }
        }
        let list = read_list(self.dir(), &cur.store_id);
        cache.list = Some((stamp, list.clone()));
        Ok(list)
    }

    /// Leaves a damage note (once per process) for each open segment a read
    /// found a bad block in, for the indexer to check and rebuild it.
    pub fn note_damaged_segments(&self) {
        let damaged: Vec<String> = {
            let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
            let found: Vec<String> = cache
                .open
                .iter()
                .filter(|(n, s)| s.damaged() && !cache.noted.contains(*n))
                .map(|(n, _)| n.clone())
                .collect();
            cache.noted.extend(found.iter().cloned());
            found
        };
        for name in damaged {
            self.note_damaged_segment(&name);
        }
    }

    /// Drops the segment maps' pages from this process when it holds more
    /// than [`RESIDENT_FILE_BYTES`] of file pages (a search calls it when it
    /// ends); returns whether it did.
    pub fn bound_segment_pages(&self) -> bool {
        self.bound_segment_pages_to(RESIDENT_FILE_BYTES)
    }

    /// [`Store::bound_segment_pages`] with the bound given (bytes of file
    /// pages; 0 drops the maps' pages whatever the process holds).
    pub fn bound_segment_pages_to(&self, limit: u64) -> bool {
        if resident_file_bytes().is_none_or(|b| b <= limit) {
            return false;
        }
        let maps: Vec<Arc<memmap2::Mmap>> = {
            let cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
            cache.maps.values().cloned().collect()
        };
        for m in &maps {
            drop_pages(m);
        }
        true
    }

    /// The live segments that open, cached. Never writes: a segment that
    /// cannot be opened is skipped (its sessions are scanned) and left for
    /// the indexer to replace.
    pub fn live_segments(&self) -> Vec<Arc<Segment>> {
        self.live_named().into_iter().map(|(_, s)| s).collect()
    }

    fn live_named(&self) -> Vec<(String, Arc<Segment>)> {
        let Ok(list) = self.segment_list() else {
            return Vec::new();
        };
        let sdir = self.segments_dir();
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::with_capacity(list.segments.len());
        for s in &list.segments {
            if let Some(seg) = cache.open.get(&s.name) {
                out.push((s.name.clone(), seg.clone()));
                continue;
            }
            if cache.bad.contains(&s.name) {
                continue;
            }
            match open_mapped(&sdir, &s.name) {
                Ok((seg, map)) => {
                    let seg = Arc::new(seg);
                    cache.open.insert(s.name.clone(), seg.clone());
                    cache.maps.insert(s.name.clone(), map);
                    out.push((s.name.clone(), seg));
                }
                Err(_) => {
                    cache.bad.insert(s.name.clone());
                }
            }
        }
        // Forget segments no longer listed.
        let live: HashSet<&str> = list.segments.iter().map(|s| s.name.as_str()).collect();
        cache.open.retain(|k, _| live.contains(k.as_str()));
        cache.maps.retain(|k, _| live.contains(k.as_str()));
        out
    }

    pub(super) fn open_cached(&self, sdir: &Path, name: &str) -> Result<Arc<Segment>, String> {
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = cache.open.get(name) {
            return Ok(s.clone());
        }
        let (seg, map) = open_mapped(sdir, name)?;
        let seg = Arc::new(seg);
        cache.open.insert(name.to_string(), seg.clone());
        cache.maps.insert(name.to_string(), map);
        cache.bad.remove(name);
        Ok(seg)
    }

    /// [`Store::live_segments`] with one lookup table over them (rebuilt
    /// only when the set of segments that open changes); `None` when there
    /// is none.
    pub fn live_segment_set(&self) -> Option<Arc<SegmentSet>> {
        let live = self.live_named();
        if live.is_empty() {
            return None;
        }
        let (names, segs): (Vec<String>, Vec<Arc<Segment>>) = live.into_iter().unzip();
        let mut cache = self.segment_cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((n, set)) = &cache.set {
            if *n == names {
                return Some(set.clone());
            }
        }
        let set = Arc::new(SegmentSet::new(segs));
        cache.set = Some((names, set.clone()));
        Some(set)
    }
}
