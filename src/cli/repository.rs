//! Where a config file is in its repository: what GitHub annotations (`plan --format github`,
//! `drift --format github`) name as `file`, which GitHub resolves from the repository root,
//! whichever directory skyplan ran in. The root is the nearest directory at or above the
//! config's that holds `.git` (a directory, or the file of a worktree or submodule); without
//! one, paths are relative to the current directory.

use std::path::{Component, Path, PathBuf};

/// Makes config paths relative to the repository root (or the current directory).
pub struct RepositoryPaths {
    cwd: PathBuf,
    base: PathBuf,
}

impl RepositoryPaths {
    /// For the config read from `config_root` (a directory, as `Config::root` holds it).
    pub fn for_config(config_root: &Path) -> RepositoryPaths {
        let cwd = std::env::current_dir().unwrap_or_default();
        let start = absolute(&cwd, config_root);
        let base = repository_root(&start, |dir| dir.join(".git").exists())
            .unwrap_or_else(|| absolute(&cwd, Path::new(".")));
        RepositoryPaths { cwd, base }
    }

    /// `file` relative to the root; a file outside it keeps its absolute path (a `../..` path
    /// would name nothing GitHub can show either, and hide where the file is).
    pub fn relative(&self, file: &Path) -> PathBuf {
        let file = absolute(&self.cwd, file);
        file.strip_prefix(&self.base)
            .map(Path::to_path_buf)
            .unwrap_or(file)
    }
}

/// The nearest of `start` and its ancestors for which `is_root` holds.
fn repository_root(start: &Path, is_root: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| is_root(dir))
        .map(Path::to_path_buf)
}

/// `path` from `cwd`, through symbolic links where it exists (so that a temporary directory
/// reached through a link is the same directory either way), else with `.` and `..` folded.
fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let joined = cwd.join(path);
    joined
        .canonicalize()
        .unwrap_or_else(|_| normalized(&joined))
}

fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_nearest_directory_holding_git() {
        let roots = [Path::new("/work/repo"), Path::new("/work")];
        let is_root = |dir: &Path| roots.contains(&dir);
        assert_eq!(
            repository_root(Path::new("/work/repo/infra/prod"), is_root),
            Some(PathBuf::from("/work/repo"))
        );
        assert_eq!(repository_root(Path::new("/elsewhere/x"), is_root), None);
    }

    #[test]
    fn paths_are_made_relative_to_the_root_from_any_directory() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("infra/sub")).unwrap();
        std::fs::write(root.join("infra/skyplan.toml"), "").unwrap();
        let paths = RepositoryPaths {
            cwd: root.join("infra/sub"),
            base: repository_root(&root.join("infra"), |d| d.join(".git").exists()).unwrap(),
        };
        assert_eq!(
            paths.relative(Path::new("../skyplan.toml")),
            Path::new("infra/skyplan.toml")
        );
        assert_eq!(
            paths.relative(&root.join("infra/skyplan.toml")),
            Path::new("infra/skyplan.toml")
        );
        assert_eq!(
            paths.relative(Path::new("/elsewhere/x.toml")),
            Path::new("/elsewhere/x.toml")
        );
    }

    #[test]
    fn dots_fold_where_the_file_does_not_exist() {
        assert_eq!(normalized(Path::new("/a/./b/../c")), Path::new("/a/c"));
    }
}
