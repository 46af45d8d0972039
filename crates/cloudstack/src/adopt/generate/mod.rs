//! The config that adopts one object, from the survey that had it among its targets: a CKS
//! cluster (`cluster.rs`), the rules on a public IP in direct mode (`direct.rs`), or the rules
//! the CloudStack CCM made for a Service, as the Service skyplan then writes
//! (`ccm.rs`). Each first builds the spec the config must resolve to, refusing what the
//! config cannot say; `text.rs` writes it as TOML with keys only where they differ from the
//! defaults. The spec is then imported and planned against the same survey, exactly as the
//! next `plan` will: anything but an empty plan refuses the object, naming the attribute.

mod ccm;
mod cluster;
mod direct;
mod text;

pub use text::{cluster_toml, lb_toml};

use super::discover::{ccm_service, unread};
use super::is_cks_api_rule;
use crate::api::LoadBalancerRule;
use crate::live::Live;
use crate::PROVIDER;
use skyplan_core::model::{Address, ResourceKind};
use skyplan_core::plan::{Action, ResourceChange};
use skyplan_core::provider::discover::{Adopting, Generated};
use skyplan_core::provider::{ProviderError, Target};
use skyplan_core::state::ResourceState;

/// Why skyplan's config cannot say what the object has.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Refusal {
    pub attribute: String,
    pub reason: String,
}

pub(super) fn refuse(attribute: impl Into<String>, reason: impl Into<String>) -> Refusal {
    Refusal {
        attribute: attribute.into(),
        reason: reason.into(),
    }
}

/// The TOML, or why there is none.
type Outcome = Result<String, Refusal>;

pub fn generate(
    target: &Target,
    live: &Live,
    adopting: &Adopting,
) -> Result<Generated, ProviderError> {
    let address = target.address;
    let id = target
        .prior
        .map(|p| p.id.as_str())
        .ok_or_else(|| ProviderError::new(address, "generating a config needs the object's ID"))?;
    let outcome = match address.kind {
        ResourceKind::Cluster => cluster::generate(address, id, live)?,
        ResourceKind::LoadBalancer => load_balancer(address, id, live, adopting)?,
        ResourceKind::Nodes => {
            return Err(ProviderError::new(
                address,
                "node policies are not a CloudStack resource",
            ))
        }
    };
    Ok(match outcome {
        Ok(text) => Generated::Config { text, spec: None },
        Err(refusal) => Generated::Refused {
            attribute: refusal.attribute,
            reason: refusal.reason,
        },
    })
}

fn load_balancer(
    address: &Address,
    id: &str,
    live: &Live,
    adopting: &Adopting,
) -> Result<Outcome, ProviderError> {
    let inventory = &live.inventory;
    let ip = inventory
        .public_ip(id)
        .or_else(|| inventory.public_ip_by_address(id))
        .ok_or_else(|| ProviderError::new(address, format!("no public IP {id} in the account")))?;
    let mut rules: Vec<&LoadBalancerRule> = inventory
        .rules_on(&ip.id)
        .filter(|r| !is_cks_api_rule(r, inventory))
        .collect();
    rules.sort_by_key(|r| (r.publicport, r.name.clone()));
    if rules.is_empty() {
        let reason = format!("{} carries no LB rules", ip.ipaddress);
        return Ok(Err(refuse("ports", reason)));
    }
    Ok(match ccm_service(live, &rules) {
        Some((_, Some((cluster, service)))) => {
            ccm::generate(address, &rules, cluster, service, live, adopting)
        }
        Some((base, None)) => match unread(live, &rules) {
            Some(why) => Err(refuse(
                "service",
                format!(
                    "the CloudStack CCM made these rules for the Service with UID {}…, which skyplan cannot read ({why}); adopted in direct mode skyplan would fight the CCM: connect the cluster (a [cluster.NAME] the config binds, or a node policy on it) and generate again",
                    base.trim_start_matches('a')
                ),
            )),
            None => direct::generate(address, ip, &rules, live, adopting),
        },
        None => direct::generate(address, ip, &rules, live, adopting),
    })
}

/// The state entry an import starts from, as the pipeline hands it over.
fn claimed_entry(id: &str) -> ResourceState {
    ResourceState {
        provider: PROVIDER.to_string(),
        id: id.to_string(),
        ids: serde_json::Value::Null,
        attributes: serde_json::Value::Null,
        depends_on: vec![],
    }
}

/// The check every generated config passes: its plan once imported is empty.
fn plans_nothing(planned: Result<ResourceChange, ProviderError>) -> Result<(), Refusal> {
    let change = planned.map_err(|e| {
        let key = e.message.split_once(':').map_or("", |(key, _)| key);
        let attribute = match key.contains(' ') || key.is_empty() {
            true => "(config)".to_string(),
            false => key.to_string(),
        };
        refuse(
            attribute,
            format!("the config would not plan: {}", e.message),
        )
    })?;
    if change.action == Action::NoOp && change.attributes.is_empty() {
        return Ok(());
    }
    let first = change.attributes.first();
    let attribute = first.map_or("(resource)", |a| a.path.as_str());
    let attribute = if attribute.is_empty() {
        "(resource)"
    } else {
        attribute
    };
    let reason = match first {
        Some(a) => format!(
            "once adopted, skyplan would change it: {} → {} ({})",
            a.before, a.after, a.reason
        ),
        None => format!("once adopted, skyplan would {:?} it", change.action),
    };
    Err(refuse(attribute, reason))
}

/// What the config calls a catalog object: its name when the name finds that object, else its
/// ID (two objects share the name, or it has none).
fn catalog_name<'a>(
    id: &'a str,
    name: Option<&'a str>,
    resolves: impl Fn(&str) -> Option<&'a str>,
) -> &'a str {
    match name {
        Some(name) if !name.is_empty() && resolves(name) == Some(id) => name,
        _ => id,
    }
}

/// A CIDR as the config writes it: refused unless the config reads it back unchanged (a bare
/// address, bits beyond the prefix, another spelling).
fn config_cidr(text: &str, attribute: &str) -> Result<String, Refusal> {
    match skyplan_core::config::section::cidr(text) {
        Ok(net) if net.to_string() == text => Ok(text.to_string()),
        Ok(net) => Err(refuse(
            attribute,
            format!(
                "`{text}` is written {net} in the config, which the cloud would see as a change"
            ),
        )),
        Err(invalid) => Err(refuse(
            attribute,
            format!("{}: the config takes only CIDRs", invalid.message),
        )),
    }
}
