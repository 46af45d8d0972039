//! An object's tags, as the cloudscale API carries them: a JSON object of strings.
//!
//! Kept as a sorted vector (`litemap`) rather than a `BTreeMap`: every object skyplan creates
//! carries one tag, and a `BTreeMap`'s first node is 540 bytes however few entries it holds. At
//! 5,000 load balancers a plan holds 135,000 tagged objects read from the cloud and as many
//! derived from the config; the nodes were a quarter of its memory (issue 9).

use std::fmt;
use std::ops::{Deref, DerefMut, Index};

use litemap::LiteMap;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Tags(LiteMap<String, String>);

impl Tags {
    pub fn new() -> Tags {
        Tags::default()
    }
}

impl Deref for Tags {
    type Target = LiteMap<String, String>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Tags {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Index<&str> for Tags {
    type Output = String;

    fn index(&self, key: &str) -> &String {
        self.0.get(key).unwrap_or_else(|| panic!("no tag `{key}`"))
    }
}

impl FromIterator<(String, String)> for Tags {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Tags {
        Tags(pairs.into_iter().collect())
    }
}

impl<const N: usize> From<[(String, String); N]> for Tags {
    fn from(pairs: [(String, String); N]) -> Tags {
        pairs.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a Tags {
    type Item = (&'a String, &'a String);
    type IntoIter = <&'a LiteMap<String, String> as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        (&self.0).into_iter()
    }
}

/// Always a JSON object: litemap writes an empty map as `[]` in human-readable formats, which
/// the API (and skyplan's state) would not read as tags.
impl Serialize for Tags {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter())
    }
}

/// Only from a JSON object, as a `BTreeMap` would be (litemap also takes a list of pairs); a
/// key given twice keeps its last value.
impl<'de> Deserialize<'de> for Tags {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tags, D::Error> {
        deserializer.deserialize_map(TagsVisitor)
    }
}

struct TagsVisitor;

impl<'de> Visitor<'de> for TagsVisitor {
    type Value = Tags;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an object of tags")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut entries: M) -> Result<Tags, M::Error> {
        let mut tags = LiteMap::with_capacity(entries.size_hint().unwrap_or(0));
        while let Some((key, value)) = entries.next_entry::<String, String>()? {
            // In order (as the API writes them) each tag is appended; otherwise inserted.
            if let Some((key, value)) = tags.try_append(key, value) {
                tags.insert(key, value);
            }
        }
        Ok(Tags(tags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_a_json_object_empty_or_not() {
        assert_eq!(serde_json::to_string(&Tags::new()).unwrap(), "{}");
        let tags = Tags::from([
            ("b".to_string(), "2".to_string()),
            ("a".to_string(), "1".to_string()),
        ]);
        assert_eq!(
            serde_json::to_string(&tags).unwrap(),
            r#"{"a":"1","b":"2"}"#
        );
    }

    #[test]
    fn unsorted_and_repeated_keys_read_as_a_map_reads_them() {
        let tags: Tags = serde_json::from_str(r#"{"z":"1","a":"2","z":"3"}"#).unwrap();
        assert_eq!(tags.len(), 2);
        assert_eq!(tags["a"], "2");
        assert_eq!(tags["z"], "3");
        assert_eq!(
            tags.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["a", "z"]
        );
        assert!(serde_json::from_str::<Tags>("[]").is_err());
    }
}
