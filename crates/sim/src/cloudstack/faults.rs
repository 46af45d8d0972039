//! Faults injected on purpose: the cloudscale simulator's transport faults (latency, 429,
//! 5xx, dropped connections, calls carried out whose answer is lost), with the same spec
//! syntax, plus `job-fail=P`: an async job that fails with 530 "simulated failure".
//! A CloudStack call is mutating unless it lists, queries or gets.
//!
//! `unhealthy-after-change=P` (a probability) or `unhealthy-after-change=NAME` (an LB rule's
//! name, e.g. `web-tcp-80`) is parsed with the transport faults, as cloudscale's is: each change
//! to a rule it picks makes the rule's VMs report `Stopped` in `listLoadBalancerRuleInstances`
//! (see `health`).

use std::fmt;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::cloudscale::{Faults as TransportFaults, FaultsError};

const JOB_FAIL: &str = "job-fail";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    pub transport: TransportFaults,
    /// Share of async jobs that fail (errorcode 530) instead of doing their work.
    pub job_fail: f64,
}

impl FromStr for Faults {
    type Err = FaultsError;

    fn from_str(spec: &str) -> Result<Self, FaultsError> {
        let mut job_fail = None;
        let mut rest = Vec::new();
        for entry in spec.split(',') {
            match entry.split_once('=') {
                Some((key, value)) if key.trim() == JOB_FAIL => {
                    let rate = value.trim().parse::<f64>().ok();
                    match rate {
                        Some(rate) if (0.0..=1.0).contains(&rate) && job_fail.is_none() => {
                            job_fail = Some(rate)
                        }
                        // Let the transport parser word the refusal the usual way.
                        _ => rest.push("job-fail=invalid"),
                    }
                }
                _ => rest.push(entry),
            }
        }
        let transport = rest.join(",").parse()?;
        Ok(Faults {
            transport,
            job_fail: job_fail.unwrap_or(0.0),
        })
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.transport.is_none(), self.job_fail) {
            (_, 0.0) => write!(f, "{}", self.transport),
            (true, rate) => write!(f, "{JOB_FAIL}={rate}"),
            (false, rate) => write!(f, "{},{JOB_FAIL}={rate}", self.transport),
        }
    }
}

/// What happens to one request before (or after) it is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Throttle,
    ServerError(u16),
    Drop,
    /// Carry the call out, then drop the connection (`true`) or answer 500.
    AfterCommit {
        drop: bool,
    },
}

const SERVER_ERRORS: [u16; 4] = [500, 502, 503, 504];

pub struct Injector {
    faults: Faults,
    rng: Mutex<StdRng>,
}

impl Injector {
    pub fn new(faults: Faults) -> Self {
        let rng = faults
            .transport
            .seed
            .map_or_else(StdRng::from_os_rng, StdRng::seed_from_u64);
        Injector {
            faults,
            rng: Mutex::new(rng),
        }
    }

    /// The delay and the fault of one request; draws the same number of values whatever the
    /// outcome, so a seed repeats a sequence.
    pub fn draw(&self, mutating: bool) -> (Duration, Option<Fault>) {
        let t = &self.faults.transport;
        let mut rng = self.rng();
        let delay = t
            .latency
            .map_or(Duration::ZERO, |(low, high)| rng.random_range(low..=high));
        let roll: f64 = rng.random();
        let status = SERVER_ERRORS[rng.random_range(0..SERVER_ERRORS.len())];
        let drop: bool = rng.random();
        let bands = [
            (t.rate_429, Some(Fault::Throttle)),
            (t.rate_5xx, Some(Fault::ServerError(status))),
            (t.rate_drop, Some(Fault::Drop)),
            // A read changes nothing, so it has nothing to commit.
            (
                t.rate_fail_after_commit,
                mutating.then_some(Fault::AfterCommit { drop }),
            ),
        ];
        let mut floor = 0.0;
        for (rate, fault) in bands {
            if roll < floor + rate {
                return (delay, fault);
            }
            floor += rate;
        }
        (delay, None)
    }

    /// Whether a job starting now is to fail.
    pub fn job_fails(&self) -> bool {
        self.faults.job_fail > 0.0 && self.rng().random::<f64>() < self.faults.job_fail
    }

    fn rng(&self) -> std::sync::MutexGuard<'_, StdRng> {
        self.rng.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub fn is_mutating(command: &str) -> bool {
    let lower = command.to_lowercase();
    !["list", "query", "get"]
        .iter()
        .any(|read| lower.starts_with(read))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_fail_sits_beside_the_transport_faults() {
        let faults: Faults = "429=0.1,job-fail=0.5,seed=3".parse().unwrap();
        assert_eq!(faults.job_fail, 0.5);
        assert_eq!(faults.transport.rate_429, 0.1);
        assert_eq!(faults.to_string(), "429=0.1,seed=3,job-fail=0.5");
        assert_eq!(faults.to_string().parse::<Faults>().unwrap(), faults);
        assert_eq!(
            "job-fail=1".parse::<Faults>().unwrap().to_string(),
            "job-fail=1"
        );
        assert_eq!("none".parse::<Faults>().unwrap(), Faults::default());
    }

    #[test]
    fn unhealthy_after_change_names_a_rule_or_gives_a_share() {
        use crate::cloudscale::Unhealthy;
        let named: Faults = "unhealthy-after-change=web-tcp-80,job-fail=0.1"
            .parse()
            .unwrap();
        let picks = named.transport.unhealthy_after_change.clone();
        assert_eq!(picks, Some(Unhealthy::LoadBalancer("web-tcp-80".into())));
        assert_eq!(named.to_string().parse::<Faults>().unwrap(), named);
        let share: Faults = "unhealthy-after-change=0.25".parse().unwrap();
        let picks = share.transport.unhealthy_after_change;
        assert_eq!(picks, Some(Unhealthy::Share(0.25)));
        assert!("unhealthy-after-change=1.5".parse::<Faults>().is_err());
    }

    #[test]
    fn bad_specs_are_refused() {
        for spec in [
            "job-fail=2",
            "job-fail=x",
            "job-fail=0.1,job-fail=0.2",
            "nope=1",
        ] {
            assert!(spec.parse::<Faults>().is_err(), "{spec}");
        }
    }

    #[test]
    fn job_failures_follow_the_rate() {
        let injector = Injector::new("job-fail=0.3,seed=5".parse().unwrap());
        let failed = (0..10_000).filter(|_| injector.job_fails()).count();
        assert!((2700..3300).contains(&failed), "{failed}");
        let never = Injector::new(Faults::default());
        assert!((0..100).all(|_| !never.job_fails()));
    }

    #[test]
    fn reads_are_never_failed_after_commit() {
        let injector = Injector::new("after-commit=1".parse().unwrap());
        assert!((0..100).all(|_| injector.draw(false).1.is_none()));
        assert!(matches!(
            injector.draw(true).1,
            Some(Fault::AfterCommit { .. })
        ));
        assert!(is_mutating("createTags") && !is_mutating("listZones"));
        assert!(!is_mutating("queryAsyncJobResult") && !is_mutating("getKubernetesClusterConfig"));
    }
}
