//! The text of an item the search index holds: every string of its value, or the text at the
//! paths its `fields` name — `a.b` (a field of a field), `a[0]`, `a[-1]` (an element, from the
//! end when negative), `a[*]` and `a.*` (every element or field), `$` (the whole value). A
//! string is taken as it is, a number or boolean as written, an object or array as JSON.

use crate::{Error, Result};
use serde_json::Value as Json;

/// One step of a path.
#[derive(Debug, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    Every,
}

/// The steps of `path`, or the rule it breaks.
fn steps(path: &str) -> std::result::Result<Vec<Step>, &'static str> {
    if path == "$" {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for part in path.split('.') {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        match name {
            "" if out.is_empty() || rest.is_empty() => return Err("has an empty field name"),
            "" => {}
            "*" => out.push(Step::Every),
            n if n.contains(['{', '}', ']']) => {
                return Err("uses a form this store does not read (give each path on its own)")
            }
            n => out.push(Step::Field(n.to_owned())),
        }
        while !rest.is_empty() {
            let end = rest.find(']').ok_or("has an unclosed '['")?;
            let inner = &rest[1..end];
            out.push(match inner {
                "*" => Step::Every,
                i => Step::Index(i.parse().map_err(|_| "has an index that is not a number or *")?),
            });
            rest = &rest[end + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err("has text after ']'");
            }
        }
    }
    Ok(out)
}

/// Checks the `fields` of a put: paths as [`steps`] reads them.
pub(crate) fn check(arg: &str, paths: &[Json]) -> Result<()> {
    for (i, p) in paths.iter().enumerate() {
        let at = format!("{arg}[{i}]");
        let Json::String(s) = p else {
            return Err(Error::invalid(at, "must be a path (a string)"));
        };
        steps(s).map_err(|rule| Error::invalid(at, format!("{} {rule}", crate::error::echo(s))))?;
    }
    Ok(())
}

/// The indexed text of a value (JSON text) with its stored `fields` (JSON text, or `None`
/// for every string). Text that is not JSON indexes as nothing: the row checks keep it JSON.
pub(crate) fn text(value: &str, fields: Option<&str>) -> String {
    let Ok(value) = serde_json::from_str::<Json>(value) else {
        return String::new();
    };
    let mut out = Vec::new();
    match fields.map(serde_json::from_str::<Vec<String>>) {
        None => strings(&value, &mut out),
        Some(Ok(paths)) => {
            for p in paths {
                if let Ok(s) = steps(&p) {
                    at(&value, &s, &mut out);
                }
            }
        }
        Some(Err(_)) => {}
    }
    out.join("\n")
}

/// Every string in `v`, objects in key order.
fn strings(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => out.push(s.clone()),
        Json::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Json::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// The text at `steps` of `v`.
fn at(v: &Json, steps: &[Step], out: &mut Vec<String>) {
    let Some((first, rest)) = steps.split_first() else {
        match v {
            Json::Null => {}
            Json::String(s) => out.push(s.clone()),
            other => out.push(other.to_string()),
        }
        return;
    };
    match (first, v) {
        (Step::Field(f), Json::Object(m)) => {
            if let Some(x) = m.get(f) {
                at(x, rest, out);
            }
        }
        (Step::Index(i), Json::Array(a)) => {
            let i = if *i < 0 { a.len() as i64 + i } else { *i };
            if let Some(x) = usize::try_from(i).ok().and_then(|i| a.get(i)) {
                at(x, rest, out);
            }
        }
        (Step::Every, Json::Array(a)) => a.iter().for_each(|x| at(x, rest, out)),
        (Step::Every, Json::Object(m)) => m.values().for_each(|x| at(x, rest, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = r#"{"title":"Rotate tokens","tags":["auth","redis"],"n":3,
        "notes":[{"text":"first"},{"text":"last"}],"meta":{"owner":"ana"}}"#;

    #[test]
    fn every_string_by_default() {
        assert_eq!(text(V, None), "ana\nfirst\nlast\nauth\nredis\nRotate tokens");
    }

    #[test]
    fn paths_pick_the_text() {
        let t = |p: &str| text(V, Some(p));
        assert_eq!(t(r#"["title"]"#), "Rotate tokens");
        assert_eq!(t(r#"["tags[*]","n"]"#), "auth\nredis\n3");
        assert_eq!(t(r#"["notes[-1].text"]"#), "last");
        assert_eq!(t(r#"["notes[0].text","meta.*"]"#), "first\nana");
        assert_eq!(t(r#"["meta"]"#), r#"{"owner":"ana"}"#);
        assert_eq!(t(r#"["missing.path","tags[9]"]"#), "");
        assert_eq!(t("[]"), "");
        assert!(t(r#"["$"]"#).starts_with('{'));
    }

    #[test]
    fn bad_paths_are_refused() {
        let bad = |p: &str| check("options.fields", &[Json::from(p)]).unwrap_err().to_string();
        assert_eq!(bad("a[x]"), r#"options.fields[0]: "a[x]" has an index that is not a number or *"#);
        assert_eq!(bad("a[0"), r#"options.fields[0]: "a[0" has an unclosed '['"#);
        assert_eq!(bad("a..b"), r#"options.fields[0]: "a..b" has an empty field name"#);
        assert!(bad("{a,b}").contains("does not read"));
        assert!(check("f", &[Json::from(1)]).is_err());
        assert!(check("f", &[Json::from("a.b[2][*].c"), Json::from("$")]).is_ok());
    }
}
