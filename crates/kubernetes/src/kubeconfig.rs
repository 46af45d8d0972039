//! Which kubeconfig and context, by kubectl's rules, and a context that is not there named
//! with the file it was looked for in and the contexts that are.

use std::path::Path;

use kube::config::{KubeConfigOptions, Kubeconfig};

use skyplan_core::provider::http::with_causes;

/// The named file; else KUBECONFIG (a ':'-separated list, merged, first wins — kubectl's
/// rules); else ~/.kube/config. With it, where it came from, for messages.
pub fn read_kubeconfig(path: Option<&Path>) -> Result<(Kubeconfig, String), String> {
    if let Some(path) = path {
        let origin = format!("kubeconfig {}", path.display());
        return Kubeconfig::read_from(path)
            .map(|kubeconfig| (kubeconfig, origin.clone()))
            .map_err(|e| format!("reading {origin}: {}", with_causes(&e)));
    }
    let from_env = std::env::var("KUBECONFIG").unwrap_or_default();
    match Kubeconfig::from_env() {
        Ok(Some(kubeconfig)) => Ok((kubeconfig, format!("KUBECONFIG ({from_env})"))),
        Ok(None) => Kubeconfig::read()
            .map(|kubeconfig| (kubeconfig, "~/.kube/config".to_owned()))
            .map_err(|e| format!("reading ~/.kube/config: {}", with_causes(&e))),
        Err(e) => Err(format!(
            "reading KUBECONFIG ({from_env}): {}",
            with_causes(&e)
        )),
    }
}

/// The kubeconfig (see [`read_kubeconfig`]) with its `context` checked to be there, the
/// options that load that context, and where the kubeconfig came from.
pub fn chosen(
    path: Option<&Path>,
    context: Option<&str>,
) -> Result<(Kubeconfig, KubeConfigOptions, String), String> {
    let (kubeconfig, origin) = read_kubeconfig(path)?;
    check_context(&kubeconfig, context, &origin)?;
    let options = KubeConfigOptions {
        context: context.map(str::to_owned),
        ..KubeConfigOptions::default()
    };
    Ok((kubeconfig, options, origin))
}

/// The context to use (`wanted`, else the current one) must be in the kubeconfig: kube's own
/// error names neither the file nor what it holds.
pub fn check_context(
    kubeconfig: &Kubeconfig,
    wanted: Option<&str>,
    origin: &str,
) -> Result<(), String> {
    let names: Vec<&str> = kubeconfig
        .contexts
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    let there = match names.is_empty() {
        true => "it has no contexts".to_owned(),
        false => format!("its contexts: {}", names.join(", ")),
    };
    let (name, what) = match (wanted, kubeconfig.current_context.as_deref()) {
        (Some(name), _) => (name, "context"),
        (None, Some(name)) if !name.is_empty() => (name, "current context"),
        _ => {
            return Err(format!(
                "{origin} has no current context and the config names none (`context = \"…\"`); {there}"
            ))
        }
    };
    match names.contains(&name) {
        true => Ok(()),
        false => Err(format!("{what} `{name}` is not in {origin}; {there}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubeconfig(current: Option<&str>, contexts: &[&str]) -> Kubeconfig {
        let mut yaml = String::from("apiVersion: v1\nkind: Config\n");
        if let Some(current) = current {
            yaml.push_str(&format!("current-context: {current}\n"));
        }
        yaml.push_str("contexts:\n");
        for name in contexts {
            yaml.push_str(&format!(
                "- name: {name}\n  context: {{cluster: c, user: u}}\n"
            ));
        }
        if contexts.is_empty() {
            yaml.push_str("  []\n");
        }
        Kubeconfig::from_yaml(&yaml).unwrap()
    }

    #[test]
    fn a_context_that_is_there_is_used() {
        let config = kubeconfig(Some("a"), &["a", "b"]);
        assert_eq!(check_context(&config, None, "f"), Ok(()));
        assert_eq!(check_context(&config, Some("b"), "f"), Ok(()));
    }

    #[test]
    fn a_missing_context_is_named_with_the_file_and_the_contexts_there_are() {
        let config = kubeconfig(Some("gone"), &["a", "b"]);
        assert_eq!(
            check_context(&config, Some("nope"), "kubeconfig /k.yaml"),
            Err("context `nope` is not in kubeconfig /k.yaml; its contexts: a, b".into())
        );
        assert_eq!(
            check_context(&config, None, "KUBECONFIG (/k.yaml)"),
            Err("current context `gone` is not in KUBECONFIG (/k.yaml); its contexts: a, b".into())
        );
        let empty = kubeconfig(None, &[]);
        let error = check_context(&empty, None, "~/.kube/config").unwrap_err();
        assert!(error.contains("has no current context"), "{error}");
        assert!(error.ends_with("it has no contexts"), "{error}");
    }
}
