//! The local state directory: the state file read and written whole, through a temporary
//! file renamed into place under a directory flock, refused when the stored serial moved.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::backend::{check_replaces, StateBackend, StateVersion};
use super::error::StateError;
use super::file::{State, FORMAT_VERSION};

const STATE_FILE: &str = "skyplan.state.json";

/// The state file and its lock, in one directory.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
}

impl StateStore {
    /// Touches nothing on disk: the directory is created by the first save or lock.
    pub fn open(dir: &Path) -> StateStore {
        StateStore {
            dir: dir.to_path_buf(),
        }
    }

    /// The saved state, or `None` when nothing has been saved yet.
    pub fn load(&self) -> Result<Option<State>, StateError> {
        let path = self.dir.join(STATE_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(StateError::io("read", &path)(error)),
        };
        parse_state(&path, &text).map(Some)
    }

    /// Increments serial and writes atomically, refusing a stale state (see
    /// [`StateBackend::save`]). On error `state` is unchanged.
    pub fn save(&self, state: &mut State) -> Result<(), StateError> {
        StateBackend::save(self, state)
    }

    /// Writes `next` atomically: temp file in the same dir, write, fsync, rename over
    /// skyplan.state.json, fsync the directory. A crash never leaves a torn file. Refused when
    /// the file no longer holds `replaces`. The check and the rename happen under an
    /// exclusive flock of the directory, so of two writers that read the same state only one
    /// wins even without the state lock (and no lock file is left behind).
    pub(super) fn write_file(
        &self,
        next: &State,
        replaces: Option<&StateVersion>,
    ) -> Result<(), StateError> {
        fs::create_dir_all(&self.dir).map_err(StateError::io("create", &self.dir))?;
        let _exclusive = DirFlock::take(&self.dir)?;
        let stored = self.load()?.map(|s| StateVersion::of(&s));
        check_replaces(stored.as_ref(), replaces)?;
        let mut json = serde_json::to_string_pretty(next).expect("a state serializes to JSON");
        json.push('\n');
        let temp = self.write_temp_file(json.as_bytes())?;
        let path = self.dir.join(STATE_FILE);
        if let Err(error) = fs::rename(&temp, &path) {
            let _ = fs::remove_file(&temp);
            return Err(StateError::io("replace", &path)(error));
        }
        self.sync_dir()
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` to a new, uniquely named file in the state directory (creating the
    /// directory if needed) and flushes it to disk, so it can be renamed or linked into place.
    pub(super) fn write_temp_file(&self, bytes: &[u8]) -> Result<PathBuf, StateError> {
        fs::create_dir_all(&self.dir).map_err(StateError::io("create", &self.dir))?;
        let path = self
            .dir
            .join(format!(".skyplan.{}.tmp", uuid::Uuid::new_v4()));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut file| {
                file.write_all(bytes)?;
                file.sync_all()
            });
        if let Err(error) = written {
            let _ = fs::remove_file(&path);
            return Err(StateError::io("write", &path)(error));
        }
        Ok(path)
    }

    /// Makes a rename or link in the state directory durable.
    pub(super) fn sync_dir(&self) -> Result<(), StateError> {
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(StateError::io("sync", &self.dir))
    }
}

/// An exclusive flock(2) of a directory, released when dropped (the fd closes).
struct DirFlock {
    _open: File,
}

impl DirFlock {
    fn take(dir: &Path) -> Result<DirFlock, StateError> {
        use std::os::fd::AsRawFd;
        let file = File::open(dir).map_err(StateError::io("open", dir))?;
        // SAFETY: flock on a valid open fd has no memory-safety preconditions.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(StateError::io("lock", dir)(io::Error::last_os_error()));
        }
        Ok(DirFlock { _open: file })
    }
}

/// A state as stored at `path` (a file, or a name for where a backend keeps it).
pub fn parse_state(path: &Path, text: &str) -> Result<State, StateError> {
    check_format_version(path, text)?;
    serde_json::from_str(text).map_err(|source| StateError::Corrupt {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads the format version alone before the whole file: a newer format need not parse as
/// this one, and the user should be told to upgrade, not that the file is corrupt.
fn check_format_version(path: &Path, text: &str) -> Result<(), StateError> {
    #[derive(Deserialize)]
    struct Versioned {
        format_version: u32,
    }
    let corrupt = |source| StateError::Corrupt {
        path: path.to_path_buf(),
        source,
    };
    let Versioned { format_version } = serde_json::from_str(text).map_err(corrupt)?;
    if format_version > FORMAT_VERSION {
        return Err(StateError::NewerFormat {
            path: path.to_path_buf(),
            found: format_version,
            supported: FORMAT_VERSION,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::{Address, ResourceKind};
    use crate::state::ResourceState;

    fn sample_state() -> State {
        let mut state = State::new();
        let resource = ResourceState {
            provider: "cloudscale".into(),
            id: "lb-1".into(),
            ids: json!({"pools": {"tcp/80": "pool-1"}}),
            attributes: json!({"zone": "lpg1", "ports": [80, 443]}),
            depends_on: vec![],
        };
        let address = Address::new(ResourceKind::LoadBalancer, "hello");
        state.resources.insert(address, resource);
        state
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn nothing_saved_loads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(StateStore::open(dir.path()).load().unwrap().is_none());
    }

    #[test]
    fn a_saved_state_loads_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(&dir.path().join("not/yet/there"));
        let mut state = sample_state();
        store.save(&mut state).unwrap();
        assert_eq!(store.load().unwrap(), Some(state));
    }

    #[test]
    fn every_save_increments_the_serial() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path());
        let mut state = sample_state();
        store.save(&mut state).unwrap();
        store.save(&mut state).unwrap();
        assert_eq!(state.serial, 2);
        assert_eq!(store.load().unwrap().unwrap().serial, 2);
    }

    #[test]
    fn saving_leaves_only_the_state_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path());
        // One state saved twice: a second, unrelated state would be refused as stale.
        let mut state = sample_state();
        store.save(&mut state).unwrap();
        store.save(&mut state).unwrap();
        assert_eq!(entries(dir.path()), [STATE_FILE]);
    }

    #[test]
    fn the_file_is_pretty_json_in_field_order() {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path());
        let mut state = sample_state();
        store.save(&mut state).unwrap();
        let text = fs::read_to_string(dir.path().join(STATE_FILE)).unwrap();
        let expected_start = format!(
            "{{\n  \"format_version\": 1,\n  \"skyplan_version\": \"{}\",\n  \"lineage\": \"{}\",\n  \"serial\": 1,\n",
            env!("CARGO_PKG_VERSION"),
            state.lineage
        );
        assert!(text.starts_with(&expected_start), "{text}");
        assert!(text.ends_with("}\n"));
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_and_stays_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(STATE_FILE);
        fs::write(&path, "{ not json").unwrap();
        let error = StateStore::open(dir.path()).load().unwrap_err();
        assert!(matches!(error, StateError::Corrupt { .. }), "{error:?}");
        assert!(error.to_string().contains(&path.display().to_string()));
        assert_eq!(fs::read_to_string(&path).unwrap(), "{ not json");
    }

    #[test]
    fn a_state_of_a_newer_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let newer = json!({"format_version": FORMAT_VERSION + 1, "something": "else"});
        fs::write(dir.path().join(STATE_FILE), newer.to_string()).unwrap();
        let error = StateStore::open(dir.path()).load().unwrap_err();
        assert!(
            matches!(error, StateError::NewerFormat { found, .. } if found == FORMAT_VERSION + 1),
            "{error:?}"
        );
        assert!(error.to_string().contains("upgrade skyplan"));
    }
}
