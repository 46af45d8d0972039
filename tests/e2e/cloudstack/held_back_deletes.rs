//! What apply holds back when removals are refused, in the order deletes run: a load balancer
//! goes before the cluster it runs on. Its refused removal keeps the cluster (which cannot go
//! while it stands); the cluster's refused removal lets the load balancer go.

use crate::cloudstack::support::CsProject;

const CLUSTER_AND_EDGE: &str = "[cluster.lab]\nprovider = \"cloudstack\"\nzone = \"zone1\"\n\
     kubernetes-version = \"1.29.3\"\nworkers = 2\nservice-offering = \"Medium Instance\"\n\n\
     [load-balancer.edge]\nprovider = \"cloudstack\"\ncluster = \"lab\"\n\n\
     [[load-balancer.edge.ports]]\nport = 80\nnode-port = 30080\n";

#[test]
fn cs_a_refused_removal_holds_back_only_the_deletes_that_must_follow_it() {
    let project = CsProject::new();
    project.config(CLUSTER_AND_EDGE);
    project.apply_converges();
    project.config("");

    // The cluster may go, its load balancer may not: the cluster stays too, and with
    // nothing applied apply fails.
    let out = project.apply(&["--allow-delete", "cluster.lab"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains(
            "held back: cluster.lab (forbidden): load-balancer.edge depends on it and is held back, so it stays"
        ),
        "{out:?}"
    );
    assert!(
        out.stderr.contains(
            "held back: load-balancer.edge (forbidden): forbidden: removed from the config; name it with --allow-delete load-balancer.edge to do it anyway"
        ),
        "{out:?}"
    );
    let account = project.account();
    assert_eq!((account.clusters.len(), account.rules.len()), (1, 1));

    // The load balancer may go, the cluster may not: the load balancer goes (exit 4).
    let out = project.apply(&["--allow-delete", "load-balancer.edge"]);
    assert_eq!(out.code, 4, "{out:?}");
    assert!(
        out.stderr.contains(
            "held back: cluster.lab (forbidden): forbidden: removed from the config; name it with --allow-delete cluster.lab to do it anyway"
        ),
        "{out:?}"
    );
    assert_eq!(out.stderr.matches("held back:").count(), 1, "{out:?}");
    let account = project.account();
    assert_eq!((account.clusters.len(), account.rules.len()), (1, 0));
}
