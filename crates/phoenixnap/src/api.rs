//! The API objects skyplan reads and the calls it makes (research/phoenixnap.md §2-§5), on top
//! of the client. Fields the responses may leave out are optional, so an older or newer API
//! version still decodes.

use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::client::{Api, Error, PnapClient, Retry};

/// `IpBlock` (ips/v1).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IpBlock {
    pub id: String,
    pub location: String,
    #[serde(default)]
    pub cidr_block_size: String,
    pub cidr: String,
    /// creating, subnetted, assigning, error assigning, assigned, unassigning, error
    /// unassigning, unassigned.
    pub status: String,
    #[serde(default)]
    pub assigned_resource_id: Option<String>,
    #[serde(default)]
    pub assigned_resource_type: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub tags: Vec<TagAssignment>,
}

impl IpBlock {
    /// The value of the tag `name` (`None`: no such tag).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.value.as_deref().unwrap_or(""))
    }

    /// The address skyplan made the block for, from the description it gives every block it
    /// makes ([`skyplan_description`]); `None` for a block someone else made.
    pub fn skyplan_address(&self) -> Option<skyplan_core::model::Address> {
        let text = self.description.as_deref()?.strip_prefix(SKYPLAN_MARK)?;
        text.trim().parse().ok()
    }

    /// The prefix length of the block (`/29` → 29), from `cidrBlockSize` or else the CIDR.
    pub fn prefix_len(&self) -> Option<u8> {
        let size = match self.cidr_block_size.is_empty() {
            true => self.cidr.rsplit_once('/').map(|(_, s)| s)?,
            false => self.cidr_block_size.trim_start_matches('/'),
        };
        size.parse().ok()
    }

    /// Assigned to a public network, as the CCM's `GetLoadBalancer` accepts it: both spellings
    /// of the type occur (`constants.go`).
    pub fn public_network(&self) -> Option<&str> {
        let kind = self.assigned_resource_type.as_deref()?;
        let public = matches!(kind, "public network" | "PUBLIC_NETWORK");
        public
            .then_some(self.assigned_resource_id.as_deref())
            .flatten()
    }
}

/// What starts the description of every block skyplan makes: `skyplan load-balancer.api`.
/// A block cannot carry `skyplan.address` as a tag (tag names and values admit no `.`), and
/// its four tags are the CCM's, so the description is skyplan's mark: a block made by a run
/// whose state was lost is known for skyplan's, under its address.
const SKYPLAN_MARK: &str = "skyplan ";

/// The description skyplan gives a block it makes for `address`.
pub fn skyplan_description(address: &skyplan_core::model::Address) -> String {
    format!("{SKYPLAN_MARK}{address}")
}

/// A tag on a resource.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TagAssignment {
    pub name: String,
    #[serde(default)]
    pub value: Option<String>,
}

/// A tag as the IP API takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagRequest {
    pub name: String,
    pub value: String,
}

/// `Tag` (tag-manager/v1).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tag {
    pub id: String,
    pub name: String,
}

/// `PublicNetwork` (networks/v1).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicNetwork {
    pub id: String,
    pub name: String,
    pub location: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub ip_blocks: Vec<NetworkBlock>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NetworkBlock {
    pub id: String,
}

/// `Server` (bmc/v1), the fields the CCM reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Server {
    pub id: String,
    pub hostname: String,
    pub status: String,
    #[serde(rename = "type", default)]
    pub server_type: String,
    #[serde(default)]
    pub location: String,
    #[serde(default)]
    pub public_ip_addresses: Vec<String>,
    #[serde(default)]
    pub private_ip_addresses: Vec<String>,
}

/// `tag=name.value` filters, one query parameter each (`style: form, explode: true`).
fn tag_query(tags: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = tags
        .iter()
        .map(|(name, value)| format!("tag={}", encode(&format!("{name}.{value}"))))
        .collect();
    match pairs.is_empty() {
        true => String::new(),
        false => format!("?{}", pairs.join("&")),
    }
}

/// Tag names and values are `[A-zÀ-ú0-9_-]`, ids are hex: only the non-ASCII need escaping.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl PnapClient {
    pub async fn ip_blocks(&self, tags: &[(&str, &str)]) -> Result<Vec<IpBlock>, Error> {
        self.get(Api::Ips, &format!("/ip-blocks{}", tag_query(tags)))
            .await
    }

    pub async fn ip_block(&self, id: &str) -> Result<IpBlock, Error> {
        self.get(Api::Ips, &format!("/ip-blocks/{}", encode(id)))
            .await
    }

    /// `POST /ip-blocks`: never repeated blindly; a lost answer is looked for by its tags.
    pub async fn create_ip_block(
        &self,
        location: &str,
        description: &str,
        tags: &[TagRequest],
    ) -> Result<IpBlock, Error> {
        let body = serde_json::json!({
            "location": location,
            "cidrBlockSize": "/29",
            "description": description,
            "tags": tags,
        });
        self.send(
            Method::POST,
            Api::Ips,
            "/ip-blocks",
            Some(&body),
            Retry::NotSent,
        )
        .await
    }

    /// `PUT /ip-blocks/{id}/tags`: replaces every tag of the block.
    pub async fn put_tags(&self, id: &str, tags: &[TagRequest]) -> Result<IpBlock, Error> {
        let path = format!("/ip-blocks/{}/tags", encode(id));
        self.send(Method::PUT, Api::Ips, &path, Some(&tags), Retry::Safe)
            .await
    }

    pub async fn delete_ip_block(&self, id: &str) -> Result<(), Error> {
        let path = format!("/ip-blocks/{}", encode(id));
        self.send::<serde_json::Value>(Method::DELETE, Api::Ips, &path, None::<&()>, Retry::Safe)
            .await
            .map(drop)
    }

    pub async fn public_networks(&self) -> Result<Vec<PublicNetwork>, Error> {
        self.get(Api::Networks, "/public-networks").await
    }

    /// `POST /public-networks/{id}/ip-blocks` (202): the block is `assigning`, then `assigned`.
    pub async fn attach(&self, network: &str, block: &str) -> Result<(), Error> {
        let path = format!("/public-networks/{}/ip-blocks", encode(network));
        let body = serde_json::json!({ "id": block });
        self.send::<serde_json::Value>(
            Method::POST,
            Api::Networks,
            &path,
            Some(&body),
            Retry::NotSent,
        )
        .await
        .map(drop)
    }

    /// `DELETE /public-networks/{id}/ip-blocks/{block}` (202): `unassigning`, then `unassigned`.
    pub async fn detach(&self, network: &str, block: &str) -> Result<(), Error> {
        let path = format!(
            "/public-networks/{}/ip-blocks/{}",
            encode(network),
            encode(block)
        );
        self.send::<serde_json::Value>(
            Method::DELETE,
            Api::Networks,
            &path,
            None::<&()>,
            Retry::NotSent,
        )
        .await
        .map(drop)
    }

    pub async fn tags(&self) -> Result<Vec<Tag>, Error> {
        self.get(Api::Tags, "/tags").await
    }

    /// `POST /tags` as the CCM creates its tag names: not a billing tag, no description.
    pub async fn create_tag(&self, name: &str) -> Result<Tag, Error> {
        let body = serde_json::json!({ "name": name, "isBillingTag": false });
        self.send(
            Method::POST,
            Api::Tags,
            "/tags",
            Some(&body),
            Retry::NotSent,
        )
        .await
    }

    pub async fn servers(&self) -> Result<Vec<Server>, Error> {
        self.get(Api::Bmc, "/servers").await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_filters_are_one_parameter_each() {
        assert_eq!(
            tag_query(&[
                ("cluster", "abc-1"),
                ("usage", "cloud-provider-phoenixnap-auto")
            ]),
            "?tag=cluster.abc-1&tag=usage.cloud-provider-phoenixnap-auto"
        );
        assert_eq!(tag_query(&[]), "");
        assert_eq!(encode("é"), "%C3%A9");
    }

    #[test]
    fn a_block_on_a_public_network_in_either_spelling() {
        let block = |kind: &str| IpBlock {
            id: "b".into(),
            location: "PHX".into(),
            cidr_block_size: "/29".into(),
            cidr: "198.51.100.8/29".into(),
            status: "assigned".into(),
            assigned_resource_id: Some("net".into()),
            assigned_resource_type: Some(kind.into()),
            description: None,
            tags: vec![],
        };
        assert_eq!(block("public network").public_network(), Some("net"));
        assert_eq!(block("PUBLIC_NETWORK").public_network(), Some("net"));
        assert_eq!(block("server").public_network(), None);
    }

    #[test]
    fn skyplan_s_blocks_are_known_by_their_description() {
        let address: skyplan_core::model::Address = "load-balancer.api".parse().unwrap();
        let mut block = IpBlock {
            id: "b".into(),
            location: "PHX".into(),
            cidr_block_size: String::new(),
            cidr: "198.51.100.8/29".into(),
            status: "assigned".into(),
            assigned_resource_id: None,
            assigned_resource_type: None,
            description: Some(skyplan_description(&address)),
            tags: vec![],
        };
        assert_eq!(block.skyplan_address(), Some(address));
        assert_eq!(block.prefix_len(), Some(29), "from the CIDR");
        block.description = Some("made by hand".into());
        assert_eq!(block.skyplan_address(), None);
        block.description = Some("skyplan is great".into());
        assert_eq!(block.skyplan_address(), None);
        block.cidr_block_size = "/28".into();
        assert_eq!(block.prefix_len(), Some(28));
    }
}
