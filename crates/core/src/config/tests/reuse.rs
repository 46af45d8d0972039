//! Variables, defaults and for-each through the whole stage: what the tables become, and each
//! error at the place it comes from.

use super::*;
use crate::model::Address;

const PROVIDER: &str = "[provider.test]\nendpoint = \"embedded\"\n";

fn config(text: &str) -> Config {
    load_str(&format!("{PROVIDER}{text}")).unwrap_or_else(|e| panic!("{:#?}", e.lines()))
}

/// The errors of `text` after the provider's two lines: line numbers start at 3.
fn errors_of(text: &str) -> Vec<String> {
    errors(&format!("{PROVIDER}{text}"))
}

/// Each resource's address and its (size, label).
fn specs(config: &Config) -> Vec<(String, u32, String)> {
    (config.resources.iter())
        .map(|r| {
            let (size, label) = match r.spec.get::<(u32, String)>() {
                Some((size, label)) => (*size, label.clone()),
                None => (*r.spec.get::<u32>().unwrap(), String::new()),
            };
            (r.address.to_string(), size, label)
        })
        .collect()
}

fn given(assignments: &[(&str, &str)]) -> Variables {
    Variables {
        assignments: (assignments.iter())
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..Variables::default()
    }
}

#[test]
fn a_variable_is_expanded_in_string_values_with_its_value_or_the_given_one() {
    let text = "[variables]\nenv = \"staging\"\n\
                [load-balancer.web]\nprovider = \"test\"\nlabel = \"web-${var.env}, $${literal}\"\n";
    let specs_of = |variables: &Variables| {
        let config = load_given(&[("a.toml", &format!("{PROVIDER}{text}"))], variables);
        specs(&config.unwrap())
    };
    let label = |variables| specs_of(&variables)[0].2.clone();
    assert_eq!(label(Variables::default()), "web-staging, ${literal}");
    let environment = Variables::from_environment([
        ("SKYPLAN_VAR_env".to_string(), "from-env".to_string()),
        ("SKYPLAN_VAR_ENV".to_string(), "other-case".to_string()),
        ("HOME".to_string(), "/root".to_string()),
    ]);
    assert_eq!(label(environment.clone()), "web-from-env, ${literal}");
    let dir = tempfile::tempdir().unwrap();
    let var_file = dir.path().join("prod.toml");
    std::fs::write(&var_file, "env = \"from-file\"\n").unwrap();
    let with_file = Variables {
        files: vec![var_file],
        ..environment
    };
    assert_eq!(label(with_file.clone()), "web-from-file, ${literal}");
    let with_var = Variables {
        assignments: vec![("env".into(), "from-var".into())],
        ..with_file
    };
    assert_eq!(label(with_var), "web-from-var, ${literal}");
}

#[test]
fn a_variable_may_be_given_without_a_value_in_the_config() {
    let text =
        format!("{PROVIDER}[load-balancer.web]\nprovider = \"test\"\nlabel = \"${{var.env}}\"\n");
    let config = load_given(&[("a.toml", &text)], &given(&[("env", "prod")])).unwrap();
    assert_eq!(specs(&config)[0].2, "prod");
}

#[test]
fn variable_errors_are_at_the_reference_and_the_definition() {
    let lines = errors_of(
        "[variables]\nunused = \"x\"\nnumber = 3\n\
         [load-balancer.web]\nprovider = \"test\"\nlabel = \"a-${var.nope}\"\nccm = \"${var.open\"\n",
    );
    assert_eq!(
        lines,
        [
            "a.toml:4:1: the variable `unused` is never used",
            "a.toml:5:10: a variable's value is a string",
            "a.toml:8:12: the variable `nope` has no value",
            "a.toml:9:7: `${` is not closed by `}`",
        ]
    );
}

#[test]
fn an_unknown_given_variable_is_an_error_naming_it() {
    let text = format!("{PROVIDER}[load-balancer.web]\nprovider = \"test\"\n");
    let error = load_given(&[("a.toml", &text)], &given(&[("typo", "x")])).unwrap_err();
    assert_eq!(
        error.lines(),
        ["--var: `typo` is not a variable of the config"]
    );
    let unknown_in_env = Variables::from_environment([("SKYPLAN_VAR_other".into(), "x".into())]);
    assert!(load_given(&[("a.toml", &text)], &unknown_in_env).is_ok());
}

#[test]
fn a_credential_never_comes_from_a_variable() {
    let text =
        "[variables]\ns = \"x\"\n[provider.test]\nendpoint = \"embedded\"\nsecret = \"${var.s}\"\n";
    let error = load_str(text).unwrap_err();
    let problem = &error.problems()[0];
    assert_eq!(
        error.lines(),
        ["a.toml:5:10: `secret` is a credential: it never comes from a variable"]
    );
    assert_eq!(
        problem.help_text(),
        Some("it comes from the environment variable TEST_SECRET")
    );
}

#[test]
fn defaults_are_inherited_key_by_key_unless_the_table_sets_them() {
    let config = config(
        "[defaults.load-balancer.test]\nsize = 3\nlabel = \"from-defaults\"\n\
         [load-balancer.a]\nprovider = \"test\"\n\
         [load-balancer.b]\nprovider = \"test\"\nsize = 5\n\
         [cluster.c]\nprovider = \"test\"\n",
    );
    assert_eq!(
        specs(&config),
        [
            ("cluster.c".into(), 1, String::new()),
            ("load-balancer.a".into(), 3, "from-defaults".into()),
            ("load-balancer.b".into(), 5, "from-defaults".into()),
        ]
    );
}

#[test]
fn a_key_defaults_cannot_give_is_an_error_at_the_defaults_once() {
    let lines = errors_of(
        "[defaults.load-balancer.test]\nbogus = 1\nprovider = \"test\"\n\
         [defaults.load-balancer.nope]\nsize = 1\n[defaults.widget]\n\
         [load-balancer.a]\nprovider = \"test\"\n[load-balancer.b]\nprovider = \"test\"\n",
    );
    assert_eq!(
        lines,
        [
            "a.toml:4:1: `bogus` is not a key of these tables",
            "a.toml:5:1: `provider` cannot be a default",
            "a.toml:6:25: `nope` is no provider of load-balancer tables",
            "a.toml:8:11: `widget` is no kind of resource",
        ]
    );
}

#[test]
fn a_bad_inherited_value_points_at_the_defaults_in_their_file_and_names_the_resource() {
    let defaults = "[defaults.load-balancer.test]\nsize = -1\n";
    let resources = format!("{PROVIDER}[load-balancer.a]\nprovider = \"test\"\n");
    let error = load_files(&[("a.toml", &resources), ("defaults.toml", defaults)]).unwrap_err();
    assert_eq!(
        error.lines(),
        ["defaults.toml:2:8: -1 is not a size (in load-balancer.a, which inherits it)"]
    );
}

#[test]
fn for_each_makes_one_resource_per_item_with_its_key_and_value() {
    let config = config(
        "[load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a\", \"b\"]\nlabel = \"${each.key}=${each.value}\"\n\
         [load-balancer.api]\nprovider = \"test\"\n\
         for-each = { x = { size = 2, zone = \"lpg1\" }, y = { size = 4, zone = \"rma1\" } }\n\
         size = \"${each.value.size}\"\nlabel = \"api-${each.value.zone}\"\n\
         [load-balancer.none]\nprovider = \"test\"\nfor-each = []\n",
    );
    assert_eq!(
        specs(&config),
        [
            (r#"load-balancer.api["x"]"#.into(), 2, "api-lpg1".into()),
            (r#"load-balancer.api["y"]"#.into(), 4, "api-rma1".into()),
            (r#"load-balancer.web["a"]"#.into(), 1, "a=a".into()),
            (r#"load-balancer.web["b"]"#.into(), 1, "b=b".into()),
        ]
    );
    let instance: Address = r#"load-balancer.web["b"]"#.parse().unwrap();
    assert!(config.resource(&instance).is_some());
}

#[test]
fn each_outside_a_for_each_and_a_missing_field_are_errors_at_the_reference() {
    let lines = errors_of(
        "[load-balancer.web]\nprovider = \"test\"\nlabel = \"${each.key}\"\n\
         [load-balancer.api]\nprovider = \"test\"\nfor-each = { x = {} }\nlabel = \"${each.value.zone}\"\n",
    );
    assert_eq!(
        lines,
        [
            "a.toml:5:10: `${each.key}` is outside a table with for-each",
            "a.toml:9:10: the item `x` of for-each has no `zone`",
        ]
    );
}

#[test]
fn an_instance_whose_cloud_name_is_another_tables_is_an_error() {
    let lines = errors_of(
        "[load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a\"]\n\
         [load-balancer.web-a]\nprovider = \"test\"\n",
    );
    assert_eq!(
        lines,
        ["a.toml:3:16: load-balancer.web[\"a\"] would have the cloud name `web-a` of load-balancer.web-a"]
    );
}

#[test]
fn defaults_may_refer_to_the_item_of_each_table_that_inherits_them() {
    let config = config(
        "[defaults.load-balancer.test]\nlabel = \"lb-${each.key}\"\n\
         [load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a\"]\n",
    );
    assert_eq!(specs(&config)[0].2, "lb-a");
}

#[test]
fn ignore_changes_may_be_a_default() {
    let config = config(
        "[defaults.load-balancer.test]\nignore-changes = [\"size\"]\n\
         [load-balancer.a]\nprovider = \"test\"\n",
    );
    let ignored = &config.resources[0].origin.ignore_changes;
    assert_eq!(ignored[0].path, "size");
    assert_eq!(ignored[0].location.line, 4, "where the default writes it");
}

#[test]
fn variables_that_are_not_a_table_are_refused_where_they_are_written() {
    let lines = errors_of("variables = 3\n");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("a.toml:3:"), "{lines:?}");
}

#[test]
fn instances_of_two_tables_with_one_cloud_name_are_an_error() {
    let lines = errors_of(
        "[load-balancer.web]\nprovider = \"test\"\nfor-each = [\"a-x\"]\n\
         [load-balancer.web-a]\nprovider = \"test\"\nfor-each = [\"x\"]\n",
    );
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("would have the cloud name `web-a-x` of load-balancer.web"),
        "{lines:?}"
    );
}

#[test]
fn a_resource_that_is_not_a_table_is_refused_as_written() {
    let lines = errors_of("[load-balancer]\nweb = 3\n");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("a.toml:4:7: invalid type: integer"),
        "{lines:?}"
    );
}

#[test]
fn a_var_file_s_errors_are_at_their_place_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let var_file = dir.path().join("env.vars");
    std::fs::write(&var_file, "env = \"prod\"\nnope = \"x\"\nsize = 3\n").unwrap();
    let text =
        format!("{PROVIDER}[load-balancer.web]\nprovider = \"test\"\nlabel = \"${{var.env}}\"\n");
    let variables = Variables {
        files: vec![var_file.clone(), dir.path().join("missing.vars")],
        ..Variables::default()
    };
    let error = load_given(&[("a.toml", &text)], &variables).unwrap_err();
    let shown = var_file.display();
    let missing = dir.path().join("missing.vars");
    let missing = missing.display();
    assert_eq!(
        error.lines(),
        [
            format!("{shown}:2:1: `nope` is not a variable of the config"),
            format!("{shown}:3:8: a variable's value is a string"),
            format!(
                "{missing}: cannot read the variable file: No such file or directory (os error 2)"
            ),
        ]
    );
}
