//! The config generated for each kind of object, and what is refused.

use super::*;
use skyplan_core::provider::discover::Generated;

fn config(generated: Generated) -> String {
    match generated {
        Generated::Config { text, .. } => text,
        refused => panic!("expected a config: {refused:?}"),
    }
}

/// The refused attribute and the reason.
fn refused(generated: Generated) -> (String, String) {
    match generated {
        Generated::Refused { attribute, reason } => (attribute, reason),
        config => panic!("expected a refusal: {config:?}"),
    }
}

/// What generating `load-balancer.web` from `inventory` refuses: the attribute and why.
fn web_refused(inventory: Inventory) -> (String, String) {
    let live = surveyed_with(inventory, vec![]);
    refused(generate(
        &live,
        "load-balancer.web",
        "ip-web",
        &adopting(&[]),
    ))
}

#[test]
fn a_cks_cluster_is_written_by_catalog_names_with_the_defaults_left_out() {
    let text = config(generate(&surveyed(), "cluster.lab", "c1", &adopting(&[])));
    assert_eq!(
        text,
        "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\n\
         kubernetes-version = \"1.29.3\"\nworkers = 3\nservice-offering = \"Medium Instance\"\n"
    );
}

#[test]
fn a_cluster_under_another_address_keeps_its_name_and_a_given_network_is_written() {
    let mut inventory = account();
    let lab = &mut inventory.clusters[0];
    lab.networkid = Some("n1".into());
    lab.associatednetworkname = Some("k8s-net".into());
    lab.keypair = Some("ops".into());
    lab.autoscalingenabled = true;
    (lab.minsize, lab.maxsize) = (2, 5);
    lab.workerofferingid = Some("o-large".into());
    lab.state = "Stopped".into();
    let live = surveyed_with(inventory, vec![]);
    let text = config(generate(&live, "cluster.lab-2", "c1", &adopting(&[])));
    assert_eq!(
        text,
        "[cluster.lab-2]\nprovider = \"cloudstack\"\nname = \"lab\"\nzone = \"zone1\"\n\
         kubernetes-version = \"1.29.3\"\nworkers = 3\nservice-offering = \"Medium Instance\"\n\
         node-offerings = { worker = \"Large Instance\" }\nnetwork = \"k8s-net\"\n\
         keypair = \"ops\"\nautoscaling = { min = 2, max = 5 }\nstate = \"stopped\"\n"
    );
}

#[test]
fn a_cluster_in_alert_is_refused_at_its_state() {
    let mut inventory = account();
    inventory.clusters[0].state = "Alert".into();
    let live = surveyed_with(inventory, vec![]);
    let (attribute, reason) = refused(generate(&live, "cluster.lab", "c1", &adopting(&[])));
    assert_eq!(attribute, "state");
    assert!(reason.contains("Alert"), "{reason}");
}

#[test]
fn a_cluster_on_a_version_gone_from_the_catalog_is_refused() {
    let mut inventory = account();
    inventory.clusters[0].kubernetesversionid = "v-gone".into();
    let live = surveyed_with(inventory, vec![]);
    let (attribute, _) = refused(generate(&live, "cluster.lab", "c1", &adopting(&[])));
    assert_eq!(attribute, "kubernetes-version");
}

#[test]
fn hand_made_rules_are_written_with_their_ip_and_member_vms() {
    let text = config(generate(
        &surveyed(),
        "load-balancer.web",
        "ip-web",
        &adopting(&[]),
    ));
    assert_eq!(
        text,
        "[load-balancer.web]\nprovider = \"cloudstack\"\npublic-ip = \"203.0.113.10\"\n\
         members = [\"web-1\", \"web-2\"]\n\n\
         [[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n\n\
         [[load-balancer.web.ports]]\nport = 443\nnode-port = 30443\n"
    );
}

#[test]
fn rules_on_the_workers_of_a_cluster_adopted_with_them_name_the_cluster() {
    let both = adopting(&[("c1", "cluster.lab"), ("ip-edge", "load-balancer.edge")]);
    let text = config(generate(
        &surveyed(),
        "load-balancer.edge",
        "ip-edge",
        &both,
    ));
    assert_eq!(
        text,
        "[load-balancer.edge]\nprovider = \"cloudstack\"\npublic-ip = \"203.0.113.20\"\n\
         cluster = \"lab\"\nalgorithm = \"source\"\nfirewall-cidrs = [\"10.0.0.0/8\"]\n\n\
         [[load-balancer.edge.ports]]\nport = 80\nnode-port = 30080\n"
    );
}

#[test]
fn rules_on_the_workers_of_a_configured_cluster_name_it_unless_it_is_scaled() {
    let configured = with_cluster_target(surveyed(), crate::cluster::tests::spec());
    let edge = adopting(&[("ip-edge", "load-balancer.edge")]);
    let text = config(generate(
        &configured,
        "load-balancer.edge",
        "ip-edge",
        &edge,
    ));
    assert!(text.contains("cluster = \"lab\"\n"), "{text}");
    let mut scaled = crate::cluster::tests::spec();
    scaled.workers = 4;
    let scaled = with_cluster_target(surveyed(), scaled);
    let text = config(generate(&scaled, "load-balancer.edge", "ip-edge", &edge));
    assert!(
        text.contains("members = [\"lab-node-0\", \"lab-node-1\", \"lab-node-2\"]\n"),
        "{text}"
    );
}

#[test]
fn rules_that_differ_from_rule_to_rule_are_refused_at_the_key() {
    let mut inventory = account();
    inventory.rules[1].algorithm = "source".into();
    let (attribute, reason) = web_refused(inventory);
    assert_eq!(attribute, "algorithm");
    assert!(
        reason.contains("web-tcp-80") && reason.contains("web-tcp-443"),
        "{reason}"
    );
}

#[test]
fn rules_not_named_from_one_base_are_refused_at_the_name() {
    let mut inventory = account();
    inventory.rules[1].name = "https".into();
    let (attribute, reason) = web_refused(inventory);
    assert_eq!(attribute, "name");
    assert!(reason.contains("https"), "{reason}");
}

#[test]
fn a_port_without_its_firewall_rule_is_refused() {
    let mut inventory = account();
    inventory.firewall_rules.retain(|f| f.id != "f-web-443");
    let (attribute, reason) = web_refused(inventory);
    assert_eq!(attribute, "firewall-cidrs");
    assert!(reason.contains("tcp/443"), "{reason}");
}

#[test]
fn what_the_plan_would_refuse_is_refused_with_the_plans_reason() {
    // udp on the virtual router: the server refuses it, so the plan does too.
    let mut inventory = account();
    for rule in inventory
        .rules
        .iter_mut()
        .filter(|r| r.publicipid == "ip-web")
    {
        rule.protocol = "udp".into();
        rule.name = rule.name.replace("-tcp-", "-udp-");
    }
    for fw in inventory
        .firewall_rules
        .iter_mut()
        .filter(|f| f.ipaddressid == "ip-web")
    {
        fw.protocol = "udp".into();
    }
    let (attribute, reason) = web_refused(inventory);
    assert_eq!(attribute, "ports.80.protocol");
    assert!(reason.contains("virtual router"), "{reason}");
}

#[test]
fn ccm_rules_are_adopted_as_the_service_skyplan_writes() {
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let text = config(generate(
        &surveyed(),
        "load-balancer.shop",
        "ip-shop",
        &both,
    ));
    assert_eq!(
        text,
        "[load-balancer.shop]\nprovider = \"cloudstack\"\nmode = \"ccm\"\n\
         service = \"default/shop\"\ncluster = \"lab\"\nfirewall-cidrs = []\n\n\
         [[load-balancer.shop.ports]]\nport = 80\n"
    );
}

#[test]
fn the_services_annotations_and_fields_become_keys() {
    let mut service = shop_service();
    service.metadata.annotations = Some(
        [
            (crate::lb::ccm::service::PROXY_PROTOCOL, "true"),
            (
                crate::lb::ccm::service::SOURCE_CIDRS,
                "10.0.0.0/8,192.0.2.0/24",
            ),
            (crate::lb::ccm::service::IP_ASSOCIATED, "true"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into(),
    );
    let spec = service.spec.as_mut().unwrap();
    spec.session_affinity = Some("ClientIP".into());
    spec.load_balancer_source_ranges = Some(vec!["198.51.100.0/24".into()]);
    spec.load_balancer_ip = Some("203.0.113.30".into());
    let mut inventory = account();
    let shop = inventory
        .rules
        .iter_mut()
        .find(|r| r.id == "r-shop-80")
        .unwrap();
    shop.protocol = "tcp-proxy".into();
    shop.name = format!("{}-tcp-proxy-80", shop_base());
    shop.algorithm = "source".into();
    shop.cidrlist = Some("10.0.0.0/8 192.0.2.0/24".into());
    let fw = inventory
        .firewall_rules
        .iter_mut()
        .find(|f| f.id == "f-shop-80")
        .unwrap();
    fw.cidrlist = Some("198.51.100.0/24".into());
    let live = surveyed_with(inventory, vec![service]);
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let text = config(generate(&live, "load-balancer.shop", "ip-shop", &both));
    assert_eq!(
        text,
        "[load-balancer.shop]\nprovider = \"cloudstack\"\nmode = \"ccm\"\n\
         service = \"default/shop\"\npublic-ip = \"203.0.113.30\"\ncluster = \"lab\"\n\
         algorithm = \"source\"\nallowed-cidrs = [\"10.0.0.0/8\", \"192.0.2.0/24\"]\n\
         firewall-cidrs = [\"198.51.100.0/24\"]\n\n\
         [[load-balancer.shop.ports]]\nport = 80\nprotocol = \"tcp-proxy\"\n"
    );
}

#[test]
fn a_service_port_skyplan_would_rename_is_refused() {
    let mut service = shop_service();
    let port = &mut service.spec.as_mut().unwrap().ports.as_mut().unwrap()[0];
    port.name = Some("http".into());
    port.target_port = Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080));
    let live = surveyed_with(account(), vec![service]);
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let (attribute, reason) = refused(generate(&live, "load-balancer.shop", "ip-shop", &both));
    assert_eq!(attribute, "ports.80");
    assert!(
        reason.contains("\"http\"") && reason.contains("8080"),
        "{reason}"
    );
}

#[test]
fn a_ccm_annotation_without_a_key_is_refused() {
    let mut service = shop_service();
    let hostname = "service.beta.kubernetes.io/cloudstack-load-balancer-hostname";
    service.metadata.annotations =
        Some([(hostname.to_string(), "shop.example".to_string())].into());
    let live = surveyed_with(account(), vec![service]);
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let (attribute, _) = refused(generate(&live, "load-balancer.shop", "ip-shop", &both));
    assert_eq!(attribute, format!("service.annotations.{hostname}"));
}

#[test]
fn ccm_rules_of_a_cluster_neither_configured_nor_adopted_are_refused() {
    let shop = adopting(&[("ip-shop", "load-balancer.shop")]);
    let (attribute, reason) = refused(generate(
        &surveyed(),
        "load-balancer.shop",
        "ip-shop",
        &shop,
    ));
    assert_eq!(attribute, "cluster");
    assert!(reason.contains("adopt the cluster"), "{reason}");
    // Configured, it is named by its key.
    let mut live = surveyed();
    live.surveyed.clusters[0].configured = true;
    let text = config(generate(&live, "load-balancer.shop", "ip-shop", &shop));
    assert!(text.contains("cluster = \"lab\"\n"), "{text}");
}

#[test]
fn ccm_rules_whose_members_the_ccm_has_not_caught_up_with_are_refused() {
    let mut inventory = account();
    inventory
        .rule_members
        .insert("r-shop-80".into(), vec!["vm-node-0".into()]);
    let live = surveyed_with(inventory, vec![shop_service()]);
    let both = adopting(&[("c1", "cluster.lab"), ("ip-shop", "load-balancer.shop")]);
    let (attribute, reason) = refused(generate(&live, "load-balancer.shop", "ip-shop", &both));
    assert_eq!(attribute, "members");
    assert!(reason.contains("skyplan would change it"), "{reason}");
}

#[test]
fn ccm_rules_whose_service_skyplan_cannot_read_are_refused_not_taken_over_directly() {
    let mut live = surveyed();
    live.surveyed.clusters[0].services = Err("CKS cluster lab is Stopped".into());
    let (attribute, reason) = refused(generate(
        &live,
        "load-balancer.shop",
        "ip-shop",
        &adopting(&[]),
    ));
    assert_eq!(attribute, "service");
    assert!(reason.contains("would fight the CCM"), "{reason}");
    // Its Service gone (every cluster that could hold it read): left-over rules, taken over
    // in direct mode.
    let gone = surveyed_with(account(), vec![]);
    let text = config(generate(
        &gone,
        "load-balancer.shop",
        "ip-shop",
        &adopting(&[]),
    ));
    assert!(
        text.contains(&format!("name = \"{}\"", shop_base())),
        "{text}"
    );
    assert!(text.contains("members = [\"lab-control-0\""), "{text}");
}

#[test]
fn rules_adopted_with_a_cluster_that_is_refused_do_not_name_it() {
    let mut inventory = account();
    inventory.clusters[0].state = "Error".into();
    let live = surveyed_with(inventory, vec![shop_service()]);
    let all = adopting(&[
        ("c1", "cluster.lab"),
        ("ip-edge", "load-balancer.edge"),
        ("ip-shop", "load-balancer.shop"),
    ]);
    let text = config(generate(&live, "load-balancer.edge", "ip-edge", &all));
    assert!(text.contains("members = [\"lab-node-0\""), "{text}");
    let (attribute, reason) = refused(generate(&live, "load-balancer.shop", "ip-shop", &all));
    assert_eq!(attribute, "cluster");
    assert!(reason.contains("state: the cluster is Error"), "{reason}");
}
