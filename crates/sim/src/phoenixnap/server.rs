//! Starting and stopping the simulator: bind, load the world, serve the token endpoint and the
//! four APIs behind request counting, fault injection and the bearer check, write the world
//! while serving and on shutdown.

use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use axum::middleware::from_fn_with_state;
use axum::routing::post;
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::api::ApiError;
use super::auth::{self, Credentials, TOKEN_PATH};
use super::faults::{self, Faults};
use super::routes;
use super::state::{Sim, SimConfig};
use super::stats::RequestCounts;
use super::world::World;
use crate::cloudscale::{AbortableListener, ConnectionAbort};
use crate::persist::Writer;

/// The client the simulator accepts unless told otherwise; embedded mode uses it too.
pub const DEFAULT_CLIENT_ID: &str = "skyplan-sim-pnap-client";
pub const DEFAULT_CLIENT_SECRET: &str = "skyplan-sim-pnap-secret";

/// How long an attach or detach takes unless told otherwise.
pub const DEFAULT_TRANSITION: Duration = Duration::from_millis(300);

/// The environment variable `sim serve` reads the transition time from, in milliseconds; an
/// embedded caller may read it too (spawn does not).
pub const TRANSITION_ENV: &str = "SKYPLAN_SIM_PNAP_TRANSITION_MS";

/// The lifetime of the tokens handed out, in seconds (default 3600, as PhoenixNAP's), so that
/// tests can watch a client refresh before expiry.
pub const TOKEN_TTL_ENV: &str = "SKYPLAN_SIM_PNAP_TOKEN_TTL_S";
const DEFAULT_TOKEN_TTL: Duration = Duration::from_secs(3600);

#[derive(Clone)]
pub struct PnapSimOptions {
    /// The OAuth2 client accepted at the token endpoint; `None` means the defaults.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// How long assigning and unassigning take.
    pub transition: Duration,
    /// What goes wrong on purpose; none by default.
    pub faults: Faults,
}

impl Default for PnapSimOptions {
    fn default() -> Self {
        PnapSimOptions {
            client_id: None,
            client_secret: None,
            transition: DEFAULT_TRANSITION,
            faults: Faults::default(),
        }
    }
}

/// Never shows the secret.
impl fmt::Debug for PnapSimOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PnapSimOptions")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("transition", &self.transition)
            .field("faults", &self.faults.to_string())
            .finish()
    }
}

/// A running simulator. Dropping it leaves it serving until the runtime ends; call
/// [`PnapSimHandle::shutdown`] to stop it and write the world file.
pub struct PnapSimHandle {
    base_url: String,
    world: PathBuf,
    sim: Sim,
    stop: oneshot::Sender<()>,
    server: JoinHandle<io::Result<()>>,
    writer: Writer,
}

impl PnapSimHandle {
    /// `http://127.0.0.1:PORT`: the root. The APIs live under `/ips/v1`, `/networks/v1`,
    /// `/tag-manager/v1` and `/bmc/v1`, the token endpoint at
    /// `/auth/realms/BMC/protocol/openid-connect/token`.
    pub fn base_url(&self) -> String {
        self.base_url.clone()
    }

    /// Requests served since start (or the last reset), token requests included, `/_sim`
    /// routes excluded.
    pub fn request_count(&self) -> u64 {
        self.sim.stats().total()
    }

    /// The counters by `METHOD /route/{template}`, and the faults injected.
    pub fn requests(&self) -> RequestCounts {
        self.sim.stats().snapshot()
    }

    /// Stops serving and writes the world file.
    pub async fn shutdown(self) -> io::Result<()> {
        let served = crate::persist::stop_server(self.stop, self.server).await;
        self.writer.stop().await;
        crate::persist::flush(&self.sim, &self.world).await?;
        served
    }
}

/// Starts serving `world` (created with the default inventory if missing) on `listen` (use
/// `127.0.0.1:0` for a free port). Returns once it is accepting connections. The token
/// lifetime comes from `SKYPLAN_SIM_PNAP_TOKEN_TTL_S` when set.
pub async fn spawn(
    world: PathBuf,
    listen: SocketAddr,
    options: PnapSimOptions,
) -> io::Result<PnapSimHandle> {
    let path = world.clone();
    let loaded =
        tokio::task::spawn_blocking(move || crate::persist::load_or_create::<World>(&path))
            .await
            .map_err(io::Error::other)??;
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = reachable(listener.local_addr()?);
    let config = SimConfig {
        transition: options.transition,
        credentials: Credentials::new(
            options
                .client_id
                .unwrap_or_else(|| DEFAULT_CLIENT_ID.into()),
            options
                .client_secret
                .unwrap_or_else(|| DEFAULT_CLIENT_SECRET.into()),
        ),
        token_ttl: token_ttl()?,
        faults: options.faults,
    };
    let sim = Sim::new(loaded, config);
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
    Ok(PnapSimHandle {
        base_url: format!("http://{addr}"),
        writer: Writer::spawn(sim.clone(), world.clone()),
        world,
        sim,
        stop,
        server,
    })
}

fn token_ttl() -> io::Result<Duration> {
    match std::env::var(TOKEN_TTL_ENV) {
        Err(_) => Ok(DEFAULT_TOKEN_TTL),
        Ok(text) => text.trim().parse().map(Duration::from_secs).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{TOKEN_TTL_ENV}={text:?} is not a whole number of seconds"),
            )
        }),
    }
}

/// Counting sees every request, including those faults or authentication refuse; faults come
/// before authentication, as a proxy in front of the API would. The token endpoint is counted
/// but neither faulted nor authenticated by bearer; the `/_sim` routes are none of these.
fn router(sim: Sim) -> Router {
    let count = from_fn_with_state(sim.clone(), crate::request_stats::count_request::<Sim>);
    let apis = routes::api()
        .route_layer(from_fn_with_state(sim.clone(), auth::require_bearer))
        .route_layer(from_fn_with_state(sim.clone(), faults::inject))
        .route_layer(count.clone());
    let token = Router::new()
        .route(TOKEN_PATH, post(auth::token))
        .route_layer(count);
    apis.merge(token)
        .merge(crate::request_stats::routes())
        .fallback(|| async { ApiError::new(axum::http::StatusCode::NOT_FOUND, "Not found.") })
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
