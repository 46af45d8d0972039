//! Plans you can trust, part one: every name a load balancer takes from the account's catalog
//! (zone, flavor, subnet, floating IP) is checked at plan time. An unknown or unusable one is a
//! plan error at the config key's file:line:col that lists what exists, and neither plan nor
//! apply sends a single mutating request.

use crate::support::{run, Output, Project, SimServer, SIM_TOKEN};

/// A load balancer `name` with `extra` lines after `zone`, the table starting on line 4.
fn load_balancer(name: &str, zone: &str, extra: &str) -> String {
    format!(
        "[load-balancer.{name}]\nprovider = \"cloudscale\"\nzone = \"{zone}\"\n{extra}\n\
         [[load-balancer.{name}.ports]]\nport = 80\nnode-port = 30080\n\n"
    )
}

struct Account {
    project: Project,
    sim: SimServer,
}

impl Account {
    fn new() -> Account {
        let project = Project::new();
        let sim = SimServer::start_settling(&project.path().join("world.json"), 0);
        Account { project, sim }
    }

    /// Writes the config: the provider table (lines 1-3), then `resources`.
    fn config(&self, resources: &str) {
        let provider = format!(
            "[provider.cloudscale]\nendpoint = \"{}\"\n\n",
            self.sim.base_url
        );
        self.project.config(&format!("{provider}{resources}"));
    }

    fn run(&self, args: &[&str]) -> Output {
        run(self
            .project
            .command(args)
            .env("CLOUDSCALE_API_TOKEN", SIM_TOKEN))
    }

    /// Routes called with a method that changes the cloud.
    fn writes(&self) -> Vec<String> {
        let requests = self.sim.requests();
        requests["by_route"]
            .as_object()
            .expect("requests by route")
            .keys()
            .filter(|route| !route.starts_with("GET "))
            .cloned()
            .collect()
    }

    /// Plan and apply both fail with `message` at `line:column` of skyplan.toml, on one line
    /// an editor can jump to, and nothing is sent that would change the cloud.
    fn refused(&self, line: usize, column: usize, message: &str) {
        self.sim.reset_requests();
        let expected = format!("skyplan.toml:{line}:{column}: load-balancer.web: {message}");
        for args in [&["plan"][..], &["apply", "--auto-approve"]] {
            let out = self.run(args);
            assert_eq!(out.code, 1, "{out:?}");
            assert!(
                out.stderr.lines().any(|l| l.ends_with(&expected)),
                "expected {expected:?} in:\n{out:?}"
            );
        }
        assert_eq!(self.writes(), Vec::<String>::new(), "nothing mutated");
    }
}

#[test]
fn an_unknown_zone_is_a_plan_error_at_its_key() {
    let account = Account::new();
    account.config(&load_balancer("web", "zz9", ""));
    account.refused(6, 1, "zone `zz9` does not exist; zones: lpg1, rma1");
}

#[test]
fn an_unknown_flavor_is_a_plan_error_at_its_key() {
    let account = Account::new();
    account.config(&load_balancer("web", "lpg1", "flavor = \"lb-huge\""));
    account.refused(
        7,
        1,
        "flavor `lb-huge` does not exist; flavors: lb-standard, lb-large",
    );
}

#[test]
fn an_unknown_subnet_is_a_plan_error_at_its_key() {
    let account = Account::new();
    let unknown = "00000000-0000-4000-8000-000000000000";
    let vip = format!("vip-addresses = [{{ subnet = \"{unknown}\" }}]");
    account.config(&load_balancer("web", "lpg1", &vip));
    account.refused(
        7,
        20,
        &format!(
            "subnet `{unknown}` does not exist; subnets: 70d282ab-2a01-4abb-a03e-5c1d0ba29ef2 (10.0.0.0/24)"
        ),
    );
}

#[test]
fn a_fixed_vip_address_outside_its_subnet_is_a_plan_error_at_its_key() {
    let account = Account::new();
    let subnet = "70d282ab-2a01-4abb-a03e-5c1d0ba29ef2";
    let vip = format!("vip-addresses = [{{ subnet = \"{subnet}\", address = \"10.9.0.5\" }}]");
    account.config(&load_balancer("web", "lpg1", &vip));
    account.refused(
        7,
        69,
        &format!("address 10.9.0.5 is not in subnet {subnet} (10.0.0.0/24)"),
    );
}

#[test]
fn a_floating_ip_not_in_the_account_is_a_plan_error_listing_the_account_s() {
    let account = Account::new();
    let ips = "floating-ips = [\"5.102.150.123/32\", \"5.102.150.1/32\"]";
    account.config(&load_balancer("web", "lpg1", ips));
    account.refused(
        7,
        37,
        "floating IP `5.102.150.1/32` does not exist; floating IPs: 5.102.150.123/32, 5.102.150.124/32, 5.102.150.125/32",
    );
}

#[test]
fn a_floating_ip_assigned_elsewhere_is_a_plan_error_listing_the_free_ones() {
    let account = Account::new();
    let ip = "floating-ips = [\"5.102.150.124/32\"]";
    // Another team's config holds the address on their load balancer.
    account.config(&load_balancer("other", "rma1", ip));
    let out = account.run(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let other = account.sim.list("/load-balancers")[0]["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_dir_all(account.project.path().join("state")).unwrap();
    account.config(&load_balancer("web", "lpg1", ip));
    account.refused(
        7,
        17,
        &format!("floating IP 5.102.150.124/32 is assigned to another load balancer ({other}); the CCM refuses to move it, to avoid flapping; free floating IPs: 5.102.150.123/32, 5.102.150.125/32"),
    );
}

#[test]
fn zones_and_flavors_in_use_cost_no_extra_request() {
    let account = Account::new();
    account.config(&load_balancer("web", "lpg1", ""));
    account.sim.reset_requests();
    let out = account.run(&["apply", "--auto-approve"]);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = account.sim.requests();
    assert_eq!(requests["by_route"]["GET /v1/regions"], 1, "{requests:#}");
    assert_eq!(
        requests["by_route"]["GET /v1/load-balancers/flavors"], 1,
        "{requests:#}"
    );
    account.sim.reset_requests();
    let out = account.run(&["plan"]);
    assert_eq!(out.code, 0, "{out:?}");
    let requests = account.sim.requests();
    let routes = requests["by_route"].as_object().unwrap();
    assert!(
        !routes.contains_key("GET /v1/regions")
            && !routes.contains_key("GET /v1/load-balancers/flavors"),
        "the zone and flavor are proven by the load balancer using them: {requests:#}"
    );
}

/// CloudStack checked its catalog at plan time already; its unknown names now point at the
/// key too.
#[test]
fn cloudstack_unknown_names_point_at_their_key() {
    let project = crate::cloudstack::support::CsProject::new();
    let cluster = |zone: &str, offering: &str| {
        format!(
            "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"{zone}\"\nkubernetes-version = \"1.29.3\"\n\
             workers = 2\nservice-offering = \"{offering}\"\n"
        )
    };
    for (zone, offering, expected) in [
        ("zz9", "Medium Instance", "skyplan.toml:6:1: cluster.lab: zone `zz9` does not exist; zones: "),
        ("zone1", "Huge", "skyplan.toml:9:1: cluster.lab: service offering `Huge` does not exist; service offerings: "),
    ] {
        project.config(&cluster(zone, offering));
        let out = project.run(&["plan"]);
        assert_eq!(out.code, 1, "{out:?}");
        assert!(
            out.stderr.lines().any(|l| l.contains(expected)),
            "expected {expected:?} in:\n{out:?}"
        );
    }
}

#[test]
fn a_cloudstack_load_balancer_s_unknown_network_points_at_its_key() {
    let project = crate::cloudstack::support::CsProject::new();
    project.config(
        "[load-balancer.web]\nprovider = \"cloudstack\"\nmembers = [\"web-1\"]\nnetwork = \"nowhere\"\n\n\
         [[load-balancer.web.ports]]\nport = 80\nnode-port = 30080\n",
    );
    let out = project.run(&["plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    let expected = "skyplan.toml:7:1: load-balancer.web: network: network `nowhere` does not exist; networks: ";
    assert!(
        out.stderr.lines().any(|l| l.contains(expected)),
        "expected {expected:?} in:\n{out:?}"
    );
}
