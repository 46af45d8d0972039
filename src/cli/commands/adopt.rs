//! `skyplan import --generate-config FILE (ADDR=ID… | --all)`: adopts unmanaged objects. Each
//! object's provider writes its config; the whole config, with the new file, is loaded before
//! anything is written, the objects are imported from the survey the config was written from,
//! then the file is written (never over an existing one) and the state saved — or neither.

use crate::invocation::skyplan;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use miette::{miette, IntoDiagnostic, Report};

use super::super::args::ImportArgs;
use super::super::exit;
use super::super::report::Reported;
use super::{load, open, ConfigSource};
use crate::config;
use crate::model::Address;
use crate::provider::discover::{Generated, Unmanaged};
use crate::workspace::{Generation, Survey, Workspace};

/// What the user asked to adopt.
enum Selection {
    All,
    Pairs(Vec<(Address, String)>),
}

/// An object the command did not adopt, and why.
struct Refusal {
    object: String,
    why: String,
}

pub(super) async fn adopt(
    source: &ConfigSource,
    file: &Path,
    args: &ImportArgs,
) -> Result<u8, Report> {
    let selection = selection(args)?;
    check_file(&source.layers, file)?;
    let config = load(source)?;
    let mut workspace = open(config, "import", &args.locking).await?;
    let outcome = adopt_in(&mut workspace, source, file, selection).await;
    workspace.close().await.reported()?;
    let (adopted, refusals) = outcome?;
    report(file, &adopted, &refusals);
    Ok(if refusals.is_empty() {
        exit::SUCCESS
    } else {
        exit::ERROR
    })
}

fn selection(args: &ImportArgs) -> Result<Selection, Report> {
    if args.all {
        return Ok(Selection::All);
    }
    if args.objects.is_empty() {
        return Err(miette!(
            "--generate-config needs the objects to adopt: ADDR=ID pairs (IDs as `{}` lists them) or --all",
            skyplan("discover")
        ));
    }
    let mut pairs = Vec::new();
    for pair in &args.objects {
        let (address, id) = pair.split_once('=').ok_or_else(|| {
            miette!("`{pair}`: with --generate-config, name each object as ADDR=ID (load-balancer.web=<uuid>)")
        })?;
        let address: Address = address.parse().into_diagnostic()?;
        if id.is_empty() {
            return Err(miette!("`{pair}`: the ID after `=` is empty"));
        }
        pairs.push((address, id.to_string()));
    }
    Ok(Selection::Pairs(pairs))
}

/// The file must be new, a `.toml` file, and in a directory the config is read from (one of
/// its layers): else the next plan would not read it, and the adopted objects would plan as
/// removals.
fn check_file(layers: &[PathBuf], file: &Path) -> Result<(), Report> {
    if file.exists() {
        return Err(miette!(
            "{} exists: skyplan never overwrites a file; name a new one",
            file.display()
        ));
    }
    if file.extension().is_none_or(|e| e != "toml") {
        return Err(miette!(
            "{}: the config directory reads only *.toml files; name the file *.toml",
            file.display()
        ));
    }
    let directory = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !layers
        .iter()
        .any(|layer| layer.is_dir() && same(layer, &directory))
    {
        let given: Vec<_> = layers
            .iter()
            .map(|l| format!("`{}`", l.display()))
            .collect();
        return Err(miette!(
            "{} is not read with the config {}: give -c the directory the file is written to, so that the next plan reads it",
            file.display(),
            given.join(", ")
        ));
    }
    Ok(())
}

async fn adopt_in(
    workspace: &mut Workspace,
    source: &ConfigSource,
    file: &Path,
    selection: Selection,
) -> Result<(Vec<Unmanaged>, Vec<Refusal>), Report> {
    let started = std::time::Instant::now();
    let Survey {
        objects: found,
        generation,
    } = workspace.discover_to_adopt().await.reported()?;
    tracing::info!(
        ms = started.elapsed().as_millis(),
        objects = found.len(),
        "discovered and generated"
    );
    let Generation {
        results: judged,
        refreshes,
    } = generation;
    let offered = Offered::of(&judged);
    let (results, mut refusals) = match selection {
        // As discover judged them: each generated under the address it is listed with.
        Selection::All => {
            left_alone(&found, &offered);
            (judged, vec![])
        }
        Selection::Pairs(pairs) => {
            let (picks, refusals) = pick(workspace, found, &offered, pairs)?;
            let generated = workspace.generate_from(&picks, &refreshes).reported()?;
            tracing::info!(
                ms = started.elapsed().as_millis(),
                "generated under the addresses asked for"
            );
            (picks.into_iter().zip(generated).collect(), refusals)
        }
    };
    if results.is_empty() {
        return Ok((vec![], refusals));
    }
    let mut adopted = Vec::new();
    let mut planned_as = Vec::new();
    let mut text = String::from(HEADER);
    for (object, generated) in results {
        match generated {
            Generated::Config { text: table, spec } => {
                let _ = write!(text, "\n# {}\n{}", origin(&object), table.trim_end());
                text.push('\n');
                planned_as.extend(spec.map(|spec| (object.address.clone(), spec)));
                adopted.push(object);
            }
            Generated::Refused { attribute, reason } => refusals.push(Refusal {
                object: describe(&object),
                why: format!("{attribute}: {reason}"),
            }),
        }
    }
    if adopted.is_empty() {
        return Ok((adopted, refusals));
    }
    let config = config::load_with(
        &source.layers,
        (file, &text),
        &source.variables,
        crate::registry::CONFIG_SECTIONS,
    )
    .map_err(|e| {
        miette!("the generated config does not load (a bug in skyplan; nothing was written): {e}")
    })?;
    reads_as_planned(&config, &planned_as)?;
    workspace.config = config;
    tracing::info!(
        ms = started.elapsed().as_millis(),
        "the config loaded with the file"
    );
    let adopted_refs: Vec<&Unmanaged> = adopted.iter().collect();
    workspace
        .import_generated(&adopted_refs, &refreshes)
        .reported()?;
    tracing::info!(ms = started.elapsed().as_millis(), "imported");
    write_new(file, &text)?;
    if let Err(e) = workspace.save_state().reported() {
        // The state does not know the objects: a file declaring them would plan them as new.
        let _ = std::fs::remove_file(file);
        return Err(e);
    }
    tracing::info!(ms = started.elapsed().as_millis(), "written and saved");
    Ok((adopted, refusals))
}

/// Each table the config read as the spec its provider planned it as: else the file would not
/// say what was checked, and the next plan could differ (a bug in skyplan; nothing is written).
fn reads_as_planned(
    config: &config::Config,
    planned_as: &[(Address, config::ResourceSpec)],
) -> Result<(), Report> {
    for (address, spec) in planned_as {
        let read = config.resource(address).map(|r| &r.spec);
        if read != Some(spec) {
            return Err(miette!(
                "the generated config of {address} reads as {read:?}, not as {spec:?} (a bug in skyplan; nothing was written)"
            ));
        }
    }
    Ok(())
}

const HEADER: &str = "\
# Written by `skyplan import --generate-config` from what the cloud holds, and recorded in the
# state: planned as it is, it changes nothing. It is yours to edit from here.
";

/// Says which objects `--all` leaves because there is nothing to adopt on their own (a
/// Service its cloud's object will serve; those `offered` does not hold): not refusals,
/// nothing is wrong with them. Those their provider's generation refused are refusals.
fn left_alone(found: &[Unmanaged], offered: &Offered) {
    let left: Vec<&Unmanaged> = found.iter().filter(|o| !offered.holds(o)).collect();
    if left.is_empty() {
        return;
    }
    let names: Vec<String> = left.iter().map(|o| o.address.to_string()).collect();
    eprintln!(
        "Left as they are: {} that cannot be adopted on {} own ({}); `{}` says what each is.",
        crate::render::counted(left.len(), "object"),
        if left.len() == 1 { "its" } else { "their" },
        names.join(", "),
        skyplan("discover")
    );
}

/// The objects their providers offered for adoption: those discover's judgement generated a
/// config for, or refused.
struct Offered(std::collections::BTreeSet<(String, String)>);

impl Offered {
    fn of(judged: &[(Unmanaged, Generated)]) -> Offered {
        let keys = judged
            .iter()
            .map(|(o, _)| (o.provider.clone(), o.id.clone()));
        Offered(keys.collect())
    }

    fn holds(&self, object: &Unmanaged) -> bool {
        self.0
            .contains(&(object.provider.clone(), object.id.clone()))
    }
}

/// The objects the pairs name, each under its address, and the ones refused before any config
/// is written (nothing of them to adopt on their own, as discover says).
fn pick(
    workspace: &Workspace,
    mut found: Vec<Unmanaged>,
    offered: &Offered,
    pairs: Vec<(Address, String)>,
) -> Result<(Vec<Unmanaged>, Vec<Refusal>), Report> {
    let mut refusals = Vec::new();
    let mut picks: Vec<Unmanaged> = Vec::new();
    for (address, id) in pairs {
        let at = found.iter().position(|o| o.id == id).ok_or_else(|| {
            miette!("{address}={id}: no unmanaged object has the ID {id} (`{}` lists them; one the config or the state manages is not adopted again)", skyplan("discover"))
        })?;
        let mut object = found.remove(at);
        if object.kind != address.kind {
            return Err(miette!(
                "{address}={id}: the object is a {}, not a {}",
                object.kind,
                address.kind
            ));
        }
        if workspace.config.resource(&address).is_some()
            || workspace.state.resources.contains_key(&address)
            || picks.iter().any(|p| p.address == address)
        {
            return Err(miette!(
                "{address}={id}: {address} is taken; choose another name"
            ));
        }
        let offered = offered.holds(&object);
        object.address = address;
        match offered {
            // Generated again under the address asked for, which may judge otherwise.
            true => picks.push(object),
            false => refusals.push(Refusal {
                object: describe(&object),
                why: object.why_not_importable.clone().unwrap_or_default(),
            }),
        }
    }
    Ok((picks, refusals))
}

fn describe(object: &Unmanaged) -> String {
    format!(
        "{} {} ({} {})",
        object.kind, object.name, object.provider, object.id
    )
}

/// The comment above an object's table: what it is and who made it.
fn origin(object: &Unmanaged) -> String {
    let serves = match &object.service {
        Some(service) => format!("; serves {service}"),
        None => String::new(),
    };
    format!(
        "{} {} {} ({}), made by {}{serves}",
        object.provider, object.kind, object.name, object.id, object.made_by
    )
}

/// Writes `text` to `file`, which must not exist: through a temporary file beside it, linked
/// into place (the link fails if someone made the file meanwhile), so no one sees it half
/// written.
fn write_new(file: &Path, text: &str) -> Result<(), Report> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let temporary = file.with_file_name(format!(
        ".{}.{}.tmp",
        name.unwrap_or_default(),
        std::process::id()
    ));
    std::fs::write(&temporary, text).into_diagnostic()?;
    let linked = std::fs::hard_link(&temporary, file);
    let _ = std::fs::remove_file(&temporary);
    linked.map_err(|e| miette!("cannot write {}: {e}", file.display()))
}

fn report(file: &Path, adopted: &[Unmanaged], refusals: &[Refusal]) {
    if adopted.is_empty() && refusals.is_empty() {
        println!("Nothing to adopt: every object found is in the config.");
        return;
    }
    for object in adopted {
        println!("+ {} ← {}", object.address, describe(object));
    }
    if !adopted.is_empty() {
        println!(
            "Wrote {} to {} and recorded {} in the state; `{}` shows no changes for them but the skyplan.address tags apply adds (impact none).",
            crate::render::counted(adopted.len(), "resource"),
            file.display(),
            if adopted.len() == 1 { "it" } else { "them" },
            skyplan("plan")
        );
    }
    if !refusals.is_empty() {
        eprintln!("Not adopted ({}):", refusals.len());
        for refusal in refusals {
            eprintln!("  {}: {}", refusal.object, refusal.why);
        }
    }
}
