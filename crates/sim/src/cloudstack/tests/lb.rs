//! Load-balancer rules, firewall rules, public addresses and tags.

use serde_json::Value;

use super::{id, TestSim};
use crate::cloudstack::SimOptions;

async fn rule(sim: &TestSim, ip: &str, port: &str, extra: &[(&str, &str)]) -> Value {
    let mut params = vec![
        ("name", "web-tcp-80"),
        ("publicipid", ip),
        ("publicport", port),
        ("privateport", "30080"),
        ("algorithm", "roundrobin"),
    ];
    params.extend_from_slice(extra);
    sim.call("createLoadBalancerRule", &params).await.body
}

async fn create_rule(sim: &TestSim, ip: &str, port: &str, extra: &[(&str, &str)]) -> Value {
    let started = rule(sim, ip, port, extra).await;
    let jobid = started["createloadbalancerruleresponse"]["jobid"]
        .as_str()
        .unwrap_or_else(|| panic!("{started}"));
    let job = sim.wait(jobid).await;
    assert_eq!(job["jobstatus"], 1, "{job}");
    job["jobresult"]["loadbalancer"].clone()
}

fn error_of(body: &Value) -> (u64, String) {
    let inner = body["createloadbalancerruleresponse"].clone();
    (
        inner["errorcode"].as_u64().unwrap_or(0),
        inner["errortext"].as_str().unwrap_or("").to_owned(),
    )
}

#[tokio::test]
async fn a_rule_is_created_listed_with_string_ports_and_deleted() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let created = create_rule(
        &sim,
        &ip,
        "80",
        &[
            ("protocol", " TCP-Proxy "),
            ("cidrlist", "10.0.0.0/8, 192.168.1.0/24"),
        ],
    )
    .await;
    assert_eq!(created["state"], "Active");
    assert_eq!(created["publicport"], "80");
    assert_eq!(created["privateport"], "30080");
    assert_eq!(created["protocol"], "tcp-proxy");
    assert_eq!(created["cidrlist"], "10.0.0.0/8 192.168.1.0/24");
    let listed = sim
        .list(
            "listLoadBalancerRules",
            "loadbalancerrule",
            &[("keyword", "tcp-8")],
        )
        .await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["publicipid"], ip);
    let by_name = sim
        .list(
            "listLoadBalancerRules",
            "loadbalancerrule",
            &[("name", "web-tcp")],
        )
        .await;
    assert!(by_name.is_empty(), "name matches exactly");
    let result = sim
        .done("deleteLoadBalancerRule", &[("id", &id(&created))])
        .await;
    assert_eq!(result["success"], true);
    assert!(sim
        .list("listLoadBalancerRules", "loadbalancerrule", &[])
        .await
        .is_empty());
}

#[tokio::test]
async fn the_same_public_port_on_one_ip_conflicts_with_537() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let first = create_rule(&sim, &ip, "80", &[]).await;
    let answer = sim
        .call(
            "createLoadBalancerRule",
            &[
                ("name", "web-udp-80"),
                ("publicipid", &ip),
                ("publicport", "80"),
                ("privateport", "30081"),
                ("algorithm", "source"),
            ],
        )
        .await;
    assert_eq!(answer.status, 537);
    let (code, text) = error_of(&answer.body);
    assert_eq!(code, 537);
    let expected = format!(
        "The range specified, 80-80, conflicts with rule LoadBalancer {{\"id\":1,\"uuid\":\"{}\",\
         \"name\":\"web-tcp-80\",\"purpose\":\"LoadBalancing\",\"state\":\"Active\"}} which has 80-80",
        id(&first)
    );
    assert_eq!(text, expected);
}

#[tokio::test]
async fn the_virtual_router_refuses_udp_the_stats_port_and_dns_on_source_nat() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let provider = "LB service provider cannot support this rule";
    for (port, protocol) in [("80", "udp"), ("8081", "tcp"), ("80", "http")] {
        let body = rule(&sim, &ip, port, &[("protocol", protocol)]).await;
        assert_eq!(
            error_of(&body),
            (431, provider.to_owned()),
            "{port}/{protocol}"
        );
    }
    let nat = sim
        .list(
            "listPublicIpAddresses",
            "publicipaddress",
            &[("issourcenat", "true")],
        )
        .await;
    let body = rule(&sim, &id(&nat[0]), "53", &[]).await;
    assert!(error_of(&body).1.contains("cannot add port 53"));
    let body = rule(&sim, &ip, "53", &[]).await;
    assert!(body["createloadbalancerruleresponse"]["jobid"].is_string());
    // udp on a port another rule holds: the provider refuses it before any conflict check.
    let body = rule(&sim, &ip, "53", &[("protocol", "udp")]).await;
    assert_eq!(error_of(&body), (431, provider.to_owned()));
}

#[tokio::test]
async fn cidrlist_entries_are_validated() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let body = rule(&sim, &ip, "80", &[("cidrlist", "10.0.0.0/8,10.0.0.300/32")]).await;
    assert_eq!(
        error_of(&body),
        (431, "CIDR [10.0.0.300/32] is invalid.".to_owned())
    );
}

#[tokio::test]
async fn before_4_18_a_cidrlist_is_refused_on_create() {
    let sim = TestSim::with(SimOptions {
        version: "4.17.2.0".into(),
        ..SimOptions::default()
    })
    .await;
    let ip = id(&sim.new_ip().await);
    let body = rule(&sim, &ip, "80", &[("cidrlist", "0.0.0.0/0")]).await;
    assert!(error_of(&body)
        .1
        .starts_with("Parameter cidrList is deprecated"));
    create_rule(&sim, &ip, "80", &[]).await;
}

#[tokio::test]
async fn from_4_22_update_stores_the_cidrlist_comma_separated() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let created = create_rule(&sim, &ip, "80", &[("cidrlist", "0.0.0.0/0")]).await;
    let updated = sim
        .done(
            "updateLoadBalancerRule",
            &[
                ("id", &id(&created)),
                ("algorithm", "source"),
                ("protocol", "tcp"),
                ("cidrlist", "10.0.0.0/8,192.168.1.0/24"),
            ],
        )
        .await;
    let rule = &updated["loadbalancer"];
    assert_eq!(rule["cidrlist"], "10.0.0.0/8,192.168.1.0/24");
    assert_eq!(rule["algorithm"], "source");
    assert_eq!(rule["id"], created["id"]);
    let bad = sim
        .job_error(
            "updateLoadBalancerRule",
            &[("id", &id(&created)), ("cidrlist", "x")],
        )
        .await;
    assert_eq!(bad, "Invalid CIDR list: x");
}

#[tokio::test]
async fn before_4_22_update_ignores_the_cidrlist() {
    let sim = TestSim::with(SimOptions {
        version: "4.20.1.0".into(),
        ..SimOptions::default()
    })
    .await;
    let ip = id(&sim.new_ip().await);
    let created = create_rule(&sim, &ip, "80", &[("cidrlist", "0.0.0.0/0")]).await;
    let updated = sim
        .done(
            "updateLoadBalancerRule",
            &[
                ("id", &id(&created)),
                ("name", "renamed"),
                ("cidrlist", "10.0.0.0/8"),
            ],
        )
        .await;
    assert_eq!(updated["loadbalancer"]["cidrlist"], "0.0.0.0/0");
    assert_eq!(updated["loadbalancer"]["name"], "renamed");
}

#[tokio::test]
async fn members_are_assigned_listed_and_removed() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let rule = id(&create_rule(&sim, &ip, "80", &[]).await);
    let vms = sim.list("listVirtualMachines", "virtualmachine", &[]).await;
    let both = format!("{},{}", id(&vms[0]), id(&vms[1]));
    sim.done(
        "assignToLoadBalancerRule",
        &[("id", &rule), ("virtualmachineids", &both)],
    )
    .await;
    let members = sim
        .list(
            "listLoadBalancerRuleInstances",
            "loadbalancerruleinstance",
            &[("id", &rule)],
        )
        .await;
    assert_eq!(members.len(), 2);
    assert_eq!(members[0]["name"], "web-1");
    let twice = sim
        .job_error(
            "assignToLoadBalancerRule",
            &[("id", &rule), ("virtualmachineids", &id(&vms[0]))],
        )
        .await;
    assert!(twice.contains("already mapped"));
    sim.done(
        "removeFromLoadBalancerRule",
        &[("id", &rule), ("virtualmachineids", &id(&vms[0]))],
    )
    .await;
    let members = sim
        .list(
            "listLoadBalancerRuleInstances",
            "loadbalancerruleinstance",
            &[("id", &rule)],
        )
        .await;
    assert_eq!(members.len(), 1);
    let unknown = sim
        .call(
            "assignToLoadBalancerRule",
            &[("id", &rule), ("virtualmachineids", "nope")],
        )
        .await;
    assert_eq!(unknown.status, 431);
}

/// `/_sim/requests`' `members`: what each job did to a rule's VMs once it took effect.
#[tokio::test]
async fn the_member_log_shows_what_each_job_did_to_a_rule_when_it_took_effect() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let rule = id(&create_rule(&sim, &ip, "80", &[]).await);
    let vms = sim.list("listVirtualMachines", "virtualmachine", &[]).await;
    let (one, two) = (id(&vms[0]), id(&vms[1]));
    sim.handle.reset_requests();
    let started = sim
        .ok(
            "assignToLoadBalancerRule",
            &[
                ("id", &rule),
                ("virtualmachineids", &format!("{one},{two}")),
            ],
        )
        .await;
    let pending = serde_json::to_value(sim.handle.requests().members).unwrap();
    assert_eq!(pending, serde_json::json!([]), "nothing until the job ends");
    sim.wait(started["jobid"].as_str().unwrap()).await;
    sim.done(
        "removeFromLoadBalancerRule",
        &[("id", &rule), ("virtualmachineids", &one)],
    )
    .await;
    sim.done("deleteLoadBalancerRule", &[("id", &rule)]).await;
    let requests = sim.handle.requests();
    let members = serde_json::to_value(&requests.members).unwrap();
    let seen: Vec<String> = (members.as_array().unwrap().iter())
        .map(|m| {
            format!(
                "{} {} +{} -{} ={} {}",
                m["command"], m["name"], m["gained"], m["lost"], m["vms"], m["deleted"]
            )
        })
        .collect();
    let expected = [
        format!(
            r#""assignToLoadBalancerRule" "web-tcp-80" +["{one}","{two}"] -[] =["{one}","{two}"] false"#
        ),
        format!(r#""removeFromLoadBalancerRule" "web-tcp-80" +[] -["{one}"] =["{two}"] false"#),
        format!(r#""deleteLoadBalancerRule" "web-tcp-80" +[] -["{two}"] =[] true"#),
    ];
    assert_eq!(seen, expected);
    assert!(members.to_string().contains(&rule));
    // Each took effect after the request that started it and before the one that saw it end.
    let assign_started = (requests.log.iter())
        .find(|r| r.route == "assignToLoadBalancerRule")
        .unwrap();
    let at = members[0]["at_ms"].as_f64().unwrap();
    assert!(at > assign_started.ended_ms, "{at} {assign_started:?}");
    let text = serde_json::to_string(&requests).unwrap();
    assert!(!text.contains("signature") && !text.contains("apiKey"));
}

#[tokio::test]
async fn firewall_rules_list_their_cidrs_comma_separated() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let created = sim
        .done(
            "createFirewallRule",
            &[
                ("ipaddressid", &ip),
                ("protocol", "TCP"),
                ("startport", "443"),
                ("endport", "443"),
                ("cidrlist", "10.0.0.0/8,192.168.0.0/16"),
            ],
        )
        .await;
    let rule = &created["firewallrule"];
    assert_eq!(rule["protocol"], "tcp");
    assert_eq!(rule["cidrlist"], "10.0.0.0/8,192.168.0.0/16");
    let listed = sim
        .list("listFirewallRules", "firewallrule", &[("ipaddressid", &ip)])
        .await;
    assert_eq!(listed[0]["startport"], 443);
    sim.done("deleteFirewallRule", &[("id", &id(rule))]).await;
    assert!(sim
        .list("listFirewallRules", "firewallrule", &[])
        .await
        .is_empty());
}

#[tokio::test]
async fn addresses_with_rules_and_the_source_nat_address_are_not_released() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let rule = id(&create_rule(&sim, &ip, "80", &[]).await);
    let refused = sim.job_error("disassociateIpAddress", &[("id", &ip)]).await;
    assert!(refused.contains("rules"));
    let nat = sim
        .list(
            "listPublicIpAddresses",
            "publicipaddress",
            &[("issourcenat", "true")],
        )
        .await;
    let refused = sim
        .job_error("disassociateIpAddress", &[("id", &id(&nat[0]))])
        .await;
    assert!(refused.contains("source nat"));
    sim.done("deleteLoadBalancerRule", &[("id", &rule)]).await;
    sim.done("disassociateIpAddress", &[("id", &ip)]).await;
    let ips = sim
        .list("listPublicIpAddresses", "publicipaddress", &[])
        .await;
    assert_eq!(ips.len(), 1);
}

#[tokio::test]
async fn tags_show_on_their_objects_and_in_list_tags() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let rule = id(&create_rule(&sim, &ip, "80", &[]).await);
    sim.done(
        "createTags",
        &[
            ("resourceids", &rule),
            ("resourcetype", "LoadBalancer"),
            ("tags[0].key", "skyplan.address"),
            ("tags[0].value", "lb.web"),
        ],
    )
    .await;
    let listed = sim
        .list("listLoadBalancerRules", "loadbalancerrule", &[])
        .await;
    let tag = &listed[0]["tags"][0];
    assert_eq!(
        (
            &tag["key"],
            &tag["value"],
            &tag["resourcetype"],
            &tag["resourceid"]
        ),
        (
            &"skyplan.address".into(),
            &"lb.web".into(),
            &"LoadBalancer".into(),
            &rule.clone().into()
        )
    );
    let tags = sim.list("listTags", "tag", &[("resourceid", &rule)]).await;
    assert_eq!(tags.len(), 1);
    let filter =
        |value: &'static str| [("tags[0].key", "skyplan.address"), ("tags[0].value", value)];
    let tagged = sim
        .list(
            "listLoadBalancerRules",
            "loadbalancerrule",
            &filter("lb.web"),
        )
        .await;
    assert_eq!(tagged.len(), 1);
    let other = sim
        .list(
            "listLoadBalancerRules",
            "loadbalancerrule",
            &filter("lb.api"),
        )
        .await;
    assert!(other.is_empty());
    let twice = sim
        .job_error(
            "createTags",
            &[
                ("resourceids", &rule),
                ("resourcetype", "LoadBalancer"),
                ("tags[0].key", "skyplan.address"),
                ("tags[0].value", "other"),
            ],
        )
        .await;
    assert!(twice.contains("already"));
    sim.done(
        "deleteTags",
        &[
            ("resourceids", &rule),
            ("resourcetype", "LoadBalancer"),
            ("tags[0].key", "skyplan.address"),
        ],
    )
    .await;
    assert!(sim.list("listTags", "tag", &[]).await.is_empty());
}

#[tokio::test]
async fn openfirewall_opens_the_port_until_the_rule_goes() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let open = create_rule(&sim, &ip, "80", &[]).await;
    create_rule(&sim, &ip, "81", &[("openfirewall", "false")]).await;
    let firewall = sim.list("listFirewallRules", "firewallrule", &[]).await;
    assert_eq!(firewall.len(), 1);
    assert_eq!(firewall[0]["startport"], 80);
    assert_eq!(firewall[0]["cidrlist"], "0.0.0.0/0");
    assert_eq!(firewall[0]["state"], "Active");
    sim.done("deleteLoadBalancerRule", &[("id", &id(&open))])
        .await;
    assert!(sim
        .list("listFirewallRules", "firewallrule", &[])
        .await
        .is_empty());
}

#[tokio::test]
async fn the_same_firewall_rule_twice_conflicts() {
    let sim = TestSim::start().await;
    let ip = id(&sim.new_ip().await);
    let rule = [
        ("ipaddressid", ip.as_str()),
        ("protocol", "tcp"),
        ("startport", "80"),
        ("endport", "90"),
        ("cidrlist", "10.0.0.0/8"),
    ];
    sim.done("createFirewallRule", &rule).await;
    let again = sim.call("createFirewallRule", &rule).await;
    assert_eq!(again.status, 537);
    let text = again.inner()["errortext"].as_str().unwrap().to_owned();
    assert!(text.starts_with("The range specified, 80-90, conflicts with rule FirewallRule"));
    let mut sharing = rule;
    sharing[4] = ("cidrlist", "192.168.0.0/16,10.0.0.0/8");
    assert_eq!(sim.call("createFirewallRule", &sharing).await.status, 537);
    let mut other_sources = rule;
    other_sources[4] = ("cidrlist", "192.168.0.0/16");
    sim.done("createFirewallRule", &other_sources).await;
    let mut udp = rule;
    udp[1] = ("protocol", "udp");
    sim.done("createFirewallRule", &udp).await;
}
