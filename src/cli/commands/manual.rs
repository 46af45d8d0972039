//! `skyplan completions SHELL` and `skyplan man [COMMAND]`: generated from the clap
//! definition, so they never fall behind the commands.

use clap::CommandFactory;
use miette::{miette, IntoDiagnostic, Report};

use super::super::args::Cli;
use super::super::exit;

pub(super) fn completions(shell: clap_complete::Shell) -> Result<u8, Report> {
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "skyplan", &mut std::io::stdout());
    Ok(exit::SUCCESS)
}

/// skyplan's page (its options and the list of commands), or one command's page,
/// `skyplan-plan(1)`, as git and cargo have one page per command.
pub(super) fn man(name: Option<&str>) -> Result<u8, Report> {
    let mut skyplan = Cli::command();
    // Global options (-c, -v) reach the commands' pages only once the command is built.
    skyplan.build();
    let page = match name {
        None => skyplan,
        Some(name) => {
            let command = skyplan.find_subcommand(name).ok_or_else(|| {
                let names: Vec<&str> = skyplan.get_subcommands().map(|c| c.get_name()).collect();
                miette!(
                    "`{name}` is not a skyplan command: one of {}",
                    names.join(", ")
                )
            })?;
            let title = format!("skyplan-{}", command.get_name());
            command
                .clone()
                .name(title)
                .version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut roff)
        .into_diagnostic()?;
    std::io::Write::write_all(&mut std::io::stdout(), &roff).into_diagnostic()?;
    Ok(exit::SUCCESS)
}
