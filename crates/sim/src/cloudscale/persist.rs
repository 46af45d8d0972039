//! The cloudscale world file, kept by the simulators' shared writer (`sim::persist`): created
//! with the default inventory when missing, written at most every `WRITE_INTERVAL`.

use std::time::Duration;

use jiff::{Timestamp, Unit};

use super::inventory::default_world;
use super::state::Sim;
use super::world::{World, WORLD_FORMAT};
pub use crate::persist::{flush, world_text};
use crate::persist::{Persisted, WorldFile};

const WRITE_INTERVAL: Duration = Duration::from_millis(200);

impl WorldFile for World {
    const FORMAT: u32 = WORLD_FORMAT;

    fn format(&self) -> u32 {
        self.format
    }

    fn fresh(now: Timestamp) -> World {
        default_world(now.round(Unit::Microsecond).unwrap_or(now))
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
    fn missing_world_is_created_with_the_default_inventory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        let world = load_or_create(&path).unwrap();
        assert_eq!(world.subnets.len(), 1);
        assert!(path.exists());
        let again = load_or_create(&path).unwrap();
        assert_eq!(again.floating_ips.len(), world.floating_ips.len());
    }

    #[test]
    fn a_small_hand_written_world_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        let text = r#"{"load_balancers": [{"uuid": "9d3b1c0e-7a62-4f0e-9f39-3d2c8b1a6e55",
            "name": "web", "flavor": "lb-standard", "zone": "rma1", "vip_addresses": []}]}"#;
        std::fs::write(&path, text).unwrap();
        let world = load_or_create(&path).unwrap();
        assert_eq!(world.load_balancers[0].name, "web");
        assert!(world.subnets.is_empty());
    }

    #[test]
    fn unknown_format_and_broken_json_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        for text in [r#"{"format": 2}"#, "{"] {
            std::fs::write(&path, text).unwrap();
            let error = load_or_create(&path).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        }
    }
}
