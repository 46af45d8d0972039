//! Starting and stopping the simulator: bind, load the world, serve the routes behind request
//! counting, fault injection and authentication, write the world while serving and on
//! shutdown.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use axum::middleware::from_fn_with_state;
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::api::ApiError;
use super::faults::{self, AbortableListener, ConnectionAbort, Faults};
use super::persist;
use super::state::Sim;
use super::stats::RequestCounts;
use super::{auth, routes};
use crate::persist::Writer;

/// The token the simulator accepts unless told otherwise; embedded mode uses it too.
pub const DEFAULT_TOKEN: &str = "skyplan-sim-cloudscale-token";

/// How long a load balancer stays `changing` after a change unless told otherwise.
pub const DEFAULT_SETTLE: Duration = Duration::from_millis(300);

#[derive(Clone)]
pub struct SimOptions {
    /// The bearer token to accept; `None` means [`DEFAULT_TOKEN`].
    pub token: Option<String>,
    /// How long a load balancer stays `changing` after each change.
    pub settle: Duration,
    /// What goes wrong on purpose; none by default.
    pub faults: Faults,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            token: None,
            settle: DEFAULT_SETTLE,
            faults: Faults::default(),
        }
    }
}

/// Never shows the token.
impl fmt::Debug for SimOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimOptions")
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("settle", &self.settle)
            .field("faults", &self.faults.to_string())
            .finish()
    }
}

/// A running simulator. Dropping it leaves it serving until the runtime ends; call
/// [`SimHandle::shutdown`] to stop it and write the world file.
pub struct SimHandle {
    addr: SocketAddr,
    base_url: String,
    world: PathBuf,
    sim: Sim,
    stop: oneshot::Sender<()>,
    server: JoinHandle<io::Result<()>>,
    writer: Writer,
}

impl SimHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`, what a client uses in place of `https://api.cloudscale.ch/v1`.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// API requests served since start (or the last reset), `/_sim` routes excluded.
    pub fn request_count(&self) -> u64 {
        self.sim.stats().total()
    }

    /// The counters by `METHOD /route/{template}`.
    pub fn requests(&self) -> RequestCounts {
        self.sim.stats().snapshot()
    }

    pub fn reset_requests(&self) {
        self.sim.stats().reset();
    }

    /// Stops serving and writes the world file.
    pub async fn shutdown(self) -> io::Result<()> {
        let served = crate::persist::stop_server(self.stop, self.server).await;
        self.writer.stop().await;
        persist::flush(&self.sim, &self.world).await?;
        served
    }
}

/// Starts serving `world` (created with the default inventory if missing) on `listen` (use
/// `127.0.0.1:0` for a free port). Returns once it is accepting connections.
pub async fn spawn(
    world: PathBuf,
    listen: SocketAddr,
    options: SimOptions,
) -> io::Result<SimHandle> {
    let path = world.clone();
    let loaded = tokio::task::spawn_blocking(move || {
        crate::persist::load_or_create::<super::world::World>(&path)
    })
    .await
    .map_err(io::Error::other)??;
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = reachable(listener.local_addr()?);
    let base_url = format!("http://{addr}/v1");
    let token = options.token.unwrap_or_else(|| DEFAULT_TOKEN.to_owned());
    let sim = Sim::new(
        loaded,
        base_url.clone(),
        options.settle,
        token,
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
    Ok(SimHandle {
        addr,
        base_url,
        writer: Writer::spawn(sim.clone(), world.clone()),
        world,
        sim,
        stop,
        server,
    })
}

/// Counting sees every API request, including those faults or authentication refuse; faults
/// come before authentication, as a throttling proxy in front of the API would. The `/_sim`
/// control routes are neither counted, faulted nor authenticated.
fn router(sim: Sim) -> Router {
    routes::api()
        .route_layer(from_fn_with_state(sim.clone(), auth::require_bearer))
        .route_layer(from_fn_with_state(sim.clone(), faults::inject))
        .route_layer(from_fn_with_state(
            sim.clone(),
            crate::request_stats::count_request::<Sim>,
        ))
        .merge(crate::request_stats::routes())
        .fallback(|| async { ApiError::not_found() })
        .with_state(sim)
}

/// An address clients can reach: a wildcard listen address is reached on loopback.
fn reachable(addr: SocketAddr) -> SocketAddr {
    if addr.ip().is_unspecified() {
        SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
    } else {
        addr
    }
}
