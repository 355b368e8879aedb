//! Calendar dates for prompts and reports, from Unix milliseconds, in UTC (no time-zone
//! database in the core: the observer sees the same dates on every backend).

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// (year, month 1–12, day, hour, minute) of a Unix-ms instant.
pub fn parts(ms: i64) -> (i64, u32, u32, u32, u32) {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Days to civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, (rem / 3600) as u32, ((rem % 3600) / 60) as u32)
}

/// `Dec 4, 2025`.
pub(crate) fn date(ms: i64) -> String {
    let (y, m, d, _, _) = parts(ms);
    format!("{} {d}, {y}", MONTHS[(m - 1) as usize])
}

/// `14:30`.
pub(crate) fn time(ms: i64) -> String {
    let (_, _, _, h, mi) = parts(ms);
    format!("{h:02}:{mi:02}")
}

/// `2025-12-30 14:23`.
pub(crate) fn stamp(ms: i64) -> String {
    let (y, m, d, h, mi) = parts(ms);
    format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(stamp(0), "1970-01-01 00:00");
        assert_eq!(stamp(1_700_000_000_000), "2023-11-14 22:13");
        assert_eq!(date(1_764_806_400_000), "Dec 4, 2025");
        assert_eq!(time(1_764_858_600_000), "14:30");
        assert_eq!(stamp(951_782_400_000), "2000-02-29 00:00");
    }
}
