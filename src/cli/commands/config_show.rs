//! `config show [--origin]`: the configuration as it is read, layers laid over each other.

use miette::Report;

use super::super::exit;
use super::ConfigSource;
use crate::config;

pub(super) fn show(source: &ConfigSource, origin: bool) -> Result<u8, Report> {
    let sections = crate::registry::CONFIG_SECTIONS;
    let text =
        config::show(&source.layers, &source.variables, sections, origin).map_err(Report::new)?;
    print!("{text}");
    Ok(exit::SUCCESS)
}
