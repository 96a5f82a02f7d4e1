//! Random §4 filters for one known record, and whether that record passes
//! them: the reference the token requests are checked against.

use super::corpus::{RecordFacts, SessionFacts};
use super::rng::Rng;
use recall_core::model::{Role, Source};
use serde_json::{Map, Value};

/// Spellings of each source id accepted by `source=` (canonical + aliases).
pub fn source_spellings(s: Source) -> &'static [&'static str] {
    match s {
        Source::ClaudeCode => &["claude-code", "claude", "cc"],
        Source::Codex => &["codex"],
        Source::Kimi => &["kimi", "kimi-code"],
        Source::Pi => &["pi", "pi-coding-agent"],
        Source::Intendant => &["intendant"],
        Source::Dsh => &["dsh", "deepseek-harness"],
        Source::Gemini => &["gemini", "gemini-cli"],
        Source::Copilot => &[
            "copilot",
            "copilot-cli",
            "github-copilot",
            "github-copilot-cli",
        ],
        Source::Qwen => &["qwen", "qwen-code"],
        Source::OpenCode => &["opencode", "open-code"],
    }
}

/// Adds random filters to `req` and returns whether `record` of `session`
/// still matches under them (its text is assumed to match `q`).
pub fn add_random(
    rng: &mut Rng,
    req: &mut Map<String, Value>,
    session: &SessionFacts,
    record: &RecordFacts,
) -> bool {
    let mut passes = true;
    if rng.chance(30) {
        let own = *rng.pick(source_spellings(session.source)).unwrap_or(&"pi");
        let other_src = Source::ALL[(Source::ALL
            .iter()
            .position(|s| *s == session.source)
            .unwrap_or(0)
            + 1
            + rng.below(Source::ALL.len() - 1))
            % Source::ALL.len()];
        let other = source_spellings(other_src)[0];
        let v = match rng.below(3) {
            0 => own.to_string(),
            1 => {
                passes = false;
                other.to_string()
            }
            _ => format!("{other}, {own}"),
        };
        req.insert("source".into(), v.into());
    }
    let all_scope = rng.chance(25);
    if all_scope {
        req.insert("scope".into(), "all".into());
    } else if rng.chance(10) {
        req.insert("scope".into(), "conversation".into());
    }
    if rng.chance(25) {
        let own = record.role;
        let other = if own == Role::User {
            Role::Assistant
        } else {
            Role::User
        };
        let v = match rng.below(3) {
            0 => own.as_str().to_string(),
            1 => {
                passes = false;
                other.as_str().to_string()
            }
            _ if all_scope => format!("tool,{}", own.as_str()),
            _ => "user,assistant".to_string(),
        };
        req.insert("role".into(), v.into());
    }
    if rng.chance(25) {
        passes &= add_time(rng, req, record.ts_ms);
    }
    if rng.chance(20) {
        passes &= add_cwd(rng, req, session.cwd.as_deref());
    }
    if rng.chance(35) {
        let (v, show): (Value, bool) = match rng.below(4) {
            0 => ("false".into(), false),
            1 => (false.into(), false),
            2 => ("0".into(), false),
            _ => ("true".into(), true),
        };
        if !show && !record.active {
            passes = false;
        }
        req.insert("include_superseded".into(), v);
    }
    if rng.chance(20) {
        let hide = rng.chance(70);
        if hide && record.subagent {
            passes = false;
        }
        let v: Value = if rng.chance(50) {
            (!hide).into()
        } else {
            (!hide).to_string().into()
        };
        req.insert("subagents".into(), v);
    }
    add_sort_and_limit(rng, req);
    passes
}

/// A random sort (half the time) and limit (a third of the time), including
/// clamped and unparsable limits.
pub fn add_sort_and_limit(rng: &mut Rng, req: &mut Map<String, Value>) {
    match rng.below(4) {
        0 => {
            req.insert("sort".into(), "relevance".into());
        }
        1 => {
            req.insert("sort".into(), "newest".into());
        }
        _ => {}
    }
    if rng.chance(33) {
        let v: Value = match rng.below(6) {
            0 => "0".into(),
            1 => "-4".into(),
            2 => "1000".into(),
            3 => "many".into(),
            4 => (rng.range(1, 5) as u64).into(),
            _ => rng.range(1, 30).to_string().into(),
        };
        req.insert("limit".into(), v);
    }
}

/// Adds `since`/`until` around `ts`; returns whether `ts` is inside.
fn add_time(rng: &mut Rng, req: &mut Map<String, Value>, ts: i64) -> bool {
    let (since, until) = match rng.below(5) {
        0 => (Some(ts), None),
        1 => (Some(ts + 1), None),
        2 => (None, Some(ts)),
        3 => (None, Some(ts - 1)),
        _ => {
            let d = rng.range(0, 3_600_000) as i64;
            (Some(ts - d), Some(ts + d))
        }
    };
    let mut inside = true;
    if let Some(s) = since {
        let (text, bound) = time_text(rng, s, true);
        inside &= ts >= bound;
        req.insert("since".into(), text);
    }
    if let Some(u) = until {
        let (text, bound) = time_text(rng, u, false);
        inside &= ts <= bound;
        req.insert("until".into(), text);
    }
    inside
}

/// `ms` spelled as epoch ms or one of the RFC 3339 forms, and the bound it
/// parses to (a bare date is midnight UTC, so it moves the bound).
fn time_text(rng: &mut Rng, ms: i64, lower: bool) -> (Value, i64) {
    match rng.below(6) {
        0 => (Value::from(ms), ms),
        1 => (ms.to_string().into(), ms),
        2 => (format!("{}Z", rfc3339(ms)).into(), ms),
        3 => (rfc3339(ms).into(), ms),
        4 => {
            let shifted = ms + 2 * 3_600_000;
            (format!("{}+02:00", rfc3339(shifted)).into(), ms)
        }
        _ => {
            let day = ms.div_euclid(86_400_000) * 86_400_000;
            let day = if lower { day } else { day - 86_400_000 };
            (rfc3339(day)[..10].to_string().into(), day)
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmm` (UTC, no offset).
pub fn rfc3339(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}",
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// Howard Hinnant's civil_from_days.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Adds a `cwd` filter; returns whether `cwd` passes it.
fn add_cwd(rng: &mut Rng, req: &mut Map<String, Value>, cwd: Option<&str>) -> bool {
    let Some(cwd) = cwd else {
        req.insert("cwd".into(), "/home/mara".into());
        return false;
    };
    let parent = cwd.rsplit_once('/').map_or("/", |(p, _)| p);
    let parent = if parent.is_empty() { "/" } else { parent };
    let (v, passes) = match rng.below(6) {
        0 => (cwd.to_string(), true),
        1 => (format!("{cwd}/"), true),
        2 => (parent.to_string(), true),
        3 => (format!("/nowhere,{parent}"), true),
        // A prefix that is not a whole component.
        4 => {
            let mut cut = cwd.to_string();
            cut.pop();
            (cut, false)
        }
        _ => (format!("{cwd}/deeper"), false),
    };
    req.insert("cwd".into(), v.into());
    passes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_through_the_core_parser() {
        for ms in [0, 1_788_479_147_120, 1_793_000_000_000 - 1, 951_782_400_000] {
            let s = format!("{}Z", rfc3339(ms));
            assert_eq!(recall_core::time::parse_rfc3339_ms(&s), Some(ms), "{s}");
        }
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000");
    }
}
