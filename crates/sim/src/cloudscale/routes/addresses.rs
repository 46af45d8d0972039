//! Handing out addresses inside a subnet, shared by load-balancer VIPs and server interfaces.

use std::net::IpAddr;

use uuid::Uuid;

use crate::cloudscale::address_book::UsedAddresses;
use crate::cloudscale::api::{ApiError, ApiResult};
use crate::cloudscale::inventory;
use crate::cloudscale::world::Subnet;

/// The requested address if it is free and inside `subnet`, else the subnet's first free one;
/// the address is added to `used`. `field` names the request field in error details.
pub fn claim(
    subnet: &Subnet,
    requested: Option<IpAddr>,
    used: &mut UsedAddresses,
    field: &str,
) -> ApiResult<IpAddr> {
    let address = match requested {
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
        None => inventory::free_host(subnet.cidr, subnet.gateway_address, |host| {
            used.contains(host)
        })
        .ok_or_else(|| {
            ApiError::bad_request(format!("{field}: subnet {} is full.", subnet.cidr))
        })?,
    };
    used.take(address);
    Ok(address)
}

/// The next free public address (VIPs without a subnet, public server interfaces) and the
/// public subnet it belongs to.
pub fn claim_public(used: &mut UsedAddresses, field: &str) -> ApiResult<(IpAddr, Uuid)> {
    let address = used
        .next_public()
        .ok_or_else(|| ApiError::bad_request(format!("{field}: no public address left.")))?;
    Ok((address, inventory::public_subnet_of(address)))
}
