//! The command line: parses arguments, runs the stages, prints, and maps every outcome to an
//! exit code. The only module that prints.

mod args;
mod commands;
pub mod exit;
mod progress;

use clap::Parser;

pub use args::Cli;

/// The binary's whole main: parse, run, report; returns the exit code.
pub fn main() -> u8 {
    let cli = Cli::parse();
    init_tracing(cli.verbose);
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
            anstream::eprintln!("{report:?}");
            exit::ERROR
        }
    }
}

fn init_tracing(verbose: u8) {
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
        .with_target(false)
        .init();
}
