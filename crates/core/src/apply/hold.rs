//! Which changes apply holds back, and why: a change refused on its own — forbidden and not
//! named with `--replace`/`--allow-delete`, excluded with `--exclude`, or not allowed by the
//! maintenance policy now — and everything that would have to run after it (see
//! [`super::waves::precedence`]). Nothing else: apply does the rest. Pure; `plan` shows the
//! same list that `apply` then holds back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use super::waves::precedence;
use super::window_check::{WindowCheck, WindowHold};
use crate::model::{Address, Impact};
use crate::plan::{Action, Plan, ResourceChange};

/// Why a change is held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldReason {
    /// Named with `--exclude`.
    Excluded,
    /// Forbidden and not named: the attribute paths that make it so, and the flag that would
    /// allow it (`--replace load-balancer.shop`).
    Forbidden { paths: Vec<String>, flag: String },
    /// Not allowed by the maintenance policy now.
    Window(WindowHold),
    /// In a wave of the rollout (`[rollout]`) that does not fit the maintenance window when it
    /// would start, or after such a wave: held back with every later wave.
    Rollout { wave: usize, waves: usize },
    /// It depends on this change, which is held back.
    DependsOn(Address),
    /// A delete that must wait for this dependent's delete, which is held back (a cluster is
    /// deleted only once its load balancers are gone).
    NeededBy(Address),
    /// Held back, for this reason, when the saved plan being applied was made: apply does no
    /// more than the plan said it would, even where the window would now allow it.
    Saved(String),
}

impl fmt::Display for HeldReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeldReason::Excluded => write!(f, "excluded with --exclude"),
            HeldReason::Forbidden { paths, flag } => {
                write!(
                    f,
                    "forbidden: {}; name it with {flag} to do it anyway",
                    paths.join(", ")
                )
            }
            HeldReason::Window(hold) => write!(f, "{hold}"),
            HeldReason::Rollout { wave, waves } => write!(
                f,
                "wave {wave} of {waves} of the rollout: a wave from this one on does not fit the open window, so it waits with every later wave"
            ),
            HeldReason::DependsOn(held) => write!(f, "depends on {held}, held back"),
            HeldReason::NeededBy(held) => {
                write!(f, "{held} depends on it and is held back, so it stays")
            }
            HeldReason::Saved(reason) => write!(
                f,
                "held back when the plan was made ({reason}); plan again to apply it"
            ),
        }
    }
}

/// A change apply does not perform now, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub address: Address,
    pub impact: Impact,
    pub reason: HeldReason,
}

/// A plan split into what apply performs and what it holds back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HoldBack {
    /// The plan without the changes held back (no-ops included: apply records them).
    pub runnable: Plan,
    /// In the plan's order.
    pub held: Vec<Held>,
}

/// The paths of the attributes that make a change forbidden ("removed from the config" for
/// the whole resource).
pub fn forbidden_paths(change: &ResourceChange) -> Vec<String> {
    change
        .attributes
        .iter()
        .filter(|a| a.impact == Impact::Forbidden)
        .map(|a| match a.path.as_str() {
            "" if change.action == Action::Delete => "removed from the config".to_string(),
            "" => "the whole resource".to_string(),
            path => path.to_string(),
        })
        .collect()
}

/// Why `change` is refused on its own, if it is: excluded, forbidden, or outside the window.
fn own_reason(
    change: &ResourceChange,
    excluded: &[Address],
    window: &WindowCheck,
) -> Option<HeldReason> {
    if change.action == Action::NoOp {
        return None;
    }
    if excluded.contains(&change.address) {
        return Some(HeldReason::Excluded);
    }
    forbidden(change).or_else(|| window.check(change).map(HeldReason::Window))
}

/// Why apply holds back a forbidden change nobody named, with the flag that would allow it.
pub fn forbidden(change: &ResourceChange) -> Option<HeldReason> {
    if !change.is_refused() {
        return None;
    }
    let flag = match change.action {
        Action::Delete => "--allow-delete",
        _ => "--replace",
    };
    Some(HeldReason::Forbidden {
        paths: forbidden_paths(change),
        flag: format!("{flag} {}", change.address),
    })
}

/// Splits `plan`: each change refused on its own (see [`own_reason`]) is held back, and so is
/// every change that must run after one held back, transitively — by `depends_on` (what a
/// resource needs, as apply orders by it): a dependent after what it depends on, and, for
/// deletes, a dependency after its dependents.
pub fn hold_back(
    plan: &Plan,
    excluded: &[Address],
    window: &WindowCheck,
    depends_on: impl Fn(&Address) -> Vec<Address>,
) -> HoldBack {
    hold_back_with(plan, excluded, window, &BTreeMap::new(), depends_on)
}

/// [`hold_back`], with more changes refused on their own: `more` (the rollout's waves that do
/// not fit the window, what a saved plan held back when it was made), each with its reason,
/// unless refused already for another.
pub fn hold_back_with(
    plan: &Plan,
    excluded: &[Address],
    window: &WindowCheck,
    more: &BTreeMap<Address, HeldReason>,
    depends_on: impl Fn(&Address) -> Vec<Address>,
) -> HoldBack {
    let mut reasons: BTreeMap<Address, HeldReason> = BTreeMap::new();
    let mut queue: VecDeque<Address> = VecDeque::new();
    for change in &plan.changes {
        let own = own_reason(change, excluded, window);
        if let Some(reason) = own.or_else(|| more.get(&change.address).cloned()) {
            reasons.insert(change.address.clone(), reason);
            queue.push_back(change.address.clone());
        }
    }
    let changing: Vec<&ResourceChange> = plan
        .changes
        .iter()
        .filter(|c| c.action != Action::NoOp)
        .collect();
    let before = precedence(&changing, &depends_on);
    let after = followers(&before);
    while let Some(held) = queue.pop_front() {
        for &follower in after.get(&held).into_iter().flatten() {
            if reasons.contains_key(follower) {
                continue;
            }
            let reason = if depends_on(follower).contains(&held) {
                HeldReason::DependsOn(held.clone())
            } else {
                HeldReason::NeededBy(held.clone())
            };
            reasons.insert(follower.clone(), reason);
            queue.push_back(follower.clone());
        }
    }
    split(plan, reasons)
}

/// `before` turned round: for each change, what may only start once it has finished.
fn followers(before: &BTreeMap<Address, Vec<Address>>) -> BTreeMap<&Address, BTreeSet<&Address>> {
    let mut after: BTreeMap<&Address, BTreeSet<&Address>> = BTreeMap::new();
    for (then, firsts) in before {
        for first in firsts {
            after.entry(first).or_default().insert(then);
        }
    }
    after
}

fn split(plan: &Plan, mut reasons: BTreeMap<Address, HeldReason>) -> HoldBack {
    let mut result = HoldBack::default();
    for change in &plan.changes {
        match reasons.remove(&change.address) {
            Some(reason) => result.held.push(Held {
                address: change.address.clone(),
                impact: change.impact(),
                reason,
            }),
            None => result.runnable.changes.push(change.clone()),
        }
    }
    result
}

#[cfg(test)]
#[path = "hold_tests.rs"]
mod tests;
