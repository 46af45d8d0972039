//! The cloudscale CCM's `LoadBalancer` implementation (loadbalancer.go): EnsureLoadBalancer,
//! UpdateLoadBalancer and EnsureLoadBalancerDeleted over the reconcile loop, with
//! `ensureValidConfig`, the node selector and the status it reports.

use serde_json::{json, Value};

use super::actual::actual_state;
use super::config::{self, LbConfig, FLOATING_IPS};
use super::desired::desired_state;
use super::http::{Cloud, Kube};
use super::objects::{Node, Service};
use super::reconcile::{reconcile, Clock, Outcome};
use super::servers::servers_of;

pub struct Balancer<'a> {
    pub kube: &'a Kube,
    pub cloud: &'a Cloud,
    pub clock: Clock,
}

/// What Ensure hands back to the service controller.
pub struct Ensured {
    pub annotations: Vec<(&'static str, String)>,
    pub ingress: Vec<Value>,
}

impl Balancer<'_> {
    pub async fn ensure(
        &self,
        service: &Service,
        all_services: &[Service],
        nodes: &[Node],
        outcome: &mut Outcome,
    ) -> Result<Ensured, String> {
        let config = LbConfig::from_service(service)?;
        ensure_valid_config(service, &config, all_services)?;
        if nodes.is_empty() {
            return Err("no valid nodes for service found, please verify there is at least one that allows load balancers".into());
        }
        let selected = self.select(&config, nodes, outcome);
        self.converge(service, &config, &selected, outcome).await?;
        let lb = actual_state(self.cloud, &config)
            .await?
            .lb
            .ok_or("the load balancer vanished after reconciling")?;
        let ingress = ingress(&config, &lb_vips(&lb), self.supports_ip_mode().await?);
        Ok(Ensured {
            annotations: vec![
                (config::UUID, lb.uuid.clone()),
                (config::CONFIG_VERSION, "1".into()),
                (config::ZONE, lb.spec.zone.clone()),
            ],
            ingress,
        })
    }

    pub async fn update(
        &self,
        service: &Service,
        all_services: &[Service],
        nodes: &[Node],
        outcome: &mut Outcome,
    ) -> Result<(), String> {
        let config = LbConfig::from_service(service)?;
        ensure_valid_config(service, &config, all_services)?;
        let selected = self.select(&config, nodes, outcome);
        self.converge(service, &config, &selected, outcome).await
    }

    pub async fn delete(
        &self,
        service: &Service,
        all_services: &[Service],
        outcome: &mut Outcome,
    ) -> Result<(), String> {
        let config = LbConfig::from_service(&lookup_only(service))?;
        ensure_valid_config(service, &config, all_services)?;
        let cloud = self.cloud;
        reconcile(
            cloud,
            self.clock,
            || async { Ok(None) },
            || actual_state(cloud, &config),
            outcome,
        )
        .await
    }

    /// `filterNodesBySelector`; nothing left is a warning, not an error.
    fn select(&self, config: &LbConfig, nodes: &[Node], outcome: &mut Outcome) -> Vec<Node> {
        let selected: Vec<Node> = nodes
            .iter()
            .filter(|n| config.node_selector.matches(&n.metadata.labels))
            .cloned()
            .collect();
        if selected.is_empty() {
            outcome.warnings.push("NoValidNodes".into());
        }
        selected
    }

    async fn converge(
        &self,
        service: &Service,
        config: &LbConfig,
        nodes: &[Node],
        outcome: &mut Outcome,
    ) -> Result<(), String> {
        let cloud = self.cloud;
        reconcile(
            cloud,
            self.clock,
            || async {
                let servers = servers_of(cloud, nodes).await.map_err(|e| {
                    format!(
                        "unable to get load balancer for {}: {e}",
                        service.metadata.name
                    )
                })?;
                desired_state(service, config, &servers).map(Some)
            },
            || actual_state(cloud, config),
            outcome,
        )
        .await
    }

    /// `ipMode` needs Kubernetes ≥ 1.30; major and minor must be plain integers, or Ensure
    /// fails (a minor such as `30+` does).
    async fn supports_ip_mode(&self) -> Result<bool, String> {
        let version = self
            .kube
            .get("/version")
            .await
            .map_err(|e| format!("unable to get kubernetes version: {e}"))?;
        let number = |field: &str| -> Result<u32, String> {
            let text = version[field].as_str().unwrap_or_default();
            text.parse()
                .map_err(|_| format!("invalid kubernetes {field} version {text:?}"))
        };
        let (major, minor) = (number("major")?, number("minor")?);
        Ok(major > 1 || (major == 1 && minor >= 30))
    }
}

/// Deletion only needs what finds the load balancer and what `ensureValidConfig` reads.
fn lookup_only(service: &Service) -> Service {
    let mut service = service.clone();
    let keep = [
        config::UUID,
        FLOATING_IPS,
        "k8s.cloudscale.ch/loadbalancer-name",
    ];
    service
        .metadata
        .annotations
        .retain(|k, _| keep.contains(&k.as_str()));
    service
}

/// `ensureValidConfig`: a floating IP claimed by another LoadBalancer Service refuses any
/// change, deletion included, so the two do not take it from each other in turn.
pub fn ensure_valid_config(
    service: &Service,
    config: &LbConfig,
    all_services: &[Service],
) -> Result<(), String> {
    if config.floating_ips.is_empty() {
        return Ok(());
    }
    for other in all_services {
        if other.key() == service.key() || other.spec.kind.as_deref() != Some("LoadBalancer") {
            continue;
        }
        let Some(text) = other.metadata.annotations.get(FLOATING_IPS) else {
            continue;
        };
        let claimed: Vec<String> = serde_json::from_str(text).unwrap_or_default();
        if let Some(ip) = config.floating_ips.iter().find(|ip| claimed.contains(ip)) {
            return Err(format!(
                "at least one other service ({}) uses the floating IP {ip}",
                other.key()
            ));
        }
    }
    Ok(())
}

fn lb_vips(lb: &super::lbstate::ActualLb) -> Vec<String> {
    lb.spec
        .vip_addresses
        .iter()
        .filter_map(|vip| vip.address.clone())
        .collect()
}

/// `loadBalancerStatus`: the forced hostname alone, else one entry per VIP (never the
/// floating IPs), with the ip mode where the cluster knows the field.
pub fn ingress(config: &LbConfig, vips: &[String], ip_mode: bool) -> Vec<Value> {
    if !config.force_hostname.is_empty() {
        return vec![json!({"hostname": config.force_hostname})];
    }
    vips.iter()
        .map(|ip| {
            if ip_mode {
                json!({"ip": ip, "ipMode": config.ip_mode})
            } else {
                json!({"ip": ip})
            }
        })
        .collect()
}

/// cloud-provider v0.29 `stableNodeSetPredicates`: not being deleted, no
/// exclude-from-external-load-balancers label (its mere presence), no autoscaler
/// deletion taint. Readiness is not one of them.
pub fn lb_candidate(node: &Node) -> bool {
    node.metadata.deletion_timestamp.is_none()
        && !node
            .metadata
            .labels
            .contains_key("node.kubernetes.io/exclude-from-external-load-balancers")
        && !node.has_taint("ToBeDeletedByClusterAutoscaler")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(name: &str, fips: Option<&str>) -> Service {
        let mut s = Service::default();
        s.metadata.name = name.into();
        s.spec.kind = Some("LoadBalancer".into());
        if let Some(fips) = fips {
            s.metadata
                .annotations
                .insert(FLOATING_IPS.into(), fips.into());
        }
        s
    }

    #[test]
    fn a_floating_ip_claimed_twice_is_refused() {
        let a = service("a", Some(r#"["5.102.150.1/32"]"#));
        let b = service("b", Some(r#"["5.102.150.1/32"]"#));
        let config = LbConfig::from_service(&a).unwrap();
        assert!(ensure_valid_config(&a, &config, &[a.clone(), b.clone()]).is_err());
        let mut plain = b.clone();
        plain.spec.kind = Some("ClusterIP".into());
        assert!(ensure_valid_config(&a, &config, &[a.clone(), plain]).is_ok());
    }

    #[test]
    fn ingress_is_the_vips_or_the_forced_hostname() {
        let mut s = service("a", None);
        let config = LbConfig::from_service(&s).unwrap();
        let vips = ["5.102.144.9".to_string()];
        assert_eq!(
            ingress(&config, &vips, true),
            vec![json!({"ip": "5.102.144.9", "ipMode": "Proxy"})]
        );
        assert_eq!(
            ingress(&config, &vips, false),
            vec![json!({"ip": "5.102.144.9"})]
        );
        s.metadata.annotations.insert(
            "k8s.cloudscale.ch/loadbalancer-force-hostname".into(),
            "lb.example".into(),
        );
        let forced = LbConfig::from_service(&s).unwrap();
        assert_eq!(
            ingress(&forced, &vips, true),
            vec![json!({"hostname": "lb.example"})]
        );
    }

    #[test]
    fn node_predicates_ignore_readiness_but_not_the_exclude_label() {
        let mut node = Node::default();
        assert!(lb_candidate(&node));
        node.metadata.labels.insert(
            "node.kubernetes.io/exclude-from-external-load-balancers".into(),
            "false".into(),
        );
        assert!(
            !lb_candidate(&node),
            "v0.29: presence excludes, whatever the value"
        );
    }
}
