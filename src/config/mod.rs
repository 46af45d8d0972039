//! Config stage: TOML files → validated, resolved [`Config`]. No network; the only IO is
//! reading the config files. Errors carry the file and span so the CLI can show
//! file:line:col.

mod types;

pub use types::*;
