//! `in-cluster = true` with a real service-account token: a ServiceAccount and a token from the
//! TokenRequest API (`kubectl create token`) of the real kube-apiserver, written where a pod
//! has them (token, ca.crt, namespace) in a directory of the test's own, with
//! KUBERNETES_SERVICE_HOST/PORT as the kubelet sets them. skyplan then plans, applies and
//! checks drift of a node policy with its state in the pod's namespace, as the CronJob of
//! `examples/in-cluster/` does. (Outside a pod — the one test here that needs no server — the
//! error names what is absent.)

use std::path::Path;

use base64::Engine;
use serde_json::{json, Value};

use crate::kubernetes::real_apiserver::{drift_status, unwrapped, RealCluster};
use crate::support::{Output, Project};

/// A pod's view of the cluster: the service account's files and the service's address.
pub struct Pod {
    dir: tempfile::TempDir,
    host: String,
    port: String,
}

impl Pod {
    /// A ServiceAccount `skyplan` in `namespace` and a token for it, as a pod of it would see.
    pub fn of_service_account(cluster: &RealCluster, namespace: &str) -> Pod {
        cluster.kubectl_ok(&["create", "serviceaccount", "skyplan", "-n", namespace]);
        let token = cluster.kubectl_ok(&[
            "create",
            "token",
            "skyplan",
            "-n",
            namespace,
            "--duration",
            "1h",
        ]);
        let kubeconfig: Value =
            serde_norway::from_str(&std::fs::read_to_string(&cluster.kubeconfig).unwrap()).unwrap();
        let server = &kubeconfig["clusters"][0]["cluster"];
        let ca = base64::engine::general_purpose::STANDARD
            .decode(server["certificate-authority-data"].as_str().unwrap())
            .unwrap();
        let url = server["server"].as_str().unwrap();
        let (host, port) = url.trim_start_matches("https://").split_once(':').unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), token.trim()).unwrap();
        std::fs::write(dir.path().join("ca.crt"), ca).unwrap();
        std::fs::write(dir.path().join("namespace"), namespace).unwrap();
        Pod {
            dir,
            host: host.to_string(),
            port: port.to_string(),
        }
    }

    /// What an apply as this pod needs beyond what the example's drift RBAC grants: patching
    /// nodes, and writing the state's Secrets and its Lease in the pod's namespace. The server
    /// authorises with RBAC, so without a grant the service account may do nothing.
    pub fn grant_apply(cluster: &RealCluster, namespace: &str) -> Grant {
        let name = format!("{namespace}-apply");
        let account = format!("--serviceaccount={namespace}:skyplan");
        cluster.kubectl_ok(&[
            "create",
            "clusterrole",
            &name,
            "--verb=get,list,patch",
            "--resource=nodes,services",
        ]);
        cluster.kubectl_ok(&[
            "create",
            "clusterrolebinding",
            &name,
            &format!("--clusterrole={name}"),
            &account,
        ]);
        let state = [
            "--verb=get,list,create,update,patch,delete",
            "--resource=secrets,leases.coordination.k8s.io",
        ];
        cluster.kubectl_ok(&["create", "role", &name, "-n", namespace, state[0], state[1]]);
        cluster.kubectl_ok(&[
            "create",
            "rolebinding",
            &name,
            "-n",
            namespace,
            &format!("--role={name}"),
            &account,
        ]);
        Grant {
            name,
            namespace: namespace.to_string(),
        }
    }

    /// `project`'s skyplan run as in the pod: the service account's environment, no kubeconfig.
    pub fn run(&self, project: &Project, args: &[&str]) -> Output {
        let mut command = project.command(args);
        command
            .env("KUBERNETES_SERVICE_HOST", &self.host)
            .env("KUBERNETES_SERVICE_PORT", &self.port)
            .env("SKYPLAN_TEST_SERVICE_ACCOUNT_DIR", self.dir.path())
            .env_remove("KUBECONFIG")
            .env("HOME", project.path());
        crate::support::run(&mut command)
    }
}

/// An RBAC grant of the test's own; `revoke` takes it back (the cluster-scoped half outlives
/// the test's namespace otherwise).
pub struct Grant {
    name: String,
    namespace: String,
}

impl Grant {
    pub fn revoke(&self, cluster: &RealCluster) {
        cluster.kubectl_ok(&["delete", "clusterrolebinding,clusterrole", &self.name]);
        cluster.kubectl_ok(&[
            "delete",
            "rolebinding,role",
            &self.name,
            "-n",
            &self.namespace,
        ]);
    }
}

const IN_CLUSTER: &str = "[cluster.prod]\nprovider = \"kubernetes\"\nin-cluster = true\n\n\
                          [backend.kubernetes]\nin-cluster = true\n\n";

fn policy(cluster: &RealCluster, tier: &str) -> String {
    format!(
        "[nodes.web]\ncluster = \"prod\"\nnames = [\"{}-node-*\"]\nlabels = {{ tier = \"{tier}\" }}\n",
        cluster.prefix
    )
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_pods_service_account_plans_applies_and_checks_drift_with_its_state_in_the_pods_namespace() {
    let cluster = RealCluster::get();
    let namespace = cluster.namespace("pod");
    let node = cluster.ready_node("node-1", json!({}), "10.9.1.1");
    let pod = Pod::of_service_account(&cluster, &namespace);
    let grant = Pod::grant_apply(&cluster, &namespace);
    let project = Project::new();
    project.config(&format!("{IN_CLUSTER}{}", policy(&cluster, "web")));

    let plan = pod.run(&project, &["plan", "--json"]);
    assert_eq!(plan.code, 0, "{plan:?}");
    let changes = plan.json()["changes"].as_array().cloned().unwrap();
    let web = changes.iter().find(|c| c["address"] == "nodes.web");
    assert_eq!(
        web.map(|c| c["action"].clone()),
        Some(json!("create")),
        "{plan:?}"
    );
    let apply = pod.run(&project, &["apply", "--auto-approve"]);
    assert_eq!(apply.code, 0, "{apply:?}");
    assert_eq!(cluster.node(&node)["metadata"]["labels"]["tier"], "web");
    // The state is in the pod's namespace, the Lease released.
    let index = cluster.object(&["secret", "skyplan-state-default", "-n", &namespace]);
    assert_eq!(index["metadata"]["annotations"]["skyplan.io/serial"], "1");
    let lease = cluster.object(&["lease", "skyplan-lock-default", "-n", &namespace]);
    assert!(lease["spec"]["holderIdentity"].is_null(), "{lease:#}");

    let clean = pod.run(&project, &["drift", "--format", "json"]);
    assert_eq!(drift_status(&clean, "nodes.web"), "in-sync", "{clean:?}");
    cluster.kubectl_ok(&["label", "node", &node, "tier=changed", "--overwrite"]);
    let drift = pod.run(&project, &["drift", "--format", "json"]);
    assert_eq!(drift.code, 2, "{drift:?}");
    assert_eq!(
        drift_status(&drift, "nodes.web"),
        "drifted",
        "a label changed with kubectl is drift: {drift:?}"
    );
    grant.revoke(&cluster);
}

#[test]
#[ignore = "needs kube-apiserver and kubectl: SKYPLAN_TEST_KUBECONFIG (.ci/run starts one)"]
fn a_token_the_server_does_not_accept_is_refused() {
    let cluster = RealCluster::get();
    let namespace = cluster.namespace("bad");
    let pod = Pod::of_service_account(&cluster, &namespace);
    std::fs::write(pod.dir.path().join("token"), "not-a-token").unwrap();
    let project = Project::new();
    project.config(&format!("{IN_CLUSTER}{}", policy(&cluster, "web")));
    let out = pod.run(&project, &["plan"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(unwrapped(&out.stderr).contains("Unauthorized"), "{out:?}");
}

/// Outside a pod, the error names every piece of the service account that is absent.
#[test]
fn in_cluster_outside_a_pod_names_what_is_absent() {
    let project = Project::new();
    project.config("[cluster.prod]\nprovider = \"kubernetes\"\nin-cluster = true\n\n\
                    [nodes.web]\ncluster = \"prod\"\nnames = [\"w-*\"]\nlabels = { tier = \"web\" }\n");
    let empty = tempfile::tempdir().unwrap();
    let mut command = project.command(&["plan"]);
    command
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env("SKYPLAN_TEST_SERVICE_ACCOUNT_DIR", empty.path());
    let out = crate::support::run(&mut command);
    assert_eq!(out.code, 1, "{out:?}");
    let message = unwrapped(&out.stderr);
    let dir = empty.path().display().to_string();
    for absent in [
        "not a pod with a service account".to_string(),
        "KUBERNETES_SERVICE_HOST is not set".to_string(),
        format!("{}", Path::new(&dir).join("token").display()),
        format!("{}", Path::new(&dir).join("namespace").display()),
    ] {
        assert!(
            message.contains(&absent),
            "{absent} missing from: {message}"
        );
    }
}
