//! The PhoenixNAP tables as written: `[provider.phoenixnap]` and `[load-balancer.NAME]` with
//! `provider = "phoenixnap"`. As in core's raw types, values with a vocabulary or a format stay
//! spanned text until they are checked, so every bad value is reported at its place; the JSON
//! schema is generated from these same types.

use schemars::JsonSchema;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_spanned::Spanned;

use skyplan_core::config::section::choice_schema as choice;

use crate::spec::PnapLocation;

/// PhoenixNAP Bare Metal Cloud. The client credentials come from PNAP_CLIENT_ID and
/// PNAP_CLIENT_SECRET, or from the CCM's cloud-sa.json; never from this file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPhoenixnap {
    /// "embedded" (the built-in simulator) or the API root, e.g. https://api.phoenixnap.com
    /// (the APIs under /ips/v1, /networks/v1, /tag-manager/v1, /bmc/v1). Default: "embedded".
    #[schemars(with = "Option<String>")]
    pub endpoint: Option<Spanned<String>>,
    /// The OAuth2 token URL. Default: PhoenixNAP's for its API, else the endpoint's
    /// /auth/realms/BMC/protocol/openid-connect/token.
    #[schemars(with = "Option<String>")]
    pub token_url: Option<Spanned<String>>,
    /// Where new blocks are made (the CCM's PNAP_LOCATION), unless a load balancer says.
    #[serde(default)]
    #[schemars(schema_with = "choice::<PnapLocation>")]
    pub location: Option<Spanned<String>>,
    /// The CCM's secret file {"clientID", "clientSecret"}, relative to the config; `~` is the
    /// home directory. PNAP_CLIENT_ID / PNAP_CLIENT_SECRET win over it.
    #[schemars(with = "Option<String>")]
    pub cloud_sa_json: Option<Spanned<String>>,
    /// Accepted by the parser only to refuse it: credentials do not belong in config files.
    #[schemars(skip)]
    pub client_id: Option<Spanned<IgnoredAny>>,
    /// Accepted by the parser only to refuse it; the value is never kept.
    #[schemars(skip)]
    pub client_secret: Option<Spanned<IgnoredAny>>,
}

/// A /29 public IP block for a kube-vip LoadBalancer Service, made as the PhoenixNAP CCM makes
/// it (its four tags, attached to the public network), so the CCM adopts it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawPnapLoadBalancer {
    /// "phoenixnap".
    #[schemars(with = "String")]
    pub provider: Spanned<String>,
    /// The [cluster.NAME] the Service is in.
    #[schemars(with = "String")]
    pub cluster: Spanned<String>,
    /// The Service, "namespace/name"; it must exist in the cluster.
    #[schemars(with = "String")]
    pub service: Spanned<String>,
    /// The public network's id or name (the CCM's PNAP_LOAD_BALANCER=kube-vip://<id>).
    #[schemars(with = "String")]
    pub public_network: Spanned<String>,
    /// Default: the provider's location.
    #[serde(default)]
    #[schemars(schema_with = "choice::<PnapLocation>")]
    pub location: Option<Spanned<String>>,
}
