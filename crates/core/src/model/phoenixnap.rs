//! The PhoenixNAP load balancer: a /29 public IP block for a kube-vip LoadBalancer Service, made
//! the way the PhoenixNAP CCM makes it so that the CCM adopts it.

use serde::{Deserialize, Serialize};

use super::Address;

wire_enum! {
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
