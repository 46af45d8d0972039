//! Renaming state entries: `skyplan state mv OLD NEW`, and the config's `[[moved]]` entries
//! applied to the state a plan starts from. A rename moves the entry and every reference to
//! its old address in the other entries (what they depended on when applied); nothing in the
//! cloud changes.

use std::collections::BTreeMap;

use super::file::State;
use crate::config::{Move, SourceLocation};
use crate::model::Address;

/// Why `state mv` cannot rename an entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    #[error("{0} is not in the state")]
    NotInState(Address),
    #[error(
        "{0} is already in the state: `{remove}` it first, or move to another address",
        remove = crate::invocation::skyplan("state rm")
    )]
    Taken(Address),
    #[error("{from} cannot move to {to}: a move keeps the resource's kind")]
    Kind { from: Address, to: Address },
    #[error("{0} is moved to itself")]
    Itself(Address),
}

/// A config move that cannot apply: its entry and the entry at its destination are both in
/// the state (as Terraform, skyplan will not choose which one the resource is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// Where the entry started (the first address of a chain).
    pub from: Address,
    pub to: Address,
    /// The move that could not apply.
    pub location: SourceLocation,
}

impl std::fmt::Display for Blocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {} cannot move to {}: both are in the state (`{}` the one that is not this resource, then plan again)",
            self.location, self.from, self.to, crate::invocation::skyplan("state rm")
        )
    }
}

impl State {
    /// Renames the entry at `from` to `to`, and `from` in every other entry's `depends_on`.
    pub fn rename(&mut self, from: &Address, to: &Address) -> Result<(), MoveError> {
        if from == to {
            return Err(MoveError::Itself(from.clone()));
        }
        if from.kind != to.kind {
            return Err(MoveError::Kind {
                from: from.clone(),
                to: to.clone(),
            });
        }
        if !self.resources.contains_key(from) {
            return Err(MoveError::NotInState(from.clone()));
        }
        if self.resources.contains_key(to) {
            return Err(MoveError::Taken(to.clone()));
        }
        let entry = self.resources.remove(from).expect("checked above");
        self.resources.insert(to.clone(), entry);
        for entry in self.resources.values_mut() {
            for dependency in &mut entry.depends_on {
                if dependency == from {
                    *dependency = to.clone();
                }
            }
        }
        Ok(())
    }

    /// Applies the config's moves, in their order (a chain's moves one after another): each
    /// whose `from` is in the state moves there, unless its `to` is too (`Blocked`); one whose
    /// `from` is not does nothing (applied before, or never). Returns each moved resource's new
    /// address with the address its entry was at before the first of its moves.
    pub fn apply_moves(
        &mut self,
        moves: &[Move],
    ) -> Result<BTreeMap<Address, Address>, Vec<Blocked>> {
        let mut moved: BTreeMap<Address, Address> = BTreeMap::new();
        let mut blocked = Vec::new();
        for the_move in moves {
            if !self.resources.contains_key(&the_move.from) {
                continue;
            }
            let origin = moved
                .get(&the_move.from)
                .cloned()
                .unwrap_or_else(|| the_move.from.clone());
            match self.rename(&the_move.from, &the_move.to) {
                Ok(()) => {
                    moved.remove(&the_move.from);
                    moved.insert(the_move.to.clone(), origin);
                }
                Err(_) => blocked.push(Blocked {
                    from: origin,
                    to: the_move.to.clone(),
                    location: the_move.location.clone(),
                }),
            }
        }
        match blocked.is_empty() {
            true => Ok(moved),
            false => Err(blocked),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::state::ResourceState;

    fn address(text: &str) -> Address {
        text.parse().unwrap()
    }

    fn entry(id: &str, depends_on: &[&str]) -> ResourceState {
        ResourceState {
            provider: "cloudscale".into(),
            id: id.into(),
            ids: json!({}),
            attributes: json!({"name": id}),
            depends_on: depends_on.iter().map(|a| address(a)).collect(),
        }
    }

    fn state(entries: &[(&str, ResourceState)]) -> State {
        let mut state = State::new();
        for (at, entry) in entries {
            state.resources.insert(address(at), entry.clone());
        }
        state
    }

    fn addresses(state: &State) -> Vec<String> {
        state.resources.keys().map(ToString::to_string).collect()
    }

    fn moves(pairs: &[(&str, &str)]) -> Vec<Move> {
        (pairs.iter().enumerate())
            .map(|(i, (from, to))| Move {
                from: address(from),
                to: address(to),
                location: SourceLocation {
                    file: Path::new("a.toml").into(),
                    line: 3 * i + 1,
                    column: 1,
                },
            })
            .collect()
    }

    #[test]
    fn a_rename_moves_the_entry_and_what_depends_on_it() {
        let mut state = state(&[
            ("nodes.web", entry("policy", &["cluster.prod"])),
            (
                "load-balancer.shop",
                entry("lb", &["cluster.prod", "nodes.web"]),
            ),
        ]);
        let before = state.resources[&address("nodes.web")].clone();
        state
            .rename(&address("nodes.web"), &address("nodes.workers"))
            .unwrap();
        assert_eq!(addresses(&state), ["load-balancer.shop", "nodes.workers"]);
        assert_eq!(state.resources[&address("nodes.workers")], before);
        assert_eq!(
            state.resources[&address("load-balancer.shop")].depends_on,
            [address("cluster.prod"), address("nodes.workers")]
        );
    }

    #[test]
    fn a_rename_is_refused_without_its_entry_onto_another_or_to_another_kind() {
        let mut state = state(&[
            ("load-balancer.a", entry("a", &[])),
            ("load-balancer.b", entry("b", &[])),
        ]);
        let original = state.clone();
        let refused = |state: &mut State, from: &str, to: &str| {
            state
                .rename(&address(from), &address(to))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused(&mut state, "load-balancer.x", "load-balancer.y"),
            "load-balancer.x is not in the state"
        );
        assert!(refused(&mut state, "load-balancer.a", "load-balancer.b")
            .starts_with("load-balancer.b is already in the state"));
        assert_eq!(
            refused(&mut state, "load-balancer.a", "cluster.b"),
            "load-balancer.a cannot move to cluster.b: a move keeps the resource's kind"
        );
        assert_eq!(
            refused(&mut state, "load-balancer.a", "load-balancer.a"),
            "load-balancer.a is moved to itself"
        );
        assert_eq!(state, original, "a refused rename changes nothing");
    }

    #[test]
    fn a_chain_moves_an_entry_to_its_end_and_remembers_where_it_started() {
        let mut state = state(&[("load-balancer.a", entry("a", &[]))]);
        let chain = moves(&[
            ("load-balancer.a", "load-balancer.b"),
            ("load-balancer.b", "load-balancer.c"),
        ]);
        let moved = state.apply_moves(&chain).unwrap();
        assert_eq!(addresses(&state), ["load-balancer.c"]);
        assert_eq!(
            moved,
            BTreeMap::from([(address("load-balancer.c"), address("load-balancer.a"))])
        );
        // Applied again (the next plan): nothing left to move.
        assert!(state.apply_moves(&chain).unwrap().is_empty());
        assert_eq!(addresses(&state), ["load-balancer.c"]);
    }

    #[test]
    fn a_move_whose_entry_is_gone_does_nothing() {
        let mut state = state(&[("load-balancer.z", entry("z", &[]))]);
        let moved = state
            .apply_moves(&moves(&[("load-balancer.a", "load-balancer.b")]))
            .unwrap();
        assert!(moved.is_empty());
        assert_eq!(addresses(&state), ["load-balancer.z"]);
    }

    #[test]
    fn a_move_onto_an_entry_in_the_state_is_blocked_naming_both() {
        let mut state = state(&[
            ("load-balancer.a", entry("a", &[])),
            ("load-balancer.b", entry("b", &[])),
            ("load-balancer.x", entry("x", &[])),
        ]);
        let blocked = state
            .apply_moves(&moves(&[
                ("load-balancer.a", "load-balancer.b"),
                ("load-balancer.x", "load-balancer.y"),
            ]))
            .unwrap_err();
        assert_eq!(blocked.len(), 1);
        assert_eq!(
            blocked[0].to_string(),
            "a.toml:1:1: load-balancer.a cannot move to load-balancer.b: both are in the state (`skyplan state rm` the one that is not this resource, then plan again)"
        );
    }

    #[test]
    fn a_chain_blocked_halfway_names_where_the_entry_started() {
        let mut state = state(&[
            ("load-balancer.a", entry("a", &[])),
            ("load-balancer.c", entry("c", &[])),
        ]);
        let blocked = state
            .apply_moves(&moves(&[
                ("load-balancer.a", "load-balancer.b"),
                ("load-balancer.b", "load-balancer.c"),
            ]))
            .unwrap_err();
        assert_eq!(
            (blocked[0].from.to_string(), blocked[0].to.to_string()),
            ("load-balancer.a".into(), "load-balancer.c".into())
        );
    }
}
