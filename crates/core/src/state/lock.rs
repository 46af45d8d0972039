//! The local state lock: a lock file naming its holder (host, pid, operation), taken over
//! once the process it names is seen gone.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error::StateError;
use super::store::StateStore;

const LOCK_FILE: &str = "skyplan.lock";
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// Who holds the state lock, as written in the lock file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    /// A uuid v4, the argument of `skyplan force-unlock`.
    pub id: String,
    /// The command holding the lock: "apply", "plan"…
    pub operation: String,
    /// `$USER`, or the numeric uid when unset.
    pub who: String,
    pub host: String,
    pub pid: u32,
    /// RFC 3339.
    pub created: String,
    pub skyplan_version: String,
}

impl LockInfo {
    pub fn for_this_process(operation: &str) -> LockInfo {
        LockInfo {
            id: uuid::Uuid::new_v4().to_string(),
            operation: operation.to_string(),
            // SAFETY: getuid has no preconditions and cannot fail.
            who: std::env::var("USER").unwrap_or_else(|_| unsafe { libc::getuid() }.to_string()),
            host: this_host(),
            pid: std::process::id(),
            created: jiff::Timestamp::now().to_string(),
            skyplan_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// Held by a process of this host that has exited. A holder on another host is never
    /// stale: its pid cannot be checked from here.
    fn is_stale(&self) -> bool {
        self.host == this_host() && !process_exists(self.pid)
    }
}

pub(super) fn this_host() -> String {
    gethostname::gethostname().to_string_lossy().into_owned()
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true; // not a pid this system can have: leave the lock to a human
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    // EPERM means it exists but belongs to another user.
    alive || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The held state lock, released when dropped (by whatever the backend put in `release`).
pub struct StateLock {
    info: LockInfo,
    taken_over: Option<LockInfo>,
    _release: Box<dyn Send + Sync>,
}

impl std::fmt::Debug for StateLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateLock")
            .field("info", &self.info)
            .field("taken_over", &self.taken_over)
            .finish_non_exhaustive()
    }
}

impl StateLock {
    /// A held lock; dropping `release` must release it.
    pub fn new(
        info: LockInfo,
        taken_over: Option<LockInfo>,
        release: Box<dyn Send + Sync>,
    ) -> StateLock {
        StateLock {
            info,
            taken_over,
            _release: release,
        }
    }

    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    /// The lock of a dead process that this one replaced, for the CLI to warn about: the run
    /// that held it may have left its work half done.
    pub fn taken_over(&self) -> Option<&LockInfo> {
        self.taken_over.as_ref()
    }
}

/// Removes the lock file on drop if it is still this lock's.
struct LockFileRelease {
    path: PathBuf,
    id: String,
}

impl Drop for LockFileRelease {
    fn drop(&mut self) {
        // Someone may have force-unlocked and locked again since: never remove their lock.
        if let Ok(Some(holder)) = read_lock(&self.path) {
            if holder.id == self.id {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

impl StateStore {
    /// Takes the lock `<dir>/skyplan.lock` for `operation`. A lock left by a dead process of
    /// this host is taken over. Any other holder makes this wait up to `wait`, polling, and
    /// then fail with [`StateError::Locked`].
    pub fn lock(&self, operation: &str, wait: Option<Duration>) -> Result<StateLock, StateError> {
        let info = LockInfo::for_this_process(operation);
        let json = serde_json::to_vec_pretty(&info).expect("a lock serializes to JSON");
        // The lock file is created by hard-linking a complete file into place: as exclusive
        // as O_EXCL, and no one can ever read a lock file that is still being written.
        let temp = self.write_temp_file(&json)?;
        let deadline = wait.map(|wait| Instant::now() + wait);
        let locked = self.lock_with(&temp, info, deadline);
        let _ = fs::remove_file(&temp);
        locked
    }

    /// Removes the lock whatever holds it, given its id as a guard against removing another
    /// lock than the one the user saw. Returns who held it.
    pub fn force_unlock(&self, id: &str) -> Result<LockInfo, StateError> {
        let path = self.lock_path();
        let holder = read_lock(&path)?.ok_or(StateError::NotLocked)?;
        if holder.id != id {
            return Err(StateError::LockIdMismatch {
                given: id.to_string(),
                holder: Box::new(holder),
            });
        }
        remove_lock(&path)?;
        Ok(holder)
    }

    fn lock_path(&self) -> PathBuf {
        self.dir().join(LOCK_FILE)
    }

    fn lock_with(
        &self,
        temp: &Path,
        info: LockInfo,
        deadline: Option<Instant>,
    ) -> Result<StateLock, StateError> {
        let path = self.lock_path();
        let mut taken_over = None;
        loop {
            let Some(holder) = self.try_link(temp, &path)? else {
                self.sync_dir()?;
                let release = LockFileRelease {
                    path,
                    id: info.id.clone(),
                };
                return Ok(StateLock::new(info, taken_over, Box::new(release)));
            };
            if holder.is_stale() {
                // Re-read right before removing so that a lock taken over meanwhile by
                // another run is left alone; the window left is too small to matter.
                if read_lock(&path)?.is_some_and(|current| current.id == holder.id) {
                    remove_lock(&path)?;
                }
                taken_over = Some(holder);
                continue;
            }
            match deadline {
                Some(deadline) if Instant::now() < deadline => {
                    thread::sleep(POLL_INTERVAL.min(deadline - Instant::now()));
                }
                _ => return Err(StateError::Locked(Box::new(holder))),
            }
        }
    }

    /// Links `temp` as the lock file: `None` when that took the lock, else the holder.
    fn try_link(&self, temp: &Path, path: &Path) -> Result<Option<LockInfo>, StateError> {
        loop {
            match fs::hard_link(temp, path) {
                Ok(()) => return Ok(None),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                    // The holder may release the lock between our link and our read: retry.
                    if let Some(holder) = read_lock(path)? {
                        return Ok(Some(holder));
                    }
                }
                Err(error) => return Err(StateError::io("create", path)(error)),
            }
        }
    }
}

fn read_lock(path: &Path) -> Result<Option<LockInfo>, StateError> {
    match fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| StateError::CorruptLock {
                    path: path.to_path_buf(),
                    source,
                })
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(StateError::io("read", path)(error)),
    }
}

fn remove_lock(path: &Path) -> Result<(), StateError> {
    match fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => {
            Err(StateError::io("remove", path)(error))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, StateStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = StateStore::open(dir.path());
        (dir, store)
    }

    fn lock_file_of(dir: &tempfile::TempDir) -> PathBuf {
        dir.path().join(LOCK_FILE)
    }

    fn write_lock(dir: &tempfile::TempDir, holder: &LockInfo) {
        fs::write(lock_file_of(dir), serde_json::to_vec(holder).unwrap()).unwrap();
    }

    /// A lock as left by a process of this host that has exited.
    fn dead_holder() -> LockInfo {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        LockInfo {
            pid,
            ..LockInfo::for_this_process("apply")
        }
    }

    #[test]
    fn the_lock_file_holds_the_lock_info_until_drop() {
        let (dir, store) = store();
        let lock = store.lock("plan", None).unwrap();
        assert_eq!(
            read_lock(&lock_file_of(&dir)).unwrap().as_ref(),
            Some(lock.info())
        );
        assert_eq!(
            (lock.info().operation.as_str(), lock.info().pid),
            ("plan", std::process::id())
        );
        assert!(lock.taken_over().is_none());
        drop(lock);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "no lock, no temp file"
        );
    }

    #[test]
    fn a_lock_left_by_a_dead_process_is_taken_over() {
        let (dir, store) = store();
        let stale = dead_holder();
        write_lock(&dir, &stale);
        let lock = store.lock("plan", None).unwrap();
        assert_eq!(lock.taken_over(), Some(&stale));
        assert_eq!(
            read_lock(&lock_file_of(&dir)).unwrap().as_ref(),
            Some(lock.info())
        );
    }

    #[test]
    fn a_dead_pid_on_another_host_is_not_stale() {
        let (dir, store) = store();
        let elsewhere = LockInfo {
            host: format!("not-{}", this_host()),
            ..dead_holder()
        };
        write_lock(&dir, &elsewhere);
        assert!(matches!(
            store.lock("plan", None),
            Err(StateError::Locked(_))
        ));
    }

    #[test]
    fn dropping_a_force_unlocked_lock_leaves_the_next_holders_lock() {
        let (dir, store) = store();
        let old = store.lock("apply", None).unwrap();
        store.force_unlock(&old.info().id).unwrap();
        let new = store.lock("plan", None).unwrap();
        drop(old);
        assert_eq!(
            read_lock(&lock_file_of(&dir)).unwrap().as_ref(),
            Some(new.info())
        );
    }

    #[test]
    fn an_unreadable_lock_file_is_reported_not_replaced() {
        let (dir, store) = store();
        fs::write(lock_file_of(&dir), "garbage").unwrap();
        let error = store.lock("plan", None).unwrap_err();
        assert!(matches!(error, StateError::CorruptLock { .. }), "{error:?}");
        assert_eq!(fs::read_to_string(lock_file_of(&dir)).unwrap(), "garbage");
    }
}
