//! The password file libpq reads (`PGPASSFILE`, else `~/.pgpass`): lines of
//! `hostname:port:database:username:password`, `*` matching anything, `\` escaping `:` and
//! `\`. The first matching line wins. Like libpq, a file readable by group or others is
//! ignored, so a password is never taken from a file others can read.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

/// What a connection is to: the fields a line is matched against.
pub(super) struct Wanted<'a> {
    pub host: &'a str,
    pub port: u16,
    pub database: &'a str,
    pub user: &'a str,
}

/// The password for `wanted` from the password file, if it has one and is private.
pub(super) fn password(wanted: &Wanted<'_>) -> Option<String> {
    let path = std::env::var_os("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pgpass")))?;
    let metadata = std::fs::metadata(&path).ok()?;
    if !metadata.is_file() || metadata.permissions().mode() & 0o077 != 0 {
        return None;
    }
    lookup(&std::fs::read_to_string(&path).ok()?, wanted)
}

pub(super) fn lookup(text: &str, wanted: &Wanted<'_>) -> Option<String> {
    let port = wanted.port.to_string();
    let want = [wanted.host, port.as_str(), wanted.database, wanted.user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .filter_map(fields)
        .find(|fields| {
            fields[..4]
                .iter()
                .zip(want)
                .all(|(field, wanted)| field == "*" || field == wanted)
        })
        .map(|mut fields| fields.swap_remove(4))
}

/// A line's five fields, unescaped; `None` for a line with fewer.
fn fields(line: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.extend(chars.next()),
            // The password is the rest of the line, colons included.
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    (fields.len() == 5).then_some(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted() -> Wanted<'static> {
        Wanted {
            host: "db.internal",
            port: 5432,
            database: "skyplan",
            user: "ci",
        }
    }

    #[test]
    fn the_first_matching_line_wins_with_wildcards_and_escapes() {
        let text = "# comment\n\
                    other:5432:skyplan:ci:wrong\n\
                    db.internal:5433:*:ci:wrong-port\n\
                    db.internal:*:*:ci:pa\\:ss\\\\word\n\
                    *:*:*:*:too-late\n";
        assert_eq!(lookup(text, &wanted()).as_deref(), Some("pa:ss\\word"));
    }

    #[test]
    fn no_matching_or_complete_line_gives_nothing() {
        assert_eq!(lookup("db.internal:5432:skyplan\n", &wanted()), None);
        assert_eq!(lookup("*:*:*:someone-else:pw\n", &wanted()), None);
    }

    #[test]
    fn a_file_others_can_read_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pgpass");
        std::fs::write(&path, "*:*:*:*:secret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        // PGPASSFILE is read by this process only through `password`; set for this test alone.
        let found = with_passfile(&path, || password(&wanted()));
        assert_eq!(found, None);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let found = with_passfile(&path, || password(&wanted()));
        assert_eq!(found.as_deref(), Some("secret"));
    }

    fn with_passfile<T>(path: &std::path::Path, f: impl FnOnce() -> T) -> T {
        static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _guard = LOCK.lock().unwrap_or_else(|p| p.into_inner());
        std::env::set_var("PGPASSFILE", path);
        let result = f();
        std::env::remove_var("PGPASSFILE");
        result
    }
}
