//! `?tag=name.value` filters of `GET /ip-blocks` and `GET /servers`: repeated, combined with
//! AND (the CCM relies on it, research §2). Names and values cannot hold `.`, so the first `.`
//! splits them. Choice: `tag=name` without a `.` matches a resource carrying that tag name
//! with any value (or none); `tag=name.` matches the tag with an empty or no value.

use super::world::{TagRef, World};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagFilter {
    name: String,
    /// `None`: any value.
    value: Option<String>,
}

/// The `tag` parameters of a query string, in order; other parameters are ignored.
pub fn tag_filters(query: &[(String, String)]) -> Vec<TagFilter> {
    query
        .iter()
        .filter(|(key, _)| key == "tag")
        .map(|(_, filter)| match filter.split_once('.') {
            Some((name, value)) => TagFilter {
                name: name.to_owned(),
                value: Some(value.to_owned()),
            },
            None => TagFilter {
                name: filter.clone(),
                value: None,
            },
        })
        .collect()
}

/// Whether a resource's tags satisfy every filter.
pub fn matches_all(world: &World, tags: &[TagRef], filters: &[TagFilter]) -> bool {
    filters.iter().all(|filter| {
        let Some(tag) = world.tag_named(&filter.name) else {
            return false;
        };
        tags.iter().any(|assigned| {
            assigned.tag_id == tag.id
                && match &filter.value {
                    None => true,
                    Some(wanted) => assigned.value.as_deref().unwrap_or("") == wanted,
                }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phoenixnap::world::Tag;

    fn world() -> World {
        let tag = |id: &str, name: &str| Tag {
            id: id.into(),
            name: name.into(),
            description: None,
            is_billing_tag: false,
            created_by: "USER".into(),
        };
        World {
            format: 1,
            locations: Vec::new(),
            tags: vec![tag("t1", "usage"), tag("t2", "cluster")],
            ip_blocks: Vec::new(),
            public_networks: Vec::new(),
            servers: Vec::new(),
        }
    }

    fn assigned(tag_id: &str, value: Option<&str>) -> TagRef {
        TagRef {
            tag_id: tag_id.into(),
            value: value.map(str::to_owned),
        }
    }

    fn filters(items: &[&str]) -> Vec<TagFilter> {
        let query: Vec<_> = items
            .iter()
            .map(|f| ("tag".to_owned(), f.to_string()))
            .collect();
        tag_filters(&query)
    }

    #[test]
    fn filters_combine_with_and() {
        let world = world();
        let tags = [assigned("t1", Some("auto")), assigned("t2", Some("uid-1"))];
        assert!(matches_all(
            &world,
            &tags,
            &filters(&["usage.auto", "cluster.uid-1"])
        ));
        assert!(!matches_all(
            &world,
            &tags,
            &filters(&["usage.auto", "cluster.uid-2"])
        ));
        assert!(matches_all(&world, &tags, &[]));
    }

    #[test]
    fn a_bare_name_matches_any_value_and_unknown_names_match_nothing() {
        let world = world();
        let tags = [assigned("t1", Some("auto")), assigned("t2", None)];
        assert!(matches_all(&world, &tags, &filters(&["usage"])));
        assert!(matches_all(&world, &tags, &filters(&["cluster."])));
        assert!(!matches_all(&world, &tags, &filters(&["cluster.x"])));
        assert!(!matches_all(&world, &tags, &filters(&["delete"])));
    }

    #[test]
    fn the_first_dot_splits_and_other_parameters_are_ignored() {
        let query = vec![
            ("location".to_owned(), "PHX".to_owned()),
            ("tag".to_owned(), "a.b.c".to_owned()),
        ];
        let expected = TagFilter {
            name: "a".into(),
            value: Some("b.c".into()),
        };
        assert_eq!(tag_filters(&query), vec![expected]);
    }
}
