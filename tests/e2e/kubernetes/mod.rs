//! Kubernetes: node policies, node-metadata drift, excluded nodes, Service bindings checked at
//! plan time, what a user reads when a cluster cannot be used, the provider's cluster
//! connection and kubectl against the simulator, the LoadBalancer Services discovery lists,
//! and (`real_apiserver`) what must hold against a real kube-apiserver.

pub mod cluster_connection;
pub mod connection_errors;
pub mod discovery;
pub mod node_exclusion;
pub mod node_metadata_drift;
pub mod node_policies;
pub mod node_rollout;
pub mod real_apiserver;
pub mod service_binding_checks;
pub mod simulator_kubectl;
