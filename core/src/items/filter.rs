//! The filter of an item search: an object whose keys are fields of the value. A field's
//! condition is a value it must equal (an object compares field by field, an array element by
//! element), or an object of operators: `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`.
//!
//! Equality is the framework's reference store's (Python's `==`): a missing field equals
//! `null`, numbers compare by value whatever their spelling (`1` equals `1.0`), and `true` and
//! `false` equal `1` and `0`. An order operator needs a number (or boolean) on both sides: a
//! field that holds none does not pass (the framework's Postgres store; its in-memory store
//! raises there instead), an operand that is none is an error.

use crate::{Error, Result};
use serde_json::{Map, Value as Json};
use std::cmp::Ordering;

/// A checked filter.
pub(crate) struct Filter(Map<String, Json>);

impl Filter {
    /// The filter of `options.filter` (an object), its operators checked.
    pub(crate) fn parse(arg: &str, m: Map<String, Json>) -> Result<Filter> {
        for (k, v) in &m {
            check(&format!("{arg}.{k}"), v)?;
        }
        Ok(Filter(m))
    }

    /// Whether an item's value passes.
    pub(crate) fn passes(&self, value: &Json) -> bool {
        let field = |k: &str| value.as_object().and_then(|o| o.get(k));
        self.0.iter().all(|(k, f)| condition(field(k), f))
    }
}

/// The operators a condition may use.
const OPERATORS: &[&str] = &["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"];

fn is_operators(m: &Map<String, Json>) -> bool {
    m.keys().any(|k| k.starts_with('$'))
}

/// Checks a condition: known operators, order operators on numbers.
fn check(arg: &str, f: &Json) -> Result<()> {
    match f {
        Json::Object(m) if is_operators(m) => {
            for (op, v) in m {
                let at = format!("{arg}.{op}");
                if !OPERATORS.contains(&op.as_str()) {
                    return Err(Error::invalid(
                        at,
                        format!("is not an operator (allowed: {})", OPERATORS.join(", ")),
                    ));
                }
                if op != "$eq" && op != "$ne" && number(Some(v)).is_none() {
                    return Err(Error::invalid(at, "must be a number"));
                }
            }
            Ok(())
        }
        Json::Object(m) => m.iter().try_for_each(|(k, v)| check(&format!("{arg}.{k}"), v)),
        Json::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| check(&format!("{arg}[{i}]"), v)),
        _ => Ok(()),
    }
}

/// Whether the field's value `v` (`None`: missing) meets condition `f`.
fn condition(v: Option<&Json>, f: &Json) -> bool {
    match f {
        Json::Object(m) if is_operators(m) => m.iter().all(|(op, x)| operator(v, op, x)),
        Json::Object(m) => match v {
            Some(Json::Object(o)) => m.iter().all(|(k, x)| condition(o.get(k), x)),
            _ => false,
        },
        Json::Array(a) => match v {
            Some(Json::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| condition(Some(y), x))
            }
            _ => false,
        },
        _ => equal(v, f),
    }
}

fn operator(v: Option<&Json>, op: &str, x: &Json) -> bool {
    let order = || number(v).zip(number(Some(x))).and_then(|(a, b)| a.partial_cmp(&b));
    match op {
        "$eq" => equal(v, x),
        "$ne" => !equal(v, x),
        "$gt" => order() == Some(Ordering::Greater),
        "$gte" => matches!(order(), Some(Ordering::Greater | Ordering::Equal)),
        "$lt" => order() == Some(Ordering::Less),
        "$lte" => matches!(order(), Some(Ordering::Less | Ordering::Equal)),
        _ => false,
    }
}

/// A number or boolean as a number.
fn number(v: Option<&Json>) -> Option<f64> {
    match v? {
        Json::Number(n) => n.as_f64(),
        Json::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
}

/// Python's `==` on JSON values (a missing field is `None`).
fn equal(v: Option<&Json>, x: &Json) -> bool {
    let v = v.unwrap_or(&Json::Null);
    match (v, x) {
        (Json::Null, Json::Null) => true,
        (Json::String(a), Json::String(b)) => a == b,
        (Json::Number(a), Json::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) => a == b,
            _ => a.as_f64() == b.as_f64(),
        },
        (Json::Number(_) | Json::Bool(_), Json::Number(_) | Json::Bool(_)) => {
            number(Some(v)) == number(Some(x))
        }
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(p, q)| equal(Some(p), q))
        }
        (Json::Object(a), Json::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, p)| b.get(k).is_some_and(|q| equal(Some(p), q)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn passes(filter: Json, value: Json) -> bool {
        let Json::Object(m) = filter else { panic!() };
        Filter::parse("filter", m).unwrap().passes(&value)
    }

    #[test]
    fn equality_is_pythons() {
        let v = json!({"n": 1, "b": true, "s": "x", "l": [1, 2], "o": {"k": 1.0}});
        assert!(passes(json!({"n": 1.0}), v.clone()));
        assert!(passes(json!({"b": 1}), v.clone()));
        assert!(passes(json!({"missing": null}), v.clone()));
        assert!(passes(json!({"l": [1.0, 2]}), v.clone()));
        assert!(passes(json!({"o": {"k": 1}}), v.clone()));
        assert!(passes(json!({"o": {"k": 1, "j": null}}), v.clone()));
        assert!(!passes(json!({"s": "y"}), v.clone()));
        assert!(!passes(json!({"n": "1"}), v.clone()));
        assert!(!passes(json!({"l": [1]}), v.clone()));
    }

    #[test]
    fn operators_compare_numbers() {
        let v = json!({"n": 5, "s": "a"});
        assert!(passes(json!({"n": {"$gt": 4, "$lte": 5}}), v.clone()));
        assert!(!passes(json!({"n": {"$lt": 5}}), v.clone()));
        assert!(passes(json!({"n": {"$ne": 4}}), v.clone()));
        assert!(passes(json!({"s": {"$eq": "a"}}), v.clone()));
        // A field that is no number does not pass an order operator.
        assert!(!passes(json!({"s": {"$gt": 0}}), v.clone()));
        assert!(!passes(json!({"missing": {"$gte": 0}}), v.clone()));
    }

    #[test]
    fn bad_operators_are_errors() {
        let err = |f: Json| {
            let Json::Object(m) = f else { panic!() };
            Filter::parse("options.filter", m).err().unwrap().to_string()
        };
        assert_eq!(
            err(json!({"n": {"$in": [1]}})),
            "options.filter.n.$in: is not an operator (allowed: $eq, $ne, $gt, $gte, $lt, $lte)"
        );
        assert_eq!(err(json!({"n": {"$gt": "3"}})), "options.filter.n.$gt: must be a number");
    }
}
