//! An existing cluster brought to its desired spec.
//!
//! Order of an update, and why:
//! 1. a service offering change while the cluster is Stopped or Created (any hypervisor, and
//!    smaller offerings are accepted only then);
//! 2. start, if it should run;
//! 3. a service offering change on the running cluster: in place on XenServer/VMware/Simulator,
//!    else stop → scale → start; deferred to after the stop when it should end up stopped;
//! 4. the Kubernetes upgrade (needs Running, and the offering it checks is then the new one);
//! 5. autoscaling, then the worker count (never in one call; after the offering, because one
//!    call with both would remove nodes first and then fail the offering, leaving Alert);
//! 6. stop, if it should be stopped, then a deferred offering change.

use super::*;

/// States that end up Running without anything being done.
const HEADING_RUNNING: &[&str] = &[
    "Running",
    "Starting",
    "Scaling",
    "Upgrading",
    "Importing",
    "RemovingNodes",
    "Recovering",
];
/// States with no VM running or about to run.
const HEADING_STOPPED: &[&str] = &["Stopped", "Stopping", "ScalingStoppedCluster", "Created"];

/// scaleKubernetesCluster: state must be Created, Running or Stopped.
fn can_scale(state: &str) -> bool {
    is_in(state, &["Created", "Running", "Stopped"])
}

/// startKubernetesCluster starts the VMs of a settled cluster that is not running.
fn can_start(state: &str) -> bool {
    is_in(state, &["Created", "Stopped", "Alert"])
}

/// stopKubernetesCluster is defined from Running and Alert (a stop during a transient state is
/// not refused, but would cut the running operation short: skyplan does not do it).
fn can_stop(state: &str) -> bool {
    is_in(state, &["Running", "Alert"])
}

/// The cluster's Kubernetes version: from the catalog, else from the version's name
/// (`v1.29.3-calico-x86_64`) when the version was removed from the catalog.
fn live_version(live: &KubernetesCluster, inventory: &Inventory) -> Result<KubeVersion, String> {
    if let Some(version) = inventory.version_by_id(&live.kubernetesversionid) {
        return KubeVersion::parse(&version.semanticversion);
    }
    let name = live.kubernetesversionname.trim_start_matches('v');
    let semantic = name.split(['-', ' ']).next().unwrap_or_default();
    KubeVersion::parse(semantic).map_err(|_| {
        format!(
            "cannot tell the Kubernetes version of cluster {}: version {} is not in the catalog and its name `{}` has no semantic version",
            live.name, live.kubernetesversionid, live.kubernetesversionname
        )
    })
}

impl Diff<'_> {
    pub(super) fn update(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        prior: Option<&CloudstackClusterSpec>,
    ) -> Result<(), String> {
        let spec = want.spec;
        check_server_features(spec, self.inventory)?;
        let desired_version = KubeVersion::parse(&want.version.semanticversion)?;
        check_counts(spec, desired_version, self.inventory)?;
        self.create_only(want, live, prior);
        self.description(spec, live, prior);

        let desired_running = spec.state == ClusterRunState::Running;
        let needs_start = desired_running && !is_in(&live.state, HEADING_RUNNING);
        let needs_stop = !desired_running && !is_in(&live.state, HEADING_STOPPED);
        let mut now = live.state.clone();
        let mut offering = self.offering_change(want, live)?;
        let mut offering_done = false;

        // 1. A cluster that runs nothing scales on any hypervisor, to a smaller offering too.
        if let Some(change) = offering.take_if(|_| is_in(&now, &["Stopped", "Created"])) {
            self.offering_while_stopped(change, &now);
            offering_done = true;
        }
        // 2. Start.
        if needs_start {
            self.start(live, &mut now);
        }
        // 3. An offering change on the running cluster, unless it should end up stopped.
        let deferred = offering.take_if(|_| needs_stop && can_stop(&now));
        if let Some(change) = offering.take() {
            offering_done = self.offering_while_running(change, live, &now);
        }
        // 4. Upgrade: the global offering it checks is the new one if that changed already.
        let global = if offering_done {
            Some(want.offering)
        } else {
            self.inventory.offering_by_id(&live.serviceofferingid)
        };
        self.version(want, live, &now, global)?;
        // 5. Autoscaling, then the worker count.
        self.autoscaling(spec, live, &now);
        self.workers(want, live, prior, &now, offering_done);
        // 6. Stop, then what only a stopped cluster accepts.
        if needs_stop {
            self.stop(live, &mut now);
            if let Some(change) = deferred {
                self.offering_while_stopped(change, &now);
            }
        }
        Ok(())
    }

    /// Control-node and etcd-node counts, zone, network and keypair: no API changes them.
    fn create_only(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        prior: Option<&CloudstackClusterSpec>,
    ) {
        let spec = want.spec;
        let replace = "use --replace to delete the cluster and create it anew";
        if spec.control_nodes != live.controlnodes {
            let (before, after) = (json!(live.controlnodes), json!(spec.control_nodes));
            self.note(
                Change::ControlNodes,
                "control-nodes",
                before,
                after,
                replace,
            );
        }
        if spec.etcd_nodes != live.etcdnodes {
            let (before, after) = (json!(live.etcdnodes), json!(spec.etcd_nodes));
            self.note(Change::EtcdNodes, "etcd-nodes", before, after, replace);
        }
        if want.zone.id != live.zoneid {
            let before = json!(if live.zonename.is_empty() {
                &live.zoneid
            } else {
                &live.zonename
            });
            self.note(Change::Zone, "zone", before, json!(want.zone.name), replace);
        }
        let live_network = live
            .associatednetworkname
            .clone()
            .or(live.networkid.clone());
        match want.network {
            Some(network) if live.networkid.as_deref() != Some(network.id.as_str()) => {
                let before = json!(live_network);
                self.note(
                    Change::Network,
                    "network",
                    before,
                    json!(network.name),
                    replace,
                );
            }
            // No network in the config means "CKS made one": a cluster that was applied on a
            // supplied network cannot move to a network of its own.
            None if prior.is_some_and(|p| p.network.is_some()) => {
                let detail =
                    format!("{replace}; without `network` CKS would make a network of its own");
                self.note(
                    Change::Network,
                    "network",
                    json!(live_network),
                    Value::Null,
                    &detail,
                );
            }
            _ => {}
        }
        let live_keypair = live.keypair.as_deref().filter(|k| !k.is_empty());
        if want.keypair != live_keypair {
            let (before, after) = (json!(live_keypair), json!(want.keypair));
            self.note(Change::Keypair, "keypair", before, after, replace);
        }
    }

    /// No update API: shown once, when the config's description changes, and never applied.
    fn description(
        &mut self,
        spec: &CloudstackClusterSpec,
        live: &KubernetesCluster,
        prior: Option<&CloudstackClusterSpec>,
    ) {
        let live_text = live.description.as_deref().filter(|d| !d.is_empty());
        let wanted = spec.description.as_deref().filter(|d| !d.is_empty());
        let already_recorded =
            prior.is_some_and(|p| p.description.as_deref().filter(|d| !d.is_empty()) == wanted);
        if wanted != live_text && !already_recorded {
            self.note(
                Change::Description,
                "description",
                json!(live_text),
                json!(wanted),
                "",
            );
        }
    }

    fn start(&mut self, live: &KubernetesCluster, now: &mut String) {
        let (before, after) = (json!(live.state), json!("running"));
        if !can_start(now) {
            let detail = format!("the cluster is {now} and cannot be started now");
            self.note(Change::WrongState, "state", before, after, &detail);
            return;
        }
        let detail = match now.as_str() {
            "Alert" => "the cluster is in Alert: starting it starts its stopped VMs",
            "Created" => "the cluster was created but never started",
            _ => "",
        };
        self.note(Change::Start, "state", before, after, detail);
        self.ops.push(ClusterOp::Start {
            cluster: target(live),
        });
        *now = "Running".into();
    }

    fn stop(&mut self, live: &KubernetesCluster, now: &mut String) {
        let (before, after) = (json!(live.state), json!("stopped"));
        if !can_stop(now) {
            let detail = format!("the cluster is {now} and cannot be stopped now");
            self.note(Change::WrongState, "state", before, after, &detail);
            return;
        }
        self.note(Change::Stop, "state", before, after, "");
        self.ops.push(ClusterOp::Stop {
            cluster: target(live),
        });
        *now = "Stopped".into();
    }

    fn version(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        now: &str,
        global_offering: Option<&ServiceOffering>,
    ) -> Result<(), String> {
        if want.version.id == live.kubernetesversionid {
            return Ok(());
        }
        let from = live_version(live, self.inventory)?;
        let to = KubeVersion::parse(&want.version.semanticversion)?;
        let (before, after) = (json!(from.to_string()), json!(to.to_string()));
        let path = "kubernetes-version";
        match version_step(from, to) {
            VersionStep::Same => {}
            VersionStep::SkipsMinor => {
                let detail = format!("upgrade to {}.{}.x first", from.major, from.minor + 1);
                self.note(Change::VersionSkipsMinor, path, before, after, &detail);
            }
            VersionStep::Downgrade => self.note(Change::VersionDowngrade, path, before, after, ""),
            VersionStep::OtherMajor => {
                self.note(Change::VersionOtherMajor, path, before, after, "")
            }
            VersionStep::Upgrade => {
                check_version_usable(want.version, &want.zone.name)?;
                let global = global_offering.ok_or_else(|| {
                    format!(
                        "the cluster's service offering {} is not in the catalog, so whether it meets the minimums of Kubernetes {to} cannot be checked",
                        live.serviceofferingid
                    )
                })?;
                check_offering(global, None, want.version).map_err(|e| {
                    format!("the cluster's {e}; CloudStack checks the upgrade against it")
                })?;
                if now != "Running" {
                    let detail = format!(
                        "the cluster is {now}: an upgrade needs it Running (state = \"running\")"
                    );
                    self.note(Change::WrongState, path, before, after, &detail);
                    return Ok(());
                }
                self.note(Change::VersionUpgrade, path, before, after, "");
                self.ops.push(ClusterOp::Upgrade {
                    cluster: target(live),
                    version: named(&want.version.id, &want.version.semanticversion),
                });
            }
        }
        Ok(())
    }

    fn autoscaling(&mut self, spec: &CloudstackClusterSpec, live: &KubernetesCluster, now: &str) {
        let current = live
            .autoscalingenabled
            .then_some((live.minsize, live.maxsize));
        let wanted = spec.autoscaling.map(|a| (a.min, a.max));
        if current == wanted {
            return;
        }
        let show = |bounds: Option<(u32, u32)>| {
            bounds.map_or(Value::Null, |(min, max)| json!({ "min": min, "max": max }))
        };
        let (before, after) = (show(current), show(wanted));
        // CloudStack accepts the call in Created, Running or Stopped, but it deploys (or
        // removes) the cluster autoscaler through the running control node: skyplan asks for
        // Running rather than let apply find out.
        if now != "Running" {
            let detail = format!(
                "the cluster is {now}: the cluster autoscaler is set up inside the running cluster, so start it first (state = \"running\")"
            );
            self.note(Change::WrongState, "autoscaling", before, after, &detail);
            return;
        }
        let (min, max) = wanted.unwrap_or((0, 0));
        if wanted.is_some() && !(min..=max).contains(&live.size) {
            let detail = format!("the cluster has {} workers, outside {min}-{max}", live.size);
            self.note(
                Change::AutoscalingMovesWorkers,
                "autoscaling",
                before,
                after,
                &detail,
            );
        } else {
            self.note(Change::Autoscaling, "autoscaling", before, after, "");
        }
        self.ops.push(ClusterOp::Autoscale {
            cluster: target(live),
            enabled: wanted.is_some(),
            min,
            max,
        });
    }

    fn workers(
        &mut self,
        want: &Resolved,
        live: &KubernetesCluster,
        prior: Option<&CloudstackClusterSpec>,
        now: &str,
        offering_changed: bool,
    ) {
        let spec = want.spec;
        let path = "workers";
        if spec.autoscaling.is_some() {
            if prior.is_some_and(|p| p.workers != spec.workers) {
                let before = json!(prior.map(|p| p.workers));
                let detail = format!("the cluster has {} workers now", live.size);
                self.note(
                    Change::WorkersByAutoscaler,
                    path,
                    before,
                    json!(spec.workers),
                    &detail,
                );
            }
            return;
        }
        if spec.workers == live.size {
            return;
        }
        let (before, after) = (json!(live.size), json!(spec.workers));
        if now == "Stopped" {
            let detail = "set state = \"running\" to start it first";
            self.note(Change::WorkersWhileStopped, path, before, after, detail);
            return;
        }
        if !can_scale(now) {
            let detail = format!("the cluster is {now}; scaling needs Created, Running or Stopped");
            self.note(Change::WrongState, path, before, after, &detail);
            return;
        }
        let down = spec.workers < live.size;
        let detail = if down && offering_changed {
            "a separate call after the offering change: in one call CloudStack would remove the nodes first and then fail the offering change, leaving the cluster in Alert"
        } else {
            ""
        };
        let row = if down {
            Change::WorkersDown
        } else {
            Change::WorkersUp
        };
        self.note(row, path, before, after, detail);
        self.ops.push(ClusterOp::ScaleSize {
            cluster: target(live),
            workers: spec.workers,
            pinned: self.node_offerings(want),
        });
    }
}
