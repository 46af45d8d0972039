//! The command line: parses arguments, runs the stages, prints, and maps every outcome to an
//! exit code. The only module that prints.

mod args;
mod colour;
mod commands;
mod config_layers;
pub mod exit;
mod progress;
mod report;
mod repository;
mod signals;

use std::io::IsTerminal;

use clap::{CommandFactory, FromArgMatches};

pub use args::Cli;

/// The binary's whole main: parse, run, report; returns the exit code.
pub fn main() -> u8 {
    let colour = colour::decided();
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    init_reports(colour.stderr);
    init_tracing(cli.verbose, colour.stderr);
    crate::invocation::remember(&cli.config);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::ERROR;
        }
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(code) => code,
        Err(report) => {
            colour::eprintln(format_args!("{report:?}"));
            exit::ERROR
        }
    }
}

/// The arguments; clap's help, version or usage error printed (to stdout or stderr, as clap
/// would) with colour as decided for that stream, and the exit code: 0 for help and version,
/// 1 for a usage error — not clap's 2, which is skyplan's "changes present" and "drift
/// present": a CI job with a mistyped flag must fail, not report drift (contract.md).
fn parse() -> Result<Cli, u8> {
    let parsed = Cli::command().try_get_matches().and_then(|matches| {
        let mut cli = Cli::from_arg_matches(&matches)?;
        let args: Vec<_> = std::env::args_os().skip(1).collect();
        if let Some(layers) = config_layers::written(&matches, &args) {
            cli.config = layers;
        }
        Ok(cli)
    });
    parsed.map_err(|error| {
        let text = error.render();
        match error.use_stderr() {
            true if colour::decided().stderr => colour::eprintln(text.ansi()),
            true => colour::eprintln(text),
            false if colour::decided().stdout => colour::print(text.ansi()),
            false => colour::print(text),
        }
        match error.use_stderr() {
            true => exit::ERROR,
            false => exit::SUCCESS,
        }
    })
}

/// Error reports in colour only as decided (miette would decide for itself, by other rules),
/// and wrapped only on a terminal: in a log or a pipe each message stays on one line, so
/// that a URL, a path or a certificate error can be searched for and copied whole.
fn init_reports(colour: bool) {
    let terminal = std::io::stderr().is_terminal();
    let _ = miette::set_hook(Box::new(move |_| {
        let options = miette::MietteHandlerOpts::new()
            .color(colour)
            .wrap_lines(terminal)
            .break_words(false);
        // Terminal hyperlinks are escape sequences too.
        let options = match colour {
            true => options,
            false => options.terminal_links(false),
        };
        Box::new(options.build())
    }));
}

fn init_tracing(verbose: u8, colour: bool) {
    // kube-client logs every failed request at ERROR, without its cause; skyplan reports the
    // failure itself, with it.
    let default = match verbose {
        0 => "warn,kube_client=off",
        1 => "skyplan=info",
        _ => "skyplan=debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SKYPLAN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .with_target(false)
        .init();
}
