//! The cloudscale section read through the whole config stage on small inline configs: what
//! resolves to what, and for each kind of error its message and position.

mod clusters;

use std::path::{Path, PathBuf};

use skyplan_core::config::{Config, ConfigError, SourceLocation};
use skyplan_core::model::Impact;

use super::*;
use crate::spec::{
    Algorithm, CloudscaleLoadBalancerSpec, HealthMonitorSpec, HttpCheck, IpMode, MonitorType,
    PoolProtocol, PortProtocol, PortSpec, TrafficPolicy, VipAddress,
};

const PROVIDER: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n";

/// A valid load balancer `hello` whose table starts on line 1; `extra` is added to its table.
fn lb(extra: &str) -> String {
    format!(
        "[load-balancer.hello]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n{extra}\n\
         [[load-balancer.hello.ports]]\nport = 80\nnode-port = 30080\n"
    )
}

pub(super) fn load_files(files: &[(&str, &str)]) -> Result<Config, ConfigError> {
    skyplan_core::config::load_texts(
        Path::new("cfg"),
        files,
        &[&skyplan_kubernetes::KubernetesConfig, &CloudscaleConfig],
    )
}

pub(super) fn load_str(text: &str) -> Result<Config, ConfigError> {
    load_files(&[("a.toml", text)])
}

/// The `file:line:col: message` lines of a config that must fail.
pub(super) fn errors(text: &str) -> Vec<String> {
    load_str(text)
        .expect_err("the config should be invalid")
        .lines()
}

fn help_of(text: &str) -> String {
    let error = load_str(text).expect_err("the config should be invalid");
    error.problems()[0]
        .help_text()
        .unwrap_or_default()
        .to_string()
}

fn settings_of(config: &Config) -> &CloudscaleSettings {
    config
        .providers
        .get("cloudscale")
        .expect("[provider.cloudscale]")
}

fn spec(config: &Config) -> &CloudscaleLoadBalancerSpec {
    (config.resources[0].spec.get()).expect("a cloudscale load balancer")
}

#[test]
fn a_minimal_load_balancer_gets_the_ccm_defaults() {
    let config = load_str(&format!("{}{PROVIDER}", lb("members = [\"10.0.0.11\"]"))).unwrap();
    let mut expected = CloudscaleLoadBalancerSpec::with_defaults("hello", "lpg1");
    expected.members = vec!["10.0.0.11".into()];
    expected.ports = vec![PortSpec {
        name: String::new(),
        port: 80,
        protocol: PortProtocol::Tcp,
        node_port: 30080,
    }];
    assert_eq!(spec(&config), &expected);
    assert_eq!(config.root, PathBuf::from("cfg"));
    assert_eq!(config.settings.state_dir, PathBuf::from("cfg/state"));
    let provider = settings_of(&config);
    assert_eq!(provider.endpoint, Endpoint::Embedded);
    assert_eq!(config.maintenance, None);
    let resource = &config.resources[0];
    assert_eq!(resource.address.to_string(), "load-balancer.hello");
    assert_eq!(resource.provider, "cloudscale");
    assert_eq!(
        resource.location,
        SourceLocation {
            file: Path::new("a.toml").into(),
            line: 1,
            column: 1
        }
    );
}

#[test]
fn every_key_of_the_contract_example_resolves() {
    let text = r#"
[settings]
state-dir = "/var/lib/skyplan"

[provider.cloudscale]
endpoint = "https://api.cloudscale.ch/v1"

[maintenance]
timezone = "Europe/Zurich"
windows = ["Sat 02:00-05:00", "Sun 22:00-02:00"]
outside-window = "none"
inside-window = "forbidden"

[load-balancer.hello]
provider = "cloudscale"
name = "hello-lb"
flavor = "lb-large"
zone = "rma1"
vip-addresses = [{ subnet = "2DB69BA3-1864-4608-853A-0771B6885A3A", address = "10.0.0.5" }]
floating-ips = ["2A06:C01::/56"]
algorithm = "source_ip"
pool-protocol = "proxyv2"
listener-protocol = "tcp"
allowed-cidrs = ["10.0.0.0/8"]
allowed-subnets = ["2db69ba3-1864-4608-853a-0771b6885a3a"]
timeouts = { client-data-ms = 1000, member-data-ms = 2000 }
health-monitor = { type = "https", delay-s = 5, http = { url-path = "/healthz", host = "example.com" } }
force-hostname = "lb.example.com"
ip-mode = "VIP"
members = ["10.0.0.11", "2001:DB8::12"]

[[load-balancer.hello.ports]]
name = "http"
port = 80
node-port = 30080

[[load-balancer.hello.ports]]
name = "dns"
port = 53
protocol = "udp"
node-port = 30053
"#;
    let config = load_str(text).unwrap();
    assert_eq!(config.settings.state_dir, PathBuf::from("/var/lib/skyplan"));
    assert_eq!(
        settings_of(&config).endpoint,
        Endpoint::Url("https://api.cloudscale.ch/v1".into())
    );
    let maintenance = config.maintenance.as_ref().unwrap();
    assert_eq!(maintenance.timezone, "Europe/Zurich");
    assert_eq!(maintenance.windows, ["Sat 02:00-05:00", "Sun 22:00-02:00"]);
    assert_eq!(maintenance.outside_window, Impact::None);
    assert_eq!(maintenance.inside_window, Impact::Forbidden);

    let spec = spec(&config);
    assert_eq!(
        (spec.name.as_str(), spec.flavor.as_str()),
        ("hello-lb", "lb-large")
    );
    assert_eq!(spec.zone, "rma1");
    assert_eq!(
        spec.vip_addresses,
        [VipAddress {
            subnet: "2db69ba3-1864-4608-853a-0771b6885a3a".into(),
            address: Some("10.0.0.5".into())
        }]
    );
    assert_eq!(spec.floating_ips, ["2a06:c01::/56"]);
    assert_eq!(spec.algorithm, Algorithm::SourceIp);
    assert_eq!(spec.pool_protocol, PoolProtocol::ProxyV2);
    assert_eq!(spec.allowed_cidrs, ["10.0.0.0/8"]);
    assert_eq!(
        spec.allowed_subnets,
        ["2db69ba3-1864-4608-853a-0771b6885a3a"]
    );
    assert_eq!(
        (
            spec.timeouts.client_data_ms,
            spec.timeouts.member_connect_ms,
            spec.timeouts.member_data_ms
        ),
        (1000, 5000, 2000)
    );
    assert_eq!(
        spec.health_monitor,
        HealthMonitorSpec {
            kind: MonitorType::Https,
            delay_s: 5,
            http: Some(HttpCheck {
                url_path: "/healthz".into(),
                host: Some("example.com".into()),
                ..HttpCheck::default()
            }),
            ..HealthMonitorSpec::default()
        }
    );
    assert_eq!(spec.force_hostname.as_deref(), Some("lb.example.com"));
    assert_eq!(spec.ip_mode, IpMode::Vip);
    assert_eq!(spec.members, ["10.0.0.11", "2001:db8::12"]);
    let ports: Vec<_> = spec.ports.iter().map(|p| (p.key(), p.protocol)).collect();
    assert_eq!(
        ports,
        [
            ("http".to_string(), PortProtocol::Tcp),
            ("dns".to_string(), PortProtocol::Udp)
        ]
    );
}

#[test]
fn a_local_traffic_policy_checks_kube_proxy_livez() {
    let text = lb("traffic-policy = \"Local\"\nhealth-check-node-port = 32000") + PROVIDER;
    let config = load_str(&text).unwrap();
    let spec = spec(&config);
    assert_eq!(spec.traffic_policy, TrafficPolicy::Local);
    assert_eq!(spec.health_check_node_port, Some(32000));
    assert_eq!(spec.health_monitor.kind, MonitorType::Http);
    assert_eq!(spec.health_monitor.http, Some(HttpCheck::livez()));
}

#[test]
fn a_directory_of_files_is_merged() {
    let config = load_files(&[("a.toml", PROVIDER), ("b.toml", &lb(""))]).unwrap();
    assert_eq!(&*config.resources[0].location.file, Path::new("b.toml"));
}

#[test]
fn an_unknown_key_is_named_at_its_place() {
    let lines = errors(&(lb("zoen = \"lpg1\"") + PROVIDER));
    assert_eq!(lines.len(), 1);
    assert!(lines[0] == "a.toml:4:1: unknown key `zoen`", "{lines:?}");
}

#[test]
fn wrong_types_point_at_the_value() {
    let text = lb("").replace("port = 80", "port = \"80\"") + PROVIDER;
    assert_eq!(
        errors(&text),
        ["a.toml:6:8: invalid type: string \"80\", expected i64"]
    );
}

#[test]
fn syntax_errors_point_at_the_mistake() {
    let lines = errors("[settings]\nstate-dir = \n");
    assert!(lines[0].starts_with("a.toml:2:"), "{lines:?}");
}

#[test]
fn every_bad_resource_is_reported_not_just_the_first() {
    let b = lb("algorithm = \"fastest\"").replace("hello", "b");
    let c = lb("bogus = 1").replace("hello", "c");
    let lines = errors(&format!("{PROVIDER}{b}{c}"));
    assert_eq!(
        lines,
        [
            "a.toml:6:13: `fastest` is not a valid algorithm",
            "a.toml:13:1: unknown key `bogus`",
        ]
    );
}

#[test]
fn enum_values_list_the_allowed_ones() {
    let text = lb("pool-protocol = \"proxy2\"") + PROVIDER;
    assert_eq!(
        errors(&text),
        ["a.toml:4:17: `proxy2` is not a valid pool protocol"]
    );
    assert_eq!(
        help_of(&text),
        r#"expected one of "tcp", "proxy", "proxyv2""#
    );
}

#[test]
fn bare_floating_ips_and_bad_cidrs_are_refused() {
    let text =
        lb("floating-ips = [\"5.102.150.123\"]\nallowed-cidrs = [\"10.0.0.0/33\"]") + PROVIDER;
    assert_eq!(
        errors(&text),
        [
            "a.toml:4:17: `5.102.150.123` is an address, not a CIDR",
            "a.toml:5:18: `10.0.0.0/33` is not a CIDR",
        ]
    );
    assert_eq!(help_of(&text), "write 5.102.150.123/32");
}

#[test]
fn bad_addresses_uuids_and_ports_are_refused() {
    let text = lb(
        "members = [\"10.0.0.300\"]\nallowed-subnets = [\"subnet-a\"]\n\
         vip-addresses = [{ subnet = \"2db69ba3-1864-4608-853a-0771b6885a3a\", address = \"x\" }]",
    )
    .replace("node-port = 30080", "node-port = 70000")
        + PROVIDER;
    assert_eq!(
        errors(&text),
        [
            "a.toml:4:12: `10.0.0.300` is not an IP address",
            "a.toml:5:20: `subnet-a` is not a UUID",
            "a.toml:6:79: `x` is not an IP address",
            "a.toml:9:13: 70000 is not a port",
        ]
    );
}

#[test]
fn duplicate_members_point_at_the_first() {
    let text = lb("members = [\"::1\", \"::0001\"]") + PROVIDER;
    let error = load_str(&text).unwrap_err();
    assert_eq!(error.lines(), ["a.toml:4:19: member ::1 is listed twice"]);
    let note = &error.problems()[0].notes()[0];
    assert_eq!(note.line(), "a.toml:4:12: first listed here");
}

#[test]
fn a_duplicate_address_across_files_points_at_both() {
    let error = load_files(&[
        ("a.toml", &format!("{PROVIDER}{}", lb(""))),
        ("b.toml", &lb("")),
    ])
    .unwrap_err();
    assert_eq!(
        error.lines(),
        ["b.toml:1:1: load-balancer.hello is defined twice"]
    );
    let note = &error.problems()[0].notes()[0];
    assert_eq!(note.line(), "a.toml:3:1: first defined here");
}

#[test]
fn sections_may_be_defined_in_one_file_only() {
    let error = load_files(&[("a.toml", PROVIDER), ("b.toml", PROVIDER)]).unwrap_err();
    assert_eq!(
        error.lines(),
        ["b.toml:1:1: [provider.cloudscale] is defined twice"]
    );
}

#[test]
fn ports_differ_in_name_and_number() {
    let text = format!(
        "{}[[load-balancer.hello.ports]]\nname = \"\"\nport = 80\nnode-port = 30081\n{PROVIDER}",
        lb("")
    );
    assert_eq!(
        errors(&text),
        [
            "a.toml:5:1: port 80 needs a name",
            "a.toml:9:8: port 80 needs a name",
            "a.toml:10:8: port 80/tcp is used twice",
        ]
    );
    let named = text.replace("name = \"\"", "name = \"a\"\nprotocol = \"udp\"");
    let named = named.replacen(
        "[[load-balancer.hello.ports]]",
        "[[load-balancer.hello.ports]]\nname = \"a\"",
        1,
    );
    assert_eq!(errors(&named), ["a.toml:10:8: port name `a` is used twice"]);
}

#[test]
fn a_tcp_and_a_udp_port_on_one_number_clash_when_both_listeners_are_udp() {
    let ports = "[[load-balancer.hello.ports]]\nname = \"dns\"\nprotocol = \"udp\"\nport = 80\nnode-port = 30053\n";
    let both = |extra: &str| {
        lb(extra).replace(
            "[[load-balancer.hello.ports]]\n",
            "[[load-balancer.hello.ports]]\nname = \"web\"\n",
        ) + ports
            + PROVIDER
    };
    assert!(
        load_str(&both("")).is_ok(),
        "tcp/80 and udp/80 are two listeners"
    );
    assert_eq!(
        errors(&both("listener-protocol = \"udp\"")),
        ["a.toml:12:8: port 80/udp (listener udp/80) is used twice"]
    );
}

#[test]
fn a_load_balancer_needs_ports() {
    let empty = "[load-balancer.x]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nports = []\n";
    assert_eq!(
        errors(&format!("{empty}{PROVIDER}")),
        ["a.toml:4:9: a load balancer needs at least one port"]
    );
    let missing = empty.replace("ports = []\n", "");
    assert_eq!(
        errors(&format!("{missing}{PROVIDER}")),
        ["a.toml:1:1: missing field `ports`"]
    );
}

#[test]
fn health_check_node_port_needs_a_local_policy() {
    let text = lb("health-check-node-port = 32000") + PROVIDER;
    assert_eq!(
        errors(&text),
        ["a.toml:4:26: health-check-node-port only applies with traffic-policy = \"Local\""]
    );
}

#[test]
fn an_http_check_needs_an_http_monitor() {
    let text = lb("health-monitor = { type = \"ping\", http = { method = \"HEAD\" } }") + PROVIDER;
    assert_eq!(
        errors(&text),
        ["a.toml:4:42: an HTTP check does not apply to a `ping` health monitor"]
    );
}

#[test]
fn a_floating_ip_belongs_to_one_load_balancer() {
    let a = lb("floating-ips = [\"5.102.150.123/32\"]").replace("hello", "a");
    let b = lb("floating-ips = [\"5.102.150.123/32\"]").replace("hello", "b");
    let error = load_files(&[("a.toml", &format!("{PROVIDER}{a}")), ("b.toml", &b)]).unwrap_err();
    assert_eq!(
        error.lines(),
        ["b.toml:4:17: floating IP 5.102.150.123/32 is claimed by load-balancer.a and load-balancer.b"]
    );
    assert_eq!(
        error.problems()[0].notes()[0].line(),
        "a.toml:6:17: first claimed here"
    );
}

#[test]
fn a_resource_needs_a_known_and_configured_provider() {
    assert_eq!(
        errors(&lb("")),
        ["a.toml:2:12: provider `cloudscale` has no [provider.cloudscale] table"]
    );
    let other = lb("").replace("\"cloudscale\"", "\"aws\"") + PROVIDER;
    assert_eq!(
        errors(&other),
        ["a.toml:2:12: `aws` is not a supported provider"]
    );
}

#[test]
fn a_token_in_the_config_is_refused_without_repeating_it() {
    let text = format!("{PROVIDER}token = \"s3cr3t-t0ken\"\n{}", lb(""));
    let error = load_str(&text).unwrap_err();
    assert_eq!(
        error.lines(),
        ["a.toml:3:9: API tokens do not belong in config files"]
    );
    assert!(error.problems()[0]
        .help_text()
        .unwrap()
        .contains("CLOUDSCALE_API_TOKEN"));
    let mut rendered = String::new();
    miette::GraphicalReportHandler::new()
        .render_report(&mut rendered, &error)
        .unwrap();
    assert!(rendered.contains("API tokens"), "{rendered}");
    assert!(!rendered.contains("s3cr3t"), "{rendered}");
}

#[test]
fn endpoints_are_checked() {
    let text = format!("{}{}", PROVIDER.replace("embedded", "api.example"), lb(""));
    assert_eq!(
        errors(&text),
        ["a.toml:2:12: `api.example` is not an endpoint"]
    );
}

#[test]
fn max_concurrent_requests_defaults_to_16_and_is_checked() {
    let provider = |config: &Config| settings_of(config).clone();
    let default = load_str(&format!("{PROVIDER}{}", lb(""))).unwrap();
    assert_eq!(provider(&default).max_concurrent_requests, 16);
    let set = format!("{PROVIDER}max-concurrent-requests = 64\n{}", lb(""));
    assert_eq!(
        provider(&load_str(&set).unwrap()).max_concurrent_requests,
        64
    );
    for bad in ["0", "257", "-3"] {
        let text = format!("{PROVIDER}max-concurrent-requests = {bad}\n{}", lb(""));
        assert_eq!(
            errors(&text),
            [format!(
                "a.toml:3:27: {bad} is not a number of requests from 1 to 256"
            )]
        );
    }
    let text = format!("{PROVIDER}max-concurrent-requests = \"many\"\n{}", lb(""));
    assert_eq!(
        errors(&text)[0],
        "a.toml:3:27: invalid type: string \"many\", expected i64"
    );
}
