//! One function per command. Each returns the exit code, or an error report that the caller
//! prints (exit 1).

use std::io::{BufRead, IsTerminal, Write};

use miette::{miette, IntoDiagnostic, Report};

use super::args::{
    ApplyArgs, Cli, Command, GraphFormat, Locking, PlanArgs, Selection, SimCommand, SimProvider,
    SimServeArgs, StateCommand,
};
use super::exit;
use crate::config::{self, Config, ResourceSpec};
use crate::graph::ObjectGraph;
use crate::plan::file::{PlanFile, PlanRequest};
use crate::plan::Plan;
use crate::provider::cloudscale::order::add_to_graph;
use crate::provider::PlanOptions;
use crate::render::{render_text, PlanView, Style};
use crate::state::StateStore;
use crate::workspace::Workspace;

pub async fn run(cli: Cli) -> Result<u8, Report> {
    match cli.command {
        Command::Validate => validate(&cli.config),
        Command::Plan(args) => plan(&cli.config, args).await,
        Command::Apply(args) => apply(&cli.config, args).await,
        Command::Graph { format } => graph(&cli.config, format),
        Command::Show { plan_file, json } => show(&cli.config, plan_file.as_deref(), json),
        Command::Schema => schema(),
        Command::State(command) => state(&cli.config, command),
        Command::ForceUnlock { id } => force_unlock(&cli.config, &id),
        Command::Sim(SimCommand::Serve(args)) => sim_serve(args).await,
    }
}

fn load(path: &std::path::Path) -> Result<Config, Report> {
    config::load(path).map_err(Report::new)
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
    let workspace = Workspace::open(config, operation, locking.lock_timeout)
        .await
        .into_diagnostic()?;
    for notice in &workspace.notices {
        anstream::eprintln!("warning: {notice}");
    }
    Ok(workspace)
}

async fn make_plan(workspace: &Workspace, selection: &Selection) -> Result<Plan, Report> {
    check_selection(workspace, selection)?;
    let plan = workspace
        .plan(&options(selection), &selection.targets)
        .await
        .into_diagnostic()?;
    tracing::info!(
        requests = workspace.request_count(),
        "refresh and plan done"
    );
    Ok(plan)
}

fn style() -> Style {
    match anstream::AutoStream::choice(&std::io::stdout()) {
        anstream::ColorChoice::Never => Style::Plain,
        _ => Style::Colour,
    }
}

fn print_plan(view: &PlanView) {
    anstream::print!("{}", render_text(view, style()));
}

async fn plan(path: &std::path::Path, args: PlanArgs) -> Result<u8, Report> {
    let config = load(path)?;
    let mut workspace = open(config, "plan", &args.locking).await?;
    let result = plan_in(&mut workspace, &args).await;
    workspace.close().await.into_diagnostic()?;
    let plan = result?;
    let view = PlanView::new(&plan);
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
    Ok(plan_exit_code(&plan, &args))
}

async fn plan_in(workspace: &mut Workspace, args: &PlanArgs) -> Result<Plan, Report> {
    if args.out.is_some() {
        workspace.save_new_state().into_diagnostic()?;
    }
    let plan = make_plan(workspace, &args.selection).await?;
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
    workspace.close().await.into_diagnostic()?;
    result
}

async fn apply_in(workspace: &mut Workspace, args: &ApplyArgs) -> Result<u8, Report> {
    let (plan, approved) = match &args.plan_file {
        Some(file) => (saved_plan(workspace, file, &args.selection).await?, true),
        None => (
            make_plan(workspace, &args.selection).await?,
            args.auto_approve,
        ),
    };
    print_plan(&PlanView::new(&plan));
    if plan.refused().next().is_none() && plan.has_changes() && !approved && !confirm()? {
        println!("Apply cancelled.");
        return Ok(exit::ERROR);
    }
    let report = crate::apply::run(workspace, &plan, args.parallelism)
        .await
        .into_diagnostic()?;
    println!(
        "Apply complete: {} resources, {} operations, {} API requests.",
        report.applied.len(),
        report.operations,
        workspace.request_count()
    );
    Ok(exit::SUCCESS)
}

/// A saved plan, if it is still exactly the plan for this state, config and cloud. It was
/// reviewed when it was made, so applying it asks nothing more.
async fn saved_plan(
    workspace: &Workspace,
    file: &std::path::Path,
    selection: &Selection,
) -> Result<Plan, Report> {
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
    saved.check_fresh(&fresh).into_diagnostic()?;
    Ok(saved.plan)
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
    let mut graph = ObjectGraph::new();
    for resource in &config.resources {
        match &resource.spec {
            ResourceSpec::LoadBalancer(spec) => add_to_graph(&mut graph, &resource.address, spec),
        }
    }
    let text = match format {
        GraphFormat::Dot => graph.to_dot(),
        GraphFormat::Mermaid => graph.to_mermaid(),
    };
    print!("{text}");
    Ok(exit::SUCCESS)
}

fn show(
    path: &std::path::Path,
    plan_file: Option<&std::path::Path>,
    json: bool,
) -> Result<u8, Report> {
    let Some(file) = plan_file else {
        return state(
            path,
            if json {
                StateCommand::Json
            } else {
                StateCommand::List
            },
        );
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
        serde_json::to_string_pretty(&config::json_schema()).into_diagnostic()?
    );
    Ok(exit::SUCCESS)
}

fn state(path: &std::path::Path, command: StateCommand) -> Result<u8, Report> {
    let config = load(path)?;
    let state = StateStore::open(&config.settings.state_dir)
        .load()
        .into_diagnostic()?
        .unwrap_or_default();
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

fn force_unlock(path: &std::path::Path, id: &str) -> Result<u8, Report> {
    let config = load(path)?;
    let holder = StateStore::open(&config.settings.state_dir)
        .force_unlock(id)
        .into_diagnostic()?;
    println!(
        "Removed the lock of `{}` by {} on {} (pid {}) since {}.",
        holder.operation, holder.who, holder.host, holder.pid, holder.created
    );
    Ok(exit::SUCCESS)
}

async fn sim_serve(args: SimServeArgs) -> Result<u8, Report> {
    match args.provider {
        SimProvider::Cloudscale => {
            use crate::sim::cloudscale as sim;
            let options = sim::SimOptions {
                token: args.token,
                settle: std::time::Duration::from_millis(args.settle_ms),
                ..sim::SimOptions::default()
            };
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "cloudscale simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            handle.serve_until_ctrl_c().await.into_diagnostic()?;
        }
    }
    Ok(exit::SUCCESS)
}
