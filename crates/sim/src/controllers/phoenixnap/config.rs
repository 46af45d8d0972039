//! The CCM's configuration as `config.go` and `newLoadBalancers` read it (research §6.1):
//! `PNAP_LOAD_BALANCER` is parsed as a URL, the scheme picks the implementor (only
//! `kube-vip`, a no-op), the public network is the URL's host; an empty setting disables the
//! load balancer (no service controller, no reaper). With the load balancer enabled, an empty
//! location is fatal at start-up: the real CCM crash-loops, the simulated one does not start.

use std::fmt;

/// What the CCM is started with (env or `cloud-sa.json`, already merged).
#[derive(Clone, Default)]
pub struct PnapCcmConfig {
    /// `PNAP_LOCATION`: where new blocks are created.
    pub location: String,
    /// `PNAP_LOAD_BALANCER`, e.g. `kube-vip://<public network id>`; empty = disabled.
    pub load_balancer: String,
    pub client_id: String,
    pub client_secret: String,
}

/// Never shows the secret.
impl fmt::Debug for PnapCcmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PnapCcmConfig")
            .field("location", &self.location)
            .field("load_balancer", &self.load_balancer)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// The load-balancer half of the configuration, once parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LbSettings {
    pub location: String,
    /// The public network every block is attached to (`u.Host`).
    pub network: String,
    /// `false` for a scheme other than `kube-vip`: the implementor stays nil and the first
    /// `addService` dereferences it.
    pub kube_vip: bool,
}

impl PnapCcmConfig {
    /// `getConfig` then `newLoadBalancers`: the load-balancer settings, `None` when it is
    /// disabled. An error is what the real CCM dies of, in its words.
    pub fn parse(&self) -> Result<Option<LbSettings>, String> {
        if self.client_id.is_empty() {
            return Err("environment variable \"PNAP_CLIENT_ID\" is required".into());
        }
        if self.client_secret.is_empty() {
            return Err("environment variable \"PNAP_CLIENT_SECRET\" is required".into());
        }
        let setting = self.load_balancer.trim();
        if setting.is_empty() {
            return Ok(None);
        }
        if self.location.is_empty() {
            return Err("no location specified, cannot proceed".into());
        }
        let (scheme, host) = split_url(setting)?;
        // Checked before the scheme: `kube-vip:///x` (the README's form) has no host.
        if host.is_empty() {
            return Err("invalid config: no public network provided".into());
        }
        Ok(Some(LbSettings {
            location: self.location.clone(),
            network: host,
            kube_vip: scheme == "kube-vip",
        }))
    }
}

/// Go's `url.Parse` reduced to what is read: the scheme (lower-cased) and `u.Host` (the
/// authority after `//` up to the next `/`, `?` or `#`, without userinfo).
fn split_url(text: &str) -> Result<(String, String), String> {
    let Some((scheme, rest)) = text.split_once(':') else {
        return Ok((String::new(), String::new()));
    };
    let valid = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid {
        return Err(format!(
            "invalid config: parse {text:?}: first path segment in URL cannot contain colon"
        ));
    }
    let host = rest
        .strip_prefix("//")
        .map(|authority| {
            let end = authority.find(['/', '?', '#']).unwrap_or(authority.len());
            let authority = &authority[..end];
            authority
                .rsplit_once('@')
                .map_or(authority, |(_, h)| h)
                .to_owned()
        })
        .unwrap_or_default();
    Ok((scheme.to_ascii_lowercase(), host))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(location: &str, lb: &str) -> PnapCcmConfig {
        PnapCcmConfig {
            location: location.into(),
            load_balancer: lb.into(),
            client_id: "id".into(),
            client_secret: "secret".into(),
        }
    }

    #[test]
    fn the_network_is_the_url_host() {
        let settings = config("PHX", "kube-vip://net-1").parse().unwrap();
        assert_eq!(
            settings,
            Some(LbSettings {
                location: "PHX".into(),
                network: "net-1".into(),
                kube_vip: true
            })
        );
    }

    #[test]
    fn an_empty_setting_disables_the_load_balancer_even_without_location() {
        assert_eq!(config("", "").parse().unwrap(), None);
    }

    #[test]
    fn the_readme_form_and_a_missing_location_are_fatal() {
        let error = config("PHX", "kube-vip:///net-1").parse().unwrap_err();
        assert!(error.contains("no public network provided"), "{error}");
        let error = config("", "kube-vip://net-1").parse().unwrap_err();
        assert!(error.contains("location"), "{error}");
    }

    #[test]
    fn another_scheme_leaves_no_implementor() {
        let settings = config("PHX", "metallb://x").parse().unwrap().unwrap();
        assert!(!settings.kube_vip);
    }

    #[test]
    fn credentials_are_required_even_without_a_load_balancer() {
        let mut missing = config("PHX", "");
        missing.client_secret.clear();
        assert_eq!(
            missing.parse().unwrap_err(),
            "environment variable \"PNAP_CLIENT_SECRET\" is required"
        );
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let mut shown = config("PHX", "");
        shown.client_secret = "hunter2-pnap".into();
        assert!(!format!("{shown:?}").contains("hunter2"));
    }
}
