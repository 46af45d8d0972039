//! The cluster's world file, kept by the simulators' shared writer (`sim::persist`). A missing
//! file is created from the options' fresh nodes (not `WorldFile::fresh`, which knows no
//! options), then written at most every `WRITE_INTERVAL`.

use std::io;
use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;

use super::state::KubeSim;
use super::world::{World, WORLD_FORMAT};
use super::FreshNode;
use crate::persist::{world_text, write_atomic, Persisted};

const WRITE_INTERVAL: Duration = Duration::from_millis(200);

pub fn load_or_create(path: &Path, nodes: &[FreshNode], version: (u32, u32)) -> io::Result<World> {
    let invalid = |message: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {message}", path.display()),
        )
    };
    match std::fs::read(path) {
        Ok(bytes) => {
            let mut world: World =
                serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
            world.version = Some(version);
            if world.format != WORLD_FORMAT {
                return Err(invalid(format!(
                    "world format {} is not supported (expected {WORLD_FORMAT})",
                    world.format
                )));
            }
            Ok(world)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let mut world = World::fresh(nodes, version, Timestamp::now());
            world.version = Some(version);
            write_atomic(path, &world_text(&world))?;
            Ok(world)
        }
        Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

impl Persisted for KubeSim {
    const WRITE_INTERVAL: Duration = WRITE_INTERVAL;

    fn world_json(&self) -> String {
        KubeSim::world_json(self)
    }

    fn changed(&self) -> impl std::future::Future<Output = ()> + Send {
        KubeSim::changed(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_world_is_created_once_and_then_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.json");
        let nodes = [FreshNode::ready("a", "10.0.0.1")];
        let created = load_or_create(&path, &nodes, (1, 33)).unwrap();
        assert!(path.exists());
        let again = load_or_create(&path, &[], (1, 33)).unwrap();
        assert_eq!(again, created);
    }

    #[test]
    fn an_unknown_format_or_broken_json_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cluster.json");
        for text in [r#"{"format": 2}"#, "{"] {
            std::fs::write(&path, text).unwrap();
            let error = load_or_create(&path, &[], (1, 33)).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        }
    }
}
