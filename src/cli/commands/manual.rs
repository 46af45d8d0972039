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
/// `skyplan-plan(1)`, `skyplan-state-rm(1)`, as git and cargo have one page per command.
pub(super) fn man(path: &[String]) -> Result<u8, Report> {
    let mut skyplan = Cli::command();
    // Global options (-c, -v) reach the commands' pages only once the command is built.
    skyplan.build();
    let mut page = skyplan;
    let mut title = String::from("skyplan");
    for name in path {
        let command = page
            .find_subcommand(name)
            .ok_or_else(|| not_a_command(&title, &page, name))?;
        title = format!("{title}-{}", command.get_name());
        page = command.clone();
    }
    let page = match path.is_empty() {
        true => page,
        false => page.name(title).version(env!("CARGO_PKG_VERSION")),
    };
    let mut roff = Vec::new();
    render(&page, &mut roff).into_diagnostic()?;
    std::io::Write::write_all(&mut std::io::stdout(), &roff).into_diagnostic()?;
    Ok(exit::SUCCESS)
}

fn not_a_command(parent: &str, page: &clap::Command, name: &str) -> Report {
    let names: Vec<&str> = page.get_subcommands().map(|c| c.get_name()).collect();
    let parent = parent.replace('-', " ");
    match names.is_empty() {
        true => miette!("`{parent}` has no commands: `{name}` is not one"),
        false => miette!(
            "`{name}` is not a {parent} command: one of {}",
            names.join(", ")
        ),
    }
}

/// clap_mangen's sections, with what `--help` says after the options (the environment, the
/// exit status) as sections of their own rather than clap_mangen's one "EXTRA" paragraph —
/// and an EXIT STATUS on every page.
fn render(page: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
    let man = clap_mangen::Man::new(page.clone());
    man.render_title(out)?;
    man.render_name_section(out)?;
    man.render_synopsis_section(out)?;
    man.render_description_section(out)?;
    if page.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(out)?;
    }
    if page.has_subcommands() {
        man.render_subcommands_section(out)?;
    }
    let after = page
        .get_after_long_help()
        .map(|text| text.to_string())
        .unwrap_or_else(|| exit::OTHER_STATUS.to_string());
    for block in after.split("\n\n") {
        out.extend(section(block).as_bytes());
    }
    man.render_version_section(out)
}

/// `Exit status:` and its `  CODE  meaning` lines as a roff section of tagged paragraphs.
fn section(block: &str) -> String {
    let mut lines = block.lines();
    let heading = lines.next().unwrap_or_default().trim_end_matches(':');
    let mut roff = format!(".SH \"{}\"\n", heading.to_uppercase());
    for line in lines {
        let (tag, text) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
        roff.push_str(&format!(
            ".TP\n\\fB{}\\fR\n{}\n",
            escape(tag),
            escape(text.trim())
        ));
    }
    roff
}

/// Roff's special characters: a backslash, a leading dot or quote, and `-` (a hyphen, not a
/// minus, so man pages can be searched for options).
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    match text.starts_with(['.', '\'']) {
        true => format!("\\&{text}"),
        false => text,
    }
}
