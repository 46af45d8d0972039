//! Weekly maintenance windows such as `Sat 02:00-05:00`.

use std::fmt;
use std::str::FromStr;

use jiff::civil::Weekday;

const DAYS: [(&str, Weekday); 7] = [
    ("Mon", Weekday::Monday),
    ("Tue", Weekday::Tuesday),
    ("Wed", Weekday::Wednesday),
    ("Thu", Weekday::Thursday),
    ("Fri", Weekday::Friday),
    ("Sat", Weekday::Saturday),
    ("Sun", Weekday::Sunday),
];

const MINUTES_PER_DAY: u16 = 24 * 60;

/// A weekly window in the maintenance time zone. When `end <= start` the window wraps past
/// midnight into the next day (`Sat 22:00-02:00` ends Sunday 02:00).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub day: Weekday,
    /// Minutes after midnight, 0..1440.
    pub start: u16,
    /// Minutes after midnight, 1..=1440 (`24:00` is 1440).
    pub end: u16,
}

impl FromStr for Window {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || format!("`{text}` is not a maintenance window");
        let (day, times) = text.split_once(' ').ok_or_else(error)?;
        let (start, end) = times.split_once('-').ok_or_else(error)?;
        let day = DAYS
            .iter()
            .find(|(name, _)| *name == day)
            .map(|&(_, day)| day)
            .ok_or_else(error)?;
        let start = minute_of_day(start)
            .filter(|&m| m < MINUTES_PER_DAY)
            .ok_or_else(error)?;
        let end = minute_of_day(end).filter(|&m| m > 0).ok_or_else(error)?;
        if start == end {
            return Err(format!("`{text}` is an empty maintenance window"));
        }
        Ok(Window { day, start, end })
    }
}

/// `HH:MM` with two digits each, up to `24:00`.
fn minute_of_day(text: &str) -> Option<u16> {
    let (hours, minutes) = text.split_once(':')?;
    let two_digits = |s: &str| s.len() == 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !two_digits(hours) || !two_digits(minutes) {
        return None;
    }
    let hours: u16 = hours.parse().ok()?;
    let minutes: u16 = minutes.parse().ok()?;
    let total = hours * 60 + minutes;
    (minutes < 60 && total <= MINUTES_PER_DAY).then_some(total)
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let day = DAYS
            .iter()
            .find(|(_, d)| *d == self.day)
            .map_or("?", |(n, _)| n);
        let hm = |m: u16| format!("{:02}:{:02}", m / 60, m % 60);
        write!(f, "{day} {}-{}", hm(self.start), hm(self.end))
    }
}

/// The help shown under an invalid window.
pub(super) const WINDOW_HELP: &str =
    "write DAY HH:MM-HH:MM with DAY one of Mon Tue Wed Thu Fri Sat Sun, e.g. \"Sat 02:00-05:00\"; the end may be 24:00 or wrap past midnight";

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str) -> Window {
        text.parse().unwrap()
    }

    #[test]
    fn parses_day_and_minutes() {
        let w = window("Sat 02:00-05:30");
        assert_eq!((w.day, w.start, w.end), (Weekday::Saturday, 120, 330));
        assert_eq!(w.to_string(), "Sat 02:00-05:30");
    }

    #[test]
    fn allows_midnight_as_end_and_wrapping() {
        assert_eq!(window("Sun 22:00-24:00").end, 1440);
        let wrapping = window("Fri 23:00-01:00");
        assert!(wrapping.end < wrapping.start);
    }

    #[test]
    fn rejects_malformed_windows() {
        for bad in [
            "Saturday 02:00-05:00",
            "sat 02:00-05:00",
            "Sat 2:00-05:00",
            "Sat 02:00",
            "Sat 24:00-01:00",
            "Sat 02:60-05:00",
            "Sat 02:00-24:01",
            "Sat 02:00-00:00",
            "Sat +2:00-05:00",
        ] {
            assert!(bad.parse::<Window>().is_err(), "{bad}");
        }
        assert_eq!(
            "Sat 02:00-02:00".parse::<Window>().unwrap_err(),
            "`Sat 02:00-02:00` is an empty maintenance window"
        );
    }
}
