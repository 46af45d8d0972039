//! Errors as the apiserver sends them: a `Status` body (research §2.4), JSON whatever the
//! client accepted, because client-go decodes an error body only when it is a JSON `Status`
//! with `status: "Failure"`. The messages follow apimachinery's `errors.go` word for word:
//! clients (kubectl's "Error from server (NotFound): …") print them as they are.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use super::kinds::Kind;

pub type ApiResult<T> = Result<T, ApiError>;

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: StatusCode,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ApiError {
    /// `services "s2" not found`; `details.kind` is the plural resource.
    pub fn not_found(kind: Kind, name: &str) -> ApiError {
        ApiError {
            code: StatusCode::NOT_FOUND,
            reason: "NotFound",
            message: format!("{} \"{name}\" not found", kind.plural()),
            details: Some(json!({"name": name, "kind": kind.plural()})),
        }
    }

    pub fn already_exists(kind: Kind, name: &str) -> ApiError {
        ApiError {
            code: StatusCode::CONFLICT,
            reason: "AlreadyExists",
            message: format!("{} \"{name}\" already exists", kind.plural()),
            details: Some(json!({"name": name, "kind": kind.plural()})),
        }
    }

    /// A stale resourceVersion (apiserver `store.go` OptimisticLockErrorMsg).
    pub fn conflict(kind: Kind, name: &str) -> ApiError {
        ApiError {
            code: StatusCode::CONFLICT,
            reason: "Conflict",
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; \
                 please apply your changes to the latest version and try again",
                kind.plural()
            ),
            details: Some(json!({"name": name, "kind": kind.plural()})),
        }
    }

    /// 422 with one cause per field error; `details.kind` is the Kind here (`NewInvalid`).
    pub fn invalid(kind: Kind, name: &str, errors: Vec<FieldError>) -> ApiError {
        let listed: Vec<String> = errors.iter().map(FieldError::to_string).collect();
        let summary = match listed.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = errors.iter().map(FieldError::cause).collect();
        ApiError {
            code: StatusCode::UNPROCESSABLE_ENTITY,
            reason: "Invalid",
            message: format!("{} \"{name}\" is invalid: {summary}", kind.name()),
            details: Some(json!({"name": name, "kind": kind.name(), "causes": causes})),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            code: StatusCode::BAD_REQUEST,
            reason: "BadRequest",
            message: message.into(),
            details: None,
        }
    }

    /// A patch that cannot be applied (apiserver `patch.go`: a 422 with the engine's words).
    pub fn unprocessable(message: impl Into<String>) -> ApiError {
        ApiError {
            code: StatusCode::UNPROCESSABLE_ENTITY,
            reason: "Invalid",
            message: message.into(),
            details: None,
        }
    }

    pub fn forbidden(kind: Kind, name: &str, why: &str) -> ApiError {
        ApiError {
            code: StatusCode::FORBIDDEN,
            reason: "Forbidden",
            message: format!("{} \"{name}\" is forbidden: {why}", kind.plural()),
            details: Some(json!({"name": name, "kind": kind.plural()})),
        }
    }

    /// apiserver `patch.go`: any patch type but the four it knows.
    pub fn unsupported_media_type(content_type: &str) -> ApiError {
        ApiError {
            code: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            reason: "UnsupportedMediaType",
            message: format!(
                "the body of the request was in an unknown format - accepted media types \
                 include: application/json-patch+json, application/merge-patch+json, \
                 application/apply-patch+yaml, application/strategic-merge-patch+json \
                 (got {content_type:?})"
            ),
            details: None,
        }
    }

    /// A body in a serialization the simulator does not read (protobuf): the apiserver's
    /// answer to a media type it has no serializer for.
    pub fn unsupported_body(content_type: &str) -> ApiError {
        ApiError {
            code: StatusCode::UNSUPPORTED_MEDIA_TYPE,
            reason: "UnsupportedMediaType",
            message: format!("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got {content_type})"),
            details: None,
        }
    }

    pub fn method_not_allowed() -> ApiError {
        ApiError {
            code: StatusCode::METHOD_NOT_ALLOWED,
            reason: "MethodNotAllowed",
            message: "the server does not allow this method on the requested resource".into(),
            details: None,
        }
    }

    /// A path no route serves (also `/openapi/v2`, which clients ask for only as protobuf).
    pub fn no_route() -> ApiError {
        ApiError {
            code: StatusCode::NOT_FOUND,
            reason: "NotFound",
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
        }
    }

    pub fn body(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.code, axum::Json(self.body())).into_response()
    }
}

/// One `field.Error` of apimachinery's validation, rendered as it renders them.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub field: String,
    pub kind: FieldErrorKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldErrorKind {
    Invalid {
        value: Value,
        detail: String,
    },
    Required {
        detail: String,
    },
    Duplicate {
        value: Value,
    },
    /// A duplicate Go struct, shown as `%#v` prints it, with the validator's detail.
    DuplicateStruct {
        shown: String,
        detail: String,
    },
    Forbidden {
        detail: String,
    },
    NotSupported {
        value: Value,
        supported: Vec<&'static str>,
    },
}

impl FieldError {
    pub fn invalid(field: impl Into<String>, value: Value, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Invalid { value, detail },
        }
    }

    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Required { detail },
        }
    }

    pub fn duplicate(field: impl Into<String>, value: Value) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Duplicate { value },
        }
    }

    pub fn duplicate_struct(
        field: impl Into<String>,
        shown: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::DuplicateStruct {
                shown: shown.into(),
                detail: detail.into(),
            },
        }
    }

    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        let detail = detail.into();
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::Forbidden { detail },
        }
    }

    pub fn not_supported(
        field: impl Into<String>,
        value: Value,
        supported: Vec<&'static str>,
    ) -> Self {
        FieldError {
            field: field.into(),
            kind: FieldErrorKind::NotSupported { value, supported },
        }
    }

    fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorKind::Invalid { .. } => "FieldValueInvalid",
            FieldErrorKind::Required { .. } => "FieldValueRequired",
            FieldErrorKind::Duplicate { .. } | FieldErrorKind::DuplicateStruct { .. } => {
                "FieldValueDuplicate"
            }
            FieldErrorKind::Forbidden { .. } => "FieldValueForbidden",
            FieldErrorKind::NotSupported { .. } => "FieldValueNotSupported",
        }
    }

    /// The error without its field, as `details.causes[].message` carries it.
    fn body(&self) -> String {
        let with_detail = |head: String, detail: &str| match detail {
            "" => head,
            detail => format!("{head}: {detail}"),
        };
        match &self.kind {
            FieldErrorKind::Invalid { value, detail } => {
                with_detail(format!("Invalid value: {value}"), detail)
            }
            FieldErrorKind::Required { detail } => with_detail("Required value".into(), detail),
            FieldErrorKind::Duplicate { value } => format!("Duplicate value: {value}"),
            FieldErrorKind::DuplicateStruct { shown, detail } => {
                with_detail(format!("Duplicate value: {shown}"), detail)
            }
            FieldErrorKind::Forbidden { detail } => with_detail("Forbidden".into(), detail),
            FieldErrorKind::NotSupported { value, supported } => {
                let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
                format!(
                    "Unsupported value: {value}: supported values: {}",
                    quoted.join(", ")
                )
            }
        }
    }

    fn cause(&self) -> Value {
        let mut cause = Map::new();
        cause.insert("reason".into(), self.reason().into());
        cause.insert("message".into(), self.body().into());
        cause.insert("field".into(), self.field.clone().into());
        Value::Object(cause)
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_is_the_status_kubectl_prints() {
        let body = ApiError::not_found(Kind::Service, "s2").body();
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                   "message": "services \"s2\" not found", "reason": "NotFound",
                   "details": {"name": "s2", "kind": "services"}, "code": 404})
        );
    }

    #[test]
    fn conflict_names_the_resource_and_says_to_retry() {
        let error = ApiError::conflict(Kind::Node, "node-1");
        assert_eq!(error.code, StatusCode::CONFLICT);
        assert_eq!(error.reason, "Conflict");
        assert_eq!(
            error.message,
            "Operation cannot be fulfilled on nodes \"node-1\": the object has been modified; \
             please apply your changes to the latest version and try again"
        );
        assert_eq!(error.body()["details"]["kind"], "nodes");
    }

    #[test]
    fn already_exists_is_a_409_of_its_own_reason() {
        let body = ApiError::already_exists(Kind::Service, "shop").body();
        assert_eq!(body["code"], 409);
        assert_eq!(body["reason"], "AlreadyExists");
        assert_eq!(body["message"], "services \"shop\" already exists");
    }

    #[test]
    fn invalid_lists_each_cause_with_its_field() {
        let error = ApiError::invalid(
            Kind::Service,
            "shop",
            vec![
                FieldError::invalid(
                    "spec.ports[0].port",
                    json!(0),
                    "must be between 1 and 65535, inclusive",
                ),
                FieldError::required("spec.ports[1].name", ""),
            ],
        );
        assert_eq!(error.code, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            error.message,
            "Service \"shop\" is invalid: [spec.ports[0].port: Invalid value: 0: must be between \
             1 and 65535, inclusive, spec.ports[1].name: Required value]"
        );
        let body = error.body();
        assert_eq!(body["details"]["kind"], "Service");
        assert_eq!(
            body["details"]["causes"][0],
            json!({"reason": "FieldValueInvalid", "field": "spec.ports[0].port",
                   "message": "Invalid value: 0: must be between 1 and 65535, inclusive"})
        );
        assert_eq!(body["details"]["causes"][1]["reason"], "FieldValueRequired");
    }

    #[test]
    fn a_single_cause_is_not_bracketed_and_strings_are_quoted() {
        let error = ApiError::invalid(
            Kind::Node,
            "n",
            vec![FieldError::not_supported(
                "spec.taints[0].effect",
                json!("Sometimes"),
                vec!["NoSchedule", "PreferNoSchedule", "NoExecute"],
            )],
        );
        assert_eq!(
            error.message,
            "Node \"n\" is invalid: spec.taints[0].effect: Unsupported value: \"Sometimes\": \
             supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
        );
    }
}
