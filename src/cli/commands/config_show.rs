//! `config show [--origin]`: the configuration as it is read, layers laid over each other.

use std::path::PathBuf;

use miette::Report;

use super::super::exit;
use crate::config;

pub(super) fn show(layers: &[PathBuf], origin: bool) -> Result<u8, Report> {
    let text =
        config::show(layers, crate::registry::CONFIG_SECTIONS, origin).map_err(Report::new)?;
    print!("{text}");
    Ok(exit::SUCCESS)
}
