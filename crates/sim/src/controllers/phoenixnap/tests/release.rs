//! Releasing a Service's block: the address cleared, the block re-tagged `delete=true`, the
//! reaper detaching and then deleting it.

use serde_json::json;

use super::{ingress_ip, tag_pairs, Harness};
use crate::phoenixnap::DEFAULT_PUBLIC_NETWORK_ID;

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

/// Leak path (b) of research §6.5: the address is cleared, then the re-tagging fails; the retry
/// finds no address, so Get says "no load balancer", the finalizer goes and the block stays
/// tagged for the Service. A new Service of the same name adopts it: the same address.
#[tokio::test]
async fn a_failed_retag_leaks_the_block_to_the_next_service_of_that_name() {
    let mut h = Harness::with_faults("tags-put-fail=1").await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    let service = h
        .passes_until("published", |s| {
            ingress_ip(s).is_some_and(|ip| !ip.is_empty())
        })
        .await;
    let ip = super::load_balancer_ip(&service).to_owned();
    h.kube.delete(super::SERVICE).await.unwrap();
    h.passes(1).await;
    let error = h.record().await.error.unwrap();
    assert!(
        error.starts_with("failed to delete load balancer: unable to add 'delete' tag"),
        "{error}"
    );
    assert_eq!(super::load_balancer_ip(&h.service().await), "");
    for _ in 0..5 {
        h.passes(1).await;
        tokio::time::sleep(super::PASS).await;
    }
    let gone = h.kube.get(super::SERVICE).await.unwrap_err();
    assert!(gone.is_not_found(), "{gone}");
    let blocks = h.blocks().await;
    assert_eq!(blocks.len(), 1);
    assert!(!blocks[0].is_marked_deleted(), "{blocks:?}");

    h.create_service(json!({})).await;
    let service = h
        .passes_until("published", |s| {
            ingress_ip(s).is_some_and(|ip| !ip.is_empty())
        })
        .await;
    assert_eq!(super::load_balancer_ip(&service), ip);
    assert_eq!(h.blocks().await.len(), 1);
}

/// Research §7 row 7: type LoadBalancer → ClusterIP releases the block; back to LoadBalancer
/// is a new block and a new address.
#[tokio::test]
async fn a_type_change_releases_the_block_and_switching_back_gets_a_new_one() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    let service = h
        .passes_until("published", |s| {
            ingress_ip(s).is_some_and(|ip| !ip.is_empty())
        })
        .await;
    let first_ip = super::load_balancer_ip(&service).to_owned();
    let first = h.blocks().await[0].id.clone();

    h.merge_service(json!({"spec": {"type": "ClusterIP"}}))
        .await;
    h.passes(1).await;
    let service = h.service().await;
    assert_eq!(super::load_balancer_ip(&service), "");
    assert_eq!(ingress_ip(&service), None, "{service}");
    assert!(service["metadata"]["finalizers"]
        .as_array()
        .is_none_or(|f| f.is_empty()));
    assert!(h.block(&first).await.is_marked_deleted());

    h.merge_service(json!({"spec": {"type": "LoadBalancer"}}))
        .await;
    let service = h
        .passes_until("published again", |s| {
            ingress_ip(s).is_some_and(|ip| !ip.is_empty())
        })
        .await;
    assert_ne!(super::load_balancer_ip(&service), first_ip);
    let blocks = h.blocks().await;
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks.iter().filter(|b| b.is_marked_deleted()).count(), 1);
}
