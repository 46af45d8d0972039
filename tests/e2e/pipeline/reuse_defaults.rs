//! `[defaults.load-balancer.cloudscale]` against the embedded cloudscale: every load balancer
//! inherits what it does not set; a bad default is an error at the default, once.

use crate::support::{Output, Project};

const PROVIDER: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";

/// The defaults with `extra` keys first: a zone, members and a port (an array of tables,
/// inherited whole).
fn defaults(extra: &str) -> String {
    format!(
        "[defaults.load-balancer.cloudscale]\n{extra}zone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\n\
         [[defaults.load-balancer.cloudscale.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
    )
}

fn load_balancer(key: &str, extra: &str) -> String {
    format!("[load-balancer.{key}]\nprovider = \"cloudscale\"\n{extra}\n")
}

fn invalid(out: &Output, place: &str, message: &str) {
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains(place), "{place} in {out:?}");
    assert!(out.stderr.contains(message), "{message} in {out:?}");
}

#[test]
fn every_load_balancer_inherits_the_defaults_it_does_not_set() {
    let project = Project::new();
    project.config(&format!(
        "{PROVIDER}{}{}{}",
        defaults(""),
        load_balancer("a", ""),
        load_balancer("b", "zone = \"rma1\"\n")
    ));
    project.apply_ok();
    let world = project.world();
    let zone = |name: &str| world.named("load_balancers", name).unwrap()["zone"].clone();
    assert_eq!(zone("a"), "lpg1");
    assert_eq!(zone("b"), "rma1");
    assert_eq!(world.all("listeners").len(), 2, "each has the default port");
    assert_eq!(project.run(&["plan", "--detailed-exitcode"]).code, 0);
}

#[test]
fn a_key_the_provider_does_not_take_is_an_error_at_the_defaults() {
    let project = Project::new();
    project.write("defaults.toml", &defaults("zoen = \"lpg1\"\n"));
    project.config(&format!(
        "{PROVIDER}{}{}",
        load_balancer("a", ""),
        load_balancer("b", "")
    ));
    let out = project.run(&["validate"]);
    invalid(
        &out,
        "defaults.toml:2:1",
        "`zoen` is not a key of these tables",
    );
    assert!(
        out.stderr.contains("(1 problem)"),
        "once, not per table: {out:?}"
    );
}

#[test]
fn a_bad_inherited_value_is_an_error_at_the_default_naming_the_resource() {
    let project = Project::new();
    project.write("defaults.toml", &defaults("algorithm = \"fastest\"\n"));
    project.config(&format!("{PROVIDER}{}", load_balancer("a", "")));
    let out = project.run(&["validate"]);
    invalid(
        &out,
        "defaults.toml:2:13",
        "(in load-balancer.a, which inherits it)",
    );
}
