//! `skyplan graph`: the dependency graph of the configured objects.

use miette::Report;

use super::super::args::GraphFormat;
use super::super::exit;
use super::{load, ConfigSource};
use crate::registry;

pub(super) fn graph(source: &ConfigSource, format: GraphFormat) -> Result<u8, Report> {
    let config = load(source)?;
    let graph = registry::graph(&config);
    let text = match format {
        GraphFormat::Dot => graph.to_dot(),
        GraphFormat::Mermaid => graph.to_mermaid(),
    };
    print!("{text}");
    Ok(exit::SUCCESS)
}
