use super::*;
use crate::model::{Address, ResourceKind};
use crate::provider::discover::{Maker, ServiceRef};

fn objects() -> Vec<Unmanaged> {
    let cluster: Address = "cluster.prod".parse().unwrap();
    vec![
        Unmanaged {
            provider: "cloudscale".into(),
            kind: ResourceKind::LoadBalancer,
            id: "2b0d3f4e-0000-4000-8000-000000000001".into(),
            name: "k8s-service-8f1c".into(),
            made_by: Maker::Controller("cloudscale CCM".into()),
            cluster: Some(cluster.clone()),
            service: Some(ServiceRef {
                cluster,
                service: "default/web".into(),
            }),
            address: Address::new(ResourceKind::LoadBalancer, "web"),
            summary: "5.102.150.12 in lpg1, lb-standard, port 80".into(),
            importable: true,
            why_not_importable: None,
        },
        Unmanaged {
            provider: "cloudscale".into(),
            kind: ResourceKind::LoadBalancer,
            id: "2b0d3f4e-0000-4000-8000-000000000002".into(),
            name: "by | hand".into(),
            made_by: Maker::Unknown,
            cluster: None,
            service: None,
            address: Address::new(ResourceKind::LoadBalancer, "by-hand"),
            summary: String::new(),
            importable: true,
            why_not_importable: None,
        },
    ]
}

#[test]
fn text_lists_each_object_with_its_maker_and_binding() {
    insta::assert_snapshot!(render_discovery_text(&objects(), Style::Plain));
}

#[test]
fn an_empty_discovery_says_so() {
    assert_eq!(
        render_discovery_text(&[], Style::Plain),
        "Nothing unmanaged: every object found is in the config.\n"
    );
}

#[test]
fn json_names_every_field() {
    let value: serde_json::Value =
        serde_json::from_str(&render_discovery_json(&objects())).unwrap();
    assert_eq!(value["format_version"], "1.1");
    assert!(value["unmanaged"][0].get("why_not_importable").is_none());
    let first = &value["unmanaged"][0];
    assert_eq!(first["address"], "load-balancer.web");
    assert_eq!(first["kind"], "load-balancer");
    assert_eq!(first["made_by"]["by"], "controller");
    assert_eq!(first["made_by"]["name"], "cloudscale CCM");
    assert_eq!(first["service"]["service"], "default/web");
    assert_eq!(value["unmanaged"][1]["made_by"]["by"], "unknown");
}

#[test]
fn toml_parses_back_as_one_table_per_object() {
    let text = render_discovery_toml(&objects());
    let parsed: toml::Table = text.parse().unwrap();
    let list = parsed["unmanaged"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["service"].as_str(), Some("default/web"));
    assert_eq!(list[1]["name"].as_str(), Some("by | hand"));
}

#[test]
fn markdown_escapes_the_cells() {
    let table = render_unmanaged_markdown(&objects());
    assert!(table.contains("by \\| hand"), "{table}");
    assert_eq!(table.lines().count(), 4);
}

/// The second object, refused by its provider's generation.
fn with_a_refusal() -> Vec<Unmanaged> {
    let mut objects = objects();
    objects[1]
        .refuse("ports.http.members: member m-10.0.0.31 is not named as skyplan names members");
    objects
}

#[test]
fn an_object_not_importable_says_why_in_every_format() {
    let objects = with_a_refusal();
    let text = render_discovery_text(&objects, Style::Plain);
    let block = text.split("\n\n").nth(1).unwrap();
    assert!(
        block.ends_with(
            "\n    not importable: ports.http.members: member m-10.0.0.31 is not named as skyplan names members"
        ),
        "{text}"
    );
    assert!(
        text.contains("2 objects that no resource manages. Adopt the 1 importable with `"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&render_discovery_json(&objects)).unwrap();
    assert_eq!(json["unmanaged"][1]["importable"], false);
    assert_eq!(
        json["unmanaged"][1]["why_not_importable"],
        "ports.http.members: member m-10.0.0.31 is not named as skyplan names members"
    );
    let toml: toml::Table = render_discovery_toml(&objects).parse().unwrap();
    let listed = &toml["unmanaged"].as_array().unwrap()[1];
    assert_eq!(listed["importable"].as_bool(), Some(false));
    assert!(listed["why-not-importable"]
        .as_str()
        .unwrap()
        .starts_with("ports.http.members: "));
}
