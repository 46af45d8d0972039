//! Controller mode that can never converge: a load balancer in `mode = "ccm"` on a real
//! cluster while its cloud is the embedded one. The cloud controller runs in that cluster and
//! would have to reach the cloud's API, but the embedded cloud lives inside skyplan's own
//! process: apply would write the Service, wait for a controller that can never act, and time
//! out. Caught here, before anything is sent.

use std::ops::Range;

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::parse::RawConfig;

/// Where a controller-mode load balancer is written: its file, its `mode` and its cluster.
struct Bound<'a> {
    file: &'a SourceFile,
    mode: Range<usize>,
    cluster: &'a str,
}

/// The embedded cloud of a provider: where its table is and, if written, its `endpoint`.
struct EmbeddedCloud<'a> {
    provider: &'static str,
    file: &'a SourceFile,
    span: Range<usize>,
}

pub(super) fn validate(raw: &RawConfig<'_>, problems: &mut Problems) {
    let clouds = sections_bound(raw);
    for (cloud, bound) in clouds {
        let Some(cloud) = cloud else { continue };
        for lb in bound {
            if let Some(problem) = unreachable(raw, &cloud, &lb) {
                problems.push(problem);
            }
        }
    }
}

/// Each section's embedded cloud, if it is one, with its controller-mode resources.
fn sections_bound<'a>(
    raw: &'a RawConfig<'_>,
) -> impl Iterator<Item = (Option<EmbeddedCloud<'a>>, Vec<Bound<'a>>)> {
    raw.section_settings.iter().map(|(&index, settings)| {
        let section = raw.sections[index];
        let cloud = section.embedded_at(settings).map(|span| EmbeddedCloud {
            provider: section.provider(),
            file: settings.file,
            span,
        });
        let bound = raw
            .section_resources
            .values()
            .filter(|resource| resource.section == index)
            .filter_map(|resource| {
                let (mode, cluster) = section.controller_mode(&resource.table)?;
                let file = resource.table.file;
                Some(Bound {
                    file,
                    mode,
                    cluster,
                })
            })
            .collect();
        (cloud, bound)
    })
}

/// The problem when `lb`'s cluster is a real one (reached by kubeconfig, not embedded). A CKS
/// cluster of the embedded CloudStack is simulated in the same world as its cloud: it can.
fn unreachable(raw: &RawConfig<'_>, cloud: &EmbeddedCloud<'_>, lb: &Bound<'_>) -> Option<Problem> {
    let (_, section, cluster) = raw.cluster_tables().find(|(key, ..)| *key == lb.cluster)?;
    let real_at = raw.sections[section].real_cluster_at(cluster)?;
    let provider = cloud.provider;
    let name = lb.cluster;
    let message = format!(
        "mode = \"ccm\" can never converge: [cluster.{name}] is a real cluster, but \
         [provider.{provider}] is the embedded cloud, which lives inside skyplan and which no \
         cloud controller running in that cluster can reach"
    );
    let help = format!(
        "give [provider.{provider}] an endpoint the cluster's controller reaches, bind to a \
         cluster with endpoint = \"embedded\", or use mode = \"direct\" (skyplan then manages \
         the cloud objects itself)"
    );
    let span = lb.file.key_span(&lb.mode);
    let cloud_note = Problem::at(
        cloud.file,
        cloud.span.clone(),
        format!("[provider.{provider}] is embedded here"),
    );
    let cluster_note = Problem::at(
        cluster.file,
        real_at,
        format!("[cluster.{name}] is a real cluster, reached by kubeconfig"),
    );
    Some(
        Problem::at(lb.file, span, message)
            .with_help(help)
            .with_note(cloud_note)
            .with_note(cluster_note),
    )
}
