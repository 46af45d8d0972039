//! The Kubernetes simulator's fault specification, as given to `skyplan sim serve --provider
//! kubernetes --faults SPEC` (or `SKYPLAN_SIM_FAULTS`), in the cloud simulators' syntax:
//! `unhealthy-after-change=P|NAME,seed=N`; `none` (or nothing) means no faults.
//!
//! `unhealthy-after-change=P` (a probability from 0 to 1) or `unhealthy-after-change=NAME` (a
//! node's name) is a change that breaks a node: each change to a node's labels or taints makes
//! it report `Ready` `False` (reason `KubeletNotReady`) — with probability P, or always for the
//! node named NAME — until it changes again (`health.rs`). A value that starts with a digit or
//! a dot is a probability; anything else a name.

use std::fmt;
use std::str::FromStr;

const UNHEALTHY_AFTER_CHANGE: &str = "unhealthy-after-change";
const SEED: &str = "seed";
const NONE: &str = "none";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubeFaults {
    /// Which changed nodes report not Ready.
    pub unhealthy_after_change: Option<UnhealthyNodes>,
    /// Makes the draws of a probability reproducible.
    pub seed: Option<u64>,
}

/// The nodes a change leaves not Ready.
#[derive(Debug, Clone, PartialEq)]
pub enum UnhealthyNodes {
    /// Each change, with this probability.
    Share(f64),
    /// Every change to the node of this name.
    Node(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fault spec: {0} (the Kubernetes simulator takes e.g. \"unhealthy-after-change=0.5,seed=7\" or \"unhealthy-after-change=node-2\")")]
pub struct KubeFaultsError(String);

fn invalid(key: &str, value: &str, why: &str) -> KubeFaultsError {
    KubeFaultsError(format!("`{key}={value}`: {why}"))
}

impl UnhealthyNodes {
    fn parse(value: &str) -> Result<Self, KubeFaultsError> {
        if value.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            match value.parse::<f64>() {
                Ok(share) if (0.0..=1.0).contains(&share) => Ok(UnhealthyNodes::Share(share)),
                _ => Err(invalid(
                    UNHEALTHY_AFTER_CHANGE,
                    value,
                    "a probability is a number from 0 to 1",
                )),
            }
        } else if value.is_empty() {
            let why = "give a probability from 0 to 1 or a node's name";
            Err(invalid(UNHEALTHY_AFTER_CHANGE, value, why))
        } else {
            Ok(UnhealthyNodes::Node(value.to_owned()))
        }
    }
}

impl fmt::Display for UnhealthyNodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnhealthyNodes::Share(share) => write!(f, "{share}"),
            UnhealthyNodes::Node(name) => f.write_str(name),
        }
    }
}

impl FromStr for KubeFaults {
    type Err = KubeFaultsError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let mut faults = KubeFaults::default();
        let spec = spec.trim();
        if spec.is_empty() || spec == NONE {
            return Ok(faults);
        }
        for entry in spec.split(',') {
            let Some((key, value)) = entry.split_once('=') else {
                return Err(KubeFaultsError(format!(
                    "`{}` is not KEY=VALUE",
                    entry.trim()
                )));
            };
            let (key, value) = (key.trim(), value.trim());
            match key {
                UNHEALTHY_AFTER_CHANGE => {
                    faults.unhealthy_after_change = Some(UnhealthyNodes::parse(value)?)
                }
                SEED => {
                    let seed = value
                        .parse()
                        .map_err(|_| invalid(key, value, "not a whole number"))?;
                    faults.seed = Some(seed);
                }
                // The cloud simulators' request faults are not simulated here: refused rather
                // than ignored, so a test never believes it ran with them.
                _ => return Err(KubeFaultsError(format!("unknown key `{key}`"))),
            }
        }
        Ok(faults)
    }
}

impl fmt::Display for KubeFaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut entries = Vec::new();
        if let Some(unhealthy) = &self.unhealthy_after_change {
            entries.push(format!("{UNHEALTHY_AFTER_CHANGE}={unhealthy}"));
        }
        if let Some(seed) = self.seed {
            entries.push(format!("{SEED}={seed}"));
        }
        match entries.is_empty() {
            true => f.write_str(NONE),
            false => f.write_str(&entries.join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unhealthy_after_change_is_a_probability_or_a_nodes_name() {
        let parse = |spec: &str| spec.parse::<KubeFaults>().unwrap().unhealthy_after_change;
        assert_eq!(
            parse("unhealthy-after-change=0.3"),
            Some(UnhealthyNodes::Share(0.3))
        );
        let named = parse(" unhealthy-after-change = node-2 ");
        assert_eq!(named, Some(UnhealthyNodes::Node("node-2".into())));
        assert_eq!(parse("none"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn a_bad_probability_an_empty_name_or_a_request_fault_is_refused() {
        for spec in [
            "unhealthy-after-change=1.5",
            "unhealthy-after-change=",
            "429=0.1",
            "seed",
        ] {
            assert!(spec.parse::<KubeFaults>().is_err(), "{spec}");
        }
    }

    #[test]
    fn display_writes_what_parses_back() {
        for spec in [
            "none",
            "unhealthy-after-change=0.25,seed=3",
            "unhealthy-after-change=node-2",
        ] {
            let faults: KubeFaults = spec.parse().unwrap();
            assert_eq!(faults.to_string(), spec);
            assert_eq!(faults.to_string().parse::<KubeFaults>().unwrap(), faults);
        }
    }
}
