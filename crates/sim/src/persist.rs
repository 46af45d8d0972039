//! The world file every simulator keeps: loaded at start (created fresh when missing), written
//! after changes at most every `interval`, and once more at shutdown. Every write goes to a
//! temporary file in the same directory, is synced, then renamed over the old file, so a crash
//! leaves either the old world or the new one, never half of one.

use std::future::Future;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A simulator's world as its file holds it.
pub trait WorldFile: Serialize + DeserializeOwned {
    /// The file format this build reads and writes.
    const FORMAT: u32;

    fn format(&self) -> u32;

    /// The world of a fresh account, created at `now`.
    fn fresh(now: Timestamp) -> Self;
}

/// A running simulator whose world the writer saves.
pub trait Persisted: Clone + Send + Sync + 'static {
    /// The least time between two writes: a burst of changes is written once.
    const WRITE_INTERVAL: Duration;

    /// The world's file text now.
    fn world_json(&self) -> String;

    /// Resolves after the world next changes.
    fn changed(&self) -> impl Future<Output = ()> + Send;
}

pub fn load_or_create<W: WorldFile>(path: &Path) -> io::Result<W> {
    match std::fs::read(path) {
        Ok(bytes) => parse_world(path, &bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let world = W::fresh(Timestamp::now());
            write_atomic(path, &world_text(&world))?;
            Ok(world)
        }
        Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

/// The file's text: pretty JSON, fields in declaration order, a final newline.
pub fn world_text<W: Serialize>(world: &W) -> String {
    let mut text = serde_json::to_string_pretty(world).expect("a world always serializes");
    text.push('\n');
    text
}

fn parse_world<W: WorldFile>(path: &Path, bytes: &[u8]) -> io::Result<W> {
    let invalid = |message: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {message}", path.display()),
        )
    };
    let world: W = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
    if world.format() != W::FORMAT {
        return Err(invalid(format!(
            "world format {} is not supported (expected {})",
            world.format(),
            W::FORMAT
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

pub async fn flush(sim: &impl Persisted, path: &Path) -> io::Result<()> {
    let json = sim.world_json();
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || write_atomic(&path, &json))
        .await
        .map_err(io::Error::other)?
}

/// How long a stopping simulator waits for open connections before closing them.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Tells a simulator's server to stop and waits for it (requests in flight finish, for at most
/// five seconds); its result says why, if it had already stopped on its own.
pub async fn stop_server(
    stop: oneshot::Sender<()>,
    mut server: JoinHandle<io::Result<()>>,
) -> io::Result<()> {
    // Err: the server already stopped on its own; its result says why.
    let _ = stop.send(());
    match tokio::time::timeout(SHUTDOWN_GRACE, &mut server).await {
        Ok(joined) => joined.map_err(io::Error::other)?,
        Err(_) => {
            server.abort();
            Ok(())
        }
    }
}

/// The background task that writes the world after changes.
pub struct Writer {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// How long the writer waits after a write that took `took`: the sim's interval, or four
/// times as long as the write when that is longer, so that a world of tens of thousands of
/// objects, changed by a long apply, is not serialized over and over (at most a fifth of the
/// time goes to writing it).
fn pause_after(took: Duration, interval: Duration) -> Duration {
    interval.max(took.saturating_mul(4))
}

impl Writer {
    /// Writes the world after each change, then waits at least the sim's write interval.
    pub fn spawn<S: Persisted>(sim: S, path: PathBuf) -> Self {
        let (stop, mut stopped) = oneshot::channel();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = sim.changed() => {}
                }
                let started = std::time::Instant::now();
                if let Err(e) = flush(&sim, &path).await {
                    tracing::warn!("cannot write the simulator world {}: {e}", path.display());
                }
                tokio::select! {
                    _ = &mut stopped => return,
                    _ = tokio::time::sleep(pause_after(started.elapsed(), S::WRITE_INTERVAL)) => {}
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
    fn a_slow_write_spaces_the_next_one_out() {
        let interval = Duration::from_millis(200);
        assert_eq!(pause_after(Duration::from_millis(5), interval), interval);
        assert_eq!(
            pause_after(Duration::from_millis(300), interval),
            Duration::from_millis(1200)
        );
    }

    #[test]
    fn atomic_write_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("world.json");
        write_atomic(&path, "{}").unwrap();
        write_atomic(&path, "{\"format\": 1}").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"format\": 1}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
