//! Native/wasm parity (DESIGN.md §8, §10): thousands of generated requests,
//! and every page their cursors lead to, give byte-identical JSON from the
//! native core and from the committed `pkg/recall_core_bg.wasm` in wasmtime.
//! Each request also carries what it must find, so the comparison cannot
//! pass on empty answers.

use recall_core::model::Source;
use recall_tests::parity::agents;
use recall_tests::parity::corpus::{self, Corpus};
use recall_tests::parity::requests::{self, Expect, Probe};
use recall_tests::parity::run::{run, Sides};
use recall_tests::parity::segmented;
use recall_tests::parity::shipped_wasm;
use recall_tests::parity::wasm::WasmIndex;

/// corpus-gen seeds whose truth files become the corpus.
const SEEDS: [u64; 3] = [1, 2, 3];
/// Source sessions generated per seed.
const SESSIONS: u32 = 60;
/// Seed of the request generator.
const REQUEST_SEED: u64 = 20_261_129;

fn corpus() -> Corpus {
    corpus::from_seeds(&SEEDS, SESSIONS).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn native_and_wasm_agree_byte_for_byte() {
    let corpus = corpus();
    assert!(
        corpus.facts.sessions.len() >= 150,
        "{} sessions",
        corpus.facts.sessions.len()
    );
    let probes = requests::generate(&corpus.facts, REQUEST_SEED);
    assert!(probes.len() >= 2_000, "only {} probes", probes.len());
    let strict = probes.iter().filter(|p| p.expect != Expect::Any).count();
    assert!(
        strict * 4 >= probes.len() * 3,
        "{strict} of {} probes check a result",
        probes.len()
    );

    let per_source = coverage(&corpus, &probes);

    let mut sides = Sides::load(&corpus, &shipped_wasm()).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&mut sides, &probes).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("parity: {out}requests that must find a session, per source (under a source filter): {per_source}");
    assert!(out.is_clean(), "{out}");
    assert!(
        out.with_hits * 2 >= out.probes,
        "too few probes found anything: {out}"
    );
    assert!(out.cursor_pages >= 500, "too few cursor pages: {out}");
    assert!(out.errors >= 25, "too few error probes: {out}");

    // The checks bite: the same requests with wrong expectations all fail.
    let wrong: Vec<_> = probes
        .iter()
        .filter(|p| matches!(p.expect, Expect::OnlyRecord(_)))
        .take(20)
        .map(|p| requests::Probe {
            expect: Expect::OnlyRecord("pi:not-a-session".into()),
            ..p.clone()
        })
        .chain(
            probes
                .iter()
                .filter(|p| p.expect == Expect::Nothing)
                .take(20)
                .map(|p| requests::Probe {
                    expect: Expect::Hits,
                    ..p.clone()
                }),
        )
        .collect();
    let out = run(&mut sides, &wrong).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.failures.len(), wrong.len(), "{out}");
}

/// The session key a probe must find, if any.
fn target(p: &Probe) -> Option<&str> {
    match &p.expect {
        Expect::OnlyRecord(k) | Expect::OnlySession(k) | Expect::Includes(k) => Some(k),
        _ => None,
    }
}

/// Every source has sessions in the corpus — corpus-gen's from its truth,
/// the others from `tests/fixtures/parity-agents.json` — and enough requests
/// must find one of them, some under a `source=` filter: a source without
/// either fails here. Returns the counts, for the log.
fn coverage(corpus: &Corpus, probes: &[Probe]) -> String {
    let agents = agents::table().unwrap_or_else(|e| panic!("{e}"));
    let mut counts = Vec::new();
    for src in Source::ALL {
        let sessions: Vec<&str> = corpus
            .facts
            .sessions
            .iter()
            .filter(|s| s.source == src)
            .map(|s| s.key.as_str())
            .collect();
        assert!(
            !sessions.is_empty(),
            "no {} session in the parity corpus (corpus-gen does not write it and tests/fixtures/parity-agents.json has no line for it)",
            src.as_str()
        );
        let hitting: Vec<&Probe> = probes
            .iter()
            .filter(|p| target(p).is_some_and(|k| sessions.contains(&k)))
            .collect();
        let filtered = hitting
            .iter()
            .filter(|p| p.request.contains("\"source\":"))
            .count();
        assert!(
            hitting.len() >= requests::PER_SOURCE && filtered >= requests::PER_SOURCE / 2,
            "{}: {} requests must find its sessions, {filtered} under a source filter",
            src.as_str(),
            hitting.len()
        );
        // Real transcripts (tests/shared/corpus), or a fixture written from
        // the agent's own schema, or corpus-gen's (unmarked).
        let origin = match agents.iter().find(|a| a.source == src) {
            Some(a) if a.corpus.is_some() => " [real]",
            Some(_) => " [fixture]",
            None => "",
        };
        counts.push(format!(
            "{}{} {} sessions {} requests ({filtered})",
            src.as_str(),
            origin,
            sessions.len(),
            hitting.len()
        ));
    }
    counts.join(", ")
}

/// The same probes through the store's own segment files: native and wasm
/// indexes holding the segments, and lazy ones that start with only the
/// manifest and segments and load what each search step asks for, all give
/// the plain index's bytes.
#[test]
fn segments_and_lazy_loading_give_the_same_bytes() {
    let corpus = corpus();
    // Every 10th probe (each costs five indexes here, the lazy ones several
    // steps; the native side runs unoptimized in `cargo test`): ≈ 280 probes
    // and their pages (952 cursor pages, 724 lazy steps).
    let probes: Vec<_> = requests::generate(&corpus.facts, REQUEST_SEED)
        .into_iter()
        .step_by(10)
        .collect();
    let wasm = shipped_wasm();
    let mut sides = Sides::load(&corpus, &wasm)
        .and_then(|s| s.with_segments(&corpus, &wasm))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = run(&mut sides, &probes).unwrap_or_else(|e| panic!("{e}"));
    let seg = sides.segmented.as_ref().expect("segmented sides");
    eprintln!(
        "parity through segments: {out}lazy: {} requests, {} steps that asked for generations, {} generations loaded over {} fresh starts ({} generations in the corpus)",
        seg.lazy_requests,
        seg.lazy_rounds,
        seg.lazy_loaded,
        out.probes.div_ceil(segmented::RESET_EVERY),
        corpus.generations.len()
    );
    assert!(out.is_clean(), "{out}");
    assert!(out.cursor_pages >= 300, "too few cursor pages: {out}");
    assert!(seg.lazy_rounds >= 100, "the lazy index rarely had to load");
    // Segments make the lazy index load less than everything per start.
    let starts = out.probes.div_ceil(segmented::RESET_EVERY);
    assert!(
        seg.lazy_loaded < starts * corpus.generations.len() / 2,
        "lazy loading fetched nearly everything: {} over {starts} starts",
        seg.lazy_loaded
    );
}

#[test]
fn byte_abi_refuses_bad_input_with_a_message() {
    let mut w = WasmIndex::load(&shipped_wasm()).unwrap_or_else(|e| panic!("{e}"));
    let err = w
        .add_generation("0000000000000000.json", b"{}")
        .expect_err("a name that is not the content hash must be refused");
    assert!(err.to_string().contains("content hash"), "{err}");
    let err = w
        .set_manifest(b"not json")
        .expect_err("a bad manifest must be refused");
    assert!(err.to_string().contains("manifest"), "{err}");
    let err = w
        .add_segment("0000000000000000.seg", b"not a segment")
        .expect_err("a segment name that is not the content hash must be refused");
    assert!(err.to_string().contains("content hash"), "{err}");
    let junk = b"RSEG but torn";
    let name = format!("{}.seg", recall_core::naming::hash16(junk));
    let err = w
        .add_segment(&name, junk)
        .expect_err("bytes that are not a segment must be refused");
    assert!(err.to_string().contains("not valid"), "{err}");
    // An empty index still answers with a well-formed response.
    let body = w
        .search_json(r#"{"q":"anything"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let v: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["ok"], true, "{body}");
    assert_eq!(v["sessions"].as_array().map(Vec::len), Some(0), "{body}");
    let body = w
        .search_json("\u{0}not json")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(body.contains("\"invalid_param\""), "{body}");
}
