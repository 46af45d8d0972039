//! `[backend.postgres]` → [`Backend::Postgres`]. The URL must not hold a password: the file is
//! shared, committed and printed in diagnostics, so a password found there is refused with its
//! position only — its line is never shown.

use std::str::FromStr;

use super::diagnostics::{Problem, Problems};
use super::parse::Sourced;
use super::raw::RawPostgres;
use super::types::{Backend, PostgresBackend};

/// The environment variable that gives the URL when the file does not.
pub const PG_URL_ENV: &str = "SKYPLAN_PG_URL";
const DEFAULT_WORKSPACE: &str = "default";
const URL_HELP: &str = "postgres://USER@HOST:PORT/DATABASE, optionally with ?sslmode=require";

pub(super) fn postgres(raw: &Sourced<'_, RawPostgres>, problems: &mut Problems) -> Backend {
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
