//! What the PhoenixNAP CCM v1.0.0 expects of a Service's block (research/phoenixnap.md §6, the
//! code, not the README): its four tags, the `delete` tag that marks a released block, and the
//! Service's address, the block's base address + 2. skyplan makes blocks exactly so, and the
//! CCM's `GetLoadBalancer` then finds and accepts them.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

use super::api::{IpBlock, TagRequest};

pub const USAGE_TAG: &str = "usage";
/// `pnapIdentifier` in `constants.go` (the README's `k8s-cloud-provider-bmc-auto` is stale).
pub const USAGE_VALUE: &str = "cloud-provider-phoenixnap-auto";
pub const CLUSTER_TAG: &str = "cluster";
pub const NAMESPACE_TAG: &str = "serviceNamespace";
pub const NAME_TAG: &str = "serviceName";
/// Put on a block when its Service lets it go; the CCM's reaper detaches and deletes it.
pub const DELETE_TAG: &str = "delete";

/// The tag names the CCM creates before it tags anything (`ensureTags`).
pub const TAG_NAMES: [&str; 5] = [USAGE_TAG, CLUSTER_TAG, NAMESPACE_TAG, NAME_TAG, DELETE_TAG];

/// The Service a block is for, as its tags say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner<'a> {
    /// The kube-system namespace UID (the CCM's cluster id).
    pub cluster_uid: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

impl Owner<'_> {
    /// The block's tags, in the order the CCM sends them.
    pub fn tags(&self) -> Vec<TagRequest> {
        [
            (USAGE_TAG, USAGE_VALUE),
            (CLUSTER_TAG, self.cluster_uid),
            (NAMESPACE_TAG, self.namespace),
            (NAME_TAG, self.name),
        ]
        .into_iter()
        .map(|(name, value)| TagRequest {
            name: name.into(),
            value: value.into(),
        })
        .collect()
    }

    /// The CCM's `getIPBlocks` filter with all four tags, active blocks only.
    pub fn owns(&self, block: &IpBlock) -> bool {
        is_active(block)
            && block.tag(USAGE_TAG) == Some(USAGE_VALUE)
            && block.tag(CLUSTER_TAG) == Some(self.cluster_uid)
            && block.tag(NAMESPACE_TAG) == Some(self.namespace)
            && block.tag(NAME_TAG) == Some(self.name)
    }

    /// Every tag value is one the tag API accepts (a Kubernetes name always is; a cluster
    /// UID is hex and dashes).
    pub fn invalid_tag_value(&self) -> Option<&str> {
        [self.cluster_uid, self.namespace, self.name]
            .into_iter()
            .find(|v| !valid_tag_text(v))
    }
}

/// A block without a tag named `delete`, whatever its value (the CCM's split).
pub fn is_active(block: &IpBlock) -> bool {
    block.tag(DELETE_TAG).is_none()
}

/// What the CCM's `EnsureLoadBalancerDeleted` puts on a released block: every tag but the
/// Service's two, plus `delete=true`. From then on no Service matches it.
pub fn release_tags(block: &IpBlock) -> Vec<TagRequest> {
    let mut tags: Vec<TagRequest> = block
        .tags
        .iter()
        .filter(|t| ![NAMESPACE_TAG, NAME_TAG, DELETE_TAG].contains(&t.name.as_str()))
        .map(|t| TagRequest {
            name: t.name.clone(),
            value: t.value.clone().unwrap_or_default(),
        })
        .collect();
    tags.push(TagRequest {
        name: DELETE_TAG.into(),
        value: "true".into(),
    });
    tags
}

/// The Service's address: `netip.ParsePrefix(cidr).Addr().Next().Next()`, i.e. base + 2 (the
/// network address, then the gateway, then the Service).
pub fn service_address(cidr: &str) -> Option<Ipv4Addr> {
    let net: Ipv4Net = cidr.parse().ok()?;
    let base = u32::from(net.network());
    Some(Ipv4Addr::from(base.checked_add(2)?))
}

/// Tag names and values: `[A-zÀ-ú0-9_-]{1,100}` (`TagAssignmentRequest`). `A-z` is the ASCII
/// range from `A` to `z`, so it also admits `[ \ ] ^ _` and the backtick.
pub fn valid_tag_text(text: &str) -> bool {
    let count = text.chars().count();
    (1..=100).contains(&count)
        && text.chars().all(|c| {
            ('A'..='z').contains(&c) || ('À'..='ú').contains(&c) || c.is_ascii_digit() || c == '-'
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::TagAssignment;

    fn block(tags: &[(&str, &str)]) -> IpBlock {
        IpBlock {
            id: "b1".into(),
            location: "PHX".into(),
            cidr_block_size: "/29".into(),
            cidr: "198.51.100.8/29".into(),
            status: "assigned".into(),
            assigned_resource_id: None,
            assigned_resource_type: None,
            description: None,
            tags: tags
                .iter()
                .map(|(n, v)| TagAssignment {
                    name: n.to_string(),
                    value: Some(v.to_string()),
                })
                .collect(),
        }
    }

    const OWNER: Owner<'static> = Owner {
        cluster_uid: "3f2a-uid",
        namespace: "default",
        name: "api",
    };

    #[test]
    fn the_third_address_of_the_block_is_the_service_s() {
        assert_eq!(
            service_address("198.51.100.8/29"),
            Some(Ipv4Addr::new(198, 51, 100, 10))
        );
        assert_eq!(service_address("not a cidr"), None);
    }

    #[test]
    fn a_block_is_the_service_s_with_all_four_tags_and_no_delete() {
        let tags: Vec<(String, String)> = OWNER
            .tags()
            .into_iter()
            .map(|t| (t.name, t.value))
            .collect();
        let pairs: Vec<(&str, &str)> = tags.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        assert!(OWNER.owns(&block(&pairs)));
        assert!(!OWNER.owns(&block(&pairs[..3])));
        let mut released = pairs.clone();
        released.push((DELETE_TAG, "false"));
        assert!(!OWNER.owns(&block(&released)), "any delete tag releases");
    }

    #[test]
    fn release_keeps_foreign_tags_and_drops_the_service_s() {
        let released = release_tags(&block(&[
            (USAGE_TAG, USAGE_VALUE),
            (CLUSTER_TAG, "uid"),
            (NAMESPACE_TAG, "default"),
            (NAME_TAG, "api"),
            ("team", "web"),
        ]));
        let names: Vec<&str> = released.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, [USAGE_TAG, CLUSTER_TAG, "team", DELETE_TAG]);
    }

    #[test]
    fn tag_text_follows_the_api_s_pattern() {
        assert!(valid_tag_text("cloud-provider-phoenixnap-auto"));
        assert!(valid_tag_text("Äpfel_1"));
        assert!(!valid_tag_text("Zürich"), "ü is past ú");
        assert!(!valid_tag_text("default.api"));
        assert!(!valid_tag_text("a/b"));
        assert!(!valid_tag_text(""));
        assert!(!valid_tag_text(&"x".repeat(101)));
    }
}
