//! The Services a survey listed, by cluster, looked up the ways discovery asks: by the CCM's
//! uuid annotation, by the CCM's default name `k8s-service-<uid>`, by the name annotation (of
//! a Service the CCM has not written a uuid to), and by `namespace/name`. Indexed once per
//! survey, so that telling who made each of thousands of load balancers is not a search of
//! every Service for each.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Service;

use super::super::ccm::annotations::{NAME, UUID};
use super::super::objects::LbObject;
use skyplan_core::model::Address;

/// A Service of a connected cluster, with the cluster's address.
#[derive(Debug, Clone, Copy)]
pub struct ServiceAt<'a> {
    pub cluster: &'a Address,
    pub service: &'a Service,
}

impl ServiceAt<'_> {
    /// `namespace/name`.
    pub fn reference(&self) -> String {
        let metadata = &self.service.metadata;
        format!(
            "{}/{}",
            metadata.namespace.as_deref().unwrap_or("default"),
            metadata.name.as_deref().unwrap_or_default()
        )
    }

    /// A non-empty annotation.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        annotation(self.service, key)
    }
}

fn annotation<'s>(service: &'s Service, key: &str) -> Option<&'s str> {
    let annotations = service.metadata.annotations.as_ref()?;
    annotations
        .get(key)
        .map(String::as_str)
        .filter(|v| !v.is_empty())
}

/// Where a Service is: its cluster's place and its own in that cluster's list.
type At = (usize, usize);

/// Every Service of each connected cluster (empty after a plain refresh), indexed.
#[derive(Debug, Default)]
pub struct SurveyedServices {
    clusters: Vec<(Address, Vec<Service>)>,
    by_uuid: HashMap<String, At>,
    by_default_name: HashMap<String, At>,
    by_name: HashMap<String, At>,
    by_reference: HashMap<(Address, String, String), At>,
}

impl SurveyedServices {
    /// The first Service of each key wins, in cluster then list order.
    pub fn new(listed: BTreeMap<Address, Vec<Service>>) -> SurveyedServices {
        let mut surveyed = SurveyedServices {
            clusters: listed.into_iter().collect(),
            ..SurveyedServices::default()
        };
        for (c, (cluster, services)) in surveyed.clusters.iter().enumerate() {
            for (s, service) in services.iter().enumerate() {
                let at = (c, s);
                let uuid = annotation(service, UUID);
                if let Some(uuid) = uuid {
                    surveyed.by_uuid.entry(uuid.to_string()).or_insert(at);
                }
                if let Some(uid) = service.metadata.uid.as_deref() {
                    let name = format!("k8s-service-{uid}");
                    surveyed.by_default_name.entry(name).or_insert(at);
                }
                if let (None, Some(name)) = (uuid, annotation(service, NAME)) {
                    surveyed.by_name.entry(name.to_string()).or_insert(at);
                }
                let metadata = &service.metadata;
                if let (Some(namespace), Some(name)) = (&metadata.namespace, &metadata.name) {
                    let key = (cluster.clone(), namespace.clone(), name.clone());
                    surveyed.by_reference.entry(key).or_insert(at);
                }
            }
        }
        surveyed
    }

    fn at(&self, (c, s): At) -> ServiceAt<'_> {
        let (cluster, services) = &self.clusters[c];
        ServiceAt {
            cluster,
            service: &services[s],
        }
    }

    /// The Service the CCM made `lb` for, found as the CCM finds its load balancer: by the uuid
    /// annotation, else by its default name `k8s-service-<uid>`, else (no uuid annotation
    /// yet) by the name annotation.
    pub fn serving(&self, lb: &LbObject) -> Option<ServiceAt<'_>> {
        let uuid = lb.uuid.as_deref()?;
        let found = (self.by_uuid.get(uuid))
            .or_else(|| self.by_default_name.get(&lb.name))
            .or_else(|| self.by_name.get(&lb.name))?;
        Some(self.at(*found))
    }

    /// The Service `namespace/name` of `cluster`, if the survey listed it.
    pub fn get(&self, cluster: &Address, namespace: &str, name: &str) -> Option<&Service> {
        let key = (cluster.clone(), namespace.to_string(), name.to_string());
        self.by_reference.get(&key).map(|at| self.at(*at).service)
    }
}
