//! `[rollout]`: disruptive changes in waves of at most `max-disrupted`, shown by the plan and
//! run by apply wave after wave; a wave that does not fit the window waits with the later ones.

use crate::support::Project;

const LOAD_BALANCERS: usize = 6;

fn config(algorithm: &str, extra: &str) -> String {
    let mut text = format!("[provider.cloudscale]\nendpoint = \"embedded\"\n\n{extra}\n");
    for i in 1..=LOAD_BALANCERS {
        text.push_str(&format!(
            "[load-balancer.lb{i}]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.1{i}\"]\nalgorithm = \"{algorithm}\"\n\n\
             [[load-balancer.lb{i}.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n\n"
        ));
    }
    text
}

const ROLLOUT: &str = "[rollout]\nmax-disrupted = 2\n";

/// Six load balancers applied, then each with a pool recreation (its algorithm changed).
fn applied(extra: &str) -> Project {
    let project = Project::new();
    project.config(&config("round_robin", extra));
    project.apply_ok();
    project.config(&config("source_ip", extra));
    project
}

fn waves(plan: &serde_json::Value) -> Vec<Vec<String>> {
    let waves = plan["rollout"]["waves"].as_array().expect("rollout.waves");
    (waves.iter())
        .map(|w| {
            let addresses = w["addresses"].as_array().unwrap();
            addresses
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn the_plan_shows_three_waves_of_two_and_apply_runs_them_in_order() {
    let project = applied(ROLLOUT);
    let plan = project.plan(&[]);
    assert_eq!(
        waves(&plan),
        [
            ["load-balancer.lb1", "load-balancer.lb2"],
            ["load-balancer.lb3", "load-balancer.lb4"],
            ["load-balancer.lb5", "load-balancer.lb6"],
        ]
    );
    assert_eq!(plan["rollout"]["max_disrupted"], 2);
    assert_eq!(plan["rollout"]["per"], serde_json::Value::Null);
    assert_eq!(plan["rollout"]["health_timeout_s"], 300);
    let ungated = project.plan(&["--no-health-gate"]);
    assert_eq!(
        ungated["rollout"]["health_timeout_s"],
        serde_json::Value::Null
    );
    let first = &plan["rollout"]["waves"][0];
    assert_eq!(first["fits_window"], true);
    assert_eq!(
        first["estimated_s"],
        serde_json::json!({"min": 60, "max": 120})
    );

    let text = project.run(&["plan"]);
    assert!(
        text.stdout.contains(
            "Rollout: 3 waves of at most 2 disrupted; each change waits up to 300 s to be healthy."
        ),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains("  wave 2: load-balancer.lb3, load-balancer.lb4 ("),
        "{text:?}"
    );

    let out = project.apply(&["-v"]);
    assert_eq!(out.code, 0, "{out:?}");
    let at = |line: &str| {
        out.stderr
            .find(line)
            .unwrap_or_else(|| panic!("`{line}` not in {out:?}"))
    };
    let (one, two, three) = (
        at("wave 1 of 3: load-balancer.lb1, load-balancer.lb2"),
        at("wave 2 of 3: load-balancer.lb3, load-balancer.lb4"),
        at("wave 3 of 3: load-balancer.lb5, load-balancer.lb6"),
    );
    assert!(one < two && two < three, "{out:?}");
    // Nothing of a later wave starts before the wave before it is done.
    assert!(!out.stderr[..two].contains("load-balancer.lb3"), "{out:?}");
    assert_eq!(project.plan(&[])["summary"]["update"], 0);
}

#[test]
fn without_a_rollout_the_plan_has_none_and_a_flag_makes_one() {
    let project = applied("");
    let plan = project.plan(&[]);
    assert!(plan.get("rollout").is_none(), "{plan}");
    let plan = project.plan(&["--max-disrupted", "4"]);
    assert_eq!(
        waves(&plan).iter().map(Vec::len).collect::<Vec<_>>(),
        [4, 2]
    );
}

#[test]
fn a_window_too_short_for_the_second_wave_holds_it_and_the_later_ones_back() {
    let maintenance =
        "[maintenance]\ntimezone = \"Europe/Zurich\"\nwindows = [\"Sat 02:00-05:00\"]\n\n";
    let project = applied(&format!("{maintenance}{ROLLOUT}"));
    // 04:57: three minutes left; the first wave may take two, the second would end at 05:01.
    let now = "2026-11-28T04:57:00+01:00";
    let plan = project.plan(&["--now", now]);
    let fits: Vec<_> = (plan["rollout"]["waves"].as_array().unwrap().iter())
        .map(|w| w["fits_window"].as_bool().unwrap())
        .collect();
    assert_eq!(fits, [true, false, false], "{plan}");
    let out = project.apply(&["--now", now]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr
            .contains("held back: load-balancer.lb3 (pool-recreate): wave 2 of 3 of the rollout"),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("held back: load-balancer.lb6 (pool-recreate): wave 3 of 3"),
        "{out:?}"
    );
    let left = project.plan(&[]);
    assert_eq!(left["summary"]["update"], 4, "lb3 to lb6 are left: {left}");
}

/// cloudscale says where each load balancer is: per zone, the limit applies to each zone.
#[test]
fn per_zone_each_zone_has_its_own_limit() {
    // lb1 and lb2 in rma1, the four others in lpg1.
    let in_two_zones =
        |algorithm| config(algorithm, ROLLOUT).replacen("zone = \"lpg1\"", "zone = \"rma1\"", 2);
    let project = Project::new();
    project.config(&in_two_zones("round_robin"));
    project.apply_ok();
    project.config(&in_two_zones("source_ip"));
    let plan = project.plan(&["--max-disrupted-per", "zone"]);
    assert_eq!(plan["rollout"]["per"], "zone");
    assert_eq!(
        waves(&plan),
        [
            vec![
                "load-balancer.lb1",
                "load-balancer.lb2",
                "load-balancer.lb3",
                "load-balancer.lb4"
            ],
            vec!["load-balancer.lb5", "load-balancer.lb6"],
        ]
    );
    let text = project.run(&["plan", "--max-disrupted-per", "zone"]);
    assert!(
        text.stdout
            .contains("Rollout: 2 waves of at most 2 disrupted (per zone); each change waits up to 300 s to be healthy."),
        "{text:?}"
    );
}
