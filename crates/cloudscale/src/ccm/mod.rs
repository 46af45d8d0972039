//! Controller mode (`mode = "ccm"`): skyplan never touches the cloud load balancer. It writes
//! the Service (type LoadBalancer, ports, traffic policy, the CCM's annotations), predicts from
//! the live Service, nodes, servers and cloud objects what the cloudscale CCM will do
//! (`predict`, classified by the controller-mode table in `impact`), and after the write waits
//! until the cloud shows that result (`apply`), reporting any difference.

pub mod annotations;
pub mod apply;
pub mod causes;
pub mod effects;
pub mod emptied;
pub mod impact;
pub mod order;
pub mod plan;
pub mod predict;
pub mod service;

pub use predict::lookup_keys;
