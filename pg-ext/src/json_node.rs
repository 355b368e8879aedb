//! A JSON document read into a tree whose strings are borrowed from its text where they hold
//! no escape, and whose objects are lists: what [`crate::jsonb`] lays out. `serde_json::Value`
//! owns every string and keeps each object in a map, which cost as much to build and drop as
//! the layout itself.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// A JSON value; numbers are integers of `int8`'s range only (the reader refuses others).
pub enum Node<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Str(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Members in the text's order, a repeated key included.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

/// `text` as a tree; `None` when it is not JSON or holds a number that is not an integer of
/// `int8`'s range.
pub fn parse(text: &str) -> Option<Node<'_>> {
    serde_json::from_str(text).ok()
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON with integers of int8's range")
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Int(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Node<'de>, E> {
        i64::try_from(n)
            .map(Node::Int)
            .map_err(|_| E::custom("an integer beyond int8"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node<'de>, E> {
        Err(E::custom("a number that is not an integer"))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::Str(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<Node<'de>>()? {
            let Node::Str(key) = key else {
                return Err(de::Error::custom("a key that is not a string"));
            };
            members.push((key, map.next_value()?));
        }
        Ok(Node::Object(members))
    }
}
