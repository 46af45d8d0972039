//! The command line, as clap parses it: no IO, no resolution.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::exit;
use crate::config::{Rollout, RolloutPer};
use crate::model::{Address, Impact, Secret};

/// What `skyplan --help` and the man page say about the environment.
macro_rules! environment {
    () => {
        "Environment:
  SKYPLAN_CONFIG   the config when -c is not given (one file or directory)
  SKYPLAN_VAR_NAME the value of the config's variable NAME (exact case), under --var-file and --var
  SKYPLAN_LOG      a tracing filter for stderr, e.g. skyplan=debug (overrides -v)
  NO_COLOR         no colour on any stream; CLICOLOR_FORCE=1: colour even into a pipe"
    };
}

/// What `skyplan --help` and the man page say after the options: the environment and every
/// exit code, by command (each command's own in `exit.rs`).
const AFTER_HELP: &str = concat!(
    environment!(),
    "

Exit status:
  0  success (plan --detailed-exitcode: no changes; drift: no drift)
  1  an error (bad config or flags, an API failure), or apply refused or applied nothing
  2  plan --detailed-exitcode: the plan has changes; drift: drift found
  3  plan --fail-on CLASS: a change at or above CLASS
  4  apply: applied, but some changes were held back (each listed with why)
  5  apply: a rollout stopped by a health gate (or by a change that did more than planned)"
);

#[derive(Debug, Parser)]
#[command(
    name = "skyplan",
    version,
    about = "Plan Kubernetes cloud infrastructure changes and know their real impact before applying them",
    after_long_help = AFTER_HELP
)]
pub struct Cli {
    /// A config file, or a directory whose skyplan *.toml files are merged. Repeatable, for
    /// environments: `-c base -c env/prod` lays each later config over the earlier ones.
    #[arg(
        short,
        long,
        global = true,
        default_value = ".",
        env = "SKYPLAN_CONFIG",
        action = clap::ArgAction::Append,
        value_name = "PATH"
    )]
    pub config: Vec<PathBuf>,
    /// More detail on stderr (-v: info, -vv: debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(flatten)]
    pub variables: VariableArgs,
    #[command(subcommand)]
    pub command: Command,
}

/// Values for the config's `[variables]`, on every command that reads the config.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Config variables")]
pub struct VariableArgs {
    /// A variable's value, NAME=VALUE (repeatable): wins over --var-file, SKYPLAN_VAR_NAME and
    /// the config's [variables].
    #[arg(long = "var", value_name = "NAME=VALUE", global = true, value_parser = assignment)]
    pub var: Vec<(String, String)>,
    /// A TOML file of NAME = "value" lines for the config's variables (repeatable, a later
    /// file wins): wins over SKYPLAN_VAR_NAME and the config's [variables].
    #[arg(long = "var-file", value_name = "FILE", global = true)]
    pub var_file: Vec<PathBuf>,
}

/// `NAME=VALUE`, split at the first `=`.
fn assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse and check the config; nothing is sent anywhere.
    Validate,
    /// Refresh the live state, diff it with the config and show each change's impact.
    #[command(after_long_help = exit::PLAN_STATUS)]
    Plan(PlanArgs),
    /// Plan, then carry the plan out.
    ///
    /// Ctrl-C (or SIGTERM) while changes run: no new change starts, the ones in flight finish
    /// whole, the state records what was done, and apply lists what was not started and exits
    /// with 1. A second Ctrl-C stops at once; the journal records what was in flight, and the
    /// next plan or apply recovers from it.
    #[command(after_long_help = exit::APPLY_STATUS)]
    Apply(ApplyArgs),
    /// Report what changed in the cloud outside skyplan: exit 0 none, 2 drift, 1 error.
    #[command(after_long_help = exit::DRIFT_STATUS)]
    Drift {
        /// How to report: text for a terminal, json (format 1.2), markdown for a pull
        /// request or a job summary, junit for CI test reports, github for annotations.
        #[arg(long, value_enum, default_value_t = DriftFormat::Text)]
        format: DriftFormat,
        /// Also list what the configured accounts and clusters hold that no resource
        /// manages (as `skyplan discover` does): each such object counts as drift.
        #[arg(long)]
        unmanaged: bool,
        #[command(flatten)]
        locking: Locking,
    },
    /// List what the configured accounts and clusters hold that no resource manages: who
    /// made each object, what it serves, and the address it would be adopted as.
    Discover(DiscoverArgs),
    /// Print a saved plan, or the state.
    Show {
        /// A plan saved with `plan --out` (default: the state's resources, the differences
        /// apply's verifications found, and the measured operation durations).
        #[arg(value_name = "PLANFILE")]
        plan_file: Option<PathBuf>,
        /// Print it as JSON: the JSON plan of the contract, or the whole state.
        #[arg(long)]
        json: bool,
        /// Show the saved plan as `apply PLANFILE` would run it at this instant (RFC 3339;
        /// default: now): what the plan held back stays held back, and the maintenance window
        /// is checked again at that time.
        #[arg(long, value_name = "RFC3339", requires = "plan_file")]
        now: Option<jiff::Timestamp>,
    },
    /// Print the dependency graph of the configured objects.
    Graph {
        /// Graphviz dot, or a Mermaid flowchart (renders in GitHub Markdown).
        #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
        format: GraphFormat,
    },
    /// Print the JSON schema of the config.
    Schema,
    /// Inspect the state.
    #[command(subcommand)]
    State(StateCommand),
    /// Inspect the configuration as it is read.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Take existing cloud objects under management: `import load-balancer.web <uuid>` for
    /// one the config declares (recorded as the cloud holds it: drift finds nothing, the next
    /// plan shows where the config differs), or `import --generate-config adopted.toml --all`
    /// to write the config of every importable object and record them in the state.
    Import(ImportArgs),
    /// Write a managed cluster's kubeconfig to a file (to the terminal only with `-o -`).
    Kubeconfig {
        /// The cluster: `lab` or `cluster.lab`.
        cluster: String,
        /// Where to write it (default: `<CLUSTER>.kubeconfig` in the current directory); `-`
        /// is standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        locking: Locking,
    },
    /// Remove the state lock left by a run that is gone (the ID is in the lock message).
    ForceUnlock {
        /// The lock's ID, as the message of the run that found the state locked shows it.
        id: String,
    },
    /// Print a shell completion script, e.g. `skyplan completions bash > ~/.local/share/bash-completion/completions/skyplan`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `skyplan man | man -l -`, or a command's page.
    Man {
        /// The command whose page to print, e.g. `plan` or `state rm` (default: skyplan's own
        /// page, which lists the commands).
        command: Vec<String>,
    },
    /// The cloud simulators.
    #[command(subcommand)]
    Sim(SimCommand),
}

#[derive(Debug, Clone, Args)]
pub struct DiscoverArgs {
    /// Only this provider's objects (repeatable), e.g. `cloudscale`.
    #[arg(long = "provider", value_name = "P")]
    pub providers: Vec<String>,
    /// Only the objects in or serving this cluster (repeatable): `prod` or `cluster.prod`.
    #[arg(long = "cluster", value_name = "C")]
    pub clusters: Vec<String>,
    /// text for a terminal, json for scripts, toml for `[[unmanaged]]` tables.
    #[arg(long, value_enum, default_value_t = DiscoverFormat::Text)]
    pub format: DiscoverFormat,
    #[command(flatten)]
    pub locking: Locking,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DiscoverFormat {
    Text,
    Json,
    Toml,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// `ADDR ID`: the resource in the config that takes the object (`load-balancer.web`) and
    /// the cloud's ID of it (a UUID, a CKS cluster's ID, an IP block's ID…). With
    /// `--generate-config`: `ADDR=ID` pairs, each an object `skyplan discover` lists.
    #[arg(value_name = "ADDR ID | ADDR=ID")]
    pub objects: Vec<String>,
    /// Write the config that adopts the objects to this new file inside the config
    /// directory (never overwritten) and record them in the state: the next plan changes
    /// nothing but the `skyplan.address` tags it adds (impact none).
    #[arg(long, value_name = "FILE")]
    pub generate_config: Option<PathBuf>,
    /// With --generate-config: adopt every object `skyplan discover` lists as importable.
    #[arg(long, requires = "generate_config", conflicts_with = "objects")]
    pub all: bool,
    #[command(flatten)]
    pub locking: Locking,
}

/// How long to wait for the state lock, e.g. `30s` or `2m` (default: fail at once).
#[derive(Debug, Clone, Args)]
pub struct Locking {
    /// Wait this long for a state lock held by another run (e.g. `30s`, `2m`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub lock_timeout: Option<std::time::Duration>,
}

fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let duration: jiff::SignedDuration = text
        .parse()
        .map_err(|e| format!("`{text}` is not a duration like 30s or 2m: {e}"))?;
    std::time::Duration::try_from(duration).map_err(|_| format!("`{text}` is negative"))
}

#[derive(Debug, Clone, Args)]
pub struct Selection {
    /// Plan only this resource (repeatable).
    #[arg(long = "target", value_name = "ADDR")]
    pub targets: Vec<Address>,
    /// Destroy and create this resource, doing a forbidden change explicitly (repeatable).
    #[arg(long, value_name = "ADDR")]
    pub replace: Vec<Address>,
    /// Allow deleting this resource, removed from the config (repeatable).
    #[arg(long, value_name = "ADDR")]
    pub allow_delete: Vec<Address>,
    /// Plan everything, but hold this resource back, with what must wait for it (repeatable;
    /// not with --target).
    #[arg(long, value_name = "ADDR", conflicts_with = "targets")]
    pub exclude: Vec<Address>,
}

/// `[rollout]`'s keys as flags: each overrides the config's key; any of them makes a rollout
/// of a config without `[rollout]`.
#[derive(Debug, Clone, Default, Args)]
pub struct RolloutFlags {
    /// At most N resources with a change of class minimal or above in flight at once, applied
    /// in waves of N (overrides `[rollout] max-disrupted`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_disrupted: Option<u32>,
    /// Apply --max-disrupted per cluster or per zone instead of in total.
    #[arg(long, value_enum, value_name = "GROUP")]
    pub max_disrupted_per: Option<RolloutPerFlag>,
    /// Wait this long between waves of disruptive changes (e.g. `30s`; overrides `[rollout] pause`).
    #[arg(long, value_name = "DURATION", value_parser = parse_config_duration)]
    pub pause: Option<std::time::Duration>,
    /// How long a health gate waits (e.g. `5m`; overrides `[rollout] health-timeout`).
    #[arg(long, value_name = "DURATION", value_parser = parse_config_duration)]
    pub health_timeout: Option<std::time::Duration>,
    /// Do not wait for the cloud to report a changed resource healthy (`[rollout] health-gate = false`).
    #[arg(long)]
    pub no_health_gate: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RolloutPerFlag {
    Cluster,
    Zone,
}

fn parse_config_duration(text: &str) -> Result<std::time::Duration, String> {
    crate::config::parse_duration(text).map_err(|invalid| invalid.message)
}

impl RolloutFlags {
    /// The config's `[rollout]` with the flags given laid over it; `None` when neither says
    /// anything.
    pub fn over(&self, config: Option<&Rollout>) -> Option<Rollout> {
        let given = self.max_disrupted.is_some()
            || self.max_disrupted_per.is_some()
            || self.pause.is_some()
            || self.health_timeout.is_some()
            || self.no_health_gate;
        if config.is_none() && !given {
            return None;
        }
        let mut rollout = config.cloned().unwrap_or_default();
        if let Some(n) = self.max_disrupted {
            rollout.max_disrupted = Some(n as usize);
        }
        if let Some(per) = self.max_disrupted_per {
            rollout.per = Some(match per {
                RolloutPerFlag::Cluster => RolloutPer::Cluster,
                RolloutPerFlag::Zone => RolloutPer::Zone,
            });
        }
        rollout.pause = self.pause.unwrap_or(rollout.pause);
        rollout.health_timeout = self.health_timeout.unwrap_or(rollout.health_timeout);
        rollout.health_gate &= !self.no_health_gate;
        Some(rollout)
    }
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub locking: Locking,
    #[command(flatten)]
    pub rollout: RolloutFlags,
    /// How to print the plan: text for a terminal, json (the JSON plan), markdown for a
    /// pull-request comment, github for annotations on the config lines that change, html for
    /// a self-contained report with the dependency graph.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<PlanFormat>,
    /// Print the plan as JSON (the same as `--format json`).
    #[arg(long)]
    pub json: bool,
    /// Exit 2 when the plan has changes, 0 when it has none.
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Exit 3 when a change is at or above this class.
    #[arg(long, value_name = "CLASS")]
    pub fail_on: Option<Impact>,
    /// Save the plan to this file, for `skyplan apply FILE`.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Take this instant (RFC 3339) as the current time for the maintenance windows: the plan
    /// then says what apply would hold back at that time.
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<jiff::Timestamp>,
    /// Show only what changed outside skyplan (as `drift` does), every change a no-op.
    #[arg(long)]
    pub refresh_only: bool,
}

impl PlanArgs {
    /// The format asked for: `--json` is `--format json`; text by default.
    pub fn format(&self) -> PlanFormat {
        match (self.json, self.format) {
            (true, _) => PlanFormat::Json,
            (false, format) => format.unwrap_or(PlanFormat::Text),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    Text,
    Json,
    Markdown,
    Github,
    Html,
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    /// A plan saved with `plan --out`: apply exactly that plan, or nothing.
    #[arg(value_name = "PLANFILE")]
    pub plan_file: Option<PathBuf>,
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub locking: Locking,
    #[command(flatten)]
    pub rollout: RolloutFlags,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub auto_approve: bool,
    /// How many load balancers to change at the same time.
    #[arg(long, default_value_t = 10)]
    pub parallelism: usize,
    /// Take this instant (RFC 3339, e.g. 2026-11-28T02:30:00+01:00) as the current time for
    /// the maintenance windows. More than a minute off the clock only when every cloud and
    /// cluster is embedded: a real cloud is changed at the real time (`plan --now` previews).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<jiff::Timestamp>,
    /// Print the outcome as one JSON document on stdout (the plan, what was applied, and each
    /// resource's verification against the plan) instead of text.
    #[arg(long)]
    pub json: bool,
    /// Record in the state what changed outside skyplan, changing no cloud object.
    #[arg(long)]
    pub refresh_only: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DriftFormat {
    Text,
    Json,
    Markdown,
    Junit,
    Github,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GraphFormat {
    Dot,
    Mermaid,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the configuration as TOML, its layers (`-c base -c env/prod`) laid over each
    /// other.
    Show {
        /// Follow each value with `# file:line` of the place that sets it.
        #[arg(long)]
        origin: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// List the addresses in the state.
    List,
    /// Print the whole state as JSON.
    Json,
    /// Show one resource's state entry.
    Show {
        /// The resource, e.g. `load-balancer.web`.
        #[arg(value_name = "ADDR")]
        address: Address,
    },
    /// Forget a resource: skyplan stops managing it and the cloud object stays. Remove it from
    /// the config too, or the next plan adopts it again: by its `skyplan.address` tag (an
    /// imported cloudscale load balancer gets it from the first apply after the import), by
    /// the public IP its config names (CloudStack), or through the Service a controller made
    /// it for (import refuses a CloudStack `public-ip = "auto"` nothing would find again).
    Rm {
        /// The resource, e.g. `load-balancer.web`.
        #[arg(value_name = "ADDR")]
        address: Address,
    },
    /// Rename a resource in the state (`state mv load-balancer.a load-balancer.b`), as after
    /// renaming its table: the next plan compares it under the new address, and the cloud
    /// object stays as it is. A `[[moved]]` entry in the config does the same in a plan.
    Mv {
        /// The address the state knows the resource by, e.g. `load-balancer.a`.
        #[arg(value_name = "OLD")]
        from: Address,
        /// The new address, of the same kind and not in the state, e.g. `load-balancer.b`.
        #[arg(value_name = "NEW")]
        to: Address,
    },
    /// Move the state (with its lineage and serial) between the state directory and
    /// `[backend.postgres]` or `[backend.kubernetes]`; refused if the target holds another state.
    Migrate {
        /// Where the state goes.
        #[arg(long, value_enum)]
        to: MigrateTarget,
    },
}

/// Where `state migrate` moves the state to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MigrateTarget {
    /// From the state directory to `[backend.postgres]`.
    Postgres,
    /// From the state directory to `[backend.kubernetes]`.
    Kubernetes,
    /// From the configured backend to the state directory.
    Local,
}

#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Serve a simulated cloud API over a world file until interrupted.
    Serve(Box<SimServeArgs>),
}

#[derive(Debug, Args)]
pub struct SimServeArgs {
    /// The cloud to simulate.
    #[arg(long, value_enum)]
    pub provider: SimProvider,
    /// The world file (created with a fresh account's inventory if missing).
    #[arg(long)]
    pub world: PathBuf,
    /// The address to listen on (port 0: any free port; the URL is printed on stderr).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The bearer token the server accepts (default: the embedded mode's fixed token).
    #[arg(long)]
    pub token: Option<String>,
    /// How long a load balancer stays `changing` after each change, in milliseconds.
    #[arg(long, env = "SKYPLAN_SIM_SETTLE_MS", default_value_t = 300)]
    pub settle_ms: u64,
    /// CloudStack: the API key the server accepts (default: the embedded mode's fixed key).
    #[arg(long)]
    pub api_key: Option<String>,
    /// CloudStack: the secret key requests must be signed with (default: the embedded
    /// mode's fixed key).
    #[arg(long)]
    pub secret_key: Option<String>,
    /// CloudStack: the server version listCapabilities reports.
    #[arg(long, default_value = "4.22.0.0")]
    pub server_version: String,
    /// CloudStack: the hypervisor of the VMs it creates (KVM, XenServer, VMware, Simulator…).
    #[arg(long, default_value = "KVM")]
    pub hypervisor: String,
    /// CloudStack: how long an async job stays pending, in milliseconds.
    #[arg(long, env = "SKYPLAN_SIM_JOB_MS", default_value_t = 300)]
    pub job_ms: u64,
    /// PhoenixNAP: the OAuth2 client id the token endpoint accepts (default: the embedded
    /// mode's fixed client).
    #[arg(long)]
    pub client_id: Option<String>,
    /// PhoenixNAP: the client secret the token endpoint accepts (default: the embedded mode's
    /// fixed secret). Never echoed.
    #[arg(long, value_parser = parse_secret, hide_default_value = true)]
    pub client_secret: Option<Secret>,
    /// PhoenixNAP: how long attaching or detaching an IP block takes, in milliseconds.
    #[arg(long, env = "SKYPLAN_SIM_PNAP_TRANSITION_MS", default_value_t = 300)]
    pub transition_ms: u64,
    /// Kubernetes: write a kubeconfig for the served cluster to this file (0600; context
    /// `sim`), for kubectl or a `[cluster]` table's `kubeconfig`, once the server listens.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig_out: Option<PathBuf>,
    /// Kubernetes: the version `/version` and the kubelets report, MAJOR.MINOR.
    #[arg(long, default_value = "1.33", value_parser = parse_kube_version)]
    pub kube_version: (u32, u32),
    /// cloudscale, PhoenixNAP: also run the cloud's simulated CCM against the cluster of this
    /// kubeconfig (a real API server), its cloud being the served simulator.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// With --kubeconfig: the context (default: the kubeconfig's current context).
    #[arg(long, value_name = "NAME", requires = "kubeconfig")]
    pub context: Option<String>,
    /// With --kubeconfig: the CCM reconciles only this namespace's Services (a server shared
    /// with others: their LoadBalancer Services are left alone).
    #[arg(long, value_name = "NS", requires = "kubeconfig")]
    pub ccm_namespace: Option<String>,
    /// With --kubeconfig: the CCM sees only the Nodes matching this label selector (`k=v,…`).
    #[arg(long, value_name = "SELECTOR", requires = "kubeconfig")]
    pub ccm_node_selector: Option<String>,
    /// PhoenixNAP with --kubeconfig: the CCM's `PNAP_LOCATION`.
    #[arg(
        long,
        value_name = "LOCATION",
        requires = "kubeconfig",
        default_value = "PHX"
    )]
    pub ccm_location: String,
    /// PhoenixNAP with --kubeconfig: the CCM's `PNAP_LOAD_BALANCER`,
    /// `kube-vip://<public network id>` (empty: its load balancer is off).
    #[arg(long, value_name = "URL", requires = "kubeconfig", default_value = "")]
    pub ccm_load_balancer: String,
    /// Faults to inject into API requests, e.g.
    /// `latency=5-50ms,429=0.05,5xx=0.03,drop=0.02,after-commit=0.02,seed=7`; CloudStack also
    /// takes `job-fail=P` (a share of async jobs fail), PhoenixNAP `tags-put-fail=P` (a share
    /// of IP block tag overwrites fail with 500), cloudscale `recreate-on-patch=pool` (a PATCH
    /// of a pool, its listener or monitor recreates the pool) and
    /// `unhealthy-after-change=P|NAME` (a changed pool's members stay down: a share P of
    /// changes, or every change of load balancer NAME; on CloudStack a changed LB rule's VMs
    /// report `Stopped`, NAME being the rule's name); Kubernetes takes only
    /// `unhealthy-after-change=P|NAME` and `seed=N` (a node whose labels or taints change
    /// reports Ready False: a share P of changes, or every change of node NAME). Checked
    /// against the provider's syntax.
    #[arg(
        long,
        value_name = "SPEC",
        env = "SKYPLAN_SIM_FAULTS",
        default_value = "none"
    )]
    pub faults: String,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SimProvider {
    Cloudscale,
    Cloudstack,
    Kubernetes,
    Phoenixnap,
}

/// Wraps a secret given on the command line at once, so no Debug of the arguments shows it.
fn parse_secret(text: &str) -> Result<Secret, String> {
    Ok(Secret::new(text))
}

/// `1.33` → (1, 33): the cloudscale CCM reads major and minor as integers, so both must be.
fn parse_kube_version(text: &str) -> Result<(u32, u32), String> {
    let parse = |part: &str| {
        part.parse::<u32>()
            .map_err(|_| format!("{text:?} is not MAJOR.MINOR, e.g. 1.33"))
    };
    match text.split_once('.') {
        Some((major, minor)) => Ok((parse(major)?, parse(minor)?)),
        None => Err(format!("{text:?} is not MAJOR.MINOR, e.g. 1.33")),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every argument of every command says what it is in `--help`, the man page and the
    /// completions: a positional without help shows as a bare `<ID>`.
    #[test]
    fn every_argument_has_help_text() {
        let mut missing = Vec::new();
        let mut skyplan = super::Cli::command();
        skyplan.build();
        let mut commands = vec![(String::from("skyplan"), &skyplan)];
        while let Some((path, command)) = commands.pop() {
            for arg in command.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.get_help().is_none() && !matches!(id, "help" | "version") {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in command.get_subcommands() {
                if sub.get_about().is_none() && sub.get_name() != "help" {
                    missing.push(format!("{path} {}", sub.get_name()));
                }
                commands.push((format!("{path} {}", sub.get_name()), sub));
            }
        }
        assert!(missing.is_empty(), "without help text: {missing:#?}");
    }

    fn plan_format(args: &[&str]) -> Result<super::PlanFormat, clap::Error> {
        use clap::Parser;
        let cli = super::Cli::try_parse_from(["skyplan", "plan"].iter().chain(args))?;
        match cli.command {
            super::Command::Plan(plan) => Ok(plan.format()),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn json_is_format_json_and_both_at_once_is_a_usage_error() {
        use super::PlanFormat;
        assert_eq!(plan_format(&[]).unwrap(), PlanFormat::Text);
        assert_eq!(plan_format(&["--json"]).unwrap(), PlanFormat::Json);
        assert_eq!(
            plan_format(&["--format", "markdown"]).unwrap(),
            PlanFormat::Markdown
        );
        let both = plan_format(&["--json", "--format", "html"]).unwrap_err();
        assert_eq!(both.kind(), clap::error::ErrorKind::ArgumentConflict);
    }
}
