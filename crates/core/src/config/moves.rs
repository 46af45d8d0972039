//! `[[moved]]`: resources renamed, as Terraform's moved blocks. Each entry is checked against
//! the others and against the resources the config declares, every problem at its key:
//! an address that is not one, a move onto itself or to another kind, two moves from one
//! address or onto one, a cycle, a `from` the config still declares, a `to` it does not
//! (unless the next move of a chain moves on from it). What is left is ordered as the moves
//! apply: a chain (`a` → `b`, `b` → `c`) from its first move to its last, so that a state
//! entry at `a` ends at `c`.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use serde_spanned::Spanned;

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::parse::{RawConfig, Sourced};
use super::raw::RawMoved;
use super::types::{Move, Resource};
use crate::model::Address;

/// One entry whose addresses both parse, with where its keys are written.
struct Entry<'f> {
    file: &'f SourceFile,
    at: Range<usize>,
    from: Spanned<Address>,
    to: Spanned<Address>,
}

impl Entry<'_> {
    fn problem(&self, span: Range<usize>, message: impl Into<String>) -> Problem {
        Problem::at(self.file, span, message)
    }
}

/// The config's moves, checked, in the order they apply; each problem reported.
pub(super) fn moves(
    raw: &RawConfig<'_>,
    resources: &[Resource],
    problems: &mut Problems,
) -> Vec<Move> {
    let declared: BTreeSet<&Address> = resources.iter().map(|r| &r.address).collect();
    let mut entries = Vec::with_capacity(raw.moved.len());
    for entry in &raw.moved {
        if let Some(entry) = parsed(entry, problems).filter(|e| renames(e, problems)) {
            entries.push(entry);
        }
    }
    let entries = once_each(entries, problems);
    let entries = without_cycles(entries, problems);
    let froms: BTreeSet<&Address> = entries.iter().map(|e| e.from.get_ref()).collect();
    let mut valid = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        let (from, to) = (entry.from.get_ref(), entry.to.get_ref());
        let mut ok = true;
        if declared.contains(from) {
            let problem = entry
                .problem(
                    entry.from.span(),
                    format!("the config still declares {from}"),
                )
                .with_help(format!(
                    "a move renames a resource: remove [{from}] from the config (its state entry becomes {to}'s), or remove this move"
                ));
            problems.push(problem);
            ok = false;
        }
        if !declared.contains(to) && !froms.contains(to) {
            let problem = entry
                .problem(entry.to.span(), format!("{to} is not in the config"))
                .with_help(format!("declare the resource it moves to: [{to}]"));
            problems.push(problem);
            ok = false;
        }
        if ok {
            valid.push(i);
        }
    }
    in_order(&entries, &valid)
}

/// The entry with both its addresses parsed; `None` after reporting each that is not one.
fn parsed<'f>(entry: &Sourced<'f, RawMoved>, problems: &mut Problems) -> Option<Entry<'f>> {
    let raw = entry.get();
    let mut address = |text: &Spanned<String>| match text.get_ref().parse::<Address>() {
        Ok(address) => Some(Spanned::new(text.span(), address)),
        Err(e) => {
            let problem = Problem::at(entry.file, text.span(), e.to_string())
                .with_help("write the address as the table's name, e.g. \"load-balancer.web\"");
            problems.push(problem);
            None
        }
    };
    let (from, to) = (address(&raw.from), address(&raw.to));
    Some(Entry {
        file: entry.file,
        at: entry.span(),
        from: from?,
        to: to?,
    })
}

/// Whether the entry renames a resource: to another address of the same kind.
fn renames(entry: &Entry, problems: &mut Problems) -> bool {
    let (from, to) = (entry.from.get_ref(), entry.to.get_ref());
    if from == to {
        problems.push(
            entry
                .problem(entry.to.span(), format!("{from} is moved to itself"))
                .with_help("a move names the old address in `from` and the new one in `to`"),
        );
        return false;
    }
    if from.kind != to.kind {
        problems.push(
            entry
                .problem(
                    entry.to.span(),
                    format!("{from} cannot move to {to}: a move keeps the resource's kind"),
                )
                .with_help(format!(
                    "move it to another {} address, e.g. \"{}.{}\"",
                    from.kind, from.kind, to.name
                )),
        );
        return false;
    }
    true
}

/// The entries without the second of two moves from one address, or onto one (each
/// reported, with where the first is written).
fn once_each<'f>(entries: Vec<Entry<'f>>, problems: &mut Problems) -> Vec<Entry<'f>> {
    let mut from_seen: HashMap<Address, (&'f SourceFile, Range<usize>)> = HashMap::new();
    let mut to_seen: HashMap<Address, (&'f SourceFile, Range<usize>)> = HashMap::new();
    let mut kept = Vec::with_capacity(entries.len());
    for entry in entries {
        let (from, to) = (entry.from.get_ref(), entry.to.get_ref());
        if let Some((file, span)) = from_seen.get(from) {
            let problem = entry
                .problem(entry.from.span(), format!("{from} is moved twice"))
                .with_help("a resource moves to one address: keep one of the moves")
                .with_note(Problem::at(file, span.clone(), "first moved here"));
            problems.push(problem);
            continue;
        }
        if let Some((file, span)) = to_seen.get(to) {
            let problem = entry
                .problem(entry.to.span(), format!("two moves end at {to}"))
                .with_help("one address takes one resource's state entry: keep one of the moves")
                .with_note(Problem::at(file, span.clone(), "first moved here"));
            problems.push(problem);
            continue;
        }
        from_seen.insert(from.clone(), (entry.file, entry.from.span()));
        to_seen.insert(to.clone(), (entry.file, entry.to.span()));
        kept.push(entry);
    }
    kept
}

/// The entries without those that form a cycle (`a` → `b`, `b` → `a`): each cycle reported
/// once, at its first entry, naming every address on it. No two entries share a `from` or a
/// `to` here, so following each `to` to the move from it walks a path or goes round a cycle.
fn without_cycles<'f>(entries: Vec<Entry<'f>>, problems: &mut Problems) -> Vec<Entry<'f>> {
    let next = successors(&entries);
    let mut on_cycle = vec![false; entries.len()];
    for start in 0..entries.len() {
        if on_cycle[start] {
            continue;
        }
        let mut path = vec![start];
        let mut at = start;
        let closes = loop {
            match next[at] {
                Some(following) if following == start => break true,
                // Each address has one move from it and one onto it: a path from `start` ends,
                // or comes back to it (the bound only guards that rule).
                Some(following) if path.len() <= entries.len() => {
                    path.push(following);
                    at = following;
                }
                _ => break false,
            }
        };
        if !closes {
            continue;
        }
        for &i in &path {
            on_cycle[i] = true;
        }
        problems.push(cycle(&entries, &path));
    }
    entries
        .into_iter()
        .zip(on_cycle)
        .filter_map(|(entry, cyclic)| (!cyclic).then_some(entry))
        .collect()
}

/// For each entry, the entry that moves on from its `to`.
fn successors(entries: &[Entry]) -> Vec<Option<usize>> {
    let by_from: HashMap<&Address, usize> = (entries.iter().enumerate())
        .map(|(i, e)| (e.from.get_ref(), i))
        .collect();
    (entries.iter())
        .map(|e| by_from.get(e.to.get_ref()).copied())
        .collect()
}

fn cycle(entries: &[Entry], path: &[usize]) -> Problem {
    let first = &entries[path[0]];
    let mut addresses: Vec<String> = path
        .iter()
        .map(|&i| entries[i].from.get_ref().to_string())
        .collect();
    addresses.push(first.from.get_ref().to_string());
    let mut problem = first
        .problem(
            first.from.span(),
            format!("these moves form a cycle: {}", addresses.join(" → ")),
        )
        .with_help("a cycle renames nothing: remove the move that closes it");
    for &i in &path[1..] {
        let entry = &entries[i];
        let note = format!("{} → {}", entry.from.get_ref(), entry.to.get_ref());
        problem = problem.with_note(entry.problem(entry.from.span(), note));
    }
    problem
}

/// The valid entries (by index) as they apply: each chain from its first move, the chains in
/// the order their first moves are written. A move whose chain lost an entry to a problem is
/// still put after the moves it follows, as far as they are valid.
fn in_order(entries: &[Entry], valid: &[usize]) -> Vec<Move> {
    let next = successors(entries);
    let valid_set: BTreeSet<usize> = valid.iter().copied().collect();
    let has_valid_predecessor: BTreeSet<usize> = (valid.iter())
        .filter_map(|&i| next[i].filter(|n| valid_set.contains(n)))
        .collect();
    let mut ordered = Vec::with_capacity(valid.len());
    for &head in valid.iter().filter(|i| !has_valid_predecessor.contains(i)) {
        let mut at = Some(head);
        while let Some(i) = at.filter(|i| valid_set.contains(i)) {
            let entry = &entries[i];
            ordered.push(Move {
                from: entry.from.get_ref().clone(),
                to: entry.to.get_ref().clone(),
                location: entry.file.location(&entry.at),
            });
            at = next[i];
        }
    }
    ordered
}

#[cfg(test)]
#[path = "moves_tests.rs"]
mod tests;
