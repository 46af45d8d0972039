//! Handing out addresses inside a subnet, shared by load-balancer VIPs and server interfaces.

use std::net::IpAddr;

use crate::sim::cloudscale::api::{ApiError, ApiResult};
use crate::sim::cloudscale::inventory;
use crate::sim::cloudscale::world::Subnet;

/// The requested address if it is free and inside `subnet`, else the subnet's first free one;
/// the address is added to `used`. `field` names the request field in error details.
pub fn claim(
    subnet: &Subnet,
    requested: Option<IpAddr>,
    used: &mut Vec<IpAddr>,
    field: &str,
) -> ApiResult<IpAddr> {
    let address =
        match requested {
            Some(address) if !subnet.cidr.contains(&address) => {
                return Err(ApiError::bad_request(format!(
                    "{field}: {address} is not in subnet {}.",
                    subnet.cidr
                )))
            }
            Some(address) if used.contains(&address) => {
                return Err(ApiError::bad_request(format!(
                    "{field}: {address} is already in use."
                )))
            }
            Some(address) => address,
            None => inventory::free_host(subnet.cidr, subnet.gateway_address, used).ok_or_else(
                || ApiError::bad_request(format!("{field}: subnet {} is full.", subnet.cidr)),
            )?,
        };
    used.push(address);
    Ok(address)
}

/// The next free public address (VIPs without a subnet, public server interfaces).
pub fn claim_public(used: &mut Vec<IpAddr>, field: &str) -> ApiResult<IpAddr> {
    let address = inventory::free_public_host(used)
        .ok_or_else(|| ApiError::bad_request(format!("{field}: no public address left.")))?;
    used.push(address);
    Ok(address)
}
