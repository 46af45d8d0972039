//! `skyplan sim serve`: a simulated cloud (and its CCM) served to any client until a signal.

use miette::{IntoDiagnostic, Report};

use super::super::args::{SimProvider, SimServeArgs};
use super::super::exit;
use super::super::signals::StopSignals;

/// `--kubeconfig` and its companions: the cluster a served cloud's CCM reconciles.
fn cluster_access(args: &SimServeArgs) -> Option<skyplan_sim::controllers::ClusterAccess> {
    Some(skyplan_sim::controllers::ClusterAccess {
        kubeconfig: args.kubeconfig.clone()?,
        context: args.context.clone(),
        scope: skyplan_sim::controllers::Scope {
            namespace: args.ccm_namespace.clone(),
            node_selector: args.ccm_node_selector.clone(),
        },
    })
}

/// The started CCM, announced on stderr (the kubeconfig's path, never its credentials).
fn announced(
    cloud: &str,
    cluster: &skyplan_sim::controllers::ClusterAccess,
    ccm: Result<skyplan_sim::controllers::ControllersHandle, String>,
) -> Result<skyplan_sim::controllers::ControllersHandle, Report> {
    let ccm = ccm.map_err(|e| miette::miette!("the simulated {cloud} CCM: {e}"))?;
    eprintln!(
        "{cloud} CCM reconciling the cluster of {}",
        cluster.kubeconfig.display()
    );
    Ok(ccm)
}

/// Serves until SIGINT or SIGTERM, then stops the CCM before the caller stops the cloud: a
/// pass cut short by the cloud going away could leave a half-built load balancer.
async fn until_signal(
    signals: StopSignals,
    ccm: Option<skyplan_sim::controllers::ControllersHandle>,
) -> Result<(), Report> {
    signals.wait().await?;
    if let Some(ccm) = ccm {
        ccm.stop().await;
    }
    Ok(())
}

pub(super) async fn sim_serve(args: SimServeArgs) -> Result<u8, Report> {
    let signals = StopSignals::listen()?;
    let cluster = cluster_access(&args);
    let has_ccm = matches!(
        args.provider,
        SimProvider::Cloudscale | SimProvider::Phoenixnap
    );
    if cluster.is_some() && !has_ccm {
        miette::bail!(
            "--kubeconfig runs a simulated CCM: only with --provider cloudscale or phoenixnap"
        );
    }
    match args.provider {
        SimProvider::Cloudscale => {
            use skyplan_sim::cloudscale as sim;
            let options = sim::SimOptions {
                token: args.token,
                settle: std::time::Duration::from_millis(args.settle_ms),
                faults: args.faults.parse().into_diagnostic()?,
            };
            let token = options.token.clone();
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "cloudscale simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            let ccm = match &cluster {
                Some(cluster) => {
                    let cloud = skyplan_sim::controllers::CloudscaleEndpoint {
                        api: handle.base_url(),
                        token: token.unwrap_or_else(|| sim::DEFAULT_TOKEN.to_owned()),
                    };
                    let ccm = skyplan_sim::controllers::cloudscale_ccm(cluster, cloud).await;
                    Some(announced("cloudscale", cluster, ccm)?)
                }
                None => None,
            };
            until_signal(signals, ccm).await?;
            handle.shutdown().await.into_diagnostic()?;
        }
        SimProvider::Cloudstack => {
            use skyplan_sim::cloudstack as sim;
            let options = sim::SimOptions {
                api_key: args.api_key,
                secret_key: args.secret_key,
                job_time: std::time::Duration::from_millis(args.job_ms),
                version: args.server_version,
                hypervisor: args.hypervisor,
                faults: args.faults.parse().into_diagnostic()?,
                ..sim::SimOptions::default()
            };
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "cloudstack simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            signals.wait().await?;
            handle.shutdown().await.into_diagnostic()?;
        }
        SimProvider::Phoenixnap => {
            use skyplan_sim::phoenixnap as sim;
            let client_id = args.client_id.clone();
            let client_secret = args.client_secret.as_ref().map(|s| s.expose().to_owned());
            let options = sim::PnapSimOptions {
                client_id: args.client_id,
                client_secret: args.client_secret.map(|s| s.expose().to_owned()),
                transition: std::time::Duration::from_millis(args.transition_ms),
                faults: args.faults.parse().into_diagnostic()?,
            };
            let handle = sim::spawn(args.world.clone(), args.listen, options)
                .await
                .into_diagnostic()?;
            eprintln!(
                "phoenixnap simulator listening on {} (world {})",
                handle.base_url(),
                args.world.display()
            );
            let ccm = match &cluster {
                Some(cluster) => {
                    let pnap = skyplan_sim::controllers::PnapEndpoint {
                        base_url: handle.base_url(),
                        client_id: client_id.unwrap_or_else(|| sim::DEFAULT_CLIENT_ID.into()),
                        client_secret: client_secret
                            .unwrap_or_else(|| sim::DEFAULT_CLIENT_SECRET.into()),
                        location: args.ccm_location,
                        load_balancer: args.ccm_load_balancer,
                    };
                    let ccm = skyplan_sim::controllers::phoenixnap_ccm(cluster, pnap).await;
                    Some(announced("PhoenixNAP", cluster, ccm)?)
                }
                None => None,
            };
            until_signal(signals, ccm).await?;
            handle.shutdown().await.into_diagnostic()?;
        }
        SimProvider::Kubernetes => {
            use skyplan_sim::kubernetes as sim;
            let options = sim::KubeSimOptions {
                listen: args.listen,
                version: args.kube_version,
                faults: args.faults.parse().into_diagnostic()?,
                ..sim::KubeSimOptions::new(args.world.clone())
            };
            let handle = sim::spawn(options).await.into_diagnostic()?;
            if let Some(path) = &args.kubeconfig_out {
                super::kubeconfig::write_private(path, &served_kubeconfig(handle.url()))
                    .map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
            }
            eprintln!(
                "kubernetes simulator listening on {} (world {})",
                handle.url(),
                args.world.display()
            );
            signals.wait().await?;
            handle.shutdown().await.into_diagnostic()?;
        }
    }
    Ok(exit::SUCCESS)
}

/// A kubeconfig whose one context, `sim`, reaches the served Kubernetes simulator (which asks
/// no credentials).
fn served_kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\ncurrent-context: sim\n\
         clusters:\n- name: sim\n  cluster:\n    server: {url}\n\
         users:\n- name: sim\n  user: {{}}\n\
         contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\n"
    )
}
