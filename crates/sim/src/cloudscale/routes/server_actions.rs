//! `POST /v1/servers/{uuid}/start|stop|reboot`: power actions, answered with 204. The simulated
//! machine has no boot time, so the new status holds at once.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;

use crate::cloudscale::api::{lookup_mut, ApiResult};
use crate::cloudscale::origin::Origin;
use crate::cloudscale::state::Sim;

pub fn routes() -> Router<Sim> {
    Router::new()
        .route("/v1/servers/{uuid}/start", post(start))
        .route("/v1/servers/{uuid}/stop", post(stop))
        .route("/v1/servers/{uuid}/reboot", post(reboot))
}

async fn start(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    set_status(&sim, &uuid, "running")
}

async fn stop(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    set_status(&sim, &uuid, "stopped")
}

/// A reboot ends where a start does: running.
async fn reboot(State(sim): State<Sim>, Path(uuid): Path<String>) -> ApiResult<StatusCode> {
    set_status(&sim, &uuid, "running")
}

fn set_status(sim: &Sim, uuid: &str, status: &str) -> ApiResult<StatusCode> {
    // Nothing is rendered, so no href needs the request's origin.
    sim.write(&Origin::default(), |world, _| {
        lookup_mut(&mut world.servers, uuid)?.status = status.to_owned();
        Ok(StatusCode::NO_CONTENT)
    })
}
