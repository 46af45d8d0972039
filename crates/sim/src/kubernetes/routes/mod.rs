//! The URLs: discovery and OpenAPI, then for each resource its collection, its objects and
//! their `/status`. One set of handlers serves every kind; [`target::Target`] reads which kind,
//! namespace and name a request is about from the route it matched.

mod handlers;
mod target;

use axum::routing::get;
use axum::Router;

use super::discovery;
use super::openapi;
use super::state::KubeSim;

pub fn api() -> Router<KubeSim> {
    let collection = || get(handlers::list).post(handlers::create);
    let object = || {
        get(handlers::get)
            .put(handlers::replace)
            .patch(handlers::patch)
            .delete(handlers::delete)
    };
    let status = || {
        get(handlers::get)
            .put(handlers::replace)
            .patch(handlers::patch)
    };
    Router::new()
        .route("/version", get(discovery::version))
        .route("/api", get(discovery::api))
        .route("/apis", get(discovery::apis))
        .route("/api/v1", get(discovery::core_v1))
        .route("/openapi/v3", get(openapi::root))
        .route("/openapi/v3/api/v1", get(openapi::core_v1))
        .route("/api/v1/namespaces", collection())
        .route("/api/v1/namespaces/{namespace}", object())
        .route("/api/v1/nodes", collection())
        .route("/api/v1/nodes/{name}", object())
        .route("/api/v1/nodes/{name}/status", status())
        .route("/api/v1/services", get(handlers::list))
        .route("/api/v1/namespaces/{namespace}/services", collection())
        .route("/api/v1/namespaces/{namespace}/services/{name}", object())
        .route(
            "/api/v1/namespaces/{namespace}/services/{name}/status",
            status(),
        )
}
