//! The handlers behind every resource route: parse the query and body, run the store's verb
//! on the shared world, answer JSON (201 for a create) or a Status error.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;

use super::target::Target;
use crate::kubernetes::kinds::Kind;
use crate::kubernetes::patch::PatchType;
use crate::kubernetes::protobuf;
use crate::kubernetes::state::KubeSim;
use crate::kubernetes::status::{ApiError, ApiResult};
use crate::kubernetes::store::{self, ListQuery, WriteOptions};

type Params = Query<HashMap<String, String>>;

pub async fn list(State(sim): State<KubeSim>, target: Target, Query(params): Params) -> Response {
    let query = ListQuery {
        label_selector: params.get("labelSelector").cloned(),
        field_selector: params.get("fieldSelector").cloned(),
        limit: params.get("limit").and_then(|l| l.parse().ok()),
        continue_token: params.get("continue").cloned(),
    };
    let namespace = target.namespace.as_deref();
    answer(sim.read(|world| store::list(world, target.kind, namespace, &query)))
}

pub async fn get(State(sim): State<KubeSim>, target: Target) -> Response {
    answer(
        target
            .key()
            .and_then(|key| sim.read(|world| store::get(world, target.kind, &key))),
    )
}

pub async fn create(
    State(sim): State<KubeSim>,
    target: Target,
    Query(params): Params,
    body: Bytes,
) -> Response {
    let result = (|| {
        let options = write_options(&params)?;
        let object = object_body(target.kind, &body)?;
        let namespace = target.namespace.as_deref();
        sim.write(|world| store::create(world, target.kind, namespace, object, options))
    })();
    created(result, true)
}

pub async fn replace(
    State(sim): State<KubeSim>,
    target: Target,
    Query(params): Params,
    body: Bytes,
) -> Response {
    let result = (|| {
        let options = write_options(&params)?;
        let key = target.key()?;
        let object = object_body(target.kind, &body)?;
        sim.write(|world| store::update(world, target.kind, &key, object, target.part, options))
    })();
    answer(result)
}

pub async fn patch(
    State(sim): State<KubeSim>,
    target: Target,
    Query(params): Params,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let result = (|| {
        let options = write_options(&params)?;
        let key = target.key()?;
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let patch_type = PatchType::from_content_type(content_type)
            .ok_or_else(|| ApiError::unsupported_media_type(content_type))?;
        if patch_type == PatchType::Apply && params.get("fieldManager").is_none_or(String::is_empty)
        {
            return Err(ApiError::unprocessable(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is \
                 required for apply patch",
            ));
        }
        let patch = json_body(&body)?;
        sim.write(|world| {
            store::patch(
                world,
                target.kind,
                &key,
                patch_type,
                &patch,
                target.part,
                options,
            )
        })
    })();
    match result {
        Ok(written) => created(Ok(written.object), written.created),
        Err(error) => error.into_response(),
    }
}

pub async fn delete(
    State(sim): State<KubeSim>,
    target: Target,
    Query(params): Params,
    body: Bytes,
) -> Response {
    let result = (|| {
        let options = write_options(&params)?;
        let key = target.key()?;
        let delete_options = match body.is_empty() {
            true => Value::Null,
            false => json_body(&body)?,
        };
        let dry_run = delete_options["dryRun"]
            .as_array()
            .is_some_and(|d| d.iter().any(|v| v == "All"));
        let options = WriteOptions {
            dry_run: options.dry_run || dry_run,
        };
        sim.write(|world| store::delete(world, target.kind, &key, &delete_options, options))
    })();
    answer(result)
}

fn write_options(params: &HashMap<String, String>) -> ApiResult<WriteOptions> {
    match params.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(WriteOptions::default()),
        Some("All") => Ok(WriteOptions { dry_run: true }),
        Some(other) => Err(ApiError::bad_request(format!(
            "Invalid dryRun value: {other:?}: supported values: \"All\""
        ))),
    }
}

/// An object to create or replace: JSON, or protobuf from a typed client.
fn object_body(kind: Kind, body: &Bytes) -> ApiResult<Value> {
    if !body.starts_with(protobuf::MAGIC) {
        return json_body(body);
    }
    protobuf::decode(kind, body).map_err(|e| {
        ApiError::unsupported_body(&format!("application/vnd.kubernetes.protobuf: {e}"))
    })
}

/// Clients send JSON (kubectl and kube-rs, even for `apply-patch+yaml`).
fn json_body(body: &Bytes) -> ApiResult<Value> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the request body is not valid JSON (this simulator reads JSON, and protobuf only to create Services and Namespaces): {e}"
        ))
    })
}

fn answer(result: ApiResult<Value>) -> Response {
    created(result, false)
}

fn created(result: ApiResult<Value>, created: bool) -> Response {
    match result {
        Ok(object) => {
            let code = match created {
                true => StatusCode::CREATED,
                false => StatusCode::OK,
            };
            (code, Json(object)).into_response()
        }
        Err(error) => error.into_response(),
    }
}
