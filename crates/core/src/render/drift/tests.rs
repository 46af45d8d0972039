//! Snapshots of every drift format from one report with a drifted, a missing and an in-sync
//! resource, whose values need escaping in every format; and the checks a snapshot cannot make
//! (the XML parses, the annotations stay one line each, the workflow is valid YAML).

use std::path::PathBuf;

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};
use serde_json::{json, Value};

use super::*;
use crate::render::{Place, Places, ResourcePlaces, Style};

/// Every character some format must escape: XML `<&"'>`, Markdown `|` and backticks,
/// workflow commands `%`, `:`, `,` and line breaks.
const NASTY: &str = "a<b>&\"c'|`d`%:,\r\nend";

fn resource(address: &str, status: DriftStatus, items: Vec<DriftItem>) -> DriftResource {
    DriftResource {
        address: address.into(),
        provider: "cloudscale".into(),
        file: PathBuf::from("infra/skyplan.toml"),
        line: 12,
        column: 1,
        status,
        items,
    }
}

fn item(path: &str, expected: Value, actual: Value, impact: Impact, reason: &str) -> DriftItem {
    DriftItem {
        path: path.into(),
        expected,
        actual,
        impact,
        reason: reason.into(),
    }
}

fn report() -> DriftReport {
    let web = resource(
        "load-balancer.web",
        DriftStatus::Drifted,
        vec![
            item(
                "ports.http.algorithm",
                json!("round_robin"),
                json!("source_ip"),
                Impact::PoolRecreate,
                "pool tcp/http: a pool's algorithm cannot change in place: the pool is deleted and created again",
            ),
            item(
                "allowed-cidrs",
                json!(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]),
                json!(["0.0.0.0/0"]),
                Impact::Minimal,
                "listener tcp/80: allowed CIDRs are set in place",
            ),
            item(
                "health-monitor.http.host",
                json!("web.example.com"),
                json!(NASTY),
                Impact::Minimal,
                "health monitor of pool tcp/http: <host> is set in place;\r\n100% safe, a|b",
            ),
        ],
    );
    let mut shop = resource(
        "load-balancer.shop",
        DriftStatus::Missing,
        vec![item(
            "",
            json!({"name": "shop"}),
            Value::Null,
            Impact::None,
            "load balancer: deleted outside skyplan; apply creates it again, with a new address",
        )],
    );
    shop.file = PathBuf::from("infra/shop: a,b.toml");
    shop.line = 3;
    shop.column = 5;
    let mut cart = resource("load-balancer.cart", DriftStatus::NotApplied, vec![]);
    cart.line = 30;
    DriftReport {
        resources: vec![
            cart,
            resource("load-balancer.docs", DriftStatus::InSync, vec![]),
            shop,
            web,
        ],
        unmanaged: None,
    }
}

/// One resource in sync and one in the config that was never applied.
fn never_applied_report() -> DriftReport {
    DriftReport {
        resources: vec![
            resource("load-balancer.cart", DriftStatus::NotApplied, vec![]),
            resource("load-balancer.docs", DriftStatus::InSync, vec![]),
        ],
        unmanaged: None,
    }
}

fn in_sync_report() -> DriftReport {
    DriftReport {
        resources: vec![resource("load-balancer.docs", DriftStatus::InSync, vec![])],
        unmanaged: None,
    }
}

#[test]
fn drift_is_any_resource_not_in_sync() {
    assert!(report().has_drift());
    assert_eq!(report().impact(), Impact::PoolRecreate);
    assert!(!in_sync_report().has_drift());
    assert_eq!(in_sync_report().impact(), Impact::None);
}

#[test]
fn a_resource_never_applied_is_drift_counted_on_its_own() {
    let report = never_applied_report();
    assert!(report.has_drift());
    assert_eq!(report.count(DriftStatus::NotApplied), 1);
    assert_eq!(report.impact(), Impact::None);
    let text = render_drift_text(&report, Style::Plain);
    assert!(!text.contains("No drift"), "{text}");
    assert!(
        text.ends_with("Drift: 0 drifted, 0 missing, 1 not applied, 1 in sync; `skyplan plan` says what applying it does.\n"),
        "{text}"
    );
    assert!(text.contains("+ load-balancer.cart"), "{text}");
    let json: Value = serde_json::from_str(&render_drift_json(&report)).unwrap();
    assert_eq!(json["drift"], json!(true));
    assert_eq!(json["summary"]["not_applied"], json!(1));
    assert_eq!(json["resources"][0]["status"], json!("not-applied"));
    let markdown = render_drift_markdown(&report);
    assert!(!markdown.contains("no drift"), "{markdown}");
    let (elements, _) = parse_xml(&render_drift_junit(&report));
    assert_eq!(elements[1].attribute("failures"), "1");
    let github = render_drift_github(&report, &Places::default());
    assert_eq!(github.lines().count(), 1, "{github}");
    assert!(
        github.starts_with("::warning ") && github.contains("not applied"),
        "{github}"
    );
}

#[test]
fn text_report() {
    insta::assert_snapshot!(render_drift_text(&report(), Style::Plain));
}

#[test]
fn text_report_ends_with_the_summary() {
    let text = render_drift_text(&in_sync_report(), Style::Plain);
    assert_eq!(text, "No drift: 1 of 1 resource in sync.\n");
    let coloured = render_drift_text(&report(), Style::Colour);
    assert!(coloured.contains('\u{1b}'));
    assert!(!render_drift_text(&report(), Style::Plain).contains('\u{1b}'));
}

#[test]
fn json_report() {
    let value: Value = serde_json::from_str(&render_drift_json(&report())).unwrap();
    insta::assert_json_snapshot!(value, { ".skyplan_version" => "[version]" });
}

#[test]
fn json_drift_flag_matches_the_exit_code() {
    let value: Value = serde_json::from_str(&render_drift_json(&in_sync_report())).unwrap();
    assert_eq!(value["drift"], json!(false));
    assert_eq!(value["resources"][0]["status"], json!("in-sync"));
}

#[test]
fn markdown_report() {
    insta::assert_snapshot!(render_drift_markdown(&report()));
}

#[test]
fn markdown_table_rows_have_four_cells() {
    let markdown = render_drift_markdown(&report());
    for row in markdown.lines().filter(|l| l.starts_with('|')) {
        let unescaped_pipes = row
            .match_indices('|')
            .filter(|(i, _)| !row[..*i].ends_with('\\'));
        assert_eq!(unescaped_pipes.count(), 5, "{row}");
    }
}

#[test]
fn markdown_without_drift_says_so() {
    let markdown = render_drift_markdown(&in_sync_report());
    assert!(markdown.starts_with("## ✅ skyplan drift: no drift\n"));
    assert!(markdown.ends_with("In sync: `load-balancer.docs`.\n"));
}

#[test]
fn junit_report() {
    insta::assert_snapshot!(render_drift_junit(&report()));
}

/// An element as a JUnit reader sees it: its name and unescaped attributes.
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
}

impl Element {
    fn attribute(&self, key: &str) -> &str {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{} has no attribute {key}", self.name))
    }
}

/// The elements of an XML document, in order, and all its text, unescaped.
fn parse_xml(xml: &str) -> (Vec<Element>, String) {
    let mut reader = Reader::from_str(xml);
    let (mut elements, mut text) = (vec![], String::new());
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attributes = e
                    .attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        let key = String::from_utf8(a.key.as_ref().to_vec()).unwrap();
                        let value = a.normalized_value(XmlVersion::Explicit1_0).unwrap();
                        (key, value.into_owned())
                    })
                    .collect();
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                elements.push(Element { name, attributes });
            }
            Event::Text(t) => text.push_str(&t.xml10_content().unwrap()),
            Event::GeneralRef(r) => {
                let name = r.decode().unwrap();
                let resolved = quick_xml::escape::resolve_predefined_entity(&name).unwrap();
                text.push_str(resolved);
            }
            Event::Eof => return (elements, text),
            _ => {}
        }
    }
}

#[test]
fn junit_parses_with_the_counts_dashboards_read() {
    let (elements, text) = parse_xml(&render_drift_junit(&report()));
    let names: Vec<&str> = elements.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "testsuites",
            "testsuite",
            "testcase",
            "failure",
            "testcase",
            "testcase",
            "failure",
            "testcase",
            "failure"
        ]
    );
    let suite = &elements[1];
    assert_eq!(suite.attribute("name"), "skyplan drift");
    assert_eq!(suite.attribute("tests"), "4");
    assert_eq!(suite.attribute("failures"), "3");
    assert_eq!(suite.attribute("errors"), "0");
    let (web, failure) = (&elements[7], &elements[8]);
    assert_eq!(web.attribute("classname"), "cloudscale");
    assert_eq!(web.attribute("name"), "load-balancer.web");
    assert_eq!(failure.attribute("message"), "3 attributes drifted");
    assert_eq!(failure.attribute("type"), "drift");
    assert_eq!(elements[5].attribute("file"), "infra/shop: a,b.toml");
    // The nasty value comes back exactly, as JSON (its CR and LF escaped by JSON itself).
    assert!(text.contains(&json!(NASTY).to_string()), "{text}");
}

#[test]
fn junit_without_drift_has_no_failures() {
    let (elements, _) = parse_xml(&render_drift_junit(&in_sync_report()));
    assert_eq!(elements[1].attribute("failures"), "0");
    assert_eq!(elements.len(), 3);
}

#[test]
fn github_report() {
    insta::assert_snapshot!(render_drift_github(&report(), &Places::default()));
}

#[test]
fn github_annotations_are_one_command_each() {
    let commands = render_drift_github(&report(), &Places::default());
    let lines: Vec<&str> = commands.lines().collect();
    // One per drifted item: cart never applied, the missing shop, three attributes of web.
    assert_eq!(lines.len(), 5);
    assert!(lines
        .iter()
        .all(|l| l.starts_with("::error ") || l.starts_with("::warning ")));
    assert!(lines[0].starts_with("::warning file=infra/skyplan.toml,line=30,col=1,"));
    assert!(lines[1].starts_with("::error file=infra/shop%3A a%2Cb.toml,line=3,col=5,"));
    assert!(render_drift_github(&in_sync_report(), &Places::default()).is_empty());
}

#[test]
fn github_annotations_point_at_the_key_where_the_config_has_it() {
    let at = |line| Place {
        file: PathBuf::from("infra/skyplan.toml"),
        line,
        column: 1,
    };
    let web = ResourcePlaces {
        table: Some(at(30)),
        keys: [("allowed-cidrs".to_string(), at(33))].into(),
        origin: Default::default(),
    };
    let places = Places([("load-balancer.web".to_string(), web)].into());
    let commands = render_drift_github(&report(), &places);
    let line = |needle: &str| commands.lines().find(|l| l.contains(needle)).unwrap();
    assert!(line("::allowed-cidrs").contains("file=infra/skyplan.toml,line=33,col=1,"));
    assert!(
        line("::ports.http.algorithm").contains(",line=30,col=1,"),
        "else the table"
    );
    assert!(
        line("load-balancer.shop").contains("file=infra/shop%3A a%2Cb.toml,line=3,col=5,"),
        "a resource without places: where the report has it"
    );
}

#[test]
fn github_level_follows_the_class_of_restoring() {
    let commands = render_drift_github(&report(), &Places::default());
    let level = |needle: &str| {
        let line = commands.lines().find(|l| l.contains(needle)).unwrap();
        line.split_once(' ').unwrap().0.to_string()
    };
    assert_eq!(level("::ports.http.algorithm"), "::error");
    assert_eq!(level("::allowed-cidrs"), "::warning");
    assert_eq!(level("load-balancer.shop"), "::error");
}

/// The workflow example parses as YAML and wires what the reports rely on.
#[test]
fn ci_workflow_example() {
    let text = include_str!("../../../../../examples/ci/drift.yml");
    let workflow: serde_norway::Value = serde_norway::from_str(text).unwrap();
    let workflow: Value = serde_json::to_value(workflow).unwrap();
    assert!(workflow["on"]["schedule"][0]["cron"].is_string());
    assert!(workflow["on"].get("workflow_dispatch").is_some());
    let job = &workflow["jobs"]["drift"];
    assert_eq!(
        job["env"]["CLOUDSCALE_API_TOKEN"],
        json!("${{ secrets.CLOUDSCALE_API_TOKEN }}")
    );
    let steps = job["steps"].as_array().unwrap();
    let step = |needle: &str| {
        steps
            .iter()
            .find(|s| s.to_string().contains(needle))
            .unwrap_or_else(|| panic!("no step with {needle}"))
    };
    step("actions/checkout@");
    step("dtolnay/rust-toolchain@");
    for format in ["github", "junit", "markdown"] {
        step(&format!("--format {format}"));
    }
    assert_eq!(step("actions/upload-artifact@")["if"], json!("always()"));
    assert_eq!(
        step("--format junit")["if"],
        step("--format markdown")["if"]
    );
}

/// In sync but for one load balancer made by hand, looked for with `--unmanaged`.
fn unmanaged_report() -> DriftReport {
    use crate::model::{Address, ResourceKind};
    use crate::provider::discover::{Maker, Unmanaged};
    let mut report = in_sync_report();
    report.unmanaged = Some(vec![Unmanaged {
        provider: "cloudscale".into(),
        kind: ResourceKind::LoadBalancer,
        id: "7d1c0000-0000-4000-8000-000000000009".into(),
        name: "by-hand".into(),
        made_by: Maker::Unknown,
        cluster: None,
        service: None,
        address: Address::new(ResourceKind::LoadBalancer, "by-hand"),
        summary: "192.0.2.9 in lpg1".into(),
        importable: true,
        why_not_importable: None,
    }]);
    report
}

#[test]
fn an_unmanaged_object_is_drift_in_every_format() {
    let report = unmanaged_report();
    assert!(report.has_drift());
    let text = render_drift_text(&report, Style::Plain);
    assert!(text.contains("? load-balancer.by-hand"), "{text}");
    assert!(text.contains("1 unmanaged"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&render_drift_json(&report)).unwrap();
    assert_eq!(json["drift"], true);
    assert_eq!(json["summary"]["unmanaged"], 1);
    assert_eq!(json["unmanaged"][0]["name"], "by-hand");
    assert!(render_drift_markdown(&report).contains("| `load-balancer.by-hand` by-hand |"));
    let junit = render_drift_junit(&report);
    assert!(junit.contains(r#"tests="2" failures="1""#), "{junit}");
    assert!(junit.contains("unmanaged load-balancer.by-hand"), "{junit}");
    let github = render_drift_github(&report, &Places::default());
    assert!(
        github.starts_with("::warning title=unmanaged%3A load-balancer by-hand::"),
        "{github}"
    );
}

#[test]
fn unmanaged_looked_for_and_none_found_is_said_and_is_no_drift() {
    let mut report = in_sync_report();
    report.unmanaged = Some(vec![]);
    assert!(!report.has_drift());
    let text = render_drift_text(&report, Style::Plain);
    assert!(text.contains("nothing unmanaged"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&render_drift_json(&report)).unwrap();
    assert_eq!(json["unmanaged"], serde_json::json!([]));
    let plain: serde_json::Value =
        serde_json::from_str(&render_drift_json(&in_sync_report())).unwrap();
    assert!(
        plain.get("unmanaged").is_none(),
        "not looked for, not written"
    );
}
