//! Maintenance windows: disruptive changes wait for a window (`--now` sets the clock), the
//! rest of the plan applies at once (exit 4: applied, some held back); the plan says the same
//! beforehand, per change.

use crate::support::Project;

fn config(algorithm: &str, api_members: &str) -> String {
    format!(
        "[provider.cloudscale]\nendpoint = \"embedded\"\n\n\
         [maintenance]\ntimezone = \"Europe/Zurich\"\nwindows = [\"Sat 02:00-05:00\"]\noutside-window = \"minimal\"\ninside-window = \"pool-recreate\"\n\n\
         [load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\nalgorithm = \"{algorithm}\"\n\n\
         [[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n\
         [load-balancer.api]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [{api_members}]\n\n\
         [[load-balancer.api.ports]]\nname = \"grpc\"\nport = 443\nnode-port = 30443\n"
    )
}

const FRIDAY_NOON: &str = "2026-11-27T12:00:00+01:00";
const SATURDAY_0230: &str = "2026-11-28T02:30:00+01:00";
const SATURDAY_0459: &str = "2026-11-28T04:59:00+01:00";

fn applied() -> Project {
    let project = Project::new();
    project.config(&config("round_robin", "\"10.0.0.21\""));
    let out = project.apply(&["--now", FRIDAY_NOON]);
    assert_eq!(out.code, 0, "creating is allowed outside a window: {out:?}");
    // A pool recreation on web, a member added on api.
    project.config(&config("source_ip", "\"10.0.0.21\", \"10.0.0.22\""));
    project
}

fn algorithm(project: &Project) -> serde_json::Value {
    project.world().named("pools", "tcp/http").unwrap()["algorithm"].clone()
}

#[test]
fn outside_a_window_only_the_minimal_change_is_applied() {
    let project = applied();
    let out = project.apply(&["--now", FRIDAY_NOON]);
    assert_eq!(out.code, 4, "applied, and something held back: {out:?}");
    assert!(
        out.stderr.contains(
            "held back: load-balancer.web (pool-recreate): pool-recreate is above what apply may do now (minimal); next window opens Sat 2026-11-28 02:00 Europe/Zurich"
        ),
        "{out:?}"
    );
    assert_eq!(
        algorithm(&project),
        "round_robin",
        "the pool was not recreated"
    );
    assert!(
        project
            .world()
            .named("members", "10.0.0.22:30443")
            .is_some(),
        "the minimal change went through"
    );
}

#[test]
fn inside_a_window_the_disruptive_change_is_applied() {
    let project = applied();
    let out = project.apply(&["--now", SATURDAY_0230]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(algorithm(&project), "source_ip");
}

#[test]
fn a_change_that_would_outlast_the_window_waits_for_the_next() {
    let project = applied();
    let out = project.apply(&["--now", SATURDAY_0459]);
    assert_eq!(out.code, 4, "the member was added, the pool waits: {out:?}");
    assert!(out.stderr.contains("outlast the open window"), "{out:?}");
    assert_eq!(algorithm(&project), "round_robin");
}

#[test]
fn when_only_the_disruptive_change_is_left_nothing_is_applied_and_apply_fails() {
    let project = applied();
    project.config(&config("source_ip", "\"10.0.0.21\""));
    let out = project.apply(&["--now", FRIDAY_NOON]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("held back: load-balancer.web (pool-recreate)"),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("nothing was applied: the one change was held back"),
        "{out:?}"
    );
    assert!(
        !out.stdout.contains("Apply complete"),
        "nothing applied is not an apply complete: {out:?}"
    );
}

/// The plan at `--now` says per change what apply would do then: the same decision apply takes.
#[test]
fn the_plan_says_which_changes_wait_for_which_window() {
    let project = applied();
    let plan = project.plan(&["--now", FRIDAY_NOON]);
    let change = |address: &str| {
        plan["changes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["address"] == address)
            .unwrap()
            .clone()
    };
    assert_eq!(
        change("load-balancer.web")["window"],
        serde_json::json!({
            "now": false,
            "reason": "pool-recreate is above what apply may do now (minimal)",
            "next_window": "2026-11-28T02:00:00+01:00",
        })
    );
    assert!(change("load-balancer.web")["held_back"]
        .as_str()
        .unwrap()
        .contains("next window opens Sat 2026-11-28 02:00 Europe/Zurich"));
    assert_eq!(
        change("load-balancer.api")["window"],
        serde_json::json!({"now": true})
    );
    assert!(change("load-balancer.api").get("held_back").is_none());

    let text = project.run(&["plan", "--now", FRIDAY_NOON]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout.contains(
            "    ! held back: pool-recreate is above what apply may do now (minimal); next window opens Sat 2026-11-28 02:00 Europe/Zurich (in 14 hours)"
        ),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains("! apply will hold back 1 of 2 changes (load-balancer.web) and do the rest."),
        "{text:?}"
    );
    let api = text
        .stdout
        .split("load-balancer.api")
        .nth(1)
        .unwrap_or_default();
    assert!(
        api.contains("    ✓ apply may do it now (the maintenance policy allows it)"),
        "each change of the text plan says whether apply may do it now: {text:?}"
    );

    // Inside the window, nothing waits.
    let inside = project.plan(&["--now", SATURDAY_0230]);
    assert!(inside["changes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["window"]["now"] == true && c.get("held_back").is_none()));
}

#[test]
fn without_a_maintenance_table_the_plan_has_no_window_entries() {
    let project = applied();
    let text = config("source_ip", "\"10.0.0.21\"");
    let start = text.find("[maintenance]").unwrap();
    let end = text.find("[load-balancer.web]").unwrap();
    project.config(&format!("{}{}", &text[..start], &text[end..]));
    let plan = project.plan(&["--now", FRIDAY_NOON]);
    let web = &plan["changes"][1];
    assert_eq!(web["address"], "load-balancer.web", "{plan:#}");
    assert!(web.get("window").is_none(), "{plan:#}");
    assert!(web.get("held_back").is_none(), "{plan:#}");
}

/// The maintenance config with web's flavor changed: a forbidden change (the load balancer is
/// destroyed and made again), done only when named with `--replace load-balancer.web`.
fn larger_web(project: &Project) {
    let text = config("round_robin", "\"10.0.0.21\"").replace(
        "[load-balancer.web]\n",
        "[load-balancer.web]\nflavor = \"lb-large\"\n",
    );
    project.config(&text);
}

fn web_flavor(project: &Project) -> serde_json::Value {
    project.world().named("load_balancers", "web").unwrap()["flavor"].clone()
}

/// `--replace` lifts *forbidden*; the window still decides *when*: outside a window the named
/// replacement is held back like any disruptive change, and the plan says so beforehand.
#[test]
fn a_replacement_named_with_replace_waits_for_a_window() {
    let project = applied();
    larger_web(&project);
    let replace = ["--replace", "load-balancer.web"];

    let text = project.run(&["plan", "--now", FRIDAY_NOON, replace[0], replace[1]]);
    assert!(
        !text.stdout.contains("✓ apply may do it now"),
        "outside a window the plan must not promise the replacement: {text:?}"
    );
    assert!(
        text.stdout.contains(
            "! held back: forbidden, named with --replace: a replacement is done only inside a maintenance window; next window opens Sat 2026-11-28 02:00 Europe/Zurich"
        ),
        "{text:?}"
    );

    let out = project.apply(&["--now", FRIDAY_NOON, replace[0], replace[1]]);
    assert_eq!(
        out.code, 1,
        "nothing else to do, so nothing applied: {out:?}"
    );
    assert!(
        out.stderr
            .contains("held back: load-balancer.web (forbidden)"),
        "{out:?}"
    );
    assert_eq!(web_flavor(&project), "lb-standard", "web was not replaced");

    let inside = project.apply(&["--now", SATURDAY_0230, replace[0], replace[1]]);
    assert_eq!(inside.code, 0, "inside the window it is done: {inside:?}");
    assert_eq!(web_flavor(&project), "lb-large");
}

/// `--now` pretends a time for the windows, but apply changes the cloud at the real one: on a
/// cloud skyplan does not embed, apply refuses a `--now` off the clock before any request that
/// changes something, and says how to preview that time instead; `plan --now` keeps it.
#[test]
fn apply_refuses_a_pretended_time_on_a_cloud_that_is_not_embedded() {
    let cloud = crate::support::served::ServedCloud::start();
    let maintenance = config("round_robin", "\"10.0.0.21\"");
    let resources = &maintenance[maintenance.find("[maintenance]").unwrap()..];
    cloud.configure(resources);

    let plan = cloud.skyplan(&["plan", "--json", "--now", SATURDAY_0230]);
    assert_eq!(plan.code, 0, "plan keeps --now: {plan:?}");

    let out = cloud.skyplan(&["apply", "--auto-approve", "--now", SATURDAY_0230]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("--now 2026-11-28T01:30:00Z is ")
            && out
                .stderr
                .contains("from the clock: apply changes a real cloud at the real time"),
        "the error names the flag: {out:?}"
    );
    assert!(
        out.stderr.contains(" plan --now 2026-11-28T01:30:00Z"),
        "and the way out: {out:?}"
    );
    assert!(
        cloud.sim.list("/load-balancers").is_empty(),
        "nothing was created"
    );
}

/// `plan --out` at `now`, its JSON output, and the saved file as JSON.
fn saved_plan(project: &Project, now: &str) -> (serde_json::Value, serde_json::Value) {
    let file = project.path().join("plan.json");
    let out = project.run(&[
        "plan",
        "--json",
        "--now",
        now,
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let saved = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    (out.json(), saved)
}

fn plan_file(project: &Project) -> String {
    project.path().join("plan.json").display().to_string()
}

/// Each change's address with what apply would do with it: its `window` entry and why it is
/// held back.
fn decisions(plan: &serde_json::Value) -> Vec<(String, serde_json::Value, serde_json::Value)> {
    (plan["changes"].as_array().unwrap().iter())
        .map(|c| {
            let held = c.get("held_back").cloned().unwrap_or_default();
            let window = c.get("window").cloned().unwrap_or_default();
            (c["address"].as_str().unwrap().to_string(), window, held)
        })
        .collect()
}

/// A saved plan keeps the window decisions `plan --out` printed; `show` prints them, and
/// `apply PLANFILE` at the time it was planned holds back exactly those.
#[test]
fn a_saved_plan_keeps_its_window_decisions_and_show_and_apply_agree_with_them() {
    let project = applied();
    let (printed, saved) = saved_plan(&project, FRIDAY_NOON);
    assert_eq!(
        saved["outlook"]["decided_at"], "2026-11-27T11:00:00Z",
        "the file says for when its window decisions were taken: {saved:#}"
    );
    let held: Vec<&str> = (saved["outlook"]["held"].as_array())
        .map(|held| {
            held.iter()
                .map(|h| h["address"].as_str().unwrap())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(held, ["load-balancer.web"], "{saved:#}");

    let shown = project.run(&["show", &plan_file(&project), "--json", "--now", FRIDAY_NOON]);
    assert_eq!(shown.code, 0, "{shown:?}");
    assert_eq!(
        decisions(&shown.json()),
        decisions(&printed),
        "show says what plan --out printed"
    );
    let text = project.run(&["show", &plan_file(&project), "--now", FRIDAY_NOON]);
    assert!(
        text.stdout
            .contains("! apply will hold back 1 of 2 changes (load-balancer.web) and do the rest."),
        "{text:?}"
    );

    let out = project.run(&["apply", &plan_file(&project), "--now", FRIDAY_NOON]);
    assert_eq!(
        out.code, 4,
        "the minimal change applied, web held back: {out:?}"
    );
    assert!(
        out.stderr.contains(
            "held back: load-balancer.web (pool-recreate): pool-recreate is above what apply may do now (minimal)"
        ),
        "{out:?}"
    );
    assert!(out.stderr.contains("held back 1,"), "{out:?}");
    assert_eq!(algorithm(&project), "round_robin");
}

/// Planned outside the window, applied inside it: apply does no more than the reviewed plan
/// said it would — what it held back stays held back, to be planned again.
#[test]
fn what_a_saved_plan_held_back_stays_held_back_when_it_is_applied_in_a_window() {
    let project = applied();
    saved_plan(&project, FRIDAY_NOON);
    let out = project.run(&["apply", &plan_file(&project), "--now", SATURDAY_0230]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr.contains(
            "held back: load-balancer.web (pool-recreate): held back when the plan was made"
        ),
        "{out:?}"
    );
    assert_eq!(
        algorithm(&project),
        "round_robin",
        "the pool was not recreated"
    );

    let shown = project.run(&[
        "show",
        &plan_file(&project),
        "--json",
        "--now",
        SATURDAY_0230,
    ]);
    assert_eq!(shown.code, 0, "{shown:?}");
    let web = decisions(&shown.json())
        .into_iter()
        .find(|(address, ..)| address == "load-balancer.web")
        .unwrap();
    assert!(
        web.2
            .as_str()
            .unwrap_or_default()
            .contains("held back when the plan was made"),
        "show says what apply would do then: {shown:?}"
    );
}

/// Planned inside the window, applied once it has closed: the window is checked again when
/// apply runs, and `show` at that time says the same.
#[test]
fn a_saved_plan_applied_after_its_window_closed_holds_back_what_the_window_no_longer_allows() {
    let project = applied();
    let (printed, _) = saved_plan(&project, SATURDAY_0230);
    assert!(decisions(&printed)
        .iter()
        .all(|(_, _, held)| held.is_null()));
    let shown = project.run(&["show", &plan_file(&project), "--json", "--now", FRIDAY_NOON]);
    assert_eq!(shown.code, 0, "{shown:?}");
    let held: Vec<String> = (decisions(&shown.json()).into_iter())
        .filter(|(_, _, held)| !held.is_null())
        .map(|(address, ..)| address)
        .collect();
    assert_eq!(held, ["load-balancer.web"], "{shown:?}");

    let out = project.run(&["apply", &plan_file(&project), "--now", FRIDAY_NOON]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr.contains("held back: load-balancer.web (pool-recreate): pool-recreate is above what apply may do now (minimal)"),
        "{out:?}"
    );
    assert_eq!(algorithm(&project), "round_robin");
}
