//! Raw sections → the resolved [`Config`]: values parsed, defaults applied. Bad values are
//! reported and replaced by their default, so resolving goes on and finds the rest; a config
//! with problems is never returned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::backend;
use super::check::Checker;
use std::sync::Arc;

use super::diagnostics::{Problem, Problems};
use super::ignore::{IgnoredPath, Origin, TableSource};
use super::parse::{RawConfig, SectionResource, Sourced};
use super::raw::{RawMaintenance, RawRollout};
use super::schema_path::{self, KindSchema};
use super::section::ConfigSection;
use super::section::{Opaque, PerObjectAttributes, Resolving};
use super::types::{Config, Maintenance, Providers, Resource, Rollout, Settings};
use super::values::{self, Invalid};
use super::window::{Window, WINDOW_HELP};
use crate::model::{Address, Impact, ResourceKind};
use crate::parallel::map_in_parallel;

const DEFAULT_STATE_DIR: &str = "state";

/// Resources resolved on one thread before the work is split across cores.
const RESOURCES_PER_THREAD: usize = 256;

pub(super) fn resolve(root: PathBuf, raw: &RawConfig<'_>, problems: &mut Problems) -> Config {
    // Written: relative to its file's directory; else in the (first layer's) root.
    let state_dir = match raw.settings.as_ref().map(|s| (s.file, &s.get().state_dir)) {
        Some((file, Some(dir))) => file.root_at(dir.span().start).join(dir.get_ref()),
        _ => root.join(Path::new(DEFAULT_STATE_DIR)),
    };
    let mut config = Config {
        settings: Settings {
            state_dir,
            backend: backend::backend(raw, problems),
        },
        providers: Providers {
            sections: section_settings(raw, problems),
        },
        maintenance: raw.maintenance.as_ref().map(|m| maintenance(m, problems)),
        rollout: raw.rollout.as_ref().map(|r| rollout(r, problems)),
        resources: Vec::new(),
        moves: Vec::new(),
        root,
    };
    config.resources = resources(&config, raw, problems);
    config.moves = super::moves::moves(raw, &config.resources, problems);
    config
}

/// Each section's `[provider.NAME]`, resolved by its section.
fn section_settings(
    raw: &RawConfig<'_>,
    problems: &mut Problems,
) -> BTreeMap<&'static str, Opaque> {
    let mut settings = BTreeMap::new();
    for (&index, table) in &raw.section_settings {
        let section = raw.sections[index];
        settings.insert(section.provider(), section.settings(table, problems));
    }
    settings
}

/// Every resource, sorted by address.
fn resources(config: &Config, raw: &RawConfig<'_>, problems: &mut Problems) -> Vec<Resource> {
    // The bulk of a large config (thousands of load balancers): resolved on every core, each
    // with its own problems, by the section of its provider.
    let tables: Vec<_> = raw.section_resources.iter().collect();
    let schemas = kind_schemas(raw);
    let resolved = map_in_parallel(tables, RESOURCES_PER_THREAD, |((kind, key), resource)| {
        let section = raw.sections[resource.section];
        let context = Resolving {
            settings: config.providers.sections.get(section.provider()),
        };
        let mut found = Problems::default();
        // An instance of a `for-each` (`web["a"]`) is resolved under its cloud name (`web-a`),
        // which its section derives cloud names from, and keeps its address.
        let address = Address::new(*kind, key.clone());
        let cloud_name = address.cloud_name();
        let mut resolved =
            section.resource(*kind, &cloud_name, &resource.table, &context, &mut found);
        resolved.address = address;
        found.name_inheritor(0, &resolved.address.to_string());
        let schema = &schemas[&(resource.section, *kind)];
        resolved.origin = origin(&resolved, section, resource, schema, &mut found);
        (resolved, found)
    });
    let mut resources = Vec::with_capacity(resolved.len());
    for (resource, found) in resolved {
        resources.push(resource);
        problems.append(found);
    }
    resources.sort_by(|a, b| a.address.cmp(&b.address));
    order_after_node_policies(&mut resources);
    resources
}

/// The schema of each kind of table of each section, by section index and kind: what
/// `ignore-changes` paths are checked against and written through.
fn kind_schemas(raw: &RawConfig<'_>) -> BTreeMap<(usize, ResourceKind), Arc<KindSchema>> {
    let mut schemas = BTreeMap::new();
    for (index, section) in raw.sections.iter().enumerate() {
        for (kind, schema) in schema_path::kind_schemas(*section) {
            schemas.insert((index, kind), Arc::new(schema));
        }
    }
    schemas
}

/// The resource's `ignore-changes`, each path checked against its kind's schema, and the table
/// it was resolved from.
fn origin(
    resource: &Resource,
    section: &'static dyn ConfigSection,
    raw: &SectionResource<'_>,
    schema: &Arc<KindSchema>,
    problems: &mut Problems,
) -> Origin {
    let file = raw.table.file;
    let mut ignore_changes = Vec::new();
    let per_object = section.attributes_per_object(resource.address.kind);
    for path in &raw.ignore_changes {
        if let Some(per_object) = per_object {
            match per_object_path(&per_object, path.get_ref()) {
                Ok(on_each) => ignore_changes.push(IgnoredPath {
                    path: path.get_ref().clone(),
                    location: file.location(&path.span()),
                    on_each,
                }),
                Err(help) => {
                    let message = format!(
                        "`{}` is not an attribute of {}",
                        path.get_ref(),
                        resource.address
                    );
                    problems.push(Problem::at(file, path.span(), message).with_help(help));
                }
            }
            continue;
        }
        if schema_path::steps(schema, path.get_ref()).is_none() {
            let message = format!(
                "`{}` is not an attribute of {}",
                path.get_ref(),
                resource.address
            );
            let help = format!(
                "paths are spelled as the plan spells attributes (`timeouts.client-data-ms`, `ports.NAME.KEY`); the table's keys: {}",
                schema.keys().join(", ")
            );
            problems.push(Problem::at(file, path.span(), message).with_help(help));
            continue;
        }
        ignore_changes.push(IgnoredPath {
            path: path.get_ref().clone(),
            location: file.location(&path.span()),
            on_each: None,
        });
    }
    let table = TableSource {
        section,
        file: file.clone(),
        written: raw.written.clone(),
        schema: schema.clone(),
        on_each: per_object.map(|per_object| per_object.collection),
    };
    Origin::new(ignore_changes, table)
}

/// An `ignore-changes` path of a kind planned per live object: `PATH` on every object (its
/// collection returned) or `COLLECTION.OBJECT[.PATH]` on one (`None`: a whole attribute path).
/// `Err` says how paths are spelled.
fn per_object_path(
    per_object: &PerObjectAttributes,
    path: &str,
) -> Result<Option<&'static str>, String> {
    let collection = per_object.collection;
    let Some(objects) = path.strip_prefix(collection) else {
        return (per_object.check)(path).map(|()| Some(collection));
    };
    let Some(object_path) = objects.strip_prefix('.').filter(|o| !o.is_empty()) else {
        return (per_object.check)(path).map(|()| Some(collection));
    };
    // One object: its name alone, or followed by a path below it (the name may hold dots).
    let below_one = (object_path.match_indices('.'))
        .any(|(dot, _)| (per_object.check)(&object_path[dot + 1..]).is_ok());
    if below_one || (per_object.check)(object_path).is_err() {
        return Ok(None);
    }
    Err(format!(
        "`{collection}.{object_path}` would name an object called `{object_path}`; write `{object_path}` for every object"
    ))
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

fn rollout(raw: &Sourced<'_, RawRollout>, problems: &mut Problems) -> Rollout {
    let mut check = Checker::new(raw.file, problems);
    let raw = raw.get();
    let default = Rollout::default();
    let max_disrupted = raw.max_disrupted.as_ref().and_then(|n| {
        check.number(n, |n| {
            usize::try_from(n).ok().filter(|&n| n >= 1).ok_or_else(|| {
                Invalid::new(format!("max-disrupted = {n} lets nothing through"))
                    .help("write 1 or more (leave the key out for no limit)")
            })
        })
    });
    let duration = |raw: &Option<serde_spanned::Spanned<String>>, check: &mut Checker, default| {
        (raw.as_ref())
            .and_then(|text| check.text(text, values::duration))
            .unwrap_or(default)
    };
    Rollout {
        max_disrupted,
        per: (raw.max_disrupted_per.as_ref()).and_then(|per| check.text(per, values::choice)),
        health_gate: raw.health_gate.unwrap_or(default.health_gate),
        health_timeout: duration(&raw.health_timeout, &mut check, default.health_timeout),
        pause: duration(&raw.pause, &mut check, default.pause),
    }
}

/// A load balancer that depends on a cluster also depends on that cluster's node policies: its
/// members follow the nodes (a label can exclude a node or change what a node-selector picks),
/// so apply patches the nodes first and the load balancer, or its controller, then sees them.
/// A node policy depends on its cluster.
fn order_after_node_policies(resources: &mut [Resource]) {
    let policies: Vec<(Address, Vec<Address>)> = (resources.iter())
        .filter(|r| r.address.kind == ResourceKind::Nodes)
        .map(|r| (r.address.clone(), r.depends_on.clone()))
        .collect();
    for resource in resources.iter_mut() {
        if resource.address.kind != ResourceKind::LoadBalancer {
            continue;
        }
        for (policy, clusters) in &policies {
            let on_its_cluster = clusters.iter().any(|c| resource.depends_on.contains(c));
            if on_its_cluster && !resource.depends_on.contains(policy) {
                resource.depends_on.push(policy.clone());
            }
        }
    }
}
