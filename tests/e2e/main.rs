//! End-to-end tests: the real `skyplan` binary against the embedded simulators (cloudscale,
//! CloudStack) and `skyplan sim serve`.

mod cli;
mod cloudscale_rows;
mod crash;
mod cs_ccm_more_rows;
mod cs_ccm_rows;
mod cs_client;
mod cs_cloud_config;
mod cs_cluster_rows;
mod cs_crash;
mod cs_faults;
mod cs_k8s;
mod cs_lb_rows;
mod cs_lifecycle;
mod cs_support;
mod drift;
mod faults;
mod independent_clients;
mod k8s_ccm_last_rows;
mod k8s_ccm_more_rows;
mod k8s_ccm_rows;
mod k8s_drift;
mod k8s_kubectl;
mod k8s_lb_direct;
mod k8s_node_set;
mod k8s_nodes;
mod lifecycle;
mod locking;
mod pg_crash;
mod pg_shared;
mod pg_support;
mod pnap_sim_wire;
mod saved_plans;
mod support;
mod throttled;
mod windows;
