//! PhoenixNAP's config section: `[provider.phoenixnap]` and `[load-balancer.NAME]` with
//! provider "phoenixnap" → [`PhoenixnapSettings`] and [`PhoenixnapLoadBalancerSpec`]. Each bad
//! value is reported at its position and replaced by its default, so one run reports
//! everything.

mod raw;

use schemars::SchemaGenerator;
use skyplan_core::config::section::{
    self, choice, endpoint, Checker, ConfigSection, Declared, Endpoint, Invalid, KeyLocations,
    Opaque, Problem, Problems, Raw, Resolving, Resource, ResourceSpec, SectionSchema, SourceFile,
    Table,
};
use skyplan_core::model::{Address, ResourceKind};
use skyplan_kubernetes::config::service_ref;
use toml::de::ValueDeserializer;

use crate::spec::{PhoenixnapLoadBalancerSpec, PhoenixnapSettings, PnapLocation};
use raw::{RawPhoenixnap, RawPnapLoadBalancer};

/// The section the registry lists.
pub struct PhoenixnapConfig;

impl ConfigSection for PhoenixnapConfig {
    fn provider(&self) -> &'static str {
        crate::diff::PROVIDER
    }

    fn secret_keys(&self) -> &'static [(&'static str, &'static str)] {
        const CREDENTIALS: &str =
            "PNAP_CLIENT_ID and PNAP_CLIENT_SECRET, or the CCM's cloud-sa.json (cloud-sa-json)";
        &[("client-id", CREDENTIALS), ("client-secret", CREDENTIALS)]
    }

    fn kinds(&self) -> &'static [ResourceKind] {
        &[ResourceKind::LoadBalancer]
    }

    fn parse_settings(&self, table: ValueDeserializer<'_>) -> Result<Raw, toml::de::Error> {
        section::raw::<RawPhoenixnap>(table)
    }

    fn parse_resource(
        &self,
        _kind: ResourceKind,
        table: ValueDeserializer<'_>,
    ) -> Result<Raw, toml::de::Error> {
        section::raw::<RawPnapLoadBalancer>(table)
    }

    fn settings(&self, table: &Table<'_>, problems: &mut Problems) -> Opaque {
        Opaque::new(settings(table, problems))
    }

    fn resource(
        &self,
        _kind: ResourceKind,
        key: &str,
        table: &Table<'_>,
        context: &Resolving<'_>,
        problems: &mut Problems,
    ) -> Resource {
        let location = (context.settings)
            .and_then(Opaque::get::<PhoenixnapSettings>)
            .and_then(|s| s.location);
        load_balancer(key, table, location, problems)
    }

    fn validate(&self, declared: &Declared<'_, '_>, problems: &mut Problems) {
        validate(declared, problems)
    }

    fn schema(&self, generator: &mut SchemaGenerator) -> SectionSchema {
        SectionSchema {
            settings: Some(generator.subschema_for::<RawPhoenixnap>()),
            resources: vec![(
                ResourceKind::LoadBalancer,
                generator.subschema_for::<RawPnapLoadBalancer>(),
            )],
        }
    }
}

fn settings(table: &Table<'_>, problems: &mut Problems) -> PhoenixnapSettings {
    let mut check = Checker::new(table.file, problems);
    let section: &RawPhoenixnap = table.get();
    for key in [&section.client_id, &section.client_secret]
        .into_iter()
        .flatten()
    {
        let message = "PhoenixNAP credentials do not belong in config files";
        let help = "remove the key; set PNAP_CLIENT_ID and PNAP_CLIENT_SECRET, or name the CCM's secret file with cloud-sa-json = \"cloud-sa.json\"";
        // The snippet would show the secret's line.
        let problem = Problem::at(table.file, key.span(), message).without_snippet();
        check.push(problem.with_help(help));
    }
    PhoenixnapSettings {
        endpoint: section
            .endpoint
            .as_ref()
            .and_then(|e| check.text(e, endpoint))
            .unwrap_or(Endpoint::Embedded),
        token_url: section
            .token_url
            .as_ref()
            .and_then(|url| check.text(url, web_url)),
        location: section
            .location
            .as_ref()
            .and_then(|l| check.text(l, choice)),
        cloud_sa_json: section
            .cloud_sa_json
            .as_ref()
            .map(|path| table.file.path_value(path)),
    }
}

fn web_url(text: &str) -> Result<String, Invalid> {
    match endpoint(text) {
        Ok(Endpoint::Url(url)) => Ok(url),
        _ => Err(Invalid::new(format!("`{text}` is not an http(s) URL")).help(
            "write the token URL, e.g. https://auth.phoenixnap.com/auth/realms/BMC/protocol/openid-connect/token",
        )),
    }
}

/// Where the names taken from the PhoenixNAP catalog and the cluster are written
/// (`public-network`, `location`, `cluster`, `service`), for plan errors about an unknown or
/// unusable one (`Resource::location_of`).
fn catalog_keys(raw: &RawPnapLoadBalancer, file: &SourceFile) -> KeyLocations {
    let mut keys = KeyLocations::default();
    keys.insert(
        "public-network",
        file.key_location(&raw.public_network.span()),
    );
    if let Some(location) = &raw.location {
        keys.insert("location", file.key_location(&location.span()));
    }
    keys.insert("cluster", file.key_location(&raw.cluster.span()));
    keys.insert("service", file.key_location(&raw.service.span()));
    keys
}

fn load_balancer(
    key: &str,
    table: &Table<'_>,
    default_location: Option<PnapLocation>,
    problems: &mut Problems,
) -> Resource {
    let mut check = Checker::new(table.file, problems);
    let section: &RawPnapLoadBalancer = table.get();
    let cluster = Address::new(ResourceKind::Cluster, section.cluster.get_ref());
    let (namespace, name) = check
        .text(&section.service, service_ref)
        .unwrap_or_default();
    let location = match &section.location {
        Some(location) => check.text(location, choice),
        None => default_location,
    };
    let spec = PhoenixnapLoadBalancerSpec {
        cluster: cluster.clone(),
        namespace,
        name,
        public_network: section.public_network.get_ref().clone(),
        location: location.unwrap_or(PnapLocation::Phx),
    };
    Resource {
        address: Address::new(ResourceKind::LoadBalancer, key),
        provider: section.provider.get_ref().clone(),
        location: table.location(),
        keys: catalog_keys(section, table.file),
        spec: ResourceSpec::new(spec),
        depends_on: vec![cluster],
        origin: Default::default(),
    }
}

/// Rules that need the whole config: a location, the cluster, and one block per Service.
fn validate(declared: &Declared<'_, '_>, problems: &mut Problems) {
    let settings = declared.settings().map(Table::get::<RawPhoenixnap>);
    let default_location = settings.and_then(|p| p.location.as_ref());
    let clusters = declared.cluster_names();
    let mut services = std::collections::HashMap::new();
    for (_, table) in declared.tables(ResourceKind::LoadBalancer) {
        let mut check = Checker::new(table.file, problems);
        let section: &RawPnapLoadBalancer = table.get();
        if section.location.is_none() && default_location.is_none() && settings.is_some() {
            let invalid = Invalid::new("no location for the IP block")
                .help("set location = \"PHX\" here or in [provider.phoenixnap]");
            check.report(section.provider.span(), invalid);
        }
        cluster_is_declared(section, &clusters, &mut check);
        if section.public_network.get_ref().trim().is_empty() {
            let invalid = Invalid::new("public-network is empty").help(
                "name the public network the CCM's PNAP_LOAD_BALANCER points at, by id or name",
            );
            check.report(section.public_network.span(), invalid);
        }
        // Two blocks for one Service: the CCM finds more than one and errors forever.
        let key = (
            section.cluster.get_ref().clone(),
            section.service.get_ref().clone(),
        );
        if services.insert(key, ()).is_some() {
            let invalid = Invalid::new(format!(
                "Service `{}` of cluster `{}` already has a load balancer",
                section.service.get_ref(),
                section.cluster.get_ref()
            ))
            .help(
                "the CCM accepts one block per Service (\"more than one block found\"); keep one",
            );
            check.report(section.service.span(), invalid);
        }
    }
}

fn cluster_is_declared(lb: &RawPnapLoadBalancer, clusters: &[&str], check: &mut Checker<'_, '_>) {
    let name = lb.cluster.get_ref();
    if clusters.contains(&name.as_str()) {
        return;
    }
    let invalid = Invalid::new(format!("there is no [cluster.{name}]"))
        .help(match clusters.is_empty() {
        true => {
            "add a [cluster.NAME] with provider = \"kubernetes\" for the cluster the Service is in"
                .to_string()
        }
        false => format!("declared clusters: {}", clusters.join(", ")),
    });
    check.report(lb.cluster.span(), invalid);
}

#[cfg(test)]
mod tests;
