//! skyplan's pipeline: a declarative planner for Kubernetes cloud infrastructure that tells,
//! before anything is applied, what each change will really do to live traffic. The CLI, the
//! provider registry and the embedded simulators' wiring are the `skyplan` binary's.
//!
//! See ARCHITECTURE.md for the pipeline and which module owns each stage.

pub mod apply;
pub mod config;
pub mod graph;
pub mod invocation;
pub mod model;
pub mod parallel;
pub mod plan;
pub mod provider;
pub mod render;
pub mod state;
pub mod workspace;
