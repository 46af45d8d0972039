//! Taking over an existing estate, the provider-blind part: what `import --generate-config`
//! refuses before it reads anything, `discover`'s filters, and `drift --unmanaged` noticing a
//! load balancer someone made by hand (each provider's adoption is tested in its folder).

use crate::support::served::ServedCloud;

/// A load balancer made through the API, as an operator would by hand.
fn made_by_hand(cloud: &ServedCloud, name: &str) -> String {
    let body = format!(r#"{{"name": "{name}", "flavor": "lb-standard", "zone": "lpg1"}}"#);
    let made: serde_json::Value =
        serde_json::from_str(&cloud.call("POST", "/load-balancers", Some(&body))).unwrap();
    made["uuid"].as_str().unwrap().to_string()
}

fn project_dir(cloud: &ServedCloud) -> String {
    cloud.project.path().to_str().unwrap().to_string()
}

#[test]
fn an_existing_file_is_never_overwritten() {
    let cloud = ServedCloud::two_applied();
    made_by_hand(&cloud, "by-hand");
    let file = cloud.project.path().join("adopted.toml");
    std::fs::write(&file, "# mine\n").unwrap();
    let out = cloud.skyplan(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("never overwrites"), "{out:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "# mine\n");
}

#[test]
fn a_file_the_config_would_not_read_is_refused_before_anything_is_read() {
    let cloud = ServedCloud::two_applied();
    let elsewhere = tempfile::tempdir().unwrap();
    let file = elsewhere.path().join("adopted.toml");
    let out = cloud.skyplan(&[
        "import",
        "--generate-config",
        file.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("is not read with the config"),
        "{out:?}"
    );
    assert!(!file.exists());
    let not_toml = cloud.project.path().join("adopted.txt");
    let out = cloud.skyplan(&[
        "import",
        "--generate-config",
        not_toml.to_str().unwrap(),
        "--all",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("*.toml"), "{out:?}");
}

#[test]
fn import_arguments_are_checked_with_a_clear_error() {
    let cloud = ServedCloud::two_applied();
    let dir = project_dir(&cloud);
    let file = format!("{dir}/adopted.toml");
    for (args, says) in [
        (vec!["import", "load-balancer.x"], "import takes ADDR ID"),
        (vec!["import", "--generate-config", &file], "ADDR=ID pairs"),
        (
            vec!["import", "--generate-config", &file, "load-balancer.x"],
            "name each object as ADDR=ID",
        ),
        (
            vec!["import", "--generate-config", &file, "load-balancer.x=nope"],
            "no unmanaged object has the ID nope",
        ),
        (vec!["import", "--all"], "--generate-config"),
    ] {
        let out = cloud.skyplan(&args);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(out.stderr.contains(says), "{args:?}: {out:?}");
    }
    assert!(!std::path::Path::new(&file).exists());
}

#[test]
fn discover_filters_are_checked_against_the_config() {
    let cloud = ServedCloud::two_applied();
    let out = cloud.skyplan(&["discover", "--provider", "nope"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("the config configures cloudscale"),
        "{out:?}"
    );
    let out = cloud.skyplan(&["discover", "--cluster", "prod"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("declares no cluster.prod"), "{out:?}");
}

#[test]
fn drift_unmanaged_exits_2_when_someone_makes_a_load_balancer_by_hand() {
    let cloud = ServedCloud::two_applied();
    let out = cloud.skyplan(&["drift", "--unmanaged"]);
    assert_eq!(out.code, 0, "in sync, nothing unmanaged: {out:?}");
    assert!(out.stdout.contains("nothing unmanaged"), "{out:?}");

    let uuid = made_by_hand(&cloud, "by-hand");
    let plain = cloud.skyplan(&["drift"]);
    assert_eq!(
        plain.code, 0,
        "without --unmanaged it is not looked for: {plain:?}"
    );
    let out = cloud.skyplan(&["drift", "--unmanaged"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stdout.contains("? load-balancer.by-hand"), "{out:?}");
    let json = cloud
        .skyplan(&["drift", "--unmanaged", "--format", "json"])
        .json();
    assert_eq!(json["drift"], true);
    assert_eq!(json["summary"]["unmanaged"], 1);
    assert_eq!(json["unmanaged"][0]["id"], uuid.as_str());
    assert_eq!(json["unmanaged"][0]["made_by"]["by"], "unknown");
    let github = cloud.skyplan(&["drift", "--unmanaged", "--format", "github"]);
    assert_eq!(github.code, 2);
    assert!(
        github
            .stdout
            .contains("::warning title=unmanaged%3A load-balancer by-hand::"),
        "{github:?}"
    );
}
