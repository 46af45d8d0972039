//! The state's housekeeping: `show`, `state list|json|show|rm|mv|migrate`, `import`,
//! `force-unlock`, and `schema`.

use crate::invocation::skyplan;
use miette::{miette, IntoDiagnostic, Report};

use super::super::args::{ImportArgs, Locking, MigrateTarget, StateCommand};
use super::super::exit;
use super::super::report::Reported;
use super::plan::{outlook, print_plan};
use super::{load, open_as_stored, ConfigSource};
use crate::apply::{saved, Dependencies};
use crate::config;
use crate::plan::file::PlanFile;
use crate::render::{counted, PlanView};
use crate::state::StateBackend;

pub(super) fn show(
    source: &ConfigSource,
    plan_file: Option<&std::path::Path>,
    json: bool,
    now: Option<jiff::Timestamp>,
) -> Result<u8, Report> {
    let Some(file) = plan_file else {
        if json {
            return state(source, StateCommand::Json);
        }
        let state = load_state(source)?;
        if state.resources.is_empty() && state.mismatches.is_empty() {
            println!(
                "No state: nothing has been applied or imported yet ({} shows what apply would do).",
                crate::invocation::skyplan("plan")
            );
            return Ok(exit::SUCCESS);
        }
        for address in state.resources.keys() {
            println!("{address}");
        }
        print_mismatches(&state.mismatches);
        print_durations(&state.durations);
        return Ok(exit::SUCCESS);
    };
    let view = saved_view(source, file, now)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&view).into_diagnostic()?);
    } else {
        print_plan(&view);
    }
    Ok(exit::SUCCESS)
}

/// A saved plan as `apply PLANFILE` would run it at `now` (the clock by default): by the
/// same decision, against the config and the stored state — what the plan held back when it
/// was made stays held back, and the window is checked again at `now`.
fn saved_view(
    source: &ConfigSource,
    file: &std::path::Path,
    now: Option<jiff::Timestamp>,
) -> Result<PlanView, Report> {
    let saved = PlanFile::read(file).into_diagnostic()?;
    let config = load(source)?;
    let state = stored_state(&config)?;
    let now = now.unwrap_or_else(jiff::Timestamp::now);
    if config.maintenance.is_some() {
        eprintln!(
            "note: the plan's window decisions were taken for {}; shown as `{}` would run it at {now}: what the plan held back stays held back, and the window is checked again.",
            saved.outlook.decided_at,
            skyplan(&format!("apply {}", file.display())),
        );
    }
    let dependencies = Dependencies {
        config: &config,
        state: &state,
    };
    let (view, _) = outlook(
        dependencies,
        &saved.plan,
        &saved.request.exclude,
        &saved::held_then(&saved.outlook),
        now,
        config.rollout.as_ref(),
    )?;
    Ok(view)
}

pub(super) fn schema() -> Result<u8, Report> {
    println!(
        "{}",
        serde_json::to_string_pretty(&config::json_schema(crate::registry::CONFIG_SECTIONS))
            .into_diagnostic()?
    );
    Ok(exit::SUCCESS)
}

/// The state as stored (an empty one when there is none yet), read without the lock.
fn load_state(source: &ConfigSource) -> Result<crate::state::State, Report> {
    stored_state(&load(source)?)
}

/// The state `config` keeps (an empty one when there is none yet), read without the lock.
fn stored_state(config: &config::Config) -> Result<crate::state::State, Report> {
    Ok(crate::registry::open_state(&config.settings)
        .into_diagnostic()?
        .load()
        .into_diagnostic()?
        .unwrap_or_default())
}

pub(super) fn state(source: &ConfigSource, command: StateCommand) -> Result<u8, Report> {
    let state = load_state(source)?;
    match command {
        StateCommand::List => {
            for address in state.resources.keys() {
                println!("{address}");
            }
        }
        StateCommand::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(&state).into_diagnostic()?
            );
        }
        StateCommand::Rm { .. } | StateCommand::Mv { .. } | StateCommand::Migrate { .. } => {
            unreachable!(
                "`state rm`, `state mv` and `state migrate` change the state under its lock"
            )
        }
        StateCommand::Show { address } => {
            let entry = state
                .resources
                .get(&address)
                .ok_or_else(|| miette!("{address} is not in the state"))?;
            println!("{}", serde_json::to_string_pretty(entry).into_diagnostic()?);
        }
    }
    Ok(exit::SUCCESS)
}

/// The differences apply's verifications recorded, newest last.
fn print_mismatches(mismatches: &[crate::plan::verification::RecordedMismatch]) {
    if mismatches.is_empty() {
        return;
    }
    println!();
    println!(
        "Apply found the cloud doing other than the plan said ({}):",
        mismatches.len()
    );
    for mismatch in mismatches {
        let verified = &mismatch.verification;
        let mark = if verified.under_predicted() {
            "under-predicted"
        } else {
            "differed"
        };
        println!(
            "  {} {}: {} ({mark})",
            mismatch.at,
            verified.address,
            verified.summary()
        );
    }
}

/// How long each kind of operation took in the recent applies.
fn print_durations(durations: &crate::plan::durations::Durations) {
    use crate::plan::durations::seconds;
    if durations.is_empty() {
        return;
    }
    println!();
    println!("Measured operation durations (recent applies):");
    for (kind, measured) in durations.kinds() {
        println!(
            "  {kind}: typically {}, at most {} ({})",
            seconds(measured.typical_ms),
            seconds(measured.worst_ms),
            counted(measured.runs, "run")
        );
    }
}

pub(super) async fn state_rm(
    source: &ConfigSource,
    address: &crate::model::Address,
) -> Result<u8, Report> {
    let config = load(source)?;
    let mut workspace = open_as_stored(config, "state rm", &Locking { lock_timeout: None }).await?;
    let result = workspace.forget(address).reported();
    workspace.close().await.reported()?;
    result?;
    println!("Removed {address} from the state; the cloud object was left as it is.");
    Ok(exit::SUCCESS)
}

/// `state mv OLD NEW`: the entry renamed (and OLD wherever other entries name it), under the
/// lock, saved against the serial it was read at. The config's moves are not applied first:
/// this edits the state as stored.
pub(super) async fn state_mv(
    source: &ConfigSource,
    from: &crate::model::Address,
    to: &crate::model::Address,
) -> Result<u8, Report> {
    let config = load(source)?;
    let mut workspace = open_as_stored(config, "state mv", &Locking { lock_timeout: None }).await?;
    let result = workspace.move_entry(from, to).reported();
    workspace.close().await.reported()?;
    result?;
    println!("Moved {from} to {to}.");
    Ok(exit::SUCCESS)
}

pub(super) async fn import(source: &ConfigSource, args: &ImportArgs) -> Result<u8, Report> {
    let [address, id] = args.objects.as_slice() else {
        return Err(miette!(
            "import takes ADDR ID (`skyplan import load-balancer.web <uuid>`), or --generate-config FILE with ADDR=ID pairs or --all"
        ));
    };
    let address: crate::model::Address = address.parse().into_diagnostic()?;
    let config = load(source)?;
    let mut workspace = open_as_stored(config, "import", &args.locking).await?;
    let result = workspace.import(&address, id).await.reported();
    workspace.close().await.reported()?;
    result?;
    let plan = skyplan("plan");
    println!("Imported {id} as {address}; `{plan}` now compares it with the config.");
    Ok(exit::SUCCESS)
}

pub(super) fn force_unlock(source: &ConfigSource, id: &str) -> Result<u8, Report> {
    let config = load(source)?;
    let holder = crate::registry::open_state(&config.settings)
        .into_diagnostic()?
        .force_unlock(id)
        .into_diagnostic()?;
    println!(
        "Removed the lock of `{}` by {} on {} (pid {}) since {}.",
        holder.operation, holder.who, holder.host, holder.pid, holder.created
    );
    Ok(exit::SUCCESS)
}

/// `state migrate --to postgres|kubernetes|local`: between the state directory and the
/// backend the config names.
pub(super) fn state_migrate(source: &ConfigSource, to: MigrateTarget) -> Result<u8, Report> {
    use crate::state::{Migrated, StateStore};
    let config = load(source)?;
    let table = migrate_table(&config.settings.backend, to)?;
    let local = StateStore::open(&config.settings.state_dir);
    let remote = crate::registry::open_state(&config.settings).into_diagnostic()?;
    let (source, target): (&dyn StateBackend, &dyn StateBackend) = match to {
        MigrateTarget::Local => (remote.as_ref(), &local),
        MigrateTarget::Postgres | MigrateTarget::Kubernetes => (&local, remote.as_ref()),
    };
    let outcome = crate::state::migrate(source, target).into_diagnostic()?;
    let (from, into) = (source.describe(), target.describe());
    match outcome {
        Migrated::Moved { serial, resources } => println!(
            "Moved the state (serial {serial}, {}) from the {from} to the {into}; the {from} was left as it was.",
            counted(resources, "resource")
        ),
        Migrated::AlreadyThere { serial } => {
            println!("The {into} already holds this state (serial {serial}); nothing was moved.")
        }
        Migrated::NothingToMove => println!("The {from} holds no state; nothing was moved."),
    }
    if to == MigrateTarget::Local {
        println!("Remove {table} from the config to use the {into}.");
    }
    Ok(exit::SUCCESS)
}

/// The backend table `state migrate` moves to or from: the one `--to` names, else (`--to
/// local`) the one the config has.
fn migrate_table(
    backend: &crate::config::Backend,
    to: MigrateTarget,
) -> Result<&'static str, Report> {
    use crate::config::Backend;
    match (backend, to) {
        (Backend::Postgres(_), MigrateTarget::Postgres | MigrateTarget::Local) => {
            Ok("[backend.postgres]")
        }
        (Backend::Kubernetes(_), MigrateTarget::Kubernetes | MigrateTarget::Local) => {
            Ok("[backend.kubernetes]")
        }
        (_, MigrateTarget::Postgres) => Err(miette!(
            help = "add a [backend.postgres] table with url and workspace",
            "`state migrate --to postgres` needs [backend.postgres] in the config"
        )),
        (_, MigrateTarget::Kubernetes) => Err(miette!(
            help = "add a [backend.kubernetes] table with namespace and workspace",
            "`state migrate --to kubernetes` needs [backend.kubernetes] in the config"
        )),
        (_, MigrateTarget::Local) => Err(miette!(
            help = "add the [backend.postgres] or [backend.kubernetes] table the state is in",
            "`state migrate --to local` needs the backend the state is in, in the config"
        )),
    }
}
