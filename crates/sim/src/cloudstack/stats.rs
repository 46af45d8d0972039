//! Request counters, total and by command (`listLoadBalancerRules`), so tests can prove how
//! many calls an operation makes, plus the faults injected by kind, and the log of the last
//! requests with their times (`crate::request_stats`'s, each entry's `route` the command), so
//! tests can see which calls overlapped. Served at `GET /_sim/requests`, cleared by
//! `POST /_sim/requests/reset`; those routes are not counted.
//!
//! Beside the log, `members` lists what each async job did to the VMs of LB rules when it took
//! effect (`jobs::MemberChange`: the rule, the command, the VMs gained and lost, those left,
//! whether the rule went), at `at_ms` on the log's clock. The log cannot tell it: an assign or
//! remove changes the rule when its job ends, after the request that started it, and the log
//! keeps no parameters. A job takes effect when the simulator advances it (at the next request
//! or tick after its time), which is also the first moment any client can see it. Only ids are
//! kept; never a parameter of a request (keys, signature).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use super::jobs::MemberChange;
use crate::cloudscale::FaultCounts;
use crate::request_stats::{append, Finished, LoggedRequest, LOG_LIMIT};

#[derive(Debug)]
pub struct RequestStats {
    counts: Mutex<RequestCounts>,
    /// What the log's times count from: when the simulator started.
    epoch: Instant,
}

impl Default for RequestStats {
    fn default() -> Self {
        RequestStats {
            counts: Mutex::default(),
            epoch: Instant::now(),
        }
    }
}

#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct RequestCounts {
    pub total: u64,
    /// By the `command` parameter as sent (an empty name when there was none).
    pub by_command: BTreeMap<String, u64>,
    pub faults: FaultCounts,
    /// Async jobs failed on purpose (`job-fail`).
    pub job_failures: u64,
    /// The last requests, in the order they finished.
    pub log: VecDeque<LoggedRequest>,
    /// The last changes of LB rules' VMs, in the order their jobs took effect.
    pub members: VecDeque<MemberEntry>,
}

/// A [`MemberChange`] and when it took effect.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberEntry {
    /// Milliseconds since the simulator started, as the log's times.
    pub at_ms: f64,
    #[serde(flatten)]
    pub change: MemberChange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Throttled,
    ServerError,
    Dropped,
    AfterCommit,
    JobFailure,
}

impl RequestStats {
    pub fn record(&self, command: &str) {
        let mut counts = self.lock();
        counts.total += 1;
        *counts.by_command.entry(command.to_owned()).or_default() += 1;
    }

    /// Logs a finished request; its times are counted from the simulator's start.
    pub fn log(&self, request: Finished, started: Instant, ended: Instant) {
        let entry = LoggedRequest::of(request, self.epoch, started, ended);
        append(&mut self.lock().log, entry);
    }

    /// Logs what jobs that took effect just now did to rules' VMs, dropping the oldest
    /// beyond the log's limit.
    pub fn log_members(&self, changes: Vec<MemberChange>) {
        if changes.is_empty() {
            return;
        }
        let micros = Instant::now()
            .saturating_duration_since(self.epoch)
            .as_micros();
        let at_ms = micros as f64 / 1000.0;
        let members = &mut self.lock().members;
        for change in changes {
            if members.len() >= LOG_LIMIT {
                members.pop_front();
            }
            members.push_back(MemberEntry { at_ms, change });
        }
    }

    pub fn record_fault(&self, kind: FaultKind) {
        let mut counts = self.lock();
        let count = match kind {
            FaultKind::Throttled => &mut counts.faults.throttled,
            FaultKind::ServerError => &mut counts.faults.server_error,
            FaultKind::Dropped => &mut counts.faults.dropped,
            FaultKind::AfterCommit => &mut counts.faults.after_commit,
            FaultKind::JobFailure => &mut counts.job_failures,
        };
        *count += 1;
    }

    pub fn snapshot(&self) -> RequestCounts {
        self.lock().clone()
    }

    pub fn reset(&self) {
        *self.lock() = RequestCounts::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, RequestCounts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_command_and_fault_and_resets() {
        let stats = RequestStats::default();
        stats.record("listZones");
        stats.record("listZones");
        stats.record("createTags");
        stats.record_fault(FaultKind::JobFailure);
        stats.record_fault(FaultKind::Dropped);
        let counts = stats.snapshot();
        assert_eq!(counts.total, 3);
        assert_eq!(counts.by_command["listZones"], 2);
        assert_eq!((counts.job_failures, counts.faults.dropped), (1, 1));
        stats.reset();
        assert_eq!(stats.snapshot(), RequestCounts::default());
    }

    #[test]
    fn member_changes_are_logged_in_order_on_the_log_clock_and_reset() {
        let stats = RequestStats::default();
        let change = |rule: &str| MemberChange {
            rule: rule.into(),
            name: "web-tcp-80".into(),
            command: "assignToLoadBalancerRule".into(),
            job: "j".into(),
            gained: vec!["vm-1".into()],
            lost: vec![],
            vms: vec!["vm-1".into()],
            deleted: false,
        };
        stats.log_members(vec![change("a"), change("b")]);
        let members = serde_json::to_value(&stats.snapshot().members).unwrap();
        assert_eq!(members[0]["rule"], "a");
        assert_eq!(members[1]["rule"], "b");
        assert_eq!(members[0]["gained"], serde_json::json!(["vm-1"]));
        assert!(members[0]["at_ms"].as_f64().is_some());
        stats.reset();
        assert!(stats.snapshot().members.is_empty());
    }
}
