//! Reading the Kubernetes protobuf serialization of a request body, for the typed clients that
//! send nothing else: `kubectl create service|namespace` POSTs
//! `application/vnd.kubernetes.protobuf` and does not retry as JSON on a 415. The body is the
//! magic `k8s\0` and a `runtime.Unknown` {typeMeta = 1, raw = 2}, whose `raw` is the object in
//! the field numbers of kubernetes/api `core/v1/generated.proto` (ports = 1, clusterIP = 3,
//! type = 4, … as listed below). Only the fields a client creating a Service or Namespace sets
//! are read; the rest are skipped. Empty strings and zero numbers are dropped, as the JSON
//! encoding's `omitempty` drops them. Answers stay JSON: those clients accept it.

use serde_json::{json, Map, Value};

use super::kinds::Kind;

pub const MAGIC: &[u8] = b"k8s\0";

#[derive(Clone, Copy)]
enum Type {
    Str,
    Int,
    Bool,
    StrMap,
    Time,
    IntOrString,
    Message(&'static [Field]),
}

#[derive(Clone, Copy)]
struct Field(u64, &'static str, Type, bool);

const REPEATED: bool = true;
const ONE: bool = false;

const OBJECT_META: &[Field] = &[
    Field(1, "name", Type::Str, ONE),
    Field(2, "generateName", Type::Str, ONE),
    Field(3, "namespace", Type::Str, ONE),
    Field(5, "uid", Type::Str, ONE),
    Field(6, "resourceVersion", Type::Str, ONE),
    Field(8, "creationTimestamp", Type::Time, ONE),
    Field(11, "labels", Type::StrMap, ONE),
    Field(12, "annotations", Type::StrMap, ONE),
    Field(14, "finalizers", Type::Str, REPEATED),
];

const SERVICE_PORT: &[Field] = &[
    Field(1, "name", Type::Str, ONE),
    Field(2, "protocol", Type::Str, ONE),
    Field(3, "port", Type::Int, ONE),
    Field(4, "targetPort", Type::IntOrString, ONE),
    Field(5, "nodePort", Type::Int, ONE),
    Field(6, "appProtocol", Type::Str, ONE),
];

const SERVICE_SPEC: &[Field] = &[
    Field(1, "ports", Type::Message(SERVICE_PORT), REPEATED),
    Field(2, "selector", Type::StrMap, ONE),
    Field(3, "clusterIP", Type::Str, ONE),
    Field(4, "type", Type::Str, ONE),
    Field(5, "externalIPs", Type::Str, REPEATED),
    Field(7, "sessionAffinity", Type::Str, ONE),
    Field(8, "loadBalancerIP", Type::Str, ONE),
    Field(9, "loadBalancerSourceRanges", Type::Str, REPEATED),
    Field(10, "externalName", Type::Str, ONE),
    Field(11, "externalTrafficPolicy", Type::Str, ONE),
    Field(12, "healthCheckNodePort", Type::Int, ONE),
    Field(17, "ipFamilyPolicy", Type::Str, ONE),
    Field(18, "clusterIPs", Type::Str, REPEATED),
    Field(19, "ipFamilies", Type::Str, REPEATED),
    Field(20, "allocateLoadBalancerNodePorts", Type::Bool, ONE),
    Field(21, "loadBalancerClass", Type::Str, ONE),
    Field(22, "internalTrafficPolicy", Type::Str, ONE),
];

const SERVICE: &[Field] = &[
    Field(1, "metadata", Type::Message(OBJECT_META), ONE),
    Field(2, "spec", Type::Message(SERVICE_SPEC), ONE),
];

const NAMESPACE_SPEC: &[Field] = &[Field(1, "finalizers", Type::Str, REPEATED)];

const NAMESPACE: &[Field] = &[
    Field(1, "metadata", Type::Message(OBJECT_META), ONE),
    Field(2, "spec", Type::Message(NAMESPACE_SPEC), ONE),
];

/// The JSON object a protobuf body stands for. Err: why it cannot be read.
pub fn decode(kind: Kind, body: &[u8]) -> Result<Value, String> {
    let envelope = body
        .strip_prefix(MAGIC)
        .ok_or("not a Kubernetes protobuf body")?;
    let schema = match kind {
        Kind::Service => SERVICE,
        Kind::Namespace => NAMESPACE,
        Kind::Node => {
            return Err("protobuf bodies are read for Services and Namespaces only".into())
        }
    };
    let mut raw = None;
    for (number, value) in fields(envelope)? {
        if let (2, Wire::Bytes(bytes)) = (number, value) {
            raw = Some(bytes);
        }
    }
    let mut object = message(raw.ok_or("the protobuf envelope has no object")?, schema)?;
    object.insert("apiVersion".into(), json!("v1"));
    object.insert("kind".into(), json!(kind.name()));
    Ok(Value::Object(object))
}

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

fn fields(mut data: &[u8]) -> Result<Vec<(u64, Wire<'_>)>, String> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let tag = varint(&mut data)?;
        let value = match tag & 7 {
            0 => Wire::Varint(varint(&mut data)?),
            2 => {
                let len = usize::try_from(varint(&mut data)?).map_err(|e| e.to_string())?;
                let bytes = data.get(..len).ok_or("truncated protobuf field")?;
                data = &data[len..];
                Wire::Bytes(bytes)
            }
            1 => skip(&mut data, 8)?,
            5 => skip(&mut data, 4)?,
            other => return Err(format!("unsupported protobuf wire type {other}")),
        };
        out.push((tag >> 3, value));
    }
    Ok(out)
}

fn skip<'a>(data: &mut &[u8], n: usize) -> Result<Wire<'a>, String> {
    *data = data.get(n..).ok_or("truncated protobuf field")?;
    Ok(Wire::Fixed)
}

fn varint(data: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = data.split_first().ok_or("truncated protobuf varint")?;
        *data = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("protobuf varint too long".into())
}

fn message(data: &[u8], schema: &[Field]) -> Result<Map<String, Value>, String> {
    let mut object = Map::new();
    for (number, wire) in fields(data)? {
        let Some(Field(_, name, kind, repeated)) = schema.iter().find(|f| f.0 == number).copied()
        else {
            continue;
        };
        let Some(value) = scalar_or_message(kind, wire)? else {
            continue;
        };
        match (kind, repeated) {
            (Type::StrMap, _) => {
                let map = object.entry(name).or_insert_with(|| json!({}));
                if let (Value::Object(map), Value::Object(entry)) = (map, value) {
                    map.extend(entry);
                }
            }
            (_, REPEATED) => {
                let list = object.entry(name).or_insert_with(|| json!([]));
                if let Value::Array(list) = list {
                    list.push(value);
                }
            }
            (_, ONE) => drop(object.insert(name.into(), value)),
        }
    }
    Ok(object)
}

/// None: an empty or zero value, which the JSON encoding omits.
fn scalar_or_message(kind: Type, wire: Wire<'_>) -> Result<Option<Value>, String> {
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|e| e.to_string());
    Ok(match (kind, wire) {
        (Type::Str, Wire::Bytes(b)) => Some(json!(text(b)?)).filter(|s| s != ""),
        (Type::Int, Wire::Varint(v)) => Some(json!(v as i64)).filter(|v| *v != 0),
        (Type::Bool, Wire::Varint(v)) => Some(json!(v != 0)),
        (Type::Message(schema), Wire::Bytes(b)) => Some(Value::Object(message(b, schema)?)),
        (Type::StrMap, Wire::Bytes(b)) => {
            let entry = message(
                b,
                &[Field(1, "k", Type::Str, ONE), Field(2, "v", Type::Str, ONE)],
            )?;
            let key = entry
                .get("k")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let value = entry.get("v").cloned().unwrap_or(json!(""));
            Some(json!({ key: value }))
        }
        (Type::Time, Wire::Bytes(b)) => time(b)?,
        (Type::IntOrString, Wire::Bytes(b)) => int_or_string(b)?,
        _ => return Err("a protobuf field has an unexpected wire type".into()),
    })
}

/// metav1.Time {seconds = 1, nanos = 2}; the zero time is "unset".
fn time(data: &[u8]) -> Result<Option<Value>, String> {
    let seconds = fields(data)?.into_iter().find_map(|(n, w)| match (n, w) {
        (1, Wire::Varint(s)) => Some(s as i64),
        _ => None,
    });
    Ok(seconds.filter(|s| *s != 0).and_then(|s| {
        let at = jiff::Timestamp::from_second(s).ok()?;
        Some(json!(super::world::timestamp(at)))
    }))
}

/// intstr.IntOrString {type = 1 (0 int, 1 string), intVal = 2, strVal = 3}.
fn int_or_string(data: &[u8]) -> Result<Option<Value>, String> {
    let (mut is_string, mut number, mut text) = (false, 0i64, String::new());
    for (n, wire) in fields(data)? {
        match (n, wire) {
            (1, Wire::Varint(t)) => is_string = t == 1,
            (2, Wire::Varint(v)) => number = v as i64,
            (3, Wire::Bytes(b)) => text = String::from_utf8_lossy(b).into_owned(),
            _ => {}
        }
    }
    Ok(match is_string {
        true => Some(json!(text)),
        false => Some(json!(number)).filter(|v| *v != 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Protobuf encoding helpers, to build the bodies a typed client sends.
    fn tag(number: u64, wire: u64) -> Vec<u8> {
        encode_varint((number << 3) | wire)
    }

    fn encode_varint(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return out;
            }
            out.push(byte | 0x80);
        }
    }

    fn bytes(number: u64, data: &[u8]) -> Vec<u8> {
        let mut out = tag(number, 2);
        out.extend(encode_varint(data.len() as u64));
        out.extend(data);
        out
    }

    fn int(number: u64, v: u64) -> Vec<u8> {
        let mut out = tag(number, 0);
        out.extend(encode_varint(v));
        out
    }

    fn envelope(raw: &[u8]) -> Vec<u8> {
        let type_meta = [bytes(1, b"v1"), bytes(2, b"Service")].concat();
        [
            MAGIC.to_vec(),
            bytes(1, &type_meta),
            bytes(2, raw),
            bytes(3, b""),
            bytes(4, b""),
        ]
        .concat()
    }

    #[test]
    fn the_service_kubectl_create_service_loadbalancer_sends() {
        let label = [bytes(1, b"app"), bytes(2, b"shop")].concat();
        let metadata = [
            bytes(1, b"shop"),
            bytes(2, b""),
            bytes(8, &[]),
            bytes(11, &label),
        ]
        .concat();
        let target = [int(1, 0), int(2, 8080), bytes(3, b"")].concat();
        let port = [
            bytes(1, b"80-8080"),
            bytes(2, b"TCP"),
            int(3, 80),
            bytes(4, &target),
            int(5, 0),
        ]
        .concat();
        let spec = [
            bytes(1, &port),
            bytes(2, &label),
            bytes(3, b""),
            bytes(4, b"LoadBalancer"),
            int(13, 0),
        ]
        .concat();
        let status = bytes(1, &[]);
        let service = [bytes(1, &metadata), bytes(2, &spec), bytes(3, &status)].concat();
        let decoded = decode(Kind::Service, &envelope(&service)).unwrap();
        assert_eq!(
            decoded,
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "shop", "labels": {"app": "shop"}},
                   "spec": {"type": "LoadBalancer", "selector": {"app": "shop"},
                            "ports": [{"name": "80-8080", "protocol": "TCP", "port": 80,
                                       "targetPort": 8080}]}})
        );
    }

    #[test]
    fn a_named_target_port_and_broken_bodies() {
        let target = [int(1, 1), bytes(3, b"http")].concat();
        let port = [int(3, 80), bytes(4, &target)].concat();
        let service = bytes(2, &bytes(1, &port));
        let decoded = decode(Kind::Service, &envelope(&service)).unwrap();
        assert_eq!(decoded["spec"]["ports"][0]["targetPort"], "http");
        assert!(decode(Kind::Service, b"{}").is_err());
        assert!(decode(Kind::Service, &envelope(&[0x0a, 0x05, 0x01])).is_err());
        assert!(decode(Kind::Node, &envelope(&[])).is_err());
    }
}
