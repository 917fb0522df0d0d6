//! `strftime_now(format)`: the current date in a template (Llama-style templates print
//! "Today Date: 26 Jul 2024"). Dates are computed in UTC from a Unix timestamp, since wasm
//! has no time-zone database; Python's `datetime.now()` uses the local zone instead.

use std::fmt::Write;

const DAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// A broken-down UTC time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Civil {
    year: i64,
    month: u32, // 1..=12
    day: u32,   // 1..=31
    hour: u32,
    minute: u32,
    second: u32,
    weekday: usize, // 0 = Monday
    yday: u32,      // 1..=366
}

fn civil_from_unix(secs: i64) -> Civil {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    const BEFORE: [u32; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = BEFORE[month as usize - 1] + day + u32::from(leap && month > 2);
    Civil {
        year,
        month,
        day,
        hour: (rem / 3600) as u32,
        minute: (rem % 3600 / 60) as u32,
        second: (rem % 60) as u32,
        // 1970-01-01 was a Thursday (index 3).
        weekday: (days + 3).rem_euclid(7) as usize,
        yday,
    }
}

/// Formats a Unix time (UTC) with C `strftime` directives: `%Y %y %m %d %e %H %I %M %S %p
/// %j %a %A %b %h %B %F %T %D %R %c %x %X %z %Z %u %w %%`, plus glibc's `%-d`-style
/// no-padding flag. Unknown directives are printed as written, as glibc does.
pub(crate) fn strftime(format: &str, unix_secs: i64) -> String {
    let t = civil_from_unix(unix_secs);
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = chars.next();
        let no_pad = spec == Some('-');
        if no_pad {
            spec = chars.next();
        }
        let num = |out: &mut String, v: i64, width: usize| {
            if no_pad {
                let _ = write!(out, "{v}");
            } else {
                let _ = write!(out, "{v:0width$}");
            }
        };
        let hour12 = if t.hour.is_multiple_of(12) {
            12
        } else {
            t.hour % 12
        };
        match spec {
            Some('Y') => num(&mut out, t.year, 4),
            Some('y') => num(&mut out, t.year.rem_euclid(100), 2),
            Some('m') => num(&mut out, t.month.into(), 2),
            Some('d') => num(&mut out, t.day.into(), 2),
            Some('e') => {
                let _ = write!(out, "{:>2}", t.day);
            }
            Some('H') => num(&mut out, t.hour.into(), 2),
            Some('I') => num(&mut out, hour12.into(), 2),
            Some('M') => num(&mut out, t.minute.into(), 2),
            Some('S') => num(&mut out, t.second.into(), 2),
            Some('j') => num(&mut out, t.yday.into(), 3),
            Some('p') => out.push_str(if t.hour < 12 { "AM" } else { "PM" }),
            Some('a') => out.push_str(&DAYS[t.weekday][..3]),
            Some('A') => out.push_str(DAYS[t.weekday]),
            Some('b') | Some('h') => out.push_str(&MONTHS[t.month as usize - 1][..3]),
            Some('B') => out.push_str(MONTHS[t.month as usize - 1]),
            Some('u') => num(&mut out, t.weekday as i64 + 1, 1),
            Some('w') => num(&mut out, (t.weekday as i64 + 1) % 7, 1),
            Some('F') => out.push_str(&strftime("%Y-%m-%d", unix_secs)),
            Some('T') => out.push_str(&strftime("%H:%M:%S", unix_secs)),
            Some('R') => out.push_str(&strftime("%H:%M", unix_secs)),
            Some('D') | Some('x') => out.push_str(&strftime("%m/%d/%y", unix_secs)),
            Some('X') => out.push_str(&strftime("%H:%M:%S", unix_secs)),
            Some('c') => out.push_str(&strftime("%a %b %e %H:%M:%S %Y", unix_secs)),
            Some('z') => out.push_str("+0000"),
            Some('Z') => out.push_str("UTC"),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                if no_pad {
                    out.push('-');
                }
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Seconds since the Unix epoch from the system clock, where there is one.
///
/// On `wasm32-unknown-unknown` `SystemTime::now()` panics, so there is no default clock
/// there; set one with [`crate::ChatTemplate::with_clock`].
pub(crate) fn system_clock() -> Option<i64> {
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        i64::try_from(now.as_secs()).ok()
    }
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        // 2024-07-26 13:05:09 UTC, a Friday.
        let t = 1_722_000_000 + 309;
        assert_eq!(strftime("%d %b %Y", t), "26 Jul 2024");
        assert_eq!(
            strftime("%A %B %-d, %Y %H:%M:%S %p %I %j", t),
            "Friday July 26, 2024 13:25:09 PM 01 208"
        );
        assert_eq!(
            strftime("%F %T %z %Z %%", 0),
            "1970-01-01 00:00:00 +0000 UTC %"
        );
        assert_eq!(strftime("%a %u %w", 0), "Thu 4 4");
        // Leap day and the day after.
        assert_eq!(strftime("%Y-%m-%d %j", 951_782_400), "2000-02-29 060");
        assert_eq!(strftime("%Y-%m-%d %j", 951_868_800), "2000-03-01 061");
        assert_eq!(strftime("%Y-%m-%d", -86_400), "1969-12-31");
        assert_eq!(strftime("%Q %", 0), "%Q %");
    }

    #[test]
    fn civil_fields() {
        let c = civil_from_unix(1_735_689_599); // 2024-12-31 23:59:59
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.minute, c.second),
            (2024, 12, 31, 23, 59, 59)
        );
        assert_eq!(c.yday, 366);
        assert_eq!(DAYS[c.weekday], "Tuesday");
    }
}
