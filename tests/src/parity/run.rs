//! Sends every probe — and every page its cursors lead to — to the native
//! core and to the wasm module, requires byte-identical JSON, and checks
//! each probe's [`Expect`]ation on the native answers.

use super::corpus::Corpus;
use super::requests::{Expect, Probe};
use super::segmented::Segmented;
use super::wasm::WasmIndex;
use super::ParityError;
use recall_core::MemIndex;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::fmt;

/// The most pages one probe may take (a cursor loop guard).
const MAX_PAGES: usize = 2_000;
/// Differences and failures printed in full.
const SHOWN: usize = 15;

/// What a run compared and found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Probes sent.
    pub probes: usize,
    /// Requests sent to each side (probes + follow-up pages + foreign cursors).
    pub requests: usize,
    /// Pages fetched through a cursor.
    pub cursor_pages: usize,
    /// Probes whose first page had at least one session.
    pub with_hits: usize,
    /// Probes answered with an error body.
    pub errors: usize,
    /// Cursors replayed with another query (must be `invalid_cursor`).
    pub foreign_cursors: usize,
    /// Native/wasm differences, readable.
    pub diffs: Vec<String>,
    /// Expectations not met, readable.
    pub failures: Vec<String>,
}

impl Outcome {
    /// No difference and no failed expectation.
    pub fn is_clean(&self) -> bool {
        self.diffs.is_empty() && self.failures.is_empty()
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} probes, {} requests ({} cursor pages, {} foreign cursors), {} with hits, {} errors; {} differences, {} failed expectations",
            self.probes,
            self.requests,
            self.cursor_pages,
            self.foreign_cursors,
            self.with_hits,
            self.errors,
            self.diffs.len(),
            self.failures.len()
        )?;
        for d in self.diffs.iter().take(SHOWN) {
            writeln!(f, "DIFF {d}")?;
        }
        for d in self.failures.iter().take(SHOWN) {
            writeln!(f, "FAIL {d}")?;
        }
        let hidden =
            self.diffs.len().saturating_sub(SHOWN) + self.failures.len().saturating_sub(SHOWN);
        if hidden > 0 {
            writeln!(f, "… and {hidden} more")?;
        }
        Ok(())
    }
}

/// Both sides, loaded with the same corpus.
pub struct Sides {
    /// The native index.
    pub native: MemIndex,
    /// The wasm index.
    pub wasm: WasmIndex,
    /// When set, every request also goes through the store's segment files
    /// (native, wasm, and lazily loaded native and wasm), which must give
    /// the same bytes.
    pub segmented: Option<Segmented>,
}

impl Sides {
    /// Loads `corpus` into a native index and into the module at `wasm`.
    pub fn load(corpus: &Corpus, wasm: &std::path::Path) -> Result<Sides, ParityError> {
        let mut native = MemIndex::new();
        let mut w = WasmIndex::load(wasm)?;
        for (name, bytes) in &corpus.generations {
            native
                .add_generation(name, bytes)
                .map_err(|e| ParityError::Native(e.to_string()))?;
            w.add_generation(name, bytes)?;
        }
        native
            .set_manifest(&corpus.manifest)
            .map_err(|e| ParityError::Native(e.to_string()))?;
        w.set_manifest(&corpus.manifest)?;
        Ok(Sides {
            native,
            wasm: w,
            segmented: None,
        })
    }

    /// Adds the four segment-path sides ([`Segmented`]).
    pub fn with_segments(
        mut self,
        corpus: &Corpus,
        wasm: &std::path::Path,
    ) -> Result<Sides, ParityError> {
        self.segmented = Some(Segmented::load(corpus, wasm)?);
        Ok(self)
    }

    /// One request to both sides; the native answer, or a recorded diff.
    fn both(&mut self, request: &str, out: &mut Outcome) -> Result<Option<String>, ParityError> {
        out.requests += 1;
        let n = self.native.search_json(request);
        let w = self.wasm.search_json(request)?;
        if n != w {
            out.diffs.push(describe_diff(request, &n, &w));
            return Ok(None);
        }
        if let Some(seg) = &mut self.segmented {
            let others = [
                ("segments, native", seg.native.search_json(request)),
                ("segments, wasm", seg.wasm.search_json(request)?),
                ("lazy, native", seg.lazy_native(request)?),
                ("lazy, wasm", seg.lazy_wasm(request)?),
            ];
            for (side, body) in others {
                if body != n {
                    let d = describe_diff(request, &n, &body);
                    out.diffs.push(format!("[{side}] {d}"));
                    return Ok(None);
                }
            }
        }
        Ok(Some(n))
    }
}

/// Runs every probe.
pub fn run(sides: &mut Sides, probes: &[Probe]) -> Result<Outcome, ParityError> {
    let mut out = Outcome::default();
    for (i, p) in probes.iter().enumerate() {
        out.probes += 1;
        if let Some(seg) = &mut sides.segmented {
            seg.next_probe()?;
        }
        let Some(first) = sides.both(&p.request, &mut out)? else {
            continue;
        };
        let first: Value = serde_json::from_str(&first)
            .map_err(|e| ParityError::Native(format!("response is not JSON: {e}")))?;
        if first["ok"] == Value::Bool(false) {
            out.errors += 1;
            check_error(p, &first, &mut out);
            continue;
        }
        let mut pages = vec![first];
        let mut seen_cursors = BTreeSet::new();
        while let Some(cursor) = pages
            .last()
            .and_then(|r| r["cursor"].as_str())
            .map(str::to_string)
        {
            if pages.len() >= MAX_PAGES || !seen_cursors.insert(cursor.clone()) {
                out.failures
                    .push(format!("#{i} {}: cursor loop {}", p.kind, p.request));
                break;
            }
            if pages.len() == 1 && i % 7 == 0 {
                out.foreign_cursors += 1;
                foreign_cursor(sides, &cursor, &mut out)?;
            }
            let next = with_cursor(&p.request, &cursor)?;
            out.cursor_pages += 1;
            let Some(body) = sides.both(&next, &mut out)? else {
                break;
            };
            let v: Value = serde_json::from_str(&body)
                .map_err(|e| ParityError::Native(format!("response is not JSON: {e}")))?;
            if v["ok"] != Value::Bool(true) {
                out.failures.push(format!(
                    "#{i} {}: page {} failed: {body}",
                    p.kind,
                    pages.len() + 1
                ));
                break;
            }
            pages.push(v);
        }
        if sessions(&pages[0]).next().is_some() {
            out.with_hits += 1;
        }
        check_pages(i, p, &pages, &mut out);
    }
    Ok(out)
}

/// A cursor sent with another query must be refused as `invalid_cursor`.
fn foreign_cursor(sides: &mut Sides, cursor: &str, out: &mut Outcome) -> Result<(), ParityError> {
    let req = serde_json::json!({"q": "a different query", "cursor": cursor}).to_string();
    if let Some(body) = sides.both(&req, out)? {
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if v["error"] != "invalid_cursor" {
            out.failures
                .push(format!("foreign cursor accepted: {body}"));
        }
    }
    Ok(())
}

fn with_cursor(request: &str, cursor: &str) -> Result<String, ParityError> {
    let mut m: Map<String, Value> = serde_json::from_str(request)
        .map_err(|e| ParityError::Native(format!("probe is not an object: {e}")))?;
    m.insert("cursor".into(), cursor.into());
    Ok(Value::Object(m).to_string())
}

fn sessions(page: &Value) -> impl Iterator<Item = &Value> {
    page["sessions"].as_array().into_iter().flatten()
}

fn check_error(p: &Probe, body: &Value, out: &mut Outcome) {
    let code = body["error"].as_str().unwrap_or("");
    match &p.expect {
        Expect::Error(want) if *want == code => {}
        Expect::Any => {}
        e => out.failures.push(format!(
            "{}: expected {e:?}, got error {code} for {}",
            p.kind, p.request
        )),
    }
}

fn check_pages(i: usize, p: &Probe, pages: &[Value], out: &mut Outcome) {
    let all: Vec<&Value> = pages.iter().flat_map(sessions).collect();
    let keys: Vec<&str> = all
        .iter()
        .filter_map(|s| s["session_key"].as_str())
        .collect();
    let unique: BTreeSet<&str> = keys.iter().copied().collect();
    let mut fail = |why: String| {
        out.failures
            .push(format!("#{i} {}: {why} — {}", p.kind, p.request))
    };
    if unique.len() != keys.len() {
        fail(format!("a session appears on two pages: {keys:?}"));
    }
    let hits_of = |key: &str| {
        all.iter()
            .find(|s| s["session_key"] == key)
            .and_then(|s| s["total_hits"].as_u64())
    };
    match &p.expect {
        Expect::Any => {}
        Expect::Error(code) => fail(format!(
            "expected error {code}, got {} sessions",
            keys.len()
        )),
        Expect::Nothing if !keys.is_empty() => fail(format!("expected nothing, got {keys:?}")),
        Expect::Nothing => {}
        Expect::OnlyRecord(k) => {
            if keys != [k.as_str()] || hits_of(k) != Some(1) {
                fail(format!(
                    "expected only {k} with one hit, got {keys:?} ({:?} hits)",
                    hits_of(k)
                ));
            }
        }
        Expect::OnlySession(k) if keys != [k.as_str()] => {
            fail(format!("expected only {k}, got {keys:?}"))
        }
        Expect::OnlySession(_) => {}
        Expect::Includes(k) if !unique.contains(k.as_str()) => {
            fail(format!("expected {k} among {} sessions", keys.len()))
        }
        Expect::Includes(_) => {}
        Expect::Hits if keys.is_empty() => fail("expected hits, got none".to_string()),
        Expect::Hits => {}
    }
}

/// The request and the two answers around their first differing byte.
fn describe_diff(request: &str, native: &str, wasm: &str) -> String {
    let at = native
        .bytes()
        .zip(wasm.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(native.len().min(wasm.len()));
    let window = |s: &str| {
        let mut a = at.saturating_sub(80);
        while !s.is_char_boundary(a) {
            a -= 1;
        }
        let mut b = (at + 80).min(s.len());
        while !s.is_char_boundary(b) {
            b += 1;
        }
        s[a..b].to_string()
    };
    format!(
        "request {request}\n  first difference at byte {at} (native {} bytes, wasm {} bytes)\n  native …{}…\n  wasm   …{}…",
        native.len(),
        wasm.len(),
        window(native),
        window(wasm)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_names_the_first_differing_byte() {
        let d = describe_diff("{}", r#"{"a":"Straße"}"#, r#"{"a":"Strasse"}"#);
        assert!(d.contains("at byte 10"), "{d}");
        assert!(d.contains("native 15 bytes, wasm 15 bytes"), "{d}");
        assert!(d.contains("Straße") && d.contains("Strasse"), "{d}");
    }
}
