//! One function per command. Each returns the exit code, or an error report that the caller
//! prints (exit 1).

use std::io::{BufRead, IsTerminal, Write};

use miette::{miette, IntoDiagnostic, Report};

use super::args::{
    ApplyArgs, Cli, Command, DriftFormat, GraphFormat, Locking, MigrateTarget, PlanArgs, Selection,
    SimCommand, SimProvider, SimServeArgs, StateCommand,
};
use super::progress::{progress_for_stderr, Progress};
use super::report::{workspace_report, Reported};
use super::{colour, exit};
use crate::apply::hold::hold_back;
use crate::apply::window::MaintenancePolicy;
use crate::config::{self, Config};
use crate::plan::file::{PlanFile, PlanRequest};
use crate::plan::Plan;
use crate::provider::DriftCheck;
use crate::provider::PlanOptions;
use crate::registry;
use crate::render::{
    render_drift_github, render_drift_json, render_drift_junit, render_drift_markdown,
    render_drift_text, render_text, DriftItem, DriftReport, DriftResource, DriftStatus, PlanView,
    Style,
};
use crate::state::StateBackend;
use crate::workspace::DriftOutcome;
use crate::workspace::{Planned, Workspace};

pub async fn run(cli: Cli) -> Result<u8, Report> {
    match cli.command {
        Command::Validate => validate(&cli.config),
        Command::Plan(args) => on_worker(async move { plan(&cli.config, args).await }).await,
        Command::Apply(args) => apply(&cli.config, args).await,
        Command::Graph { format } => graph(&cli.config, format),
        Command::Drift { format, locking } => drift(&cli.config, format, &locking).await,
        Command::Show { plan_file, json } => show(&cli.config, plan_file.as_deref(), json),
        Command::Schema => schema(),
        Command::State(StateCommand::Rm { address }) => state_rm(&cli.config, &address).await,
        Command::State(StateCommand::Migrate { to }) => state_migrate(&cli.config, to),
        Command::State(command) => state(&cli.config, command),
        Command::Import {
            address,
            id,
            locking,
        } => import(&cli.config, &address, &id, &locking).await,
        Command::ForceUnlock { id } => force_unlock(&cli.config, &id),
        Command::Kubeconfig {
            cluster,
            output,
            locking,
        } => kubeconfig(&cli.config, &cluster, output, &locking).await,
        Command::Sim(SimCommand::Serve(args)) => sim_serve(*args).await,
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

fn load(path: &std::path::Path) -> Result<Config, Report> {
    let started = std::time::Instant::now();
    let config = config::load(path, crate::registry::CONFIG_SECTIONS).map_err(Report::new)?;
    tracing::info!(
        resources = config.resources.len(),
        ms = started.elapsed().as_millis(),
        "config loaded"
    );
    Ok(config)
}

fn validate(path: &std::path::Path) -> Result<u8, Report> {
    let config = load(path)?;
    println!(
        "The configuration is valid: {} resources.",
        config.resources.len()
    );
    Ok(exit::SUCCESS)
}

fn options(selection: &Selection) -> PlanOptions {
    PlanOptions {
        replace: selection.replace.iter().cloned().collect(),
        allow_delete: selection.allow_delete.iter().cloned().collect(),
    }
}

/// Every address named on the command line must be in the config or the state.
fn check_selection(workspace: &Workspace, selection: &Selection) -> Result<(), Report> {
    let named = selection
        .targets
        .iter()
        .chain(&selection.replace)
        .chain(&selection.allow_delete);
    for address in named {
        let known = workspace.config.resource(address).is_some()
            || workspace.state.resources.contains_key(address);
        if !known {
            return Err(miette!(
                "{address} is neither in the config nor in the state"
            ));
        }
    }
    Ok(())
}

/// Locks the state and connects the providers; tells what the workspace noticed on the way.
async fn open(config: Config, operation: &str, locking: &Locking) -> Result<Workspace, Report> {
    let workspace = Workspace::open(config, operation, locking.lock_timeout, registry::connect)
        .await
        .reported()?;
    for notice in &workspace.notices {
        colour::eprintln(format_args!("warning: {notice}"));
    }
    Ok(workspace)
}

/// The plan, and the refresh it was made from (for apply).
async fn make_plan(workspace: &Workspace, selection: &Selection) -> Result<Planned, Report> {
    check_selection(workspace, selection)?;
    let planned = workspace
        .plan(&options(selection), &selection.targets)
        .await
        .map_err(plan_error)?;
    tracing::info!(
        requests = workspace.request_count(),
        "refresh and plan done"
    );
    Ok(planned)
}

/// Plan errors about values the config names are printed one `file:line:col: address:
/// message` line each, unwrapped, so editors and CI can jump to them; the report says how many.
fn plan_error(error: crate::workspace::WorkspaceError) -> Report {
    use crate::workspace::WorkspaceError;
    let errors = match &error {
        WorkspaceError::Provider(e) if e.location.is_some() => std::slice::from_ref(e),
        WorkspaceError::Plan(errors) => errors.as_slice(),
        _ => return workspace_report(error),
    };
    for e in errors {
        colour::eprintln(e);
    }
    miette!(
        "cannot plan {} resource(s): each is listed above",
        errors.len()
    )
}

fn style() -> Style {
    match colour::decided().stdout {
        true => Style::Colour,
        false => Style::Plain,
    }
}

fn print_plan(view: &PlanView) {
    colour::print(render_text(view, style()));
}

async fn plan(path: &std::path::Path, args: PlanArgs) -> Result<u8, Report> {
    let config = load(path)?;
    let mut workspace = open(config, "plan", &args.locking).await?;
    let result = plan_in(&mut workspace, &args).await;
    let durations = workspace.state.durations.clone();
    workspace.close().await.reported()?;
    let plan = result?;
    let view = PlanView::measured(&plan, &durations);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&view).into_diagnostic()?);
    } else {
        print_plan(&view);
    }
    if let Some(out) = &args.out {
        eprintln!(
            "Saved the plan to {0}; `skyplan apply {0}` applies exactly this plan.",
            out.display()
        );
    }
    let code = plan_exit_code(&plan, &args);
    // The process ends with this command, and the system takes its memory back at once:
    // freeing a plan of 5,000 load balancers object by object (each change records its spec
    // as JSON) took a good part of the 80 ms between the plan and the exit.
    std::mem::forget(view);
    std::mem::forget(plan);
    Ok(code)
}

async fn plan_in(workspace: &mut Workspace, args: &PlanArgs) -> Result<Plan, Report> {
    if args.out.is_some() {
        workspace.save_new_state().reported()?;
    }
    let plan = make_plan(workspace, &args.selection).await?.plan;
    if let Some(out) = &args.out {
        let request = PlanRequest {
            targets: args.selection.targets.clone(),
            replace: args.selection.replace.clone(),
            allow_delete: args.selection.allow_delete.clone(),
        };
        PlanFile::new(plan.clone(), request, workspace.state_ref())
            .write(out)
            .into_diagnostic()?;
    }
    Ok(plan)
}

fn plan_exit_code(plan: &Plan, args: &PlanArgs) -> u8 {
    if args.fail_on.is_some_and(|class| {
        plan.changes
            .iter()
            .any(|c| c.action != crate::plan::Action::NoOp && c.impact() >= class)
    }) {
        exit::FAIL_ON
    } else if args.detailed_exitcode && plan.has_changes() {
        exit::CHANGES
    } else {
        exit::SUCCESS
    }
}

async fn apply(path: &std::path::Path, args: ApplyArgs) -> Result<u8, Report> {
    let config = load(path)?;
    let mut workspace = open(config, "apply", &args.locking).await?;
    let result = apply_in(&mut workspace, &args).await;
    workspace.close().await.reported()?;
    result
}

async fn apply_in(workspace: &mut Workspace, args: &ApplyArgs) -> Result<u8, Report> {
    let (Planned { plan, refreshes }, approved) = match &args.plan_file {
        Some(file) => (saved_plan(workspace, file, &args.selection).await?, true),
        None => (
            make_plan(workspace, &args.selection).await?,
            args.auto_approve,
        ),
    };
    if !args.json {
        print_plan(&PlanView::measured(&plan, &workspace.state.durations));
    }
    if let Some(refused) = refusal(&plan) {
        return Err(refused);
    }
    let policy =
        MaintenancePolicy::from_config(workspace.config.maintenance.as_ref()).into_diagnostic()?;
    let started = args.now.unwrap_or_else(jiff::Timestamp::now);
    let (runnable, held) = hold_back(&plan, &policy, started, &workspace.state.durations);
    for held in &held {
        colour::eprintln(format_args!(
            "held back: {} ({}): {}",
            held.address, held.impact, held.reason
        ));
    }
    if runnable.has_changes() && !approved && !confirm()? {
        println!("Apply cancelled.");
        return Ok(exit::ERROR);
    }
    // The window may close while apply runs: each resource is admitted against the clock then.
    let clock = std::time::Instant::now();
    let admit = |change: &crate::plan::ResourceChange| {
        let now = started + jiff::SignedDuration::try_from(clock.elapsed()).unwrap_or_default();
        change.requested || change.impact() <= policy.allowed_at(now)
    };
    let progress: std::sync::Arc<dyn Progress> = progress_for_stderr().into();
    let result = crate::apply::run(
        workspace,
        &runnable,
        &refreshes,
        args.parallelism,
        &admit,
        progress.clone(),
    )
    .await;
    progress.finish();
    let report = result.reported()?;
    if args.json {
        let document = apply_json(&plan, &report, workspace.request_count());
        println!(
            "{}",
            serde_json::to_string_pretty(&document).into_diagnostic()?
        );
    } else {
        println!(
            "Apply complete: {} resources, {} operations, {} API requests.",
            report.applied.len(),
            report.operations,
            workspace.request_count()
        );
        print_verification(&report);
    }
    let under: Vec<String> = report
        .under_predicted()
        .map(|v| format!("{}: {}", v.address, v.summary()))
        .collect();
    if !under.is_empty() {
        return Err(miette!(
            help = "the plan under-predicted: the difference is recorded in the state (`skyplan show`); please report it with the plan",
            "the cloud did more than the plan said for {} resource(s): {}",
            under.len(),
            under.join("; ")
        ));
    }
    let untouched: Vec<String> = held
        .iter()
        .map(|h| h.address.clone())
        .chain(report.left.iter().cloned())
        .collect();
    if untouched.is_empty() {
        Ok(exit::SUCCESS)
    } else {
        for address in &report.left {
            colour::eprintln(format_args!(
                "left for later: {address}: the maintenance window closed before it started"
            ));
        }
        Err(miette!(
            help = "run apply again inside a maintenance window (or with --now to see what it would do)",
            "the maintenance policy held back {} of the planned changes: {}",
            untouched.len(),
            untouched.join(", ")
        ))
    }
}

/// Each verified resource: "as predicted" or the difference.
fn print_verification(report: &crate::apply::ApplyReport) {
    if report.verified.is_empty() {
        return;
    }
    println!("Verified against the plan:");
    for verified in &report.verified {
        println!("  {}: {}", verified.address, verified.summary());
    }
}

/// `apply --json`: the plan, what was applied and each resource's verification.
fn apply_json(plan: &Plan, report: &crate::apply::ApplyReport, requests: u64) -> serde_json::Value {
    let verification: Vec<serde_json::Value> = report
        .verified
        .iter()
        .map(|v| {
            serde_json::json!({
                "address": v.address,
                "as_predicted": v.as_predicted(),
                "under_predicted": v.under_predicted(),
                "predicted": v.predicted,
                "observed": v.observed,
                "differences": v.differences,
                "summary": v.summary(),
            })
        })
        .collect();
    serde_json::json!({
        "plan": PlanView::new(plan),
        "applied": report.applied,
        "left": report.left,
        "operations": report.operations,
        "requests": requests,
        "verification": verification,
    })
}

/// Forbidden changes nobody asked for by name: apply refuses before touching anything.
fn refusal(plan: &Plan) -> Option<Report> {
    let refused = crate::apply::refusals(plan);
    (!refused.is_empty()).then(|| {
        miette!(
            help = "name the resource with --replace ADDR (or --allow-delete ADDR for a removal) to do it anyway",
            "apply refuses forbidden changes: {}",
            refused.join("; ")
        )
    })
}

/// A saved plan, if it is still exactly the plan for this state, config and cloud, with the
/// refresh that showed it. It was reviewed when it was made, so applying it asks nothing more.
async fn saved_plan(
    workspace: &Workspace,
    file: &std::path::Path,
    selection: &Selection,
) -> Result<Planned, Report> {
    if !(selection.targets.is_empty()
        && selection.replace.is_empty()
        && selection.allow_delete.is_empty())
    {
        return Err(miette!(
            "a saved plan already says what to do: --target, --replace and --allow-delete go with `plan --out`"
        ));
    }
    let saved = PlanFile::read(file).into_diagnostic()?;
    saved
        .check_state(&workspace.state_ref())
        .into_diagnostic()?;
    let again = Selection {
        targets: saved.request.targets.clone(),
        replace: saved.request.replace.clone(),
        allow_delete: saved.request.allow_delete.clone(),
    };
    let fresh = make_plan(workspace, &again).await?;
    saved.check_fresh(&fresh.plan).into_diagnostic()?;
    Ok(Planned {
        plan: saved.plan,
        refreshes: fresh.refreshes,
    })
}

/// Asks on the terminal; without one, refuses rather than guessing.
fn confirm() -> Result<bool, Report> {
    if !std::io::stdin().is_terminal() {
        return Err(miette!(
            help = "pass --auto-approve to apply without asking",
            "apply needs a confirmation and there is no terminal to ask on"
        ));
    }
    print!("Do you want to perform these changes? Only 'yes' is accepted: ");
    std::io::stdout().flush().into_diagnostic()?;
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .into_diagnostic()?;
    Ok(answer.trim() == "yes")
}

fn graph(path: &std::path::Path, format: GraphFormat) -> Result<u8, Report> {
    let config = load(path)?;
    let graph = registry::graph(&config);
    let text = match format {
        GraphFormat::Dot => graph.to_dot(),
        GraphFormat::Mermaid => graph.to_mermaid(),
    };
    print!("{text}");
    Ok(exit::SUCCESS)
}

async fn drift(
    path: &std::path::Path,
    format: DriftFormat,
    locking: &Locking,
) -> Result<u8, Report> {
    let config = load(path)?;
    let workspace = open(config, "drift", locking).await?;
    let outcomes = workspace.drift().await;
    workspace.close().await.reported()?;
    let report = drift_report(outcomes.reported()?);
    let text = match format {
        DriftFormat::Text => render_drift_text(&report, style()),
        DriftFormat::Json => render_drift_json(&report),
        DriftFormat::Markdown => render_drift_markdown(&report),
        DriftFormat::Junit => render_drift_junit(&report),
        DriftFormat::Github => render_drift_github(&report),
    };
    colour::print(text);
    Ok(if report.has_drift() {
        exit::CHANGES
    } else {
        exit::SUCCESS
    })
}

/// The report of every resource in the config or the state, located in the config where it
/// still is.
fn drift_report(outcomes: Vec<DriftOutcome>) -> DriftReport {
    let cwd = std::env::current_dir().unwrap_or_default();
    let resources = outcomes
        .into_iter()
        .map(|outcome| {
            let (status, items) = match outcome.check {
                DriftCheck::NotApplied => (DriftStatus::NotApplied, vec![]),
                DriftCheck::Missing => (DriftStatus::Missing, vec![]),
                DriftCheck::Compared(attributes) => {
                    let items: Vec<DriftItem> = attributes
                        .into_iter()
                        .map(|a| DriftItem {
                            path: a.path,
                            expected: a.after,
                            actual: a.before,
                            impact: a.impact,
                            reason: a.reason,
                        })
                        .collect();
                    let status = if items.is_empty() {
                        DriftStatus::InSync
                    } else {
                        DriftStatus::Drifted
                    };
                    (status, items)
                }
            };
            // Annotations point at the file as the repository sees it.
            let (file, line, column) = match outcome.location {
                Some(at) => (
                    at.file.strip_prefix(&cwd).unwrap_or(&at.file).to_path_buf(),
                    at.line,
                    at.column,
                ),
                None => (std::path::PathBuf::new(), 1, 1),
            };
            DriftResource {
                address: outcome.address.to_string(),
                provider: outcome.provider,
                file,
                line,
                column,
                status,
                items,
            }
        })
        .collect();
    DriftReport { resources }
}

fn show(
    path: &std::path::Path,
    plan_file: Option<&std::path::Path>,
    json: bool,
) -> Result<u8, Report> {
    let Some(file) = plan_file else {
        if json {
            return state(path, StateCommand::Json);
        }
        let state = load_state(path)?;
        for address in state.resources.keys() {
            println!("{address}");
        }
        print_mismatches(&state.mismatches);
        print_durations(&state.durations);
        return Ok(exit::SUCCESS);
    };
    let view = PlanView::new(&PlanFile::read(file).into_diagnostic()?.plan);
    if json {
        println!("{}", serde_json::to_string_pretty(&view).into_diagnostic()?);
    } else {
        print_plan(&view);
    }
    Ok(exit::SUCCESS)
}

fn schema() -> Result<u8, Report> {
    println!(
        "{}",
        serde_json::to_string_pretty(&config::json_schema(crate::registry::CONFIG_SECTIONS))
            .into_diagnostic()?
    );
    Ok(exit::SUCCESS)
}

/// The state as stored (an empty one when there is none yet), read without the lock.
fn load_state(path: &std::path::Path) -> Result<crate::state::State, Report> {
    let config = load(path)?;
    Ok(crate::state::open(&config.settings)
        .into_diagnostic()?
        .load()
        .into_diagnostic()?
        .unwrap_or_default())
}

fn state(path: &std::path::Path, command: StateCommand) -> Result<u8, Report> {
    let state = load_state(path)?;
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
        StateCommand::Rm { .. } | StateCommand::Migrate { .. } => {
            unreachable!("`state rm` and `state migrate` change the state under its lock")
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
            "  {kind}: typically {}, at most {} ({} run(s))",
            seconds(measured.typical_ms),
            seconds(measured.worst_ms),
            measured.runs
        );
    }
}

async fn state_rm(path: &std::path::Path, address: &crate::model::Address) -> Result<u8, Report> {
    let config = load(path)?;
    let mut workspace = open(config, "state rm", &Locking { lock_timeout: None }).await?;
    let result = workspace.forget(address).reported();
    workspace.close().await.reported()?;
    result?;
    println!("Removed {address} from the state; the cloud object was left as it is.");
    Ok(exit::SUCCESS)
}

async fn import(
    path: &std::path::Path,
    address: &crate::model::Address,
    id: &str,
    locking: &Locking,
) -> Result<u8, Report> {
    let config = load(path)?;
    let mut workspace = open(config, "import", locking).await?;
    let result = workspace.import(address, id).await.reported();
    workspace.close().await.reported()?;
    result?;
    println!("Imported {id} as {address}; `skyplan plan` now compares it with the config.");
    Ok(exit::SUCCESS)
}

async fn kubeconfig(
    path: &std::path::Path,
    cluster: &str,
    output: Option<std::path::PathBuf>,
    locking: &Locking,
) -> Result<u8, Report> {
    let name = cluster.strip_prefix("cluster.").unwrap_or(cluster);
    let address = crate::model::Address::new(crate::model::ResourceKind::Cluster, name);
    let config = load(path)?;
    let workspace = open(config, "kubeconfig", locking).await?;
    let result = workspace.kubeconfig(&address).await.reported();
    workspace.close().await.reported()?;
    let kubeconfig = result?;
    let output = output.unwrap_or_else(|| format!("{name}.kubeconfig").into());
    if output.as_os_str() == "-" {
        print!("{}", kubeconfig.expose());
        return Ok(exit::SUCCESS);
    }
    write_private(&output, kubeconfig.expose()).into_diagnostic()?;
    println!("Wrote the kubeconfig of {address} to {}.", output.display());
    Ok(exit::SUCCESS)
}

/// Writes a file only its owner can read: a kubeconfig holds cluster credentials.
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}

fn force_unlock(path: &std::path::Path, id: &str) -> Result<u8, Report> {
    let config = load(path)?;
    let holder = crate::state::open(&config.settings)
        .into_diagnostic()?
        .force_unlock(id)
        .into_diagnostic()?;
    println!(
        "Removed the lock of `{}` by {} on {} (pid {}) since {}.",
        holder.operation, holder.who, holder.host, holder.pid, holder.created
    );
    Ok(exit::SUCCESS)
}

/// `state migrate --to postgres|local`: between the state directory and `[backend.postgres]`.
fn state_migrate(path: &std::path::Path, to: MigrateTarget) -> Result<u8, Report> {
    use crate::state::{Migrated, StateStore};
    let config = load(path)?;
    let crate::config::Backend::Postgres(pg) = &config.settings.backend else {
        return Err(miette!(
            help = "add a [backend.postgres] table with url and workspace",
            "`state migrate` needs [backend.postgres] in the config"
        ));
    };
    let local = StateStore::open(&config.settings.state_dir);
    let postgres = crate::state::postgres::PgBackend::open(pg).into_diagnostic()?;
    let (source, target): (&dyn StateBackend, &dyn StateBackend) = match to {
        MigrateTarget::Postgres => (&local, &postgres),
        MigrateTarget::Local => (&postgres, &local),
    };
    let outcome = crate::state::migrate(source, target).into_diagnostic()?;
    let (from, into) = (source.describe(), target.describe());
    match outcome {
        Migrated::Moved { serial, resources } => println!(
            "Moved the state (serial {serial}, {resources} resources) from the {from} to the {into}; the {from} was left as it was."
        ),
        Migrated::AlreadyThere { serial } => {
            println!("The {into} already holds this state (serial {serial}); nothing was moved.")
        }
        Migrated::NothingToMove => println!("The {from} holds no state; nothing was moved."),
    }
    if to == MigrateTarget::Local {
        println!("Remove [backend.postgres] from the config to use the {into}.");
    }
    Ok(exit::SUCCESS)
}

/// `--kubeconfig` and its companions: the cluster a served cloud's CCM reconciles.
fn cluster_access(args: &SimServeArgs) -> Option<skyplan_sim::controllers::ClusterAccess> {
    Some(skyplan_sim::controllers::ClusterAccess {
        kubeconfig: args.kubeconfig.clone()?,
        context: args.context.clone(),
        scope: skyplan_sim::controllers::Scope {
            namespace: args.ccm_namespace.clone(),
            node_selector: args.ccm_node_selector.clone(),
        },
    })
}

/// The started CCM, announced on stderr (the kubeconfig's path, never its credentials).
fn announced(
    cloud: &str,
    cluster: &skyplan_sim::controllers::ClusterAccess,
    ccm: Result<skyplan_sim::controllers::ControllersHandle, String>,
) -> Result<skyplan_sim::controllers::ControllersHandle, Report> {
    let ccm = ccm.map_err(|e| miette::miette!("the simulated {cloud} CCM: {e}"))?;
    eprintln!(
        "{cloud} CCM reconciling the cluster of {}",
        cluster.kubeconfig.display()
    );
    Ok(ccm)
}

/// SIGINT and SIGTERM, listened for from before a served simulator announces its URL: a client
/// may signal as soon as it has read the URL, and a signal before the listener would end the
/// process at once, without writing the world file.
struct StopSignals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn listen() -> Result<StopSignals, Report> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(StopSignals {
                interrupt: signal(SignalKind::interrupt()).into_diagnostic()?,
                terminate: signal(SignalKind::terminate()).into_diagnostic()?,
            })
        }
        #[cfg(not(unix))]
        Ok(StopSignals {})
    }

    /// Resolves on the first SIGINT or SIGTERM.
    async fn wait(mut self) -> Result<(), Report> {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {}
            _ = self.terminate.recv() => {}
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.into_diagnostic()?;
        Ok(())
    }
}

/// Serves until SIGINT or SIGTERM, then stops the CCM before the caller stops the cloud: a
/// pass cut short by the cloud going away could leave a half-built load balancer.
async fn until_signal(
    signals: StopSignals,
    ccm: Option<skyplan_sim::controllers::ControllersHandle>,
) -> Result<(), Report> {
    signals.wait().await?;
    if let Some(ccm) = ccm {
        ccm.stop().await;
    }
    Ok(())
}

async fn sim_serve(args: SimServeArgs) -> Result<u8, Report> {
    let signals = StopSignals::listen()?;
    let cluster = cluster_access(&args);
    let has_ccm = matches!(
        args.provider,
        SimProvider::Cloudscale | SimProvider::Phoenixnap
    );
    if cluster.is_some() && !has_ccm {
        miette::bail!(
            "--kubeconfig runs a simulated CCM: only with --provider cloudscale or phoenixnap"
        );
    }
    match args.provider {
        SimProvider::Cloudscale => {
            use skyplan_sim::cloudscale as sim;
            let options = sim::SimOptions {
                token: args.token,
                settle: std::time::Duration::from_millis(args.settle_ms),
                faults: args.faults.parse().into_diagnostic()?,
            };
            let token = options.token.clone();
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "cloudscale simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            let ccm = match &cluster {
                Some(cluster) => {
                    let cloud = skyplan_sim::controllers::CloudscaleEndpoint {
                        api: handle.base_url(),
                        token: token.unwrap_or_else(|| sim::DEFAULT_TOKEN.to_owned()),
                    };
                    let ccm = skyplan_sim::controllers::cloudscale_ccm(cluster, cloud).await;
                    Some(announced("cloudscale", cluster, ccm)?)
                }
                None => None,
            };
            until_signal(signals, ccm).await?;
            handle.shutdown().await.into_diagnostic()?;
        }
        SimProvider::Cloudstack => {
            use skyplan_sim::cloudstack as sim;
            let options = sim::SimOptions {
                api_key: args.api_key,
                secret_key: args.secret_key,
                job_time: std::time::Duration::from_millis(args.job_ms),
                version: args.server_version,
                hypervisor: args.hypervisor,
                faults: args.faults.parse().into_diagnostic()?,
                ..sim::SimOptions::default()
            };
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "cloudstack simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            signals.wait().await?;
            handle.shutdown().await.into_diagnostic()?;
        }
        SimProvider::Phoenixnap => {
            use skyplan_sim::phoenixnap as sim;
            let client_id = args.client_id.clone();
            let client_secret = args.client_secret.as_ref().map(|s| s.expose().to_owned());
            let options = sim::PnapSimOptions {
                client_id: args.client_id,
                client_secret: args.client_secret.map(|s| s.expose().to_owned()),
                transition: std::time::Duration::from_millis(args.transition_ms),
                faults: args.faults.parse().into_diagnostic()?,
            };
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "phoenixnap simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            let ccm = match &cluster {
                Some(cluster) => {
                    let pnap = skyplan_sim::controllers::PnapEndpoint {
                        base_url: handle.base_url(),
                        client_id: client_id.unwrap_or_else(|| sim::DEFAULT_CLIENT_ID.into()),
                        client_secret: client_secret
                            .unwrap_or_else(|| sim::DEFAULT_CLIENT_SECRET.into()),
                        location: args.ccm_location,
                        load_balancer: args.ccm_load_balancer,
                    };
                    let ccm = skyplan_sim::controllers::phoenixnap_ccm(cluster, pnap).await;
                    Some(announced("PhoenixNAP", cluster, ccm)?)
                }
                None => None,
            };
            until_signal(signals, ccm).await?;
            handle.shutdown().await.into_diagnostic()?;
        }
        SimProvider::Kubernetes => {
            use skyplan_sim::kubernetes as sim;
            let options = sim::KubeSimOptions {
                listen: args.listen,
                version: args.kube_version,
                ..sim::KubeSimOptions::new(args.world.clone())
            };
            let handle = sim::spawn(options).await.into_diagnostic()?;
            eprintln!(
                "kubernetes simulator listening on {} (world {})",
                handle.url(),
                args.world.display()
            );
            signals.wait().await?;
            handle.shutdown().await.into_diagnostic()?;
        }
    }
    Ok(exit::SUCCESS)
}
