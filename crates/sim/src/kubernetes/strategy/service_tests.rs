use serde_json::{json, Value};

use super::*;
use crate::kubernetes::status::FieldErrorKind;

fn lb(ports: Value) -> Value {
    json!({"metadata": {"name": "shop", "namespace": "default"},
           "spec": {"type": "LoadBalancer", "ports": ports}})
}

fn created(world: &World, mut service: Value) -> Value {
    prepare_create(world, "default/shop", &mut service).unwrap();
    service
}

fn node_ports(service: &Value) -> Vec<u64> {
    service["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["nodePort"].as_u64().unwrap())
        .collect()
}

fn world_with(key: &str, service: &Value) -> World {
    let mut world = World::default();
    world.services.insert(key.into(), service.clone());
    world
}

#[test]
fn defaults_are_the_apiservers() {
    let service = created(&World::default(), lb(json!([{"port": 80}])));
    let spec = &service["spec"];
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
    assert_eq!(spec["ipFamilies"], json!(["IPv4"]));
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert_eq!(spec["ports"][0]["protocol"], "TCP");
    assert_eq!(spec["ports"][0]["targetPort"], 80);
    assert_eq!(spec["clusterIP"], "10.96.0.2");
    assert_eq!(spec["clusterIPs"], json!(["10.96.0.2"]));
    assert_eq!(service["status"], json!({"loadBalancer": {}}));
}

#[test]
fn a_cluster_ip_service_gets_no_node_ports_or_traffic_policy() {
    let mut service = json!({"metadata": {"name": "db"}, "spec": {"ports": [{"port": 5432}]}});
    prepare_create(&World::default(), "default/db", &mut service).unwrap();
    assert_eq!(service["spec"]["type"], "ClusterIP");
    assert!(service["spec"]["ports"][0].get("nodePort").is_none());
    assert!(service["spec"].get("externalTrafficPolicy").is_none());
}

#[test]
fn node_ports_are_allocated_unique_across_services() {
    let first = created(
        &World::default(),
        lb(json!([{"name": "http", "port": 80}, {"name": "https", "port": 443}])),
    );
    assert_eq!(node_ports(&first), [30000, 30001]);
    let world = world_with("default/other", &first);
    let second = created(&world, lb(json!([{"port": 80}])));
    assert_eq!(node_ports(&second), [30002]);
    assert_eq!(second["spec"]["clusterIP"], "10.96.0.3");
}

#[test]
fn a_requested_node_port_in_use_is_refused() {
    let first = created(
        &World::default(),
        lb(json!([{"port": 80, "nodePort": 30080}])),
    );
    let world = world_with("default/other", &first);
    let mut second = lb(json!([{"port": 80, "nodePort": 30080}]));
    let errors = prepare_create(&world, "default/shop", &mut second).unwrap_err();
    assert_eq!(errors[0].field, "spec.ports[0].nodePort");
    assert_eq!(
        errors[0].to_string(),
        "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"
    );
    let mut outside = lb(json!([{"port": 80, "nodePort": 80}]));
    let errors = prepare_create(&World::default(), "default/shop", &mut outside).unwrap_err();
    assert!(errors[0].to_string().contains("not in the valid range"));
}

#[test]
fn local_traffic_policy_gets_a_health_check_node_port() {
    let mut service = lb(json!([{"port": 80}]));
    service["spec"]["externalTrafficPolicy"] = json!("Local");
    let service = created(&World::default(), service);
    assert_eq!(node_ports(&service), [30000]);
    assert_eq!(service["spec"]["healthCheckNodePort"], 30001);
}

#[test]
fn an_update_keeps_node_ports_by_port_name() {
    let old = created(
        &World::default(),
        lb(json!([{"name": "http", "port": 80}, {"name": "https", "port": 443}])),
    );
    let world = world_with("default/shop", &old);
    // A PUT or merge patch that omits the node ports: http renumbered, https renamed.
    let mut new = lb(json!([{"name": "http", "port": 8080}, {"name": "tls", "port": 443}]));
    prepare_update(&world, "default/shop", &old, &mut new).unwrap();
    let kept = node_ports(&old)[0];
    assert_eq!(node_ports(&new)[0], kept, "renumbered, same name: kept");
    assert!(
        !node_ports(&old).contains(&node_ports(&new)[1]),
        "renamed: a new node port"
    );
    assert_eq!(new["spec"]["clusterIP"], old["spec"]["clusterIP"]);
}

#[test]
fn an_update_keeps_the_health_check_port_and_its_own_requested_ports() {
    let mut local = lb(json!([{"port": 80}]));
    local["spec"]["externalTrafficPolicy"] = json!("Local");
    let old = created(&World::default(), local.clone());
    let world = world_with("default/shop", &old);
    let mut new = local;
    new["spec"]["ports"][0]["nodePort"] = old["spec"]["ports"][0]["nodePort"].clone();
    prepare_update(&world, "default/shop", &old, &mut new).unwrap();
    assert_eq!(
        new["spec"]["healthCheckNodePort"],
        old["spec"]["healthCheckNodePort"]
    );
    assert_eq!(node_ports(&new), node_ports(&old));
}

#[test]
fn back_to_cluster_ip_drops_the_node_ports_and_releases_them() {
    let old = created(&World::default(), lb(json!([{"port": 80}])));
    let world = world_with("default/shop", &old);
    let mut new = old.clone();
    new["spec"]["type"] = json!("ClusterIP");
    prepare_update(&world, "default/shop", &old, &mut new).unwrap();
    assert!(new["spec"]["ports"][0].get("nodePort").is_none());
    assert!(new["spec"].get("externalTrafficPolicy").is_none());
    assert!(new["spec"].get("allocateLoadBalancerNodePorts").is_none());
    let released = world_with("default/shop", &new);
    assert!(alloc::node_ports_in_use(&released, "").is_empty());
}

#[test]
fn validation_reports_every_bad_field() {
    let mut service = json!({"metadata": {"name": "Shop"}, "spec": {"type": "Magic",
        "ports": [{"port": 0}, {"port": 70000, "protocol": "ICMP"}]}});
    let errors = prepare_create(&World::default(), "default/Shop", &mut service).unwrap_err();
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "metadata.name",
            "spec.type",
            "spec.ports[0].name",
            "spec.ports[0].port",
            // Defaulted from the port, and as invalid as the port.
            "spec.ports[0].targetPort",
            "spec.ports[1].name",
            "spec.ports[1].port",
            "spec.ports[1].protocol",
            "spec.ports[1].targetPort",
        ]
    );
    assert!(matches!(
        errors[1].kind,
        FieldErrorKind::NotSupported { .. }
    ));
}

#[test]
fn a_node_port_on_a_cluster_ip_service_is_forbidden() {
    let mut service = json!({"metadata": {"name": "db"},
        "spec": {"ports": [{"port": 1, "nodePort": 30000}]}});
    let errors = prepare_create(&World::default(), "default/db", &mut service).unwrap_err();
    assert_eq!(
        errors[0].to_string(),
        "spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"
    );
}

#[test]
fn ingress_ips_default_to_vip_mode() {
    let mut service = created(&World::default(), lb(json!([{"port": 80}])));
    service["status"]["loadBalancer"]["ingress"] =
        json!([{"ip": "5.102.1.1"}, {"ip": "5.102.1.2", "ipMode": "Proxy"}, {"hostname": "x"}]);
    prepare_status_update(&World::default(), &mut service).unwrap();
    assert_eq!(
        service["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "5.102.1.1", "ipMode": "VIP"}, {"ip": "5.102.1.2", "ipMode": "Proxy"},
               {"hostname": "x"}])
    );
}

/// As kube-apiserver v1.28.4 answers a status patch of an ingress with and without ipMode.
#[test]
fn before_v1_30_ingress_ips_have_no_mode() {
    let world = World {
        version: Some((1, 28)),
        ..World::default()
    };
    let mut service = created(&world, lb(json!([{"port": 80}])));
    service["status"]["loadBalancer"]["ingress"] =
        json!([{"ip": "5.102.1.1"}, {"ip": "5.102.1.2", "ipMode": "Proxy"}]);
    prepare_status_update(&world, &mut service).unwrap();
    assert_eq!(
        service["status"]["loadBalancer"]["ingress"],
        json!([{"ip": "5.102.1.1"}, {"ip": "5.102.1.2"}])
    );
    let newest = World {
        version: Some((1, 30)),
        ..World::default()
    };
    prepare_status_update(&newest, &mut service).unwrap();
    assert_eq!(
        service["status"]["loadBalancer"]["ingress"][0]["ipMode"],
        "VIP"
    );
}
