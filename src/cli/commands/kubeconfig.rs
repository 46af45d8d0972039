//! `skyplan kubeconfig`: a managed cluster's kubeconfig, written only to a private file.

use miette::{IntoDiagnostic, Report};

use super::super::args::Locking;
use super::super::report::Reported;
use super::super::{colour, exit};
use super::{load, open, ConfigSource};

pub(super) async fn kubeconfig(
    source: &ConfigSource,
    cluster: &str,
    output: Option<std::path::PathBuf>,
    locking: &Locking,
) -> Result<u8, Report> {
    let name = cluster.strip_prefix("cluster.").unwrap_or(cluster);
    let address = crate::model::Address::new(crate::model::ResourceKind::Cluster, name);
    let config = load(source)?;
    let embedded = (config.resources.iter())
        .find(|r| r.address == address)
        .is_some_and(|r| crate::registry::embedded_cloud(&config, &r.provider));
    let workspace = open(config, "kubeconfig", locking).await?;
    let result = workspace.kubeconfig(&address).await.reported();
    workspace.close().await.reported()?;
    let kubeconfig = result?;
    let output = output.unwrap_or_else(|| format!("{name}.kubeconfig").into());
    if output.as_os_str() == "-" {
        print!("{}", kubeconfig.expose());
        return Ok(exit::SUCCESS);
    }
    write_private(&output, kubeconfig.expose()).into_diagnostic()?;
    println!("Wrote the kubeconfig of {address} to {}.", output.display());
    if embedded {
        colour::eprintln(format_args!(
            "note: {address} is on an embedded cloud, whose cluster API servers run only while a skyplan command does: this kubeconfig reaches it only then (`skyplan sim serve` keeps a simulated cloud running)"
        ));
    }
    Ok(exit::SUCCESS)
}

/// Writes a file only its owner can read: a kubeconfig holds cluster credentials.
pub(super) fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(text.as_bytes())
}
