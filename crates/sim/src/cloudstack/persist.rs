//! The CloudStack world file, kept by the simulators' shared writer (`sim::persist`): created
//! as a fresh account when missing, written at most every `WRITE_INTERVAL`.

use std::time::Duration;

use jiff::{Timestamp, Unit};

use super::inventory::fresh_account;
use super::state::Sim;
use super::world::{World, WORLD_FORMAT};
pub use crate::persist::{flush, world_text};
use crate::persist::{Persisted, WorldFile};

const WRITE_INTERVAL: Duration = Duration::from_millis(100);

impl WorldFile for World {
    const FORMAT: u32 = WORLD_FORMAT;

    fn format(&self) -> u32 {
        self.format
    }

    fn fresh(now: Timestamp) -> World {
        fresh_account(now.round(Unit::Second).unwrap_or(now))
    }
}

impl Persisted for Sim {
    const WRITE_INTERVAL: Duration = WRITE_INTERVAL;

    fn world_json(&self) -> String {
        Sim::world_json(self)
    }

    fn changed(&self) -> impl std::future::Future<Output = ()> + Send {
        Sim::changed(self)
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    fn load_or_create(path: &std::path::Path) -> io::Result<World> {
        crate::persist::load_or_create(path)
    }

    #[test]
    fn a_missing_world_is_a_fresh_account_and_reloads_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        let world = load_or_create(&path).unwrap();
        assert!(path.exists());
        let again = load_or_create(&path).unwrap();
        assert_eq!(world_text(&again), world_text(&world));
    }

    #[test]
    fn unknown_format_and_broken_json_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        for text in [r#"{"format": 2}"#, "{"] {
            std::fs::write(&path, text).unwrap();
            assert_eq!(
                load_or_create(&path).unwrap_err().kind(),
                io::ErrorKind::InvalidData
            );
        }
    }
}
