//! The dependency graph of cloud objects and the order in which to change them.
//!
//! Architecture invariant: this module knows nothing about any provider. Objects are named by
//! their resource address plus a provider-chosen kind and name; no IO happens here.

mod object_graph;
mod order;
mod render;
mod resources;

pub use object_graph::{GraphError, ObjectGraph, ObjectKey};
pub use order::{apply_order, Action, Step};
