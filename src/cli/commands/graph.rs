//! `skyplan graph`: the dependency graph of the configured objects.

use miette::Report;

use super::super::args::GraphFormat;
use super::super::exit;
use super::load;
use crate::registry;

pub(super) fn graph(layers: &[std::path::PathBuf], format: GraphFormat) -> Result<u8, Report> {
    let config = load(layers)?;
    let graph = registry::graph(&config);
    let text = match format {
        GraphFormat::Dot => graph.to_dot(),
        GraphFormat::Mermaid => graph.to_mermaid(),
    };
    print!("{text}");
    Ok(exit::SUCCESS)
}
