//! The PhoenixNAP impact table (impact.md "PhoenixNAP IP blocks for kube-vip", research
//! phoenixnap.md §6-§7): one row per kind of change, to be reviewed line by line against
//! impact.md. The diff decides which row a change is; this table alone decides its class.

use skyplan_core::model::{Downtime, Impact};
use skyplan_core::provider::impact_table::Row;

skyplan_core::provider::impact_table::changes!(
    ServiceAdded,
    BlockAdopted,
    AddressCleared,
    ServiceRemoved,
    ServiceReleased,
    ServiceRenamed,
    ServiceTypeChanged,
    ServiceDeleted,
    ClusterRebuilt,
    ReleasedByController,
    LocationChanged,
    NetworkChanged,
    AddressSetByHand,
    BlockRetagged,
    BlockDetached,
    BlockDeleted,
);

/// kube-vip stops announcing while `loadBalancerIP` is empty and starts again once it is set:
/// skyplan writes it back in the same run (the CCM would at its next sync, 5 s backoff).
const ANNOUNCE_GAP: Downtime = Downtime::new(0, 10);
/// The Service's address changes: clients of the old one lose it at once, the new one answers
/// once the new block is attached (asynchronous: seconds to a few minutes) and announced.
const NEW_ADDRESS: Downtime = Downtime::new(30, 180);
/// The CCM errors on every sync and the Service is unreachable or stuck until someone fixes
/// the block or the config by hand.
const BROKEN: Downtime = Downtime::new(60, 300);

use Change::*;
use Impact::{Forbidden, Minimal, None as NoImpact, PoolRecreate};

#[rustfmt::skip]
pub const RULES: &[Row<Change>] = &[
    Row { change: ServiceAdded, what: "Service added", happens: "a /29 block is created with the CCM's four tags (usage, cluster, serviceNamespace, serviceName), attached to the public network, and the Service gets type LoadBalancer and spec.loadBalancerIP = the block's third address; the CCM finds the block and adopts it", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: BlockAdopted, what: "a block with the CCM's tags already exists (made by the CCM, or by an apply whose state was lost)", happens: "the block is taken over instead of making a second one (the CCM would error on two); attached and written to the Service if it is not yet", impact: NoImpact, downtime: Downtime::ZERO },
    Row { change: AddressCleared, what: "spec.loadBalancerIP cleared or rewritten by a full replace", happens: "the same block and address come back: skyplan writes the address again (the CCM would at its next sync); kube-vip does not announce it in between", impact: Minimal, downtime: ANNOUNCE_GAP },
    Row { change: ServiceRemoved, what: "load balancer removed from the config", happens: "releasing its block would lose the Service's address for good (a new block has another address); nothing is done: pass --allow-delete ADDR to release it", impact: Forbidden, downtime: NEW_ADDRESS },
    Row { change: ServiceReleased, what: "load balancer deleted (--allow-delete)", happens: "released in the CCM's order: the Service's address cleared (type back to what it was), the block tagged delete=true, detached from the public network, deleted once unassigned; the address is gone for good", impact: Forbidden, downtime: NEW_ADDRESS },
    Row { change: ServiceRenamed, what: "service (namespace/name) changed", happens: "the block's tags name the old Service, which loses it: the old block is released and the new Service gets a new block and a new address", impact: PoolRecreate, downtime: NEW_ADDRESS },
    Row { change: ServiceTypeChanged, what: "Service type no longer LoadBalancer", happens: "the CCM releases the block (address cleared, tagged delete=true, its reaper detaches and deletes it): skyplan makes a new block, a new address", impact: PoolRecreate, downtime: NEW_ADDRESS },
    Row { change: ServiceDeleted, what: "Service deleted from the cluster", happens: "the CCM released the block; a Service created again with the same name gets a new block and a new address", impact: PoolRecreate, downtime: NEW_ADDRESS },
    Row { change: ClusterRebuilt, what: "cluster rebuilt (new kube-system UID) or another cluster", happens: "the block's cluster tag no longer matches, so the CCM would never find it: it is released and a new block (new address) is made", impact: PoolRecreate, downtime: NEW_ADDRESS },
    Row { change: ReleasedByController, what: "block released by the CCM (tagged delete=true)", happens: "the CCM let the block go (its Service was deleted or changed type): its reaper deletes it, and the Service gets a new block and a new address", impact: PoolRecreate, downtime: NEW_ADDRESS },
    Row { change: LocationChanged, what: "location changed", happens: "a block cannot move: the CCM keeps the old block, and a new one in another location cannot be attached to the location's public network — the Service would error forever with an orphan block; use --replace to release the block and make a new one (new address)", impact: Forbidden, downtime: BROKEN },
    Row { change: NetworkChanged, what: "public network changed", happens: "the CCM's GetLoadBalancer errors (\"is assigned to network A instead of expected B\") on every sync and deleting the Service hangs on its finalizer; use --replace to release the block and make a new one on the new network (new address)", impact: Forbidden, downtime: BROKEN },
    Row { change: AddressSetByHand, what: "spec.loadBalancerIP set by hand to another address", happens: "outside the block the CCM errors forever (\"does not contain IP\") and deletion hangs; skyplan will not overwrite an address someone set — clear it, or use --replace", impact: Forbidden, downtime: BROKEN },
    Row { change: BlockRetagged, what: "block re-tagged by hand (one of the CCM's tags removed or changed)", happens: "the CCM no longer finds the block: it makes a second one but keeps the old address, and errors forever (\"does not contain IP\"); use --replace to release it and make a new block (new address)", impact: Forbidden, downtime: BROKEN },
    Row { change: BlockDetached, what: "block detached from the public network by hand", happens: "the address no longer reaches the network and the CCM errors forever (\"has no assigned resource type\"); use --replace to release it and make a new block (new address), or attach it again yourself", impact: Forbidden, downtime: BROKEN },
    Row { change: BlockDeleted, what: "block deleted by hand", happens: "the address is gone; the CCM makes a new block but keeps the old address on the Service and errors forever; use --replace to make a new block (new address)", impact: Forbidden, downtime: BROKEN },
];

pub fn rule(change: Change) -> &'static Row<Change> {
    skyplan_core::provider::impact_table::row(RULES, change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_change_has_one_row() {
        skyplan_core::provider::impact_table::assert_one_row_each(RULES, Change::ALL);
    }

    #[test]
    fn classes_are_impact_md_s() {
        let class = |c| rule(c).impact;
        assert_eq!(class(ServiceAdded), Impact::None);
        assert_eq!(class(AddressCleared), Impact::Minimal);
        for change in [ServiceRenamed, ServiceTypeChanged, ClusterRebuilt] {
            assert_eq!(class(change), Impact::PoolRecreate, "{change:?}");
        }
        // impact.md's deletion rule: the address is lost, with or without --allow-delete.
        for change in [
            ServiceRemoved,
            ServiceReleased,
            LocationChanged,
            NetworkChanged,
            AddressSetByHand,
            BlockRetagged,
            BlockDetached,
        ] {
            assert_eq!(class(change), Impact::Forbidden, "{change:?}");
        }
    }
}
