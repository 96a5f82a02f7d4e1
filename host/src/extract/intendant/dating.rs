//! Legacy Intendant timestamps: rows without `ts_ms` carry only a local
//! time of day (`"HH:MM:SS.mmm"`). They are dated from `session_meta.json`
//! `created_at`: its local date plus the row's time of day, one day later
//! each time the time of day goes backwards, converted to UTC with the
//! offset `created_at` carries.

use crate::extract::common::iso_ms;
use serde::{Deserialize, Serialize};

const DAY_MS: i64 = 86_400_000;

/// Dates legacy rows of one log, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dating {
    /// UTC epoch ms of local midnight of the `created_at` date.
    base: Option<i64>,
    day: i64,
    prev_tod: Option<i64>,
}

impl Dating {
    /// A dating anchored at `created_at` (RFC 3339; `None` or unparsable ⇒
    /// rows without `ts_ms` stay undated).
    pub fn new(created_at: Option<&str>) -> Dating {
        let base = created_at.and_then(|c| {
            let utc = iso_ms(c)?;
            // The same wall-clock reading taken as UTC: their difference is
            // the local offset.
            let b = c.as_bytes();
            let mut end = 19;
            if b.get(end) == Some(&b'.') {
                end += 1;
                while b.get(end).is_some_and(u8::is_ascii_digit) {
                    end += 1;
                }
            }
            let naive = iso_ms(c.get(..end)?)?;
            let midnight = iso_ms(c.get(..10)?)?;
            Some(midnight - (naive - utc))
        });
        Dating {
            base,
            day: 0,
            prev_tod: None,
        }
    }

    /// Notes a row's time of day (every row with a `ts`, so day changes are
    /// seen even across rows that have `ts_ms`) and returns its date.
    pub fn row(&mut self, ts: Option<&str>) -> Option<i64> {
        let tod = time_of_day_ms(ts?)?;
        if self.prev_tod.is_some_and(|p| tod < p) {
            self.day = self.day.saturating_add(1);
        }
        self.prev_tod = Some(tod);
        // Checked: a damaged checkpoint may carry any day count.
        self.base?
            .checked_add(self.day.checked_mul(DAY_MS)?)?
            .checked_add(tod)
    }
}

/// `"HH:MM:SS"` with optional `.fraction` → ms since midnight.
fn time_of_day_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let (h, m, sec) = (num(0..2)?, num(3..5)?, num(6..8)?);
    if h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let mut ms = 0;
    if b.get(8) == Some(&b'.') {
        let frac: String = s[9..]
            .chars()
            .take_while(char::is_ascii_digit)
            .take(3)
            .collect();
        if !frac.is_empty() {
            ms = frac.parse::<i64>().ok()? * 10i64.pow(3 - frac.len() as u32);
        }
    }
    Some(((h * 60 + m) * 60 + sec) * 1000 + ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crosses_midnight_forward() {
        let mut d = Dating::new(Some("2026-03-01T23:59:58.000Z"));
        let a = d.row(Some("23:59:58.000")).unwrap();
        let b = d.row(Some("00:00:03.250")).unwrap();
        let c = d.row(Some("00:00:03.250")).unwrap();
        assert_eq!(a, iso_ms("2026-03-01T23:59:58Z").unwrap());
        assert_eq!(b, iso_ms("2026-03-02T00:00:03.250Z").unwrap());
        assert_eq!(c, b);
    }

    #[test]
    fn honours_the_created_at_offset() {
        let mut d = Dating::new(Some("2026-03-01T23:00:00.250+02:00"));
        assert_eq!(
            d.row(Some("23:00:05.5")),
            Some(iso_ms("2026-03-01T21:00:05.500Z").unwrap())
        );
    }

    #[test]
    fn undated_without_anchor_or_time() {
        assert_eq!(Dating::new(None).row(Some("10:00:00.000")), None);
        assert_eq!(
            Dating::new(Some("2026-03-01T00:00:00Z")).row(Some("garbage")),
            None
        );
    }
}
