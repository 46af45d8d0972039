//! The API's wire conventions: the `{"<command>response": …}` envelope, errors with
//! `errorcode` = HTTP status, lists with `count` = the total and `default.page.size` paging
//! (research §5), and the time format of `created` fields.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use jiff::Timestamp;
use serde_json::{json, Map, Value};

use super::params::Params;

pub type ApiResult<T> = Result<T, ApiError>;

/// An error as the server reports it, synchronously or as a failed job's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: u16,
    pub cs_code: u32,
    pub text: String,
}

/// `CSExceptionErrorCode` of InvalidParameterValueException, the usual 431.
const CS_INVALID_PARAMETER: u32 = 4350;
/// `CSExceptionErrorCode` of NetworkRuleConflictException.
const CS_RULE_CONFLICT: u32 = 4390;
/// `CSExceptionErrorCode` of CloudRuntimeException, what everything else carries.
const CS_RUNTIME: u32 = 4250;
const CS_UNKNOWN: u32 = 9999;

impl ApiError {
    /// 431: a parameter error.
    pub fn param(text: impl Into<String>) -> Self {
        ApiError {
            code: 431,
            cs_code: CS_INVALID_PARAMETER,
            text: text.into(),
        }
    }

    /// 530: an internal error; every CKS validation failure arrives as one (research §3.0).
    pub fn internal(text: impl Into<String>) -> Self {
        ApiError {
            code: 530,
            cs_code: CS_RUNTIME,
            text: text.into(),
        }
    }

    /// 537: a network rule conflict.
    pub fn conflict(text: impl Into<String>) -> Self {
        ApiError {
            code: 537,
            cs_code: CS_RULE_CONFLICT,
            text: text.into(),
        }
    }

    pub fn unauthorized() -> Self {
        ApiError {
            code: 401,
            cs_code: CS_UNKNOWN,
            text: "unable to verify user credentials and/or request signature".into(),
        }
    }

    pub fn unknown_command(command: &str) -> Self {
        ApiError {
            code: 432,
            cs_code: CS_UNKNOWN,
            text: format!(
                "The given command:{command} does not exist or it is not available for user"
            ),
        }
    }

    /// The body of the error, as it sits under the response key or in a job's `jobresult`.
    pub fn body(&self) -> Value {
        json!({
            "uuidList": [],
            "errorcode": self.code,
            "cserrorcode": self.cs_code,
            "errortext": self.text,
        })
    }

    /// The HTTP answer: status = errorcode, the error under `<command>response`.
    pub fn into_response_for(self, command: &str) -> Response {
        let status = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(envelope(command, self.body()))).into_response()
    }
}

/// `{"<command lower-case>response": body}`; without a command the server says `errorresponse`.
pub fn envelope(command: &str, body: Value) -> Value {
    let key = if command.is_empty() {
        "errorresponse".to_owned()
    } else {
        format!("{}response", command.to_lowercase())
    };
    json!({ key: body })
}

pub fn ok(command: &str, body: Value) -> Response {
    (StatusCode::OK, Json(envelope(command, body))).into_response()
}

/// The time format of the API's `created` fields: `2024-05-01T12:00:00+0000`.
pub fn cs_time(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%S%z").to_string()
}

/// A list answer `{"count": total, "<key>": [page]}`, `{}` when nothing matched, paged per
/// `BaseListCmd` (research §5): `page` and `pagesize` go together, `pagesize` is capped by
/// `default.page.size`, and without them at most `default.page.size` items come back.
pub fn list(params: &Params, key: &str, items: Vec<Value>, max_page: usize) -> ApiResult<Value> {
    let (start, size) = page_window(params, max_page)?;
    if items.is_empty() {
        return Ok(json!({}));
    }
    let count = items.len();
    let page: Vec<Value> = items.into_iter().skip(start).take(size).collect();
    let mut body = Map::new();
    body.insert("count".into(), count.into());
    body.insert(key.into(), Value::Array(page));
    Ok(Value::Object(body))
}

/// The start index and page size of a list request.
pub fn page_window(params: &Params, max_page: usize) -> ApiResult<(usize, usize)> {
    let page = params.optional_int("page")?;
    let pagesize = params.optional_int("pagesize")?;
    let unlimited = pagesize == Some(-1);
    match (page, pagesize) {
        (None, None) => Ok((0, max_page)),
        (Some(_), Some(-1)) => Err(ApiError::param(
            "Can't specify page parameter when pagesize is -1 (Unlimited)",
        )),
        (None, Some(_)) if unlimited => Ok((0, usize::MAX)),
        (None, Some(_)) => Err(ApiError::param(
            "\"page\" parameter is required when \"pagesize\" is specified",
        )),
        (Some(_), None) => Err(ApiError::param(
            "\"pagesize\" parameter is required when \"page\" is specified",
        )),
        (Some(page), Some(size)) => {
            if size < 1 || size as u64 > max_page as u64 {
                return Err(ApiError::param(format!(
                    "Page size can't exceed max allowed page size value: {max_page}"
                )));
            }
            let size = size as usize;
            // Page 0 or below is read as the first page, as BaseListCmd does.
            let start = size.saturating_mul(page.max(1) as usize - 1);
            Ok((start, size))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::new(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn items(n: usize) -> Vec<Value> {
        (0..n).map(|i| json!({ "i": i })).collect()
    }

    #[test]
    fn default_page_is_capped_but_count_is_the_total() {
        let body = list(&params(&[]), "thing", items(7), 5).unwrap();
        assert_eq!(body["count"], 7);
        assert_eq!(body["thing"].as_array().unwrap().len(), 5);
    }

    #[test]
    fn pages_follow_each_other_in_creation_order() {
        let p = params(&[("page", "2"), ("pagesize", "3")]);
        let body = list(&p, "thing", items(7), 5).unwrap();
        assert_eq!(body["thing"], json!([{"i": 3}, {"i": 4}, {"i": 5}]));
        let p = params(&[("page", "0"), ("pagesize", "3")]);
        assert_eq!(list(&p, "thing", items(7), 5).unwrap()["thing"][0]["i"], 0);
    }

    #[test]
    fn empty_lists_are_an_empty_object() {
        assert_eq!(list(&params(&[]), "thing", vec![], 5).unwrap(), json!({}));
    }

    #[test]
    fn paging_parameters_are_validated_like_the_server() {
        let refused = |pairs: &[(&str, &str)]| list(&params(pairs), "t", items(3), 5).unwrap_err();
        assert!(refused(&[("pagesize", "2")])
            .text
            .contains("\"page\" parameter is required"));
        assert!(refused(&[("page", "2")])
            .text
            .contains("\"pagesize\" parameter is required"));
        let too_big = refused(&[("page", "1"), ("pagesize", "6")]);
        assert_eq!(too_big.code, 431);
        assert_eq!(
            too_big.text,
            "Page size can't exceed max allowed page size value: 5"
        );
        assert!(refused(&[("page", "1"), ("pagesize", "-1")])
            .text
            .contains("Unlimited"));
        let all = list(&params(&[("pagesize", "-1")]), "t", items(9), 5).unwrap();
        assert_eq!(all["t"].as_array().unwrap().len(), 9);
    }

    #[test]
    fn errors_carry_their_code_in_the_envelope() {
        let body = envelope("listZones", ApiError::param("x").body());
        assert_eq!(body["listzonesresponse"]["errorcode"], 431);
        assert_eq!(body["listzonesresponse"]["cserrorcode"], 4350);
        assert_eq!(body["listzonesresponse"]["uuidList"], json!([]));
    }
}
