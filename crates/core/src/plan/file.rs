//! Saved plans (`plan --out FILE`, `apply FILE`): the plan with everything needed to prove,
//! at apply time, that it is still the plan for this state — or to refuse it.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Plan;
use crate::model::Address;

/// 2: an operation is `{kind, summary, payload}`, opaque to the pipeline. 3: the window
/// decisions the plan was printed with (`outlook`).
pub const FORMAT_VERSION: u32 = 3;

/// Read before the rest, so that a plan file of another format is refused as such.
#[derive(Deserialize)]
struct Header {
    format_version: u32,
}

/// What the plan was asked for on the command line; apply re-plans with the same.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRequest {
    pub targets: Vec<Address>,
    pub replace: Vec<Address>,
    pub allow_delete: Vec<Address>,
    /// `--exclude`: held back by apply. Left out of the file when empty, so a plan saved
    /// before exclusions existed still matches its checksum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<Address>,
}

/// Which state the plan was made against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateRef {
    pub lineage: String,
    pub serial: u64,
    pub content_hash: String,
}

/// What `plan --out` printed apply would hold back, and for when: the changes held back then
/// stay held back when the file is applied (apply does no more than the reviewed plan said it
/// would), and the maintenance window is checked again for the rest when apply runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedOutlook {
    /// The instant the decisions were taken for (RFC 3339): `plan --now`, or the clock.
    pub decided_at: String,
    /// Each change held back then, in the plan's order, with why.
    pub held: Vec<SavedHold>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedHold {
    pub address: Address,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanFile {
    pub format_version: u32,
    pub skyplan_version: String,
    pub created: String,
    pub state: StateRef,
    pub request: PlanRequest,
    pub plan: Plan,
    pub outlook: SavedOutlook,
    /// SHA-256 (hex) of the file's canonical JSON — this field set to "", keys sorted, no
    /// whitespace — so a file edited by hand, or damaged, no longer matches.
    pub checksum: String,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanFileError {
    #[error("cannot read the plan file {path}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the plan file {path}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a skyplan plan file")]
    Malformed {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    #[error(
        "the plan file {path} does not match its checksum: it was changed after it was written"
    )]
    Tampered { path: String },
    #[error(
        "the plan file has format version {found}; this skyplan reads version {FORMAT_VERSION}"
    )]
    FormatVersion { found: u32 },
    #[error("the plan was made by skyplan {found}; this is skyplan {}: plan again with this version", env!("CARGO_PKG_VERSION"))]
    SkyplanVersion { found: String },
    #[error("the plan was made for another state (lineage {planned}, this state is {current}): plan again")]
    Lineage { planned: String, current: String },
    #[error("the state changed since the plan was made (serial {planned} then, {current} now): plan again")]
    Serial { planned: u64, current: u64 },
    #[error("the state's content changed since the plan was made: plan again")]
    ContentHash,
    #[error("the cloud or the config changed since the plan was made, so it is no longer the plan to apply: plan again")]
    Stale,
}

impl PlanFile {
    pub fn new(
        plan: Plan,
        request: PlanRequest,
        state: StateRef,
        outlook: SavedOutlook,
    ) -> PlanFile {
        let mut file = PlanFile {
            format_version: FORMAT_VERSION,
            skyplan_version: env!("CARGO_PKG_VERSION").to_string(),
            created: jiff::Timestamp::now().to_string(),
            state,
            request,
            plan,
            outlook,
            checksum: String::new(),
        };
        file.checksum = file.compute_checksum();
        file
    }

    fn compute_checksum(&self) -> String {
        checksum_of(serde_json::to_value(self).expect("a plan file serializes"))
    }

    pub fn write(&self, path: &Path) -> Result<(), PlanFileError> {
        // Through a `Value`, so that each change's record (kept as compact JSON text) is
        // indented like the rest of the file.
        let json = serde_json::to_value(self).expect("a plan file serializes");
        let mut text = serde_json::to_string_pretty(&json).expect("a value serializes");
        text.push('\n');
        std::fs::write(path, text).map_err(|source| PlanFileError::Write {
            path: path.display().to_string(),
            source,
        })
    }

    /// Reads a plan file and checks it is intact and of this skyplan.
    pub fn read(path: &Path) -> Result<PlanFile, PlanFileError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PlanFileError::Read {
            path: shown.clone(),
            source,
        })?;
        let malformed = |source| PlanFileError::Malformed {
            path: shown.clone(),
            source,
        };
        let header: Header = serde_json::from_str(&text).map_err(malformed)?;
        if header.format_version != FORMAT_VERSION {
            return Err(PlanFileError::FormatVersion {
                found: header.format_version,
            });
        }
        let file: PlanFile = serde_json::from_str(&text).map_err(malformed)?;
        if file.checksum != file.compute_checksum() {
            return Err(PlanFileError::Tampered { path: shown });
        }
        if file.skyplan_version != env!("CARGO_PKG_VERSION") {
            return Err(PlanFileError::SkyplanVersion {
                found: file.skyplan_version,
            });
        }
        Ok(file)
    }

    /// Refuses the plan unless it was made against exactly this state.
    pub fn check_state(&self, current: &StateRef) -> Result<(), PlanFileError> {
        let planned = &self.state;
        if planned.lineage != current.lineage {
            return Err(PlanFileError::Lineage {
                planned: planned.lineage.clone(),
                current: current.lineage.clone(),
            });
        }
        if planned.serial != current.serial {
            return Err(PlanFileError::Serial {
                planned: planned.serial,
                current: current.serial,
            });
        }
        if planned.content_hash != current.content_hash {
            return Err(PlanFileError::ContentHash);
        }
        Ok(())
    }

    /// Refuses the plan unless planning again now gives the same plan.
    pub fn check_fresh(&self, fresh: &Plan) -> Result<(), PlanFileError> {
        if &self.plan == fresh {
            Ok(())
        } else {
            Err(PlanFileError::Stale)
        }
    }
}

/// SHA-256 (hex) of the canonical form of a plan file's JSON: `checksum` set to "", object
/// keys sorted (serde_json's `Value` keeps them so), no whitespace.
fn checksum_of(mut json: serde_json::Value) -> String {
    json["checksum"] = serde_json::Value::String(String::new());
    let bytes = serde_json::to_vec(&json).expect("a value serializes");
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> StateRef {
        StateRef {
            lineage: "l-1".into(),
            serial: 3,
            content_hash: "abc".into(),
        }
    }

    fn outlook() -> SavedOutlook {
        SavedOutlook {
            decided_at: "2026-11-27T11:00:00Z".into(),
            held: vec![SavedHold {
                address: "load-balancer.x".parse().unwrap(),
                reason: "pool-recreate is above what apply may do now (minimal)".into(),
            }],
        }
    }

    fn saved(dir: &Path) -> std::path::PathBuf {
        let path = dir.join("plan.json");
        PlanFile::new(Plan::default(), PlanRequest::default(), state(), outlook())
            .write(&path)
            .unwrap();
        path
    }

    #[test]
    fn round_trips_and_accepts_its_own_state() {
        let dir = tempfile::tempdir().unwrap();
        let file = PlanFile::read(&saved(dir.path())).unwrap();
        file.check_state(&state()).unwrap();
        file.check_fresh(&Plan::default()).unwrap();
        assert_eq!(file.outlook, outlook(), "the window decisions are kept");
    }

    /// A change held back when the plan was made cannot be let through by editing the file.
    #[test]
    fn a_window_decision_taken_out_of_the_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = saved(dir.path());
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        json["outlook"]["held"] = serde_json::json!([]);
        std::fs::write(&path, json.to_string()).unwrap();
        assert!(matches!(
            PlanFile::read(&path),
            Err(PlanFileError::Tampered { .. })
        ));
    }

    #[test]
    fn a_file_of_an_older_format_is_refused_as_such_before_its_content_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.json");
        let old = r#"{"format_version": 1, "plan": {"changes": [{"operations": [{"provider": "cloudscale", "op": "delete-pool"}]}]}}"#;
        std::fs::write(&path, old).unwrap();
        assert!(matches!(
            PlanFile::read(&path),
            Err(PlanFileError::FormatVersion { found: 1 })
        ));
    }

    #[test]
    fn an_edited_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = saved(dir.path());
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace("\"serial\": 3", "\"serial\": 4");
        std::fs::write(&path, text).unwrap();
        assert!(matches!(
            PlanFile::read(&path),
            Err(PlanFileError::Tampered { .. })
        ));
    }

    #[test]
    fn another_lineage_an_older_serial_or_other_content_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = PlanFile::read(&saved(dir.path())).unwrap();
        let other = |f: fn(&mut StateRef)| {
            let mut s = state();
            f(&mut s);
            s
        };
        assert!(matches!(
            file.check_state(&other(|s| s.lineage = "l-2".into())),
            Err(PlanFileError::Lineage { .. })
        ));
        assert!(matches!(
            file.check_state(&other(|s| s.serial = 4)),
            Err(PlanFileError::Serial { .. })
        ));
        assert!(matches!(
            file.check_state(&other(|s| s.content_hash = "def".into())),
            Err(PlanFileError::ContentHash)
        ));
    }

    #[test]
    fn a_change_s_record_is_saved_indented_and_read_back_equal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        let mut plan = Plan::default();
        plan.changes.push(crate::plan::ResourceChange::no_op(
            "load-balancer.x".parse().unwrap(),
            "cloudscale",
            Some(crate::plan::Record::of(
                &serde_json::json!({"zone": "lpg1", "ports": [80]}),
            )),
        ));
        let written = PlanFile::new(plan.clone(), PlanRequest::default(), state(), outlook());
        written.write(&path).unwrap();
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("\"record\": {\n"));
        let file = PlanFile::read(&path).unwrap();
        assert_eq!(file.checksum, written.checksum);
        file.check_fresh(&plan).unwrap();
    }

    #[test]
    fn exclusions_are_saved_and_a_file_without_them_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plan.json");
        let request = PlanRequest {
            exclude: vec!["load-balancer.x".parse().unwrap()],
            ..PlanRequest::default()
        };
        PlanFile::new(Plan::default(), request.clone(), state(), outlook())
            .write(&path)
            .unwrap();
        assert_eq!(PlanFile::read(&path).unwrap().request, request);
        // A file written before `exclude` existed: no such key, and its checksum holds.
        let older = saved(dir.path());
        let text = std::fs::read_to_string(&older).unwrap();
        assert!(!text.contains("exclude"), "{text}");
        assert!(PlanFile::read(&older).unwrap().request.exclude.is_empty());
    }

    #[test]
    fn a_plan_that_no_longer_matches_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let file = PlanFile::read(&saved(dir.path())).unwrap();
        let mut fresh = Plan::default();
        fresh.changes.push(crate::plan::ResourceChange::no_op(
            "load-balancer.x".parse().unwrap(),
            "cloudscale",
            None,
        ));
        assert!(matches!(
            file.check_fresh(&fresh),
            Err(PlanFileError::Stale)
        ));
    }
}
