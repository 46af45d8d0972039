//! Where each resource and its keys are written in the config, with file paths as the
//! repository sees them: what GitHub annotations point at. Taken from the config before the
//! workspace closes, so a renderer needs no config (and does no IO): the caller says how a
//! file path is made relative (to the repository root, found on disk by the CLI).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::{Config, SourceLocation};

/// A position in a config file: `file` relative to the repository root, line and column 1-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

/// A resource's table header and the keys the config recorded for it, by path as the config
/// spells them (`zone`, `vip-addresses[0].subnet`, `floating-ips[1]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourcePlaces {
    pub table: Option<Place>,
    pub keys: BTreeMap<String, Place>,
}

/// Every configured resource's places, by address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places(pub BTreeMap<String, ResourcePlaces>);

impl Places {
    /// The places of every resource of `config`, each file made relative by `relative`.
    pub fn from_config(config: &Config, relative: impl Fn(&Path) -> PathBuf) -> Places {
        let place = |at: &SourceLocation| Place {
            file: relative(&at.file),
            line: at.line,
            column: at.column,
        };
        let places = config.resources.iter().map(|resource| {
            let keys = resource
                .keys
                .iter()
                .map(|(path, at)| (path.to_string(), place(at)))
                .collect();
            let table = Some(place(&resource.location));
            (resource.address.to_string(), ResourcePlaces { table, keys })
        });
        Places(places.collect())
    }

    /// Where the attribute `path` of the resource at `address` is best pointed at: its key when
    /// the config recorded it (or the first recorded key inside it, `floating-ips[0]` for
    /// `floating-ips`, or the nearest key around it), else the resource's table header; `None`
    /// for a resource the config no longer has.
    pub fn of_attribute(&self, address: &str, path: &str) -> Option<&Place> {
        let resource = self.0.get(address)?;
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

/// `a.b[0]` → `a.b`, `a.b` → `a`, `a` → none.
fn parent(path: &str) -> Option<&str> {
    path.rfind(['.', '['])
        .map(|cut| &path[..cut])
        .filter(|up| !up.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_resource_gone_from_the_config_has_no_place() {
        assert_eq!(places().of_attribute("load-balancer.gone", "zone"), None);
        assert_eq!(places().of_resource("load-balancer.gone"), None);
    }
}
