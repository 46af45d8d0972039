//! `[backend.postgres]` → [`Backend::Postgres`], `[backend.kubernetes]` →
//! [`Backend::Kubernetes`]. The PostgreSQL URL must not hold a password: the file is shared,
//! committed and printed in diagnostics, so a password found there is refused with its
//! position only — its line is never shown.

use std::str::FromStr;

use super::diagnostics::{Problem, Problems};
use super::parse::{RawConfig, Sourced};
use super::raw::{RawKubernetesBackend, RawPostgres};
use super::types::{Backend, KubernetesAccess, KubernetesBackend, PostgresBackend};
use super::values::is_dns_label;

/// The environment variable that gives the URL when the file does not.
pub const PG_URL_ENV: &str = "SKYPLAN_PG_URL";
const DEFAULT_WORKSPACE: &str = "default";
const URL_HELP: &str = "postgres://USER@HOST:PORT/DATABASE, optionally with ?sslmode=require";

/// The one backend the config names, or the state directory.
pub(super) fn backend(raw: &RawConfig<'_>, problems: &mut Problems) -> Backend {
    match (&raw.postgres, &raw.kubernetes_backend) {
        (Some(pg), None) => postgres(pg, problems),
        (None, Some(kube)) => kubernetes(kube, problems),
        (Some(pg), Some(kube)) => {
            let problem = Problem::at(kube.file, kube.span(), "a second state backend")
                .with_note(Problem::at(
                    pg.file,
                    pg.span(),
                    "[backend.postgres] is here",
                ))
                .with_help("keep [backend.postgres] or [backend.kubernetes], not both");
            problems.push(problem);
            Backend::Local
        }
        (None, None) => Backend::Local,
    }
}

fn postgres(raw: &Sourced<'_, RawPostgres>, problems: &mut Problems) -> Backend {
    let table = raw.get();
    let workspace = match &table.workspace {
        Some(name) if name.get_ref().trim().is_empty() => {
            let problem = Problem::at(raw.file, name.span(), "the workspace name is empty");
            problems.push(problem.with_help("name the shared state, e.g. workspace = \"prod\""));
            DEFAULT_WORKSPACE.to_string()
        }
        Some(name) => name.get_ref().clone(),
        None => DEFAULT_WORKSPACE.to_string(),
    };
    let url = match &table.url {
        Some(url) => {
            if let Some(UrlProblem(message)) = url_problem(url.get_ref()) {
                // No snippet: the line may hold a password.
                let problem = Problem::at(raw.file, url.span(), message).without_snippet();
                problems.push(problem.with_help(problem_help(message)));
            }
            url.get_ref().clone()
        }
        None => match std::env::var(PG_URL_ENV) {
            Ok(url) if !url.is_empty() => url,
            _ => {
                let message = format!("[backend.postgres] has no url and {PG_URL_ENV} is not set");
                let problem = Problem::at(raw.file, raw.span(), message);
                problems.push(problem.with_help(format!("set url = \"{URL_HELP}\"")));
                String::new()
            }
        },
    };
    Backend::Postgres(PostgresBackend { url, workspace })
}

/// The Lease's duration when the table sets none.
const DEFAULT_LEASE_SECONDS: u32 = 15;
/// Room for the Secrets' suffixes in a Kubernetes name and a label value (63 characters).
const MAX_WORKSPACE_LEN: usize = 50;

fn kubernetes(raw: &Sourced<'_, RawKubernetesBackend>, problems: &mut Problems) -> Backend {
    let table = raw.get();
    let at = |span, message: String, help: &str| {
        Problem::at(raw.file, span, message).with_help(help.to_string())
    };
    let in_cluster = table.in_cluster.as_ref().is_some_and(|b| *b.get_ref());
    if in_cluster {
        for key in [&table.kubeconfig, &table.context].into_iter().flatten() {
            let message = "in-cluster = true excludes kubeconfig and context".to_string();
            problems.push(at(
                key.span(),
                message,
                "keep in-cluster or kubeconfig/context",
            ));
        }
    }
    let namespace = table.namespace.as_ref().map(|n| {
        if !is_dns_label(n.get_ref(), 63) {
            let message = format!("`{}` is not a namespace name", n.get_ref());
            problems.push(at(
                n.span(),
                message,
                "lower-case letters, digits and '-', at most 63",
            ));
        }
        n.get_ref().clone()
    });
    if namespace.is_none() && !in_cluster {
        let message = "[backend.kubernetes] needs a namespace".to_string();
        problems.push(at(
            raw.span(),
            message,
            "add namespace = \"skyplan\" (in a pod, in-cluster = true defaults it to the pod's)",
        ));
    }
    let workspace = match &table.workspace {
        Some(name) => {
            if !is_dns_label(name.get_ref(), MAX_WORKSPACE_LEN) {
                let message = format!("`{}` cannot name Secrets and a Lease", name.get_ref());
                let help = format!("lower-case letters, digits and '-', at most {MAX_WORKSPACE_LEN}, e.g. workspace = \"prod\"");
                problems.push(at(name.span(), message, &help));
            }
            name.get_ref().clone()
        }
        None => DEFAULT_WORKSPACE.to_string(),
    };
    let lease_seconds = match &table.lease_seconds {
        Some(seconds) if *seconds.get_ref() == 0 => {
            let message = "a lease of 0 s is never held".to_string();
            problems.push(at(seconds.span(), message, "leave it out for 15 s"));
            DEFAULT_LEASE_SECONDS
        }
        Some(seconds) => *seconds.get_ref(),
        None => DEFAULT_LEASE_SECONDS,
    };
    let access = match in_cluster {
        true => KubernetesAccess::InCluster,
        false => KubernetesAccess::Kubeconfig {
            path: table.kubeconfig.as_ref().map(|p| raw.file.path_value(p)),
            context: table.context.as_ref().map(|c| c.get_ref().clone()),
        },
    };
    Backend::Kubernetes(KubernetesBackend {
        namespace,
        workspace,
        access,
        lease_seconds,
    })
}

/// What is wrong with a connection URL from the file, if anything; never quotes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UrlProblem(&'static str);

const PASSWORD_IN_URL: &str = "passwords do not belong in config files";
const NOT_A_URL: &str = "not a PostgreSQL connection URL";

fn url_problem(url: &str) -> Option<UrlProblem> {
    match tokio_postgres::Config::from_str(url) {
        Err(_) => Some(UrlProblem(NOT_A_URL)),
        Ok(config) if config.get_password().is_some() => Some(UrlProblem(PASSWORD_IN_URL)),
        Ok(_) => None,
    }
}

fn problem_help(message: &str) -> String {
    if message == PASSWORD_IN_URL {
        "remove the password from the url and set PGPASSWORD or a ~/.pgpass line".into()
    } else {
        format!("write it as {URL_HELP}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_the_url_is_found_in_both_spellings() {
        for url in [
            "postgres://skyplan:s3cret@db:5432/skyplan",
            "host=db user=skyplan password=s3cret",
        ] {
            assert_eq!(url_problem(url), Some(UrlProblem(PASSWORD_IN_URL)), "{url}");
        }
        assert_eq!(url_problem("postgres://skyplan@db:5432/skyplan"), None);
        assert_eq!(url_problem("postgres://skyplan@db/x?sslmode=require"), None);
        assert_eq!(
            url_problem("postgres://db?sslmode=bogus"),
            Some(UrlProblem(NOT_A_URL))
        );
    }
}
