//! Controller mode that can never converge: a load balancer in `mode = "ccm"` on a real
//! cluster while its cloud is the embedded one. The cloud controller runs in that cluster and
//! would have to reach the cloud's API, but the embedded cloud lives inside skyplan's own
//! process: apply would write the Service, wait for a controller that can never act, and time
//! out. Caught here, before anything is sent.

use std::ops::Range;

use serde_spanned::Spanned;

use super::diagnostics::{Problem, Problems};
use super::files::SourceFile;
use super::parse::RawConfig;

/// Where a controller-mode load balancer is written: its file, its `mode` value and cluster.
struct Bound<'a> {
    file: &'a SourceFile,
    mode: &'a Spanned<String>,
    cluster: &'a str,
}

/// The embedded cloud of a provider: where its table is and, if written, its `endpoint`.
struct EmbeddedCloud<'a> {
    provider: &'static str,
    file: &'a SourceFile,
    span: Range<usize>,
}

pub(super) fn validate(raw: &RawConfig<'_>, problems: &mut Problems) {
    let cloudscale = raw.cloudscale.as_ref().and_then(|p| {
        let endpoint = p.get().endpoint.as_ref();
        // No endpoint means the embedded simulator (contract.md).
        let embedded = endpoint.is_none_or(|e| e.get_ref() == "embedded");
        embedded.then(|| EmbeddedCloud {
            provider: "cloudscale",
            file: p.file,
            span: endpoint.map_or_else(|| p.span(), |e| e.span()),
        })
    });
    let cloudstack = raw.cloudstack.as_ref().and_then(|p| {
        let table = p.get();
        // Embedded unless an endpoint or a cloud-config says otherwise (contract.md).
        let embedded = match &table.endpoint {
            Some(endpoint) => endpoint.get_ref() == "embedded",
            None => table.cloud_config.is_none(),
        };
        embedded.then(|| EmbeddedCloud {
            provider: "cloudstack",
            file: p.file,
            span: table
                .endpoint
                .as_ref()
                .map_or_else(|| p.span(), |e| e.span()),
        })
    });
    let cloudscale_bound = raw.load_balancers.values().filter_map(|lb| {
        let table = lb.get();
        bound(lb.file, table.mode.as_ref(), table.cluster.as_ref())
    });
    let cloudstack_bound = raw.cloudstack_load_balancers.values().filter_map(|lb| {
        let table = lb.get();
        bound(lb.file, table.mode.as_ref(), table.cluster.as_ref())
    });
    for (cloud, bound) in [
        (cloudscale.as_ref(), cloudscale_bound.collect::<Vec<_>>()),
        (cloudstack.as_ref(), cloudstack_bound.collect()),
    ] {
        let Some(cloud) = cloud else { continue };
        for lb in bound {
            if let Some(problem) = unreachable(raw, cloud, &lb) {
                problems.push(problem);
            }
        }
    }
}

fn bound<'a>(
    file: &'a SourceFile,
    mode: Option<&'a Spanned<String>>,
    cluster: Option<&'a Spanned<String>>,
) -> Option<Bound<'a>> {
    let mode = mode.filter(|m| m.get_ref() == "ccm")?;
    Some(Bound {
        file,
        mode,
        cluster: cluster?.get_ref(),
    })
}

/// The problem when `lb`'s cluster is a real one (reached by kubeconfig, not embedded). A CKS
/// cluster of the embedded CloudStack is simulated in the same world as its cloud: it can.
fn unreachable(raw: &RawConfig<'_>, cloud: &EmbeddedCloud<'_>, lb: &Bound<'_>) -> Option<Problem> {
    let cluster = raw.kube_clusters.get(lb.cluster)?;
    if cluster.get().endpoint.is_some() {
        return None;
    }
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
    let span = lb.file.key_span(&lb.mode.span());
    let cloud_note = Problem::at(
        cloud.file,
        cloud.span.clone(),
        format!("[provider.{provider}] is embedded here"),
    );
    let kubeconfig = cluster.get().kubeconfig.as_ref();
    let cluster_note = Problem::at(
        cluster.file,
        kubeconfig.map_or_else(|| cluster.span(), |k| cluster.file.key_span(&k.span())),
        format!("[cluster.{name}] is a real cluster, reached by kubeconfig"),
    );
    Some(
        Problem::at(lb.file, span, message)
            .with_help(help)
            .with_note(cloud_note)
            .with_note(cluster_note),
    )
}
