//! One LoadBalancer Service through the changes of impact.md's CloudStack controller-mode
//! column: what the controller calls, and what the simulated cloud then holds.

use serde_json::json;

use super::{port, Harness};

/// `web` on port 80 → 30080, converged; the harness and the rule.
async fn converged() -> (Harness, serde_json::Value) {
    let mut h = Harness::start().await;
    h.create_service(json!([port(80, 30080)]), json!({}), json!({}))
        .await;
    h.passes(2).await;
    let rule = h.rule("-tcp-80").await;
    (h, rule)
}

fn position(actions: &[String], prefix: &str) -> usize {
    actions
        .iter()
        .position(|a| a.starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} in {actions:?}"))
}

#[tokio::test]
async fn a_new_service_gets_an_ip_a_rule_its_members_and_a_firewall_rule() {
    let (h, rule) = converged().await;
    let service = h.service().await;
    let uid = service["metadata"]["uid"]
        .as_str()
        .unwrap()
        .replace('-', "");
    let base = format!("a{}", &uid[..31]);
    assert_eq!(rule["name"], format!("{base}-tcp-80"));
    assert_eq!(rule["publicport"], "80");
    assert_eq!(rule["privateport"], "30080");
    assert_eq!(rule["algorithm"], "roundrobin");
    assert_eq!(rule["protocol"], "tcp");
    assert_eq!(rule["cidrlist"], "0.0.0.0/0");
    assert_eq!(h.members(&rule).await, ["web-1", "web-2"]);
    // openfirewall=false: the only firewall rule is the CCM's own.
    assert_eq!(h.firewall().await, [("tcp".into(), 80, "0.0.0.0/0".into())]);
    let ip = rule["publicip"].as_str().unwrap();
    assert_eq!(h.allocated_ips().await, [ip]);
    let ingress = service["status"]["loadBalancer"]["ingress"]
        .as_array()
        .unwrap();
    assert_eq!(ingress.len(), 1);
    assert_eq!(ingress[0]["ip"], ip);
    assert_eq!(
        service["metadata"]["finalizers"],
        json!(["service.kubernetes.io/load-balancer-cleanup"])
    );
    let record = h.record().await;
    assert_eq!(record.trigger, "ensure");
    assert_eq!(record.error, None);
    let actions = &record.actions;
    assert_eq!(actions[0], format!("associate ip {ip}"));
    assert!(position(actions, "create rule") < position(actions, "assign"));
    assert!(position(actions, "assign") < position(actions, "create firewall rule tcp/80"));
    // Converged: another pass does nothing.
    let before = h.history().len();
    let mut h = h;
    h.passes(1).await;
    assert_eq!(h.history().len(), before);
}

#[tokio::test]
async fn a_port_added_is_a_new_rule_and_the_others_are_untouched() {
    let (mut h, rule) = converged().await;
    h.merge_service(json!({"spec": {"ports": [port(80, 30080), port(443, 30443)]}}))
        .await;
    h.passes(1).await;
    assert_eq!(h.rule("-tcp-80").await["id"], rule["id"]);
    let new = h.rule("-tcp-443").await;
    assert_eq!(new["publicip"], rule["publicip"]);
    assert_eq!(h.members(&new).await, ["web-1", "web-2"]);
    assert_eq!(h.firewall().await.len(), 2);
    let actions = h.record().await.actions;
    assert!(
        actions.iter().all(|a| !a.contains("-tcp-80")),
        "{actions:?}"
    );
}

#[tokio::test]
async fn a_port_removed_loses_its_rule_and_firewall_rule() {
    let (mut h, _) = converged().await;
    h.merge_service(json!({"spec": {"ports": [port(80, 30080), port(443, 30443)]}}))
        .await;
    h.passes(1).await;
    h.merge_service(json!({"spec": {"ports": [port(80, 30080)]}}))
        .await;
    h.passes(1).await;
    assert_eq!(h.rules().await.len(), 1);
    assert_eq!(h.firewall().await, [("tcp".into(), 80, "0.0.0.0/0".into())]);
    let actions = h.record().await.actions;
    assert!(position(&actions, "delete firewall rule tcp/443") < position(&actions, "delete rule"));
}

#[tokio::test]
async fn session_affinity_updates_the_algorithm_in_place() {
    let (mut h, rule) = converged().await;
    h.merge_service(json!({"spec": {"sessionAffinity": "ClientIP"}}))
        .await;
    h.passes(1).await;
    let after = h.rule("-tcp-80").await;
    assert_eq!(after["id"], rule["id"]);
    assert_eq!(after["algorithm"], "source");
    let actions = h.record().await.actions;
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert!(actions[0].starts_with("update rule") && actions[0].contains("algorithm=source"));
}

#[tokio::test]
async fn a_public_port_change_creates_the_new_rule_before_deleting_the_old() {
    let (mut h, rule) = converged().await;
    h.merge_service(json!({"spec": {"ports": [port(8080, 30080)]}}))
        .await;
    h.passes(1).await;
    let rules = h.rules().await;
    assert_eq!(rules.len(), 1);
    let new = h.rule("-tcp-8080").await;
    assert_ne!(new["id"], rule["id"]);
    assert_eq!(new["publicip"], rule["publicip"]);
    assert_eq!(
        h.firewall().await,
        [("tcp".into(), 8080, "0.0.0.0/0".into())]
    );
    let actions = h.record().await.actions;
    assert!(position(&actions, "create rule") < position(&actions, "delete rule"));
}

#[tokio::test]
async fn a_node_port_change_deletes_then_creates_the_rule() {
    let (mut h, rule) = converged().await;
    h.merge_service(json!({"spec": {"ports": [port(80, 30081)]}}))
        .await;
    h.passes(1).await;
    let new = h.rule("-tcp-80").await;
    assert_ne!(new["id"], rule["id"]);
    assert_eq!(new["privateport"], "30081");
    assert_eq!(h.members(&new).await, ["web-1", "web-2"]);
    let actions = h.record().await.actions;
    assert!(position(&actions, "delete rule") < position(&actions, "create rule"));
    // The firewall rule on the unchanged public port is kept.
    assert!(
        actions.iter().all(|a| !a.contains("firewall")),
        "{actions:?}"
    );
}

#[tokio::test]
async fn tcp_to_tcp_proxy_conflicts_with_537_every_pass_and_the_old_rule_stays() {
    let (mut h, rule) = converged().await;
    let proxy = "service.beta.kubernetes.io/cloudstack-load-balancer-proxy-protocol";
    h.merge_service(json!({"metadata": {"annotations": {proxy: "true"}}}))
        .await;
    h.passes(4).await;
    assert_eq!(h.controller.failures("default/web"), 4);
    let rules = h.rules().await;
    assert_eq!(rules.len(), 1);
    assert_eq!(rules[0]["id"], rule["id"]);
    assert_eq!(rules[0]["protocol"], "tcp");
    let error = h.last_error().await.expect("a last error");
    assert!(
        error.contains("537") && error.contains("conflicts with rule"),
        "{error}"
    );
    assert_eq!(h.record().await.error.as_deref(), Some(error.as_str()));
    // Removing the old rule by hand is the way out: the next pass converges.
    h.cloud
        .run(
            "deleteLoadBalancerRule",
            &[("id", rule["id"].as_str().unwrap().to_owned())],
        )
        .await
        .unwrap();
    h.passes(1).await;
    assert_eq!(h.rule("-tcp-proxy-80").await["protocol"], "tcp-proxy");
    assert_eq!(h.last_error().await, None);
}

#[tokio::test]
async fn a_changed_load_balancer_ip_is_ignored_once_rules_exist() {
    let (mut h, rule) = converged().await;
    let before = h.history().len();
    h.merge_service(json!({"spec": {"loadBalancerIP": "198.51.100.200"}}))
        .await;
    h.passes(2).await;
    assert_eq!(h.rule("-tcp-80").await["publicip"], rule["publicip"]);
    let history = h.history();
    assert_eq!(history.len(), before + 1);
    let quiet = history.last().unwrap();
    assert_eq!(quiet.trigger, "ensure");
    assert_eq!(quiet.actions, Vec::<String>::new());
    assert_eq!(quiet.error, None);
}

#[tokio::test]
async fn a_requested_ip_is_associated_and_annotated() {
    let mut h = Harness::start().await;
    h.create_service(
        json!([port(80, 30080)]),
        json!({}),
        json!({"loadBalancerIP": "198.51.100.77"}),
    )
    .await;
    h.passes(2).await;
    assert_eq!(h.rule("-tcp-80").await["publicip"], "198.51.100.77");
    let service = h.service().await;
    assert_eq!(
        service["metadata"]["annotations"]
            ["service.beta.kubernetes.io/cloudstack-load-balancer-ip-associated-by-controller"],
        "true"
    );
    // Deleted: the address it associated goes back too.
    h.kube.delete(super::SERVICE).await.unwrap();
    h.passes(2).await;
    assert!(h.rules().await.is_empty());
    assert!(h.allocated_ips().await.is_empty());
}

#[tokio::test]
async fn a_deleted_service_loses_rules_firewall_ip_and_finalizer() {
    let (mut h, _) = converged().await;
    h.kube.delete(super::SERVICE).await.unwrap();
    h.passes(2).await;
    assert!(h.rules().await.is_empty());
    assert!(h.firewall().await.is_empty());
    assert!(h.allocated_ips().await.is_empty());
    assert!(h.kube.get(super::SERVICE).await.unwrap_err().is_not_found());
    let last = h.history().last().cloned().unwrap();
    assert_eq!(last.trigger, "delete");
    assert!(last
        .actions
        .iter()
        .any(|a| a.starts_with("disassociate ip")));
}

#[tokio::test]
async fn a_type_change_away_from_load_balancer_cleans_up() {
    let (mut h, _) = converged().await;
    h.merge_service(json!({"spec": {"type": "ClusterIP", "ports": [{"name": "p80", "port": 80, "protocol": "TCP"}]}}))
        .await;
    h.passes(2).await;
    assert!(h.rules().await.is_empty());
    assert!(h.allocated_ips().await.is_empty());
    let finalizers = h.service().await["metadata"]["finalizers"].clone();
    assert!(
        finalizers.as_array().is_none_or(Vec::is_empty),
        "{finalizers}"
    );
}

#[tokio::test]
async fn source_ranges_replace_the_firewall_rule_and_cidrs_update_the_rule() {
    let (mut h, rule) = converged().await;
    let cidrs = "service.beta.kubernetes.io/cloudstack-load-balancer-source-cidrs";
    h.merge_service(json!({
        "metadata": {"annotations": {cidrs: "10.0.0.0/8"}},
        "spec": {"loadBalancerSourceRanges": ["192.168.0.0/16"]},
    }))
    .await;
    h.passes(1).await;
    let after = h.rule("-tcp-80").await;
    assert_eq!(after["id"], rule["id"]);
    assert_eq!(after["cidrlist"], "10.0.0.0/8");
    assert_eq!(
        h.firewall().await,
        [("tcp".into(), 80, "192.168.0.0/16".into())]
    );
    let actions = h.record().await.actions;
    assert!(
        position(&actions, "delete firewall rule") < position(&actions, "create firewall rule")
    );
}

#[tokio::test]
async fn below_4_22_a_cidr_change_recreates_the_rule() {
    let mut h = Harness::with_version("4.20.1.0").await;
    h.create_service(json!([port(80, 30080)]), json!({}), json!({}))
        .await;
    h.passes(2).await;
    let rule = h.rule("-tcp-80").await;
    let cidrs = "service.beta.kubernetes.io/cloudstack-load-balancer-source-cidrs";
    h.merge_service(json!({"metadata": {"annotations": {cidrs: "10.0.0.0/8"}}}))
        .await;
    h.passes(1).await;
    let after = h.rule("-tcp-80").await;
    assert_ne!(after["id"], rule["id"]);
    assert_eq!(after["cidrlist"], "10.0.0.0/8");
}

#[tokio::test]
async fn a_node_leaving_the_set_is_removed_from_every_rule() {
    let (mut h, rule) = converged().await;
    let label = json!({"metadata": {"labels": {"node.kubernetes.io/exclude-from-external-load-balancers": "true"}}});
    h.kube
        .patch(
            "/api/v1/nodes/web-2",
            crate::controllers::http::MERGE_PATCH,
            &label,
        )
        .await
        .unwrap();
    h.passes(1).await;
    assert_eq!(h.members(&rule).await, ["web-1"]);
    let last = h.history().last().cloned().unwrap();
    assert_eq!(last.trigger, "update");
    assert_eq!(last.actions.len(), 1);
    assert!(last.actions[0].starts_with("remove "), "{:?}", last.actions);
}

#[tokio::test]
async fn a_udp_port_is_refused_by_the_router_and_the_new_address_goes_back() {
    let mut h = Harness::start().await;
    let udp = json!({"name": "dns", "protocol": "UDP", "port": 5353, "nodePort": 30053});
    h.create_service(json!([udp]), json!({}), json!({})).await;
    h.passes(2).await;
    assert!(h.rules().await.is_empty());
    // The deferred release of an address this Ensure associated for itself.
    assert!(h.allocated_ips().await.is_empty());
    let error = h.last_error().await.expect("a last error");
    assert!(
        error.contains("431") && error.contains("cannot support this rule"),
        "{error}"
    );
    assert_eq!(h.controller.failures("default/web"), 2);
    let actions = h.record().await.actions;
    assert!(
        actions.last().unwrap().starts_with("disassociate ip"),
        "{actions:?}"
    );
}
