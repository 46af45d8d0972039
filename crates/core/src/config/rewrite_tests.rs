use serde_json::json;

use crate::config::tests::{errors, load_str};
use crate::config::{Config, ResourceSpec};
use crate::model::{Address, ResourceKind};

const TEST: &str = "[provider.test]\nendpoint = \"https://api.example.com\"\n";

fn config(table: &str) -> Config {
    load_str(&format!(
        "{TEST}[load-balancer.a]\nprovider = \"test\"\n{table}"
    ))
    .unwrap()
}

fn address() -> Address {
    Address::new(ResourceKind::LoadBalancer, "a")
}

fn with_values(
    config: &Config,
    values: &[(&str, serde_json::Value)],
) -> Result<ResourceSpec, String> {
    let values: Vec<(&str, &serde_json::Value)> = values.iter().map(|(p, v)| (*p, v)).collect();
    let resource = config.resource(&address()).unwrap();
    resource.origin.with_values(config, &address(), &values)
}

#[test]
fn a_value_written_over_the_table_is_resolved_by_its_section() {
    let config = config("size = 2\nignore-changes = [\"size\"]\n");
    let resource = config.resource(&address()).unwrap();
    assert_eq!(resource.spec, ResourceSpec::new(2u32));
    assert_eq!(resource.origin.ignore_changes[0].path, "size");
    assert_eq!(
        with_values(&config, &[("size", json!(7))]),
        Ok(ResourceSpec::new(7u32))
    );
}

#[test]
fn null_leaves_the_key_to_its_default_and_a_refused_value_says_why() {
    let config = config("size = 2\n");
    assert_eq!(
        with_values(&config, &[("size", json!(null))]),
        Ok(ResourceSpec::new(1u32))
    );
    let refused = with_values(&config, &[("size", json!(-3))]).unwrap_err();
    assert!(refused.contains("-3 is not a size"), "{refused}");
    let unknown = with_values(&config, &[("colour", json!("red"))]).unwrap_err();
    assert!(unknown.contains("`colour` is not a key"), "{unknown}");
}

#[test]
fn an_element_of_a_list_is_found_by_its_port_when_it_has_no_name() {
    let config = config("size = 2\n[[load-balancer.a.ports]]\nport = 80\nnode-port = 30080\n");
    assert!(with_values(&config, &[("ports.80.node-port", json!(30081))]).is_ok());
    let missing = with_values(&config, &[("ports.81.node-port", json!(30081))]).unwrap_err();
    assert!(missing.contains("`ports` has no element `81`"), "{missing}");
    let whole = with_values(&config, &[("ports.80", json!({}))]).unwrap_err();
    assert!(whole.contains("a whole element"), "{whole}");
}

#[test]
fn ignore_changes_is_checked_against_the_kind_at_its_place() {
    let problems = errors(&format!(
        "{TEST}[load-balancer.a]\nprovider = \"test\"\nignore-changes = [\"size\", \"ports.80.node-port\", \"sise\"]\n"
    ));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("a.toml:5:49: `sise` is not an attribute of load-balancer.a"),
        "{problems:?}"
    );
    let wrong_type = errors(&format!(
        "{TEST}[load-balancer.a]\nprovider = \"test\"\nignore-changes = \"size\"\n"
    ));
    assert!(wrong_type[0].starts_with("a.toml:5:18:"), "{wrong_type:?}");
}

#[test]
fn a_table_reuse_made_is_written_over_as_made_not_as_the_file_writes_it() {
    let config = load_str(&format!(
        "{TEST}[variables]\nlabel = \"from-variable\"\n\
         [defaults.load-balancer.test]\nsize = 2\n\
         [load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a\"]\nlabel = \"${{var.label}}\"\n"
    ))
    .unwrap();
    let instance: Address = r#"load-balancer.web["a"]"#.parse().unwrap();
    let resource = config.resource(&instance).unwrap();
    let made = ResourceSpec::new((2u32, "from-variable".to_string()));
    assert_eq!(resource.spec, made);
    let values = [("size", &json!(5))];
    assert_eq!(
        resource.origin.with_values(&config, &instance, &values),
        Ok(ResourceSpec::new((5u32, "from-variable".to_string())))
    );
}
