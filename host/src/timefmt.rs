//! Timestamps for humans: epoch ms as `YYYY-MM-DD HH:MM` in UTC.

/// Formats epoch ms as `YYYY-MM-DD HH:MM` (UTC).
pub fn minute(ms: i64) -> String {
    let iso = recall_core::time::format_rfc3339_ms(ms);
    format!("{} {}", &iso[..10], &iso[11..16])
}

/// Formats an optional timestamp (`-` when unknown).
pub fn minute_opt(ms: Option<i64>) -> String {
    ms.map_or_else(|| "-".to_string(), minute)
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
