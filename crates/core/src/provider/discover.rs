//! Discovery: what a provider's accounts and clusters hold that no resource of the config
//! manages (`skyplan discover`, `drift --unmanaged`), and the config that takes it over
//! (`skyplan import --generate-config`). Each provider reads its own objects; the pipeline
//! only names them, folds a Kubernetes Service into the cloud object bound to it, and writes
//! the file.

use serde::Serialize;

use crate::model::{Address, ResourceKind};

/// Who made an unmanaged object, as far as its tags, names and annotations tell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "by", content = "name")]
pub enum Maker {
    /// skyplan: the object carries `skyplan.address=<address>`, an address the config and the
    /// state no longer have (a lost state, a removed config).
    Skyplan(Address),
    /// A cloud controller, named as a user knows it (`cloudscale CCM`).
    Controller(String),
    /// Nothing on the object tells: made by hand, by another tool.
    Unknown,
}

impl std::fmt::Display for Maker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Maker::Skyplan(address) => write!(f, "skyplan (as {address})"),
            Maker::Controller(name) => f.write_str(name),
            Maker::Unknown => f.write_str("unknown"),
        }
    }
}

/// A Kubernetes Service in a configured cluster: `cluster` is the cluster's address in the
/// config (`cluster.prod`), `service` is `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ServiceRef {
    pub cluster: Address,
    pub service: String,
}

impl std::fmt::Display for ServiceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Service {} in {}", self.service, self.cluster)
    }
}

/// One object no resource manages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unmanaged {
    /// The provider that reads it, and would manage it once imported.
    pub provider: String,
    /// The kind of resource it would be (`load-balancer`, `cluster`).
    pub kind: ResourceKind,
    /// What `skyplan import` takes it by (a UUID, a public IP's ID, `namespace/name`).
    pub id: String,
    /// Its name in the cloud (or the cluster).
    pub name: String,
    pub made_by: Maker,
    /// The cluster it belongs to or serves, by its address in the config, when it has one
    /// (`--cluster` filters on it).
    pub cluster: Option<Address>,
    /// The Service it serves, when a controller made it for one (or it is that Service).
    pub service: Option<ServiceRef>,
    /// The address it would get: proposed by the provider from its live name, made unique and
    /// valid by [`assign_addresses`].
    pub address: Address,
    /// One line a user recognises it by: its public address, zone, ports.
    pub summary: String,
    /// Whether `import --generate-config` can adopt it on its own (a Kubernetes Service with no
    /// cloud object yet cannot: the cloud's provider manages it, once its controller made one).
    /// What a provider offers is then judged by its generation: a refused one is not.
    pub importable: bool,
    /// Why not, when it is not importable: what its provider's generation refused
    /// (`attribute: reason`), or why there is nothing to adopt on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not_importable: Option<String>,
}

impl Unmanaged {
    /// Not importable, for the reason `why`: listed so, and refused by an import that names it.
    pub fn refuse(&mut self, why: impl Into<String>) {
        self.importable = false;
        self.why_not_importable = Some(why.into());
    }
}

/// What one provider's discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovered {
    pub unmanaged: Vec<Unmanaged>,
    /// Services the provider's configured resources are bound to: a Service listed by the
    /// Kubernetes provider is managed when some resource is bound to it.
    pub bound: Vec<ServiceRef>,
}

/// The config a provider wrote for one object, or why it cannot.
#[derive(Debug, Clone, PartialEq)]
pub enum Generated {
    /// The resource's table(s) as TOML text, headed by the target's address, written so that a
    /// plan of it against the object changes nothing: keys only where the live object differs
    /// from the defaults.
    Config {
        text: String,
        /// The spec the provider planned the text as, when it did: the pipeline holds the
        /// config's reading of the text to it, in one load of the whole file rather than one
        /// config per object. `None`: the provider read its text back itself.
        spec: Option<crate::config::ResourceSpec>,
    },
    /// skyplan's config cannot say what the object has: `attribute` names it.
    Refused { attribute: String, reason: String },
}

/// The objects adopted in one `import --generate-config` run, by provider and ID: the
/// address each gets, so that one object's config can name another's (a load balancer its
/// cluster).
#[derive(Debug, Clone, Default)]
pub struct Adopting(std::collections::BTreeMap<(String, String), Address>);

impl Adopting {
    pub fn insert(&mut self, provider: &str, id: &str, address: Address) {
        self.0
            .insert((provider.to_string(), id.to_string()), address);
    }

    /// The address the object `id` of `provider` is adopted as in this run.
    pub fn address(&self, provider: &str, id: &str) -> Option<&Address> {
        self.0.get(&(provider.to_string(), id.to_string()))
    }
}

/// A Service listed by one provider and served by another's object (or bound by a configured
/// resource) is one thing, not two: it is dropped, the cloud object names it.
pub fn fold_services(found: Vec<Discovered>) -> Vec<Unmanaged> {
    let mut served: std::collections::BTreeSet<ServiceRef> = Default::default();
    for discovered in &found {
        served.extend(discovered.bound.iter().cloned());
        served.extend(
            discovered
                .unmanaged
                .iter()
                .filter(|u| u.importable)
                .filter_map(|u| u.service.clone()),
        );
    }
    let mut objects: Vec<Unmanaged> = found
        .into_iter()
        .flat_map(|d| d.unmanaged)
        .filter(|u| u.importable || !u.service.as_ref().is_some_and(|s| served.contains(s)))
        .collect();
    objects.sort_by(|a, b| {
        (&a.provider, a.kind, &a.name, &a.id).cmp(&(&b.provider, b.kind, &b.name, &b.id))
    });
    objects
}

/// Each of `objects` whose generation (in `generated`, by provider and ID) was refused is not
/// importable, the refusal (`attribute: reason`) saying why: the one judgement discover and
/// import share.
pub fn refuse_as_generated(objects: &mut [Unmanaged], generated: &[(Unmanaged, Generated)]) {
    let refused: std::collections::HashMap<(&str, &str), String> = (generated.iter())
        .filter_map(|(object, generated)| match generated {
            Generated::Refused { attribute, reason } => Some((
                (object.provider.as_str(), object.id.as_str()),
                format!("{attribute}: {reason}"),
            )),
            Generated::Config { .. } => None,
        })
        .collect();
    if refused.is_empty() {
        return;
    }
    for object in objects.iter_mut() {
        if let Some(why) = refused.get(&(object.provider.as_str(), object.id.as_str())) {
            object.refuse(why.clone());
        }
    }
}

/// A name valid as a TOML bare key and an address: lower-case letters, digits and dashes,
/// never empty, never starting with a dash.
pub fn address_name(live: &str) -> String {
    let mut name = String::new();
    for c in live.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-').to_string();
    if name.is_empty() {
        "unnamed".to_string()
    } else {
        name
    }
}

/// Makes every proposed address unique among themselves and against `taken` (the config's
/// and the state's): the second `web` becomes `web-2`, and so on.
pub fn assign_addresses(objects: &mut [Unmanaged], taken: &[&Address]) {
    let mut used: std::collections::BTreeSet<Address> =
        taken.iter().map(|a| (*a).clone()).collect();
    for object in objects.iter_mut() {
        let base = address_name(&object.address.name);
        let mut candidate = Address::new(object.address.kind, base.clone());
        let mut n = 2;
        while used.contains(&candidate) {
            candidate = Address::new(object.address.kind, format!("{base}-{n}"));
            n += 1;
        }
        used.insert(candidate.clone());
        object.address = candidate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(provider: &str, name: &str, service: Option<&str>, importable: bool) -> Unmanaged {
        Unmanaged {
            provider: provider.into(),
            kind: ResourceKind::LoadBalancer,
            id: format!("id-{name}"),
            name: name.into(),
            made_by: Maker::Unknown,
            cluster: None,
            service: service.map(|s| ServiceRef {
                cluster: "cluster.prod".parse().unwrap(),
                service: s.into(),
            }),
            address: Address::new(ResourceKind::LoadBalancer, name),
            summary: String::new(),
            importable,
            why_not_importable: (!importable).then(|| "a Service".to_string()),
        }
    }

    #[test]
    fn live_names_become_valid_addresses() {
        assert_eq!(address_name("k8s-service-1a2B"), "k8s-service-1a2b");
        assert_eq!(address_name("My LB (prod)"), "my-lb-prod");
        assert_eq!(address_name("--"), "unnamed");
        assert_eq!(address_name("a..b"), "a-b");
        for name in ["k8s-service-1a2b", "my-lb-prod", "unnamed", "a-b"] {
            let toml = format!("[load-balancer.{name}]\nprovider = \"x\"\n");
            assert!(toml.parse::<toml::Table>().is_ok(), "{name} is a bare key");
        }
    }

    #[test]
    fn addresses_are_made_unique_against_the_config_and_each_other() {
        let taken: Address = "load-balancer.web".parse().unwrap();
        let mut objects = vec![
            object("a", "web", None, true),
            object("a", "Web", None, true),
            object("a", "api", None, true),
        ];
        assign_addresses(&mut objects, &[&taken]);
        let names: Vec<_> = objects.iter().map(|o| o.address.to_string()).collect();
        assert_eq!(
            names,
            [
                "load-balancer.web-2",
                "load-balancer.web-3",
                "load-balancer.api"
            ]
        );
    }

    #[test]
    fn a_service_served_by_a_cloud_object_or_bound_by_the_config_is_not_listed_twice() {
        let cloud = Discovered {
            unmanaged: vec![object(
                "cloudscale",
                "k8s-service-1",
                Some("default/web"),
                true,
            )],
            bound: vec![ServiceRef {
                cluster: "cluster.prod".parse().unwrap(),
                service: "default/store".into(),
            }],
        };
        let cluster = Discovered {
            unmanaged: vec![
                object("kubernetes", "web", Some("default/web"), false),
                object("kubernetes", "store", Some("default/store"), false),
                object("kubernetes", "pending", Some("default/pending"), false),
            ],
            bound: vec![],
        };
        let names: Vec<_> = fold_services(vec![cloud, cluster])
            .into_iter()
            .map(|o| o.name)
            .collect();
        assert_eq!(names, ["k8s-service-1", "pending"]);
    }

    #[test]
    fn what_the_generation_refused_is_listed_not_importable_saying_why() {
        let mut objects = vec![
            object("cloudscale", "plain", None, true),
            object("cloudscale", "odd", None, true),
            object("kubernetes", "pending", Some("default/pending"), false),
        ];
        let generated = vec![
            (
                objects[0].clone(),
                Generated::Config {
                    text: String::new(),
                    spec: None,
                },
            ),
            (
                objects[1].clone(),
                Generated::Refused {
                    attribute: "ports.http.members".into(),
                    reason: "member m-10.0.0.31 is not named as skyplan names members".into(),
                },
            ),
        ];
        refuse_as_generated(&mut objects, &generated);
        let judged: Vec<_> = (objects.iter())
            .map(|o| {
                (
                    o.name.as_str(),
                    o.importable,
                    o.why_not_importable.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            judged,
            [
                ("plain", true, None),
                (
                    "odd",
                    false,
                    Some("ports.http.members: member m-10.0.0.31 is not named as skyplan names members")
                ),
                ("pending", false, Some("a Service")),
            ]
        );
    }
}
