//! `skyplan discover`: the objects no resource manages, for people (text), scripts (JSON) and
//! the config's own language (TOML). Pure functions of the list, shared with `drift
//! --unmanaged`, which lists the same objects in each drift format.
//!
//! ```json
//! {
//!   "format_version": "1.0",
//!   "unmanaged": [
//!     { "address": "load-balancer.web", "provider": "cloudscale", "kind": "load-balancer",
//!       "id": "…uuid…", "name": "k8s-service-…", "made_by": { "by": "controller", "name": "cloudscale CCM" },
//!       "cluster": "cluster.prod", "service": { "cluster": "cluster.prod", "service": "default/web" },
//!       "summary": "5.102.150.12 in lpg1, lb-standard, port 80", "importable": true },
//!     { "address": "load-balancer.odd", …, "importable": false,
//!       "why_not_importable": "ports.http.members: member m-10.0.0.31 of pool tcp/http is not named as skyplan and the CCM name members (10.0.0.31:30080): a plan would recreate it" }
//!   ]
//! }
//! ```
//!
//! `importable` is what `import --generate-config` does with the object: its provider's
//! generation judged it, and a refused one carries the refusal in `why_not_importable` (1.1).

use std::fmt::Write;

use serde::Serialize;

use anstyle::Style as Ansi;

use super::escape::{cell, markdown_text};
use super::text::{Painter, Style};
use super::words::counted;
use crate::provider::discover::Unmanaged;

/// 1.1 added `why_not_importable`.
const DISCOVERY_FORMAT_VERSION: &str = "1.1";

/// One line per object: its address-to-be, who made it, what it serves, and how to adopt it.
pub fn render_discovery_text(objects: &[Unmanaged], style: Style) -> String {
    let mut out = unmanaged_text(objects, style);
    let _ = writeln!(out, "{}", summary(objects));
    out
}

/// Each object's block, without the closing sentence (the drift report has its own).
pub(super) fn unmanaged_text(objects: &[Unmanaged], style: Style) -> String {
    let paint = Painter(style);
    let mut out = String::new();
    for object in objects {
        let _ = writeln!(
            out,
            "{} {} {}",
            paint.paint(Ansi::new().bold(), format!("? {}", object.address)),
            paint.dim(format!("({} {})", object.provider, object.id)),
            object.name
        );
        let _ = writeln!(out, "    made by {}; {}", object.made_by, serves(object));
        if !object.summary.is_empty() {
            let _ = writeln!(out, "    {}", object.summary);
        }
        if let Some(why) = object
            .why_not_importable
            .as_ref()
            .filter(|_| !object.importable)
        {
            let _ = writeln!(out, "    not importable: {why}");
        }
        out.push('\n');
    }
    out
}

/// What the object is bound to, in words.
fn serves(object: &Unmanaged) -> String {
    match (&object.service, &object.cluster) {
        (Some(service), _) => format!("serves {service}"),
        (None, Some(cluster)) => format!("in {cluster}"),
        (None, None) => "bound to no cluster".to_string(),
    }
}

/// The one sentence every format ends with.
pub fn summary(objects: &[Unmanaged]) -> String {
    if objects.is_empty() {
        return "Nothing unmanaged: every object found is in the config.".to_string();
    }
    let importable = objects.iter().filter(|o| o.importable).count();
    let mut line = format!(
        "{} that no resource manages.",
        counted(objects.len(), "object")
    );
    if importable > 0 {
        let adopt = crate::invocation::skyplan("import --generate-config FILE --all");
        let them = match importable == objects.len() {
            true => "them".to_string(),
            false => format!("the {importable} importable"),
        };
        let _ = write!(line, " Adopt {them} with `{adopt}`.");
    }
    line
}

#[derive(Serialize)]
struct DiscoveryView<'a> {
    format_version: &'static str,
    unmanaged: &'a [Unmanaged],
}

pub fn render_discovery_json(objects: &[Unmanaged]) -> String {
    let view = DiscoveryView {
        format_version: DISCOVERY_FORMAT_VERSION,
        unmanaged: objects,
    };
    let mut text = serde_json::to_string_pretty(&view).expect("discovery serializes");
    text.push('\n');
    text
}

/// `[[unmanaged]]` tables, one per object, in the config's own language.
pub fn render_discovery_toml(objects: &[Unmanaged]) -> String {
    let mut out = String::from("# Objects no resource of the config manages (skyplan discover).\n");
    for object in objects {
        let mut table = toml::Table::new();
        let mut put = |key: &str, value: String| {
            table.insert(key.to_string(), toml::Value::String(value));
        };
        put("address", object.address.to_string());
        put("provider", object.provider.clone());
        put("id", object.id.clone());
        put("name", object.name.clone());
        put("made-by", object.made_by.to_string());
        if let Some(cluster) = &object.cluster {
            put("cluster", cluster.to_string());
        }
        if let Some(service) = &object.service {
            put("service", service.service.clone());
        }
        put("summary", object.summary.clone());
        table.insert("importable".into(), toml::Value::Boolean(object.importable));
        if let Some(why) = &object.why_not_importable {
            put_why(&mut table, why);
        }
        let text = toml::to_string(&table).expect("a table of strings serializes");
        let _ = write!(out, "\n[[unmanaged]]\n{text}");
    }
    out
}

fn put_why(table: &mut toml::Table, why: &str) {
    let why = toml::Value::String(why.to_string());
    table.insert("why-not-importable".into(), why);
}

/// A Markdown table of the objects, for the drift report's pull-request comment.
pub(super) fn render_unmanaged_markdown(objects: &[Unmanaged]) -> String {
    let mut out =
        String::from("| object | provider | ID | made by | serves |\n|---|---|---|---|---|\n");
    for object in objects {
        let _ = writeln!(
            out,
            "| `{}` {} | {} | `{}` | {} | {} |",
            object.address,
            cell(&markdown_text(&object.name)),
            object.provider,
            cell(&object.id),
            cell(&markdown_text(&object.made_by.to_string())),
            cell(&markdown_text(&serves(object)))
        );
    }
    out
}

/// One line per object for the formats that cannot lay a table out (GitHub, JUnit).
pub(super) fn one_line(object: &Unmanaged) -> String {
    format!(
        "{} {} ({} {}) is not managed: made by {}; {}",
        object.address.kind,
        object.name,
        object.provider,
        object.id,
        object.made_by,
        serves(object)
    )
}

#[cfg(test)]
#[path = "discovery_tests.rs"]
mod tests;
