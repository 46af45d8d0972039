//! Member health: the `monitor_status` a pool member reports — `no_monitor` without a health
//! monitor, else `changing`, `down` or `up`.
//!
//! A member's checks start when the change that made it (the member created, its pool
//! recreated, or the pool's monitor created: the later of the member's and the monitor's
//! `created_at`) has settled; until then it is `changing`. It is `up` once the monitor has seen
//! `up_threshold` checks `delay_s` apart succeed, and `down` before. Monitor seconds are
//! simulated: a load balancer change, which takes some ten seconds on the real cloud, takes the
//! server's settle time (`--settle-ms`), so one monitor second lasts a tenth of it
//! ([`SECONDS_PER_SETTLE`]); with the default 300 ms settle and the API's default monitor (2
//! checks, 2 s apart) a new member is `up` 120 ms after its change settled.
//!
//! A member is reachable unless its address is a server's of this account that is not
//! `running` (stopped, or changing): the simulator knows no other network, so an address it
//! does not hold (a node elsewhere) answers. An unreachable member is `down` at once (the
//! monitor's `down_threshold` is not simulated).
//!
//! The `unhealthy-after-change` fault keeps the members of the pools it picked `down`. Which
//! pools it picked lives in memory only (`World::unhealthy_pools`, never in the world file): a
//! server started without the fault reports every member by reachability again.

use std::net::IpAddr;

use jiff::{SignedDuration, Timestamp};
use uuid::Uuid;

use super::world::{HealthMonitor, Member, World};

/// How many simulated monitor seconds one settle time stands for.
pub const SECONDS_PER_SETTLE: i32 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MonitorStatus {
    Up,
    Down,
    Changing,
    NoMonitor,
}

impl MonitorStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MonitorStatus::Up => "up",
            MonitorStatus::Down => "down",
            MonitorStatus::Changing => "changing",
            MonitorStatus::NoMonitor => "no_monitor",
        }
    }
}

/// The status of a monitored member whose checks start at `checks_from`, at `now`.
pub fn monitored(
    monitor: &HealthMonitor,
    checks_from: Timestamp,
    now: Timestamp,
    settle: SignedDuration,
    kept_down: bool,
    reachable: bool,
) -> MonitorStatus {
    if now < checks_from {
        return MonitorStatus::Changing;
    }
    if kept_down || !reachable {
        return MonitorStatus::Down;
    }
    let checks = u64::from(monitor.up_threshold).checked_mul(u64::from(monitor.delay_s));
    let second = settle / SECONDS_PER_SETTLE;
    let up_at = checks
        .and_then(|checks| i32::try_from(checks).ok())
        .and_then(|checks| second.checked_mul(checks))
        .and_then(|wait| checks_from.checked_add(wait).ok());
    match up_at {
        Some(up_at) if now >= up_at => MonitorStatus::Up,
        _ => MonitorStatus::Down,
    }
}

impl World {
    /// The `monitor_status` of `member` at `now`, for a server settling changes in `settle`.
    pub fn monitor_status(
        &self,
        member: &Member,
        now: Timestamp,
        settle: SignedDuration,
    ) -> MonitorStatus {
        let Some(monitor) = self.monitor_of(member.pool) else {
            return MonitorStatus::NoMonitor;
        };
        let changed = member.created_at.max(monitor.created_at);
        let checks_from = changed.checked_add(settle).unwrap_or(changed);
        let kept_down = self.unhealthy_pools.contains(&member.pool);
        let reachable = self.reachable(member.address);
        monitored(monitor, checks_from, now, settle, kept_down, reachable)
    }

    /// False for an address of a server of this account that is not `running`.
    pub fn reachable(&self, address: IpAddr) -> bool {
        !self.servers.iter().any(|server| {
            server.status != "running"
                && server
                    .interfaces
                    .iter()
                    .flat_map(|i| &i.addresses)
                    .any(|a| a.address == address)
        })
    }

    /// Records that `pool` changed: its members stay `down` if `kept_down` (the
    /// `unhealthy-after-change` fault picked it), and report by reachability otherwise.
    pub fn pool_changed(&mut self, pool: Uuid, kept_down: bool) {
        if kept_down {
            self.unhealthy_pools.insert(pool);
        } else {
            self.unhealthy_pools.remove(&pool);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloudscale::world::MonitorType;

    fn monitor(up_threshold: u32, delay_s: u32) -> HealthMonitor {
        HealthMonitor {
            uuid: Uuid::nil(),
            pool: Uuid::nil(),
            delay_s,
            timeout_s: 1,
            up_threshold,
            down_threshold: 3,
            kind: MonitorType::Tcp,
            http: None,
            tags: Default::default(),
            created_at: Timestamp::UNIX_EPOCH,
        }
    }

    fn at(ms: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_millis(ms)
    }

    #[test]
    fn a_member_is_changing_then_down_until_its_checks_pass_then_up() {
        // Settle 300 ms: a monitor second is 30 ms; 2 checks 2 s apart take 120 ms.
        let settle = SignedDuration::from_millis(300);
        let (monitor, from) = (monitor(2, 2), at(1_000));
        let status = |now| monitored(&monitor, from, at(now), settle, false, true);
        assert_eq!(status(999), MonitorStatus::Changing);
        assert_eq!(status(1_000), MonitorStatus::Down);
        assert_eq!(status(1_119), MonitorStatus::Down);
        assert_eq!(status(1_120), MonitorStatus::Up);
        assert_eq!(status(100_000), MonitorStatus::Up);
    }

    #[test]
    fn a_kept_down_or_unreachable_member_never_comes_up() {
        let settle = SignedDuration::from_millis(10);
        let monitor = monitor(1, 1);
        for (kept_down, reachable) in [(true, true), (false, false), (true, false)] {
            let status = monitored(&monitor, at(0), at(60_000), settle, kept_down, reachable);
            assert_eq!(status, MonitorStatus::Down, "{kept_down} {reachable}");
            let early = monitored(&monitor, at(0), at(-1), settle, kept_down, reachable);
            assert_eq!(early, MonitorStatus::Changing);
        }
    }

    #[test]
    fn no_settle_time_means_up_as_soon_as_checks_start() {
        let status = monitored(
            &monitor(10, 60),
            at(5),
            at(5),
            SignedDuration::ZERO,
            false,
            true,
        );
        assert_eq!(status, MonitorStatus::Up);
    }

    #[test]
    fn huge_thresholds_stay_down_rather_than_overflow() {
        let settle = SignedDuration::from_secs(1);
        let status = monitored(
            &monitor(u32::MAX, u32::MAX),
            at(0),
            at(1),
            settle,
            false,
            true,
        );
        assert_eq!(status, MonitorStatus::Down);
    }
}
