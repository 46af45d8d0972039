//! Carrying out one load balancer's operations in order: each mutating call recorded in the
//! journal before and after, asynchronous attach and detach followed until the block's status
//! settles, and a create whose answer was lost looked for by its tags before anything else.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Service;
use serde_json::json;

use super::api::IpBlock;
use super::ccm::{self, Owner};
use super::client::{Error, PnapClient};
use super::ops::{BlockRef, Op};
use skyplan_core::model::Address;
use skyplan_core::state::journal::{Journal, Phase};
use skyplan_kubernetes::connection::ClusterConnection;
use skyplan_kubernetes::service_write::{
    write_service_journaled, ManagedAnnotations, ServiceWrite,
};

/// The PhoenixNAP CCM reads no annotations (the README's location annotation is never read).
const MANAGED: ManagedAnnotations = ManagedAnnotations {
    prefix: "phoenixnap.com/",
    controller_owned: &[],
};

/// How long an attach or detach may take before apply gives up (Terraform's provider waits 15
/// minutes too).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Everything one resource's apply works with.
pub struct Executor<'a> {
    pub client: &'a PnapClient,
    pub journal: &'a Journal,
    pub address: &'a Address,
    /// The Service's cluster (None: not connected; Service writes then fail).
    pub cluster: Option<&'a ClusterConnection>,
    /// The Service as refresh read it; replaced by each write's answer.
    pub service: Option<Service>,
    /// The Service's owner tags, for finding a block whose create answer was lost.
    pub owner: Option<Owner<'a>>,
    /// The block `CreateBlock` made in this apply.
    pub new_block: Option<IpBlock>,
    /// How often a settling block is read.
    pub poll: Duration,
}

/// 409 "The resource is in an incompatible state": the network is busy with another block.
fn is_conflict(error: &Error) -> bool {
    error.status().map(|s| s.as_u16()) == Some(409)
}

fn failure(e: &Error) -> Option<String> {
    Some(e.to_string())
}

impl Executor<'_> {
    pub async fn run(&mut self, op: &Op) -> Result<(), String> {
        let text = op.to_string();
        tracing::info!(address = %self.address, "{text}");
        match op {
            Op::CreateTagNames { names } => self.create_tag_names(&text, names).await,
            Op::CreateBlock {
                location,
                description,
                tags,
            } => self.create_block(&text, location, description, tags).await,
            Op::Attach { network, block, .. } => self.attach(&text, network, block).await,
            Op::WriteService {
                namespace,
                name,
                block,
                ..
            } => self.write_service(&text, namespace, name, block).await,
            Op::ClearService {
                namespace,
                name,
                service_type,
            } => {
                self.clear_service(&text, namespace, name, service_type)
                    .await
            }
            Op::MarkReleased { block } => self.mark_released(&text, block).await,
            Op::Detach { network, block } => self.detach(&text, network, block).await,
            Op::DeleteBlock { block } => self.delete_block(&text, block).await,
        }
    }

    fn record(
        &self,
        phase: Phase,
        text: &str,
        ids: Option<serde_json::Value>,
        error: Option<String>,
    ) -> Result<(), String> {
        self.journal
            .record(self.address, phase, text, ids, error)
            .map_err(|e| e.to_string())
    }

    /// Records the call before and after, whatever its outcome.
    async fn journaled<T>(
        &self,
        text: &str,
        call: impl std::future::Future<Output = Result<T, Error>>,
    ) -> Result<Result<T, Error>, String> {
        self.record(Phase::Intent, text, None, None)?;
        let result = call.await;
        self.journal.checkpoint("call");
        let (phase, error) = match &result {
            Ok(_) => (Phase::Done, None),
            Err(e) => (Phase::Failed, failure(e)),
        };
        self.record(phase, text, None, error)?;
        Ok(result)
    }

    /// The tag names the CCM needs, as one journalled step: each is created or already there,
    /// so a repeat after any interruption is harmless.
    async fn create_tag_names(&self, text: &str, names: &[String]) -> Result<(), String> {
        let result = self.journaled(text, self.create_each_tag(names)).await?;
        result.map_err(|e| e.to_string())
    }

    /// A name another run (or the CCM) created meanwhile is a 409: already there is fine.
    async fn create_each_tag(&self, names: &[String]) -> Result<(), Error> {
        for name in names {
            match self.client.create_tag(name).await {
                Ok(_) => {}
                Err(e) if is_conflict(&e) => {}
                Err(e) => return Err(e),
            }
            self.journal.checkpoint("call");
        }
        Ok(())
    }

    async fn create_block(
        &mut self,
        text: &str,
        location: &str,
        description: &str,
        tags: &[super::api::TagRequest],
    ) -> Result<(), String> {
        if let Some(found) = self.owned_block().await? {
            // Made by an earlier attempt whose answer was lost, or by the CCM meanwhile.
            self.new_block = Some(found);
            return Ok(());
        }
        let result = self
            .journaled(
                text,
                self.client.create_ip_block(location, description, tags),
            )
            .await?;
        let block = match result {
            Ok(block) => block,
            Err(e) if e.is_uncertain() => self
                .owned_block()
                .await?
                .ok_or_else(|| format!("{e}; and no block with the Service's tags was made"))?,
            Err(e) => return Err(e.to_string()),
        };
        self.new_block = Some(block);
        Ok(())
    }

    /// The active block with the Service's four tags, if there is one.
    pub async fn owned_block(&self) -> Result<Option<IpBlock>, String> {
        let Some(owner) = &self.owner else {
            return Ok(None);
        };
        let tags = owner.tags();
        let filters: Vec<(&str, &str)> = tags
            .iter()
            .map(|t| (t.name.as_str(), t.value.as_str()))
            .collect();
        let blocks = self
            .client
            .ip_blocks(&filters)
            .await
            .map_err(|e| e.to_string())?;
        Ok(blocks.into_iter().find(|b| owner.owns(b)))
    }

    fn block_id(&self, block: &BlockRef) -> Result<String, String> {
        match block {
            BlockRef::Id(id) => Ok(id.clone()),
            BlockRef::New => self
                .new_block
                .as_ref()
                .map(|b| b.id.clone())
                .ok_or_else(|| "the new block was not made".to_string()),
        }
    }

    /// Attaches and waits until the block is `assigned`. A block already on this network is
    /// done; a 409 while the network is busy with another block's attach or detach (several
    /// load balancers applied in parallel) is tried again once it settles.
    async fn attach(&mut self, text: &str, network: &str, block: &BlockRef) -> Result<(), String> {
        let id = self.block_id(block)?;
        let started = Instant::now();
        loop {
            let current = self.client.ip_block(&id).await.map_err(|e| e.to_string())?;
            match current.public_network() {
                Some(on) if on == network => break,
                Some(other) => return Err(format!("block {id} is on public network {other}")),
                None if current.status == "assigning" => break,
                None => {}
            }
            match self
                .journaled(text, self.client.attach(network, &id))
                .await?
            {
                Ok(()) => break,
                Err(e) if is_conflict(&e) && started.elapsed() < SETTLE_TIMEOUT => {
                    self.wait_busy(&e).await
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        let settled = self.settle(&id, &["assigning"], "assigned").await?;
        if matches!(block, BlockRef::New) {
            self.new_block = Some(settled);
        }
        Ok(())
    }

    /// Detaches (a block already unassigned or unassigning is fine: the CCM's reaper may have
    /// been first) and waits until it is `unassigned`; a busy network as for [`Self::attach`].
    async fn detach(&self, text: &str, network: &str, id: &str) -> Result<(), String> {
        let started = Instant::now();
        loop {
            let current = match self.client.ip_block(id).await {
                Ok(block) => block,
                Err(e) if e.is_not_found() => return Ok(()),
                Err(e) => return Err(e.to_string()),
            };
            if matches!(current.status.as_str(), "unassigned" | "unassigning") {
                break;
            }
            let assigned = current
                .assigned_resource_id
                .clone()
                .unwrap_or_else(|| network.to_owned());
            match self
                .journaled(text, self.client.detach(&assigned, id))
                .await?
            {
                Ok(()) => break,
                Err(e) if is_conflict(&e) && started.elapsed() < SETTLE_TIMEOUT => {
                    self.wait_busy(&e).await
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        self.settle(id, &["unassigning"], "unassigned")
            .await
            .map(drop)
    }

    async fn wait_busy(&self, error: &Error) {
        tracing::info!(address = %self.address, "network busy, trying again: {error}");
        tokio::time::sleep(self.poll.max(Duration::from_millis(100))).await;
    }

    /// Reads the block until its status leaves `pending`; it must then be `target`.
    async fn settle(&self, id: &str, pending: &[&str], target: &str) -> Result<IpBlock, String> {
        let started = Instant::now();
        let mut pause = self.poll;
        loop {
            let block = self.client.ip_block(id).await.map_err(|e| e.to_string())?;
            if block.status == target {
                return Ok(block);
            }
            if !pending.contains(&block.status.as_str()) {
                return Err(format!(
                    "block {id} is `{}`, expected `{target}`",
                    block.status
                ));
            }
            if started.elapsed() > SETTLE_TIMEOUT {
                return Err(format!(
                    "block {id} is still `{}` after {} s",
                    block.status,
                    started.elapsed().as_secs()
                ));
            }
            tracing::info!(address = %self.address, "waiting for block {id}: {}", block.status);
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(5));
        }
    }

    async fn mark_released(&self, text: &str, id: &str) -> Result<(), String> {
        let block = match self.client.ip_block(id).await {
            Ok(block) => block,
            Err(e) if e.is_not_found() => return Ok(()),
            Err(e) => return Err(e.to_string()),
        };
        let tags = ccm::release_tags(&block);
        let result = self
            .journaled(text, self.client.put_tags(id, &tags))
            .await?;
        result.map(drop).map_err(|e| e.to_string())
    }

    /// A block already gone (the CCM's reaper was first) is deleted.
    async fn delete_block(&self, text: &str, id: &str) -> Result<(), String> {
        let result = self
            .journaled(text, self.client.delete_ip_block(id))
            .await?;
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn write_service(
        &mut self,
        text: &str,
        namespace: &str,
        name: &str,
        block: &BlockRef,
    ) -> Result<(), String> {
        let cidr = match block {
            BlockRef::New => self.new_block.as_ref().map(|b| b.cidr.clone()),
            BlockRef::Id(id) => Some(
                self.client
                    .ip_block(id)
                    .await
                    .map_err(|e| e.to_string())?
                    .cidr,
            ),
        };
        let address = cidr
            .as_deref()
            .and_then(ccm::service_address)
            .ok_or_else(|| format!("no address for {block}"))?;
        let body = json!({"spec": {"type": "LoadBalancer", "loadBalancerIP": address.to_string()}});
        self.patch_service(text, namespace, name, &body).await
    }

    async fn clear_service(
        &mut self,
        text: &str,
        namespace: &str,
        name: &str,
        service_type: &str,
    ) -> Result<(), String> {
        if !self.load_service(namespace, name).await? {
            tracing::warn!(address = %self.address, "Service {namespace}/{name} not found: nothing to clear");
            return Ok(());
        }
        // Released: no longer skyplan's, so no longer marked as its.
        let owner = skyplan_kubernetes::service_write::OWNER_ANNOTATION;
        let body = json!({"metadata": {"annotations": {owner: null}},
                          "spec": {"type": service_type, "loadBalancerIP": null}});
        self.patch_service(text, namespace, name, &body).await
    }

    fn connection(&self, namespace: &str, name: &str) -> Result<&ClusterConnection, String> {
        self.cluster
            .ok_or_else(|| format!("the cluster of Service {namespace}/{name} is not connected"))
    }

    /// Makes `self.service` the Service `namespace/name` — the one refresh read, or for another
    /// (a rename releases the old Service's block) a fresh read. False: it does not exist.
    async fn load_service(&mut self, namespace: &str, name: &str) -> Result<bool, String> {
        let is_it = |s: &Service| {
            s.metadata.namespace.as_deref() == Some(namespace)
                && s.metadata.name.as_deref() == Some(name)
        };
        if !self.service.as_ref().is_some_and(is_it) {
            let cluster = self.connection(namespace, name)?;
            self.service = cluster
                .service(namespace, name)
                .await
                .map_err(|e| e.message)?;
        }
        Ok(self.service.is_some())
    }

    async fn patch_service(
        &mut self,
        text: &str,
        namespace: &str,
        name: &str,
        body: &serde_json::Value,
    ) -> Result<(), String> {
        self.load_service(namespace, name).await?;
        let cluster = self.connection(namespace, name)?;
        let version = self
            .service
            .as_ref()
            .and_then(|s| s.metadata.resource_version.clone());
        let Some(version) = version else {
            return Err(format!("Service {namespace}/{name} does not exist"));
        };
        let write = ServiceWrite {
            namespace,
            name,
            body,
            resource_version: Some(&version),
            planned: self.service.as_ref(),
            managed: &MANAGED,
            // The block's own journal entries cover a killed run (see recover.rs).
            leaves: None,
        };
        let written = write_service_journaled(cluster, self.journal, self.address, text, write)
            .await
            .map_err(|e| e.message)?;
        self.service = Some(written);
        Ok(())
    }
}
