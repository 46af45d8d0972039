//! The world file: loaded at start (created as a fresh account when missing), written after
//! changes at most every `WRITE_INTERVAL`, and once more at shutdown. Every write goes to a
//! temporary file in the same directory, is synced, then renamed over the old file, so a
//! crash leaves either the old world or the new one, never half of one.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::{Timestamp, Unit};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::inventory::fresh_account;
use super::state::Sim;
use super::world::{World, WORLD_FORMAT};

const WRITE_INTERVAL: Duration = Duration::from_millis(100);

pub fn load_or_create(path: &Path) -> io::Result<World> {
    match std::fs::read(path) {
        Ok(bytes) => parse_world(path, &bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let now = Timestamp::now();
            let world = fresh_account(now.round(Unit::Second).unwrap_or(now));
            write_atomic(path, &world_text(&world))?;
            Ok(world)
        }
        Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

pub fn world_text(world: &World) -> String {
    let mut text = serde_json::to_string_pretty(world).expect("a world always serializes");
    text.push('\n');
    text
}

fn parse_world(path: &Path, bytes: &[u8]) -> io::Result<World> {
    let invalid = |message: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {message}", path.display()),
        )
    };
    let world: World = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
    if world.format != WORLD_FORMAT {
        return Err(invalid(format!(
            "world format {} is not supported (expected {WORLD_FORMAT})",
            world.format
        )));
    }
    Ok(world)
}

pub fn write_atomic(path: &Path, contents: &str) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // The process id keeps two simulators sharing a directory from writing the same temp file.
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&temp)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temp, path)?;
    // Make the rename itself durable.
    std::fs::File::open(dir)?.sync_all()
}

pub async fn flush(sim: &Sim, path: &Path) -> io::Result<()> {
    let json = sim.world_json();
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || write_atomic(&path, &json))
        .await
        .map_err(io::Error::other)?
}

/// The background task that writes the world after changes.
pub struct Writer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Writer {
    pub fn spawn(sim: Sim, path: PathBuf) -> Self {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = sim.changed() => {}
                }
                if let Err(e) = flush(&sim, &path).await {
                    tracing::warn!("cannot write the simulator world {}: {e}", path.display());
                }
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = tokio::time::sleep(WRITE_INTERVAL) => {}
                }
            }
        });
        Writer { stop, task }
    }

    /// Stops the task, letting a write in progress finish.
    pub async fn stop(self) {
        // Err: the task already ended, which is what we want.
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
