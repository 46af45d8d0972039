//! The PhoenixNAP sections → resolved values: `[provider.phoenixnap]` and `[load-balancer.NAME]`
//! with provider "phoenixnap". Each bad value is reported at its position and replaced by its
//! default, so one run reports everything.

use std::path::Path;

use super::check::Checker;
use super::cloudstack::expand_path;
use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::parse::{RawConfig, Sourced};
use super::raw_phoenixnap::{RawPhoenixnap, RawPnapLoadBalancer};
use super::types::{Endpoint, KeyLocations, PhoenixnapSettings, Resource, ResourceSpec};
use super::validate::provider_has_table;
use super::values::{self, Invalid};
use crate::model::{Address, PhoenixnapLoadBalancerSpec, PnapLocation, ResourceKind};

pub(super) fn provider(
    root: &Path,
    raw: &Sourced<'_, RawPhoenixnap>,
    problems: &mut Problems,
) -> PhoenixnapSettings {
    let mut check = Checker::new(raw.file, problems);
    let section = raw.get();
    for key in [&section.client_id, &section.client_secret]
        .into_iter()
        .flatten()
    {
        let message = "PhoenixNAP credentials do not belong in config files";
        let help = "remove the key; set PNAP_CLIENT_ID and PNAP_CLIENT_SECRET, or name the CCM's secret file with cloud-sa-json = \"cloud-sa.json\"";
        // The snippet would show the secret's line.
        let problem = Problem::at(raw.file, key.span(), message).without_snippet();
        check.push(problem.with_help(help));
    }
    PhoenixnapSettings {
        endpoint: section
            .endpoint
            .as_ref()
            .and_then(|e| check.text(e, values::endpoint))
            .unwrap_or(Endpoint::Embedded),
        token_url: section
            .token_url
            .as_ref()
            .and_then(|url| check.text(url, web_url)),
        location: section
            .location
            .as_ref()
            .and_then(|l| check.text(l, values::choice)),
        cloud_sa_json: section
            .cloud_sa_json
            .as_ref()
            .map(|path| expand_path(root, path.get_ref())),
    }
}

fn web_url(text: &str) -> Result<String, Invalid> {
    match values::endpoint(text) {
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

pub(super) fn load_balancer(
    key: &str,
    raw: &Sourced<'_, RawPnapLoadBalancer>,
    default_location: Option<PnapLocation>,
    problems: &mut Problems,
) -> Resource {
    let mut check = Checker::new(raw.file, problems);
    let section = raw.get();
    let cluster = Address::new(ResourceKind::Cluster, section.cluster.get_ref());
    let (namespace, name) = check
        .text(&section.service, super::binding::service_ref)
        .unwrap_or_default();
    let location = match &section.location {
        Some(location) => check.text(location, values::choice),
        None => default_location,
    };
    Resource {
        address: Address::new(ResourceKind::LoadBalancer, key),
        provider: section.provider.get_ref().clone(),
        location: raw.file.location(&raw.span()),
        keys: catalog_keys(section, raw.file),
        spec: ResourceSpec::PnapLoadBalancer(PhoenixnapLoadBalancerSpec {
            cluster: cluster.clone(),
            namespace,
            name,
            public_network: section.public_network.get_ref().clone(),
            location: location.unwrap_or(PnapLocation::Phx),
        }),
        depends_on: vec![cluster],
    }
}

/// Rules that need the whole config: the provider table, a location, the cluster, and one
/// block per Service.
pub(super) fn validate(raw: &RawConfig<'_>, problems: &mut Problems) {
    let default_location = raw
        .phoenixnap
        .as_ref()
        .and_then(|p| p.get().location.as_ref());
    let mut services = std::collections::HashMap::new();
    for lb in raw.phoenixnap_load_balancers.values() {
        let mut check = Checker::new(lb.file, problems);
        let section = lb.get();
        provider_has_table(&section.provider, raw, &mut check);
        if section.location.is_none() && default_location.is_none() && raw.phoenixnap.is_some() {
            let invalid = Invalid::new("no location for the IP block")
                .help("set location = \"PHX\" here or in [provider.phoenixnap]");
            check.report(section.provider.span(), invalid);
        }
        cluster_is_declared(section, raw, &mut check);
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

fn cluster_is_declared(lb: &RawPnapLoadBalancer, raw: &RawConfig<'_>, check: &mut Checker<'_, '_>) {
    let name = lb.cluster.get_ref();
    if raw.kube_clusters.contains_key(name) || raw.clusters.contains_key(name) {
        return;
    }
    let names: Vec<&str> = raw
        .kube_clusters
        .keys()
        .chain(raw.clusters.keys())
        .map(String::as_str)
        .collect();
    let invalid = Invalid::new(format!("there is no [cluster.{name}]"))
        .help(match names.is_empty() {
        true => {
            "add a [cluster.NAME] with provider = \"kubernetes\" for the cluster the Service is in"
                .to_string()
        }
        false => format!("declared clusters: {}", names.join(", ")),
    });
    check.report(lb.cluster.span(), invalid);
}
