//! The PhoenixNAP world file, kept by the simulators' shared writer (`sim::persist`): created
//! with the default inventory when missing, written at most every `WRITE_INTERVAL`.

use std::time::Duration;

use jiff::{Timestamp, Unit};

use super::inventory::default_world;
use super::state::Sim;
use super::world::{World, WORLD_FORMAT};
use crate::persist::{Persisted, WorldFile};

const WRITE_INTERVAL: Duration = Duration::from_millis(200);

impl WorldFile for World {
    const FORMAT: u32 = WORLD_FORMAT;

    fn format(&self) -> u32 {
        self.format
    }

    fn fresh(now: Timestamp) -> World {
        default_world(now.round(Unit::Millisecond).unwrap_or(now))
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
    use super::*;

    #[test]
    fn a_small_hand_written_world_loads_and_a_fresh_one_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        let text = r#"{"locations": [{"code": "PHX", "ip_pools": ["198.19.0.0/28"]}]}"#;
        std::fs::write(&path, text).unwrap();
        let world: World = crate::persist::load_or_create(&path).unwrap();
        assert_eq!(world.locations[0].ip_pools.len(), 1);
        assert!(world.servers.is_empty());

        let fresh_path = dir.path().join("fresh.json");
        let fresh: World = crate::persist::load_or_create(&fresh_path).unwrap();
        let again: World = crate::persist::load_or_create(&fresh_path).unwrap();
        assert_eq!(
            crate::persist::world_text(&fresh),
            crate::persist::world_text(&again)
        );
    }
}
