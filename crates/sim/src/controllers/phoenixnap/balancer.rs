//! The CCM's `cloudprovider.LoadBalancer` (`loadbalancers.go` v1.0.0, research §6.4-6.5):
//! GetLoadBalancer, EnsureLoadBalancer, UpdateLoadBalancer and EnsureLoadBalancerDeleted,
//! call for call, bugs included:
//! - the first Ensure of a Service returns `ingress: [{ip: ""}]` (addService returns a string
//!   it never set); the real address is published by the next sync, which the CCM's own write
//!   of `spec.loadBalancerIP` triggers;
//! - a `loadBalancerIP` set before the block exists is never corrected (addService writes only
//!   an empty one), so Get errors "does not contain IP" from then on;
//! - the attach is not waited for: Get errors "has no assigned resource type" until it is done.

use serde_json::{json, Value};

use super::super::http::Kube;
use super::super::objects::Node;
use super::blocks::{
    self, contains, create_body, ensure_tags, release_tags, service_address, IpBlock, Keep,
    ALL_TAGS, PUBLIC_NETWORK,
};
use super::client::PnapApi;
use super::config::LbSettings;

/// What a nil `implementor` does when the scheme of `PNAP_LOAD_BALANCER` is not kube-vip.
pub const NIL_IMPLEMENTOR_PANIC: &str = "panic: runtime error: invalid memory address or nil \
     pointer dereference (the load balancer implementor is nil: PNAP_LOAD_BALANCER's scheme \
     is not kube-vip)";

/// The fields of a Service the load balancer reads, from the object the controller holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbService {
    pub namespace: String,
    pub name: String,
    pub load_balancer_ip: String,
}

impl LbService {
    pub fn from_json(raw: &Value) -> Option<LbService> {
        Some(LbService {
            namespace: raw["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_owned(),
            name: raw["metadata"]["name"].as_str()?.to_owned(),
            load_balancer_ip: raw["spec"]["loadBalancerIP"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
        })
    }

    /// `serviceRep`: `namespace/name`.
    pub fn rep(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    fn path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/services/{}",
            self.namespace, self.name
        )
    }
}

/// One CCM's load balancer: its clients, settings and cluster ID (the kube-system UID).
pub struct Balancer<'a> {
    pub api: &'a PnapApi,
    pub kube: &'a Kube,
    pub settings: &'a LbSettings,
    pub cluster_id: &'a str,
}

fn ingress(ip: &str) -> Vec<Value> {
    vec![json!({"ip": ip})]
}

fn is_public_network(kind: &str) -> bool {
    PUBLIC_NETWORK.contains(&kind)
}

impl Balancer<'_> {
    async fn active_blocks(&self, service: &LbService) -> Result<Vec<IpBlock>, String> {
        let key = Some((service.namespace.as_str(), service.name.as_str()));
        blocks::ip_blocks(self.api, self.cluster_id, key, Keep::Active).await
    }

    /// GetLoadBalancer: the ingress when the Service's IP is in its one active block and that
    /// block is assigned to the configured network; `None` when the Service has no IP or no
    /// block. The block's `status` is not looked at.
    pub async fn get(&self, service: &LbService) -> Result<Option<Vec<Value>>, String> {
        let ip = &service.load_balancer_ip;
        if ip.is_empty() {
            return Ok(None);
        }
        let parsed: std::net::IpAddr = ip
            .parse()
            .map_err(|e| format!("invalid service IP {ip}: {e}"))?;
        let mut blocks = self.active_blocks(service).await?;
        let block = match blocks.len() {
            0 => return Ok(None),
            1 => blocks.remove(0),
            _ => {
                return Err(format!(
                    "more than one block found for service {}",
                    service.rep()
                ))
            }
        };
        let cidr = &block.cidr;
        if !contains(cidr, ip)? {
            return Err(format!("block {cidr} does not contain IP {parsed}"));
        }
        let Some(kind) = &block.assigned_resource_type else {
            return Err(format!("block {cidr} has no assigned resource type"));
        };
        if !is_public_network(kind) {
            return Err(format!("block {cidr} is not assigned to a public network"));
        }
        let Some(network) = &block.assigned_resource_id else {
            return Err(format!("block {cidr} has no assigned resource ID"));
        };
        if *network != self.settings.network {
            return Err(format!(
                "block {cidr} is assigned to network {network} instead of expected {}",
                self.settings.network
            ));
        }
        Ok(Some(ingress(&parsed.to_string())))
    }

    /// EnsureLoadBalancer: Get; else the one active block or a new one (tags ensured first),
    /// attached to the network unless it is assigned already, then addService.
    pub async fn ensure(
        &self,
        service: &LbService,
        nodes: &[Node],
        actions: &mut Vec<String>,
    ) -> Result<Vec<Value>, String> {
        if let Some(status) = self.get(service).await? {
            return Ok(status);
        }
        let mut blocks = self.active_blocks(service).await?;
        let block = match blocks.len() {
            0 => self.create_block(service, actions).await?,
            1 => blocks.remove(0),
            _ => {
                return Err(format!(
                    "more than one block found for service {}",
                    service.rep()
                ))
            }
        };
        self.attach_unless_assigned(&block, actions).await?;
        let ip = service_address(&block.cidr)?;
        let returned = self
            .add_service(service, &ip, nodes, actions)
            .await
            .map_err(|e| format!("failed to add service {}: {e}", service.name))?;
        // `strings.SplitN(ipCidr, "/", 2)[0]` of the never-set string.
        Ok(ingress(returned.split('/').next().unwrap_or("")))
    }

    async fn create_block(
        &self,
        service: &LbService,
        actions: &mut Vec<String>,
    ) -> Result<IpBlock, String> {
        let created = ensure_tags(self.api, &ALL_TAGS)
            .await
            .map_err(|e| format!("unable to ensure tags exist: {e}"));
        let created = created?;
        actions.extend(created.iter().map(|name| format!("create tag {name}")));
        let body = create_body(
            &self.settings.location,
            self.cluster_id,
            &service.namespace,
            &service.name,
        );
        let raw = self
            .api
            .ips
            .post("/ip-blocks", &body)
            .await
            .map_err(|e| format!("unable to create new IP block: {e}"))?;
        let block: IpBlock = serde_json::from_value(raw)
            .map_err(|e| format!("unable to create new IP block: undecodable answer: {e}"))?;
        actions.push(format!(
            "create ip block {} {} in {}",
            block.id, block.cidr, self.settings.location
        ));
        Ok(block)
    }

    async fn attach_unless_assigned(
        &self,
        block: &IpBlock,
        actions: &mut Vec<String>,
    ) -> Result<(), String> {
        let cidr = &block.cidr;
        let network = &self.settings.network;
        if let Some(kind) = &block.assigned_resource_type {
            if !is_public_network(kind) {
                return Err(format!(
                    "block {cidr} is assigned to {kind} and not to a public network"
                ));
            }
            let Some(id) = &block.assigned_resource_id else {
                return Err(format!(
                    "block {cidr} has an assigned resource type {kind} but not ID"
                ));
            };
            if id != network {
                return Err(format!(
                    "block {cidr} is assigned to network {id} instead of expected {network}"
                ));
            }
            return Ok(());
        }
        let path = format!("/public-networks/{network}/ip-blocks");
        self.api
            .networks
            .post(&path, &json!({"id": block.id}))
            .await
            .map_err(|e| format!("unable to assign block {cidr} to network {network}: {e}"))?;
        actions.push(format!("attach ip block {cidr} to network {network}"));
        Ok(())
    }

    /// addService: only a Service without an IP gets one (a fresh GET, the field set, a full
    /// PUT); then the implementor. Returns `svcIPCidr`, which nothing ever sets.
    async fn add_service(
        &self,
        service: &LbService,
        ip: &str,
        _nodes: &[Node],
        actions: &mut Vec<String>,
    ) -> Result<String, String> {
        let svc_ip_cidr = String::new();
        if service.load_balancer_ip.is_empty() {
            let rep = service.rep();
            let mut existing = self
                .kube
                .get(&service.path())
                .await
                .map_err(|e| format!("failed to get latest for service {rep}: {e}"))?;
            existing["spec"]["loadBalancerIP"] = json!(ip);
            self.kube
                .put(&service.path(), &existing)
                .await
                .map_err(|e| format!("failed to update service {rep}: {e}"))?;
            actions.push(format!("set loadBalancerIP {ip}"));
        }
        if !self.settings.kube_vip {
            return Err(NIL_IMPLEMENTOR_PANIC.into());
        }
        // kube-vip's AddService is a no-op.
        Ok(svc_ip_cidr)
    }

    /// UpdateLoadBalancer: no PhoenixNAP call; an error when a node has no providerID (the
    /// node selector is never read from the config, so every node counts).
    pub fn update(&self, nodes: &[Node]) -> Result<(), String> {
        if let Some(node) = nodes.iter().find(|n| n.provider_id().is_none()) {
            return Err(format!(
                "no provider ID given for node {}, skipping",
                node.metadata.name
            ));
        }
        if !self.settings.kube_vip {
            return Err(NIL_IMPLEMENTOR_PANIC.into());
        }
        Ok(())
    }

    /// EnsureLoadBalancerDeleted: clear `spec.loadBalancerIP` (a failed GET is ignored, a
    /// failed PUT is the error), then re-tag the one active block for the reaper. Nothing is
    /// detached or deleted here.
    pub async fn ensure_deleted(
        &self,
        service: &LbService,
        actions: &mut Vec<String>,
    ) -> Result<(), String> {
        let rep = service.rep();
        if let Ok(mut existing) = self.kube.get(&service.path()).await {
            existing["spec"]["loadBalancerIP"] = json!("");
            self.kube
                .put(&service.path(), &existing)
                .await
                .map_err(|e| format!("failed to update service {rep}: {e}"))?;
            actions.push("clear loadBalancerIP".into());
        }
        let blocks = self
            .active_blocks(service)
            .await
            .map_err(|e| format!("unable to retrieve IP reservations: {e}"))?;
        let block = match blocks.as_slice() {
            [] => return Ok(()),
            [block] => block,
            _ => return Err(format!("multiple IP blocks found for {rep}, cannot delete")),
        };
        let path = format!("/ip-blocks/{}/tags", block.id);
        self.api
            .ips
            .put(&path, &release_tags(block))
            .await
            .map_err(|e| format!("unable to add 'delete' tag from IP block {}: {e}", block.id))?;
        actions.push(format!(
            "tag ip block {} {} delete=true",
            block.id, block.cidr
        ));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_view_reads_namespace_name_and_ip() {
        let raw = json!({"metadata": {"name": "web", "namespace": "shop"}, "spec": {"loadBalancerIP": "1.2.3.4"}});
        let service = LbService::from_json(&raw).unwrap();
        assert_eq!(service.rep(), "shop/web");
        assert_eq!(service.load_balancer_ip, "1.2.3.4");
        let bare = LbService::from_json(&json!({"metadata": {"name": "web"}})).unwrap();
        assert_eq!(
            (bare.namespace.as_str(), bare.load_balancer_ip.as_str()),
            ("default", "")
        );
    }

    #[test]
    fn both_spellings_of_a_public_network_count() {
        assert!(is_public_network("public network"));
        assert!(is_public_network("PUBLIC_NETWORK"));
        assert!(!is_public_network("server"));
    }
}
