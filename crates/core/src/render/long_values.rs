//! Values in a Markdown table: a short one in its cell, a long one (a CIDR list, a member list)
//! folded into `<details>` below the table instead of widening it — for the plan and the drift
//! report alike.

use std::fmt::Write;

use serde_json::Value;

use super::escape::{cell, code, code_block, html};
use super::text::compact;

/// A value longer than this is shown below the table.
const CELL_LIMIT: usize = 40;

/// Whether either value of a row goes below the table.
pub(super) fn is_long(before: &Value, after: &Value) -> bool {
    [before, after]
        .iter()
        .any(|v| compact(v).chars().count() > CELL_LIMIT)
}

/// The value as code in its cell, or a pointer to where it is shown.
pub(super) fn value_cell(value: &Value) -> String {
    let shown = compact(value);
    if shown.chars().count() > CELL_LIMIT {
        "*(below)*".to_string()
    } else {
        cell(&code(&shown))
    }
}

/// `<details>` with both values as pretty JSON: `what` names the pair (`before and after`).
pub(super) fn fold(out: &mut String, path: &str, what: &str, values: [(&str, &Value); 2]) {
    let _ = writeln!(
        out,
        "<details><summary><code>{}</code>: {what}</summary>\n",
        html(path)
    );
    for (label, value) in values {
        let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
        let _ = writeln!(out, "{label}:\n\n{}\n", code_block("json", &pretty));
    }
    let _ = writeln!(out, "</details>\n");
}
