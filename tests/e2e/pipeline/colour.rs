//! Colour follows one rule on every stream: ANSI only on a terminal, never with `NO_COLOR`,
//! always with `CLICOLOR_FORCE` (unless `NO_COLOR`). Here the streams are pipes.

use std::process::Command;

use crate::support::{run, Output, Project};

const ESC: char = '\u{1b}';

/// A config whose one load balancer names a zone twice over: an error report at a span.
const BAD: &str =
    "[load-balancer.web]\nprovider = \"cloudscale\"\nzone = \"lpg1\"\nzone = \"rma1\"\n";

/// A load balancer on the embedded cloud: a plan with a create, coloured when colour is on.
const LB: &str = "[provider.cloudscale]\nendpoint = \"embedded\"\n\n[load-balancer.web]\n\
    provider = \"cloudscale\"\nzone = \"lpg1\"\nmembers = [\"10.0.0.11\"]\n\
    [[load-balancer.web.ports]]\nport = 80\nprotocol = \"tcp\"\nnode-port = 30080\n";

/// `skyplan ARGS` with the colour variables as given and no other (the harness sets NO_COLOR).
fn skyplan(project: &Project, args: &[&str], colour: &[(&str, &str)]) -> Output {
    let mut command: Command = project.command(args);
    command.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
    command.env_remove("CLICOLOR").env_remove("FORCE_COLOR");
    for (name, value) in colour {
        command.env(name, value);
    }
    run(&mut command)
}

#[test]
fn log_lines_and_errors_on_a_pipe_have_no_ansi() {
    let project = Project::new();
    project.config(BAD);
    let out = skyplan(&project, &["-vv", "validate"], &[]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(!out.stderr.contains(ESC), "ANSI on a pipe: {out:?}");

    project.config("[settings]\n");
    let out = skyplan(&project, &["-vv", "validate"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("config loaded"), "{out:?}");
    assert!(
        !out.stderr.contains(ESC),
        "ANSI in log lines on a pipe: {out:?}"
    );
}

#[test]
fn the_plan_is_coloured_only_when_forced() {
    let project = Project::new();
    project.config(LB);
    let out = skyplan(&project, &["plan"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stdout.contains(ESC), "{out:?}");
    let out = skyplan(&project, &["plan"], &[("CLICOLOR_FORCE", "1")]);
    assert!(out.stdout.contains(ESC), "{out:?}");
    let out = skyplan(
        &project,
        &["plan"],
        &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
    );
    assert!(!out.stdout.contains(ESC), "{out:?}");
}

#[test]
fn clicolor_force_colours_a_pipe_unless_no_color() {
    let project = Project::new();
    project.config("[settings]\n");
    let forced = [("CLICOLOR_FORCE", "1")];
    let out = skyplan(&project, &["-vv", "validate"], &forced);
    assert!(out.stderr.contains(ESC), "log lines not coloured: {out:?}");
    let out = skyplan(&project, &["--no-such-flag"], &forced);
    assert!(
        out.stderr.contains(ESC),
        "usage error not coloured: {out:?}"
    );
    project.config(BAD);
    let out = skyplan(&project, &["validate"], &forced);
    assert!(
        out.stderr.contains(ESC),
        "error report not coloured: {out:?}"
    );

    for no_color in [("NO_COLOR", "1"), ("CLICOLOR_FORCE", "0")] {
        let colour = [("CLICOLOR_FORCE", "1"), no_color];
        let colour = if no_color.0 == "CLICOLOR_FORCE" {
            &colour[1..]
        } else {
            &colour[..]
        };
        for args in [&["-vv", "validate"][..], &["--no-such-flag"][..]] {
            let out = skyplan(&project, args, colour);
            assert!(!out.stderr.contains(ESC), "{colour:?}: {out:?}");
            assert!(!out.stdout.contains(ESC), "{colour:?}: {out:?}");
        }
    }
}
