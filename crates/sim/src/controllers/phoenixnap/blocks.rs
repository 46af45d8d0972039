//! IP blocks and tags as the CCM reads and writes them (`loadbalancers.go` getIPBlocks,
//! `tags.go` ensureTags, constants.go): the four tags that name a Service's block, the
//! `delete` tag that marks it for the reaper, and the address the Service gets.

use std::net::Ipv4Addr;

use serde::Deserialize;
use serde_json::{json, Value};

use super::client::PnapApi;

pub const USAGE_TAG: &str = "usage";
pub const USAGE_VALUE: &str = "cloud-provider-phoenixnap-auto";
pub const CLUSTER_TAG: &str = "cluster";
pub const SERVICE_NAMESPACE_TAG: &str = "serviceNamespace";
pub const SERVICE_NAME_TAG: &str = "serviceName";
pub const DELETE_TAG: &str = "delete";
/// The two spellings `assignedResourceType` may have for a public network (commit 86fc6c9).
pub const PUBLIC_NETWORK: [&str; 2] = ["public network", "PUBLIC_NETWORK"];
pub const BLOCK_SIZE: &str = "/29";

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct TagAssignment {
    pub name: String,
    /// Optional in the API: a tag can be assigned without a value.
    pub value: Option<String>,
}

/// An `IpBlock` (the fields the CCM reads). Go's pointers are `Option`s: absent and `null`
/// are `None`, an empty string is `Some("")`, as in the SDK.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct IpBlock {
    pub id: String,
    pub cidr: String,
    pub status: String,
    pub assigned_resource_type: Option<String>,
    pub assigned_resource_id: Option<String>,
    pub tags: Vec<TagAssignment>,
}

impl IpBlock {
    pub fn is_marked_deleted(&self) -> bool {
        self.tags.iter().any(|t| t.name == DELETE_TAG)
    }
}

/// Which blocks `getIPBlocks` keeps after the tag filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// No tag named `delete`.
    Active,
    /// A tag named `delete`, whatever its value.
    Deleted,
}

/// The `tag=` filters in the CCM's order: cluster, usage, then serviceName and
/// serviceNamespace when given.
pub fn filters(cluster_id: &str, service: Option<(&str, &str)>) -> Vec<String> {
    let mut tags = vec![
        format!("{CLUSTER_TAG}.{cluster_id}"),
        format!("{USAGE_TAG}.{USAGE_VALUE}"),
    ];
    if let Some((namespace, name)) = service {
        tags.push(format!("{SERVICE_NAME_TAG}.{name}"));
        tags.push(format!("{SERVICE_NAMESPACE_TAG}.{namespace}"));
    }
    tags
}

/// `GET /ip-blocks?tag=…&tag=…`, then the client-side split on the `delete` tag.
pub async fn ip_blocks(
    api: &PnapApi,
    cluster_id: &str,
    service: Option<(&str, &str)>,
    keep: Keep,
) -> Result<Vec<IpBlock>, String> {
    let query: Vec<String> = filters(cluster_id, service)
        .iter()
        .map(|tag| format!("tag={}", escape_query(tag)))
        .collect();
    let raw = api
        .ips
        .list(&format!("/ip-blocks?{}", query.join("&")))
        .await
        .map_err(|e| e.to_string())?;
    Ok(raw
        .iter()
        .filter_map(|b| serde_json::from_value::<IpBlock>(b.clone()).ok())
        .filter(|b| b.is_marked_deleted() == (keep == Keep::Deleted))
        .collect())
}

/// The generated client's `url.Values` encoding of one value.
fn escape_query(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The body of `POST /ip-blocks`: location, /29, the four tags, no description (the
/// `ccmIPDescription` constant is never used).
pub fn create_body(location: &str, cluster_id: &str, namespace: &str, name: &str) -> Value {
    json!({
        "location": location,
        "cidrBlockSize": BLOCK_SIZE,
        "tags": [
            {"name": USAGE_TAG, "value": USAGE_VALUE},
            {"name": CLUSTER_TAG, "value": cluster_id},
            {"name": SERVICE_NAMESPACE_TAG, "value": namespace},
            {"name": SERVICE_NAME_TAG, "value": name},
        ],
    })
}

/// The tags `PUT` of EnsureLoadBalancerDeleted: every tag but serviceName and
/// serviceNamespace (foreign ones stay), plus `delete=true`.
pub fn release_tags(block: &IpBlock) -> Value {
    let mut tags: Vec<Value> = block
        .tags
        .iter()
        .filter(|t| t.name != SERVICE_NAME_TAG && t.name != SERVICE_NAMESPACE_TAG)
        .map(|t| match &t.value {
            Some(value) => json!({"name": t.name, "value": value}),
            None => json!({"name": t.name}),
        })
        .collect();
    tags.push(json!({"name": DELETE_TAG, "value": "true"}));
    Value::Array(tags)
}

/// `netip.ParsePrefix(cidr).Addr().Next().Next()`: the address as written plus two (a
/// block's CIDR is aligned, so the network address + 2; `.8/29` → `.10`).
pub fn service_address(cidr: &str) -> Result<String, String> {
    let (address, bits) = cidr
        .split_once('/')
        .ok_or_else(|| format!("invalid CIDR in block {cidr}: no '/'"))?;
    let address: Ipv4Addr = address
        .parse()
        .map_err(|e| format!("invalid CIDR in block {cidr}: {e}"))?;
    bits.parse::<u8>()
        .ok()
        .filter(|b| *b <= 32)
        .ok_or_else(|| format!("invalid CIDR in block {cidr}: bad bits"))?;
    let next = u32::from(address)
        .checked_add(2)
        .ok_or_else(|| format!("invalid CIDR in block {cidr}: no address after it"))?;
    Ok(Ipv4Addr::from(next).to_string())
}

/// `netip.Prefix.Contains`: whether `ip` lies in `cidr` (false for anything unparsable).
pub fn contains(cidr: &str, ip: &str) -> Result<bool, String> {
    let network: ipnet::IpNet = cidr
        .parse()
        .map_err(|e| format!("invalid CIDR in block {cidr}: {e}"))?;
    Ok(ip
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| network.contains(&ip)))
}

/// ensureTags: `GET /tags` (no filter), then `POST /tags {name, isBillingTag: false}` for
/// each missing name, in order; the first failure stops it. Returns the names created.
pub async fn ensure_tags(api: &PnapApi, names: &[&str]) -> Result<Vec<String>, String> {
    let existing = api
        .tags
        .list("/tags")
        .await
        .map_err(|e| format!("unable to get all tags: {e}"))?;
    let found: Vec<&str> = existing.iter().filter_map(|t| t["name"].as_str()).collect();
    let mut created = Vec::new();
    for name in names.iter().filter(|n| !found.contains(n)) {
        api.tags
            .post("/tags", &json!({"name": name, "isBillingTag": false}))
            .await
            .map_err(|e| format!("unable to create tag {name}: {e}"))?;
        created.push((*name).to_owned());
    }
    Ok(created)
}

/// The names ensureTags is called with, in the CCM's order.
pub const ALL_TAGS: [&str; 5] = [
    USAGE_TAG,
    CLUSTER_TAG,
    SERVICE_NAMESPACE_TAG,
    SERVICE_NAME_TAG,
    DELETE_TAG,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_gets_the_third_address_of_its_block() {
        assert_eq!(service_address("198.51.100.8/29").unwrap(), "198.51.100.10");
        assert_eq!(service_address("10.0.0.255/29").unwrap(), "10.0.1.1");
        assert!(service_address("nonsense").is_err());
    }

    #[test]
    fn containment_is_checked_against_the_cidr() {
        assert!(contains("198.51.100.8/29", "198.51.100.10").unwrap());
        assert!(!contains("198.51.100.8/29", "198.51.100.16").unwrap());
        assert!(!contains("198.51.100.8/29", "not-an-ip").unwrap());
        assert!(contains("bad", "1.2.3.4").is_err());
    }

    #[test]
    fn filters_are_cluster_usage_name_namespace() {
        assert_eq!(
            filters("uid-1", Some(("default", "web"))),
            [
                "cluster.uid-1",
                "usage.cloud-provider-phoenixnap-auto",
                "serviceName.web",
                "serviceNamespace.default"
            ]
        );
        assert_eq!(filters("uid-1", None).len(), 2);
    }

    #[test]
    fn release_keeps_foreign_tags_drops_the_service_and_marks_delete() {
        let block: IpBlock = serde_json::from_value(json!({
            "id": "b1", "cidr": "198.51.100.8/29", "status": "assigned",
            "tags": [
                {"id": "1", "name": "usage", "value": USAGE_VALUE, "isBillingTag": false},
                {"id": "2", "name": "cluster", "value": "uid", "isBillingTag": false},
                {"id": "3", "name": "serviceNamespace", "value": "default", "isBillingTag": false},
                {"id": "4", "name": "serviceName", "value": "web", "isBillingTag": false},
                {"id": "5", "name": "owner", "isBillingTag": false},
            ]
        }))
        .unwrap();
        assert!(!block.is_marked_deleted());
        assert_eq!(
            release_tags(&block),
            json!([
                {"name": "usage", "value": USAGE_VALUE},
                {"name": "cluster", "value": "uid"},
                {"name": "owner"},
                {"name": "delete", "value": "true"},
            ])
        );
    }

    #[test]
    fn a_null_assignment_is_none_and_an_empty_one_is_not() {
        let block: IpBlock =
            serde_json::from_value(json!({"id": "b", "assignedResourceType": null})).unwrap();
        assert_eq!(block.assigned_resource_type, None);
        let block: IpBlock =
            serde_json::from_value(json!({"id": "b", "assignedResourceType": ""})).unwrap();
        assert_eq!(block.assigned_resource_type.as_deref(), Some(""));
    }

    #[test]
    fn the_create_body_has_the_four_tags_and_no_description() {
        let body = create_body("PHX", "uid", "default", "web");
        assert_eq!(body["cidrBlockSize"], "/29");
        assert!(body.get("description").is_none());
        assert_eq!(body["tags"].as_array().unwrap().len(), 4);
    }
}
