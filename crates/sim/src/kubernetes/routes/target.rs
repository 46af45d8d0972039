//! Which kind, namespace, name and part a request is about, read from the route template it
//! matched and the path parameters.

use std::collections::HashMap;

use axum::extract::{FromRequestParts, MatchedPath, Path};
use axum::http::request::Parts;

use crate::kubernetes::kinds::{Kind, ObjectKey};
use crate::kubernetes::status::ApiError;
use crate::kubernetes::store::Part;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    pub namespace: Option<String>,
    /// None for a collection.
    pub name: Option<String>,
    pub part: Part,
}

impl Target {
    /// The object addressed; a collection URL has none.
    pub fn key(&self) -> Result<ObjectKey, ApiError> {
        let name = self.name.clone().ok_or_else(ApiError::method_not_allowed)?;
        Ok(ObjectKey {
            namespace: self.namespace.clone(),
            name,
        })
    }

    fn from_route(template: &str, mut params: HashMap<String, String>) -> Target {
        let part = match template.ends_with("/status") {
            true => Part::Status,
            false => Part::Main,
        };
        let kind = if template.contains("/services") {
            Kind::Service
        } else if template.contains("/nodes") {
            Kind::Node
        } else {
            Kind::Namespace
        };
        let (namespace, name) = match kind {
            // `/api/v1/namespaces/{namespace}` names the Namespace itself.
            Kind::Namespace => (None, params.remove("namespace")),
            _ => (params.remove("namespace"), params.remove("name")),
        };
        Target {
            kind,
            namespace,
            name,
            part,
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Target {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let template = parts
            .extensions
            .get::<MatchedPath>()
            .map(|p| p.as_str().to_owned())
            .ok_or_else(ApiError::no_route)?;
        let Path(params) = Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::no_route())?;
        Ok(Target::from_route(&template, params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(template: &str, params: &[(&str, &str)]) -> Target {
        let params = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Target::from_route(template, params)
    }

    #[test]
    fn routes_name_their_kind_namespace_name_and_part() {
        let service = target(
            "/api/v1/namespaces/{namespace}/services/{name}/status",
            &[("namespace", "default"), ("name", "shop")],
        );
        assert_eq!(service.kind, Kind::Service);
        assert_eq!(
            service.key().unwrap(),
            ObjectKey::namespaced("default", "shop")
        );
        assert_eq!(service.part, Part::Status);
        let namespace = target("/api/v1/namespaces/{namespace}", &[("namespace", "web")]);
        assert_eq!(namespace.kind, Kind::Namespace);
        assert_eq!(namespace.key().unwrap(), ObjectKey::cluster("web"));
        let nodes = target("/api/v1/nodes", &[]);
        assert_eq!((nodes.kind, nodes.part), (Kind::Node, Part::Main));
        assert!(nodes.key().is_err());
        let all = target("/api/v1/services", &[]);
        assert_eq!((all.kind, all.namespace), (Kind::Service, None));
    }
}
