//! Response envelopes: `{"<command lower-case>response": {...}}`, with CloudStack's errors
//! (`errorcode`, `cserrorcode`, `errortext`) inside the same envelope.

use serde_json::{Map, Value};

use super::Error;

/// The object a command answered, or the error it (or a proxy in front of it) answered.
pub fn open(command: &str, status: u16, body: &[u8]) -> Result<Value, Error> {
    if status == 401 {
        return Err(Error::Unauthorized {
            command: command.to_string(),
        });
    }
    let success = (200..300).contains(&status);
    let inner = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|json| response_object(command, json));
    match inner {
        Some(inner) if success && !inner.contains_key("errorcode") => Ok(Value::Object(inner)),
        Some(inner) => match api_error(command, status, &inner) {
            error if error.code() == Some(401) => Err(Error::Unauthorized {
                command: command.to_string(),
            }),
            error => Err(error),
        },
        None if success => Err(Error::Decode {
            command: command.to_string(),
            detail: format!(
                "no `{}response` object in: {}",
                command.to_lowercase(),
                snippet(body)
            ),
        }),
        None => Err(Error::Api {
            command: command.to_string(),
            errorcode: status,
            cserrorcode: None,
            text: snippet(body),
        }),
    }
}

/// The object under `<command lower-case>response`; leniently, the only key ending in
/// `response` (errors of unknown commands come as `errorresponse`).
fn response_object(command: &str, json: Value) -> Option<Map<String, Value>> {
    let Value::Object(mut outer) = json else {
        return None;
    };
    let exact = format!("{}response", command.to_lowercase());
    let key = if outer.contains_key(&exact) {
        exact
    } else {
        let mut candidates = outer.keys().filter(|key| key.ends_with("response"));
        match (candidates.next(), candidates.next()) {
            (Some(only), None) => only.clone(),
            _ => return None,
        }
    };
    match outer.remove(&key)? {
        Value::Object(inner) => Some(inner),
        _ => None,
    }
}

/// An error from CloudStack's fields; the HTTP status stands in for a missing `errorcode`.
pub fn api_error(command: &str, status: u16, fields: &Map<String, Value>) -> Error {
    Error::Api {
        command: command.to_string(),
        errorcode: code_field(fields, "errorcode").unwrap_or(status),
        cserrorcode: number(fields.get("cserrorcode")).and_then(|n| u32::try_from(n).ok()),
        text: error_text(fields),
    }
}

pub fn code_field(fields: &Map<String, Value>, name: &str) -> Option<u16> {
    number(fields.get(name)).and_then(|n| u16::try_from(n).ok())
}

pub fn error_text(fields: &Map<String, Value>) -> String {
    fields
        .get("errortext")
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .unwrap_or("(no errortext)")
        .to_string()
}

/// A count, code or status, which CloudStack sometimes sends as a string.
pub fn number(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::Number(number) => number.as_u64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// The start of a body that is not an envelope (an HTML error page of a proxy, say).
fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    match text.trim() {
        "" => "(empty body)".to_string(),
        text => text.chars().take(300).collect(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(json: Value) -> Vec<u8> {
        serde_json::to_vec(&json).unwrap()
    }

    #[test]
    fn success_is_the_object_under_the_command_key() {
        let answer = body(json!({"listzonesresponse": {"count": 1, "zone": [{"id": "z"}]}}));
        assert_eq!(
            open("listZones", 200, &answer).unwrap(),
            json!({"count": 1, "zone": [{"id": "z"}]})
        );
    }

    #[test]
    fn a_single_other_response_key_is_accepted() {
        let answer = body(json!({"createloadbalancerresponse": {"jobid": "j"}}));
        assert_eq!(
            open("createLoadBalancerRule", 200, &answer).unwrap(),
            json!({"jobid": "j"})
        );
        let two = body(json!({"aresponse": {}, "bresponse": {}}));
        assert!(matches!(open("x", 200, &two), Err(Error::Decode { .. })));
    }

    #[test]
    fn error_envelope_becomes_an_api_error() {
        let answer = body(json!({"createloadbalancerruleresponse": {
            "uuidList": [], "errorcode": 537, "cserrorcode": 4350,
            "errortext": "The range specified, 80-80, conflicts with rule 3 which has 80-80"
        }}));
        let error = open("createLoadBalancerRule", 537, &answer).unwrap_err();
        assert_eq!(
            error.to_string(),
            "CloudStack createLoadBalancerRule: 537 (cserrorcode 4350): \
             The range specified, 80-80, conflicts with rule 3 which has 80-80"
        );
    }

    #[test]
    fn codes_sent_as_strings_are_read() {
        let answer = body(json!({"errorresponse": {"errorcode": "432", "errortext": "no"}}));
        let error = open("listThings", 432, &answer).unwrap_err();
        assert_eq!(error.code(), Some(432));
        assert_eq!(error.to_string(), "CloudStack listThings: 432: no");
    }

    #[test]
    fn bare_http_errors_keep_their_status_and_body() {
        let error = open("listZones", 502, b"<html>Bad Gateway</html>").unwrap_err();
        assert_eq!(
            error.to_string(),
            "CloudStack listZones: 502: <html>Bad Gateway</html>"
        );
        assert!(error.is_uncertain());
    }

    #[test]
    fn unauthorized_never_looks_at_the_body() {
        let error = open("listZones", 401, b"{}").unwrap_err();
        assert!(matches!(error, Error::Unauthorized { .. }));
        let inside = body(json!({"listzonesresponse": {"errorcode": 401, "errortext": "x"}}));
        let error = open("listZones", 200, &inside).unwrap_err();
        assert!(matches!(error, Error::Unauthorized { .. }));
    }

    #[test]
    fn success_without_envelope_is_a_decode_error() {
        let error = open("listZones", 200, b"[]").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("no `listzonesresponse` object in: []"),
            "{error}"
        );
    }
}
