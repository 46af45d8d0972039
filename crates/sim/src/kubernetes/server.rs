//! Starting and stopping the simulator: load the world, bind, serve the routes behind request
//! counting, write the world while serving and on shutdown.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use axum::middleware::from_fn_with_state;
use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::health::NodeDraw;
use super::state::KubeSim;
use super::stats::RequestCounts;
use super::status::ApiError;
use super::{persist, routes, KubeSimOptions};
use crate::persist::{flush, Writer};

/// A running simulator. Dropping it leaves it serving until the runtime ends; call
/// [`KubeSimHandle::shutdown`] to stop it and write the world file.
pub struct KubeSimHandle {
    url: String,
    world: PathBuf,
    sim: KubeSim,
    stop: oneshot::Sender<()>,
    server: JoinHandle<io::Result<()>>,
    writer: Writer,
}

impl KubeSimHandle {
    /// `http://127.0.0.1:PORT`, the API root.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// API requests served since start (or the last reset), by `METHOD /route/{template}`.
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
        flush(&self.sim, &self.world).await?;
        served
    }
}

/// Binds, loads (or creates) the world and serves it. Returns once it accepts connections.
pub async fn spawn(options: KubeSimOptions) -> io::Result<KubeSimHandle> {
    let KubeSimOptions {
        world,
        listen,
        fresh_nodes,
        version,
        faults,
    } = options;
    let path = world.clone();
    let loaded =
        tokio::task::spawn_blocking(move || persist::load_or_create(&path, &fresh_nodes, version))
            .await
            .map_err(io::Error::other)??;
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = reachable(listener.local_addr()?);
    let mut loaded = loaded;
    loaded.node_draw = NodeDraw::of(&faults);
    let sim = KubeSim::new(loaded, version);
    let (stop, stopped) = oneshot::channel::<()>();
    let app = router(sim.clone());
    let server = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                // Err: the handle was dropped; keep serving until the runtime ends.
                if stopped.await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await
    });
    Ok(KubeSimHandle {
        url: format!("http://{addr}"),
        writer: Writer::spawn(sim.clone(), world.clone()),
        world,
        sim,
        stop,
        server,
    })
}

/// The `/_sim` control routes are not counted.
pub fn router(sim: KubeSim) -> Router {
    routes::api()
        .route_layer(from_fn_with_state(
            sim.clone(),
            crate::request_stats::count_request::<KubeSim>,
        ))
        .merge(crate::request_stats::routes())
        .fallback(|| async { ApiError::no_route() })
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
