//! What the config asks of PhoenixNAP, resolved: the provider's settings and a load balancer's
//! spec — a /29 public IP block for a kube-vip LoadBalancer Service, made the way the
//! PhoenixNAP CCM makes it so that the CCM adopts it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use skyplan_core::config::Endpoint;
use skyplan_core::model::Address;

skyplan_core::wire_enum! {
    /// The locations `POST /ips/v1/ip-blocks` accepts (`IpBlockCreate.location`).
    PnapLocation {
        Phx => "PHX",
        Ash => "ASH",
        Sgp => "SGP",
        Nld => "NLD",
        Chi => "CHI",
        Sea => "SEA",
        Aus => "AUS",
    }
}

skyplan_core::choices!(PnapLocation => "location");

/// `[provider.phoenixnap]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PhoenixnapSettings {
    /// The API root (`https://api.phoenixnap.com`), or the built-in simulator.
    pub endpoint: Endpoint,
    /// The OAuth2 token URL; `None`: PhoenixNAP's for its API, else the endpoint's.
    pub token_url: Option<String>,
    /// Where new blocks are made unless a load balancer says.
    pub location: Option<PnapLocation>,
    /// The CCM's `cloud-sa.json` (`clientID`, `clientSecret`); the environment wins over it.
    pub cloud_sa_json: Option<PathBuf>,
}

/// `[load-balancer.NAME] provider = "phoenixnap"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PhoenixnapLoadBalancerSpec {
    /// The `cluster.NAME` the Service is in.
    pub cluster: Address,
    pub namespace: String,
    pub name: String,
    /// The public network the block is attached to, by id or name (the CCM's
    /// `PNAP_LOAD_BALANCER=kube-vip://<network id>`).
    pub public_network: String,
    /// Where the block is made (the CCM's `PNAP_LOCATION`).
    pub location: PnapLocation,
}

impl PhoenixnapLoadBalancerSpec {
    /// `namespace/name`, as the config writes it.
    pub fn service_ref(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}
