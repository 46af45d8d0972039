//! The IP block state machine. An attach or detach is accepted at once (202) and finishes
//! `transition` later; the in-between states (`assigning`, `unassigning`) and the end state are
//! computed from the stored timestamp on every read, so a simulator restarted on its world file
//! and the one that accepted the change agree on when it finished.
//!
//! Choice (research §9.2 leaves it open): `assignedResourceId`/`Type` are set from the moment
//! the attach is accepted (the block is `assigning` and already names its network) and cleared
//! only when the detach finishes. The CCM's GetLoadBalancer does not look at `status`, so with
//! this choice a Service is served as soon as its attach is accepted.

use jiff::Timestamp;

use super::api::{ApiError, ApiResult};
use super::world::{BlockStatus, IpBlock, Transition, TransitionKind};

impl IpBlock {
    /// The status a client sees at `now`.
    pub fn status_at(&self, now: Timestamp) -> BlockStatus {
        match self.transition {
            None => self.status,
            Some(t) if now >= t.done_at => t.kind.end_status(),
            Some(t) => t.kind.running_status(),
        }
    }

    /// The public network the block is attached to at `now` (also while assigning or
    /// unassigning).
    pub fn network_at(&self, now: Timestamp) -> Option<&str> {
        match self.transition {
            Some(t) if t.kind == TransitionKind::Unassign && now >= t.done_at => None,
            _ => self.assigned_network.as_deref(),
        }
    }

    /// True while an attach or detach of this block is still running.
    pub fn is_busy_at(&self, now: Timestamp) -> bool {
        self.transition.is_some_and(|t| now < t.done_at)
    }

    /// Folds a finished transition into the stored state.
    pub fn settle(&mut self, now: Timestamp) {
        let Some(t) = self.transition else { return };
        if now < t.done_at {
            return;
        }
        self.status = t.kind.end_status();
        if t.kind == TransitionKind::Unassign {
            self.assigned_network = None;
        }
        self.transition = None;
    }

    /// Accepts an attach to `network`; refuses a block that is not `unassigned` (409).
    pub fn begin_assign(
        &mut self,
        network: &str,
        now: Timestamp,
        done_at: Timestamp,
    ) -> ApiResult<()> {
        self.settle(now);
        self.check_assignable(now)?;
        self.assigned_network = Some(network.to_owned());
        self.transition = Some(Transition {
            kind: TransitionKind::Assign,
            done_at,
        });
        Ok(())
    }

    /// Only an `unassigned` block can be attached (409 otherwise).
    pub fn check_assignable(&self, now: Timestamp) -> ApiResult<()> {
        match self.status_at(now) {
            BlockStatus::Unassigned => Ok(()),
            status => Err(ApiError::conflict(format!(
                "The resource is in an incompatible state: IP Block {} is {}.",
                self.id,
                status.as_str()
            ))),
        }
    }

    /// Accepts a detach from `network`; refuses a block not `assigned` to it (409).
    pub fn begin_unassign(
        &mut self,
        network: &str,
        now: Timestamp,
        done_at: Timestamp,
    ) -> ApiResult<()> {
        self.settle(now);
        if self.network_at(now) != Some(network) {
            return Err(ApiError::conflict(format!(
                "The resource is in an incompatible state: IP Block {} is not assigned to \
                 Public Network {network}.",
                self.id
            )));
        }
        if self.status_at(now) != BlockStatus::Assigned {
            return Err(ApiError::conflict(format!(
                "The resource is in an incompatible state: IP Block {} is {}.",
                self.id,
                self.status_at(now).as_str()
            )));
        }
        self.transition = Some(Transition {
            kind: TransitionKind::Unassign,
            done_at,
        });
        Ok(())
    }

    /// "An IP Block can only be deleted if not assigned to any resource": 409 otherwise (the
    /// real code is undocumented, research §2).
    pub fn check_deletable(&self, now: Timestamp) -> ApiResult<()> {
        match self.status_at(now) {
            BlockStatus::Unassigned => Ok(()),
            status => Err(ApiError::conflict(format!(
                "IP Block {} cannot be deleted while it is {}: an IP Block can only be \
                 deleted if not assigned to any resource.",
                self.id,
                status.as_str()
            ))),
        }
    }
}

impl TransitionKind {
    fn running_status(self) -> BlockStatus {
        match self {
            TransitionKind::Assign => BlockStatus::Assigning,
            TransitionKind::Unassign => BlockStatus::Unassigning,
        }
    }

    fn end_status(self) -> BlockStatus {
        match self {
            TransitionKind::Assign => BlockStatus::Assigned,
            TransitionKind::Unassign => BlockStatus::Unassigned,
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use jiff::SignedDuration;

    use super::*;

    const NET: &str = "60473c2509268bc77fd06d29";

    fn at(ms: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_millis(ms)
    }

    fn block() -> IpBlock {
        IpBlock {
            id: "6047127fed34ecc3ba8402d2".into(),
            location: "PHX".into(),
            cidr: "198.19.0.8/29".parse().unwrap(),
            description: None,
            tags: Vec::new(),
            status: BlockStatus::Unassigned,
            assigned_network: None,
            transition: None,
            created_on: at(0),
        }
    }

    #[test]
    fn attach_goes_assigning_then_assigned_naming_the_network_throughout() {
        let mut b = block();
        b.begin_assign(NET, at(0), at(300)).unwrap();
        assert_eq!(b.status_at(at(299)), BlockStatus::Assigning);
        assert!(b.is_busy_at(at(299)));
        assert_eq!(b.network_at(at(1)), Some(NET));
        assert_eq!(b.status_at(at(300)), BlockStatus::Assigned);
        assert!(!b.is_busy_at(at(300)));
        assert_eq!(b.network_at(at(300)), Some(NET));
    }

    #[test]
    fn detach_goes_unassigning_then_unassigned_and_forgets_the_network_at_the_end() {
        let mut b = block();
        b.begin_assign(NET, at(0), at(10)).unwrap();
        b.begin_unassign(NET, at(20), at(50)).unwrap();
        assert_eq!(b.status_at(at(30)), BlockStatus::Unassigning);
        assert_eq!(b.network_at(at(30)), Some(NET));
        assert_eq!(b.status_at(at(50)), BlockStatus::Unassigned);
        assert_eq!(b.network_at(at(50)), None);
        b.settle(at(60));
        assert_eq!(
            (b.status, b.transition, b.assigned_network.as_deref()),
            (BlockStatus::Unassigned, None, None)
        );
    }

    #[test]
    fn settle_keeps_a_running_transition_and_folds_a_finished_one() {
        let mut b = block();
        b.begin_assign(NET, at(0), at(10)).unwrap();
        b.settle(at(5));
        assert!(b.transition.is_some());
        b.settle(at(10));
        assert_eq!((b.status, b.transition), (BlockStatus::Assigned, None));
    }

    #[test]
    fn refusals_are_conflicts() {
        let mut b = block();
        let conflict = |r: ApiResult<()>| assert_eq!(r.unwrap_err().status, StatusCode::CONFLICT);
        conflict(b.begin_unassign(NET, at(0), at(10)));
        b.begin_assign(NET, at(0), at(10)).unwrap();
        conflict(b.begin_assign(NET, at(1), at(11)));
        conflict(b.begin_unassign(NET, at(5), at(15)));
        conflict(b.check_deletable(at(5)));
        conflict(b.check_deletable(at(20)));
        conflict(b.begin_unassign("another", at(20), at(30)));
        b.begin_unassign(NET, at(20), at(30)).unwrap();
        conflict(b.check_deletable(at(25)));
        conflict(b.begin_assign(NET, at(25), at(35)));
        b.check_deletable(at(30)).unwrap();
        b.begin_assign(NET, at(30), at(40)).unwrap();
    }
}
