//! A provider section of the tests' own, and what the stage does with a section's tables:
//! routing by provider, duplicates across files and providers, a provider without its table,
//! tables naming no provider of their kind, positions of a section's serde errors, controller
//! mode that can never converge, the schema.

use std::ops::Range;

use schemars::{JsonSchema, SchemaGenerator};
use serde::Deserialize;
use serde_spanned::Spanned;
use toml::de::ValueDeserializer;

use super::*;
use crate::config::section::{
    raw, Checker, Declared, Invalid, Opaque, Raw, Resolving, Resource, SectionSchema, Table,
};
use crate::model::{Address, ResourceKind};

/// Provider "test": `[provider.test]` and its load balancers and clusters.
pub(in crate::config) struct TestSection;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTestSettings {
    #[schemars(with = "Option<String>")]
    endpoint: Option<Spanned<String>>,
    /// A credential: never from a variable.
    #[allow(dead_code)]
    secret: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTestTable {
    provider: String,
    #[schemars(with = "Option<i64>")]
    size: Option<Spanned<i64>>,
    /// Controller mode on this cluster.
    ccm: Option<String>,
    /// Text the spec holds, to see what a table's strings become.
    label: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    ports: Vec<RawTestPort>,
}

// Parsed so that a large config of these reads like a real one; never read.
#[allow(dead_code)]
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawTestPort {
    port: i64,
    node_port: Option<i64>,
}

impl ConfigSection for TestSection {
    fn provider(&self) -> &'static str {
        "test"
    }

    fn kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::LoadBalancer, ResourceKind::Cluster]
    }

    fn describe(&self, kind: ResourceKind) -> Option<&'static str> {
        (kind == ResourceKind::Cluster).then_some("a test cluster")
    }

    fn secret_keys(&self) -> &'static [(&'static str, &'static str)] {
        &[("secret", "the environment variable TEST_SECRET")]
    }

    fn parse_settings(&self, table: ValueDeserializer<'_>) -> Result<Raw, toml::de::Error> {
        raw::<RawTestSettings>(table)
    }

    fn parse_resource(
        &self,
        _kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error> {
        raw::<RawTestTable>(table)
    }

    fn settings(&self, table: &Table<'_>, _problems: &mut Problems) -> Opaque {
        let settings: &RawTestSettings = table.get();
        Opaque::new(settings.endpoint.as_ref().map(|e| e.get_ref().clone()))
    }

    fn resource(
        &self,
        kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        _context: &Resolving<'_>,
        problems: &mut Problems,
    ) -> Resource {
        let raw: &RawTestTable = table.get();
        let mut check = Checker::new(table.file, problems);
        let size = raw.size.as_ref().and_then(|size| {
            check.number(size, |n| {
                u32::try_from(n).map_err(|_| Invalid::new(format!("{n} is not a size")))
            })
        });
        Resource {
            address: Address::new(kind, key),
            provider: raw.provider.clone(),
            location: table.location(),
            keys: KeyLocations::default(),
            spec: match &raw.label {
                Some(label) => ResourceSpec::new((size.unwrap_or(1), label.clone())),
                None => ResourceSpec::new(size.unwrap_or(1)),
            },
            depends_on: vec![],
            origin: Default::default(),
        }
    }

    fn validate(&self, declared: &Declared<'_, '_>, problems: &mut Problems) {
        // A rule across the section's tables: sizes add up to at most 10.
        let tables = declared.tables(ResourceKind::LoadBalancer);
        let sizes: Vec<_> = tables
            .filter_map(|(_, t)| Some((t, t.get::<RawTestTable>().size.as_ref()?)))
            .collect();
        let total: i64 = sizes.iter().map(|(_, size)| *size.get_ref()).sum();
        if let Some((table, size)) = sizes.last().filter(|_| total > 10) {
            Checker::new(table.file, problems).report(size.span(), Invalid::new("too big"));
        }
    }

    fn embedded_at(&self, settings: &Table<'_>) -> Option<Range<usize>> {
        let endpoint = settings.get::<RawTestSettings>().endpoint.as_ref()?;
        (endpoint.get_ref() == "embedded").then(|| endpoint.span())
    }

    fn controller_mode<'t>(&self, table: &'t Table<'_>) -> Option<(Range<usize>, &'t str)> {
        let cluster = table.get::<RawTestTable>().ccm.as_deref()?;
        Some((table.span(), cluster))
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema {
        SectionSchema {
            settings: Some(generator.subschema_for::<RawTestSettings>()),
            resources: vec![
                (
                    ResourceKind::LoadBalancer,
                    generator.subschema_for::<RawTestTable>(),
                ),
                (
                    ResourceKind::Cluster,
                    generator.subschema_for::<RawTestTable>(),
                ),
            ],
        }
    }
}

/// Provider "lab": clusters only, with no `[provider.lab]` table; `real = true` makes one a
/// real cluster.
pub(in crate::config) struct LabSection;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawLabCluster {
    provider: String,
    #[serde(default)]
    real: bool,
}

impl ConfigSection for LabSection {
    fn provider(&self) -> &'static str {
        "lab"
    }

    fn kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::Cluster]
    }

    fn has_settings(&self) -> bool {
        false
    }

    fn describe(&self, _kind: ResourceKind) -> Option<&'static str> {
        Some("a lab cluster")
    }

    fn parse_resource(
        &self,
        _kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error> {
        raw::<RawLabCluster>(table)
    }

    fn resource(
        &self,
        kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        _context: &Resolving<'_>,
        _problems: &mut Problems,
    ) -> Resource {
        let raw: &RawLabCluster = table.get();
        Resource {
            address: Address::new(kind, key),
            provider: raw.provider.clone(),
            location: table.location(),
            keys: KeyLocations::default(),
            spec: ResourceSpec::new(raw.real),
            depends_on: vec![],
            origin: Default::default(),
        }
    }

    fn real_cluster_at(&self, table: &Table<'_>) -> Option<Range<usize>> {
        table.get::<RawLabCluster>().real.then(|| table.span())
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema {
        SectionSchema {
            settings: Some(generator.subschema_for::<RawTestSettings>()),
            resources: vec![(
                ResourceKind::Cluster,
                generator.subschema_for::<RawLabCluster>(),
            )],
        }
    }
}

const TEST: &str = "[provider.test]\nendpoint = \"https://api.example.com\"\n";

fn size_of(config: &Config, address: &str) -> u32 {
    let resource = config
        .resources
        .iter()
        .find(|r| r.address.to_string() == address);
    *resource.unwrap().spec.get::<u32>().unwrap()
}

#[test]
fn a_section_s_tables_resolve_through_it() {
    let text = format!(
        "{TEST}[load-balancer.a]\nprovider = \"test\"\nsize = 3\n\
         [cluster.c]\nprovider = \"test\"\n"
    );
    let config = load_str(&text).unwrap();
    assert_eq!(size_of(&config, "load-balancer.a"), 3);
    assert_eq!(size_of(&config, "cluster.c"), 1);
    let endpoint: &Option<String> = config.providers.get("test").unwrap();
    assert_eq!(endpoint.as_deref(), Some("https://api.example.com"));
    let locations: Vec<_> = config
        .resources
        .iter()
        .map(|r| r.location.to_string())
        .collect();
    assert_eq!(locations, ["a.toml:6:1", "a.toml:3:1"], "sorted by address");
}

#[test]
fn a_section_s_values_and_rules_are_reported_where_they_are_written() {
    let text = format!(
        "{TEST}[load-balancer.a]\nprovider = \"test\"\nsize = -1\n\
         [load-balancer.b]\nprovider = \"test\"\nsize = 20\n\
         [load-balancer.c]\nprovider = \"test\"\nbogus = 1\n"
    );
    assert_eq!(
        errors(&text),
        [
            "a.toml:5:8: -1 is not a size",
            "a.toml:8:8: too big",
            "a.toml:11:1: unknown key `bogus`",
        ]
    );
}

#[test]
fn a_resource_of_a_section_needs_its_provider_table() {
    assert_eq!(
        errors("[load-balancer.a]\nprovider = \"test\"\n"),
        ["a.toml:2:12: provider `test` has no [provider.test] table"]
    );
}

#[test]
fn a_table_naming_no_provider_of_its_kind_is_refused() {
    assert_eq!(
        errors("[load-balancer.a]\nprovider = \"aws\"\nzone = 1\n"),
        ["a.toml:2:12: `aws` is not a supported provider"]
    );
    let error = load_str("[load-balancer.a]\nprovider = \"lab\"\n").unwrap_err();
    assert_eq!(
        error.lines(),
        ["a.toml:2:12: `lab` cannot manage load balancers"]
    );
    assert_eq!(
        error.problems()[0].help_text(),
        Some("expected one of \"test\"")
    );
    let error = load_str("[cluster.c]\nzone = 1\n").unwrap_err();
    assert_eq!(error.lines(), ["a.toml:1:1: a cluster needs a provider"]);
    assert_eq!(
        error.problems()[0].help_text(),
        Some("write provider = \"test\" (a test cluster) or \"lab\" (a lab cluster)"),
        "what each provider makes of the table, as the sections describe it"
    );
}

#[test]
fn a_provider_without_settings_needs_no_table() {
    let config = load_str("[cluster.c]\nprovider = \"lab\"\n").unwrap();
    assert_eq!(config.resources[0].spec.get::<bool>(), Some(&false));
    assert_eq!(
        errors("[provider.lab]\n"),
        ["a.toml:1:1: `lab` has no [provider.lab] table: its resources say how they are reached"],
    );
    let error = load_str("[provider.aws]\nregion = 1\n").unwrap_err();
    assert_eq!(
        error.lines(),
        ["a.toml:1:1: `aws` is not a supported provider"]
    );
    assert_eq!(
        error.problems()[0].help_text(),
        Some("the providers with a table: \"test\"")
    );
}

#[test]
fn a_name_is_one_resource_across_providers_and_files() {
    let lb = "[load-balancer.a]\nprovider = \"test\"\n";
    let files = [("a.toml", TEST), ("b.toml", lb), ("c.toml", lb)];
    assert_eq!(
        load_files(&files).unwrap_err().lines(),
        ["c.toml:1:1: load-balancer.a is defined twice"]
    );
    let lab = "[cluster.a]\nprovider = \"lab\"\n";
    let ours = "[cluster.a]\nprovider = \"test\"\n";
    for (first, second) in [(lab, ours), (ours, lab)] {
        let files = [("a.toml", TEST), ("b.toml", first), ("c.toml", second)];
        assert_eq!(
            load_files(&files).unwrap_err().lines(),
            ["c.toml:1:1: cluster.a is defined twice"]
        );
    }
    let files = [("a.toml", TEST), ("b.toml", TEST)];
    assert_eq!(
        load_files(&files).unwrap_err().lines(),
        ["b.toml:1:1: [provider.test] is defined twice"]
    );
}

#[test]
fn controller_mode_on_a_real_cluster_with_an_embedded_cloud_is_refused() {
    let text = |endpoint: &str, real: bool| {
        format!(
            "[provider.test]\nendpoint = \"{endpoint}\"\n\
             [cluster.prod]\nprovider = \"lab\"\nreal = {real}\n\
             [load-balancer.a]\nprovider = \"test\"\nccm = \"prod\"\n"
        )
    };
    let error = load_str(&text("embedded", true)).unwrap_err();
    let lines = error.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("a.toml:6:1: mode = \"ccm\" can never converge"),
        "{lines:?}"
    );
    let notes: Vec<_> = (error.problems()[0].notes().iter())
        .map(|n| n.line())
        .collect();
    assert_eq!(
        notes,
        [
            "a.toml:2:12: [provider.test] is embedded here",
            "a.toml:3:1: [cluster.prod] is a real cluster, reached by kubeconfig",
        ]
    );
    assert!(load_str(&text("embedded", false)).is_ok());
    assert!(load_str(&text("https://api.example.com", true)).is_ok());
}

#[test]
fn the_schema_offers_a_section_s_tables_beside_core_s() {
    let schema = json_schema(&[&TestSection, &LabSection]);
    assert_eq!(
        schema["$defs"]["RawProviders"]["properties"]["test"]["$ref"],
        "#/$defs/RawTestSettings"
    );
    let load_balancers = &schema["properties"]["load-balancer"]["additionalProperties"];
    assert_eq!(
        load_balancers["$ref"], "#/$defs/RawTestTable",
        "the only one"
    );
    let clusters = &schema["properties"]["cluster"]["additionalProperties"]["anyOf"];
    let refs: Vec<_> = clusters
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["$ref"])
        .collect();
    assert_eq!(
        refs,
        ["#/$defs/RawTestTable", "#/$defs/RawLabCluster"],
        "in the sections' order"
    );
    assert!(!schema.to_string().contains("null"), "TOML has no null");
}
