//! Async jobs. An async command answers `{"jobid", "id"}` at once; the world changes when the
//! job ends, `job_time` later (objects sit in intermediate states meanwhile), and
//! `queryAsyncJobResult` reports jobstatus 0 (pending), 1 (with the object) or 2 (with
//! errorcode/errortext). Jobs live in the world file, so a pending one survives a restart.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::api::{cs_time, ApiError, ApiResult};
use super::commands::{clusters, firewall, ips, lb, tags, vms};
use super::state::Ctx;
use super::world::World;

/// What a job does when it ends (and, for some, half-way through).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    IpAssociate {
        id: String,
    },
    IpDisassociate {
        id: String,
    },
    LbCreate {
        id: String,
    },
    LbUpdate(lb::Update),
    LbDelete {
        id: String,
    },
    LbAssign {
        id: String,
        vm_ids: Vec<String>,
    },
    LbRemove {
        id: String,
        vm_ids: Vec<String>,
    },
    FirewallCreate {
        id: String,
    },
    FirewallDelete {
        id: String,
    },
    TagsCreate {
        tags: Vec<super::world::Tag>,
    },
    TagsDelete(tags::Deletion),
    ClusterCreate {
        id: String,
    },
    ClusterStart {
        id: String,
    },
    ClusterStop {
        id: String,
    },
    ClusterDelete {
        id: String,
    },
    ClusterScale(clusters::scale::Plan),
    ClusterUpgrade {
        id: String,
        version_id: String,
    },
    VmStart {
        id: String,
    },
    VmStop {
        id: String,
    },
    /// A refusal the server only reports from inside the job (CKS validations).
    Fail {
        code: u16,
        cs_code: u32,
        text: String,
    },
}

/// A rule's change done: the `unhealthy-after-change` fault draws for it (see `health`).
fn rule_changed(done: ApiResult<Value>, world: &mut World, cx: &Ctx, id: &str) -> ApiResult<Value> {
    if done.is_ok() {
        cx.rule_changed(world, id);
    }
    done
}

impl Action {
    pub fn fail(error: ApiError) -> Self {
        Action::Fail {
            code: error.code,
            cs_code: error.cs_code,
            text: error.text,
        }
    }

    /// Ends the job: changes the world and gives the job's result, or why it failed (the
    /// world may still have changed, as when the server fails half-way).
    fn finish(self, world: &mut World, cx: &Ctx) -> ApiResult<Value> {
        match self {
            Action::IpAssociate { id } => ips::finish_associate(world, &id),
            Action::IpDisassociate { id } => ips::finish_disassociate(world, &id),
            Action::LbCreate { id } => rule_changed(lb::finish_create(world, &id), world, cx, &id),
            Action::LbUpdate(update) => {
                let id = update.id.clone();
                rule_changed(lb::finish_update(world, update), world, cx, &id)
            }
            Action::LbDelete { id } => lb::finish_delete(world, &id),
            Action::LbAssign { id, vm_ids } => {
                rule_changed(lb::finish_assign(world, &id, &vm_ids), world, cx, &id)
            }
            Action::LbRemove { id, vm_ids } => {
                rule_changed(lb::finish_remove(world, &id, &vm_ids), world, cx, &id)
            }
            Action::FirewallCreate { id } => firewall::finish_create(world, &id),
            Action::FirewallDelete { id } => firewall::finish_delete(world, &id),
            Action::TagsCreate { tags } => tags::finish_create(world, tags),
            Action::TagsDelete(deletion) => tags::finish_delete(world, &deletion),
            Action::ClusterCreate { id } => clusters::create::finish(world, cx, &id),
            Action::ClusterStart { id } => clusters::lifecycle::finish_start(world, cx, &id),
            Action::ClusterStop { id } => clusters::lifecycle::finish_stop(world, cx, &id),
            Action::ClusterDelete { id } => clusters::lifecycle::finish_delete(world, &id),
            Action::ClusterScale(plan) => clusters::scale::finish(world, cx, plan),
            Action::ClusterUpgrade { id, version_id } => {
                clusters::upgrade::finish(world, cx, &id, &version_id)
            }
            Action::VmStart { id } => vms::finish_power(world, &id, "Running"),
            Action::VmStop { id } => vms::finish_power(world, &id, "Stopped"),
            Action::Fail {
                code,
                cs_code,
                text,
            } => Err(ApiError {
                code,
                cs_code,
                text,
            }),
        }
    }

    /// Half-way through: the intermediate state the server passes through.
    fn midway(&self, world: &mut World, cx: &Ctx) {
        if let Action::ClusterCreate { id } = self {
            clusters::create::midway(world, cx, id);
        }
    }

    /// Undoes what the command did before its job (an injected failure): the server removes
    /// a rule or releases an address whose job failed, and marks a cluster Error.
    fn abandon(&self, world: &mut World) {
        match self {
            Action::IpAssociate { id } => ips::abandon_associate(world, id),
            Action::LbCreate { id } => lb::remove_rule(world, id),
            Action::FirewallCreate { id } => world.firewall_rules.retain(|r| &r.id != id),
            Action::ClusterCreate { id }
            | Action::ClusterStart { id }
            | Action::ClusterStop { id }
            | Action::ClusterDelete { id }
            | Action::ClusterUpgrade { id, .. } => clusters::set_state(world, id, "Alert"),
            Action::ClusterScale(plan) => clusters::set_state(world, &plan.id, "Alert"),
            _ => {}
        }
    }
}

/// What an async command hands the job machinery.
#[derive(Debug)]
pub struct Start {
    /// The command's Java class, reported as the job's `cmd`.
    pub cmd: &'static str,
    pub instance_type: Option<&'static str>,
    pub instance_id: Option<String>,
    /// The `id` the first answer carries: only creates (`BaseAsyncCreateCmd`) give one.
    pub id: Option<String>,
    pub action: Action,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Job {
    pub id: String,
    pub cmd: String,
    pub instance_type: Option<String>,
    pub instance_id: Option<String>,
    #[serde(with = "super::world::stamp")]
    pub created: Timestamp,
    #[serde(with = "super::world::stamp")]
    pub midway_at: Timestamp,
    #[serde(with = "super::world::stamp")]
    pub ends_at: Timestamp,
    /// What is left to do: `None` once the job ended.
    pub pending: Option<Action>,
    pub midway_done: bool,
    /// The failure injected on purpose (`job-fail=P`), decided when the job starts.
    pub injected_failure: bool,
    /// 0 pending, 1 succeeded, 2 failed.
    pub status: u8,
    pub result_code: u16,
    pub result: Option<Value>,
    #[serde(default, with = "super::world::optional_stamp")]
    pub completed: Option<Timestamp>,
}

pub const SIMULATED_FAILURE: &str = "simulated failure";

impl Job {
    pub fn new(start: Start, cx: &Ctx, injected_failure: bool) -> Job {
        let duration = jiff::SignedDuration::try_from(cx.job_time).unwrap_or_default();
        let at = |d| cx.now.checked_add(d).unwrap_or(cx.now);
        Job {
            id: uuid::Uuid::new_v4().to_string(),
            cmd: start.cmd.to_owned(),
            instance_type: start.instance_type.map(str::to_owned),
            instance_id: start.instance_id,
            created: cx.now,
            midway_at: at(duration / 2),
            ends_at: at(duration),
            pending: Some(start.action),
            midway_done: false,
            injected_failure,
            status: 0,
            result_code: 0,
            result: None,
            completed: None,
        }
    }

    /// The answer of `queryAsyncJobResult`.
    pub fn render(&self) -> Value {
        let mut body = json!({
            "jobid": self.id,
            "cmd": self.cmd,
            "jobstatus": self.status,
            "jobprocstatus": 0,
            "jobresultcode": self.result_code,
            "created": cs_time(self.created),
        });
        if let Some(kind) = &self.instance_type {
            body["jobinstancetype"] = kind.clone().into();
        }
        if let Some(id) = &self.instance_id {
            body["jobinstanceid"] = id.clone().into();
        }
        if let Some(result) = &self.result {
            body["jobresulttype"] = "object".into();
            body["jobresult"] = result.clone();
        }
        if let Some(at) = self.completed {
            body["completed"] = cs_time(at).into();
        }
        body
    }
}

/// What a job did to the VMs of one LB rule when it ended, for the simulator's membership log
/// (`stats`): which VMs the rule gained and lost, which it has left, whether the rule went.
/// VM and rule ids only; nothing of the request that started the job (no keys, no signature).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberChange {
    /// The rule's id, and its name when the job ended (or before, if the job deleted it).
    pub rule: String,
    pub name: String,
    /// The API command whose job it was (`assignToLoadBalancerRule`).
    pub command: String,
    pub job: String,
    /// VM ids, in the rule's order.
    pub gained: Vec<String>,
    pub lost: Vec<String>,
    /// The VMs the rule has left (none once deleted).
    pub vms: Vec<String>,
    /// The job deleted the rule.
    pub deleted: bool,
}

/// The rules whose VMs an action may change.
enum Touches {
    Rule(String),
    /// Every rule: VMs expunged (a cluster scaled in or deleted) leave every rule they were in.
    Every,
    Nothing,
}

impl Action {
    fn touches(&self) -> Touches {
        match self {
            Action::LbCreate { id }
            | Action::LbDelete { id }
            | Action::LbAssign { id, .. }
            | Action::LbRemove { id, .. } => Touches::Rule(id.clone()),
            Action::LbUpdate(update) => Touches::Rule(update.id.clone()),
            Action::ClusterScale(_) | Action::ClusterDelete { .. } => Touches::Every,
            _ => Touches::Nothing,
        }
    }
}

/// Rule id → (name, VM ids) of the rules an action touches, as the world has them now.
type Members = Vec<(String, String, Vec<String>)>;

fn members_of(world: &World, touches: &Touches) -> Members {
    let of = |r: &super::world::LbRule| (r.id.clone(), r.name.clone(), r.vm_ids.clone());
    match touches {
        Touches::Rule(id) => world.lb_rule(id).map(of).into_iter().collect(),
        Touches::Every => world.lb_rules.iter().map(of).collect(),
        Touches::Nothing => Vec::new(),
    }
}

/// `org.apache….AssignToLoadBalancerRuleCmd` → `assignToLoadBalancerRule`.
fn command_of(cmd: &str) -> String {
    let class = cmd.rsplit('.').next().unwrap_or(cmd);
    let name = class.strip_suffix("Cmd").unwrap_or(class);
    let mut chars = name.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// What changed between `before` and `after` (the same action's rules), one entry per rule.
fn member_changes(job: &Job, before: Members, after: &Members, out: &mut Vec<MemberChange>) {
    for (id, name, had) in before {
        let now = after.iter().find(|(other, ..)| *other == id);
        let vms = now.map(|(_, _, vms)| vms.clone()).unwrap_or_default();
        let deleted = now.is_none();
        let gained: Vec<String> = (vms.iter())
            .filter(|vm| !had.contains(vm))
            .cloned()
            .collect();
        let lost: Vec<String> = (had.iter())
            .filter(|vm| !vms.contains(vm))
            .cloned()
            .collect();
        if gained.is_empty() && lost.is_empty() && !deleted {
            continue;
        }
        out.push(MemberChange {
            rule: id,
            name: now.map_or(name, |(_, name, _)| name.clone()),
            command: command_of(&job.cmd),
            job: job.id.clone(),
            gained,
            lost,
            vms,
            deleted,
        });
    }
}

/// Advances every job whose time has come; true when the world changed. What an ending job
/// did to the VMs of LB rules is appended to `members`, in the order the jobs ended.
pub fn settle(world: &mut World, cx: &Ctx, members: &mut Vec<MemberChange>) -> bool {
    let mut changed = false;
    for index in 0..world.jobs.len() {
        let job = &world.jobs[index];
        if job.pending.is_none() {
            continue;
        }
        if !job.midway_done && job.midway_at <= cx.now {
            let action = job.pending.clone().expect("checked above");
            world.jobs[index].midway_done = true;
            action.midway(world, cx);
            changed = true;
        }
        if world.jobs[index].ends_at > cx.now {
            continue;
        }
        let action = world.jobs[index].pending.take().expect("checked above");
        let touches = action.touches();
        let before = members_of(world, &touches);
        let outcome = if world.jobs[index].injected_failure {
            action.abandon(world);
            Err(ApiError::internal(SIMULATED_FAILURE))
        } else {
            action.finish(world, cx)
        };
        let after = members_of(world, &touches);
        member_changes(&world.jobs[index], before, &after, members);
        let job = &mut world.jobs[index];
        job.completed = Some(cx.now);
        match outcome {
            Ok(result) => {
                job.status = 1;
                job.result = Some(result);
            }
            Err(error) => {
                job.status = 2;
                job.result_code = error.code;
                job.result = Some(json!({"errorcode": error.code, "errortext": error.text}));
            }
        }
        changed = true;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pending jobs live in the world file: every action must survive a write and a read.
    #[test]
    fn pending_actions_round_trip_through_the_file() {
        let actions = vec![
            Action::IpAssociate { id: "ip".into() },
            Action::LbUpdate(lb::Update {
                id: "r".into(),
                name: Some("n".into()),
                description: None,
                algorithm: Some("source".into()),
                protocol: None,
                cidrlist: Some("10.0.0.0/8,192.168.0.0/16".into()),
            }),
            Action::LbAssign {
                id: "r".into(),
                vm_ids: vec!["a".into(), "b".into()],
            },
            Action::TagsDelete(tags::Deletion {
                resource_ids: vec!["r".into()],
                resource_type: "LoadBalancer".into(),
                keys: vec![("k".into(), None), ("k2".into(), Some("v".into()))],
            }),
            Action::ClusterScale(clusters::scale::Plan {
                id: "c".into(),
                global: None,
                roles: vec![(clusters::Role::Worker, "o".into())],
                size: Some(3),
                remove: vec![],
                autoscaling: None,
                prior_state: "Running".into(),
            }),
            Action::fail(ApiError::internal("no")),
        ];
        for action in actions {
            let text = serde_json::to_string(&action).unwrap();
            let back: Action = serde_json::from_str(&text).unwrap();
            assert_eq!(serde_json::to_string(&back).unwrap(), text);
        }
    }
}
