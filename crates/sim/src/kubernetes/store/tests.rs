use jiff::Timestamp;
use serde_json::{json, Value};

use super::*;
use crate::kubernetes::patch::PatchType;
use crate::kubernetes::status::ApiResult;
use crate::kubernetes::world::World;
use crate::kubernetes::{default_fresh_nodes, FreshNode};

fn world() -> World {
    World::fresh(&default_fresh_nodes(), (1, 33), Timestamp::UNIX_EPOCH)
}

fn node_key(name: &str) -> ObjectKey {
    ObjectKey::cluster(name)
}

fn service_key(name: &str) -> ObjectKey {
    ObjectKey::namespaced("default", name)
}

const NOW: WriteOptions = WriteOptions { dry_run: false };
const DRY: WriteOptions = WriteOptions { dry_run: true };

fn shop() -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "shop"},
           "spec": {"type": "LoadBalancer",
                    "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}})
}

fn create_shop(world: &mut World) -> Value {
    create(world, Kind::Service, Some("default"), shop(), NOW).unwrap()
}

fn rv(object: &Value) -> String {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn patch_node(world: &mut World, patch_type: PatchType, body: Value) -> ApiResult<Written> {
    patch(
        world,
        Kind::Node,
        &node_key("node-1"),
        patch_type,
        &body,
        Part::Main,
        NOW,
    )
}

#[test]
fn create_sets_identity_and_the_next_resource_version() {
    let mut world = world();
    let before = world.resource_version;
    let service = create_shop(&mut world);
    assert_eq!(rv(&service), (before + 1).to_string());
    assert_eq!(service["kind"], "Service");
    assert_eq!(service["metadata"]["namespace"], "default");
    assert!(service["metadata"]["uid"]
        .as_str()
        .is_some_and(|u| u.len() == 36));
    assert!(service["metadata"]["creationTimestamp"].is_string());
    let stored = &world.services["default/shop"];
    assert!(
        stored.get("kind").is_none(),
        "stored without apiVersion/kind"
    );
}

#[test]
fn create_twice_is_already_exists_and_a_missing_namespace_is_not_found() {
    let mut world = world();
    create_shop(&mut world);
    let again = create(&mut world, Kind::Service, Some("default"), shop(), NOW).unwrap_err();
    assert_eq!((again.code.as_u16(), again.reason), (409, "AlreadyExists"));
    let nowhere = create(&mut world, Kind::Service, Some("nowhere"), shop(), NOW).unwrap_err();
    assert_eq!(nowhere.message, "namespaces \"nowhere\" not found");
}

#[test]
fn a_body_that_does_not_decode_is_a_bad_request() {
    let mut world = world();
    let mut bad = shop();
    bad["spec"]["ports"][0]["port"] = json!("eighty");
    let error = create(&mut world, Kind::Service, Some("default"), bad, NOW).unwrap_err();
    assert_eq!((error.code.as_u16(), error.reason), (400, "BadRequest"));
    let node = json!({"kind": "Node", "metadata": {"name": "x"}});
    let error = create(&mut world, Kind::Service, Some("default"), node, NOW).unwrap_err();
    assert_eq!(error.code.as_u16(), 400);
}

#[test]
fn update_with_a_stale_resource_version_conflicts_and_without_one_does_not() {
    let mut world = world();
    let node = get(&world, Kind::Node, &node_key("node-1")).unwrap();
    let mut labelled = node.clone();
    labelled["metadata"]["labels"]["tier"] = json!("web");
    let first = update(
        &mut world,
        Kind::Node,
        &node_key("node-1"),
        labelled.clone(),
        Part::Main,
        NOW,
    )
    .unwrap();
    assert_ne!(rv(&first), rv(&node));
    labelled["metadata"]["labels"]["tier"] = json!("db");
    let stale = update(
        &mut world,
        Kind::Node,
        &node_key("node-1"),
        labelled.clone(),
        Part::Main,
        NOW,
    )
    .unwrap_err();
    assert_eq!((stale.code.as_u16(), stale.reason), (409, "Conflict"));
    labelled["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let unconditional = update(
        &mut world,
        Kind::Node,
        &node_key("node-1"),
        labelled,
        Part::Main,
        NOW,
    )
    .unwrap();
    assert_eq!(unconditional["metadata"]["labels"]["tier"], "db");
}

#[test]
fn an_update_that_changes_nothing_keeps_the_resource_version() {
    let mut world = world();
    let node = get(&world, Kind::Node, &node_key("node-2")).unwrap();
    let before = world.resource_version;
    let same = update(
        &mut world,
        Kind::Node,
        &node_key("node-2"),
        node.clone(),
        Part::Main,
        NOW,
    )
    .unwrap();
    assert_eq!(rv(&same), rv(&node));
    assert_eq!(world.resource_version, before);
}

#[test]
fn a_patch_conflicts_only_when_it_carries_a_stale_resource_version() {
    let mut world = world();
    let node = get(&world, Kind::Node, &node_key("node-1")).unwrap();
    let taint = json!({"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}],},
                       "metadata": {"resourceVersion": rv(&node)}});
    let tainted = patch_node(&mut world, PatchType::Strategic, taint.clone()).unwrap();
    assert_eq!(tainted.object["spec"]["taints"][0]["key"], "a");
    let stale = patch_node(&mut world, PatchType::Strategic, taint).unwrap_err();
    assert_eq!(stale.reason, "Conflict");
    let blind = json!({"metadata": {"labels": {"x": "y"}}});
    assert!(patch_node(&mut world, PatchType::Merge, blind).is_ok());
}

#[test]
fn patches_of_each_type_reach_the_stored_object() {
    let mut world = world();
    let json_patch = json!([{"op": "add", "path": "/metadata/labels/tier", "value": "web"}]);
    patch_node(&mut world, PatchType::Json, json_patch).unwrap();
    patch_node(
        &mut world,
        PatchType::Merge,
        json!({"metadata": {"labels": {"zone": "a"}}}),
    )
    .unwrap();
    let stored = &world.nodes["node-1"]["metadata"]["labels"];
    assert_eq!(
        (stored["tier"].as_str(), stored["zone"].as_str()),
        (Some("web"), Some("a"))
    );
    let failing = json!([{"op": "remove", "path": "/spec/nothing"}]);
    let error = patch_node(&mut world, PatchType::Json, failing).unwrap_err();
    assert_eq!(error.code.as_u16(), 422);
    let missing = patch(
        &mut world,
        Kind::Node,
        &node_key("node-9"),
        PatchType::Merge,
        &json!({}),
        Part::Main,
        NOW,
    )
    .unwrap_err();
    assert_eq!(missing.message, "nodes \"node-9\" not found");
}

#[test]
fn a_main_write_keeps_status_and_a_status_write_changes_only_status() {
    let mut world = world();
    let status_patch = json!({"status": {"addresses": [{"type": "ExternalIP",
        "address": "5.1.2.3"}]}, "spec": {"unschedulable": true}});
    let key = node_key("node-1");
    let written = patch(
        &mut world,
        Kind::Node,
        &key,
        PatchType::Strategic,
        &status_patch,
        Part::Status,
        NOW,
    )
    .unwrap();
    let addresses = written.object["status"]["addresses"].as_array().unwrap();
    assert_eq!(addresses.len(), 3, "merged by type: {addresses:?}");
    assert!(written.object["spec"].get("unschedulable").is_none());
    let main = patch(
        &mut world,
        Kind::Node,
        &key,
        PatchType::Merge,
        &status_patch,
        Part::Main,
        NOW,
    )
    .unwrap();
    assert_eq!(main.object["spec"]["unschedulable"], true);
    assert_eq!(
        main.object["status"]["addresses"].as_array().unwrap().len(),
        3
    );
}

#[test]
fn dry_run_answers_without_storing() {
    let mut world = world();
    let before = world.clone();
    let answer = create(&mut world, Kind::Service, Some("default"), shop(), DRY).unwrap();
    assert_eq!(answer["spec"]["ports"][0]["nodePort"], 30000);
    patch(
        &mut world,
        Kind::Node,
        &node_key("node-1"),
        PatchType::Merge,
        &json!({"metadata": {"labels": {"x": "y"}}}),
        Part::Main,
        DRY,
    )
    .unwrap();
    delete(
        &mut world,
        Kind::Node,
        &node_key("node-1"),
        &Value::Null,
        DRY,
    )
    .unwrap();
    assert_eq!(world, before);
}

#[test]
fn apply_creates_a_missing_object_then_merges_into_it_keeping_node_ports() {
    let mut world = world();
    let key = service_key("shop");
    let created = patch(
        &mut world,
        Kind::Service,
        &key,
        PatchType::Apply,
        &shop(),
        Part::Main,
        NOW,
    )
    .unwrap();
    assert!(created.created);
    let node_port = created.object["spec"]["ports"][0]["nodePort"].clone();
    let mut again = shop();
    again["spec"]["ports"][0]["targetPort"] = json!(9090);
    let applied = patch(
        &mut world,
        Kind::Service,
        &key,
        PatchType::Apply,
        &again,
        Part::Main,
        NOW,
    )
    .unwrap();
    assert!(!applied.created);
    assert_eq!(applied.object["spec"]["ports"][0]["nodePort"], node_port);
    assert_eq!(applied.object["spec"]["ports"][0]["targetPort"], 9090);
}

#[test]
fn a_merge_patch_renaming_a_port_gets_a_new_node_port_renumbering_keeps_it() {
    let mut world = world();
    let created = create_shop(&mut world);
    let old = created["spec"]["ports"][0]["nodePort"].clone();
    let key = service_key("shop");
    let renumber = json!({"spec": {"ports": [{"name": "http", "port": 8080}]}});
    let renumbered = patch(
        &mut world,
        Kind::Service,
        &key,
        PatchType::Merge,
        &renumber,
        Part::Main,
        NOW,
    )
    .unwrap();
    assert_eq!(renumbered.object["spec"]["ports"][0]["nodePort"], old);
    let rename = json!({"spec": {"ports": [{"name": "web", "port": 8080}]}});
    let renamed = patch(
        &mut world,
        Kind::Service,
        &key,
        PatchType::Merge,
        &rename,
        Part::Main,
        NOW,
    )
    .unwrap();
    assert_ne!(renamed.object["spec"]["ports"][0]["nodePort"], old);
}

#[test]
fn a_used_node_port_is_invalid() {
    let mut world = world();
    create_shop(&mut world);
    let mut other = shop();
    other["metadata"]["name"] = json!("other");
    other["spec"]["ports"][0]["nodePort"] = json!(30000);
    let error = create(&mut world, Kind::Service, Some("default"), other, NOW).unwrap_err();
    assert_eq!((error.code.as_u16(), error.reason), (422, "Invalid"));
    assert_eq!(
        error.message,
        "Service \"other\" is invalid: spec.ports[0].nodePort: Invalid value: 30000: provided \
         port is already allocated"
    );
}

#[test]
fn list_pages_with_limit_and_continue_and_filters_by_label() {
    let nodes: Vec<FreshNode> = (1..=5)
        .map(|i| FreshNode::ready(format!("n{i}"), format!("10.0.0.{i}")))
        .collect();
    let mut world = World::fresh(&nodes, (1, 33), Timestamp::UNIX_EPOCH);
    let page = |world: &World, token: Option<String>| {
        let query = ListQuery {
            limit: Some(2),
            continue_token: token,
            ..ListQuery::default()
        };
        list(world, Kind::Node, None, &query).unwrap()
    };
    let mut names = Vec::new();
    let mut token = None;
    loop {
        let list = page(&world, token);
        assert_eq!(list["kind"], "NodeList");
        names.extend(
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].clone()),
        );
        match list["metadata"]["continue"].as_str() {
            Some(next) => token = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(names, ["n1", "n2", "n3", "n4", "n5"]);
    let first = page(&world, None);
    assert_eq!(first["metadata"]["remainingItemCount"], 3);
    world.nodes.get_mut("n2").unwrap()["metadata"]["labels"]["tier"] = json!("web");
    let query = ListQuery {
        label_selector: Some("tier=web".into()),
        ..ListQuery::default()
    };
    let web = list(&world, Kind::Node, None, &query).unwrap();
    assert_eq!(web["items"].as_array().unwrap().len(), 1);
    let bad = ListQuery {
        label_selector: Some("tier in (web".into()),
        ..ListQuery::default()
    };
    assert_eq!(
        list(&world, Kind::Node, None, &bad)
            .unwrap_err()
            .code
            .as_u16(),
        400
    );
}

#[test]
fn a_service_with_a_finalizer_is_marked_then_goes_with_its_last_finalizer() {
    let mut world = world();
    let mut service = shop();
    service["metadata"]["finalizers"] = json!(["service.kubernetes.io/load-balancer-cleanup"]);
    create(&mut world, Kind::Service, Some("default"), service, NOW).unwrap();
    let key = service_key("shop");
    let marked = delete(&mut world, Kind::Service, &key, &Value::Null, NOW).unwrap();
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert!(world.services.contains_key("default/shop"));
    let release = json!({"metadata": {"$deleteFromPrimitiveList/finalizers":
        ["service.kubernetes.io/load-balancer-cleanup"]}});
    patch(
        &mut world,
        Kind::Service,
        &key,
        PatchType::Strategic,
        &release,
        Part::Main,
        NOW,
    )
    .unwrap();
    assert!(!world.services.contains_key("default/shop"));
}

#[test]
fn delete_checks_preconditions_and_protected_namespaces() {
    let mut world = world();
    create_shop(&mut world);
    let key = service_key("shop");
    let stale = json!({"preconditions": {"resourceVersion": "1"}});
    let error = delete(&mut world, Kind::Service, &key, &stale, NOW).unwrap_err();
    assert_eq!(error.reason, "Conflict");
    let deleted = delete(&mut world, Kind::Service, &key, &Value::Null, NOW).unwrap();
    assert_eq!(deleted["metadata"]["name"], "shop");
    let gone = delete(&mut world, Kind::Service, &key, &Value::Null, NOW).unwrap_err();
    assert_eq!(gone.code.as_u16(), 404);
    let protected = delete(
        &mut world,
        Kind::Namespace,
        &ObjectKey::cluster("kube-system"),
        &Value::Null,
        NOW,
    )
    .unwrap_err();
    assert_eq!(protected.code.as_u16(), 403);
}
