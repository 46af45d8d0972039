//! One module per command (or family of commands). Each function returns the exit code, or an
//! error report that the caller prints (exit 1).

mod adopt;
mod apply;
mod apply_interrupt;
mod config_show;
mod discover;
mod drift;
mod graph;
mod kubeconfig;
mod manual;
mod plan;
mod plan_formats;
mod refresh_only;
mod sim;
mod state;

use miette::{miette, Report};

use super::args::{Cli, Command, ConfigCommand, Locking, SimCommand, StateCommand};
use super::report::{self, Reported};
use super::{colour, exit};
use crate::config::{self, Config};
use crate::registry;
use crate::workspace::{Workspace, WorkspaceError};

/// Where the config is — its layers, each a file or a directory, later ones laid over earlier
/// ones — and the values given to its variables: what a command loads it from.
#[derive(Debug, Clone)]
pub(super) struct ConfigSource {
    pub layers: Vec<std::path::PathBuf>,
    pub variables: config::Variables,
}

impl ConfigSource {
    /// The config of the command line, with the variables given by `--var`, `--var-file` and
    /// the environment's `SKYPLAN_VAR_NAME`.
    fn of(cli: &Cli) -> Self {
        let given = &cli.variables;
        ConfigSource {
            layers: cli.config.clone(),
            variables: config::Variables {
                assignments: given.var.clone(),
                files: given.var_file.clone(),
                ..config::Variables::from_environment(std::env::vars())
            },
        }
    }
}

pub async fn run(cli: Cli) -> Result<u8, Report> {
    let owned = ConfigSource::of(&cli);
    let source = &owned;
    match cli.command {
        Command::Validate => validate(source),
        Command::Plan(args) => {
            let source = owned.clone();
            on_worker(async move { plan::plan(&source, args).await }).await
        }
        Command::Apply(args) => apply::apply(source, args).await,
        Command::Graph { format } => graph::graph(source, format),
        Command::Drift {
            format,
            unmanaged,
            locking,
        } => drift::drift(source, format, unmanaged, &locking).await,
        Command::Discover(args) => discover::discover(source, &args).await,
        Command::Show {
            plan_file,
            json,
            now,
        } => state::show(source, plan_file.as_deref(), json, now),
        Command::Schema => state::schema(),
        Command::State(StateCommand::Rm { address }) => state::state_rm(source, &address).await,
        Command::State(StateCommand::Mv { from, to }) => state::state_mv(source, &from, &to).await,
        Command::State(StateCommand::Migrate { to }) => state::state_migrate(source, to),
        Command::State(command) => state::state(source, command),
        Command::Config(ConfigCommand::Show { origin }) => config_show::show(source, origin),
        Command::Import(args) => match &args.generate_config {
            Some(file) => adopt::adopt(source, file, &args).await,
            None => state::import(source, &args).await,
        },
        Command::ForceUnlock { id } => state::force_unlock(source, &id),
        Command::Kubeconfig {
            cluster,
            output,
            locking,
        } => kubeconfig::kubeconfig(source, &cluster, output, &locking).await,
        Command::Sim(SimCommand::Serve(args)) => sim::sim_serve(*args).await,
        Command::Completions { shell } => manual::completions(shell),
        Command::Man { command } => manual::man(&command),
    }
}

/// Runs `command` as a task on the runtime's workers, beside the HTTP connections it reads
/// from, so that a response wakes its reader on the same worker. Polled by `block_on` on the
/// main thread instead, every response of a refresh woke that thread: a futex wake and a
/// context switch per request, a tenth of a 5,000 load-balancer plan's time (issue 9).
async fn on_worker(
    command: impl std::future::Future<Output = Result<u8, Report>> + Send + 'static,
) -> Result<u8, Report> {
    match tokio::spawn(command).await {
        Ok(outcome) => outcome,
        Err(failed) => match failed.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(cancelled) => Err(miette!("the command was cancelled: {cancelled}")),
        },
    }
}

pub(super) fn load(source: &ConfigSource) -> Result<Config, Report> {
    let started = std::time::Instant::now();
    let config = config::load(
        &source.layers,
        &source.variables,
        crate::registry::CONFIG_SECTIONS,
    )
    .map_err(Report::new)?;
    tracing::info!(
        resources = config.resources.len(),
        ms = started.elapsed().as_millis(),
        "config loaded"
    );
    Ok(config)
}

fn validate(source: &ConfigSource) -> Result<u8, Report> {
    let config = load(source)?;
    println!(
        "The configuration is valid: {}.",
        crate::render::counted(config.resources.len(), "resource")
    );
    Ok(exit::SUCCESS)
}
/// Locks the state and connects the providers; tells what the workspace noticed on the way.
/// The config's `[[moved]]` entries are applied to the state the run starts from (in memory;
/// apply saves them): for the commands that plan, apply or compare.
pub(super) async fn open(
    config: Config,
    operation: &str,
    locking: &Locking,
) -> Result<Workspace, Report> {
    let mut workspace = open_as_stored(config, operation, locking).await?;
    if let Err(blocked) = workspace.follow_moves() {
        workspace.close().await.reported()?;
        return Err(report::workspace_report(blocked));
    }
    Ok(workspace)
}

/// [`open`] without the config's moves: for the commands that edit the state as it is stored
/// (`state rm`, `state mv`, `import`), which save it.
pub(super) async fn open_as_stored(
    config: Config,
    operation: &str,
    locking: &Locking,
) -> Result<Workspace, Report> {
    let store = registry::open_state(&config.settings)
        .map_err(WorkspaceError::from)
        .reported()?;
    let workspace = Workspace::open(
        config,
        store,
        operation,
        locking.lock_timeout,
        registry::connect,
    )
    .await
    .reported()?;
    for notice in &workspace.notices {
        colour::eprintln(format_args!("warning: {notice}"));
    }
    Ok(workspace)
}
