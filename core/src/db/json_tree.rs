//! A JSON document as a tree: an answer the core builds for a JSON result, and what Postgres
//! reads JSON text into before laying out its `jsonb`.
//!
//! An answer written as JSON text was read back by Postgres through a parser to lay out each
//! `jsonb`: on a `graph_impact` of a hundred dependents, the text and its reading were a third
//! of the call. Built as a tree, the answer crosses to the adapter as it is, and each host
//! makes its JSON type of it (SQLite its JSON text, Postgres its `jsonb` layout straight from
//! the tree). Strings are borrowed from a text the tree was read from where they hold no
//! escape, and objects are lists of members in their order: `serde_json::Value` owns every
//! string and keeps each object in a map, which cost as much to build and drop as the layout
//! itself. Numbers are integers of `int8`'s range only, the ones both hosts write the same.

use crate::Strings;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::borrow::Cow;
use std::fmt;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum JsonTree<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Str(Cow<'a, str>),
    /// An array of strings, in one buffer (a path's node ids, a list of files).
    Strings(Strings),
    Array(Vec<JsonTree<'a>>),
    /// Members in their order, a repeated key included.
    Object(Vec<(Cow<'a, str>, JsonTree<'a>)>),
}

impl JsonTree<'_> {
    /// `text` as a tree; `None` when it is not JSON or holds a number that is not an integer
    /// of `int8`'s range.
    pub fn parse(text: &str) -> Option<JsonTree<'_>> {
        serde_json::from_str(text).ok()
    }

    /// The document as compact JSON text, members in their order.
    pub fn to_text(&self) -> String {
        if let JsonTree::Strings(l) = self {
            // A result column's list, in a string sized once.
            return l.to_json();
        }
        // Serialising strings, integers, lists and maps with string keys cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl From<&str> for JsonTree<'static> {
    fn from(s: &str) -> Self {
        JsonTree::Str(Cow::Owned(s.to_owned()))
    }
}

impl From<String> for JsonTree<'static> {
    fn from(s: String) -> Self {
        JsonTree::Str(Cow::Owned(s))
    }
}

impl From<Option<String>> for JsonTree<'static> {
    fn from(s: Option<String>) -> Self {
        s.map_or(JsonTree::Null, JsonTree::from)
    }
}

impl Serialize for JsonTree<'_> {
    fn serialize<S: Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonTree::Null => out.serialize_unit(),
            JsonTree::Bool(b) => out.serialize_bool(*b),
            JsonTree::Int(n) => out.serialize_i64(*n),
            JsonTree::Str(s) => out.serialize_str(s),
            JsonTree::Strings(l) => l.serialize(out),
            JsonTree::Array(items) => out.collect_seq(items),
            JsonTree::Object(members) => {
                let mut map = out.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for JsonTree<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = JsonTree<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON with integers of int8's range")
    }

    fn visit_unit<E>(self) -> Result<JsonTree<'de>, E> {
        Ok(JsonTree::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<JsonTree<'de>, E> {
        Ok(JsonTree::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<JsonTree<'de>, E> {
        Ok(JsonTree::Int(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<JsonTree<'de>, E> {
        i64::try_from(n)
            .map(JsonTree::Int)
            .map_err(|_| E::custom("an integer beyond int8"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<JsonTree<'de>, E> {
        Err(E::custom("a number that is not an integer"))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<JsonTree<'de>, E> {
        Ok(JsonTree::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<JsonTree<'de>, E> {
        Ok(JsonTree::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<JsonTree<'de>, E> {
        Ok(JsonTree::Str(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonTree<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonTree::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonTree<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<JsonTree<'de>>()? {
            let JsonTree::Str(key) = key else {
                return Err(de::Error::custom("a key that is not a string"));
            };
            members.push((key, map.next_value()?));
        }
        Ok(JsonTree::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::JsonTree;
    use crate::Strings;

    #[test]
    fn text_read_and_written_again_is_the_same() {
        for text in [
            r#"{"b":[1,-2,true,false,null],"a":{"k":"v \" \\ é"},"b":"again"}"#,
            r#"[[],{},"",9223372036854775807,-9223372036854775808]"#,
            r#""top""#,
            "7",
        ] {
            let tree = JsonTree::parse(text).unwrap();
            assert_eq!(tree.to_text(), text);
        }
        for refused in ["[1.5]", "[18446744073709551615]", "{", "[1,]"] {
            assert_eq!(JsonTree::parse(refused), None, "{refused}");
        }
    }

    #[test]
    fn a_list_of_strings_writes_as_an_array() {
        let list = Strings::of(["a", "q\"uote", "tab\t"]);
        let tree = JsonTree::Object(vec![
            ("list".into(), JsonTree::Strings(list.clone())),
            ("none".into(), JsonTree::from(None)),
        ]);
        assert_eq!(
            tree.to_text(),
            format!(r#"{{"list":{},"none":null}}"#, list.to_json())
        );
    }
}
