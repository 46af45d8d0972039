//! The CloudStack VMs as the CloudStack CCM describes them to Kubernetes
//! (cloudstack-kubernetes-provider `cloudstack_instances.go`): providerID
//! `external-cloudstack://<vm uuid>`; instance-type the offering name and zone the zone name,
//! both through the CCM's `labelInvalidCharsRegex` (which drops every character that is not an
//! ASCII letter or digit: "Small Instance" → "SmallInstance"); region the zone name too
//! (impact.md; see the note on [`instance`]); addresses the first NIC's InternalIP, then the
//! VM's `hostname` (its hypervisor host) and static-NAT `publicip` when the API gives them.
//! `InstanceShutdownByProviderID` is true for a Stopped VM.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::OnceCell;

use super::api::{VirtualMachine, Zone};
use super::client::CloudstackClient;
use super::PROVIDER;
use skyplan_core::provider::ProviderError;
use skyplan_kubernetes::instances::{
    CloudInstance, CloudInstances, InstanceAddress, InstanceStatus,
};

pub const SCHEME: &str = "external-cloudstack";

/// What the CCM's `labelInvalidCharsRegex` leaves of a label value: its last alternative
/// matches any single character other than an ASCII letter or digit, so all of those go.
pub fn label_value(text: &str) -> String {
    text.chars().filter(|c| c.is_ascii_alphanumeric()).collect()
}

/// One VM as the CCM's `InstanceMetadata` reads it. The CCM takes the region from the
/// providerID (`external-cloudstack://<region>/<id>`), which CKS writes without a region; the
/// spec (impact.md, "Kubernetes nodes") has region = zone name, and so has skyplan.
pub fn instance(vm: &VirtualMachine, zones: &[Zone]) -> CloudInstance {
    let zone = zones
        .iter()
        .find(|z| z.id == vm.zoneid)
        .map(|z| label_value(&z.name))
        .filter(|z| !z.is_empty());
    let mut addresses = Vec::new();
    let address = |kind: &str, address: &str| InstanceAddress {
        kind: kind.to_string(),
        address: address.to_string(),
    };
    if let Some(ip) = vm.nic.first().and_then(|n| n.ipaddress.as_deref()) {
        addresses.push(address("InternalIP", ip));
    }
    if let Some(host) = vm.hostname.as_deref().filter(|h| !h.is_empty()) {
        addresses.push(address("Hostname", host));
    }
    if let Some(ip) = vm.publicip.as_deref().filter(|ip| !ip.is_empty()) {
        addresses.push(address("ExternalIP", ip));
    }
    CloudInstance {
        name: vm.name.clone(),
        provider_id: format!("{SCHEME}://{}", vm.id),
        instance_type: Some(label_value(&vm.serviceofferingname)).filter(|t| !t.is_empty()),
        zone: zone.clone(),
        region: zone,
        addresses,
        status: match vm.state.as_str() {
            "Running" => InstanceStatus::Running,
            "Stopped" => InstanceStatus::Stopped,
            _ => InstanceStatus::Other,
        },
    }
}

/// The account's VMs for node-metadata drift, read once per run (two paged lists: the zones
/// for their names, and the VMs).
pub struct CloudstackInstances {
    client: Arc<CloudstackClient>,
    read: OnceCell<Vec<CloudInstance>>,
}

impl CloudstackInstances {
    pub fn new(client: Arc<CloudstackClient>) -> Arc<CloudstackInstances> {
        Arc::new(CloudstackInstances {
            client,
            read: OnceCell::new(),
        })
    }

    async fn read(&self) -> Result<Vec<CloudInstance>, ProviderError> {
        let list = |command: &'static str, key: &'static str| async move {
            let items = self
                .client
                .list(command, &Vec::new(), key)
                .await
                .map_err(|e| e.for_address(PROVIDER))?;
            Ok::<_, ProviderError>(items)
        };
        let (zones, vms) = futures::try_join!(
            list("listZones", "zone"),
            list("listVirtualMachines", "virtualmachine")
        )?;
        let decode = |e: serde_json::Error| ProviderError::new(PROVIDER, e);
        let zones: Vec<Zone> = zones
            .into_iter()
            .map(serde_json::from_value)
            .collect::<Result<_, _>>()
            .map_err(decode)?;
        let vms: Vec<VirtualMachine> = vms
            .into_iter()
            .map(serde_json::from_value)
            .collect::<Result<_, _>>()
            .map_err(decode)?;
        Ok(vms.iter().map(|vm| instance(vm, &zones)).collect())
    }
}

impl CloudInstances for CloudstackInstances {
    fn scheme(&self) -> &'static str {
        SCHEME
    }

    fn instances(&self) -> BoxFuture<'_, Result<Vec<CloudInstance>, ProviderError>> {
        Box::pin(async move { self.read.get_or_try_init(|| self.read()).await.cloned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Nic;

    fn vm(state: &str) -> VirtualMachine {
        VirtualMachine {
            id: "8f0c".into(),
            name: "lab-node-1a2b3c".into(),
            displayname: "lab-node-1a2b3c".into(),
            state: state.into(),
            zoneid: "z1".into(),
            serviceofferingid: "o1".into(),
            serviceofferingname: "Small Instance".into(),
            hypervisor: "KVM".into(),
            nic: vec![Nic {
                id: "n1".into(),
                networkid: "net".into(),
                ipaddress: Some("10.1.1.20".into()),
                isdefault: true,
            }],
            hostname: None,
            publicip: None,
        }
    }

    fn zones() -> Vec<Zone> {
        serde_json::from_value(serde_json::json!([{"id": "z1", "name": "zone-1"}])).unwrap()
    }

    #[test]
    fn a_vm_is_described_as_the_ccm_describes_it() {
        let found = instance(&vm("Running"), &zones());
        assert_eq!(found.provider_id, "external-cloudstack://8f0c");
        assert_eq!(found.instance_type.as_deref(), Some("SmallInstance"));
        assert_eq!(found.zone.as_deref(), Some("zone1"));
        assert_eq!(found.region.as_deref(), Some("zone1"));
        assert_eq!(found.addresses.len(), 1);
        assert_eq!(found.addresses[0].kind, "InternalIP");
        assert_eq!(found.status, InstanceStatus::Running);
    }

    #[test]
    fn a_stopped_vm_is_stopped_and_a_starting_one_neither() {
        assert_eq!(
            instance(&vm("Stopped"), &zones()).status,
            InstanceStatus::Stopped
        );
        assert_eq!(
            instance(&vm("Starting"), &zones()).status,
            InstanceStatus::Other
        );
    }
}
