//! A namespace: a path of labels (`["users", "alice", "memories"]`), stored joined by `.`;
//! and the key of an item within one.
//! No label holds a `.` or is empty (the framework's own rule), so the stored text of a
//! namespace starts with `prefix.` exactly when the namespace starts with the prefix's labels.

use crate::json_input;
use crate::{Error, Result};
use serde_json::Value as Json;

/// The longest label, in bytes.
const MAX_LABEL: usize = 256;
/// The most labels.
const MAX_DEPTH: usize = 32;

/// The longest key, in bytes.
const MAX_KEY: usize = 1024;

/// Checks a key: at most [`MAX_KEY`] bytes, no NUL (an empty key is a key).
pub(crate) fn check_key(key: &str) -> Result<()> {
    if key.len() > MAX_KEY {
        return Err(Error::invalid("key", format!("must be at most {MAX_KEY} bytes")));
    }
    crate::args::no_nul("key", key)
}

/// The labels of `text`, a JSON array of strings; `empty` allows none (a prefix that is every
/// namespace). `*` is a label like another here; only a match pattern gives it a meaning.
pub(crate) fn parse(arg: &str, text: &str, empty: bool) -> Result<Vec<String>> {
    let Json::Array(items) = json_input::parse(arg, text)? else {
        return Err(Error::invalid(arg, "must be a JSON array of labels"));
    };
    labels(arg, &items, empty)
}

/// The labels of a JSON array (see [`parse`]).
pub(crate) fn labels(arg: &str, items: &[Json], empty: bool) -> Result<Vec<String>> {
    if items.is_empty() && !empty {
        return Err(Error::invalid(arg, "must hold at least one label"));
    }
    if items.len() > MAX_DEPTH {
        return Err(Error::invalid(arg, format!("must hold at most {MAX_DEPTH} labels")));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let at = format!("{arg}[{i}]");
            let Json::String(s) = v else {
                return Err(Error::invalid(at, "must be a string"));
            };
            if s.is_empty() || s.len() > MAX_LABEL || s.contains('.') {
                return Err(Error::invalid(
                    at,
                    format!("must be 1 to {MAX_LABEL} bytes without '.'"),
                ));
            }
            crate::args::no_nul(&at, s)?;
            Ok(s.clone())
        })
        .collect()
}

/// The stored form of a namespace.
pub(crate) fn join(labels: &[String]) -> String {
    labels.join(".")
}

/// The labels of a stored namespace.
pub(crate) fn split(stored: &str) -> Vec<String> {
    stored.split('.').map(str::to_owned).collect()
}

/// A namespace as the answers show it: a JSON array of its labels.
pub(crate) fn to_json(stored: &str) -> String {
    Json::from(split(stored)).to_string()
}

/// Whether `labels` match `pattern` from the start (`prefix`) or from the end (`suffix`),
/// `*` matching any one label.
pub(crate) fn matches(labels: &[String], pattern: &[String], suffix: bool) -> bool {
    if labels.len() < pattern.len() {
        return false;
    }
    let pair = |(l, p): (&String, &String)| p == "*" || l == p;
    if suffix {
        labels.iter().rev().zip(pattern.iter().rev()).all(pair)
    } else {
        labels.iter().zip(pattern).all(pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn labels_are_checked() {
        assert_eq!(parse("ns", r#"["a","b"]"#, false).unwrap(), v(&["a", "b"]));
        assert!(parse("ns", "[]", true).unwrap().is_empty());
        assert_eq!(
            parse("ns", "[]", false).unwrap_err().to_string(),
            "ns: must hold at least one label"
        );
        assert_eq!(
            parse("ns", r#"["a.b"]"#, false).unwrap_err().to_string(),
            "ns[0]: must be 1 to 256 bytes without '.'"
        );
        assert_eq!(
            parse("ns", r#"["a", 1]"#, false).unwrap_err().to_string(),
            "ns[1]: must be a string"
        );
        assert!(parse("ns", r#"{"a":1}"#, false).is_err());
    }

    #[test]
    fn stored_form_round_trips_and_prefixes_are_text_prefixes() {
        let ns = v(&["users", "alice", "notes"]);
        assert_eq!(split(&join(&ns)), ns);
        assert_eq!(to_json(&join(&ns)), r#"["users","alice","notes"]"#);
        assert!(join(&ns).starts_with(&format!("{}.", join(&v(&["users", "alice"])))));
        assert!(!join(&v(&["users", "alicea"])).starts_with("users.alice."));
    }

    #[test]
    fn patterns_match_like_the_reference_store() {
        let ns = v(&["a", "b", "c"]);
        assert!(matches(&ns, &v(&["a", "*"]), false));
        assert!(matches(&ns, &v(&["b", "c"]), true));
        assert!(matches(&ns, &v(&["*", "c"]), true));
        assert!(!matches(&ns, &v(&["b"]), false));
        assert!(!matches(&ns, &v(&["a", "b", "c", "d"]), false));
        assert!(matches(&ns, &[], true));
    }
}
