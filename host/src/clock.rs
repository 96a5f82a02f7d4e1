//! The host's clock and zone: the one place that reads the wall clock for
//! relative times (`--since 7d`, `since=7d`) and the local zone (`TZ`, else
//! the system zone, through `jiff`), and the one formatter of times for
//! humans (local time with its offset, or UTC with `--utc`). JSON never goes
//! through here: it stays epoch ms.

use jiff::tz::TimeZone;
use jiff::Timestamp;
use recall_core::time::Clock;
use std::sync::OnceLock;

/// The zone human output and day boundaries use: the local zone unless
/// [`use_utc`] was called first.
fn zone() -> &'static TimeZone {
    ZONE.get_or_init(local_zone)
}

static ZONE: OnceLock<TimeZone> = OnceLock::new();

/// The local zone: `TZ` when set and known, else the system zone, else UTC.
pub fn local_zone() -> TimeZone {
    TimeZone::try_system().unwrap_or(TimeZone::UTC)
}

/// `--now`, when the command line fixed the clock.
static FIXED_NOW: OnceLock<i64> = OnceLock::new();

/// Sets this process's clock once, at the binary's edge: `now` fixes it
/// (`--now MS`, reproducible runs), `utc` makes it print and read days in
/// UTC (`--utc`). Later calls change nothing.
pub fn init(now: Option<i64>, utc: bool) {
    if let Some(ms) = now {
        let _ = FIXED_NOW.set(ms);
    }
    if utc {
        let _ = ZONE.set(TimeZone::UTC);
    }
}

/// Now: the fixed `--now`, else the wall clock (epoch ms).
pub fn now_ms() -> i64 {
    FIXED_NOW
        .get()
        .copied()
        .unwrap_or_else(crate::store::wall_ms)
}

/// The clock a command or a request reads relative times against
/// ([`now_ms`] and the zone's offset at that instant).
pub fn host_clock() -> Clock {
    clock_in(zone(), now_ms())
}

/// The host clock as the two request pairs (`now_ms`, `utc_offset_min`)
/// the core's session list and one-session filter read.
pub fn clock_pairs() -> [(&'static str, String); 2] {
    let c = host_clock();
    [
        ("now_ms", c.now_ms.to_string()),
        ("utc_offset_min", c.utc_offset_min.to_string()),
    ]
}

/// The clock at `now_ms` in `tz`.
pub fn clock_in(tz: &TimeZone, now_ms: i64) -> Clock {
    let utc_offset_min = Timestamp::from_millisecond(now_ms)
        .map(|t| tz.to_offset(t).seconds() / 60)
        .unwrap_or(0);
    Clock {
        now_ms,
        utc_offset_min,
    }
}

/// `YYYY-MM-DD HH:MM ±HH:MM` of epoch ms in the process's zone.
pub fn minute(ms: i64) -> String {
    minute_in(zone(), ms)
}

/// `YYYY-MM-DD HH:MM ±HH:MM` of epoch ms in `tz` (the offset in force at
/// that instant, so summer and winter times both read right).
pub fn minute_in(tz: &TimeZone, ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t
            .to_zoned_datetime(tz.clone())
            .strftime("%Y-%m-%d %H:%M %:z")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// `YYYY-MM-DD HH:MM` of epoch ms in the process's zone, without the
/// offset: for layouts that name the zone once ([`zone_label`]).
pub fn short_minute(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t
            .to_zoned_datetime(zone().clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// The offset times are shown in, now: `+09:00`, or `UTC`.
pub fn offset_label() -> String {
    let secs = Timestamp::from_millisecond(now_ms())
        .map(|t| zone().to_offset(t).seconds())
        .unwrap_or(0);
    if secs == 0 {
        return "UTC".to_string();
    }
    let sign = if secs < 0 { '-' } else { '+' };
    let m = secs.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// The zone times are shown in, named once: `Asia/Tokyo +09:00` (the
/// offset now), `UTC`, or the bare offset of a zone without a name.
pub fn zone_label() -> String {
    let tz = zone();
    let off = offset_label();
    match tz.iana_name() {
        Some("UTC" | "Etc/UTC") | None => off,
        Some(name) if off == "UTC" => format!("{name} (UTC)"),
        Some(name) => format!("{name} {off}"),
    }
}

/// `YYYY-MM-DD` of epoch ms in the process's zone (the TUI's short date).
pub fn day(ms: i64) -> String {
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t
            .to_zoned_datetime(zone().clone())
            .strftime("%Y-%m-%d")
            .to_string(),
        Err(_) => ms.to_string(),
    }
}

/// An optional timestamp (`-` when unknown).
pub fn minute_opt(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".to_string(), minute)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tz(name: &str) -> TimeZone {
        TimeZone::get(name).expect("the zoneinfo database has it")
    }

    #[test]
    fn formats_minutes_with_the_offset_of_their_instant() {
        assert_eq!(minute_in(&TimeZone::UTC, 0), "1970-01-01 00:00 +00:00");
        // 2026-10-26T07:33:20Z.
        let ms = 1_793_000_000_000;
        assert_eq!(minute_in(&tz("Asia/Tokyo"), ms), "2026-10-26 16:33 +09:00");
        assert_eq!(
            minute_in(&tz("America/New_York"), ms),
            "2026-10-26 03:33 -04:00"
        );
        // In winter New York is -05:00.
        assert_eq!(
            minute_in(&tz("America/New_York"), 1_796_000_000_000),
            "2026-11-29 19:53 -05:00"
        );
    }

    #[test]
    fn the_clock_carries_the_offset_in_force_at_now() {
        let ms = 1_793_000_000_000;
        assert_eq!(clock_in(&tz("Asia/Tokyo"), ms).utc_offset_min, 540);
        assert_eq!(clock_in(&tz("America/New_York"), ms).utc_offset_min, -240);
        assert_eq!(clock_in(&TimeZone::UTC, ms), Clock::utc(ms));
    }
}
