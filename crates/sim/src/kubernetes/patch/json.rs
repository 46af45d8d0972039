//! RFC 6902 JSON patch: a list of `add`, `remove`, `replace`, `move`, `copy` and `test`
//! operations on RFC 6901 pointers (`~1` is `/`, `~0` is `~`, `-` appends to a list), applied
//! in order; the first that fails fails the whole patch.

use serde_json::Value;

pub fn apply(document: &Value, operations: &Value) -> Result<Value, String> {
    let Value::Array(operations) = operations else {
        return Err("a JSON patch must be a list of operations".into());
    };
    let mut document = document.clone();
    for operation in operations {
        apply_one(&mut document, operation)?;
    }
    Ok(document)
}

fn apply_one(document: &mut Value, operation: &Value) -> Result<(), String> {
    let op = field(operation, "op")?;
    let path = pointer(field(operation, "path")?)?;
    let value = || {
        operation
            .get("value")
            .cloned()
            .ok_or_else(|| format!("operation {op} needs a value"))
    };
    let from = || field(operation, "from").and_then(pointer);
    match op {
        "add" => add(document, &path, value()?),
        "remove" => remove(document, &path).map(drop),
        "replace" => {
            let target = get_mut(document, &path).ok_or_else(|| {
                format!(
                    "replace operation does not apply: {} is missing",
                    show(&path)
                )
            })?;
            *target = value()?;
            Ok(())
        }
        "move" => {
            let from = from()?;
            if path.starts_with(&from) && path.len() > from.len() {
                return Err("cannot move a value into one of its own children".into());
            }
            let moved = remove(document, &from)?;
            add(document, &path, moved)
        }
        "copy" => {
            let copied = get_mut(document, &from()?)
                .map(|v| v.clone())
                .ok_or("copy operation does not apply: from is missing")?;
            add(document, &path, copied)
        }
        "test" => match get_mut(document, &path) {
            Some(found) if *found == value()? => Ok(()),
            _ => Err(format!("testing value {} failed", show(&path))),
        },
        other => Err(format!("unexpected kind of operation: {other:?}")),
    }
}

fn field<'a>(operation: &'a Value, name: &str) -> Result<&'a str, String> {
    operation
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("operation is missing {name:?}: {operation}"))
}

/// RFC 6901: "" is the whole document, otherwise "/"-separated unescaped tokens.
fn pointer(text: &str) -> Result<Vec<String>, String> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let rest = text
        .strip_prefix('/')
        .ok_or_else(|| format!("JSON pointer {text:?} must start with /"))?;
    Ok(rest
        .split('/')
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn show(path: &[String]) -> String {
    format!("/{}", path.join("/"))
}

fn get_mut<'a>(document: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(document, |node, token| match node {
        Value::Object(map) => map.get_mut(token),
        Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
        _ => None,
    })
}

fn add(document: &mut Value, path: &[String], value: Value) -> Result<(), String> {
    let Some((last, parent)) = path.split_last() else {
        *document = value;
        return Ok(());
    };
    let missing = || {
        format!(
            "add operation does not apply: doc is missing path: {}",
            show(path)
        )
    };
    match get_mut(document, parent).ok_or_else(missing)? {
        Value::Object(map) => {
            map.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(items) if last == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => match last.parse::<usize>() {
            Ok(index) if index <= items.len() => {
                items.insert(index, value);
                Ok(())
            }
            _ => Err(format!(
                "add operation does not apply: index {last} is out of range"
            )),
        },
        _ => Err(missing()),
    }
}

fn remove(document: &mut Value, path: &[String]) -> Result<Value, String> {
    let missing = || {
        format!(
            "remove operation does not apply: doc is missing path: {}",
            show(path)
        )
    };
    let (last, parent) = path
        .split_last()
        .ok_or("cannot remove the whole document")?;
    match get_mut(document, parent).ok_or_else(missing)? {
        Value::Object(map) => map.remove(last).ok_or_else(missing),
        Value::Array(items) => match last.parse::<usize>() {
            Ok(index) if index < items.len() => Ok(items.remove(index)),
            _ => Err(missing()),
        },
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn add_with_escaped_keys_as_the_cloudscale_ccm_annotates() {
        let service = json!({"metadata": {"name": "s"}});
        let patch = json!([
            {"op": "add", "path": "/metadata/annotations", "value": {}},
            {"op": "add", "path": "/metadata/annotations/k8s.cloudscale.ch~1loadbalancer-uuid",
             "value": "u-1"},
        ]);
        assert_eq!(
            apply(&service, &patch).unwrap(),
            json!({"metadata": {"name": "s",
                   "annotations": {"k8s.cloudscale.ch/loadbalancer-uuid": "u-1"}}})
        );
    }

    #[test]
    fn list_operations_append_insert_remove_move_and_copy() {
        let doc = json!({"a": [1, 2], "b": {"c": "x"}});
        let patch = json!([
            {"op": "add", "path": "/a/-", "value": 3},
            {"op": "add", "path": "/a/0", "value": 0},
            {"op": "remove", "path": "/a/1"},
            {"op": "move", "from": "/b/c", "path": "/d"},
            {"op": "copy", "from": "/d", "path": "/e"},
            {"op": "replace", "path": "/b", "value": 7},
        ]);
        assert_eq!(
            apply(&doc, &patch).unwrap(),
            json!({"a": [0, 2, 3], "b": 7, "d": "x", "e": "x"})
        );
    }

    #[test]
    fn a_failing_test_or_a_missing_path_fails_the_whole_patch() {
        let doc = json!({"metadata": {"resourceVersion": "5"}});
        let stale = json!([{"op": "test", "path": "/metadata/resourceVersion", "value": "4"}]);
        assert!(apply(&doc, &stale).unwrap_err().contains("testing value"));
        assert!(apply(&doc, &json!([{"op": "remove", "path": "/spec"}])).is_err());
        assert!(apply(&doc, &json!([{"op": "replace", "path": "/x", "value": 1}])).is_err());
        assert!(apply(&doc, &json!([{"op": "add", "path": "/x/y", "value": 1}])).is_err());
        assert!(apply(&doc, &json!([{"op": "jump", "path": "/x"}])).is_err());
        assert!(apply(&doc, &json!({"op": "add"})).is_err());
    }

    #[test]
    fn a_passing_test_changes_nothing() {
        let doc = json!({"a": {"b": [1]}});
        let patch = json!([{"op": "test", "path": "/a/b", "value": [1]}]);
        assert_eq!(apply(&doc, &patch).unwrap(), doc);
    }
}
