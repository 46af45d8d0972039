//! Where each resource and its keys are written in the config, with file paths as the
//! repository sees them: what GitHub annotations point at. Taken from the config before the
//! workspace closes, so a renderer needs no config (and does no IO): the caller says how a
//! file path is made relative (to the repository root, found on disk by the CLI). Each
//! resource keeps its [`Origin`], which maps an attribute's path as the plan spells it
//! (`ports.http.algorithm`, `nodes.node-1.labels.tier`) to the key that sets it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{Config, Origin, Resource, SourceLocation, WrittenKeys};

/// A position in a config file: `file` relative to the repository root, line and column 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

/// A resource's table header and its keys, by path as the config spells them: every key of its
/// table as written (`timeouts.member-connect-ms`, `ports.[http].name`), besides those the
/// section recorded (`vip-addresses[0].subnet`, `floating-ips[1]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourcePlaces {
    pub table: Option<Place>,
    pub keys: BTreeMap<String, Place>,
    /// What maps an attribute's path as the plan spells it to the key that sets it (through
    /// its kind's schema): kept rather than applied here, so a renderer needs neither the
    /// config nor the plan's paths in advance. `Origin::default()` maps nothing.
    pub origin: Origin,
}

impl ResourcePlaces {
    /// A resource's table header, the keys its section recorded and every key its table
    /// writes (which win: they are the keys' own positions, not their values').
    fn of(
        resource: &Resource,
        place: impl Fn(&SourceLocation) -> Place,
        files: &mut WrittenKeys,
    ) -> ResourcePlaces {
        let recorded = resource
            .keys
            .iter()
            .map(|(path, at)| (path.to_string(), at));
        let written = resource.origin.written_keys(&resource.address, files);
        let written = written.iter().map(|(path, at)| (path.clone(), at));
        let keys = recorded.chain(written).map(|(path, at)| (path, place(at)));
        ResourcePlaces {
            table: Some(place(&resource.location)),
            keys: keys.collect(),
            origin: resource.origin.clone(),
        }
    }
}

/// Every configured resource's places, by address.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Places(pub BTreeMap<String, ResourcePlaces>);

impl Places {
    /// The places of every resource of `config`, each file made relative by `relative`.
    pub fn from_config(config: &Config, relative: impl Fn(&Path) -> PathBuf) -> Places {
        let place = |at: &SourceLocation| Place {
            file: relative(&at.file),
            line: at.line,
            column: at.column,
        };
        let mut files = WrittenKeys::default();
        let places = config.resources.iter().map(|resource| {
            let places = ResourcePlaces::of(resource, place, &mut files);
            (resource.address.to_string(), places)
        });
        Places(places.collect())
    }

    /// Where the attribute `path` (as the plan spells it) of the resource at `address` is best
    /// pointed at: the key that sets it (`algorithm` for `ports.http.algorithm` when the port
    /// inherits it), or the first key inside it (`floating-ips[0]` for `floating-ips`), or the
    /// nearest key around it (a default: not written), else the resource's table header;
    /// `None` for a resource the config no longer has.
    pub fn of_attribute(&self, address: &str, path: &str) -> Option<&Place> {
        let resource = self.0.get(address)?;
        let written = resource.origin.written_key(path);
        let path = written.as_deref().unwrap_or(path);
        key_place(&resource.keys, path).or(resource.table.as_ref())
    }

    /// The resource's table header, if the config has it.
    pub fn of_resource(&self, address: &str) -> Option<&Place> {
        self.0.get(address)?.table.as_ref()
    }
}

fn key_place<'a>(keys: &'a BTreeMap<String, Place>, path: &str) -> Option<&'a Place> {
    if path.is_empty() {
        return None;
    }
    if let Some(exact) = keys.get(path) {
        return Some(exact);
    }
    let inside = keys
        .range(path.to_string()..)
        .take_while(|(key, _)| key.starts_with(path))
        .find(|(key, _)| matches!(key.as_bytes().get(path.len()), Some(b'.' | b'[')));
    if let Some((_, place)) = inside {
        return Some(place);
    }
    parent(path).and_then(|up| keys.get(up).or_else(|| key_place(keys, up)))
}

/// `a.b[0]` → `a.b`, `a.b` → `a`, `ports.[http]` → `ports`, `a` → none.
fn parent(path: &str) -> Option<&str> {
    path.rfind(['.', '['])
        .map(|cut| path[..cut].trim_end_matches('.'))
        .filter(|up| !up.is_empty())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::config::{KeyLocations, KindSchema, ResourceSpec};
    use crate::model::{Address, ResourceKind};

    fn at(line: usize) -> Place {
        Place {
            file: PathBuf::from("infra/skyplan.toml"),
            line,
            column: 1,
        }
    }

    fn places() -> Places {
        let keys = [
            ("zone", 3),
            ("floating-ips[0]", 5),
            ("vip-addresses[0].subnet", 7),
        ]
        .into_iter()
        .map(|(k, line)| (k.to_string(), at(line)))
        .collect();
        let web = ResourcePlaces {
            table: Some(at(1)),
            keys,
            origin: Origin::default(),
        };
        Places([("load-balancer.web".to_string(), web)].into())
    }

    #[test]
    fn an_attribute_points_at_its_key_where_the_config_recorded_it() {
        let places = places();
        let line = |path| places.of_attribute("load-balancer.web", path).unwrap().line;
        assert_eq!(line("zone"), 3);
        assert_eq!(line("floating-ips"), 5, "the first recorded key inside");
        assert_eq!(
            line("vip-addresses[0].subnet.uuid"),
            7,
            "the nearest key around"
        );
        assert_eq!(line("ports.http.algorithm"), 1, "else the table header");
        assert_eq!(line(""), 1, "the whole resource: its table header");
        assert_eq!(line("zones"), 1, "a longer name is not inside");
    }

    /// A load balancer and a node policy, keys written plain, inline, per element and
    /// inherited (`algorithm`, which each port takes from the load balancer).
    const WRITTEN: &str = r#"[load-balancer.web]
provider = "test"
algorithm = "round_robin"
allowed-cidrs = ["192.0.2.0/24"]
timeouts = { member-connect-ms = 3000 }

[[load-balancer.web.ports]]
name = "http"
port = 80

[[load-balancer.web.ports]]
port = 443

[nodes.web]
labels = { tier = "web", "app.kubernetes.io/name" = "web" }
taints = [{ key = "dedicated", value = "web", effect = "NoSchedule" }]
"#;

    fn schema(root: &str) -> KindSchema {
        let definitions = json!({
            "Lb": { "type": "object", "properties": {
                "provider": { "type": "string" },
                "algorithm": { "type": "string" },
                "flavor": { "type": "string" },
                "allowed-cidrs": { "type": "array", "items": { "type": "string" } },
                "timeouts": { "anyOf": [{ "$ref": "#/$defs/Timeouts" }, { "type": "null" }] },
                "ports": { "type": "array", "items": { "$ref": "#/$defs/Port" } },
            } },
            "Timeouts": { "type": "object", "properties": {
                "client-data-ms": { "type": "integer" },
                "member-connect-ms": { "type": "integer" } } },
            "Port": { "type": "object", "properties": {
                "name": { "type": "string" }, "port": { "type": "integer" },
                "node-port": { "type": "integer" } } },
            "Nodes": { "type": "object", "properties": {
                "labels": { "type": "object", "additionalProperties": { "type": "string" } },
                "taints": { "type": "array", "items": { "$ref": "#/$defs/Taint" } } } },
            "Taint": { "type": "object", "properties": {
                "key": { "type": "string" }, "effect": { "type": "string" } } },
        });
        KindSchema::from_json(json!({ "$ref": format!("#/$defs/{root}") }), definitions)
    }

    fn written(kind: ResourceKind, root: &str, on_each: Option<&'static str>) -> ResourcePlaces {
        let resource = Resource {
            address: Address::new(kind, "web"),
            provider: "test".into(),
            location: SourceLocation {
                file: Arc::from(Path::new("a.toml")),
                line: 1,
                column: 1,
            },
            keys: KeyLocations::default(),
            spec: ResourceSpec::new(()),
            depends_on: vec![],
            origin: Origin::of_text(WRITTEN, schema(root), on_each),
        };
        let place = |at: &SourceLocation| Place {
            file: at.file.to_path_buf(),
            line: at.line,
            column: at.column,
        };
        ResourcePlaces::of(&resource, place, &mut WrittenKeys::default())
    }

    fn written_places() -> Places {
        Places(BTreeMap::from([
            ("lb".into(), written(ResourceKind::LoadBalancer, "Lb", None)),
            (
                "nodes".into(),
                written(ResourceKind::Nodes, "Nodes", Some("nodes")),
            ),
        ]))
    }

    #[test]
    fn an_attribute_points_at_the_key_written_for_it() {
        let places = written_places();
        let at = |address, path| {
            let place = places.of_attribute(address, path).unwrap();
            (place.line, place.column)
        };
        assert_eq!(at("lb", "allowed-cidrs"), (4, 1), "a plain key");
        assert_eq!(
            at("lb", "timeouts.member-connect-ms"),
            (5, 14),
            "a nested key"
        );
        assert_eq!(at("lb", "ports.http.name"), (8, 1), "an element's key");
        assert_eq!(at("lb", "ports.443.port"), (12, 1), "an unnamed element's");
        assert_eq!(at("lb", "ports.http.algorithm"), (3, 1), "an inherited key");
        assert_eq!(at("nodes", "nodes.node-1.labels.tier"), (15, 12), "a label");
        let named = "nodes.node-1.labels.app.kubernetes.io/name";
        assert_eq!(at("nodes", named), (15, 26), "a label whose key holds dots");
        let dotted = "nodes.ip-10-0-0-1.internal.taints.dedicated:NoSchedule";
        assert_eq!(at("nodes", dotted), (16, 1), "a taint: the list");
    }

    #[test]
    fn an_attribute_not_written_points_at_what_holds_it() {
        let places = written_places();
        let line = |address, path| places.of_attribute(address, path).unwrap().line;
        assert_eq!(line("lb", "timeouts.client-data-ms"), 5, "its table");
        assert_eq!(line("lb", "ports.http.node-port"), 7, "its element");
        assert_eq!(line("lb", "ports.https.name"), 7, "else the list");
        assert_eq!(line("lb", "flavor"), 1, "else the table header");
        assert_eq!(line("nodes", "nodes.node-1.labels.team"), 15, "the labels");
    }

    #[test]
    fn a_resource_gone_from_the_config_has_no_place() {
        assert_eq!(places().of_attribute("load-balancer.gone", "zone"), None);
        assert_eq!(places().of_resource("load-balancer.gone"), None);
    }
}
