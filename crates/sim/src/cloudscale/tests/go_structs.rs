//! Reads the JSON shape of Go structs from Go source: each struct's fields by their `json`
//! tags, embedded structs inlined, and which fields hold another struct of the same source.
//! Enough of Go for the cloudscale Go SDK's type files (one field a line, tags in backquotes),
//! not a Go parser.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    /// The JSON key; `None` for an embedded struct, whose fields are the parent's.
    json: Option<String>,
    /// The type with pointers, slices and the package stripped: `*[]LoadBalancerStub` →
    /// `LoadBalancerStub`.
    base: String,
}

#[derive(Debug, Default)]
pub struct GoStructs(HashMap<String, Vec<Field>>);

impl GoStructs {
    /// Adds every `type NAME struct { … }` of `source`.
    pub fn add_source(&mut self, source: &str) {
        let mut current: Option<(String, Vec<Field>)> = None;
        for line in source.lines().map(str::trim) {
            if let Some((name, fields)) = current.as_mut() {
                if line == "}" {
                    let (name, fields) = (std::mem::take(name), std::mem::take(fields));
                    self.0.insert(name, fields);
                    current = None;
                } else if let Some(field) = field(line) {
                    fields.push(field);
                }
            } else if let Some(name) = struct_start(line) {
                current = Some((name.to_owned(), Vec::new()));
            }
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Checks `samples` (objects as the API answers them) against struct `name`: every key the
    /// struct has must be in every sample object that holds it, and every key of a nested
    /// struct must be seen in at least one sample (a null pointer or an empty list hides its
    /// fields in that sample only). The problems found, as dotted paths.
    pub fn check(&self, name: &str, samples: &[Value]) -> Vec<String> {
        let mut walk = Walk::default();
        for sample in samples {
            self.walk(name, sample, "", &mut walk, 0);
        }
        let mut problems: Vec<String> = walk
            .missing
            .iter()
            .map(|path| format!("{name}: no `{path}` in an answer that should have it"))
            .collect();
        let mut required = BTreeSet::new();
        self.paths(name, "", &mut required, 0);
        problems.extend(
            required
                .difference(&walk.seen)
                .map(|path| format!("{name}: `{path}` never seen in any answer")),
        );
        problems
    }

    /// The fields of a struct with embedded structs inlined: (JSON key, base type).
    fn fields(&self, name: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for field in self.0.get(name).into_iter().flatten() {
            match &field.json {
                Some(json) => out.push((json.clone(), field.base.clone())),
                None => out.extend(self.fields(&field.base)),
            }
        }
        out
    }

    fn paths(&self, name: &str, prefix: &str, out: &mut BTreeSet<String>, depth: usize) {
        if depth > 8 {
            return;
        }
        for (json, base) in self.fields(name) {
            let path = format!("{prefix}{json}");
            if self.has(&base) {
                self.paths(&base, &format!("{path}."), out, depth + 1);
            }
            out.insert(path);
        }
    }

    fn walk(&self, name: &str, value: &Value, prefix: &str, walk: &mut Walk, depth: usize) {
        let Some(object) = value.as_object() else {
            return;
        };
        if depth > 8 {
            return;
        }
        for (json, base) in self.fields(name) {
            let path = format!("{prefix}{json}");
            // Go's decoder matches keys case-insensitively (the SDK's `RegionalResource`
            // is tagged `Region`), so the check does too.
            let found = object
                .iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(&json));
            let Some((_, inner)) = found else {
                walk.missing.insert(path);
                continue;
            };
            walk.seen.insert(path.clone());
            if self.has(&base) {
                let items = match inner {
                    Value::Array(items) => items.iter().collect(),
                    other => vec![other],
                };
                for item in items {
                    self.walk(&base, item, &format!("{path}."), walk, depth + 1);
                }
            }
        }
    }
}

#[derive(Default)]
struct Walk {
    seen: BTreeSet<String>,
    missing: BTreeSet<String>,
}

fn struct_start(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("type ")?;
    let (name, kind) = rest.split_once(char::is_whitespace)?;
    (kind.trim() == "struct {").then_some(name)
}

/// `Name Type `json:"key,omitempty"`` or an embedded `TypeName`; `None` for comments, blank
/// lines and fields the JSON leaves out (`json:"-"`).
fn field(line: &str) -> Option<Field> {
    let code = line.split("//").next()?.trim();
    if code.is_empty() {
        return None;
    }
    let (declaration, tag) = match code.split_once('`') {
        Some((declaration, tag)) => (declaration.trim(), Some(tag)),
        None => (code, None),
    };
    let words: Vec<&str> = declaration.split_whitespace().collect();
    match words.as_slice() {
        [embedded] => Some(Field {
            json: None,
            base: base_type(embedded),
        }),
        [name, ty, ..] => {
            let key = tag.and_then(json_key).unwrap_or_else(|| (*name).to_owned());
            (key != "-").then(|| Field {
                json: Some(key),
                base: base_type(ty),
            })
        }
        [] => None,
    }
}

fn json_key(tag: &str) -> Option<String> {
    let start = tag.find("json:\"")? + "json:\"".len();
    let value = &tag[start..];
    let value = &value[..value.find('"')?];
    let key = value.split(',').next()?;
    (!key.is_empty()).then(|| key.to_owned())
}

fn base_type(ty: &str) -> String {
    let mut ty = ty;
    loop {
        let stripped = ty.trim_start_matches('*').trim_start_matches("[]");
        if stripped == ty {
            break;
        }
        ty = stripped;
    }
    if ty.starts_with("map[") {
        return "map".into();
    }
    ty.rsplit('.').next().unwrap_or(ty).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SOURCE: &str = r#"
package cloudscale

type ZonalResource struct {
	Zone Zone `json:"zone"`
}

type Zone struct {
	Slug string `json:"slug"`
}

// A comment that mentions type Fake struct { inside.
type Thing struct {
	ZonalResource
	HREF   string            `json:"href,omitempty"`
	Parts  []Part            `json:"parts"`
	Owner  *Part             `json:"owner"` // may be null
	Secret string            `json:"-"`
	Tags   map[string]string `json:"tags"`
	When   time.Time         `json:"created_at"`
}

type Part struct {
	UUID string `json:"uuid"`
}
"#;

    fn structs() -> GoStructs {
        let mut structs = GoStructs::default();
        structs.add_source(SOURCE);
        structs
    }

    #[test]
    fn fields_come_from_json_tags_with_embedded_structs_inlined() {
        let structs = structs();
        let mut paths = BTreeSet::new();
        structs.paths("Thing", "", &mut paths, 0);
        let expected = [
            "created_at",
            "href",
            "owner",
            "owner.uuid",
            "parts",
            "parts.uuid",
            "tags",
            "zone",
            "zone.slug",
        ];
        assert_eq!(paths.into_iter().collect::<Vec<_>>(), expected);
        assert!(!structs.has("Fake"));
    }

    #[test]
    fn a_nested_field_needs_one_sample_and_a_direct_one_every_sample() {
        let structs = structs();
        let full = json!({"zone": {"slug": "a"}, "href": "h", "parts": [{"uuid": "u"}],
            "owner": null, "tags": {}, "created_at": "t"});
        let owned = json!({"zone": {"slug": "a"}, "href": "h", "parts": [],
            "owner": {"uuid": "o"}, "tags": {}, "CREATED_AT": "t"});
        assert_eq!(
            structs.check("Thing", &[full.clone(), owned]),
            Vec::<String>::new()
        );
        let problems = structs.check("Thing", &[full]);
        assert_eq!(problems, ["Thing: `owner.uuid` never seen in any answer"]);
        let without_href =
            json!({"zone": {}, "parts": [], "owner": null, "tags": {}, "created_at": "t"});
        let problems = structs.check("Thing", &[without_href]);
        assert!(problems.contains(&"Thing: no `href` in an answer that should have it".into()));
        assert!(problems.contains(&"Thing: no `zone.slug` in an answer that should have it".into()));
    }
}
