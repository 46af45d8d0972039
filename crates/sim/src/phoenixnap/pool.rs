//! Carving IP blocks out of a location's public pools: the first free block of the asked size,
//! aligned to it (a /29 starts at a multiple of 8), in pool order.

use ipnet::Ipv4Net;

/// The first `prefix`-sized block of `pools` that overlaps none of `taken`; `None` when the
/// pools are exhausted for that size (the API's 406).
pub fn allocate(pools: &[Ipv4Net], prefix: u8, taken: &[Ipv4Net]) -> Option<Ipv4Net> {
    pools
        .iter()
        .filter(|pool| pool.prefix_len() <= prefix)
        .flat_map(|pool| pool.subnets(prefix).into_iter().flatten())
        .find(|candidate| !taken.iter().any(|t| overlaps(t, candidate)))
}

fn overlaps(a: &Ipv4Net, b: &Ipv4Net) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

/// `"/29"` → 29, for the IPv4 sizes `IpBlockCreate.cidrBlockSize` allows.
pub fn ipv4_prefix(size: &str) -> Option<u8> {
    match size {
        "/31" => Some(31),
        "/30" => Some(30),
        "/29" => Some(29),
        "/28" => Some(28),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(text: &str) -> Ipv4Net {
        text.parse().unwrap()
    }

    #[test]
    fn blocks_are_aligned_first_fit_and_skip_what_is_taken() {
        let pools = [net("198.19.0.0/28")];
        assert_eq!(allocate(&pools, 29, &[]), Some(net("198.19.0.0/29")));
        let taken = [net("198.19.0.0/29")];
        assert_eq!(allocate(&pools, 29, &taken), Some(net("198.19.0.8/29")));
        // A /30 in the first half leaves no /29 there, but the second half is free.
        assert_eq!(
            allocate(&pools, 29, &[net("198.19.0.4/30")]),
            Some(net("198.19.0.8/29"))
        );
        let full = [net("198.19.0.0/29"), net("198.19.0.8/29")];
        assert_eq!(allocate(&pools, 29, &full), None);
        assert_eq!(allocate(&pools, 31, &full), None);
    }

    #[test]
    fn the_next_pool_is_used_when_one_is_full_and_small_pools_never_fit_big_blocks() {
        let pools = [net("198.19.0.0/30"), net("198.19.1.0/28")];
        assert_eq!(allocate(&pools, 29, &[]), Some(net("198.19.1.0/29")));
        assert_eq!(
            allocate(&pools, 30, &[net("198.19.0.0/30")]),
            Some(net("198.19.1.0/30"))
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(ipv4_prefix("/29"), Some(29));
        assert_eq!(ipv4_prefix("/64"), None);
        assert_eq!(ipv4_prefix("29"), None);
    }
}
