//! Timestamps for humans: epoch ms as `YYYY-MM-DD HH:MM` in UTC.

/// Formats epoch ms as `YYYY-MM-DD HH:MM` (UTC).
pub fn minute(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        tod / 3600,
        tod % 3600 / 60
    )
}

/// Formats an optional timestamp (`-` when unknown).
pub fn minute_opt(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".to_string(), minute)
}

/// (year, month, day) of days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
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
    fn formats_utc_minutes() {
        assert_eq!(minute(0), "1970-01-01 00:00");
        assert_eq!(minute(1_793_000_000_000), "2026-10-26 07:33");
        assert_eq!(minute(951_782_400_000), "2000-02-29 00:00");
        assert_eq!(minute_opt(None), "-");
    }
}
