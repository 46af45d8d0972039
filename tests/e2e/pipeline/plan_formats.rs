//! `plan --format markdown|github|html` on the quickstart, as a reviewer gets them: the
//! pull-request comment (its table, its details, the cut at GitHub's 65,536-character limit on
//! a large config), the annotations (on the config's lines, by the path from the repository
//! root wherever skyplan runs — `drift --format github` too) and the HTML report, opened in a
//! real headless Chromium.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{needs, run, Output, Project};

const QUICKSTART: &str = "examples/quickstart";

/// The quickstart as it sits in the repository (`support::quickstart`), optionally with a
/// `.git` directory at the project's root.
fn quickstart(with_git: bool) -> Project {
    let (project, _) = crate::support::quickstart();
    if with_git {
        std::fs::create_dir(project.path().join(".git")).unwrap();
    }
    project
}

/// skyplan run in `dir` (relative to the project) with `-c config`.
fn run_in(project: &Project, dir: &str, config: &str, args: &[&str]) -> Output {
    let mut command = project.command_with_config(Path::new(config), args);
    run(command.current_dir(project.path().join(dir)))
}

fn plan_in_format(project: &Project, format: &str) -> Output {
    let out = run_in(project, "", QUICKSTART, &["plan", "--format", format]);
    assert_eq!(out.code, 0, "{out:?}");
    out
}

/// The JSON plan's changes: (address, action, impact).
fn changes(project: &Project) -> Vec<(String, String, String)> {
    let json = plan_in_format(project, "json").json();
    let field = |c: &Value, f: &str| c[f].as_str().unwrap().to_string();
    json["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (field(c, "address"), field(c, "action"), field(c, "impact")))
        .collect()
}

#[test]
fn markdown_has_a_row_and_details_per_change() {
    let project = quickstart(false);
    let changes = changes(&project);
    let out = plan_in_format(&project, "markdown");
    let md = &out.stdout;
    assert!(
        md.starts_with("## ⛔ skyplan plan: 6 changes, impact forbidden\n"),
        "{md}"
    );
    assert!(
        md.contains("| resource | action | class | downtime | window |"),
        "{md}"
    );
    for (address, action, impact) in changes.iter().filter(|c| c.1 != "no-op") {
        let row = md
            .lines()
            .find(|l| l.starts_with(&format!("| `{address}` |")))
            .unwrap_or_else(|| panic!("no row for {address}:\n{md}"));
        assert!(
            row.contains(&format!("| {action} | **{impact}** |")),
            "{row}"
        );
        assert!(
            md.contains(&format!("<details><summary><code>{address}</code>")),
            "no details for {address}:\n{md}"
        );
    }
    assert!(md.contains("Unchanged: `cluster.prod`."), "{md}");
    assert!(md.contains("| `flavor` | `\"lb-standard\"` → `\"lb-large\"` | **forbidden**"));
    assert!(md.contains("name it with `--replace load-balancer.shop` to do it anyway"));
    // The controller's operation holds `<new node port>`: escaped, not an HTML tag.
    assert!(
        md.contains("create member 10.0.0.1:&lt;new node port&gt;"),
        "{md}"
    );
    assert!(!md.contains("✂️"), "nothing cut: {} bytes", md.len());
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// 400 new load balancers: far more than one comment holds. Details are cut from the end, the
/// table stays whole, and a note says how many were cut.
/// The README shows the quickstart's comment as the binary prints it, not as someone once
/// wrote it down.
#[test]
fn the_readme_shows_the_quickstart_comment_as_printed() {
    let project = quickstart(true);
    let args = [
        "plan",
        "--format",
        "markdown",
        "--now",
        "2026-11-27T12:00:00+01:00",
    ];
    let out = run_in(&project, "", QUICKSTART, &args);
    assert_eq!(out.code, 0, "{out:?}");
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let fence = "````markdown\n";
    let start = readme.find(fence).expect("the README's markdown block") + fence.len();
    let block = &readme[start..start + readme[start..].find("\n````").unwrap()];
    assert!(
        readme.contains("--now 2026-11-27T12:00:00+01:00` prints it"),
        "the README names the command"
    );
    assert_eq!(
        block,
        out.stdout.trim_end(),
        "regenerate the README's block"
    );
}

#[test]
fn markdown_of_a_large_plan_stays_within_a_comment() {
    const COUNT: usize = 400;
    let project = Project::new();
    let mut config = String::from("[provider.cloudscale]\nendpoint = \"embedded\"\n");
    for i in 0..COUNT {
        config.push_str(&format!(
            "\n[load-balancer.web-{i:03}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\n\
             members = [\"10.0.0.{}\", \"10.0.0.{}\"]\n\n\
             [[load-balancer.web-{i:03}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n",
            i % 120 + 10,
            i % 120 + 130
        ));
    }
    project.config(&config);
    let out = project.run(&["plan", "--format", "markdown"]);
    assert_eq!(out.code, 0, "{out:?}");
    let md = &out.stdout;
    assert!(md.len() <= 65_536, "{} bytes", md.len());
    assert!(md.chars().count() <= 65_536);
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| `load-balancer.web-"))
        .count();
    assert_eq!(rows, COUNT, "the table stays whole");
    let details = md
        .matches("<details><summary><code>load-balancer.web-")
        .count();
    assert!(details > 10 && details < COUNT, "{details} details kept");
    let note = format!(
        "the details of {} of {COUNT} changed resources are left out",
        COUNT - details
    );
    assert!(
        md.contains(&note),
        "no note `{note}` in the comment's end: {}",
        tail(md)
    );
    // Whole blocks only, the first ones kept.
    assert_eq!(
        md.matches("<details>").count(),
        md.matches("</details>").count()
    );
    assert!(md.contains("<details><summary><code>load-balancer.web-000</code>"));
    assert!(!md.contains("<details><summary><code>load-balancer.web-399</code>"));
}

fn tail(s: &str) -> &str {
    &s[s.len().saturating_sub(400)..]
}

/// The `file=` of every annotation line.
fn annotated_files(out: &Output) -> Vec<String> {
    out.stdout
        .lines()
        .filter_map(|l| l.split_once("file=")?.1.split(',').next())
        .map(String::from)
        .collect()
}

#[test]
fn github_annotations_point_at_the_config_lines_from_the_repository_root() {
    let project = quickstart(true);
    let config = project.path().join(QUICKSTART).join("skyplan.toml");
    let line_of = |needle: &str| {
        let text = std::fs::read_to_string(&config).unwrap();
        1 + text.lines().position(|l| l.starts_with(needle)).unwrap()
    };
    for (dir, config) in [
        ("", QUICKSTART),
        (QUICKSTART, "."),
        ("examples", "quickstart"),
    ] {
        let out = run_in(&project, dir, config, &["plan", "--format", "github"]);
        assert_eq!(out.code, 0, "{out:?}");
        let files = annotated_files(&out);
        assert!(!files.is_empty(), "{out:?}");
        assert!(
            files
                .iter()
                .all(|f| f == "examples/quickstart/skyplan.toml"),
            "run in {dir:?}: {files:?}"
        );
        let lines: Vec<&str> = out.stdout.lines().collect();
        let flavor = lines.iter().find(|l| l.contains("::flavor:")).unwrap();
        assert!(
            flavor.starts_with(&format!(
                "::error file=examples/quickstart/skyplan.toml,line={},col=1,title=load-balancer.shop",
                line_of("flavor = ")
            )),
            "forbidden, at its key's line: {flavor}"
        );
        let port = lines
            .iter()
            .find(|l| l.contains("title=load-balancer.store "))
            .unwrap();
        assert!(
            port.starts_with(&format!(
                "::warning file=examples/quickstart/skyplan.toml,line={},col=1,",
                line_of("name = \"web\"")
            )),
            "pool-recreate, at the port's name: {port}"
        );
        let docs = lines.iter().find(|l| l.contains("::name:")).unwrap();
        assert!(docs.starts_with("::notice "), "{docs}");
        assert!(lines
            .last()
            .unwrap()
            .starts_with("::notice title=skyplan plan::Plan: "));
    }
}

/// Each attribute's annotation sits on the key that sets it in
/// examples/quickstart/skyplan.toml, at the key's column: nested in an inline table, in an
/// element of `[[…ports]]`, in a node policy (planned per node); a list, a key of its own.
#[test]
fn github_annotations_point_at_each_attributes_own_key() {
    let project = quickstart(true);
    let out = run_in(&project, "", QUICKSTART, &["plan", "--format", "github"]);
    assert_eq!(out.code, 0, "{out:?}");
    let place = |title: &str, path: &str| {
        let needle = format!("title={title} ");
        let line = (out.stdout.lines())
            .find(|l| l.contains(&needle) && l.contains(&format!("::{path}: ")))
            .unwrap_or_else(|| panic!("no {path} of {title} in {}", out.stdout));
        let (_, at) = line.split_once(",line=").unwrap();
        let (line, rest) = at.split_once(",col=").unwrap();
        let column = rest.split(',').next().unwrap();
        (
            line.parse::<usize>().unwrap(),
            column.parse::<usize>().unwrap(),
        )
    };
    let expected = [
        ("load-balancer.hello", "floating-ips", (31, 1)),
        ("load-balancer.hello", "allowed-cidrs", (32, 1)),
        (
            "load-balancer.hello",
            "timeouts.member-connect-ms",
            (33, 14),
        ),
        ("load-balancer.hello", "ports.http.name", (36, 1)),
        ("load-balancer.docs", "name", (42, 1)),
        ("load-balancer.docs", "health-monitor.delay-s", (45, 20)),
        ("load-balancer.shop", "flavor", (55, 1)),
        ("load-balancer.store", "ports.web.name", (86, 1)),
        ("nodes.web", "nodes.node-1.labels.tier", (92, 12)),
        ("nodes.web", "nodes.node-3.labels.tier", (92, 12)),
        (
            "nodes.web",
            "nodes.node-2.taints.dedicated:NoSchedule",
            (93, 1),
        ),
    ];
    for (title, path, at) in expected {
        assert_eq!(place(title, path), at, "{title} {path}");
    }
}

#[test]
fn drift_annotations_name_the_file_from_the_repository_root_too() {
    let project = quickstart(true);
    for (dir, config) in [("", QUICKSTART), (QUICKSTART, ".")] {
        let out = run_in(&project, dir, config, &["drift", "--format", "github"]);
        assert_eq!(out.code, 2, "{out:?}");
        let files = annotated_files(&out);
        assert!(!files.is_empty(), "{out:?}");
        assert!(
            files
                .iter()
                .all(|f| f == "examples/quickstart/skyplan.toml"),
            "run in {dir:?}: {files:?}"
        );
    }
}

#[test]
fn without_a_repository_annotations_name_the_file_from_the_current_directory() {
    let project = quickstart(false);
    let out = run_in(&project, QUICKSTART, ".", &["plan", "--format", "github"]);
    assert!(
        annotated_files(&out).iter().all(|f| f == "skyplan.toml"),
        "{out:?}"
    );
    let out = run_in(&project, "", QUICKSTART, &["drift", "--format", "github"]);
    let files = annotated_files(&out);
    assert!(
        !files.is_empty()
            && files
                .iter()
                .all(|f| f == "examples/quickstart/skyplan.toml")
    );
}

#[test]
fn json_and_format_together_are_a_usage_error() {
    let project = quickstart(false);
    let out = run_in(
        &project,
        "",
        QUICKSTART,
        &["plan", "--json", "--format", "markdown"],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("cannot be used with"), "{out:?}");
    let json = plan_in_format(&project, "json").json();
    let flag = run_in(&project, "", QUICKSTART, &["plan", "--json"]).json();
    assert_eq!(json["changes"], flag["changes"], "--json is --format json");
}

/// Each class's colour in the graph, as the HTML report's legend gives it.
fn colour_of(impact: &str) -> &'static str {
    match impact {
        "none" => "#a3d9a5",
        "minimal" => "#8ec5ff",
        "pool-recreate" => "#ffc46b",
        "forbidden" => "#ff7b72",
        other => panic!("no class {other}"),
    }
}

/// The graph's nodes in an HTML document: (address, data-impact, class, fill of its box).
fn graph_nodes(document: &str) -> Vec<(String, String, String, String)> {
    let svg_start = document.find("<svg").expect("an <svg> element");
    let svg = &document[svg_start..document[svg_start..].find("</svg>").unwrap() + svg_start];
    svg.split("<g ")
        .skip(1)
        .filter(|g| attribute(g, "data-address").is_some())
        .map(|g| {
            let rect = &g[g.find("<rect").expect("a box per node")..];
            (
                attribute(g, "data-address").unwrap(),
                attribute(g, "data-impact").unwrap(),
                attribute(g, "class").unwrap(),
                attribute(rect, "fill").unwrap(),
            )
        })
        .collect()
}

/// The value of the first `name="…"` in `tag`.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let tag = format!(" {}", &tag[..tag.find('>').unwrap_or(tag.len())]);
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[start..].find('"')? + start;
    Some(tag[start..end].to_string())
}

fn check_graph(document: &str, changes: &[(String, String, String)]) {
    let mut nodes = graph_nodes(document);
    nodes.sort();
    assert_eq!(
        nodes.len(),
        changes.len(),
        "one node per resource: {nodes:#?}"
    );
    for ((address, _, impact), (node, data_impact, class, fill)) in changes.iter().zip(&nodes) {
        assert_eq!(address, node);
        assert_eq!(impact, data_impact, "{address}");
        assert_eq!(class, &format!("node impact-{impact}"), "{address}");
        assert_eq!(fill, colour_of(impact), "{address}");
    }
}

#[test]
fn html_is_one_self_contained_page_with_the_graph_and_the_details() {
    let project = quickstart(false);
    let changes = changes(&project);
    let page = plan_in_format(&project, "html").stdout;
    assert!(page.starts_with("<!DOCTYPE html>"), "{page}");
    for outside in ["<script", "<link", " src=", "@import", "https://"] {
        assert!(!page.contains(outside), "{outside} in the page");
    }
    check_graph(&page, &changes);
    assert!(
        changes.iter().any(|c| c.1 == "no-op"),
        "the no-op is drawn too"
    );
    for (from, to) in [
        ("load-balancer.store", "cluster.prod"),
        ("nodes.web", "cluster.prod"),
    ] {
        assert!(
            page.contains(&format!("data-from=\"{from}\" data-to=\"{to}\"")),
            "no edge {from} → {to}"
        );
    }
    let details = page.matches("<details data-address=").count();
    assert_eq!(details, changes.iter().filter(|c| c.1 != "no-op").count());
    assert!(page.contains("create member 10.0.0.1:&lt;new node port&gt;"));
}

/// Written where Chromium may read it, and read back as Chromium's DOM after rendering.
fn rendered_dom(page: &str, dir: &Path) -> String {
    let file: PathBuf = dir.join("plan.html");
    std::fs::write(&file, page).unwrap();
    let chromium = needs::chromium();
    let out = run(Command::new(chromium)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--dump-dom",
        ])
        .arg(format!("file://{}", file.display())));
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout
}

#[test]
#[ignore = "needs chromium (Debian package chromium)"]
fn html_renders_in_chromium_with_one_node_per_resource_in_its_class_colour() {
    let project = quickstart(false);
    let changes = changes(&project);
    let page = plan_in_format(&project, "html").stdout;
    let dom = rendered_dom(&page, project.path());
    // Chromium's serialization of what it parsed: the graph is an SVG element in the DOM, and
    // every node is there with its class and colour.
    assert!(
        dom.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"dependency-graph\""),
        "{dom}"
    );
    check_graph(&dom, &changes);
    assert_eq!(
        dom.matches("<details data-address=").count(),
        changes.iter().filter(|c| c.1 != "no-op").count()
    );
}
