//! The maintenance policy: which impact class apply may perform at a given instant, and when
//! the next window opens. Pure: the clock is always a parameter (`--now` overrides it).
//!
//! Windows are written in wall-clock time of the policy's time zone. A window covers exactly
//! the instants at which the wall clock shows a time inside it, which decides the nights the
//! clocks change (Europe/Zurich, `Sun 02:00-05:00`):
//!
//! - spring forward (02:00 → 03:00 CEST): 02:00-03:00 never happens, so the window runs
//!   03:00-05:00 CEST and lasts two hours; a window that lies wholly in the skipped hour does
//!   not open that night;
//! - fall back (03:00 CEST → 02:00 CET): 02:00-03:00 happens twice, so the window runs from the
//!   first 02:00 (CEST) to 05:00 CET and lasts four hours.
//!
//! In jiff's terms: a start or end in a fold takes the earlier or later offset respectively
//! (`earlier()` / `later()`), and one in a gap is moved to the transition itself.

use std::time::Duration;

use jiff::civil::{Date, DateTime};
use jiff::fmt::friendly::{Designator, Spacing, SpanPrinter};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{Timestamp, ToSpan, Unit, Zoned, ZonedDifference};

use crate::config::{Maintenance, Window};
use crate::model::Impact;

/// What apply may do at any time when the config has no `[maintenance]` table: everything a
/// plan can show short of `forbidden`, which only `--replace` / `--allow-delete` unlock.
pub const UNRESTRICTED: Impact = Impact::PoolRecreate;

#[derive(Debug, thiserror::Error)]
pub enum WindowError {
    #[error("`{0}` is not a known time zone")]
    UnknownTimeZone(String, #[source] jiff::Error),
    #[error("{0}")]
    InvalidWindow(String),
}

/// One occurrence of a window (or of several that overlap or touch), as instants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenWindow {
    pub start: Timestamp,
    /// Exclusive.
    pub end: Timestamp,
}

#[derive(Debug, Clone)]
pub struct MaintenancePolicy {
    /// `None`: no `[maintenance]` table, so [`UNRESTRICTED`] at every instant.
    schedule: Option<Schedule>,
}

#[derive(Debug, Clone)]
struct Schedule {
    zone: TimeZone,
    windows: Vec<Window>,
    outside: Impact,
    inside: Impact,
}

impl MaintenancePolicy {
    pub fn new(config: &Maintenance) -> Result<Self, WindowError> {
        let zone = TimeZone::get(&config.timezone)
            .map_err(|e| WindowError::UnknownTimeZone(config.timezone.clone(), e))?;
        let windows = config
            .windows
            .iter()
            .map(|text| text.parse::<Window>().map_err(WindowError::InvalidWindow))
            .collect::<Result<_, _>>()?;
        Ok(MaintenancePolicy {
            schedule: Some(Schedule {
                zone,
                windows,
                outside: config.outside_window,
                // A window only ever widens what apply may do (contract: a change is allowed
                // at most `outside-window`, or at most `inside-window` while a window is open).
                inside: config.inside_window.max(config.outside_window),
            }),
        })
    }

    /// The policy without a `[maintenance]` table: [`UNRESTRICTED`] at any time.
    pub fn unrestricted() -> Self {
        MaintenancePolicy { schedule: None }
    }

    /// The policy of a config's optional `[maintenance]` table.
    pub fn from_config(maintenance: Option<&Maintenance>) -> Result<Self, WindowError> {
        maintenance.map_or_else(|| Ok(Self::unrestricted()), Self::new)
    }

    /// The highest class apply may perform at `now` (outside-window or inside-window class).
    pub fn allowed_at(&self, now: Timestamp) -> Impact {
        match &self.schedule {
            None => UNRESTRICTED,
            Some(s) if s.open_at(now).is_some() => s.inside,
            Some(s) => s.outside,
        }
    }

    /// The window open at `now`, if any (start and end as Timestamps). Always `None` for the
    /// unrestricted policy, which has no windows.
    pub fn open_window(&self, now: Timestamp) -> Option<OpenWindow> {
        self.schedule.as_ref()?.open_at(now)
    }

    /// When the next window opens after `now` (strictly later if one is open now).
    pub fn next_opening(&self, now: Timestamp) -> Option<Zoned> {
        let schedule = self.schedule.as_ref()?;
        let start = schedule
            .occurrences_around(now)
            .into_iter()
            .find(|w| w.start > now)?
            .start;
        Some(start.to_zoned(schedule.zone.clone()))
    }

    /// The highest class apply may perform when no window is open.
    pub fn outside_window(&self) -> Impact {
        self.schedule.as_ref().map_or(UNRESTRICTED, |s| s.outside)
    }

    /// The highest class apply may perform at all: inside a window, or at any time without
    /// a `[maintenance]` table.
    pub fn inside_window(&self) -> Impact {
        self.schedule.as_ref().map_or(UNRESTRICTED, |s| s.inside)
    }

    /// Whether the config has a `[maintenance]` table (the plan then says, per change, what
    /// it allows).
    pub fn has_windows(&self) -> bool {
        self.schedule.is_some()
    }

    /// Whether work estimated to take `duration` starting at `now` ends before the open window
    /// closes. Always true for the unrestricted policy; false when no window is open.
    pub fn fits(&self, now: Timestamp, duration: Duration) -> bool {
        if self.schedule.is_none() {
            return true;
        }
        let (Some(window), Ok(done)) = (self.open_window(now), now.checked_add(duration)) else {
            return false;
        };
        done <= window.end
    }

    /// Why a refused change has to wait, e.g. `next window opens Sat 2026-11-28 02:00
    /// Europe/Zurich (in 4 days 3 hours)`.
    pub fn describe_next(&self, now: Timestamp) -> String {
        let Some(opening) = self.next_opening(now) else {
            return "no maintenance window is configured".to_string();
        };
        format!(
            "next window opens {} (in {})",
            opening.strftime("%a %Y-%m-%d %H:%M %Q"),
            time_until(&now.to_zoned(opening.time_zone().clone()), &opening)
        )
    }
}

/// How many days an occurrence may be searched back and ahead of today: a window lasts at
/// most a day (plus a DST hour) and each recurs weekly.
const DAYS_BEFORE: i64 = 2;
const DAYS_AFTER: i64 = 8;

impl Schedule {
    fn open_at(&self, now: Timestamp) -> Option<OpenWindow> {
        self.occurrences_around(now)
            .into_iter()
            .find(|w| w.start <= now && now < w.end)
    }

    /// Every occurrence from two days before `now` to eight days after, in order, with
    /// overlapping or touching ones merged (`Sat 22:00-24:00` and `Sun 00:00-02:00` are one
    /// window for [`MaintenancePolicy::fits`]).
    fn occurrences_around(&self, now: Timestamp) -> Vec<OpenWindow> {
        let today = now.to_zoned(self.zone.clone()).date();
        let mut found: Vec<OpenWindow> = (-DAYS_BEFORE..=DAYS_AFTER)
            .filter_map(|offset| today.checked_add(offset.days()).ok())
            .flat_map(|date| {
                self.windows
                    .iter()
                    .filter(move |w| w.day == date.weekday())
                    .filter_map(move |w| self.occurrence(date, w))
            })
            .collect();
        found.sort_by_key(|w| w.start);
        merge(found)
    }

    /// The window starting on `date`, or `None` when it falls wholly into a skipped hour.
    fn occurrence(&self, date: Date, window: &Window) -> Option<OpenWindow> {
        let wraps = window.end <= window.start;
        let end_minutes = i64::from(window.end) + if wraps { 24 * 60 } else { 0 };
        let midnight = date.to_datetime(jiff::civil::Time::midnight());
        let start = midnight
            .checked_add(i64::from(window.start).minutes())
            .ok()?;
        let end = midnight.checked_add(end_minutes.minutes()).ok()?;
        let open = OpenWindow {
            start: self.instant(start, Edge::Start)?,
            end: self.instant(end, Edge::End)?,
        };
        (open.start < open.end).then_some(open)
    }

    /// The instant a window edge written as wall-clock time `at` falls on (see the module
    /// documentation for the DST nights).
    fn instant(&self, at: DateTime, edge: Edge) -> Option<Timestamp> {
        let ambiguous = self.zone.to_ambiguous_timestamp(at);
        // The errors below only occur at the limits of jiff's range, never for real clocks.
        match (ambiguous.offset(), edge) {
            (AmbiguousOffset::Gap { .. }, _) => {
                let before_gap = ambiguous.earlier().ok()?;
                Some(self.zone.following(before_gap).next()?.timestamp())
            }
            (_, Edge::Start) => ambiguous.earlier().ok(),
            (_, Edge::End) => ambiguous.later().ok(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Edge {
    Start,
    End,
}

/// Sorted occurrences with those that overlap or touch joined into one.
fn merge(sorted: Vec<OpenWindow>) -> Vec<OpenWindow> {
    let mut merged: Vec<OpenWindow> = Vec::with_capacity(sorted.len());
    for window in sorted {
        match merged.last_mut() {
            Some(last) if window.start <= last.end => last.end = last.end.max(window.end),
            _ => merged.push(window),
        }
    }
    merged
}

/// `4 days 3 hours`, `2 hours 15 minutes`, `less than a minute`: minutes are left out once the
/// wait is a day or more.
/// How far apart two instants are, in words (`4 days 3 hours`, `12 minutes`): to the minute,
/// or to the hour once whole days are between them.
pub fn time_until(from: &Zoned, to: &Zoned) -> String {
    let whole_days = from
        .until((Unit::Day, to))
        .is_ok_and(|span| span.get_days() > 0);
    let smallest = if whole_days { Unit::Hour } else { Unit::Minute };
    let span = from
        .until(
            ZonedDifference::new(to)
                .largest(Unit::Day)
                .smallest(smallest),
        )
        .unwrap_or_default();
    if span.is_zero() {
        return "less than a minute".to_string();
    }
    SpanPrinter::new()
        .designator(Designator::Verbose)
        .spacing(Spacing::BetweenUnitsAndDesignators)
        .span_to_string(&span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(windows: &[&str]) -> MaintenancePolicy {
        MaintenancePolicy::new(&Maintenance {
            timezone: "Europe/Zurich".to_string(),
            windows: windows.iter().map(|w| w.to_string()).collect(),
            outside_window: Impact::Minimal,
            inside_window: Impact::PoolRecreate,
        })
        .unwrap()
    }

    fn at(utc: &str) -> Timestamp {
        utc.parse().unwrap()
    }

    fn open(policy: &MaintenancePolicy, now: &str) -> Option<(String, String)> {
        policy
            .open_window(at(now))
            .map(|w| (w.start.to_string(), w.end.to_string()))
    }

    fn span(start: &str, end: &str) -> Option<(String, String)> {
        Some((start.to_string(), end.to_string()))
    }

    // 2026-11-28 is a Saturday; Zurich is on CET (UTC+1) then.
    #[test]
    fn allows_the_inside_class_only_while_a_window_is_open() {
        let policy = policy(&["Sat 02:00-05:00"]);
        assert_eq!(
            policy.allowed_at(at("2026-11-28T00:59:59Z")),
            Impact::Minimal
        );
        assert_eq!(
            policy.allowed_at(at("2026-11-28T01:00:00Z")),
            Impact::PoolRecreate
        );
        assert_eq!(
            policy.allowed_at(at("2026-11-28T03:59:59Z")),
            Impact::PoolRecreate
        );
        assert_eq!(
            policy.allowed_at(at("2026-11-28T04:00:00Z")),
            Impact::Minimal
        );
        assert_eq!(
            open(&policy, "2026-11-28T02:00:00Z"),
            span("2026-11-28T01:00:00Z", "2026-11-28T04:00:00Z")
        );
        assert_eq!(open(&policy, "2026-11-27T02:00:00Z"), None);
    }

    #[test]
    fn a_window_ending_before_it_starts_wraps_past_midnight() {
        let policy = policy(&["Sat 22:00-02:00"]);
        // Sunday 01:30 local belongs to Saturday's window.
        assert_eq!(
            open(&policy, "2026-11-29T00:30:00Z"),
            span("2026-11-28T21:00:00Z", "2026-11-29T01:00:00Z")
        );
        // Saturday 01:30 local is before Saturday's window, and Friday has none.
        assert_eq!(open(&policy, "2026-11-28T00:30:00Z"), None);
    }

    #[test]
    fn a_window_may_end_at_midnight() {
        let policy = policy(&["Sat 22:00-24:00"]);
        assert_eq!(
            open(&policy, "2026-11-28T22:00:00Z"),
            span("2026-11-28T21:00:00Z", "2026-11-28T23:00:00Z")
        );
    }

    #[test]
    fn windows_that_overlap_or_touch_are_one_window() {
        let policy = policy(&["Sat 22:00-24:00", "Sun 00:00-02:00", "Sun 01:00-03:00"]);
        assert_eq!(
            open(&policy, "2026-11-28T21:30:00Z"),
            span("2026-11-28T21:00:00Z", "2026-11-29T02:00:00Z")
        );
        assert!(policy.fits(at("2026-11-28T21:30:00Z"), Duration::from_secs(4 * 3600)));
    }

    // 2026-03-29: Zurich skips 02:00-03:00 (CET UTC+1 → CEST UTC+2 at 01:00Z).
    #[test]
    fn on_the_spring_forward_night_the_skipped_hour_is_lost() {
        let policy = policy(&["Sun 02:00-05:00"]);
        assert_eq!(
            open(&policy, "2026-03-29T02:00:00Z"),
            span("2026-03-29T01:00:00Z", "2026-03-29T03:00:00Z")
        );
        assert_eq!(
            policy.allowed_at(at("2026-03-29T00:59:59Z")),
            Impact::Minimal
        );
        assert_eq!(
            policy
                .next_opening(at("2026-03-28T12:00:00Z"))
                .unwrap()
                .to_string(),
            "2026-03-29T03:00:00+02:00[Europe/Zurich]"
        );
    }

    #[test]
    fn on_the_spring_forward_night_a_window_in_the_skipped_hour_does_not_open() {
        let inside_gap = policy(&["Sun 02:15-02:45"]);
        assert_eq!(
            inside_gap
                .next_opening(at("2026-03-28T12:00:00Z"))
                .unwrap()
                .to_string(),
            "2026-04-05T02:15:00+02:00[Europe/Zurich]"
        );
        let ending_in_gap = policy(&["Sun 01:00-02:30"]);
        assert_eq!(
            open(&ending_in_gap, "2026-03-29T00:30:00Z"),
            span("2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z")
        );
    }

    // 2026-10-25: Zurich repeats 02:00-03:00 (CEST UTC+2 → CET UTC+1 at 01:00Z).
    #[test]
    fn on_the_fall_back_night_the_repeated_hour_counts_twice() {
        let three_hours = policy(&["Sun 02:00-05:00"]);
        let whole = span("2026-10-25T00:00:00Z", "2026-10-25T04:00:00Z");
        assert_eq!(open(&three_hours, "2026-10-25T00:30:00Z"), whole); // the first 02:30
        assert_eq!(open(&three_hours, "2026-10-25T01:30:00Z"), whole); // the second 02:30
        let ending_in_fold = policy(&["Sun 01:00-02:30"]);
        assert_eq!(
            open(&ending_in_fold, "2026-10-25T01:15:00Z"),
            span("2026-10-24T23:00:00Z", "2026-10-25T01:30:00Z")
        );
    }

    #[test]
    fn next_opening_looks_across_the_week() {
        let policy = policy(&["Sat 02:00-05:00", "Wed 20:00-21:00"]);
        let next = |now: &str| policy.next_opening(at(now)).unwrap().to_string();
        // From Sunday to Wednesday evening, then to Saturday.
        assert_eq!(
            next("2026-11-22T11:00:00Z"),
            "2026-11-25T20:00:00+01:00[Europe/Zurich]"
        );
        assert_eq!(
            next("2026-11-25T19:00:00Z"),
            "2026-11-28T02:00:00+01:00[Europe/Zurich]"
        );
        // Open now, or opening this very instant: the one after.
        assert_eq!(
            next("2026-11-28T01:00:00Z"),
            "2026-12-02T20:00:00+01:00[Europe/Zurich]"
        );
    }

    #[test]
    fn work_fits_when_it_ends_by_the_close() {
        let policy = policy(&["Sat 02:00-05:00"]);
        let hour_before_close = at("2026-11-28T03:00:00Z");
        assert!(policy.fits(hour_before_close, Duration::from_secs(3599)));
        assert!(policy.fits(hour_before_close, Duration::from_secs(3600)));
        assert!(!policy.fits(hour_before_close, Duration::from_secs(3601)));
        assert!(!policy.fits(at("2026-11-28T05:00:00Z"), Duration::ZERO));
    }

    #[test]
    fn describes_when_the_next_window_opens() {
        let policy = policy(&["Sat 02:00-05:00"]);
        assert_eq!(
            policy.describe_next(at("2026-11-23T22:45:00Z")),
            "next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 4 days 2 hours)"
        );
        assert_eq!(
            policy.describe_next(at("2026-11-27T22:45:00Z")),
            "next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 2 hours 15 minutes)"
        );
        assert_eq!(
            policy.describe_next(at("2026-11-28T00:59:30Z")),
            "next window opens Sat 2026-11-28 02:00 Europe/Zurich (in less than a minute)"
        );
    }

    #[test]
    fn without_a_maintenance_table_everything_up_to_pool_recreate_is_allowed() {
        let policy = MaintenancePolicy::from_config(None).unwrap();
        let now = at("2026-11-25T12:00:00Z");
        assert_eq!(policy.allowed_at(now), Impact::PoolRecreate);
        assert_eq!(policy.open_window(now), None);
        assert_eq!(policy.next_opening(now), None);
        assert!(policy.fits(now, Duration::from_secs(24 * 3600)));
        assert_eq!(
            policy.describe_next(now),
            "no maintenance window is configured"
        );
    }

    #[test]
    fn a_window_never_allows_less_than_outside_it() {
        let policy = MaintenancePolicy::new(&Maintenance {
            timezone: "UTC".to_string(),
            windows: vec!["Sat 02:00-05:00".to_string()],
            outside_window: Impact::PoolRecreate,
            inside_window: Impact::None,
        })
        .unwrap();
        assert_eq!(
            policy.allowed_at(at("2026-11-28T03:00:00Z")),
            Impact::PoolRecreate
        );
    }

    #[test]
    fn rejects_unknown_time_zones_and_malformed_windows() {
        let config = |timezone: &str, window: &str| Maintenance {
            timezone: timezone.to_string(),
            windows: vec![window.to_string()],
            outside_window: Impact::None,
            inside_window: Impact::Minimal,
        };
        let error = MaintenancePolicy::new(&config("Europe/Zürich", "Sat 02:00-05:00"));
        assert_eq!(
            error.unwrap_err().to_string(),
            "`Europe/Zürich` is not a known time zone"
        );
        let error = MaintenancePolicy::new(&config("UTC", "Sat 2-5"));
        assert_eq!(
            error.unwrap_err().to_string(),
            "`Sat 2-5` is not a maintenance window"
        );
    }
}
