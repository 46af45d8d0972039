//! The reaper goroutine of `newLoadBalancers` (research §6.5): every `gcIterationSeconds`
//! (30 s, scaled here) the cluster's blocks tagged `delete` are detached, then deleted once
//! `unassigned`. Its bug is kept: every block that is not yet unassigned or unassigning
//! detaches `blocks[0]` instead of itself, so several released blocks go one at a time (and
//! one tick may detach `blocks[0]` several times). Errors are only logged.

use std::time::Duration;

use super::blocks::{ip_blocks, IpBlock, Keep};
use super::client::PnapApi;

/// The reaper's interval in milliseconds (the real one: 30000); default ten passes.
pub const REAPER_ENV: &str = "SKYPLAN_SIM_PNAP_REAPER_MS";

/// [`REAPER_ENV`] if set, else ten passes.
pub fn reaper_interval(pass: Duration) -> Duration {
    std::env::var(REAPER_ENV)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map_or(pass * 10, Duration::from_millis)
}

/// What one tick would do to one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Delete(String),
    Wait(String),
    /// Detach this block id (always `blocks[0]`'s).
    Detach(String),
}

/// The tick's steps for the blocks as listed, in order.
pub fn steps(blocks: &[IpBlock]) -> Vec<Step> {
    blocks
        .iter()
        .map(|block| match block.status.as_str() {
            "unassigned" => Step::Delete(block.id.clone()),
            "unassigning" => Step::Wait(block.id.clone()),
            _ => Step::Detach(blocks[0].id.clone()),
        })
        .collect()
}

/// One tick; returns what it did (`delete ip block <id>`, `detach ip block <id> from network
/// <net>`) and the errors it logged, for tests and logs.
pub async fn tick(api: &PnapApi, network: &str, cluster_id: &str) -> Vec<String> {
    let blocks = match ip_blocks(api, cluster_id, None, Keep::Deleted).await {
        Ok(blocks) => blocks,
        Err(e) => {
            tracing::debug!(error = %e, "reaper: unable to retrieve IP blocks");
            return vec![format!("error: unable to retrieve IP blocks: {e}")];
        }
    };
    if blocks.is_empty() {
        // The real one logs this at error level every 30 s.
        tracing::trace!("reaper: no inactive blocks found");
        return Vec::new();
    }
    let mut log = Vec::new();
    for step in steps(&blocks) {
        let entry = match step {
            Step::Wait(_) => continue,
            Step::Delete(id) => match api.ips.delete(&format!("/ip-blocks/{id}")).await {
                Ok(_) => format!("delete ip block {id}"),
                Err(e) => format!("error: unable to delete IP block: {e}"),
            },
            Step::Detach(id) => {
                let path = format!("/public-networks/{network}/ip-blocks/{id}");
                match api.networks.delete(&path).await {
                    Ok(_) => format!("detach ip block {id} from network {network}"),
                    Err(e) => format!(
                        "error: unable to unassign IP block {id} from network {network}: {e}"
                    ),
                }
            }
        };
        tracing::debug!(%entry, "reaper");
        log.push(entry);
    }
    log
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(id: &str, status: &str) -> IpBlock {
        IpBlock {
            id: id.into(),
            status: status.into(),
            ..IpBlock::default()
        }
    }

    #[test]
    fn unassigned_blocks_go_unassigning_wait_and_the_rest_detach_the_first() {
        let blocks = [
            block("a", "assigned"),
            block("b", "assigned"),
            block("c", "unassigning"),
            block("d", "unassigned"),
            block("e", "error assigning"),
        ];
        assert_eq!(
            steps(&blocks),
            [
                Step::Detach("a".into()),
                Step::Detach("a".into()),
                Step::Wait("c".into()),
                Step::Delete("d".into()),
                Step::Detach("a".into()),
            ]
        );
    }

    #[test]
    fn the_interval_defaults_to_ten_passes() {
        if std::env::var(REAPER_ENV).is_err() {
            assert_eq!(
                reaper_interval(Duration::from_millis(200)),
                Duration::from_secs(2)
            );
        }
    }
}
