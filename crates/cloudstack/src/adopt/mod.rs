//! Taking over an existing estate (`skyplan discover`, `import --generate-config`): the CKS
//! clusters and the load-balancer rules of the account that no resource of the config or the
//! state manages, who made them, and the config that adopts each so that its plan is empty.
//!
//! INTERFACE (used by `provider.rs`): [`survey`], [`discover`], [`generate`]; [`Surveyed`],
//! kept in the refresh's `Live`.
//!
//! - `survey.rs` — what discovery reads beyond a refresh: the Services of the clusters the
//!   CloudStack CCM may have made rules for (the attached clusters' and, through the kubeconfig
//!   CloudStack gives, a CKS cluster's the config does not connect), and the nodes behind an
//!   adopted Service's rules.
//! - `claimed.rs` — what the targets manage: clusters, public IPs and rules, found as plan
//!   finds them (IDs in the state, the configured address, the `skyplan.address` tag, the
//!   Service a controller-mode load balancer is bound to).
//! - `discover.rs` — the rest, one [`Unmanaged`] per cluster and per public IP carrying rules,
//!   with who made it (the tag, the CCM's rule names, the Service they serve).
//! - `generate/` — the TOML that adopts one object (`cluster.rs`, `direct.rs`, `ccm.rs`,
//!   written by `text.rs`), checked before it is handed back: imported and planned against the
//!   same survey, it must plan nothing, else it is refused with the attribute that would
//!   change.
//!
//! [`Unmanaged`]: skyplan_core::provider::discover::Unmanaged

mod claimed;
mod discover;
mod generate;
mod survey;
#[cfg(test)]
mod tests;

pub use discover::discover;
pub use generate::{cluster_toml, generate, lb_toml};
pub use survey::{survey, Surveyed, SurveyedCluster};

use crate::api::{KubernetesCluster, LoadBalancerRule};
use crate::live::Inventory;
use crate::spec::CsProtocol;
use skyplan_core::provider::Target;

/// Who makes rules named from a Service's UID, as a user knows it.
pub const CCM: &str = "CloudStack CCM";

/// The name CKS gives the LB rule of a cluster's API on its source-NAT address (HA clusters):
/// the cluster's own, never a load balancer to adopt.
const CKS_API_RULE: &str = "api-lb";

/// A target that is an object to adopt: no resource, and a prior naming only its ID (`ids`
/// null), as `import --generate-config` hands it over.
pub fn is_adopting(target: &Target) -> bool {
    target.resource.is_none() && target.prior.is_some_and(|p| p.ids.is_null())
}

/// A rule name `<base>-<tcp|udp|tcp-proxy>-<port>` (skyplan's and the CCM's) split into its
/// parts; `None` for any other name.
pub(crate) fn split_rule_name(name: &str) -> Option<(&str, CsProtocol, u16)> {
    let (rest, port) = name.rsplit_once('-')?;
    let port: u16 = port.parse().ok()?;
    [CsProtocol::TcpProxy, CsProtocol::Tcp, CsProtocol::Udp]
        .into_iter()
        .find_map(|protocol| {
            let base = rest.strip_suffix(protocol.as_str())?.strip_suffix('-')?;
            let exact = format!("{base}-{protocol}-{port}") == name;
            (exact && !base.is_empty()).then_some((base, protocol, port))
        })
}

/// The CCM's base name of a rule it made: `a` and 31 lower-case hex digits of a Service UID
/// (`lb::ccm::names::base_name`), then `-<protocol>-<port>`.
pub(crate) fn ccm_base(rule: &str) -> Option<&str> {
    let (base, _, _) = split_rule_name(rule)?;
    let digits = base.strip_prefix('a')?;
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    (digits.len() == 31 && digits.chars().all(hex)).then_some(base)
}

/// The rule CKS made for a cluster's API, in a live cluster's network.
fn is_cks_api_rule(rule: &LoadBalancerRule, inventory: &Inventory) -> bool {
    rule.name == CKS_API_RULE
        && inventory
            .clusters
            .iter()
            .any(|c| c.networkid.is_some() && c.networkid == rule.networkid)
}

/// A cluster that still exists (a destroyed one is history).
fn alive(cluster: &KubernetesCluster) -> bool {
    cluster.state != "Destroyed"
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn rule_names_split_into_base_protocol_and_port() {
        assert_eq!(
            split_rule_name("edge-tcp-80"),
            Some(("edge", CsProtocol::Tcp, 80))
        );
        assert_eq!(
            split_rule_name("my-edge-tcp-proxy-443"),
            Some(("my-edge", CsProtocol::TcpProxy, 443))
        );
        assert_eq!(
            split_rule_name("dns-udp-53"),
            Some(("dns", CsProtocol::Udp, 53))
        );
        for other in [
            "api-lb",
            "edge-http-80",
            "-tcp-80",
            "edge-tcp-080",
            "edge-tcp-x",
        ] {
            assert_eq!(split_rule_name(other), None, "{other}");
        }
    }

    #[test]
    fn the_ccm_base_is_a_and_31_hex_digits() {
        let base = crate::lb::ccm::names::base_name("1b4e28ba-2fa1-11d2-883f-0016d3cca427");
        assert_eq!(ccm_base(&format!("{base}-tcp-80")), Some(base.as_str()));
        assert_eq!(ccm_base("edge-tcp-80"), None);
        assert_eq!(ccm_base("a1b4e28ba2fa111d2883f0016d3cca4-tcp-80"), None);
        assert_eq!(ccm_base("A1B4E28BA2FA111D2883F0016D3CCA42-tcp-80"), None);
    }
}
