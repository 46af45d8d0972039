//! What a CKS cluster's Nodes look like once its kubelets registered them and the CloudStack
//! CCM initialised them (cloudstack-kubernetes-provider, `cloudstack_instances.go`
//! `InstanceMetadata`/`nodeAddresses`, and the cloud-provider node controller's labels), and
//! what the node lifecycle controller does when a VM stops (`InstanceShutdownByProviderID` is
//! true for a Stopped VM: the node is NotReady and tainted shutdown). Pure: the sync in
//! `mod.rs` sends what this decides.

use serde_json::{json, Value};

use crate::cloudstack::commands::clusters::Role;
use crate::cloudstack::world::{Cluster, World};

pub const PROVIDER_SCHEME: &str = "external-cloudstack://";
pub const SHUTDOWN_TAINT: &str = "node.cloudprovider.kubernetes.io/shutdown";
const CONTROL_PLANE: &str = "node-role.kubernetes.io/control-plane";
const UNKNOWN_REASON: &str = "NodeStatusUnknown";

/// One VM of a cluster, as its Node should show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView {
    pub vm_id: String,
    pub name: String,
    pub ip: String,
    pub running: bool,
    pub offering: String,
    pub zone: String,
    pub role: Role,
}

/// One cluster: its state and its VMs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterView {
    pub id: String,
    pub name: String,
    pub state: String,
    /// The Kubernetes version's semantic version, e.g. `1.30.2`.
    pub version: String,
    pub nodes: Vec<NodeView>,
}

impl ClusterView {
    /// The API server runs on the control VMs: it answers while the cluster is up, also
    /// during a scale or an upgrade (CKS keeps the control plane running through both).
    pub fn api_up(&self) -> bool {
        matches!(
            self.state.as_str(),
            "Running" | "Scaling" | "Upgrading" | "Alert"
        )
    }
}

pub fn views(world: &World) -> Vec<ClusterView> {
    world.clusters.iter().map(|c| view(world, c)).collect()
}

fn view(world: &World, cluster: &Cluster) -> ClusterView {
    let roles = [
        (Role::Control, &cluster.control_vm_ids),
        (Role::Etcd, &cluster.etcd_vm_ids),
        (Role::Worker, &cluster.worker_vm_ids),
    ];
    let nodes = roles
        .into_iter()
        // Dedicated etcd hosts run no kubelet: they are no Nodes.
        .filter(|(role, _)| *role != Role::Etcd)
        .flat_map(|(role, ids)| ids.iter().map(move |id| (role, id)))
        .filter_map(|(role, id)| {
            let vm = world.vm(id)?;
            Some(NodeView {
                vm_id: vm.id.clone(),
                name: vm.name.clone(),
                ip: vm.ipaddress.clone(),
                running: vm.state == "Running",
                offering: world
                    .offering(&vm.serviceofferingid)
                    .map(|o| o.name.clone())
                    .unwrap_or_default(),
                zone: world
                    .zone(&vm.zoneid)
                    .map(|z| z.name.clone())
                    .unwrap_or_default(),
                role,
            })
        })
        .collect();
    ClusterView {
        id: cluster.id.clone(),
        name: cluster.name.clone(),
        state: cluster.state.clone(),
        version: world
            .version(&cluster.kubernetesversionid)
            .map(|v| v.semanticversion.clone())
            .unwrap_or_default(),
        nodes,
    }
}

/// The CCM's `labelInvalidCharsRegex`, `([^A-Za-z0-9][^-A-Za-z0-9_.]*)?[^A-Za-z0-9]`, replaced
/// by nothing: its last term alone matches any one character that is not an ASCII letter or
/// digit, so every such character goes ("Small Instance" → "SmallInstance", "zone-1" →
/// "zone1").
pub fn label_value(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).collect()
}

/// The Node a kubelet registers and the CCM initialises, for a VM of the cluster.
pub fn node_object(node: &NodeView, kube_version: &str) -> Value {
    let instance_type = label_value(&node.offering);
    let zone = label_value(&node.zone);
    let mut labels = json!({
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": instance_type,
        "beta.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/zone": zone,
        "failure-domain.beta.kubernetes.io/zone": zone,
        "topology.kubernetes.io/region": zone,
        "failure-domain.beta.kubernetes.io/region": zone,
    });
    let mut taints = vec![];
    if node.role == Role::Control {
        // kubeadm's control-plane node: labelled and tainted so workloads stay off it.
        labels[CONTROL_PLANE] = json!("");
        taints.push(json!({"key": CONTROL_PLANE, "effect": "NoSchedule"}));
    }
    if !node.running {
        taints.push(shutdown_taint());
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": labels},
        "spec": {"providerID": provider_id(&node.vm_id), "taints": taints},
        "status": {
            // nodeAddresses: the first NIC's address; no Hostname (the VM's `hostname` is
            // its hypervisor host's, unset here) and no ExternalIP without static NAT.
            "addresses": [{"type": "InternalIP", "address": node.ip}],
            "conditions": [ready_condition(node.running)],
            "nodeInfo": {"kubeletVersion": format!("v{kube_version}"), "operatingSystem": "linux", "architecture": "amd64"},
        },
    })
}

pub fn provider_id(vm_id: &str) -> String {
    format!("{PROVIDER_SCHEME}{vm_id}")
}

fn shutdown_taint() -> Value {
    json!({"key": SHUTDOWN_TAINT, "effect": "NoSchedule"})
}

fn ready_condition(running: bool) -> Value {
    match running {
        true => json!({
            "type": "Ready", "status": "True", "reason": "KubeletReady",
            "message": "kubelet is posting ready status",
        }),
        false => json!({
            "type": "Ready", "status": "Unknown", "reason": UNKNOWN_REASON,
            "message": "Kubelet stopped posting node status.",
        }),
    }
}

/// What one pass changes on an existing Node whose VM is (not) running: its Ready condition
/// (the kubelet stops posting; the lifecycle controller marks it Unknown) and the shutdown
/// taint (added while the VM is Stopped, removed once it runs). `None`: nothing to change.
const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

pub struct NodeUpdate {
    pub conditions: Option<Vec<Value>>,
    pub taints: Option<Vec<Value>>,
}

pub fn node_update(live: &Value, running: bool) -> NodeUpdate {
    let conditions: Vec<Value> = live["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let ready = conditions
        .iter()
        .find(|c| c["type"] == "Ready")
        .is_some_and(|c| c["status"] == "True");
    let conditions = (ready != running).then(|| {
        let mut next: Vec<Value> = conditions
            .into_iter()
            .filter(|c| c["type"] != "Ready")
            .collect();
        next.push(ready_condition(running));
        next
    });
    let taints: Vec<Value> = live["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let tainted = taints.iter().any(|t| t["key"] == SHUTDOWN_TAINT);
    // The apiserver's TaintNodesByCondition adds `not-ready` to every Node it creates; the
    // node lifecycle controller takes it off once the node is Ready.
    let admitted = running && taints.iter().any(is_not_ready_taint);
    let taints = (tainted == running || admitted).then(|| {
        let mut next: Vec<Value> = taints
            .into_iter()
            .filter(|t| t["key"] != SHUTDOWN_TAINT)
            .filter(|t| !(running && is_not_ready_taint(t)))
            .collect();
        if !running {
            next.push(shutdown_taint());
        }
        next
    });
    NodeUpdate { conditions, taints }
}

fn is_not_ready_taint(taint: &Value) -> bool {
    taint["key"] == NOT_READY_TAINT && taint["effect"] == "NoSchedule"
}

/// The Nodes whose VM is gone: the CCM's `InstanceExistsByProviderID` is false for them and
/// the node lifecycle controller deletes them. Nodes of another cloud are left alone.
pub fn orphans<'a>(live: &'a [Value], view: &ClusterView) -> Vec<&'a str> {
    live.iter()
        .filter(|n| {
            let id = n["spec"]["providerID"].as_str().unwrap_or("");
            id.strip_prefix(PROVIDER_SCHEME)
                .is_some_and(|vm| !view.nodes.iter().any(|v| v.vm_id == vm))
        })
        .filter_map(|n| n["metadata"]["name"].as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(running: bool) -> NodeView {
        NodeView {
            vm_id: "4b1d".into(),
            name: "lab-node-1a2b3c".into(),
            ip: "10.1.1.21".into(),
            running,
            offering: "Small Instance".into(),
            zone: "zone-1".into(),
            role: Role::Worker,
        }
    }

    #[test]
    fn label_values_lose_what_a_label_may_not_hold() {
        assert_eq!(label_value("Small Instance"), "SmallInstance");
        assert_eq!(label_value("zone-1"), "zone1");
        assert_eq!(label_value("a.b_c"), "abc");
        assert_eq!(label_value(" x "), "x");
    }

    #[test]
    fn a_node_carries_the_ccm_metadata() {
        let node = node_object(&worker(true), "1.30.2");
        assert_eq!(node["spec"]["providerID"], "external-cloudstack://4b1d");
        let labels = &node["metadata"]["labels"];
        assert_eq!(labels["node.kubernetes.io/instance-type"], "SmallInstance");
        assert_eq!(labels["topology.kubernetes.io/zone"], "zone1");
        assert_eq!(labels["topology.kubernetes.io/region"], "zone1");
        assert_eq!(
            node["status"]["addresses"],
            json!([{"type": "InternalIP", "address": "10.1.1.21"}])
        );
        assert_eq!(node["status"]["conditions"][0]["status"], "True");
        assert_eq!(node["spec"]["taints"], json!([]));
    }

    #[test]
    fn a_running_vms_node_loses_the_not_ready_taint_admission_gave_it() {
        let mut live = node_object(&worker(true), "v1.33.1");
        live["spec"]["taints"] = json!([
            {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
            {"key": NOT_READY_TAINT, "effect": "NoSchedule"},
        ]);
        let update = node_update(&live, true);
        assert_eq!(
            update.taints,
            Some(vec![
                json!({"key": "dedicated", "value": "db", "effect": "NoSchedule"})
            ])
        );
        let stopped = node_update(&live, false)
            .taints
            .expect("shutdown taint added");
        assert!(
            stopped.iter().any(is_not_ready_taint),
            "kept while not running"
        );
    }

    #[test]
    fn a_stopped_vm_makes_its_node_not_ready_and_tainted_shutdown_and_back() {
        let live = node_object(&worker(true), "1.30.2");
        let down = node_update(&live, false);
        let conditions = down.conditions.expect("Ready changes");
        assert_eq!(conditions[0]["status"], "Unknown");
        let taints = down.taints.expect("tainted");
        assert_eq!(taints[0]["key"], SHUTDOWN_TAINT);
        let stopped = node_object(&worker(false), "1.30.2");
        let up = node_update(&stopped, true);
        assert_eq!(up.conditions.unwrap()[0]["status"], "True");
        assert_eq!(up.taints.unwrap(), Vec::<Value>::new());
        let same = node_update(&live, true);
        assert!(same.conditions.is_none() && same.taints.is_none());
    }

    #[test]
    fn only_this_cloud_s_nodes_without_a_vm_are_orphans() {
        let view = ClusterView {
            id: "c".into(),
            name: "lab".into(),
            state: "Running".into(),
            version: "1.30.2".into(),
            nodes: vec![worker(true)],
        };
        let live = vec![
            node_object(&worker(true), "1.30.2"),
            json!({"metadata": {"name": "gone"}, "spec": {"providerID": "external-cloudstack://dead"}}),
            json!({"metadata": {"name": "other"}, "spec": {"providerID": "cloudscale://x"}}),
        ];
        assert_eq!(orphans(&live, &view), ["gone"]);
    }
}
