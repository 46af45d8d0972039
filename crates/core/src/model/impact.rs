//! `Impact`, the four classes of a change (`none` < `minimal` < `pool-recreate` <
//! `forbidden`), and `Downtime`, its estimate in seconds, with the arithmetic of both.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much a change disturbs live traffic or workloads (impact.md). Ordered: a resource's
/// class is the highest of its changes, a plan's the highest of its resources.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Impact {
    #[default]
    None,
    Minimal,
    PoolRecreate,
    Forbidden,
}

impl Impact {
    pub const ALL: [Impact; 4] = [
        Impact::None,
        Impact::Minimal,
        Impact::PoolRecreate,
        Impact::Forbidden,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Impact::None => "none",
            Impact::Minimal => "minimal",
            Impact::PoolRecreate => "pool-recreate",
            Impact::Forbidden => "forbidden",
        }
    }
}

impl fmt::Display for Impact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Impact {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Impact::ALL
            .into_iter()
            .find(|i| i.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not an impact class: expected none, minimal, pool-recreate or forbidden")
            })
    }
}

/// An estimated range of downtime in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Downtime {
    pub min: u32,
    pub max: u32,
}

impl Downtime {
    pub const ZERO: Downtime = Downtime { min: 0, max: 0 };

    pub const fn new(min: u32, max: u32) -> Self {
        Downtime { min, max }
    }

    pub fn is_zero(&self) -> bool {
        self.max == 0
    }

    /// Downtime of operations that run one after another on the same resource: a port
    /// may wait behind every earlier operation, so the worst cases add up.
    pub fn then(self, next: Downtime) -> Downtime {
        Downtime {
            min: self.min.max(next.min),
            max: self.max.saturating_add(next.max),
        }
    }

    /// Downtime of operations that run side by side on different resources.
    pub fn alongside(self, other: Downtime) -> Downtime {
        Downtime {
            min: self.min.max(other.min),
            max: self.max.max(other.max),
        }
    }
}

impl fmt::Display for Downtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (_, 0) => f.write_str("no downtime"),
            (0, max) => write!(f, "up to {max} s"),
            (min, max) if min == max => write!(f, "{min} s"),
            (min, max) => write!(f, "{min}-{max} s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_ordered_by_severity() {
        assert!(Impact::None < Impact::Minimal);
        assert!(Impact::Minimal < Impact::PoolRecreate);
        assert!(Impact::PoolRecreate < Impact::Forbidden);
        assert_eq!("pool-recreate".parse::<Impact>(), Ok(Impact::PoolRecreate));
        assert!("huge".parse::<Impact>().is_err());
    }

    #[test]
    fn sequential_downtime_adds_worst_cases() {
        let d = Downtime::new(60, 120).then(Downtime::new(0, 15));
        assert_eq!(d, Downtime::new(60, 135));
        assert_eq!(Downtime::new(60, 120).to_string(), "60-120 s");
        assert_eq!(Downtime::new(0, 15).to_string(), "up to 15 s");
    }
}
