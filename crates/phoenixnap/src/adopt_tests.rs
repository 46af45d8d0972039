//! Discovery and generated config: each block classified (who made it, the Service it serves,
//! whether a target manages it), the TOML written for one, every refusal, and the round trip —
//! generated config loaded through the config stage, imported, then planned on the same live
//! state: nothing to do.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::Service;
use serde_json::json;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::Action;
use skyplan_core::provider::discover::{Discovered, Generated, Maker, ServiceRef, Unmanaged};
use skyplan_core::provider::Target;
use skyplan_core::state::ResourceState;

use super::*;
use crate::api::{IpBlock, NetworkBlock, PublicNetwork, TagAssignment};
use crate::diff::PROVIDER;
use crate::live::{Inventory, Live, SurveyedCluster};

const UID: &str = "5c1b7a0e-uid";
/// The provider and the cluster `prod`, as a config has them beside what is generated.
const BASE: &str = "[provider.phoenixnap]\nendpoint = \"embedded\"\nlocation = \"PHX\"\n\n\
                    [cluster.prod]\nprovider = \"kubernetes\"\nendpoint = \"embedded\"\n";

/// A config as the config stage reads it with the Kubernetes and PhoenixNAP sections.
fn load(text: &str) -> skyplan_core::config::Config {
    skyplan_core::config::load_texts(
        Path::new("cfg"),
        &[("skyplan.toml", text)],
        &[
            &skyplan_kubernetes::KubernetesConfig,
            &crate::PhoenixnapConfig,
        ],
    )
    .unwrap_or_else(|e| panic!("{text}\n{:?}", e.lines()))
}
const NET: &str = "net-phx";

fn tags(pairs: &[(&str, &str)]) -> Vec<TagAssignment> {
    pairs
        .iter()
        .map(|(name, value)| TagAssignment {
            name: name.to_string(),
            value: Some(value.to_string()),
        })
        .collect()
}

fn ccm_tags(uid: &str, name: &str) -> Vec<TagAssignment> {
    tags(&[
        ("usage", ccm::USAGE_VALUE),
        ("cluster", uid),
        ("serviceNamespace", "default"),
        ("serviceName", name),
    ])
}

/// A /29 assigned to k8s-public in PHX, with `tags`.
fn block(id: &str, cidr: &str, tags: Vec<TagAssignment>) -> IpBlock {
    IpBlock {
        id: id.into(),
        location: "PHX".into(),
        cidr_block_size: "/29".into(),
        cidr: cidr.into(),
        status: "assigned".into(),
        assigned_resource_id: Some(NET.into()),
        assigned_resource_type: Some("public network".into()),
        description: None,
        tags,
    }
}

/// A LoadBalancer Service `default/NAME` with `loadBalancerIP` = `ip`.
fn service(name: &str, ip: Option<&str>) -> Service {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "7"},
        "spec": {"type": "LoadBalancer", "loadBalancerIP": ip,
                 "ports": [{"port": 80, "protocol": "TCP"}]},
        "status": {"loadBalancer": {"ingress": [{"ip": ip}]}},
    }))
    .unwrap()
}

fn network(id: &str, name: &str, location: &str) -> PublicNetwork {
    PublicNetwork {
        id: id.into(),
        name: name.into(),
        location: location.into(),
        status: Some("READY".into()),
        ip_blocks: vec![],
    }
}

/// The survey of an account holding `blocks` beside the cluster `prod` holding `services`.
fn surveyed(blocks: Vec<IpBlock>, services: Vec<Service>) -> Live {
    let mut networks = vec![
        network(NET, "k8s-public", "PHX"),
        network("net-ash", "ash-public", "ASH"),
    ];
    networks[0].ip_blocks = blocks
        .iter()
        .map(|b| NetworkBlock { id: b.id.clone() })
        .collect();
    Live {
        inventory: Inventory {
            tag_names: ccm::TAG_NAMES.iter().map(|n| n.to_string()).collect(),
            blocks,
            networks,
        },
        clusters: BTreeMap::new(),
        services: BTreeMap::new(),
        survey: Some(vec![SurveyedCluster {
            address: Address::new(ResourceKind::Cluster, "prod"),
            uid: UID.into(),
            services,
        }]),
    }
}

fn lb(name: &str) -> Address {
    Address::new(ResourceKind::LoadBalancer, name)
}

/// What `import` and `generate` start from: the object's ID and nothing else.
fn claimed(id: &str) -> ResourceState {
    ResourceState {
        provider: PROVIDER.into(),
        id: id.into(),
        ids: serde_json::Value::Null,
        attributes: serde_json::Value::Null,
        depends_on: vec![],
    }
}

fn found(live: &Live, targets: &[Target<'_>]) -> Discovered {
    let specs = crate::provider::targets_specs(targets);
    discover(targets, &specs, live)
}

fn named<'a>(found: &'a Discovered, cidr: &str) -> &'a Unmanaged {
    found
        .unmanaged
        .iter()
        .find(|u| u.name == cidr)
        .unwrap_or_else(|| panic!("{cidr} not listed: {:#?}", found.unmanaged))
}

#[test]
fn each_block_is_listed_with_who_made_it_and_the_service_it_serves() {
    let mut skyplans = block("b-sky", "198.51.100.16/29", ccm_tags(UID, "old"));
    skyplans.description = Some("skyplan load-balancer.old".into());
    let mut by_hand = block("b-hand", "198.51.100.24/29", vec![]);
    by_hand.description = Some("Legacy ingress".into());
    by_hand.assigned_resource_id = None;
    by_hand.assigned_resource_type = None;
    by_hand.status = "unassigned".into();
    let live = surveyed(
        vec![
            block("b-ccm", "198.51.100.8/29", ccm_tags(UID, "web")),
            skyplans,
            by_hand,
            block("b-far", "198.51.100.32/29", ccm_tags("other-uid", "web")),
        ],
        vec![service("web", Some("198.51.100.10"))],
    );
    let found = found(&live, &[]);
    assert_eq!(found.unmanaged.len(), 4, "{:#?}", found.unmanaged);
    assert!(found.bound.is_empty());

    let ccm = named(&found, "198.51.100.8/29");
    assert_eq!(ccm.made_by, Maker::Controller("PhoenixNAP CCM".into()));
    assert_eq!(ccm.id, "b-ccm");
    assert_eq!(ccm.address, lb("web"));
    assert_eq!(ccm.cluster, Some("cluster.prod".parse().unwrap()));
    let web = ServiceRef {
        cluster: "cluster.prod".parse().unwrap(),
        service: "default/web".into(),
    };
    assert_eq!(ccm.service, Some(web));
    assert_eq!(
        ccm.summary,
        "198.51.100.8/29 in PHX, assigned to public network k8s-public; \
         PhoenixNAP CCM's tags: Service default/web of cluster.prod; Service address 198.51.100.10"
    );
    assert!(ccm.importable);

    let sky = named(&found, "198.51.100.16/29");
    assert_eq!(
        sky.made_by,
        Maker::Skyplan("load-balancer.old".parse().unwrap())
    );
    assert_eq!(sky.address, lb("old"), "its address of old");
    assert!(
        sky.summary.ends_with("Service default/old does not exist"),
        "{}",
        sky.summary
    );

    let hand = named(&found, "198.51.100.24/29");
    assert_eq!(hand.made_by, Maker::Unknown);
    assert_eq!(hand.address.name, "Legacy ingress", "made valid by core");
    assert_eq!((&hand.cluster, &hand.service), (&None, &None));
    assert_eq!(
        hand.summary,
        "198.51.100.24/29 in PHX, unassigned; no Service's tags"
    );

    let far = named(&found, "198.51.100.32/29");
    assert_eq!(far.made_by, Maker::Controller("PhoenixNAP CCM".into()));
    assert_eq!((&far.cluster, &far.service), (&None, &None));
    assert!(
        far.summary
            .contains("Service default/web of cluster other-uid (no connected cluster has this kube-system UID)"),
        "{}",
        far.summary
    );
}

#[test]
fn a_block_being_released_is_listed_but_not_importable() {
    let released = block(
        "b-rel",
        "198.51.100.8/29",
        tags(&[
            ("usage", ccm::USAGE_VALUE),
            ("cluster", UID),
            ("delete", "true"),
        ]),
    );
    let live = surveyed(vec![released], vec![]);
    let found = found(&live, &[]);
    let object = named(&found, "198.51.100.8/29");
    assert!(!object.importable);
    assert_eq!(object.made_by, Maker::Controller("PhoenixNAP CCM".into()));
    assert!(
        object.summary.contains(
            "released by the PhoenixNAP CCM for cluster.prod (tagged delete=true): its reaper detaches and deletes it, so it cannot be imported"
        ),
        "{}",
        object.summary
    );
    let target = lb("gone");
    let entry = claimed("b-rel");
    let generated = generate(
        &Target {
            address: &target,
            resource: None,
            prior: Some(&entry),
        },
        &live,
        "PHX",
    )
    .unwrap();
    assert!(
        matches!(&generated, Generated::Refused { attribute, .. } if attribute == "delete"),
        "{generated:?}"
    );
}

#[test]
fn blocks_a_target_manages_are_not_listed() {
    let mut marked = block("b-marked", "198.51.100.16/29", vec![]);
    marked.description = Some("skyplan load-balancer.edge".into());
    let live = surveyed(
        vec![
            block("b-state", "198.51.100.8/29", vec![]),
            marked,
            block("b-bound", "198.51.100.24/29", ccm_tags(UID, "api")),
            block("b-free", "198.51.100.32/29", ccm_tags(UID, "web")),
        ],
        vec![],
    );
    let config = load(&format!(
        "{}\n[load-balancer.api]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/api\"\npublic-network = \"k8s-public\"\n",
        BASE
    ));
    let (state, edge) = (lb("state"), lb("edge"));
    let entry = claimed("b-state");
    let api = config.resource(&lb("api")).unwrap();
    let targets = [
        Target {
            address: &state,
            resource: None,
            prior: Some(&entry),
        },
        Target {
            address: &edge,
            resource: None,
            prior: None,
        },
        Target {
            address: &api.address,
            resource: Some(api),
            prior: None,
        },
    ];
    let found = found(&live, &targets);
    let ids: Vec<&str> = found.unmanaged.iter().map(|u| u.id.as_str()).collect();
    assert_eq!(ids, ["b-free"]);
    assert_eq!(
        found.bound,
        [ServiceRef {
            cluster: "cluster.prod".parse().unwrap(),
            service: "default/api".into(),
        }]
    );
}

/// The config generated for block `id` as `load-balancer.NAME`.
fn generated(live: &Live, name: &str, id: &str, default_location: &str) -> Generated {
    let address = lb(name);
    let entry = claimed(id);
    let target = Target {
        address: &address,
        resource: None,
        prior: Some(&entry),
    };
    generate(&target, live, default_location).unwrap()
}

fn config_text(generated: Generated) -> String {
    match generated {
        Generated::Config { text, .. } => text,
        refused => panic!("refused: {refused:?}"),
    }
}

#[test]
fn the_config_says_the_binding_and_the_network_and_only_a_location_other_than_the_default() {
    let live = surveyed(
        vec![block("b-ccm", "198.51.100.8/29", ccm_tags(UID, "web"))],
        vec![service("web", Some("198.51.100.10"))],
    );
    assert_eq!(
        config_text(generated(&live, "web", "b-ccm", "PHX")),
        "[load-balancer.web]\nprovider = \"phoenixnap\"\ncluster = \"prod\"\n\
         service = \"default/web\"\npublic-network = \"k8s-public\"\n"
    );
    let text = config_text(generated(&live, "web", "b-ccm", "ASH"));
    assert!(text.ends_with("location = \"PHX\"\n"), "{text}");
}

#[test]
fn a_network_whose_name_is_not_unique_is_named_by_its_id() {
    let mut live = surveyed(
        vec![block("b-ccm", "198.51.100.8/29", ccm_tags(UID, "web"))],
        vec![service("web", Some("198.51.100.10"))],
    );
    live.inventory.networks[1].name = "k8s-public".into();
    let text = config_text(generated(&live, "web", "b-ccm", "PHX"));
    assert!(text.contains("public-network = \"net-phx\"\n"), "{text}");
}

/// The refusal for the block `b` in `live`: its attribute, and its reason contains `why`.
fn assert_refused(live: &Live, attribute: &str, why: &str) {
    match generated(live, "web", "b", "PHX") {
        Generated::Refused {
            attribute: said,
            reason,
        } => {
            assert_eq!(said, attribute, "{reason}");
            assert!(reason.contains(why), "{reason}");
        }
        config => panic!("expected a refusal at {attribute}: {config:?}"),
    }
}

fn web_block() -> IpBlock {
    block("b", "198.51.100.8/29", ccm_tags(UID, "web"))
}

fn web_service() -> Service {
    service("web", Some("198.51.100.10"))
}

#[test]
fn what_the_config_cannot_say_is_refused_with_its_attribute() {
    let mut big = web_block();
    big.cidr = "198.51.100.0/28".into();
    big.cidr_block_size = "/28".into();
    assert_refused(
        &surveyed(vec![big], vec![web_service()]),
        "cidr-block-size",
        "the block is a /28",
    );

    let bare = block("b", "198.51.100.8/29", vec![]);
    assert_refused(
        &surveyed(vec![bare], vec![web_service()]),
        "service",
        "tied to no Service",
    );

    let no_service = block(
        "b",
        "198.51.100.8/29",
        tags(&[("usage", ccm::USAGE_VALUE), ("cluster", UID)]),
    );
    assert_refused(
        &surveyed(vec![no_service], vec![web_service()]),
        "service",
        "no serviceNamespace and serviceName",
    );

    let elsewhere = block("b", "198.51.100.8/29", ccm_tags("other-uid", "web"));
    assert_refused(
        &surveyed(vec![elsewhere], vec![web_service()]),
        "cluster",
        "tagged for cluster other-uid",
    );

    assert_refused(
        &surveyed(vec![web_block()], vec![]),
        "service",
        "Service default/web, which cluster.prod does not have",
    );

    let mut detached = web_block();
    detached.assigned_resource_id = None;
    detached.assigned_resource_type = None;
    detached.status = "unassigned".into();
    let mut live = surveyed(vec![detached], vec![web_service()]);
    live.inventory.networks[0].ip_blocks.clear();
    assert_refused(&live, "public-network", "attached to no public network");

    let mut on_server = web_block();
    on_server.assigned_resource_type = Some("server".into());
    assert_refused(
        &surveyed(vec![on_server], vec![web_service()]),
        "public-network",
        "assigned to a server",
    );

    let mut far = web_block();
    far.location = "MARS".into();
    assert_refused(
        &surveyed(vec![far], vec![web_service()]),
        "location",
        "MARS",
    );
}

#[test]
fn tags_that_contradict_the_service_are_refused() {
    assert_refused(
        &surveyed(vec![web_block()], vec![service("web", Some("203.0.113.7"))]),
        "service.loadBalancerIP",
        "loadBalancerIP is 203.0.113.7, not the block's third address 198.51.100.10",
    );
    assert_refused(
        &surveyed(vec![web_block()], vec![service("web", None)]),
        "service.loadBalancerIP",
        "no loadBalancerIP yet",
    );

    let mut cluster_ip = web_service();
    cluster_ip.spec.as_mut().unwrap().type_ = Some("ClusterIP".into());
    assert_refused(
        &surveyed(vec![web_block()], vec![cluster_ip]),
        "service.type",
        "of type ClusterIP",
    );

    let mut classy = web_service();
    classy.spec.as_mut().unwrap().load_balancer_class = Some("example.com/lb".into());
    assert_refused(
        &surveyed(vec![web_block()], vec![classy]),
        "service",
        "loadBalancerClass `example.com/lb`",
    );

    let twin = block("b-twin", "198.51.100.16/29", ccm_tags(UID, "web"));
    assert_refused(
        &surveyed(vec![web_block(), twin], vec![web_service()]),
        "service",
        "(b-twin)",
    );
}

/// generate → the config stage → import → plan, on the survey the config was generated from:
/// a no-op, no attribute, no operation.
fn round_trip(live: &mut Live, id: &str, provider_location: &str) -> String {
    let address = lb("adopted");
    let entry = claimed(id);
    let adopting = Target {
        address: &address,
        resource: None,
        prior: Some(&entry),
    };
    let text = config_text(generate(&adopting, live, provider_location).unwrap());
    // What the survey gives a block being adopted (`PhoenixnapProvider::survey_targets`).
    let clusters = live.survey.clone().unwrap();
    let (facts, service) = adopted_facts(id, &live.inventory, &clusters).unwrap();
    live.clusters.insert(address.clone(), facts);
    live.services.insert(address.clone(), service.unwrap());

    let base = BASE.replace("\"PHX\"", &format!("\"{provider_location}\""));
    let config = load(&format!("{base}\n{text}"));
    let resource = config.resource(&address).expect("the generated table");
    let target = Target {
        address: &address,
        resource: Some(resource),
        prior: Some(&entry),
    };
    let state = crate::provider::import(&target, live).unwrap();
    assert_eq!(state.id, id);
    let planned = Target {
        address: &address,
        resource: Some(resource),
        prior: Some(&state),
    };
    let change = crate::provider::plan(&planned, live, false).unwrap();
    assert_eq!(change.action, Action::NoOp, "{text}\n{change:#?}");
    assert!(change.attributes.is_empty(), "{change:#?}");
    assert!(change.operations.is_empty(), "{change:#?}");
    text
}

#[test]
fn a_generated_config_imported_plans_nothing() {
    let mut live = surveyed(
        vec![
            block("b-ccm", "198.51.100.8/29", ccm_tags(UID, "web")),
            block("b-other", "198.51.100.16/29", ccm_tags(UID, "api")),
        ],
        vec![web_service(), service("api", Some("198.51.100.18"))],
    );
    round_trip(&mut live, "b-ccm", "PHX");
}

#[test]
fn a_block_outside_the_provider_s_location_round_trips_with_its_location() {
    let mut ash = web_block();
    ash.location = "ASH".into();
    ash.assigned_resource_id = Some("net-ash".into());
    let mut live = surveyed(vec![ash], vec![web_service()]);
    let text = round_trip(&mut live, "b", "PHX");
    assert!(
        text.contains("public-network = \"ash-public\"\nlocation = \"ASH\"\n"),
        "{text}"
    );
    let text = round_trip(&mut live, "b", "ASH");
    assert!(!text.contains("location"), "{text}");
}

#[test]
fn a_block_still_being_attached_round_trips_on_the_network_that_lists_it() {
    let mut attaching = web_block();
    attaching.assigned_resource_id = None;
    attaching.assigned_resource_type = None;
    attaching.status = "assigning".into();
    let mut live = surveyed(vec![attaching], vec![web_service()]);
    let text = round_trip(&mut live, "b", "PHX");
    assert!(text.contains("public-network = \"k8s-public\""), "{text}");
}
