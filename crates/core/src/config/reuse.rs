//! Reuse, expanded on the parsed TOML before any table is deserialized, so that every
//! provider's section reads the tables as if they were written out: `for-each` makes one
//! table per item, each resource table inherits its `[defaults.…]`, and `${…}` references in
//! the values of resource and provider tables are expanded (in that order, so a default may
//! refer to `${each.key}` and `${var.NAME}` too). `[variables]` and `[defaults]` are taken
//! out of the documents here.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use serde_spanned::Spanned;
use toml::de::{DeString, DeTable, DeValue};

use super::defaults::Defaults;
use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::for_each::{self, Instance};
use super::interpolate::{self, Scope};
use super::parse::{Root, Sections};
use super::section::ConfigSection;
use super::variables::{VariableValues, Variables};
use crate::model::{Address, ResourceKind};

/// The top-level table of variables.
const VARIABLES: &str = "variables";
/// The top-level table of defaults.
const DEFAULTS: &str = "defaults";

/// Every file's roots (by the files' order) with reuse expanded.
/// Every file's roots (by the files' order) with reuse expanded, and the resource tables
/// that are not as the file writes them.
pub(super) fn expand<'f>(
    files: &'f [SourceFile],
    mut roots: Vec<Vec<Root<'f>>>,
    sections: Sections<'static>,
    given: &Variables,
    problems: &mut Problems,
) -> (Vec<Vec<Root<'f>>>, Expanded) {
    let (variables, defaults) = take_reuse_tables(&mut roots);
    let variables = VariableValues::collect(files, variables, given, problems);
    let defaults = Defaults::collect(files, defaults, sections, problems);
    let expanding = Expanding {
        sections,
        variables: &variables,
        defaults: &defaults,
    };
    let mut instances = Instances::default();
    let mut expanded = Expanded::default();
    for (index, roots) in roots.iter_mut().enumerate() {
        for root in roots {
            let file = Place { files, index };
            let found = Found {
                instances: &mut instances,
                expanded: &mut expanded,
            };
            expanding.root(file, &mut root.table, found, problems);
        }
    }
    instances.report_shared_cloud_names(files, problems);
    variables.report_unused(files, problems);
    (roots, expanded)
}

/// The resource tables (by kind and key) that reuse changed: what the file writes is not what
/// they are, so what writes values into one (`Origin::with_values`) needs the table itself.
pub(super) type Expanded = BTreeSet<(ResourceKind, String)>;

/// What expanding the tables finds, across files.
struct Found<'a> {
    instances: &'a mut Instances,
    expanded: &'a mut Expanded,
}

/// Every file's `[variables]` and `[defaults]`, by the file's index.
type ReuseTables<'f> = (
    Vec<(usize, DeTable<'f>)>,
    Vec<(usize, Spanned<DeValue<'f>>)>,
);

/// A `[variables]` table; anything else is put back for the document's schema to refuse
/// where it is written.
fn variables_table<'f>(
    (key, value): (Spanned<DeString<'f>>, Spanned<DeValue<'f>>),
    variables: &mut Vec<(usize, DeTable<'f>)>,
    index: usize,
    root: &mut Root<'f>,
) {
    let span = value.span();
    match value.into_inner() {
        DeValue::Table(table) => variables.push((index, table)),
        other => {
            root.table.insert(key, Spanned::new(span, other));
        }
    }
}

fn take_reuse_tables<'f>(roots: &mut [Vec<Root<'f>>]) -> ReuseTables<'f> {
    let (mut variables, mut defaults) = (Vec::new(), Vec::new());
    for (index, roots) in roots.iter_mut().enumerate() {
        for root in roots {
            if let Some(table) = root.table.remove_entry(VARIABLES) {
                variables_table(table, &mut variables, index, &mut *root);
            }
            if let Some(table) = root.table.remove(DEFAULTS) {
                defaults.push((index, table));
            }
        }
    }
    (variables, defaults)
}

/// A file, by its index among the config's.
#[derive(Clone, Copy)]
struct Place<'a> {
    files: &'a [SourceFile],
    index: usize,
}

impl Place<'_> {
    fn file(&self) -> &SourceFile {
        &self.files[self.index]
    }
}

struct Expanding<'a, 'f> {
    sections: Sections<'static>,
    variables: &'a VariableValues,
    defaults: &'a Defaults<'f>,
}

impl<'f> Expanding<'_, 'f> {
    fn root(
        &self,
        file: Place<'_>,
        root: &mut DeTable<'f>,
        mut found: Found<'_>,
        problems: &mut Problems,
    ) {
        for (key, value) in root.iter_mut() {
            let DeValue::Table(entries) = value.get_mut() else {
                continue;
            };
            let named = key.get_ref().as_ref();
            if named == "provider" {
                let taken = std::mem::take(entries);
                *entries = self.provider_tables(file, taken, problems);
            } else if let Some(kind) = ResourceKind::ALL.iter().find(|k| k.as_str() == named) {
                let taken = std::mem::take(entries);
                *entries = self.resource_tables(file, *kind, taken, &mut found, problems);
            }
        }
    }

    fn provider_tables(
        &self,
        file: Place<'_>,
        entries: DeTable<'f>,
        problems: &mut Problems,
    ) -> DeTable<'f> {
        let mut expanded = DeTable::new();
        for (name, value) in entries {
            let section = self
                .sections
                .iter()
                .find(|s| s.provider() == name.get_ref());
            let scope = Scope {
                variables: self.variables,
                each: None,
                secrets: section.map_or(&[], |s| s.secret_keys()),
                file: file.file(),
                expanded: Default::default(),
            };
            expanded.insert(name, expand_table(value, &scope, problems));
        }
        expanded
    }

    fn resource_tables(
        &self,
        file: Place<'_>,
        kind: ResourceKind,
        entries: DeTable<'f>,
        found: &mut Found<'_>,
        problems: &mut Problems,
    ) -> DeTable<'f> {
        let mut expanded = DeTable::new();
        for (name, table) in entries {
            for instance in for_each::instances(name, table, file.file(), problems) {
                let is_instance = instance.each.is_some();
                found
                    .instances
                    .add(kind, &instance.name, is_instance, file.index);
                let name = instance.name.clone();
                let (table, changed) = self.resource_table(file, kind, instance, problems);
                if changed {
                    found.expanded.insert((kind, name.get_ref().to_string()));
                }
                expanded.insert(name, table);
            }
        }
        expanded
    }

    /// One resource table with its defaults and references expanded; whether that changed it.
    fn resource_table(
        &self,
        file: Place<'_>,
        kind: ResourceKind,
        Instance { name, table, each }: Instance<'f>,
        problems: &mut Problems,
    ) -> (Spanned<DeValue<'f>>, bool) {
        let span = table.span();
        let mut table = match table.into_inner() {
            DeValue::Table(table) => table,
            // Not a table: its section says so.
            other => return (Spanned::new(span, other), false),
        };
        let section = self.section_of(kind, &table);
        let inherited = section
            .is_some_and(|section| self.defaults.inherit(kind, section.provider(), &mut table));
        let scope = Scope {
            variables: self.variables,
            each: each.as_ref(),
            secrets: section.map_or(&[], |s| s.secret_keys()),
            file: file.file(),
            expanded: Default::default(),
        };
        let since = problems.count();
        let table = interpolate::expand_table(table, &scope, problems);
        problems.name_inheritor(since, &format!("{kind}.{}", name.get_ref()));
        let changed = each.is_some() || inherited || scope.expanded.get();
        (Spanned::new(span, DeValue::Table(table)), changed)
    }

    /// The section a resource table of `kind` belongs to: the one that has all of the kind,
    /// else the one its `provider` names.
    fn section_of(
        &self,
        kind: ResourceKind,
        table: &DeTable<'_>,
    ) -> Option<&'static dyn ConfigSection> {
        let sections = self.sections;
        if let Some(section) = sections.iter().find(|s| s.unnamed_kinds().contains(&kind)) {
            return Some(*section);
        }
        let provider = match table.get("provider").map(Spanned::get_ref) {
            Some(DeValue::String(provider)) => provider,
            _ => return None,
        };
        (sections.iter())
            .find(|s| s.provider() == provider && s.kinds().contains(&kind))
            .copied()
    }
}

/// A provider table with its references expanded (a value that is not a table is left for
/// its section to refuse).
fn expand_table<'f>(
    value: Spanned<DeValue<'f>>,
    scope: &Scope<'_, 'f>,
    problems: &mut Problems,
) -> Spanned<DeValue<'f>> {
    let span = value.span();
    match value.into_inner() {
        DeValue::Table(table) => {
            let table = interpolate::expand_table(table, scope, problems);
            Spanned::new(span, DeValue::Table(table))
        }
        other => Spanned::new(span, other),
    }
}

/// The resource names of each kind, to find an instance whose cloud name (`web-a` for
/// `web["a"]`) is another table's.
#[derive(Default)]
struct Instances {
    plain: BTreeSet<(ResourceKind, String)>,
    instances: Vec<NamedInstance>,
}

/// An instance of a `for-each` table.
struct NamedInstance {
    address: Address,
    /// The file (by index) and span where its table's key is written.
    file: usize,
    span: Range<usize>,
}

impl Instances {
    fn add(
        &mut self,
        kind: ResourceKind,
        name: &Spanned<DeString<'_>>,
        is_instance: bool,
        file: usize,
    ) {
        let address = Address::new(kind, name.get_ref().to_string());
        match is_instance {
            false => {
                self.plain.insert((kind, address.name));
            }
            true => self.instances.push(NamedInstance {
                address,
                file,
                span: name.span(),
            }),
        }
    }

    /// An instance whose cloud name is a table's key (`web["a"]` beside `web-a`) or another
    /// table's instance's (`web["a-x"]` beside `web-a["x"]`): two resources, one cloud name.
    fn report_shared_cloud_names(&self, files: &[SourceFile], problems: &mut Problems) {
        let mut taken: BTreeMap<(ResourceKind, String), String> = (self.plain.iter())
            .map(|(kind, name)| ((*kind, name.clone()), format!("{kind}.{name}")))
            .collect();
        for instance in &self.instances {
            let (kind, cloud_name) = (instance.address.kind, instance.address.cloud_name());
            let address = instance.address.to_string();
            let Some(other) = taken.get(&(kind, cloud_name.clone())) else {
                taken.insert((kind, cloud_name), address);
                continue;
            };
            let message = format!("{address} would have the cloud name `{cloud_name}` of {other}");
            let help = "rename one of the tables or the key";
            let file = &files[instance.file];
            problems.push(Problem::at(file, instance.span.clone(), message).with_help(help));
        }
    }
}
