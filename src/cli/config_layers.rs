//! The `-c` layers of a command line. `-c` is global, so it may be written before the
//! subcommand, after it, or both (`skyplan -c base plan -c env/prod`); but clap keeps only the
//! values of one level (the subcommand's), which would drop the others silently. So the
//! command line is read again for every `-c`, in the order written.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::ArgMatches;

/// The id of `Cli::config`.
const CONFIG: &str = "config";

/// Every `-c` on the command line `args` (without the program's name), in the order written;
/// None when none is written (the default or `SKYPLAN_CONFIG` applies) or when the reading
/// disagrees with clap's (then clap's values stand).
pub fn written(matches: &ArgMatches, args: &[OsString]) -> Option<Vec<PathBuf>> {
    if matches.value_source(CONFIG) != Some(ValueSource::CommandLine) {
        return None;
    }
    let parsed: Vec<PathBuf> = matches.get_many::<PathBuf>(CONFIG)?.cloned().collect();
    let all = scanned(args);
    all.ends_with(&parsed).then_some(all)
}

/// The values of `-c PATH`, `-cPATH`, `-vc PATH`, `--config PATH` and `--config=PATH`, up to
/// a `--`.
fn scanned(args: &[OsString]) -> Vec<PathBuf> {
    let mut values = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        let inline = if text == "--" {
            break;
        } else if let Some(value) = text.strip_prefix("--config=") {
            Some(value.to_string())
        } else if text == "--config" {
            None
        } else if let Some(short) = text.strip_prefix('-').filter(|s| !s.starts_with('-')) {
            // `-c`, after the only short flag without a value (`-vvc`): it takes the rest, or
            // the next argument.
            let Some(rest) = short.trim_start_matches('v').strip_prefix('c') else {
                continue;
            };
            (!rest.is_empty()).then(|| rest.to_string())
        } else {
            continue;
        };
        match inline {
            Some(value) => values.push(PathBuf::from(value)),
            None => values.extend(args.next().map(PathBuf::from)),
        }
    }
    values
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::cli::Cli;

    fn layers(args: &[&str]) -> Option<Vec<PathBuf>> {
        let matches = Cli::command()
            .try_get_matches_from(std::iter::once("skyplan").chain(args.iter().copied()))
            .unwrap();
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        written(&matches, &args)
    }

    #[test]
    fn every_c_counts_wherever_it_is_written() {
        let both = Some(vec![PathBuf::from("a"), PathBuf::from("b")]);
        assert_eq!(layers(&["-c", "a", "-c", "b", "validate"]), both);
        assert_eq!(layers(&["validate", "-ca", "--config", "b"]), both);
        assert_eq!(layers(&["-c", "a", "plan", "-c", "b"]), both);
        assert_eq!(
            layers(&[
                "--config=a",
                "state",
                "mv",
                "-vc",
                "b",
                "cluster.a",
                "cluster.b"
            ]),
            both
        );
        assert_eq!(layers(&["validate"]), None);
        let kubeconfig = ["-c", "a", "kubeconfig", "lab", "-okube.conf"];
        assert_eq!(layers(&kubeconfig), Some(vec![PathBuf::from("a")]));
    }
}
