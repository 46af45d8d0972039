//! Kubernetes as a provider: clusters skyplan connects to (never creates), node policies, and
//! node-metadata drift. Other providers reach a cluster through [`connection::ClusterConnection`]
//! (a Service-bound load balancer reads the nodes and the Service, and in controller mode writes
//! the Service) and tell node-metadata drift what their cloud knows about each VM through
//! [`instances::CloudInstances`].

pub mod connection;
pub mod instances;
