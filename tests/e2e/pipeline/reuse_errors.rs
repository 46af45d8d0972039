//! Every error of config reuse — `[defaults…]`, `[variables]`, `${…}`, `for-each` — through the
//! real binary: `validate` exits 1 naming the problem at the file:line:col that causes it.

use crate::support::Project;

const PROVIDER: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n";
const PORT: &str = "\n[[load-balancer.web.ports]]\nname = \"http\"\nport = 80\nnode-port = 30080\n";

/// `[load-balancer.web]` (on line 4, after the provider) with `keys` before its members.
fn web(keys: &str) -> String {
    format!(
        "{PROVIDER}[load-balancer.web]\nprovider = \"cloudscale\"\n{keys}\nmembers = [\"10.0.0.11\"]\n{PORT}"
    )
}

/// `validate` of the files `(name, text)` in one directory, with `args`: exit 1, and the
/// message at its place.
fn refused(files: &[(&str, &str)], args: &[&str], place: &str, message: &str) {
    let project = Project::new();
    for (name, text) in files {
        project.write(name, text);
    }
    let mut command = vec!["validate"];
    command.extend(args);
    let out = project.run(&command);
    assert_eq!(out.code, 1, "{message}: {out:?}");
    assert!(out.stderr.contains(message), "{message} in {out:?}");
    assert!(
        out.stderr.contains(place),
        "{message} at {place} in {out:?}"
    );
}

#[test]
fn a_field_no_item_of_for_each_has_is_an_error_at_the_reference() {
    let keys = "for-each = { a = { zone = \"lpg1\" } }\nzone = \"${each.value.zone}\"\n\
                name = \"${each.value.nmae}\"";
    let message = "the item `a` of for-each has no `nmae`";
    refused(
        &[("skyplan.toml", &web(keys))],
        &[],
        "skyplan.toml:8:9",
        message,
    );
}

#[test]
fn a_for_each_key_that_cannot_name_an_instance_is_an_error_at_the_key() {
    let keys = "for-each = [\"b c\"]\nzone = \"lpg1\"";
    let message = "`b c` cannot be an instance's key";
    refused(
        &[("skyplan.toml", &web(keys))],
        &[],
        "skyplan.toml:6:13",
        message,
    );
}

#[test]
fn an_unclosed_reference_is_an_error_at_its_string() {
    let keys = "name = \"web-${each.key\"\nfor-each = [\"a\"]\nzone = \"lpg1\"";
    let message = "`${` is not closed by `}`";
    refused(
        &[("skyplan.toml", &web(keys))],
        &[],
        "skyplan.toml:6:8",
        message,
    );
}

#[test]
fn a_reference_to_nothing_skyplan_knows_is_an_error_at_it() {
    let keys = "name = \"${local.name}\"\nzone = \"lpg1\"";
    let message = "`${local.name}` names nothing";
    refused(
        &[("skyplan.toml", &web(keys))],
        &[],
        "skyplan.toml:6:9",
        message,
    );
}

#[test]
fn a_list_inside_text_is_an_error_at_the_reference() {
    let keys = "for-each = { a = { zone = \"lpg1\", tags = [\"x\"] } }\n\
                zone = \"${each.value.zone}\"\nname = \"web-${each.value.tags}\"";
    let message = "`${each.value.tags}` is a list or table, not text";
    refused(
        &[("skyplan.toml", &web(keys))],
        &[],
        "skyplan.toml:8:13",
        message,
    );
}

#[test]
fn a_variable_defined_in_two_files_is_an_error_at_the_second() {
    let files = [
        ("a.toml", "[variables]\nzone = \"lpg1\"\n"),
        ("b.toml", "[variables]\nzone = \"rma1\"\n"),
        ("skyplan.toml", &web("zone = \"${var.zone}\"")),
    ];
    let message = "the variable `zone` is defined twice";
    refused(&files, &[], "b.toml:2:1", message);
}

#[test]
fn a_variable_file_that_cannot_be_read_is_named() {
    let config = format!(
        "[variables]\nzone = \"lpg1\"\n\n{}",
        web("zone = \"${var.zone}\"")
    );
    let files = [("skyplan.toml", config.as_str())];
    let message = "cannot read the variable file";
    refused(&files, &["--var-file", "nope.vars"], "nope.vars", message);
}

#[test]
fn defaults_of_no_kind_no_provider_or_a_key_no_default_may_give_are_errors_at_their_place() {
    let defaults = |text: &str| format!("{PROVIDER}{text}");
    let lb = defaults("[defaults.lb]\nzone = \"lpg1\"\n");
    refused(
        &[("skyplan.toml", &lb)],
        &[],
        "skyplan.toml:4:11",
        "`lb` is no kind of resource",
    );
    let nope = defaults("[defaults.load-balancer.nope]\nzone = \"lpg1\"\n");
    refused(
        &[("skyplan.toml", &nope)],
        &[],
        "skyplan.toml:4:25",
        "`nope` is no provider of load-balancer tables",
    );
    let provider = defaults("[defaults.load-balancer.cloudscale]\nprovider = \"cloudscale\"\n");
    refused(
        &[("skyplan.toml", &provider)],
        &[],
        "skyplan.toml:5:1",
        "`provider` cannot be a default",
    );
    let typo = defaults("[defaults.load-balancer.cloudscale]\nzoen = \"lpg1\"\n");
    refused(
        &[("skyplan.toml", &typo)],
        &[],
        "skyplan.toml:5:1",
        "`zoen` is not a key of these tables",
    );
}

#[test]
fn defaults_of_one_kind_and_provider_in_two_files_are_an_error_at_the_second() {
    let files = [
        (
            "a.toml",
            "[defaults.load-balancer.cloudscale]\nzone = \"lpg1\"\n",
        ),
        (
            "b.toml",
            "[defaults.load-balancer.cloudscale]\nzone = \"rma1\"\n",
        ),
        ("skyplan.toml", &web("")),
    ];
    let message = "the defaults of load-balancer (cloudscale) are defined twice";
    refused(&files, &[], "b.toml:1:1", message);
}
