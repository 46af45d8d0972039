//! Providers: one folder per cloud, each with its client and its impact table.

pub mod cloudscale;
