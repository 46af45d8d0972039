//! What the cloud reports of a resource's health once a change to it is done: the rollout's
//! health gate (`[rollout] health-gate`) polls it until the resource is healthy or the
//! gate's time runs out.

/// One read of a resource's health.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Everything the cloud reports of the resource is as it should be in service.
    Healthy,
    /// What is not (yet), each in words a user can check in the cloud's console, e.g.
    /// `member node-2 of pool tcp/http: monitor_status down`.
    Unhealthy(Vec<String>),
}

impl Health {
    /// Healthy when nothing is listed as unhealthy.
    pub fn from_problems(problems: Vec<String>) -> Health {
        match problems.is_empty() {
            true => Health::Healthy,
            false => Health::Unhealthy(problems),
        }
    }

    pub fn is_healthy(&self) -> bool {
        matches!(self, Health::Healthy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_without_problems_is_healthy_and_one_with_any_is_not() {
        assert!(Health::from_problems(vec![]).is_healthy());
        let down = Health::from_problems(vec!["member a: down".into()]);
        assert_eq!(down, Health::Unhealthy(vec!["member a: down".into()]));
        assert!(!down.is_healthy());
    }
}
