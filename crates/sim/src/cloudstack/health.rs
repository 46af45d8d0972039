//! VM health as a rule reports it: `listLoadBalancerRuleInstances` shows each member VM's
//! state, which is its own (`Running`, or `Stopped` once stopped) unless the
//! `unhealthy-after-change` fault picked the rule.
//!
//! The fault (`unhealthy-after-change=P` or `=NAME`, the cloudscale simulator's syntax) decides
//! anew each time a rule's change is done (its create, update, or an assign or remove of VMs,
//! when the job ends): with probability P, or always for the rule named NAME, the rule's VMs
//! then report [`UNHEALTHY_VM_STATE`] until the rule changes again. Which rules it picked lives
//! in memory only (`World::unhealthy_rules`, never in the world file): a server started
//! without the fault reports every VM by its own state again.

use super::state::Ctx;
use super::world::{LbRule, Vm, World};

/// What a member of a rule the fault picked reports. `Stopped` rather than `Error`: CloudStack
/// shows `Error` only for a VM whose deployment failed, while a VM that goes down once in
/// service (crashed, powered off behind CloudStack's back) is reported `Stopped` by the
/// power-state sync, which is what a broken change leaves.
pub const UNHEALTHY_VM_STATE: &str = "Stopped";

impl World {
    /// Records that `rule` changed: its VMs report [`UNHEALTHY_VM_STATE`] if `unhealthy`, and
    /// their own state otherwise.
    pub fn rule_changed(&mut self, rule: &str, unhealthy: bool) {
        if unhealthy {
            self.unhealthy_rules.insert(rule.to_owned());
        } else {
            self.unhealthy_rules.remove(rule);
        }
    }

    /// The state `vm` shows as a member of `rule`.
    pub fn member_state<'a>(&self, rule: &LbRule, vm: &'a Vm) -> &'a str {
        match self.unhealthy_rules.contains(&rule.id) {
            true => UNHEALTHY_VM_STATE,
            false => &vm.state,
        }
    }
}

impl Ctx {
    /// Records that the rule `id` changed: the fault, when on, decides anew whether its VMs
    /// report unhealthy.
    pub fn rule_changed(&self, world: &mut World, id: &str) {
        let name = world.lb_rule(id).map(|rule| rule.name.clone());
        let unhealthy = match (&self.unhealthy, name) {
            (Some(draw), Some(name)) => draw.picks(&name),
            _ => false,
        };
        world.rule_changed(id, unhealthy);
    }
}
