//! `skyplan discover`: what the configured accounts and clusters hold that no resource
//! manages.

use miette::{miette, Report};

use super::super::args::{DiscoverArgs, DiscoverFormat};
use super::super::colour;
use super::super::exit;
use super::super::report::Reported;
use super::plan::style;
use super::{load, open, ConfigSource};
use crate::model::{Address, ResourceKind};
use crate::provider::discover::Unmanaged;
use crate::render::{render_discovery_json, render_discovery_text, render_discovery_toml};
use crate::workspace::Workspace;

pub(super) async fn discover(source: &ConfigSource, args: &DiscoverArgs) -> Result<u8, Report> {
    let config = load(source)?;
    let workspace = open(config, "discover", &args.locking).await?;
    let filter = Filter::new(&workspace, args);
    let found = match &filter {
        Ok(_) => workspace.discover().await.reported(),
        Err(_) => Ok(vec![]),
    };
    workspace.close().await.reported()?;
    let filter = filter?;
    let objects: Vec<Unmanaged> = found?.into_iter().filter(|o| filter.keeps(o)).collect();
    let text = match args.format {
        DiscoverFormat::Text => render_discovery_text(&objects, style()),
        DiscoverFormat::Json => render_discovery_json(&objects),
        DiscoverFormat::Toml => render_discovery_toml(&objects),
    };
    colour::print(text);
    Ok(exit::SUCCESS)
}

/// `--provider` and `--cluster`, checked against the config so that a typo is an error rather
/// than an empty list.
struct Filter {
    providers: Vec<String>,
    clusters: Vec<Address>,
}

impl Filter {
    fn new(workspace: &Workspace, args: &DiscoverArgs) -> Result<Filter, Report> {
        let configured = workspace.provider_names();
        let config = &workspace.config;
        for provider in &args.providers {
            if !configured.contains(&provider.as_str()) {
                return Err(miette!(
                    "--provider {provider}: the config configures {}",
                    configured.join(", ")
                ));
            }
        }
        let mut clusters = Vec::new();
        for cluster in &args.clusters {
            let name = cluster.strip_prefix("cluster.").unwrap_or(cluster);
            let address = Address::new(ResourceKind::Cluster, name);
            if config.resource(&address).is_none() {
                return Err(miette!(
                    "--cluster {cluster}: the config declares no {address}"
                ));
            }
            clusters.push(address);
        }
        Ok(Filter {
            providers: args.providers.clone(),
            clusters,
        })
    }

    fn keeps(&self, object: &Unmanaged) -> bool {
        let provider = self.providers.is_empty() || self.providers.contains(&object.provider);
        let cluster = self.clusters.is_empty()
            || object
                .cluster
                .as_ref()
                .is_some_and(|c| self.clusters.contains(c));
        provider && cluster
    }
}
