use super::super::fixture::reviewed;
use super::*;

#[test]
fn plan_comment() {
    insta::assert_snapshot!(render_plan_markdown(&reviewed()));
}

#[test]
fn the_table_has_a_row_per_change_with_its_window_fit() {
    let out = render_plan_markdown(&reviewed());
    let row = |address: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("| `{address}`")))
            .unwrap_or_else(|| panic!("no row for {address}:\n{out}"))
            .to_string()
    };
    assert_eq!(
        row("load-balancer.api"),
        "| `load-balancer.api` | create | **none** | — | now |"
    );
    assert!(row("load-balancer.web").ends_with(
        "| pool-recreate is above what apply may do now (minimal); next window opens Sat 2026-11-28 02:00 (+01:00) |"
    ));
    assert!(
        row("load-balancer.shop").ends_with("| — |"),
        "no policy consulted"
    );
    assert!(
        !out.contains("| `load-balancer.docs`"),
        "a no-op has no row"
    );
    assert!(out.contains("Unchanged: `load-balancer.docs`."));
    assert_eq!(
        out.matches("<details><summary><code>load-balancer.")
            .count(),
        3
    );
}

#[test]
fn values_and_reasons_cannot_break_the_table_or_inject_markup() {
    let mut view = reviewed();
    let web = view
        .changes
        .iter_mut()
        .find(|c| c.address == "load-balancer.web")
        .unwrap();
    web.address = "load-balancer.a|b`c".to_string();
    web.attributes[0].reason = "<script>alert(1)</script> | *bold* `tick`".to_string();
    web.attributes[0].after = serde_json::json!("x|y`z");
    let out = render_plan_markdown(&view);
    assert!(out.contains("| ``load-balancer.a\\|b`c`` |"), "{out}");
    assert!(out.contains("<code>load-balancer.a|b`c</code>"), "{out}");
    assert!(
        out.contains("&lt;script&gt;alert(1)&lt;/script&gt; \\| \\*bold\\* \\`tick\\`"),
        "{out}"
    );
    assert!(out.contains("→ ``\"x\\|y`z\"`` |"), "{out}");
    assert!(!out.contains("<script>"));
}

#[test]
fn a_long_plan_loses_whole_details_from_the_end_with_a_note() {
    let view = reviewed();
    let full = render_plan_markdown(&view);
    let limit = full.len() - 10;
    let cut = render_plan_markdown_within(&view, limit);
    assert!(cut.len() <= limit, "{} > {limit}", cut.len());
    assert!(
        cut.contains("the details of 1 of 3 changed resources are left out"),
        "{cut}"
    );
    assert_eq!(
        cut.matches("<details><summary><code>load-balancer.")
            .count(),
        2
    );
    assert_eq!(
        cut.matches("<details>").count(),
        cut.matches("</details>").count()
    );
    assert!(
        !cut.contains("<code>load-balancer.web</code>"),
        "the last one is cut"
    );
    assert!(
        cut.contains("| `load-balancer.web` |"),
        "the table stays whole"
    );
}

#[test]
fn a_plan_too_long_for_its_table_loses_rows_too() {
    let view = reviewed();
    let full = render_plan_markdown(&view);
    let head_and_two_rows = full.find("| `load-balancer.web`").unwrap();
    let cut = render_plan_markdown_within(&view, head_and_two_rows + 300);
    assert!(cut.len() <= head_and_two_rows + 300, "{cut}");
    assert!(!cut.contains("<details>"), "{cut}");
    assert!(cut.contains("and 1 of 3 table rows are left out"), "{cut}");
    assert!(cut.contains("| `load-balancer.shop` |"), "{cut}");
}

#[test]
fn no_changes_is_said_in_one_line() {
    let mut view = reviewed();
    view.changes.retain(|c| c.action == Action::NoOp);
    let out = render_plan_markdown(&view);
    assert!(out.starts_with("## ✅ skyplan plan: no changes\n"), "{out}");
    assert!(out.contains("(1 resource)"), "{out}");
    assert!(!out.contains("| resource |"), "{out}");
}

/// The pull-request workflow example parses as YAML and wires what the comment relies on.
#[test]
fn ci_plan_workflow_example() {
    use serde_json::{json, Value};
    let text = include_str!("../../../../examples/ci/plan.yml");
    let workflow: serde_norway::Value = serde_norway::from_str(text).unwrap();
    let workflow: Value = serde_json::to_value(workflow).unwrap();
    assert!(workflow["on"].get("pull_request").is_some());
    assert_eq!(workflow["permissions"]["pull-requests"], json!("write"));
    let job = &workflow["jobs"]["plan"];
    assert_eq!(
        job["env"]["CLOUDSCALE_API_TOKEN"],
        json!("${{ secrets.CLOUDSCALE_API_TOKEN }}")
    );
    assert_eq!(
        text.matches("secrets.").count(),
        1,
        "no secret but the cloud's token"
    );
    let steps = job["steps"].as_array().unwrap();
    let step = |needle: &str| {
        steps
            .iter()
            .find(|s| s.to_string().contains(needle))
            .unwrap_or_else(|| panic!("no step with {needle}"))
    };
    step("actions/checkout@");
    step("--format github");
    let plan = step("--format markdown");
    let post = step("gh pr comment");
    assert!(post.to_string().contains("--edit-last"), "{post}");
    assert!(post.to_string().contains("GITHUB_STEP_SUMMARY"), "{post}");
    assert_eq!(post["env"]["GH_TOKEN"], json!("${{ github.token }}"));
    assert_eq!(
        post["if"],
        json!(format!(
            "always() && steps.{}.outcome == 'success'",
            plan["id"].as_str().unwrap()
        ))
    );
}

/// What else a reviewer must see in a change's details: the controller's effects under the
/// attribute that causes them (an unknown value in words), what ignore-changes left out, and
/// why apply holds a change back that is not forbidden.
#[test]
fn details_show_effects_ignored_attributes_and_holds() {
    use crate::plan::{unknown, Effect};
    let mut view = reviewed();
    let web = view
        .changes
        .iter_mut()
        .find(|c| c.address == "load-balancer.web")
        .unwrap();
    web.attributes[0].effects.push(Effect {
        path: "ports.http.monitor-port".into(),
        before: serde_json::json!([30000]),
        after: serde_json::json!([unknown("allocated by the apiserver")]),
        impact: Impact::Minimal,
        reason: "members are recreated".into(),
    });
    web.ignored.push(super::super::view::IgnoredView {
        path: "allowed-cidrs".into(),
        before: serde_json::json!(["192.0.2.0/24"]),
        after: serde_json::json!([]),
    });
    web.held_back = Some("excluded with --exclude".into());
    let out = render_plan_markdown(&view);
    assert!(
        out.contains(
            "| ↳ `ports.http.monitor-port` | `[30000]` → `[(allocated by the apiserver)]` | **minimal** | members are recreated |"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "Ignored (`ignore-changes`): `allowed-cidrs`: the cloud has `[\"192.0.2.0/24\"]`, the config says `[]`."
        ),
        "{out}"
    );
    assert!(
        out.contains("> 🕒 apply holds this back: excluded with --exclude."),
        "{out}"
    );
}
