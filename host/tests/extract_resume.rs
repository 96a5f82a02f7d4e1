//! Resumable extraction (`extract::resume`): every unit of the real corpus
//! and of two generated homes is copied into a scratch directory cut at
//! seeded random line boundaries (and mid-line), extracted, grown in place
//! (same inode) and extracted again from the previous checkpoint; the
//! result must equal a from-scratch extraction of the grown files, the
//! listed live-session cases must really resume, and a resume must read
//! only what was appended. Also: torn tails, foreign and corrupt
//! checkpoints.

#[path = "support/files.rs"]
mod files;
#[path = "support/golden.rs"]
mod golden;

use files::{append, Scratch};
use recall_core::model::Source;
use recall_host::extract::common::walk_files;
use recall_host::extract::resume::Checkpoint;
use recall_host::extract::{
    self, claude, codex, extract_resumable, intendant, kimi, Extracted, Resumed, Roots,
    SessionSource,
};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// splitmix64: a seeded RNG (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Whether the extractor feeds `path` line by line (else it is read whole).
fn line_fed(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// The offsets just past every `\n` of `bytes`, with 0 first.
fn boundaries(bytes: &[u8]) -> Vec<usize> {
    let mut v = vec![0];
    v.extend(
        bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    v
}

/// One growth plan: per stage, per file of the unit, how many bytes exist
/// (`None` = the file does not exist yet; only secondary line-fed files).
type Plan = Vec<Vec<Option<usize>>>;

/// A unit, its files' full contents and where its copy lives.
struct Unit {
    orig: SessionSource,
    base: PathBuf,
    full: Vec<Vec<u8>>,
    /// Files beside the unit's own that the extractor reads (Intendant
    /// sidecars), relative to `base`.
    extras: Vec<PathBuf>,
}

impl Unit {
    fn new(orig: SessionSource) -> Unit {
        let full: Vec<Vec<u8>> = orig
            .files
            .iter()
            .map(|f| std::fs::read(f).unwrap_or_default())
            .collect();
        let mut common = orig.files[0].parent().unwrap().to_path_buf();
        while !orig.files.iter().all(|f| f.starts_with(&common)) {
            common = common.parent().unwrap().to_path_buf();
        }
        let base = common.parent().unwrap().to_path_buf();
        let extras = if orig.source == Source::Intendant {
            walk_files(&common, 4, &|_| true)
                .into_iter()
                .filter(|p| !orig.files.contains(p))
                .map(|p| p.strip_prefix(&base).unwrap().to_path_buf())
                .collect()
        } else {
            Vec::new()
        };
        Unit {
            orig,
            base,
            full,
            extras,
        }
    }

    fn is_fed(&self, i: usize) -> bool {
        line_fed(&self.orig.files[i])
    }

    fn name(&self) -> String {
        self.orig.unit.clone()
    }

    /// Random growth plans: a cut at 0 bytes, a chain of three resumes,
    /// torn cuts, and (several files) files that appear later or grow one
    /// at a time.
    fn plans(&self, rng: &mut Rng) -> Vec<Plan> {
        let n = self.full.len();
        let full: Vec<Option<usize>> = self.full.iter().map(|f| Some(f.len())).collect();
        let bounds: Vec<Vec<usize>> = self.full.iter().map(|f| boundaries(f)).collect();
        let whole = |i: usize, cut: Option<usize>| {
            if self.is_fed(i) {
                cut
            } else {
                Some(self.full[i].len())
            }
        };
        // A line-boundary cut at or after `min` for each file.
        let line_cut = |rng: &mut Rng, min: &[Option<usize>]| -> Vec<Option<usize>> {
            (0..n)
                .map(|i| {
                    let lo = min[i].unwrap_or(0);
                    let ok: Vec<usize> = bounds[i].iter().copied().filter(|&b| b >= lo).collect();
                    whole(i, Some(ok.get(rng.below(ok.len())).copied().unwrap_or(lo)))
                })
                .collect()
        };
        let mut plans = Vec::new();
        // Everything at 0 bytes, then whole.
        plans.push(vec![
            (0..n).map(|i| whole(i, Some(0))).collect(),
            full.clone(),
        ]);
        // Three successive resumes.
        let c1 = line_cut(rng, &vec![None; n]);
        let c2 = line_cut(rng, &c1);
        let c3 = line_cut(rng, &c2);
        plans.push(vec![c1, c2, c3, full.clone()]);
        // Torn cuts: mid-line, then another mid-line cut further on.
        let torn = |rng: &mut Rng, min: &[Option<usize>]| -> Vec<Option<usize>> {
            (0..n)
                .map(|i| {
                    let lo = min[i].unwrap_or(0);
                    let len = self.full[i].len();
                    whole(
                        i,
                        Some(if len > lo {
                            lo + rng.below(len - lo)
                        } else {
                            lo
                        }),
                    )
                })
                .collect()
        };
        let t1 = torn(rng, &vec![None; n]);
        let t2 = torn(rng, &t1);
        plans.push(vec![t1, t2, full.clone()]);
        let subs: Vec<usize> = (1..n).filter(|&i| self.is_fed(i)).collect();
        if !subs.is_empty() {
            // Secondary files appear later, in random order; the main file
            // grows meanwhile.
            let mut stage: Vec<Option<usize>> = (0..n)
                .map(|i| {
                    if subs.contains(&i) {
                        None
                    } else {
                        whole(i, Some(0))
                    }
                })
                .collect();
            stage[0] = line_cut(rng, &stage)[0];
            let mut plan = vec![stage.clone()];
            let mut order = subs.clone();
            for k in (1..order.len()).rev() {
                order.swap(k, rng.below(k + 1));
            }
            for &i in &order {
                stage[i] = line_cut(rng, &stage)[i];
                stage[0] = line_cut(rng, &stage)[0];
                plan.push(stage.clone());
            }
            plan.push(full.clone());
            plans.push(plan);
            // One file grows at a time, earlier files after later ones.
            let mut stage = line_cut(rng, &vec![None; n]);
            let mut plan = vec![stage.clone()];
            for i in (0..n).rev().filter(|&i| self.is_fed(i)) {
                stage[i] = full[i];
                plan.push(stage.clone());
            }
            plans.push(plan);
        }
        plans
    }
}

/// A unit's copy in a scratch directory, grown stage by stage.
struct Copy<'u> {
    unit: &'u Unit,
    dir: Scratch,
    /// Bytes written so far per file (`None` = not created).
    written: Vec<Option<usize>>,
}

impl<'u> Copy<'u> {
    fn new(unit: &'u Unit) -> Copy<'u> {
        let dir = Scratch::new("resume");
        for rel in &unit.extras {
            let bytes = std::fs::read(unit.base.join(rel)).unwrap();
            dir.write(&rel.to_string_lossy(), &bytes);
        }
        Copy {
            unit,
            dir,
            written: vec![None; unit.full.len()],
        }
    }

    fn path(&self, i: usize) -> PathBuf {
        let rel = self.unit.orig.files[i]
            .strip_prefix(&self.unit.base)
            .unwrap();
        self.dir.0.join(rel)
    }

    /// Grows every file to its size in `stage` (appending: same inode).
    fn grow(&mut self, stage: &[Option<usize>]) {
        for (i, want) in stage.iter().enumerate() {
            let Some(want) = *want else { continue };
            let have = self.written[i].unwrap_or(0);
            assert!(want >= have, "plans only grow");
            let p = self.path(i);
            if self.written[i].is_none() {
                self.dir
                    .write(&p.strip_prefix(&self.dir.0).unwrap().to_string_lossy(), b"");
            }
            append(&p, &self.unit.full[i][have..want]);
            self.written[i] = Some(want);
        }
    }

    /// The unit as discovery would see it now (files not created yet are
    /// not part of it).
    fn source(&self) -> SessionSource {
        let files = (0..self.written.len())
            .filter(|&i| self.written[i].is_some())
            .map(|i| self.path(i))
            .collect();
        let unit = Path::new(&self.unit.orig.unit)
            .strip_prefix(&self.unit.base)
            .map(|r| self.dir.0.join(r).to_string_lossy().into_owned())
            .unwrap_or_else(|_| self.unit.orig.unit.clone());
        SessionSource {
            files,
            unit,
            ..self.unit.orig.clone()
        }
    }

    /// Bytes a resume from `cp` may read: what lies past each fed offset,
    /// new files whole, whole-read files and sidecars.
    fn resume_budget(&self, cp: &Checkpoint) -> u64 {
        let mut budget = 0;
        for (i, w) in self.written.iter().enumerate() {
            let Some(len) = *w else { continue };
            let path = self.path(i);
            budget += match cp.files.iter().find(|f| f.path == path) {
                Some(f) if self.unit.is_fed(i) => (len as u64).saturating_sub(f.offset),
                _ => len as u64,
            };
        }
        for rel in &self.unit.extras {
            budget += std::fs::metadata(self.dir.0.join(rel)).map_or(0, |m| m.len());
        }
        budget
    }
}

/// An extraction with `diagnostics.bytes` cleared (the one field a resume
/// reports differently).
fn comparable(x: &Option<Extracted>) -> Option<Extracted> {
    x.clone().map(|mut x| {
        x.diagnostics.bytes = 0;
        x
    })
}

/// Asserts two extractions are equal, naming the first difference (a
/// whole transcript in a panic message helps nobody).
fn assert_same(got: &Option<Extracted>, want: &Option<Extracted>, what: &str) {
    let (got, want) = (comparable(got), comparable(want));
    if got == want {
        return;
    }
    let (Some(g), Some(w)) = (&got, &want) else {
        panic!(
            "{what}: session {:?} vs {:?}",
            got.is_some(),
            want.is_some()
        );
    };
    assert_eq!(g.meta, w.meta, "{what}: meta");
    assert_eq!(g.diagnostics, w.diagnostics, "{what}: diagnostics");
    assert_eq!(g.marks, w.marks, "{what}: marks");
    for (i, (a, b)) in g.records.iter().zip(&w.records).enumerate() {
        assert_eq!(a, b, "{what}: record {i}");
    }
    panic!("{what}: {} records vs {}", g.records.len(), w.records.len());
}

/// The checkpoint as the indexer would store and load it.
fn round_trip(cp: &Checkpoint) -> Checkpoint {
    let bytes = serde_json::to_vec(cp).unwrap();
    let back: Checkpoint = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(&back, cp, "a checkpoint survives JSON");
    back
}

/// uuids occurring in more than one of a Claude unit's files (a pattern
/// the extractor may answer with a full extraction).
fn shared_uuids(files: &[&[u8]]) -> bool {
    let mut owner: HashMap<String, usize> = HashMap::new();
    for (i, bytes) in files.iter().enumerate() {
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
                continue;
            };
            if let Some(u) = v
                .get("uuid")
                .and_then(|u| u.as_str())
                .filter(|u| !u.is_empty())
            {
                if *owner.entry(u.to_string()).or_insert(i) != i {
                    return true;
                }
            }
        }
    }
    false
}

/// Whether a Kimi Code wire's lane choice may flip after a line it decided
/// (a legitimate full extraction): a line that depends on a lane comes
/// before that lane's needle.
fn kimi_lane_flip(bytes: &[u8]) -> bool {
    let at = |n: &str| bytes.windows(n.len()).position(|w| w == n.as_bytes());
    let Some(dep) = at("\"context.append_message\"") else {
        return false;
    };
    ["\"turn.prompt\"", "\"content.part\""]
        .iter()
        .any(|n| at(n).is_some_and(|i| i > dep))
}

/// Whether the resume from stage `prev` to `now` must really resume.
fn must_resume(unit: &Unit, prev: &[Option<usize>], now: &[Option<usize>]) -> bool {
    let fed: Vec<usize> = (0..unit.full.len())
        .filter(|&i| unit.is_fed(i) && now[i].is_some())
        .collect();
    if fed.is_empty() {
        return false; // a zstd rollout
    }
    let slice = |i: usize, s: &[Option<usize>]| &unit.full[i][..s[i].unwrap_or(0)];
    match unit.orig.source {
        Source::ClaudeCode => {
            !shared_uuids(&fed.iter().map(|&i| slice(i, now)).collect::<Vec<_>>())
        }
        Source::Kimi => {
            let code = unit.orig.files[0].ends_with("agents/main/wire.jsonl");
            let same_files = fed.iter().all(|&i| prev[i].is_some());
            (code || same_files || fed.len() == 1)
                && !fed.iter().any(|&i| kimi_lane_flip(slice(i, now)))
        }
        _ => fed.len() == 1,
    }
}

/// Runs every plan of `unit`; returns (resumes, of which really resumed).
fn check_unit(unit: &Unit, rng: &mut Rng) -> (usize, usize) {
    let (mut resumes, mut resumed) = (0, 0);
    for plan in unit.plans(rng) {
        let mut copy = Copy::new(unit);
        let mut prev: Option<(Checkpoint, Vec<Option<usize>>)> = None;
        for stage in &plan {
            copy.grow(stage);
            let src = copy.source();
            let fresh = extract_resumable(&src, &[], None)
                .unwrap_or_else(|e| panic!("{}: {e}", unit.name()));
            assert!(!fresh.resumed);
            assert_same(
                &fresh.extracted,
                &extract::extract(&src).unwrap(),
                &format!(
                    "{}: the resumable path extracts like extract()",
                    unit.name()
                ),
            );
            let Some((cp, before)) = prev.take() else {
                prev = fresh
                    .checkpoint
                    .as_ref()
                    .map(|c| (round_trip(c), stage.clone()));
                continue;
            };
            let budget = copy.resume_budget(&cp);
            let got: Resumed = extract_resumable(&src, &[], Some(&cp))
                .unwrap_or_else(|e| panic!("{}: {e}", unit.name()));
            let what = format!("{} {:?} -> {:?}", unit.name(), before, stage);
            assert_same(
                &got.extracted,
                &fresh.extracted,
                &format!("{what}: a resume extracts like a full extraction"),
            );
            assert!(
                got.checkpoint == fresh.checkpoint,
                "{what}: a resume ends in the full extraction's state"
            );
            resumes += 1;
            if got.resumed {
                resumed += 1;
                assert!(
                    got.bytes_read <= budget,
                    "{what}: a resume read {} bytes, more than the {budget} appended",
                    got.bytes_read
                );
            } else {
                assert!(
                    !must_resume(unit, &before, stage),
                    "{what}: fell back to a full extraction"
                );
            }
            prev = got
                .checkpoint
                .as_ref()
                .map(|c| (round_trip(c), stage.clone()));
        }
    }
    (resumes, resumed)
}

fn check_units(units: Vec<SessionSource>, seed: u64) -> (usize, usize, usize) {
    let mut rng = Rng(seed);
    let (mut n, mut resumes, mut resumed) = (0, 0, 0);
    // `RESUME_ONLY=codex,pi` narrows a local run to some sources.
    let only = std::env::var("RESUME_ONLY").unwrap_or_default();
    for src in units {
        if !only.is_empty() && !only.split(',').any(|o| o == src.source.as_str()) {
            continue;
        }
        let unit = Unit::new(src);
        let (a, b) = check_unit(&unit, &mut rng);
        n += 1;
        resumes += a;
        resumed += b;
    }
    (n, resumes, resumed)
}

fn corpus_units() -> Vec<SessionSource> {
    let shared = golden::shared_dir();
    let corpus = shared.join("corpus");
    let mut units = claude::discover(&corpus.join("claude-code"));
    for path in walk_files(&corpus.join("codex"), 8, &|n| n.ends_with(".jsonl")) {
        units.push(single(Source::Codex, &path, serde_json::Value::Null));
    }
    units.extend(
        codex::discover(&corpus.join("codex/synthetic"))
            .into_iter()
            .filter(|u| !line_fed(&u.files[0])),
    );
    for dir in sorted_dirs(&corpus.join("kimi/kimi-code-v1x")) {
        let mut files = vec![dir.join("agents/main/wire.jsonl"), dir.join("state.json")];
        for agent in sorted_dirs(&dir.join("agents")) {
            if !agent.ends_with("main") {
                files.push(agent.join("wire.jsonl"));
            }
        }
        units.push(SessionSource {
            source: Source::Kimi,
            unit: dir.to_string_lossy().into_owned(),
            files,
            context: serde_json::json!({"flavor": "code"}),
        });
    }
    for dir in sorted_dirs(&corpus.join("kimi/legacy-kimi-cli")) {
        units.push(SessionSource {
            source: Source::Kimi,
            unit: dir.to_string_lossy().into_owned(),
            files: vec![dir.join("wire.jsonl"), dir.join("state.json")],
            context: serde_json::json!({"flavor": "legacy", "cwd": null}),
        });
    }
    for path in walk_files(&corpus.join("pi"), 3, &|n| n.ends_with(".jsonl")) {
        units.push(single(Source::Pi, &path, serde_json::Value::Null));
    }
    units.extend(intendant::discover(&golden::test_path(
        "fixtures/intendant",
    )));
    units
}

fn single(source: Source, path: &Path, context: serde_json::Value) -> SessionSource {
    SessionSource {
        source,
        unit: path.to_string_lossy().into_owned(),
        files: vec![path.to_path_buf()],
        context,
    }
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A generated home (`gen.py`) in a scratch directory.
fn generated(seed: u32) -> (Scratch, Vec<SessionSource>) {
    let gen = golden::shared_dir().join("corpus-gen/gen.py");
    let out = Scratch::new(&format!("resume-gen{seed}"));
    let status = Command::new("python3")
        .arg(&gen)
        .arg("--out")
        .arg(out.0.join("g"))
        .args(["--seed", &seed.to_string(), "--sessions", "30"])
        .stderr(std::process::Stdio::null())
        .status()
        .expect("python3");
    assert!(status.success(), "gen.py failed");
    let roots = Roots::resolve(&out.0.join("g/home"), |_| None);
    let units = extract::discover(&roots);
    (out, units)
}

fn report(what: &str, (units, resumes, resumed): (usize, usize, usize)) {
    eprintln!("{what}: {units} units, {resumes} resumes, {resumed} resumed");
    assert!(units > 0 && resumed > 0, "{what}: nothing was resumed");
}

#[test]
fn corpus_units_resume_exactly() {
    let units = corpus_units();
    let sources: HashSet<Source> = units.iter().map(|u| u.source).collect();
    assert_eq!(sources.len(), 5, "every source has corpus units");
    report("corpus", check_units(units, 1));
}

/// Cross-file patterns the corpora lack: uuids shared between files,
/// assistant messages split over lines, files without timestamps (Claude);
/// `undo` in sub-agent wires, a lane flip after a decided line, wires on
/// the `append_message` lanes only (Kimi). Many seeds, as the units are
/// small.
#[test]
fn fixture_units_resume_exactly() {
    let root = golden::test_path("fixtures/resume");
    let mut units = claude::discover(&root.join("claude"));
    units.extend(kimi::discover_code(&root.join("kimi")));
    assert_eq!(units.len(), 2);
    assert_eq!(units[0].files.len(), 4, "main + three subagents");
    assert_eq!(units[1].files.len(), 4, "main, state.json, two sub wires");
    let (mut resumes, mut resumed) = (0, 0);
    for seed in 0..40 {
        let (_, a, b) = check_units(units.clone(), 100 + seed);
        resumes += a;
        resumed += b;
    }
    eprintln!("fixtures: {resumes} resumes, {resumed} resumed");
    assert!(
        resumed > 0 && resumed < resumes,
        "some resume, some fall back"
    );
}

#[test]
fn generated_home_seed_1_resumes_exactly() {
    let (_dir, units) = generated(1);
    report("seed 1", check_units(units, 11));
}

#[test]
fn generated_home_seed_2_resumes_exactly() {
    let (_dir, units) = generated(2);
    report("seed 2", check_units(units, 22));
}

/// A copy of `unit` grown to `stage` and extracted from byte 0.
fn extracted_copy<'u>(unit: &'u Unit, stage: &[Option<usize>]) -> (Copy<'u>, Resumed) {
    let mut copy = Copy::new(unit);
    copy.grow(stage);
    let r = extract_resumable(&copy.source(), &[], None).unwrap();
    (copy, r)
}

/// Resumes `copy` from `cp` and checks it against a full extraction;
/// returns whether it resumed.
fn resume_matches(copy: &Copy, cp: &Checkpoint, what: &str) -> bool {
    let src = copy.source();
    let got = extract_resumable(&src, &[], Some(cp)).unwrap();
    let fresh = extract_resumable(&src, &[], None).unwrap();
    assert_same(&got.extracted, &fresh.extracted, what);
    got.resumed
}

fn corpus_unit(source: Source, pick: &dyn Fn(&SessionSource) -> bool) -> Unit {
    let src = corpus_units()
        .into_iter()
        .find(|u| u.source == source && pick(u))
        .expect("corpus unit");
    Unit::new(src)
}

#[test]
fn a_torn_last_line_is_picked_up_on_resume() {
    let unit = corpus_unit(Source::Pi, &|u| u.unit.contains("large-session"));
    let b = boundaries(&unit.full[0]);
    assert!(b.len() > 6, "a file of several lines");
    // k complete lines, then half of the next.
    let k = b.len() / 2;
    let cut = b[k] + (b[k + 1] - b[k]) / 2;
    let (mut copy, first) = extracted_copy(&unit, &[Some(cut)]);
    let cp = first.checkpoint.expect("a checkpoint");
    assert_eq!(
        cp.files[0].offset, b[k] as u64,
        "fed up to the last complete line"
    );
    assert_eq!(cp.files[0].lines, k as u64);
    let x = first.extracted.expect("a session");
    assert_eq!(x.diagnostics.torn_tails, 1);
    let records_before = x.records.len();
    // The writer finishes the line (and the file).
    copy.grow(&[Some(b[k + 1])]);
    let src = copy.source();
    let got = extract_resumable(&src, &[], Some(&cp)).unwrap();
    assert!(got.resumed);
    assert_eq!(
        got.bytes_read,
        (b[k + 1] - b[k]) as u64,
        "only the torn line is read again"
    );
    let x = got.extracted.expect("a session");
    assert_eq!(x.diagnostics.torn_tails, 0);
    assert!(x.records.len() >= records_before);
    assert_same(
        &Some(x),
        &extract_resumable(&src, &[], None).unwrap().extracted,
        "torn line completed",
    );
}

#[test]
fn ends_bound_what_is_read() {
    let unit = corpus_unit(Source::ClaudeCode, &|u| u.files.len() > 1);
    let full: Vec<Option<usize>> = unit.full.iter().map(|f| Some(f.len())).collect();
    let (copy, _) = extracted_copy(&unit, &full);
    let src = copy.source();
    // Read each file only up to a line boundary in its middle.
    let ends: Vec<u64> = unit
        .full
        .iter()
        .map(|f| {
            let b = boundaries(f);
            b[b.len() / 2] as u64
        })
        .collect();
    let bounded = extract_resumable(&src, &ends, None).unwrap();
    let cp = bounded.checkpoint.clone().expect("a checkpoint");
    for (f, end) in cp.files.iter().zip(&ends) {
        assert_eq!(f.offset, *end, "fed exactly up to its end");
    }
    assert_eq!(
        bounded.bytes_read,
        ends.iter().sum::<u64>(),
        "nothing past the ends"
    );
    // The same as extracting the files cut there.
    let cut: Vec<Option<usize>> = ends.iter().map(|&e| Some(e as usize)).collect();
    let mut short = Copy::new(&unit);
    short.grow(&cut);
    let mut want = extract_resumable(&short.source(), &[], None)
        .unwrap()
        .extracted
        .expect("a session");
    let got = bounded.extracted.expect("a session");
    want.meta.paths = got.meta.paths.clone();
    assert_same(&Some(got), &Some(want), "ends = files cut at the ends");
    // Resuming to EOF from the bounded checkpoint.
    assert!(resume_matches(&copy, &cp, "resume past the ends"));
}

#[test]
fn foreign_or_stale_checkpoints_are_ignored() {
    let pis: Vec<SessionSource> = corpus_units()
        .into_iter()
        .filter(|u| u.source == Source::Pi)
        .collect();
    let (a, b) = (Unit::new(pis[0].clone()), Unit::new(pis[1].clone()));
    let full = |u: &Unit| vec![Some(u.full[0].len())];
    let (_ca, ra) = extracted_copy(&a, &full(&a));
    let (cb, _) = extracted_copy(&b, &full(&b));
    let cp_a = ra.checkpoint.expect("a checkpoint");
    assert!(
        !resume_matches(&cb, &cp_a, "another unit's checkpoint"),
        "another unit's checkpoint is not used"
    );
    let codex = corpus_unit(Source::Codex, &|u| line_fed(&u.files[0]));
    let (cc, _) = extracted_copy(&codex, &full(&codex));
    let mut foreign = cp_a.clone();
    foreign.files[0].path = cc.path(0);
    assert!(!resume_matches(
        &cc,
        &foreign,
        "a pi state for a codex unit"
    ));
    foreign.source = Source::Codex;
    assert!(!resume_matches(&cc, &foreign, "a pi state claiming codex"));
    let (ca2, _) = extracted_copy(&a, &full(&a));
    let mut own = cp_a.clone();
    own.files[0].path = ca2.path(0);
    assert!(
        resume_matches(&ca2, &own, "its own checkpoint"),
        "the control resumes"
    );
    let mut old = own.clone();
    old.version += 1;
    assert!(!resume_matches(&ca2, &old, "another version"));
    let mut long = own.clone();
    long.files[0].offset += 1_000_000_000;
    long.files[0].lines = 0;
    assert!(!resume_matches(
        &ca2,
        &long,
        "an offset past the end of the file"
    ));
    let mut lines = own.clone();
    lines.files[0].lines = lines.files[0].offset + 1;
    assert!(!resume_matches(&ca2, &lines, "more lines than bytes"));
    // A Kimi Code state for the same files read as a legacy session.
    let kimi_unit = Unit::new(
        kimi::discover_code(&golden::test_path("fixtures/resume/kimi"))
            .pop()
            .expect("the kimi fixture"),
    );
    let kfull: Vec<Option<usize>> = kimi_unit.full.iter().map(|f| Some(f.len())).collect();
    let (kc, kr) = extracted_copy(&kimi_unit, &kfull);
    let mut legacy = kc.source();
    legacy.context = serde_json::json!({"flavor": "legacy"});
    let got = extract_resumable(&legacy, &[], kr.checkpoint.as_ref()).unwrap();
    assert!(
        !got.resumed,
        "a Kimi Code state is not used for a legacy layout"
    );
    let mut shrunk = own;
    let half = a.full[0].len() / 2;
    std::fs::write(ca2.path(0), &a.full[0][..half]).unwrap();
    shrunk.files[0].lines = 1;
    assert!(!resume_matches(
        &ca2,
        &shrunk,
        "a file shorter than its offset"
    ));
}

/// A JSON value damaged at random: numbers set to extremes, strings
/// changed, array elements dropped or repeated, booleans flipped.
fn damage(v: &mut serde_json::Value, rng: &mut Rng, rate: usize) {
    use serde_json::Value;
    let hit = |rng: &mut Rng| rng.below(rate) == 0;
    match v {
        Value::Number(_) if hit(rng) => {
            let pick = [0u64, 1, 2, 7, 1 << 32, u64::MAX / 2, u64::MAX];
            *v = Value::from(pick[rng.below(pick.len())]);
        }
        Value::String(s) if hit(rng) => {
            *s = ["", "x", "main", "0", "s1"][rng.below(5)].to_string();
        }
        Value::Bool(b) if hit(rng) => *b = !*b,
        Value::Array(items) => {
            if !items.is_empty() && hit(rng) {
                let i = rng.below(items.len());
                if rng.below(2) == 0 {
                    items.remove(i);
                } else {
                    let dup = items[i].clone();
                    items.push(dup);
                }
            }
            for x in items {
                damage(x, rng, rate);
            }
        }
        Value::Object(m) => {
            for x in m.values_mut() {
                damage(x, rng, rate);
            }
        }
        _ => {}
    }
}

#[test]
fn damaged_checkpoints_never_panic() {
    let fixtures = golden::test_path("fixtures/resume");
    let mut units: Vec<SessionSource> = Vec::new();
    for source in [Source::Codex, Source::Pi, Source::Intendant] {
        units.extend(
            corpus_units()
                .into_iter()
                .filter(|u| u.source == source)
                .take(2),
        );
    }
    units.extend(claude::discover(&fixtures.join("claude")));
    units.extend(kimi::discover_code(&fixtures.join("kimi")));
    units.extend(
        corpus_units()
            .into_iter()
            .filter(|u| u.source == Source::Kimi && u.files.len() == 2)
            .take(1),
    );
    let mut rng = Rng(7);
    let mut tried = 0;
    for src in units {
        let unit = Unit::new(src);
        let half: Vec<Option<usize>> = unit
            .full
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let b = boundaries(f);
                Some(if unit.is_fed(i) {
                    b[b.len() / 2]
                } else {
                    f.len()
                })
            })
            .collect();
        let (mut copy, first) = extracted_copy(&unit, &half);
        let Some(cp) = first.checkpoint else { continue };
        copy.grow(&unit.full.iter().map(|f| Some(f.len())).collect::<Vec<_>>());
        let src = copy.source();
        let fresh = extract_resumable(&src, &[], None).unwrap();
        let json = serde_json::to_value(&cp).unwrap();
        for round in 0..150 {
            let mut bad = json.clone();
            damage(&mut bad, &mut rng, 2 + round % 40);
            let Ok(bad) = serde_json::from_value::<Checkpoint>(bad) else {
                continue;
            };
            tried += 1;
            // Must not panic; a state it does not take means a full read.
            if let Ok(r) = extract_resumable(&src, &[], Some(&bad)) {
                if !r.resumed {
                    assert_same(&r.extracted, &fresh.extracted, "a refused state");
                }
            }
        }
    }
    assert!(tried > 500, "only {tried} damaged checkpoints deserialized");
}

#[test]
fn intendant_sidecars_are_never_stale() {
    let unit = Unit::new(
        intendant::discover(&golden::test_path("fixtures/intendant"))
            .into_iter()
            .find(|u| u.unit.ends_with("new-era"))
            .expect("the new-era fixture"),
    );
    let full: Vec<Option<usize>> = unit.full.iter().map(|f| Some(f.len())).collect();
    let sidecar = |copy: &Copy, name: &str| copy.path(0).parent().unwrap().join("turns").join(name);

    // A sidecar that grows (the live case) keeps its spans: resumed.
    let (copy, r) = extracted_copy(&unit, &full);
    let cp = r.checkpoint.expect("a checkpoint");
    append(&sidecar(&copy, "turn_001_model.txt"), b"more model text\n");
    assert!(resume_matches(&copy, &cp, "a sidecar appended to"));

    // A span rewritten in place: the stored text is stale, so a full read.
    let (copy, r) = extracted_copy(&unit, &full);
    let cp = r.checkpoint.expect("a checkpoint");
    let p = sidecar(&copy, "turn_002_model.txt");
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[3] = if bytes[3] == b'Z' { b'Y' } else { b'Z' };
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&p, &bytes).unwrap();
    assert!(
        !resume_matches(&copy, &cp, "a span rewritten"),
        "never stale"
    );

    // A span that was too short, now complete: a full read finds it.
    let (copy, _) = extracted_copy(&unit, &full);
    let p = sidecar(&copy, "turn_003_model.txt");
    let whole = std::fs::read(&p).unwrap();
    std::fs::write(&p, &whole[..30]).unwrap();
    let r = extract_resumable(&copy.source(), &[], None).unwrap();
    let cp = r.checkpoint.expect("a checkpoint");
    std::fs::write(&p, &whole).unwrap();
    assert!(
        !resume_matches(&copy, &cp, "a short span completed"),
        "never stale"
    );
}
