//! LoadBalancer Services: a block per Service, adopted when it exists, kept when the address
//! is cleared, and the errors the CCM never gets out of.

use serde_json::json;

use crate::controllers::http::MERGE_PATCH;

use super::super::balancer::NIL_IMPLEMENTOR_PANIC;
use super::super::blocks::service_address;
use super::{ingress_ip, load_balancer_ip, tag_pairs, Harness};
use crate::phoenixnap::{ASH_PUBLIC_NETWORK_ID, DEFAULT_PUBLIC_NETWORK_ID};

fn four_tags(cluster_id: &str) -> Vec<String> {
    let mut tags = vec![
        format!("cluster={cluster_id}"),
        "serviceName=web".to_owned(),
        "serviceNamespace=default".to_owned(),
        "usage=cloud-provider-phoenixnap-auto".to_owned(),
    ];
    tags.sort();
    tags
}

#[tokio::test]
async fn a_new_service_gets_a_tagged_attached_block_and_its_third_address() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes(1).await;

    let blocks = h.blocks().await;
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    let block = &blocks[0];
    assert_eq!(tag_pairs(&block.tags), four_tags(&h.cluster_id().await));
    assert_eq!(block.cidr.split('/').nth(1), Some("29"));
    let ip = service_address(&block.cidr).unwrap();
    let service = h.service().await;
    assert_eq!(load_balancer_ip(&service), ip);
    // The first Ensure's bug: the status carries an empty address.
    assert_eq!(ingress_ip(&service), Some(""));
    let record = h.record().await;
    assert_eq!(record.error, None);
    assert_eq!(
        record.actions,
        [
            "create tag usage".to_owned(),
            "create tag cluster".into(),
            "create tag serviceNamespace".into(),
            "create tag serviceName".into(),
            "create tag delete".into(),
            format!("create ip block {} {} in PHX", block.id, block.cidr),
            format!(
                "attach ip block {} to network {DEFAULT_PUBLIC_NETWORK_ID}",
                block.cidr
            ),
            format!("set loadBalancerIP {ip}"),
        ]
    );

    // The CCM's own loadBalancerIP write brings the real address once the attach is done.
    let service = h
        .passes_until("published", |s| ingress_ip(s) == Some(ip.as_str()))
        .await;
    assert_eq!(load_balancer_ip(&service), ip);
    let block = h.settled(&block.id).await;
    assert_eq!(block.status, "assigned");
    assert_eq!(
        block.assigned_resource_id.as_deref(),
        Some(DEFAULT_PUBLIC_NETWORK_ID)
    );
    assert_eq!(h.blocks().await.len(), 1);
    assert!(h.service().await["metadata"]["finalizers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f == "service.kubernetes.io/load-balancer-cleanup"));
    assert_eq!(h.last_error().await, None);
}

/// What skyplan does: the block made, tagged and attached first, then the Service written
/// with type LoadBalancer and the block's third address. The CCM adopts it.
#[tokio::test]
async fn a_service_written_with_the_address_of_its_existing_block_is_adopted() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    let cluster_id = h.cluster_id().await;
    for name in ["usage", "cluster", "serviceNamespace", "serviceName"] {
        h.api
            .tags
            .post("/tags", &json!({"name": name, "isBillingTag": false}))
            .await
            .unwrap();
    }
    let body = json!({"location": "PHX", "cidrBlockSize": "/29", "tags": [
        {"name": "usage", "value": "cloud-provider-phoenixnap-auto"},
        {"name": "cluster", "value": cluster_id},
        {"name": "serviceNamespace", "value": "default"},
        {"name": "serviceName", "value": "web"},
    ]});
    let block = h.api.ips.post("/ip-blocks", &body).await.unwrap();
    let (id, cidr) = (
        block["id"].as_str().unwrap(),
        block["cidr"].as_str().unwrap(),
    );
    let attach = format!("/public-networks/{DEFAULT_PUBLIC_NETWORK_ID}/ip-blocks");
    h.api
        .networks
        .post(&attach, &json!({"id": id}))
        .await
        .unwrap();
    h.settled(id).await;
    let ip = service_address(cidr).unwrap();

    h.create_service(json!({"loadBalancerIP": ip})).await;
    h.passes(1).await;
    let service = h.service().await;
    assert_eq!(ingress_ip(&service), Some(ip.as_str()));
    assert_eq!(h.blocks().await.len(), 1);
    let history = h.history();
    assert_eq!(history.len(), 1, "{history:?}");
    assert!(history[0].actions.is_empty() && history[0].error.is_none());

    // Cleared (a full replace without the field): the same block, the same address back.
    h.merge_service(json!({"spec": {"loadBalancerIP": null}}))
        .await;
    let service = h
        .passes_until("given its address back", |s| load_balancer_ip(s) == ip)
        .await;
    assert_eq!(load_balancer_ip(&service), ip);
    assert_eq!(h.blocks().await.len(), 1);
    assert_eq!(
        h.record().await.actions,
        [format!("set loadBalancerIP {ip}")],
        "no block made, none attached"
    );
    h.passes_until("published", |s| ingress_ip(s) == Some(ip.as_str()))
        .await;
}

#[tokio::test]
async fn an_address_outside_the_block_is_an_error_forever() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes(1).await;
    h.settled(&h.blocks().await[0].id).await;
    h.merge_service(json!({"spec": {"loadBalancerIP": "203.0.113.50"}}))
        .await;
    h.passes(10).await;
    let record = h.record().await;
    let error = record.error.unwrap();
    assert!(
        error.starts_with("failed to ensure load balancer: block ")
            && error.ends_with("does not contain IP 203.0.113.50"),
        "{error}"
    );
    assert_eq!(h.last_error().await.as_deref(), Some(error.as_str()));
    assert!(h.controller.failures("default/web") >= 2);
    // Retried with backoff, recorded once.
    let failures = h.history().iter().filter(|r| r.error.is_some()).count();
    assert_eq!(failures, 1);
    assert_eq!(load_balancer_ip(&h.service().await), "203.0.113.50");
    assert_eq!(h.blocks().await.len(), 1);
}

#[tokio::test]
async fn another_network_in_the_config_fails_every_existing_service() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes(1).await;
    let block = h.settled(&h.blocks().await[0].id).await;
    h.passes_until("published", |s| {
        ingress_ip(s).is_some_and(|ip| !ip.is_empty())
    })
    .await;

    h.restart_with_load_balancer(&format!("kube-vip://{ASH_PUBLIC_NETWORK_ID}"));
    h.passes(2).await;
    let error = h.record().await.error.unwrap();
    assert!(
        error.ends_with(&format!(
            "block {} is assigned to network {DEFAULT_PUBLIC_NETWORK_ID} instead of expected \
             {ASH_PUBLIC_NETWORK_ID}",
            block.cidr
        )),
        "{error}"
    );
    assert_eq!(h.blocks().await.len(), 1);
}

#[tokio::test]
async fn a_node_without_provider_id_fails_the_update() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes_until("published", |s| {
        ingress_ip(s).is_some_and(|ip| !ip.is_empty())
    })
    .await;
    // A new node, registered without a providerID and without the cloud taint.
    let node = json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "node-4"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    h.kube.post("/api/v1/nodes", &node).await.unwrap();
    h.passes(1).await;
    let record = h.record().await;
    assert_eq!(record.trigger, "update");
    assert_eq!(
        record.error.as_deref(),
        Some("no provider ID given for node node-4, skipping")
    );
}

/// A scheme other than kube-vip leaves the implementor nil: the block is made, attached and
/// its address written before addService dereferences it (the real CCM panics there).
#[tokio::test]
async fn another_scheme_than_kube_vip_fails_after_the_block_is_made() {
    let mut h = Harness::start().await;
    h.restart_with_load_balancer(&format!("metallb://{DEFAULT_PUBLIC_NETWORK_ID}"));
    h.passes(1).await;
    h.create_service(json!({})).await;
    h.passes(1).await;
    let record = h.record().await;
    assert_eq!(
        record.error,
        Some(format!(
            "failed to ensure load balancer: failed to add service web: {NIL_IMPLEMENTOR_PANIC}"
        ))
    );
    assert!(record
        .actions
        .iter()
        .any(|a| a.starts_with("set loadBalancerIP")));
    assert_eq!(h.blocks().await.len(), 1);
    assert_eq!(super::ingress_ip(&h.service().await), None);
}

#[tokio::test]
async fn an_ensure_without_candidate_nodes_warns_but_still_gets_a_block() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    for name in ["node-1", "node-2", "node-3"] {
        let label = json!({"metadata": {"labels": {
            "node.kubernetes.io/exclude-from-external-load-balancers": "true"}}});
        h.kube
            .patch(&format!("/api/v1/nodes/{name}"), MERGE_PATCH, &label)
            .await
            .unwrap();
    }
    h.create_service(json!({})).await;
    h.passes(1).await;
    let record = h.record().await;
    assert_eq!(
        record.warnings,
        [super::super::controller::NO_NODES_WARNING.to_owned()]
    );
    assert_eq!(record.error, None);
    assert_eq!(h.blocks().await.len(), 1);
}

/// Research §7 row 6: a Service created with an address of its own and no block. The CCM makes
/// a block but never corrects the address (addService writes only an empty one): the status
/// keeps the empty address, and the next sync errors for good.
#[tokio::test]
async fn an_address_set_before_any_block_exists_is_never_corrected() {
    let mut h = Harness::start().await;
    h.passes(1).await;
    h.create_service(json!({"loadBalancerIP": "203.0.113.7"}))
        .await;
    h.passes(1).await;
    let record = h.record().await;
    assert_eq!(record.error, None);
    assert!(record
        .actions
        .iter()
        .all(|a| !a.starts_with("set loadBalancerIP")));
    let service = h.service().await;
    assert_eq!(super::load_balancer_ip(&service), "203.0.113.7");
    assert_eq!(ingress_ip(&service), Some(""));
    assert_eq!(h.blocks().await.len(), 1);

    // Nothing changed, nothing synced; an annotation change syncs it into the error.
    h.passes(3).await;
    assert_eq!(h.history().len(), 1);
    h.merge_service(json!({"metadata": {"annotations": {"team": "web"}}}))
        .await;
    h.passes(1).await;
    let error = h.record().await.error.unwrap();
    assert!(
        error.ends_with("does not contain IP 203.0.113.7"),
        "{error}"
    );
    assert_eq!(h.blocks().await.len(), 1, "no second block");
}
