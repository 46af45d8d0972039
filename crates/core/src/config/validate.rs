//! Rules every provider needs: each resource table names a provider that takes tables of its
//! kind and has its `[provider.NAME]` table; then each section's own rules, the Kubernetes
//! tables' and controller mode that can never converge.

use std::collections::HashMap;
use std::ops::Range;

use super::check::Checker;
use super::diagnostics::{Problem, Problems};
use super::parse::{RawConfig, Sourced};
use super::raw::RawUnrouted;
use super::section::{ConfigSection, Declared};
use super::values::Invalid;
use crate::model::ResourceKind;

pub(super) fn validate(raw: &RawConfig<'_>, problems: &mut Problems) {
    for (&kind, tables) in &raw.unrouted {
        for table in tables.values() {
            refuse_unrouted(kind, table, raw, problems);
        }
    }
    sections_have_their_tables(raw, problems);
    for index in 0..raw.sections.len() {
        let declared = Declared {
            raw,
            section: index,
        };
        raw.sections[index].validate(&declared, problems);
    }
    super::controller::validate(raw, problems);
}

/// A `[KIND.NAME]` is read by the provider it names; one naming no provider of its kind is
/// refused, saying which are.
fn refuse_unrouted(
    kind: ResourceKind,
    table: &Sourced<'_, RawUnrouted>,
    raw: &RawConfig<'_>,
    problems: &mut Problems,
) {
    let help = expected_providers(kind, &raw.sections_of(kind));
    let (noun, plural) = match kind {
        ResourceKind::LoadBalancer => ("load balancer", "load balancers"),
        ResourceKind::Cluster => ("cluster", "clusters"),
        ResourceKind::Nodes => ("node policy", "node policies"),
    };
    let mut check = Checker::new(table.file, problems);
    let Some(provider) = &table.get().provider else {
        let invalid = Invalid::new(format!("a {noun} needs a provider")).help(help);
        return check.report(table.span(), invalid);
    };
    let name = provider.get_ref();
    let message = match raw.provider_names().contains(&name.as_str()) {
        true => format!("`{name}` cannot manage {plural}"),
        false => format!("`{name}` is not a supported provider"),
    };
    let invalid = Invalid::new(message).help(help);
    check.report(provider.span(), invalid);
}

/// The providers of `kind`: with what each makes of the table when a section says
/// ("write provider = "kubernetes" (an existing cluster skyplan connects to) or …"), else as a
/// list.
fn expected_providers(kind: ResourceKind, sections: &[&dyn ConfigSection]) -> String {
    let described: Vec<String> = (sections.iter())
        .filter_map(|s| Some(format!("\"{}\" ({})", s.provider(), s.describe(kind)?)))
        .collect();
    if !described.is_empty() && described.len() == sections.len() {
        return format!("write provider = {}", described.join(" or "));
    }
    let names: Vec<_> = sections.iter().map(|s| s.provider()).collect();
    format!("expected one of \"{}\"", names.join("\", \""))
}

/// Every resource table of a section's provider comes with its provider's table.
fn sections_have_their_tables(raw: &RawConfig<'_>, problems: &mut Problems) {
    for resource in raw.section_resources.values() {
        let provider = raw.sections[resource.section].provider();
        if raw.has_provider(provider) {
            continue;
        }
        let mut check = Checker::new(resource.table.file, problems);
        let invalid = Invalid::new(format!(
            "provider `{provider}` has no [provider.{provider}] table"
        ))
        .help(format!(
            "add [provider.{provider}] with endpoint = \"embedded\" or an API URL"
        ));
        check.report(resource.provider.clone(), invalid);
    }
}

/// Records `key` at `span`, or reports it as a duplicate of its first occurrence.
pub fn once<K: std::hash::Hash + Eq>(
    seen: &mut HashMap<K, Range<usize>>,
    key: K,
    span: Range<usize>,
    what: &str,
    check: &mut Checker,
) {
    match seen.get(&key) {
        Some(first) => {
            let note = Problem::at(check.file, first.clone(), "first used here");
            let problem = Problem::at(check.file, span, format!("{what} is used twice"));
            check.push(problem.with_note(note));
        }
        None => {
            seen.insert(key, span);
        }
    }
}
