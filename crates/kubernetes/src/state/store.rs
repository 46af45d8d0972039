//! The state in Secrets, written so that no reader ever sees half of it. The index Secret
//! `skyplan-state-W` names the stored state (lineage, serial) and holds it compressed when it
//! fits; a larger one goes first into pieces under a new generation, and only then is the
//! index switched to that generation — one replace, conditional on the resourceVersion read,
//! so of two writers only one wins. The old generation's pieces are deleted after, and so are
//! those of a writer killed before it switched the index, once they are an hour old (younger
//! ones may be a concurrent writer's, about to be refused or to win). A reader whose pieces
//! were deleted under it (a write finished meanwhile) reads the index again.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use k8s_openapi::ByteString;
use kube::api::{Api, DeleteParams, ListParams, PostParams};

use skyplan_core::state::{check_replaces, StateError, StateVersion};

use super::codec::{self, CHUNK_BYTES};
use super::errors::{failed, is_conflict, is_not_found, setup};
use super::objects::{self, Part, GENERATION};

const LINEAGE: &str = "skyplan.io/lineage";
const SERIAL: &str = "skyplan.io/serial";
const CHUNKS: &str = "skyplan.io/chunks";
const DIGEST: &str = "skyplan.io/sha256";
/// The data key of the compressed state (or of a piece of it).
const PAYLOAD: &str = "state.json.zlib";
/// How often a reader starts over when writes keep replacing the pieces it is reading.
const READ_ATTEMPTS: usize = 5;
/// The age past which a piece no index names is a killed writer's, never a running one's.
const LEFTOVER_AGE: SignedDuration = SignedDuration::from_hours(1);

/// The workspace's state Secrets.
#[derive(Clone)]
pub(super) struct StateSecrets {
    pub api: Api<Secret>,
    pub workspace: String,
}

/// What the index Secret says.
struct Index {
    version: StateVersion,
    layout: Layout,
    resource_version: Option<String>,
}

enum Layout {
    Inline(Vec<u8>),
    Chunks {
        generation: String,
        count: usize,
        digest: String,
    },
}

impl StateSecrets {
    /// The stored state's JSON, or `None` when nothing is stored.
    pub async fn load(&self) -> Result<Option<Vec<u8>>, StateError> {
        for _ in 0..READ_ATTEMPTS {
            let Some(index) = self.index().await? else {
                return Ok(None);
            };
            let compressed = match index.layout {
                Layout::Inline(bytes) => bytes,
                Layout::Chunks {
                    generation,
                    count,
                    digest,
                } => match self.read_chunks(&generation, count, &digest).await? {
                    Some(bytes) => bytes,
                    None => continue, // replaced while being read: read the new one
                },
            };
            return codec::decompress(&compressed).map(Some).map_err(setup);
        }
        Err(setup(format!(
            "the state {} kept changing while it was read; try again",
            objects::state_name(&self.workspace)
        )))
    }

    /// Stores `json` as `next` in place of `replaces`, refused unless the index still names
    /// `replaces`. Returns how many Secrets the state took.
    pub async fn write(
        &self,
        next: &StateVersion,
        json: &[u8],
        replaces: Option<&StateVersion>,
    ) -> Result<usize, StateError> {
        let current = self.index().await?;
        check_replaces(current.as_ref().map(|i| &i.version), replaces)?;
        let compressed = codec::compress(json);
        let layout = match compressed.len() <= CHUNK_BYTES {
            true => Layout::Inline(compressed),
            false => self.write_chunks(&compressed).await?,
        };
        let secrets = match &layout {
            Layout::Inline(_) => 1,
            Layout::Chunks { count, .. } => 1 + count,
        };
        let new_generation = generation_of(&layout);
        let resource_version = current.as_ref().and_then(|i| i.resource_version.clone());
        let switched = self.switch_index(next, layout, resource_version).await;
        if let Err(error) = switched {
            if let Some(generation) = new_generation {
                self.delete_generation(&generation).await;
            }
            return Err(self.refusal(error, replaces).await);
        }
        let old_generation = current.and_then(|i| generation_of(&i.layout));
        self.sweep(old_generation.as_deref(), new_generation.as_deref())
            .await;
        Ok(secrets)
    }

    async fn index(&self) -> Result<Option<Index>, StateError> {
        let name = objects::state_name(&self.workspace);
        let secret =
            (self.api.get_opt(&name).await).map_err(failed(format!("read the Secret {name}")))?;
        secret.map(|s| parse_index(&name, s)).transpose()
    }

    /// The pieces of `generation` put together; `None` when one is gone or they do not add up
    /// (a writer replaced them since the index was read).
    async fn read_chunks(
        &self,
        generation: &str,
        count: usize,
        digest: &str,
    ) -> Result<Option<Vec<u8>>, StateError> {
        let mut compressed = Vec::new();
        for index in 0..count {
            let name = objects::chunk_name(&self.workspace, generation, index);
            let secret = (self.api.get_opt(&name).await)
                .map_err(failed(format!("read the Secret {name}")))?;
            let Some(piece) = secret.and_then(|s| payload(&s)) else {
                return Ok(None);
            };
            compressed.extend_from_slice(&piece);
        }
        Ok((codec::digest(&compressed) == digest).then_some(compressed))
    }

    /// Writes the pieces of `compressed` under a new generation; none is visible to a reader
    /// until the index names the generation.
    async fn write_chunks(&self, compressed: &[u8]) -> Result<Layout, StateError> {
        let generation = uuid::Uuid::new_v4().simple().to_string()[..12].to_string();
        let pieces = codec::split(compressed);
        for (index, piece) in pieces.iter().enumerate() {
            let name = objects::chunk_name(&self.workspace, &generation, index);
            let mut secret = objects::secret(
                name.clone(),
                &self.workspace,
                Part::StateChunk,
                &[(GENERATION, &generation)],
            );
            secret.data = Some(BTreeMap::from([(
                PAYLOAD.to_string(),
                ByteString(piece.to_vec()),
            )]));
            let created = self.api.create(&PostParams::default(), &secret).await;
            if let Err(error) = created {
                self.delete_generation(&generation).await;
                return Err(failed(format!("create the Secret {name}"))(error));
            }
        }
        Ok(Layout::Chunks {
            generation,
            count: pieces.len(),
            digest: codec::digest(compressed),
        })
    }

    /// Creates the index, or replaces the one at `resource_version`: the one step that makes
    /// the new state the stored one.
    async fn switch_index(
        &self,
        next: &StateVersion,
        layout: Layout,
        resource_version: Option<String>,
    ) -> Result<(), kube::Error> {
        let name = objects::state_name(&self.workspace);
        let mut secret = objects::secret(name.clone(), &self.workspace, Part::State, &[]);
        let mut annotations = BTreeMap::from([
            (LINEAGE.to_string(), next.lineage.clone()),
            (SERIAL.to_string(), next.serial.to_string()),
        ]);
        match layout {
            Layout::Inline(bytes) => {
                secret.data = Some(BTreeMap::from([(PAYLOAD.to_string(), ByteString(bytes))]));
            }
            Layout::Chunks {
                generation,
                count,
                digest,
            } => {
                annotations.insert(GENERATION.to_string(), generation);
                annotations.insert(CHUNKS.to_string(), count.to_string());
                annotations.insert(DIGEST.to_string(), digest);
            }
        }
        secret.metadata.annotations = Some(annotations);
        let params = PostParams::default();
        match resource_version {
            Some(version) => {
                secret.metadata.resource_version = Some(version);
                self.api.replace(&name, &params, &secret).await.map(drop)
            }
            None => self.api.create(&params, &secret).await.map(drop),
        }
    }

    /// Why switching the index failed: another writer was first (stale), or the API said no.
    async fn refusal(&self, error: kube::Error, replaces: Option<&StateVersion>) -> StateError {
        let name = objects::state_name(&self.workspace);
        if !is_conflict(&error) {
            return failed(format!("write the Secret {name}"))(error);
        }
        let stored = match self.index().await {
            Ok(index) => index.map(|i| i.version),
            Err(error) => return error,
        };
        match check_replaces(stored.as_ref(), replaces) {
            Err(stale) => stale,
            // Changed between the write and the read: still not the one expected.
            Ok(()) => StateError::Stale {
                read: StateVersion::describe(replaces),
                stored: "a state written meanwhile".into(),
            },
        }
    }

    /// Deletes the pieces of `generation` (a write that failed). A failure only leaves unread
    /// Secrets behind, for a later sweep.
    async fn delete_generation(&self, generation: &str) {
        let more = [format!("{GENERATION}={generation}")];
        for piece in self.pieces(&more).await {
            self.delete_piece(piece.name).await;
        }
    }

    /// After a write: deletes the replaced generation's pieces, and any other than `current`'s
    /// that is old enough to be a killed writer's leftover.
    async fn sweep(&self, replaced: Option<&str>, current: Option<&str>) {
        let now = Timestamp::now();
        for piece in self.pieces(&[]).await {
            if piece.is_garbage(replaced, current, now) {
                self.delete_piece(piece.name).await;
            }
        }
    }

    /// The workspace's state pieces (metadata only: each holds up to 900 KiB).
    pub async fn pieces(&self, more: &[String]) -> Vec<Piece> {
        let selector = objects::selector(&self.workspace, Part::StateChunk, more);
        let listed = (self.api)
            .list_metadata(&ListParams::default().labels(&selector))
            .await;
        match listed {
            Ok(list) => list.items.into_iter().filter_map(Piece::of).collect(),
            Err(error) => {
                tracing::warn!(%error, "cannot list the state's pieces");
                vec![]
            }
        }
    }

    async fn delete_piece(&self, name: String) {
        let deleted = self.api.delete(&name, &DeleteParams::default()).await;
        if let Err(error) = deleted.map(drop) {
            if !is_not_found(&error) {
                tracing::warn!(%error, name, "cannot delete an old piece of the state");
            }
        }
    }
}

/// A piece of a state, as listed.
pub(super) struct Piece {
    pub name: String,
    pub generation: String,
    pub created: Option<Timestamp>,
}

impl Piece {
    fn of(meta: kube::core::PartialObjectMeta<Secret>) -> Option<Piece> {
        let metadata = meta.metadata;
        Some(Piece {
            generation: metadata.labels?.get(GENERATION)?.clone(),
            created: metadata.creation_timestamp.map(|t| t.0),
            name: metadata.name?,
        })
    }

    /// Whether no reader can need it: the generation the write replaced, or one no index
    /// names for long enough.
    fn is_garbage(&self, replaced: Option<&str>, current: Option<&str>, now: Timestamp) -> bool {
        if Some(self.generation.as_str()) == current {
            return false;
        }
        let old = (self.created).is_some_and(|created| created + LEFTOVER_AGE < now);
        Some(self.generation.as_str()) == replaced || old
    }
}

fn generation_of(layout: &Layout) -> Option<String> {
    match layout {
        Layout::Inline(_) => None,
        Layout::Chunks { generation, .. } => Some(generation.clone()),
    }
}

fn payload(secret: &Secret) -> Option<Vec<u8>> {
    secret.data.as_ref()?.get(PAYLOAD).map(|b| b.0.clone())
}

fn parse_index(name: &str, secret: Secret) -> Result<Index, StateError> {
    let corrupt = |what: &str| setup(format!("the Secret {name} is not a skyplan state: {what}"));
    let annotations = secret.metadata.annotations.clone().unwrap_or_default();
    let annotation = |key: &str| annotations.get(key).cloned();
    let lineage = annotation(LINEAGE).ok_or_else(|| corrupt("no lineage"))?;
    let serial = annotation(SERIAL)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt("no serial"))?;
    let layout = match annotation(GENERATION) {
        Some(generation) => Layout::Chunks {
            generation,
            count: annotation(CHUNKS)
                .and_then(|c| c.parse().ok())
                .ok_or_else(|| corrupt("no count of pieces"))?,
            digest: annotation(DIGEST).ok_or_else(|| corrupt("no digest"))?,
        },
        None => Layout::Inline(payload(&secret).ok_or_else(|| corrupt("no state"))?),
    };
    Ok(Index {
        version: StateVersion { lineage, serial },
        layout,
        resource_version: secret.metadata.resource_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(generation: &str, minutes_old: i64, now: Timestamp) -> Piece {
        Piece {
            name: format!("p-{generation}"),
            generation: generation.into(),
            created: Some(now - SignedDuration::from_mins(minutes_old)),
        }
    }

    #[test]
    fn a_sweep_takes_the_replaced_generation_and_old_leftovers_only() {
        let now = Timestamp::now();
        let (replaced, current) = (Some("old"), Some("new"));
        assert!(piece("old", 0, now).is_garbage(replaced, current, now));
        assert!(!piece("new", 120, now).is_garbage(replaced, current, now));
        // A concurrent writer's pieces, young: perhaps about to win.
        assert!(!piece("racing", 5, now).is_garbage(replaced, current, now));
        // A killed writer's, an hour on.
        assert!(piece("killed", 61, now).is_garbage(replaced, current, now));
    }
}
