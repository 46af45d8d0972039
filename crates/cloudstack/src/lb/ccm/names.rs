//! How the CloudStack CCM v1.2.0 names what it creates (research §1.2): the LB base name is
//! `cloudprovider.DefaultLoadBalancerName` — "a" + the Service UID without dashes, cut to 32
//! bytes (so the UID's last hex digit is dropped) — and each rule `<base>-<protocol>-<port>`.

use crate::spec::CsProtocol;

const BASE_NAME_MAX: usize = 32;

pub fn base_name(service_uid: &str) -> String {
    let mut name: String = std::iter::once('a')
        .chain(service_uid.chars().filter(|c| *c != '-'))
        .collect();
    name.truncate(BASE_NAME_MAX);
    name
}

pub fn rule_name(base: &str, protocol: CsProtocol, port: u16) -> String {
    format!("{base}-{protocol}-{port}")
}

/// The Service port skyplan writes for a rule: named by the CCM protocol family and number, so
/// the apiserver keeps its node port while neither changes (it keeps node ports by name).
pub fn service_port_name(protocol: CsProtocol, port: u16) -> String {
    let family = match protocol {
        CsProtocol::Udp => "udp",
        CsProtocol::Tcp | CsProtocol::TcpProxy => "tcp",
    };
    format!("{family}-{port}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_name_drops_dashes_and_the_last_hex_digit() {
        let base = base_name("1b4e28ba-2fa1-11d2-883f-0016d3cca427");
        assert_eq!(base, "a1b4e28ba2fa111d2883f0016d3cca42");
        assert_eq!(base.len(), 32);
        assert_eq!(base_name("short"), "ashort");
    }

    #[test]
    fn rule_names_carry_the_ccm_protocol_and_the_public_port() {
        assert_eq!(
            rule_name("abc", CsProtocol::TcpProxy, 443),
            "abc-tcp-proxy-443"
        );
        assert_eq!(service_port_name(CsProtocol::TcpProxy, 443), "tcp-443");
        assert_eq!(service_port_name(CsProtocol::Udp, 53), "udp-53");
    }
}
