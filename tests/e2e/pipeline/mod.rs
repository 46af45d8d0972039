//! The pipeline, whichever cloud it drives (here mostly the embedded cloudscale): the command
//! line, colour, saved plans, what apply holds back, locking, maintenance windows,
//! verification and measured durations, renaming resources (`[[moved]]`, `state mv`), drift
//! reports, the state in PostgreSQL, `sim serve`, the examples in place, and the crate layering.

pub mod adoption;
pub mod cli;
pub mod colour;
pub mod config_directories;
pub mod config_layers;
pub mod drift_reports;
pub mod examples_in_place;
pub mod held_back;
pub mod ignore_changes;
pub mod kube_sim_health;
pub mod layering;
pub mod layers_with_reuse;
pub mod locking;
pub mod maintenance_windows;
pub mod measured_durations;
pub mod moves;
pub mod plan_formats;
pub mod postgres;
pub mod refresh_only;
pub mod reuse_defaults;
pub mod reuse_errors;
pub mod reuse_for_each;
pub mod reuse_variables;
pub mod rollout;
pub mod rollout_gates;
pub mod saved_plans;
pub mod sim_health;
pub mod sim_health_cloudstack;
pub mod sim_serve;
pub mod tidy;
pub mod verification;
