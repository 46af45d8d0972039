//! PhoenixNAP Bare Metal Cloud: /29 public IP blocks for kube-vip LoadBalancer Services, made
//! the way the PhoenixNAP CCM v1.0.0 makes them so that it adopts them (research/phoenixnap.md).
//!
//! Codemap: `spec` what the config asks for and `config/` its
//! section of the config language (tables → spec, schema), `client/` the wire protocol (OAuth2 client credentials, the APIs' errors, retries
//! only where safe), `api` the objects and calls, `ccm` what the CCM expects of a block (tags,
//! the Service's address), `refresh` + `live` what one refresh reads, **`impact` the table**,
//! `diff` desired vs live → rows and `ops`, `execute` the journalled executor, `instances` the
//! servers as the CCM describes them to Kubernetes, `provider` the trait implementation,
//! `adopt` discovery (the blocks no resource manages) and the config that adopts one.

pub mod adopt;
pub mod api;
pub mod ccm;
pub mod client;
pub mod config;
pub mod diff;
mod execute;
pub mod health;
pub mod impact;
pub mod instances;
pub mod live;
pub mod ops;
pub mod provider;
mod refresh;
pub mod spec;
mod verify;

pub use config::PhoenixnapConfig;
pub use provider::{PhoenixnapProvider, PnapEmbedded};

/// What `skyplan graph` draws for a load balancer: its public network, the block attached to
/// it, and the Service that carries the block's address.
pub fn add_to_graph(
    graph: &mut skyplan_core::graph::ObjectGraph,
    address: &skyplan_core::model::Address,
    spec: &spec::PhoenixnapLoadBalancerSpec,
) {
    use skyplan_core::graph::ObjectKey;
    let network = ObjectKey::new(address.clone(), "public-network", &spec.public_network);
    let block = ObjectKey::new(
        address.clone(),
        "ip-block",
        format!("/29 in {}", spec.location),
    );
    let service = ObjectKey::new(address.clone(), "service", spec.service_ref());
    graph.add(network.clone(), None);
    graph.add(block.clone(), Some(&network));
    graph.add(service, Some(&block));
}
