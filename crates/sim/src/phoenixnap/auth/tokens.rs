//! The access tokens handed out, with their expiry and scopes, kept in memory only (a
//! restarted simulator forgets them, and clients get a 401 and fetch a new one, as after a
//! Keycloak restart with non-persistent sessions).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::Rng;

use super::scopes::Scope;

pub struct TokenStore {
    ttl: Duration,
    grants: Mutex<HashMap<String, Grant>>,
}

struct Grant {
    expires: Instant,
    scopes: Vec<Scope>,
}

/// Why a presented token is not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    Unknown,
    Expired,
}

impl TokenStore {
    pub fn new(ttl: Duration) -> Self {
        TokenStore {
            ttl,
            grants: Mutex::new(HashMap::new()),
        }
    }

    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// A new random token valid for the TTL; expired ones are forgotten on the way.
    pub fn issue(&self, scopes: Vec<Scope>) -> String {
        let bytes: [u8; 32] = rand::rng().random();
        let token = hex::encode(bytes);
        let now = Instant::now();
        let mut grants = self.lock();
        grants.retain(|_, grant| grant.expires > now);
        let grant = Grant {
            expires: now + self.ttl,
            scopes,
        };
        grants.insert(token.clone(), grant);
        token
    }

    /// The scopes of a valid token.
    pub fn check(&self, token: &str) -> Result<Vec<Scope>, Refused> {
        let grants = self.lock();
        let grant = grants.get(token).ok_or(Refused::Unknown)?;
        if grant.expires <= Instant::now() {
            return Err(Refused::Expired);
        }
        Ok(grant.scopes.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Grant>> {
        self.grants.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_carries_its_scopes_until_it_expires() {
        let store = TokenStore::new(Duration::from_millis(50));
        let token = store.issue(vec![Scope::BmcRead]);
        assert_eq!(token.len(), 64);
        assert_eq!(store.check(&token), Ok(vec![Scope::BmcRead]));
        assert_eq!(store.check("nope"), Err(Refused::Unknown));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(store.check(&token), Err(Refused::Expired));
        assert_ne!(store.issue(Vec::new()), token);
        // Issuing forgot the expired token.
        assert_eq!(store.check(&token), Err(Refused::Unknown));
    }
}
