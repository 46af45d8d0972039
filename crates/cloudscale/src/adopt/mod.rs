//! Taking over an existing cloudscale estate (`skyplan discover`, `import --generate-config`).
//! A survey is a refresh plus every Service of each connected cluster (`Live::services`); from
//! it `discover` lists the load balancers no target manages, each with who made it (skyplan's
//! tag, the cloudscale CCM for a Service, or nobody known), and `generate` writes the config
//! that adopts one: direct mode for a load balancer made by hand or by skyplan (`direct.rs`),
//! controller mode for one the CCM made for a Service (`ccm.rs`, its annotations read back
//! into config keys). The text is rendered with only the keys that differ from the defaults
//! (`render.rs`), read back through the config section and planned against the live objects
//! (`check.rs`): a config that would plan any change is refused, naming the attribute, never
//! written.

mod ccm;
mod check;
mod direct;
mod discover;
mod render;
mod services;

use super::live::Live;
use super::objects::{LbObject, OWNER_TAG};
use skyplan_core::config::section as values;
use skyplan_core::config::ResourceSpec;
use skyplan_core::model::Address;
use skyplan_core::provider::discover::{Adopting, Generated};
use skyplan_core::provider::{ErrorKind, ProviderError, Target};

pub use discover::discover;
pub use services::{ServiceAt, SurveyedServices};

/// Who the cloudscale CCM is, to a user.
pub const CCM: &str = "cloudscale CCM";

/// What the generated config cannot say: the attribute as the plan names it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub attribute: String,
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    /// As an import lists it: `attribute: reason`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.attribute, self.reason)
    }
}

impl Refusal {
    fn new(attribute: impl Into<String>, reason: impl Into<String>) -> Refusal {
        Refusal {
            attribute: attribute.into(),
            reason: reason.into(),
        }
    }
}

impl From<Refusal> for Generated {
    fn from(refusal: Refusal) -> Generated {
        Generated::Refused {
            attribute: refusal.attribute,
            reason: refusal.reason,
        }
    }
}

/// A CIDR as the config writes it (`values::cidr`), else refused at `path`.
fn canonical_cidr(text: &str, path: &str) -> Result<(), Refusal> {
    match values::cidr(text) {
        Ok(net) if net.to_string() == text => Ok(()),
        _ => Err(Refusal::new(
            path,
            format!("`{text}` is not a CIDR as the config writes it"),
        )),
    }
}

/// A UUID as the config writes it (lower case), else refused at `path`.
fn canonical_uuid(text: &str, path: &str) -> Result<(), Refusal> {
    match values::uuid(text) {
        Ok(uuid) if uuid == text => Ok(()),
        _ => Err(Refusal::new(
            path,
            format!("`{text}` is not a UUID as the config writes it"),
        )),
    }
}

/// An IP address as the config writes it, else refused at `path`.
fn canonical_ip(text: &str, path: &str) -> Result<(), Refusal> {
    match values::ip_address(text) {
        Ok(ip) if ip.to_string() == text => Ok(()),
        _ => Err(Refusal::new(
            path,
            format!("`{text}` is not an IP address as the config writes it"),
        )),
    }
}

/// Who made a load balancer, as far as the survey tells.
#[derive(Debug, Clone)]
pub enum Origin<'a> {
    /// skyplan, as this address (its `skyplan.address` tag).
    Skyplan(Address),
    /// The cloudscale CCM, for this Service of a connected cluster.
    Ccm(ServiceAt<'a>),
    /// The cloudscale CCM by its name (`k8s-service-<uid>`), for a Service in no connected
    /// cluster.
    CcmElsewhere,
    Unknown,
}

impl<'a> Origin<'a> {
    pub fn of(lb: &LbObject, services: &'a SurveyedServices) -> Origin<'a> {
        if let Some(address) = lb.tags.get(OWNER_TAG).and_then(|a| a.parse().ok()) {
            return Origin::Skyplan(address);
        }
        if let Some(at) = services.serving(lb) {
            return Origin::Ccm(at);
        }
        match ccm_default_name(&lb.name) {
            true => Origin::CcmElsewhere,
            false => Origin::Unknown,
        }
    }
}

/// Why a load balancer named as the CCM names a Service's (`name`), whose Service no connected
/// cluster has, is not adopted: discover says it, an import naming it refuses it.
fn ccm_elsewhere(name: &str) -> Refusal {
    Refusal::new(
        "service",
        format!(
            "{name} is the name the {CCM} gives the load balancer of a Service, and no connected cluster has that Service: adopted in direct mode, skyplan and the CCM would both change it; declare the Service's cluster ([cluster.NAME]) and discover again"
        ),
    )
}

/// Whether `name` is the CCM's default name for a Service (`k8s-service-<uid>`).
fn ccm_default_name(name: &str) -> bool {
    name.strip_prefix("k8s-service-")
        .is_some_and(|uid| uuid::Uuid::parse_str(uid).is_ok())
}

/// The config that adopts the load balancer `target.prior` names as `target.address`. The
/// other objects adopted in the run (`adopting`) change nothing here: the cluster a
/// controller-made load balancer is bound to is one the config already declares.
pub fn generate(
    target: &Target,
    live: &Live,
    _adopting: &Adopting,
) -> Result<Generated, ProviderError> {
    let address = target.address;
    let prior = target.prior.ok_or_else(|| {
        ProviderError::new(address, "names no load balancer to adopt").kind(ErrorKind::Internal)
    })?;
    let found = live.snapshot.load_balancer(&prior.id).ok_or_else(|| {
        let message = format!("no load balancer with UUID {} in the account", prior.id);
        ProviderError::new(address, message).kind(ErrorKind::NotFound)
    })?;
    let origin = Origin::of(&found.lb, &live.services);
    let service = match &origin {
        Origin::Ccm(at) => Some(*at),
        _ => None,
    };
    let spec = match origin {
        Origin::Skyplan(tagged) if tagged != *address => Err(Refusal::new(
            format!("tags.{OWNER_TAG}"),
            format!(
                "skyplan made it as {tagged} (its {OWNER_TAG} tag): adopted as {address}, a config declaring {tagged} later would take it over by that tag; adopt it as {tagged} (import --generate-config FILE {tagged}={})",
                prior.id
            ),
        )),
        Origin::Skyplan(_) | Origin::Unknown => direct::spec(found, &live.snapshot),
        Origin::Ccm(at) => ccm::spec(found, at),
        Origin::CcmElsewhere => Err(ccm_elsewhere(&found.lb.name)),
    };
    let spec = match spec {
        Ok(spec) => spec,
        Err(refusal) => return Ok(refusal.into()),
    };
    Ok(
        match check::plans_nothing(address, &spec, found, live, service) {
            // Read back by the pipeline, with the whole file: as the spec planned here.
            Ok(()) => Generated::Config {
                text: render::table(address, &spec),
                spec: Some(ResourceSpec::new(spec)),
            },
            Err(refusal) => refusal.into(),
        },
    )
}

#[cfg(test)]
mod tests;
