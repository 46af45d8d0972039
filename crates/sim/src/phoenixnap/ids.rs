//! Object ids as the real APIs hand them out: 24 lower-case hex digits (MongoDB ObjectIds, e.g.
//! `6047127fed34ecc3ba8402d2` in the SDK's payloads), random here.

use rand::Rng;

pub fn new_id() -> String {
    let bytes: [u8; 12] = rand::rng().random();
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_24_hex_digits_and_differ() {
        let (a, b) = (super::new_id(), super::new_id());
        assert_eq!(a.len(), 24);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
