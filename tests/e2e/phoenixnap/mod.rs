//! PhoenixNAP: the impact table's rows (an IP block made as the CCM makes it), the CCM's node
//! lifecycle, credentials, the example, kill recovery, taking over an estate made out of band
//! (`adopt`), and the simulator's wire format against plain HTTP and PhoenixNAP's own SDKs.

pub mod adopt;
pub mod credentials;
pub mod example;
pub mod impact_rows;
pub mod kill_recovery;
pub mod node_lifecycle;
pub mod rollout_gate;
pub mod simulator_wire;
pub mod support;
