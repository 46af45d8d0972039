//! Starting and stopping the simulator, and the one API endpoint: every request is counted,
//! may meet an injected fault, must be signed, then runs its command against the world after
//! the jobs due by now have advanced. A ticker advances jobs between requests too, so the
//! world file shows what a job did even when nobody asks.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, RawQuery, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use jiff::Timestamp;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::api::{self, ApiError};
use super::cks::ClusterApis;
use super::commands::{self, job_started, Reply};
use super::faults::{is_mutating, Fault};
use super::jobs::Job;
use super::params::Params;
use super::persist;
use super::signing::{self, Keys};
use super::state::Sim;
use super::stats::{FaultKind, RequestCounts};
use super::{SimOptions, DEFAULT_API_KEY, DEFAULT_SECRET_KEY};
use crate::cloudscale::{AbortableListener, ConnectionAbort};
use crate::persist::Writer;
use crate::request_stats::Finished;

/// The API's path, what clients append to the server's address.
pub const API_PATH: &str = "/client/api";

/// A running simulator. Call [`SimHandle::shutdown`] to stop it and write the world file.
pub struct SimHandle {
    addr: SocketAddr,
    world: PathBuf,
    sim: Sim,
    stop: oneshot::Sender<()>,
    server: JoinHandle<io::Result<()>>,
    ticker: JoinHandle<()>,
    writer: Writer,
    /// Each up CKS cluster's Kubernetes API.
    cluster_apis: ClusterApis,
}

impl SimHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/client/api`.
    pub fn base_url(&self) -> String {
        format!("http://{}{API_PATH}", self.addr)
    }

    /// API requests served since start (or the last reset), `/_sim` routes excluded.
    pub fn request_count(&self) -> u64 {
        self.sim.stats().snapshot().total
    }

    /// The counters by command and the faults injected.
    pub fn requests(&self) -> RequestCounts {
        self.sim.stats().snapshot()
    }

    pub fn reset_requests(&self) {
        self.sim.stats().reset();
    }

    /// Stops serving (letting requests in flight finish) and writes the world file.
    pub async fn shutdown(self) -> io::Result<()> {
        let served = crate::persist::stop_server(self.stop, self.server).await;
        self.ticker.abort();
        self.cluster_apis.shutdown().await;
        self.writer.stop().await;
        persist::flush(&self.sim, &self.world).await?;
        served
    }
}

pub async fn spawn(
    world: PathBuf,
    listen: SocketAddr,
    options: SimOptions,
) -> io::Result<SimHandle> {
    let path = world.clone();
    let mut loaded = tokio::task::spawn_blocking(move || {
        crate::persist::load_or_create::<super::world::World>(&path)
    })
    .await
    .map_err(io::Error::other)??;
    // The options name the server being simulated; the world file remembers it.
    loaded.settings.version = Some(options.version.clone());
    loaded.settings.hypervisor = Some(options.hypervisor.clone());
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = reachable(listener.local_addr()?);
    let keys = Keys {
        api_key: options.api_key.unwrap_or_else(|| DEFAULT_API_KEY.into()),
        secret_key: options
            .secret_key
            .unwrap_or_else(|| DEFAULT_SECRET_KEY.into()),
    };
    let sim = Sim::new(
        loaded,
        keys,
        options.job_time,
        options.page_size.max(1),
        options.faults,
    );
    let (stop, stopped) = oneshot::channel::<()>();
    let app = router(sim.clone()).into_make_service_with_connect_info::<ConnectionAbort>();
    let server = tokio::spawn(async move {
        axum::serve(AbortableListener(listener), app)
            .with_graceful_shutdown(async {
                // Err: the handle was dropped; keep serving until the runtime ends.
                if stopped.await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await
    });
    // Each cluster's CCM reaches the cloud through this same endpoint.
    let endpoint = format!("http://{addr}{API_PATH}");
    let cluster_apis = ClusterApis::start(sim.clone(), &world, endpoint).await;
    Ok(SimHandle {
        addr,
        cluster_apis,
        ticker: spawn_ticker(sim.clone(), options.job_time),
        writer: Writer::spawn(sim.clone(), world.clone()),
        world,
        sim,
        stop,
        server,
    })
}

fn spawn_ticker(sim: Sim, job_time: Duration) -> JoinHandle<()> {
    let period = (job_time / 4).clamp(Duration::from_millis(5), Duration::from_millis(100));
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(period);
        loop {
            interval.tick().await;
            sim.tick();
        }
    })
}

fn router(sim: Sim) -> Router {
    Router::new()
        .route(API_PATH, get(api_call).post(api_call))
        .route("/_sim/requests", get(show_requests))
        .route("/_sim/requests/reset", post(reset_requests))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(sim)
}

async fn show_requests(State(sim): State<Sim>) -> Json<RequestCounts> {
    Json(sim.stats().snapshot())
}

async fn reset_requests(State(sim): State<Sim>) -> StatusCode {
    sim.stats().reset();
    StatusCode::NO_CONTENT
}

/// Counts, answers and logs one API request (the log's `route` is its command).
async fn api_call(
    State(sim): State<Sim>,
    ConnectInfo(abort): ConnectInfo<ConnectionAbort>,
    method: Method,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let started = Instant::now();
    let params = Params::decode(
        query.as_deref().unwrap_or(""),
        &String::from_utf8_lossy(&body),
    );
    let command = params.command().to_owned();
    sim.stats().record(&command);
    let response = answer(&sim, &abort, &params, &command).await;
    let finished = Finished {
        method: method.to_string(),
        path: API_PATH.to_owned(),
        route: command,
        status: response.status().as_u16(),
    };
    sim.stats().log(finished, started, Instant::now());
    response
}

/// The answer to one API request: a fault drawn, else the command's.
async fn answer(sim: &Sim, abort: &ConnectionAbort, params: &Params, command: &str) -> Response {
    let (delay, fault) = sim.injector().draw(is_mutating(command));
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let after_commit = match fault {
        None => None,
        Some(Fault::AfterCommit { drop }) => Some(drop),
        Some(refusal) => return refuse(sim, abort, command, refusal),
    };
    let response = handle(sim, params);
    match after_commit {
        Some(drop) if response.status().is_success() => {
            sim.stats().record_fault(FaultKind::AfterCommit);
            if drop {
                abort.trip();
            }
            server_error(500)
        }
        _ => response,
    }
}

/// A fault that stops the request before it is carried out.
fn refuse(sim: &Sim, abort: &ConnectionAbort, command: &str, fault: Fault) -> Response {
    match fault {
        Fault::Throttle => {
            sim.stats().record_fault(FaultKind::Throttled);
            ApiError {
                code: 429,
                cs_code: 9999,
                text: "There are too many API calls. Please try after sometime".into(),
            }
            .into_response_for(command)
        }
        Fault::ServerError(status) => {
            sim.stats().record_fault(FaultKind::ServerError);
            server_error(status)
        }
        Fault::Drop | Fault::AfterCommit { .. } => {
            sim.stats().record_fault(FaultKind::Dropped);
            abort.trip();
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// What a failing server (or the proxy before it) answers: a status and a short text.
fn server_error(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, "Simulated server error (fault injection).").into_response()
}

/// Authentication, then the command.
fn handle(sim: &Sim, params: &Params) -> Response {
    let command = params.command();
    if !signing::verify(params, sim.keys(), Timestamp::now()) {
        return ApiError::unauthorized().into_response_for(command);
    }
    let injected = sim.injector();
    let outcome = sim.with_world(|world, cx| {
        match commands::dispatch(world, cx, params) {
            Ok(Reply::Now { body, mutated }) => (Ok(body), mutated),
            Ok(Reply::Job(start)) => {
                let id = start.id.clone();
                let fails = injected.job_fails();
                if fails {
                    sim.stats().record_fault(FaultKind::JobFailure);
                }
                let job = Job::new(start, cx, fails);
                let body = job_started(&job, id.as_deref());
                world.jobs.push(job);
                (Ok(body), true)
            }
            // A refused command changed nothing (commands validate before they mutate).
            Err(error) => (Err(error), false),
        }
    });
    match outcome {
        Ok(body) => api::ok(command, body),
        Err(error) => error.into_response_for(command),
    }
}

/// An address clients can reach: a wildcard listen address is reached on loopback.
fn reachable(addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
    } else {
        addr
    }
}
