//! Time values as the core reads them: the one parser of every accepted
//! time (`since`/`until` in the message search, the session list, the
//! one-session filter, MCP and the dashboard's presets) and calendar
//! arithmetic on epoch milliseconds. No clock and no time-zone database: a
//! relative form is resolved against the [`Clock`] the host passes in (its
//! `now` and its zone's offset from UTC).

/// The caller's clock: what a relative time is read against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Now, in epoch milliseconds.
    pub now_ms: i64,
    /// The local zone's offset from UTC at `now`, in minutes east (Tokyo is
    /// `540`, New York in winter `-300`); it places `today`'s midnight.
    pub utc_offset_min: i32,
}

impl Clock {
    /// A clock in UTC.
    pub fn utc(now_ms: i64) -> Clock {
        Clock {
            now_ms,
            utc_offset_min: 0,
        }
    }

    /// Reads the raw `now_ms` / `utc_offset_min` request fields (absent
    /// offset = UTC). `Ok(None)` when `now_ms` is absent.
    pub fn from_fields(
        now_ms: Option<&str>,
        offset: Option<&str>,
    ) -> Result<Option<Clock>, String> {
        let Some(now) = now_ms.map(str::trim).filter(|s| !s.is_empty()) else {
            return Ok(None);
        };
        let now_ms = now
            .parse::<i64>()
            .map_err(|_| "now_ms must be epoch milliseconds".to_string())?;
        let utc_offset_min = match offset.map(str::trim).filter(|s| !s.is_empty()) {
            None => 0,
            Some(o) => match o.parse::<i32>() {
                Ok(m) if m.abs() <= 18 * 60 => m,
                _ => return Err("utc_offset_min must be minutes from -1080 to 1080".to_string()),
            },
        };
        Ok(Some(Clock {
            now_ms,
            utc_offset_min,
        }))
    }
}

/// One accepted time, before it is read against a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSpec {
    /// An instant: epoch ms, or RFC 3339 (no offset = UTC, a bare date is its
    /// midnight UTC).
    At(i64),
    /// `Nd`, `Nh`, `Nw`: this many milliseconds before now.
    Ago(i64),
    /// `today` (0) or `yesterday` (1): the local midnight this many days back.
    DayStart(i64),
}

/// Why a time was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    /// Not one of the accepted forms.
    #[error("expected epoch ms, an RFC 3339 date-time, or a relative time (7d, 24h, 2w, today, yesterday)")]
    Unrecognised,
    /// A relative form with no clock to read it against.
    #[error("a relative time needs the caller's clock")]
    NoClock,
    /// A relative form too far back to represent.
    #[error("that relative time is out of range")]
    OutOfRange,
}

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 86_400_000;

impl TimeSpec {
    /// Parses one time: epoch ms, RFC 3339, `Nd` / `Nh` / `Nw` (N a whole
    /// number), `today`, `yesterday`; case-insensitive, trimmed.
    pub fn parse(s: &str) -> Result<TimeSpec, TimeError> {
        let s = s.trim();
        if let Ok(ms) = s.parse::<i64>() {
            return Ok(TimeSpec::At(ms));
        }
        if let Some(ms) = parse_rfc3339_ms(s) {
            return Ok(TimeSpec::At(ms));
        }
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "today" => return Ok(TimeSpec::DayStart(0)),
            "yesterday" => return Ok(TimeSpec::DayStart(1)),
            _ => {}
        }
        // The unit is one ASCII letter at the end (never split inside a
        // multi-byte character).
        let unit_ms = match lower.as_bytes().last() {
            Some(b'h') => HOUR_MS,
            Some(b'd') => DAY_MS,
            Some(b'w') => 7 * DAY_MS,
            _ => return Err(TimeError::Unrecognised),
        };
        let n = &lower[..lower.len() - 1];
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return Err(TimeError::Unrecognised);
        }
        let n: i64 = n.parse().map_err(|_| TimeError::OutOfRange)?;
        n.checked_mul(unit_ms)
            .map(TimeSpec::Ago)
            .ok_or(TimeError::OutOfRange)
    }

    /// Whether reading it needs a clock.
    pub fn is_relative(&self) -> bool {
        !matches!(self, TimeSpec::At(_))
    }

    /// The epoch ms it names under `clock`.
    pub fn resolve(&self, clock: Option<&Clock>) -> Result<i64, TimeError> {
        let clock = match (self, clock) {
            (TimeSpec::At(ms), _) => return Ok(*ms),
            (_, None) => return Err(TimeError::NoClock),
            (_, Some(c)) => c,
        };
        match *self {
            TimeSpec::At(ms) => Ok(ms),
            TimeSpec::Ago(d) => clock.now_ms.checked_sub(d).ok_or(TimeError::OutOfRange),
            TimeSpec::DayStart(back) => {
                let off = i64::from(clock.utc_offset_min) * 60_000;
                let local = clock.now_ms.checked_add(off).ok_or(TimeError::OutOfRange)?;
                let midnight = local.div_euclid(DAY_MS) - back;
                Ok(midnight * DAY_MS - off)
            }
        }
    }

    /// A stable text form for fingerprints: an instant as its epoch ms, a
    /// relative form as itself (so a cursor stays valid while `now` moves).
    pub fn canonical(&self) -> String {
        match self {
            TimeSpec::At(ms) => ms.to_string(),
            TimeSpec::Ago(d) => format!("ago:{d}"),
            TimeSpec::DayStart(b) => format!("day:{b}"),
        }
    }
}

/// Parses and resolves one time (see [`TimeSpec::parse`]).
pub fn parse_instant(s: &str, clock: Option<&Clock>) -> Result<i64, TimeError> {
    TimeSpec::parse(s)?.resolve(clock)
}

/// Parses an RFC 3339 date-time (or bare date) to epoch ms.
pub fn parse_rfc3339_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    ms += (h * 3600 + mi * 60 + sec) * 1000;
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            return None;
        }
        let frac = &s[start..end.min(start + 3)];
        let mut v: i64 = frac.parse().ok()?;
        for _ in frac.len()..3 {
            v *= 10;
        }
        ms += v;
        i = end;
    }
    match b.get(i) {
        None => Some(ms),
        Some(b'Z') | Some(b'z') if i + 1 == b.len() => Some(ms),
        Some(sign @ (b'+' | b'-')) if b.len() == i + 6 && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let off = (oh * 60 + om) * 60_000;
            Some(if *sign == b'+' { ms - off } else { ms + off })
        }
        _ => None,
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339() {
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:01Z"), Some(1000));
        assert_eq!(parse_rfc3339_ms("1970-01-01T00:00:01"), Some(1000));
        assert_eq!(parse_rfc3339_ms("1970-01-02"), Some(86_400_000));
        assert_eq!(parse_rfc3339_ms("1970-01-01T01:00:00.5+01:00"), Some(500));
        assert_eq!(parse_rfc3339_ms("2026-02-30T00:00:00Z"), None);
    }

    #[test]
    fn relative_forms_read_against_the_clock() {
        // 2026-12-02T13:00:00Z.
        let now = parse_rfc3339_ms("2026-12-02T13:00:00Z").unwrap();
        let utc = Clock::utc(now);
        assert_eq!(parse_instant("7d", Some(&utc)), Ok(now - 7 * DAY_MS));
        assert_eq!(parse_instant(" 24H ", Some(&utc)), Ok(now - DAY_MS));
        assert_eq!(parse_instant("2w", Some(&utc)), Ok(now - 14 * DAY_MS));
        assert_eq!(parse_instant("0h", Some(&utc)), Ok(now));
        let day = |s| parse_rfc3339_ms(s).unwrap();
        assert_eq!(parse_instant("today", Some(&utc)), Ok(day("2026-12-02")));
        assert_eq!(
            parse_instant("Yesterday", Some(&utc)),
            Ok(day("2026-12-01"))
        );
        // Tokyo (+09:00): 22:00 local, its midnight is 15:00Z the day before.
        let tokyo = Clock {
            now_ms: now,
            utc_offset_min: 540,
        };
        assert_eq!(
            parse_instant("today", Some(&tokyo)),
            Ok(day("2026-12-01T15:00:00Z"))
        );
        // New York (-05:00): 08:00 local.
        let ny = Clock {
            now_ms: now,
            utc_offset_min: -300,
        };
        assert_eq!(
            parse_instant("today", Some(&ny)),
            Ok(day("2026-12-02T05:00:00Z"))
        );
        assert_eq!(
            parse_instant("yesterday", Some(&ny)),
            Ok(day("2026-12-01T05:00:00Z"))
        );
        // Absolute forms need no clock.
        assert_eq!(parse_instant("1000", None), Ok(1000));
        assert_eq!(parse_instant("7d", None), Err(TimeError::NoClock));
        for bad in [
            "d",
            "7x",
            "7é",
            "é",
            "k\u{bb25c}",
            "-7d",
            "7 d",
            "soon",
            "1.5d",
            "",
            "tomorrow",
        ] {
            assert!(parse_instant(bad, Some(&utc)).is_err(), "{bad}");
        }
        assert_eq!(
            parse_instant("7x", Some(&utc)),
            Err(TimeError::Unrecognised)
        );
        assert_eq!(
            parse_instant("99999999999999999w", Some(&utc)),
            Err(TimeError::OutOfRange)
        );
        assert_eq!(TimeSpec::parse("7d").unwrap().canonical(), "ago:604800000");
        assert_eq!(
            Clock::from_fields(Some("5"), Some("-300")),
            Ok(Some(Clock {
                now_ms: 5,
                utc_offset_min: -300
            }))
        );
        assert!(Clock::from_fields(Some("5"), Some("9999")).is_err());
        assert_eq!(Clock::from_fields(None, Some("60")), Ok(None));
    }

    #[test]
    fn civil_round_trips() {
        for days in [-800_000, -1, 0, 59, 60, 11_016, 20_000, 2_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(
            parse_rfc3339_ms("2026-10-26T07:33:20.123Z"),
            Some(1_793_000_000_123)
        );
        assert_eq!(parse_rfc3339_ms("1969-12-31T23:59:59.999Z"), Some(-1));
    }
}
