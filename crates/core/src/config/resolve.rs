//! Raw sections → the resolved [`Config`]: values parsed, defaults applied. Bad values are
//! reported and replaced by their default, so resolving goes on and finds the rest; a config
//! with problems is never returned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::check::Checker;
use super::diagnostics::{Problem, Problems};
use super::parse::{RawConfig, Sourced};
use super::raw::{RawCloudscale, RawMaintenance};
use super::section::Opaque;
use super::types::{
    CloudscaleSettings, Config, Endpoint, Maintenance, Providers, Resource, Settings,
    DEFAULT_MAX_CONCURRENT_REQUESTS,
};
use super::values::{self, Invalid};
use super::window::{Window, WINDOW_HELP};
use super::{backend, kubernetes, load_balancer};
use crate::model::Impact;
use crate::parallel::map_in_parallel;

const DEFAULT_STATE_DIR: &str = "state";

/// Load balancers resolved on one thread before the work is split across cores.
const RESOURCES_PER_THREAD: usize = 256;

pub(super) fn resolve(root: PathBuf, raw: &RawConfig<'_>, problems: &mut Problems) -> Config {
    let state_dir = raw
        .settings
        .as_ref()
        .and_then(|s| s.get().state_dir.as_deref())
        .unwrap_or(DEFAULT_STATE_DIR);
    let mut config = Config {
        settings: Settings {
            state_dir: root.join(Path::new(state_dir)),
            backend: raw
                .postgres
                .as_ref()
                .map(|pg| backend::postgres(pg, problems))
                .unwrap_or_default(),
        },
        providers: Providers {
            cloudscale: raw.cloudscale.as_ref().map(|p| cloudscale(p, problems)),
            sections: section_settings(&root, raw, problems),
        },
        maintenance: raw.maintenance.as_ref().map(|m| maintenance(m, problems)),
        resources: Vec::new(),
        root,
    };
    config.resources = resources(&config, raw, problems);
    config
}

/// Each section's `[provider.NAME]`, resolved by its section.
fn section_settings(
    root: &Path,
    raw: &RawConfig<'_>,
    problems: &mut Problems,
) -> BTreeMap<&'static str, Opaque> {
    let mut settings = BTreeMap::new();
    for (&index, table) in &raw.section_settings {
        let section = raw.sections[index];
        settings.insert(section.provider(), section.settings(root, table, problems));
    }
    settings
}

/// The resources of the sections' providers, each resolved by its section.
fn section_resources(
    config: &Config,
    raw: &RawConfig<'_>,
    problems: &mut Problems,
) -> Vec<Resource> {
    let resources = raw.section_resources.iter();
    resources
        .map(|((kind, key), resource)| {
            let section = raw.sections[resource.section];
            let settings = config.providers.sections.get(section.provider());
            section.resource(*kind, key, &resource.table, settings, problems)
        })
        .collect()
}

/// Every resource, sorted by address.
fn resources(config: &Config, raw: &RawConfig<'_>, problems: &mut Problems) -> Vec<Resource> {
    let root = &config.root;
    // The bulk of a large config: resolved on every core, each with its own problems.
    let load_balancers: Vec<_> = raw.load_balancers.iter().collect();
    let resolved = map_in_parallel(load_balancers, RESOURCES_PER_THREAD, |(key, lb)| {
        let mut found = Problems::default();
        (load_balancer::resource(key, lb, &mut found), found)
    });
    let mut resources = Vec::with_capacity(resolved.len());
    for (resource, found) in resolved {
        resources.push(resource);
        problems.append(found);
    }
    resources.extend(section_resources(config, raw, problems));
    for (key, cluster) in &raw.kube_clusters {
        resources.push(kubernetes::cluster(root, key, cluster, problems));
    }
    for (key, policy) in &raw.node_policies {
        resources.push(kubernetes::node_policy(key, policy, problems));
    }
    resources.sort_by(|a, b| a.address.cmp(&b.address));
    kubernetes::order_after_node_policies(&mut resources);
    resources
}

fn cloudscale(raw: &Sourced<'_, RawCloudscale>, problems: &mut Problems) -> CloudscaleSettings {
    let mut check = Checker::new(raw.file, problems);
    if let Some(token) = &raw.get().token {
        let message = "API tokens do not belong in config files";
        let help = "remove `token` and set the environment variable CLOUDSCALE_API_TOKEN";
        // The snippet would show the token's line.
        let problem = Problem::at(raw.file, token.span(), message).without_snippet();
        check.push(problem.with_help(help));
    }
    let endpoint = raw.get().endpoint.as_ref();
    let concurrency = raw.get().max_concurrent_requests.as_ref();
    CloudscaleSettings {
        endpoint: endpoint
            .and_then(|e| check.text(e, values::endpoint))
            .unwrap_or(Endpoint::Embedded),
        max_concurrent_requests: concurrency
            .and_then(|n| check.number(n, values::max_concurrent_requests))
            .unwrap_or(DEFAULT_MAX_CONCURRENT_REQUESTS),
    }
}

fn maintenance(raw: &Sourced<'_, RawMaintenance>, problems: &mut Problems) -> Maintenance {
    let mut check = Checker::new(raw.file, problems);
    let raw = raw.get();
    let window = |text: &str| {
        text.parse::<Window>()
            .map(|_| text.to_string())
            .map_err(|message| Invalid::new(message).help(WINDOW_HELP))
    };
    Maintenance {
        timezone: check
            .text(&raw.timezone, values::timezone)
            .unwrap_or_default(),
        windows: check.texts(&raw.windows, window),
        outside_window: check.choice(&raw.outside_window, Impact::Minimal),
        inside_window: check.choice(&raw.inside_window, Impact::PoolRecreate),
    }
}
