//! Releasing a Service's block: the address cleared, the block re-tagged `delete=true`, the
//! reaper detaching and then deleting it.

use serde_json::json;

use super::{ingress_ip, tag_pairs, Harness};
use crate::sim::phoenixnap::DEFAULT_PUBLIC_NETWORK_ID;

#[tokio::test]
async fn a_deleted_service_loses_its_address_and_the_reaper_frees_the_block() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes_until("published", |s| {
        ingress_ip(s).is_some_and(|ip| !ip.is_empty())
    })
    .await;
    let block = h.settled(&h.blocks().await[0].id).await;
    assert!(h.controller.reap().await.is_empty(), "nothing to reap yet");

    h.kube
        .delete("/api/v1/namespaces/default/services/web")
        .await
        .unwrap();
    h.passes(1).await;
    let gone = h.kube.get(super::SERVICE).await.unwrap_err();
    assert!(gone.is_not_found(), "the finalizer was removed: {gone}");
    let record = h.history().last().cloned().unwrap();
    assert_eq!(record.trigger, "delete");
    assert_eq!(
        record.actions,
        [
            "clear loadBalancerIP".to_owned(),
            format!("tag ip block {} {} delete=true", block.id, block.cidr)
        ]
    );
    let released = h.block(&block.id).await;
    let cluster_id = h.cluster_id().await;
    assert_eq!(
        tag_pairs(&released.tags),
        [
            format!("cluster={cluster_id}"),
            "delete=true".into(),
            "usage=cloud-provider-phoenixnap-auto".into()
        ]
    );
    assert_eq!(
        released.status, "assigned",
        "nothing detached by the delete"
    );

    assert_eq!(
        h.controller.reap().await,
        [format!(
            "detach ip block {} from network {DEFAULT_PUBLIC_NETWORK_ID}",
            block.id
        )]
    );
    assert_eq!(h.settled(&block.id).await.status, "unassigned");
    assert_eq!(
        h.controller.reap().await,
        [format!("delete ip block {}", block.id)]
    );
    assert!(h.blocks().await.is_empty());
}

#[tokio::test]
async fn the_reaper_detaches_only_the_first_of_several_released_blocks() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    for name in ["a", "b"] {
        let body = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}});
        h.kube
            .post("/api/v1/namespaces/default/services", &body)
            .await
            .unwrap();
    }
    // The network is BUSY while the first attach runs, so the second Service's attach is
    // refused (409) and retried with backoff: wait until both blocks are assigned.
    let mut blocks = Vec::new();
    for _ in 0..200 {
        h.passes(1).await;
        blocks = h.blocks().await;
        if blocks.len() == 2 && blocks.iter().all(|b| b.status == "assigned") {
            break;
        }
        tokio::time::sleep(super::PASS).await;
    }
    assert!(blocks.iter().all(|b| b.status == "assigned"), "{blocks:?}");
    for name in ["a", "b"] {
        h.kube
            .delete(&format!("/api/v1/namespaces/default/services/{name}"))
            .await
            .unwrap();
    }
    h.passes(1).await;
    let log = h.controller.reap().await;
    // Both blocks are assigned: both steps detach blocks[0]; the second is refused (409,
    // already unassigning) and only logged.
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].starts_with("detach ip block "), "{log:?}");
    let first = log[0].split(' ').nth(3).unwrap().to_owned();
    assert!(log[1].contains(&first), "{log:?}");
    let statuses: Vec<String> = {
        let mut s = Vec::new();
        for block in &blocks {
            s.push(h.settled(&block.id).await.status);
        }
        s
    };
    let unassigned = statuses.iter().filter(|s| *s == "unassigned").count();
    assert_eq!(unassigned, 1, "{statuses:?}");
}
