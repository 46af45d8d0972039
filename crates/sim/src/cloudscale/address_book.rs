//! The addresses taken in the account, as a set with a cursor into the public range, so that
//! handing out the next public address costs the same for the 20,000th load balancer as for
//! the first (a linear search of a list made it quadratic).

use std::collections::HashSet;
use std::net::IpAddr;

use super::inventory::public_host;

#[derive(Debug, Clone, Default)]
pub struct UsedAddresses {
    taken: HashSet<IpAddr>,
    /// Every public host before this number is taken: the search for a free one starts here.
    public_cursor: u32,
}

impl UsedAddresses {
    pub fn of(taken: impl IntoIterator<Item = IpAddr>) -> UsedAddresses {
        UsedAddresses {
            taken: taken.into_iter().collect(),
            public_cursor: 0,
        }
    }

    pub fn contains(&self, address: &IpAddr) -> bool {
        self.taken.contains(address)
    }

    /// Marks an address taken; false if it already was.
    pub fn take(&mut self, address: IpAddr) -> bool {
        self.taken.insert(address)
    }

    /// Takes the first free public address, the same one a search from the start would find.
    pub fn next_public(&mut self) -> Option<IpAddr> {
        loop {
            let host = public_host(self.public_cursor)?;
            self.public_cursor += 1;
            if self.taken.insert(host) {
                return Some(host);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn next_public_skips_taken_addresses_and_never_repeats() {
        let mut used = UsedAddresses::of([ip("5.102.144.1"), ip("5.102.144.3")]);
        assert_eq!(used.next_public(), Some(ip("5.102.144.2")));
        assert!(used.take(ip("5.102.144.5")));
        assert_eq!(used.next_public(), Some(ip("5.102.144.4")));
        assert_eq!(used.next_public(), Some(ip("5.102.144.6")));
        assert!(used.contains(&ip("5.102.144.6")));
        assert!(!used.take(ip("5.102.144.6")));
    }

    #[test]
    fn twenty_thousand_addresses_fit_and_are_distinct() {
        let mut used = UsedAddresses::default();
        let all: HashSet<IpAddr> = (0..20_000).map(|_| used.next_public().unwrap()).collect();
        assert_eq!(all.len(), 20_000);
    }
}
