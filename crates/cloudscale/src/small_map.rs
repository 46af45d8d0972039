//! A map of a few entries by name — an object's tags, a load balancer's pools — as a sorted
//! vector (`litemap`) rather than a `BTreeMap`.
//!
//! A `BTreeMap` allocates room for eleven entries in its first node however few it holds: 540
//! bytes for one tag, 5.6 KB for a load balancer's two pool sets. At 5,000 load balancers a
//! plan holds 135,000 tagged objects read from the cloud and as many derived from the config,
//! and those nodes were a third of its memory (issue 9).

use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut, Index};

use litemap::LiteMap;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SmallMap<V>(LiteMap<String, V>);

impl<V> SmallMap<V> {
    pub fn new() -> Self {
        SmallMap(LiteMap::new())
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, value)| value)
    }
}

impl<V> Default for SmallMap<V> {
    fn default() -> Self {
        SmallMap::new()
    }
}

impl<V> Deref for SmallMap<V> {
    type Target = LiteMap<String, V>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<V> DerefMut for SmallMap<V> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<V> Index<&str> for SmallMap<V> {
    type Output = V;

    fn index(&self, key: &str) -> &V {
        self.0
            .get(key)
            .unwrap_or_else(|| panic!("no entry `{key}`"))
    }
}

impl<V> FromIterator<(String, V)> for SmallMap<V> {
    fn from_iter<I: IntoIterator<Item = (String, V)>>(entries: I) -> Self {
        SmallMap(entries.into_iter().collect())
    }
}

impl<V, const N: usize> From<[(String, V); N]> for SmallMap<V> {
    fn from(entries: [(String, V); N]) -> Self {
        entries.into_iter().collect()
    }
}

impl<V> IntoIterator for SmallMap<V> {
    type Item = (String, V);
    type IntoIter = std::vec::IntoIter<(String, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_tuple_vec().into_iter()
    }
}

impl<'a, V> IntoIterator for &'a SmallMap<V> {
    type Item = (&'a String, &'a V);
    type IntoIter = <&'a LiteMap<String, V> as IntoIterator>::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        (&self.0).into_iter()
    }
}

/// Always a JSON object: litemap writes an empty map as `[]` in human-readable formats, which
/// the API (and skyplan's state) would not read as tags.
impl<V: Serialize> Serialize for SmallMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter())
    }
}

/// Only from a JSON object, as a `BTreeMap` would be (litemap also takes a list of pairs); a
/// key given twice keeps its last value.
impl<'de, V: Deserialize<'de>> Deserialize<'de> for SmallMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(SmallMapVisitor(PhantomData))
    }
}

struct SmallMapVisitor<V>(PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for SmallMapVisitor<V> {
    type Value = SmallMap<V>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut entries: M) -> Result<SmallMap<V>, M::Error> {
        // Room for one entry when the format does not say: an object of skyplan's has one tag.
        let mut map = LiteMap::with_capacity(entries.size_hint().unwrap_or(1));
        while let Some((key, value)) = entries.next_entry::<String, V>()? {
            // In order (as the API writes them) each entry is appended; otherwise inserted.
            if let Some((key, value)) = map.try_append(key, value) {
                map.insert(key, value);
            }
        }
        Ok(SmallMap(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Tags = SmallMap<String>;

    #[test]
    fn a_small_map_is_a_json_object_empty_or_not() {
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
