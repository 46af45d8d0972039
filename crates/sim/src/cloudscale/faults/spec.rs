//! The fault specification, as given on the command line (`skyplan sim serve --faults SPEC`) or
//! in `SKYPLAN_SIM_FAULTS`: `latency=5-50ms,429=0.05,5xx=0.03,drop=0.02,after-commit=0.02,seed=7`.
//! Every key is optional; `none` (or nothing) means no faults. Display writes the same syntax.
//!
//! `recreate-on-patch=pool` is a cloud that does more than it is asked: a PATCH of a pool, or
//! of its listener or health monitor, which the real API applies in place, recreates the pool
//! (new UUIDs for it, its members and its monitor). Apply's verification must notice it.
//!
//! `unhealthy-after-change=P` (a probability from 0 to 1) or `unhealthy-after-change=NAME` (a
//! load balancer's name) is a change that breaks the service: each change to a pool (created,
//! patched, recreated, its members or its health monitor created, patched or deleted) makes
//! the pool's members report `monitor_status: down` — with probability P, or always when the
//! pool's load balancer is named NAME — until the pool changes again. A value that starts with
//! a digit or a dot is a probability; anything else a name.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// What the simulator does wrong, on purpose, to `/v1` requests. Each request draws at most one
/// fault, so the rates add up to at most 1.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    /// A delay drawn uniformly from this range (inclusive) before every API request.
    pub latency: Option<(Duration, Duration)>,
    /// Share of requests answered `429 Too Many Requests` (with `Retry-After: 1`), not performed.
    pub rate_429: f64,
    /// Share of requests answered with a 5xx status, not performed.
    pub rate_5xx: f64,
    /// Share of requests whose connection is closed without an answer, not performed.
    pub rate_drop: f64,
    /// Share of mutating requests that are performed, then answered 500 or dropped: the client
    /// cannot know the change happened.
    pub rate_fail_after_commit: f64,
    /// Makes the draws reproducible (for one client sending one request at a time).
    pub seed: Option<u64>,
    /// What a PATCH applied in place recreates instead (`recreate-on-patch=pool`).
    pub recreate_on_patch: Option<Recreate>,
    /// Which changed pools' members stay `down` (`unhealthy-after-change=P|NAME`).
    pub unhealthy_after_change: Option<Unhealthy>,
}

/// The pools whose members a change leaves `down`.
#[derive(Debug, Clone, PartialEq)]
pub enum Unhealthy {
    /// Each change, with this probability.
    Share(f64),
    /// Every change to a pool of the load balancer of this name.
    LoadBalancer(String),
}

impl Unhealthy {
    fn parse(value: &str) -> Result<Self, FaultsError> {
        if value.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            Ok(Unhealthy::Share(parse_rate(UNHEALTHY_AFTER_CHANGE, value)?))
        } else if value.is_empty() {
            Err(invalid(
                UNHEALTHY_AFTER_CHANGE,
                value,
                "give a probability from 0 to 1 or a load balancer's name",
            ))
        } else {
            Ok(Unhealthy::LoadBalancer(value.to_owned()))
        }
    }
}

impl fmt::Display for Unhealthy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unhealthy::Share(share) => write!(f, "{share}"),
            Unhealthy::LoadBalancer(name) => f.write_str(name),
        }
    }
}

/// The object a misbehaving cloud recreates on an in-place PATCH.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recreate {
    /// The pool the patched object belongs to.
    Pool,
}

impl Recreate {
    const POOL: &'static str = "pool";
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fault spec: {0} (expected e.g. \"latency=5-50ms,429=0.05,5xx=0.03,drop=0.02,after-commit=0.02,seed=7\")")]
pub struct FaultsError(String);

const LATENCY: &str = "latency";
const RATE_429: &str = "429";
const RATE_5XX: &str = "5xx";
const RATE_DROP: &str = "drop";
const RATE_AFTER_COMMIT: &str = "after-commit";
const SEED: &str = "seed";
const RECREATE_ON_PATCH: &str = "recreate-on-patch";
const UNHEALTHY_AFTER_CHANGE: &str = "unhealthy-after-change";
const NONE: &str = "none";

/// Duration units, largest first (Display picks the largest that is exact).
const UNITS: [(&str, u128); 4] = [
    ("s", 1_000_000_000),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

impl Faults {
    /// True when no request is ever delayed or faulted.
    pub fn is_none(&self) -> bool {
        self.latency.is_none()
            && self.total_rate() == 0.0
            && self.recreate_on_patch.is_none()
            && self.unhealthy_after_change.is_none()
    }

    fn total_rate(&self) -> f64 {
        self.rates().iter().map(|(_, rate)| rate).sum()
    }

    fn rates(&self) -> [(&'static str, f64); 4] {
        [
            (RATE_429, self.rate_429),
            (RATE_5XX, self.rate_5xx),
            (RATE_DROP, self.rate_drop),
            (RATE_AFTER_COMMIT, self.rate_fail_after_commit),
        ]
    }

    fn set(&mut self, key: &str, value: &str) -> Result<(), FaultsError> {
        match key {
            LATENCY => self.latency = Some(parse_latency(value)?),
            RATE_429 => self.rate_429 = parse_rate(key, value)?,
            RATE_5XX => self.rate_5xx = parse_rate(key, value)?,
            RATE_DROP => self.rate_drop = parse_rate(key, value)?,
            RATE_AFTER_COMMIT => self.rate_fail_after_commit = parse_rate(key, value)?,
            RECREATE_ON_PATCH => match value {
                Recreate::POOL => self.recreate_on_patch = Some(Recreate::Pool),
                _ => return Err(invalid(key, value, "the one object it recreates is `pool`")),
            },
            UNHEALTHY_AFTER_CHANGE => self.unhealthy_after_change = Some(Unhealthy::parse(value)?),
            SEED => {
                let seed = value
                    .parse()
                    .map_err(|_| invalid(key, value, "not a number"))?;
                self.seed = Some(seed);
            }
            _ => {
                return Err(FaultsError(format!(
                    "unknown key {key:?} (known: {LATENCY}, {RATE_429}, {RATE_5XX}, {RATE_DROP}, \
                     {RATE_AFTER_COMMIT}, {SEED}, {RECREATE_ON_PATCH}, {UNHEALTHY_AFTER_CHANGE})"
                )))
            }
        }
        Ok(())
    }
}

impl FromStr for Faults {
    type Err = FaultsError;

    fn from_str(spec: &str) -> Result<Self, FaultsError> {
        let mut faults = Faults::default();
        let spec = spec.trim();
        if spec.is_empty() || spec == NONE {
            return Ok(faults);
        }
        let mut seen = Vec::new();
        for entry in spec.split(',').map(str::trim) {
            let (key, value) = entry
                .split_once('=')
                .ok_or_else(|| FaultsError(format!("{entry:?} is not KEY=VALUE")))?;
            let key = key.trim();
            if seen.contains(&key) {
                return Err(FaultsError(format!("{key:?} is given twice")));
            }
            seen.push(key);
            faults.set(key, value.trim())?;
        }
        let total = faults.total_rate();
        // Decimal rates such as 0.7 + 0.2 + 0.1 may add up to a hair above 1 in binary.
        if total > 1.0 + 1e-9 {
            return Err(FaultsError(format!(
                "the rates add up to {total}, more than 1"
            )));
        }
        Ok(faults)
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut entries = Vec::new();
        if let Some((low, high)) = self.latency {
            entries.push(format!("{LATENCY}={}", format_latency(low, high)));
        }
        for (key, rate) in self.rates() {
            if rate != 0.0 {
                entries.push(format!("{key}={rate}"));
            }
        }
        if let Some(seed) = self.seed {
            entries.push(format!("{SEED}={seed}"));
        }
        if let Some(Recreate::Pool) = self.recreate_on_patch {
            entries.push(format!("{RECREATE_ON_PATCH}={}", Recreate::POOL));
        }
        if let Some(unhealthy) = &self.unhealthy_after_change {
            entries.push(format!("{UNHEALTHY_AFTER_CHANGE}={unhealthy}"));
        }
        if entries.is_empty() {
            f.write_str(NONE)
        } else {
            f.write_str(&entries.join(","))
        }
    }
}

fn invalid(key: &str, value: &str, why: &str) -> FaultsError {
    FaultsError(format!("{key}={value}: {why}"))
}

fn parse_rate(key: &str, value: &str) -> Result<f64, FaultsError> {
    match value.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(invalid(key, value, "a rate is a number from 0 to 1")),
    }
}

/// `LOW-HIGHunit` or `Nunit`, the unit one of s, ms, us, ns.
fn parse_latency(value: &str) -> Result<(Duration, Duration), FaultsError> {
    let bad = |why| invalid(LATENCY, value, why);
    let (numbers, scale) = UNITS
        .iter()
        .filter_map(|(unit, scale)| Some((value.strip_suffix(unit)?, *scale)))
        // "ms" also ends in "s": the longest unit that fits leaves only digits behind.
        .find(|(numbers, _)| numbers.ends_with(|c: char| c.is_ascii_digit()))
        .ok_or_else(|| bad("give a unit: s, ms, us or ns"))?;
    let amount = |text: &str| -> Result<Duration, FaultsError> {
        let n: u64 = text.trim().parse().map_err(|_| bad("not a whole number"))?;
        let nanos = u128::from(n) * scale;
        u64::try_from(nanos)
            .map(Duration::from_nanos)
            .map_err(|_| bad("too long"))
    };
    let (low, high) = match numbers.split_once('-') {
        Some((low, high)) => (amount(low)?, amount(high)?),
        None => (amount(numbers)?, amount(numbers)?),
    };
    if low > high {
        return Err(bad("the range is backwards"));
    }
    Ok((low, high))
}

fn format_latency(low: Duration, high: Duration) -> String {
    let (unit, scale) = UNITS
        .iter()
        .find(|(_, scale)| low.as_nanos() % scale == 0 && high.as_nanos() % scale == 0)
        .copied()
        .unwrap_or(("ns", 1));
    let (low, high) = (low.as_nanos() / scale, high.as_nanos() / scale);
    if low == high {
        format!("{low}{unit}")
    } else {
        format!("{low}-{high}{unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn parses_the_documented_example() {
        let faults: Faults = "latency=5-50ms,429=0.05,5xx=0.03,drop=0.02,after-commit=0.02,seed=7"
            .parse()
            .unwrap();
        let expected = Faults {
            latency: Some((ms(5), ms(50))),
            rate_429: 0.05,
            rate_5xx: 0.03,
            rate_drop: 0.02,
            rate_fail_after_commit: 0.02,
            seed: Some(7),
            recreate_on_patch: None,
            unhealthy_after_change: None,
        };
        assert_eq!(faults, expected);
    }

    #[test]
    fn display_round_trips() {
        for spec in [
            "latency=5-50ms,429=0.05,5xx=0.03,drop=0.02,after-commit=0.02,seed=7",
            "latency=20ms",
            "latency=1-2s",
            "latency=1500-2000us",
            "drop=1",
            "after-commit=0.5,seed=0",
            "429=0.1,recreate-on-patch=pool",
            "unhealthy-after-change=0.25",
            "unhealthy-after-change=web",
            "seed=3,recreate-on-patch=pool,unhealthy-after-change=1",
            "none",
        ] {
            let faults: Faults = spec.parse().unwrap();
            assert_eq!(faults.to_string(), spec);
            assert_eq!(faults.to_string().parse::<Faults>().unwrap(), faults);
        }
    }

    #[test]
    fn display_keeps_sub_unit_precision() {
        let faults = Faults {
            latency: Some((Duration::from_nanos(1), ms(3))),
            ..Faults::default()
        };
        assert_eq!(faults.to_string(), "latency=1-3000000ns");
        assert_eq!(faults.to_string().parse::<Faults>().unwrap(), faults);
    }

    #[test]
    fn spaces_and_empty_mean_what_they_look_like() {
        assert_eq!("".parse::<Faults>().unwrap(), Faults::default());
        assert!(Faults::default().is_none());
        let faults: Faults = " 429 = 0.5 , seed = 3 ".parse().unwrap();
        assert_eq!((faults.rate_429, faults.seed), (0.5, Some(3)));
        assert!(!faults.is_none());
        let recreating: Faults = "recreate-on-patch=pool".parse().unwrap();
        assert_eq!(recreating.recreate_on_patch, Some(Recreate::Pool));
        assert!(!recreating.is_none());
    }

    #[test]
    fn unhealthy_after_change_is_a_probability_or_a_load_balancers_name() {
        let parse = |spec: &str| spec.parse::<Faults>().unwrap().unhealthy_after_change;
        assert_eq!(
            parse("unhealthy-after-change=0.3"),
            Some(Unhealthy::Share(0.3))
        );
        assert_eq!(
            parse("unhealthy-after-change=1"),
            Some(Unhealthy::Share(1.0))
        );
        assert_eq!(
            parse(" unhealthy-after-change = web "),
            Some(Unhealthy::LoadBalancer("web".into()))
        );
        assert_eq!(
            parse("unhealthy-after-change=nan"),
            Some(Unhealthy::LoadBalancer("nan".into()))
        );
        let faults: Faults = "unhealthy-after-change=web".parse().unwrap();
        assert!(!faults.is_none());
        // Not a per-request rate: it does not count towards the rates' sum.
        assert!("drop=1,unhealthy-after-change=1".parse::<Faults>().is_ok());
    }

    #[test]
    fn refuses_what_it_cannot_mean() {
        for spec in [
            "429",
            "429=2",
            "429=-0.1",
            "429=nan",
            "5xx=0.6,drop=0.6",
            "latency=5",
            "latency=5-50",
            "latency=50-5ms",
            "latency=5ms-50ms",
            "latency=fast",
            "seed=-1",
            "drop=0.1,drop=0.2",
            "timeout=0.1",
            "recreate-on-patch=listener",
            "unhealthy-after-change=1.5",
            "unhealthy-after-change=.5.5",
            "unhealthy-after-change=2nd-web",
            "unhealthy-after-change=",
            "unhealthy-after-change=web,unhealthy-after-change=api",
        ] {
            let error = spec.parse::<Faults>().unwrap_err();
            assert!(
                error.to_string().contains("invalid fault spec"),
                "{spec}: {error}"
            );
        }
    }
}
