//! JSON from the caller (options, documents, imports): parsed once, with the one rule every
//! JSON text shares — no string or key may hold U+0000 (see [`crate::args::no_nul`]); the
//! error names where, as a path (`json.tables.mem_threads[2].title`).

use crate::args::nul_error;
use crate::{Error, Result};
use serde_json::{Map, Value as Json};

/// `text` parsed as JSON; `arg` names it in errors (malformed JSON, U+0000 in a string).
pub(crate) fn parse(arg: &str, text: &str) -> Result<Json> {
    let v: Json = serde_json::from_str(text)
        .map_err(|e| Error::invalid(arg, format!("malformed JSON: {e}")))?;
    // A string of valid JSON holds U+0000 only as the escape `\u0000` (a raw control
    // character is refused by the parser): without one in the text, nothing to look for.
    if text.contains("\\u0000") {
        check(arg, &v)?;
    }
    Ok(v)
}

/// Refuses U+0000 in any string or key of `v`, naming its path under `arg`.
pub(crate) fn check(arg: &str, v: &Json) -> Result<()> {
    match v {
        Json::String(s) => crate::args::no_nul(arg, s),
        Json::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| check(&format!("{arg}[{i}]"), x)),
        Json::Object(m) => check_object(arg, m),
        Json::Null | Json::Bool(_) | Json::Number(_) => Ok(()),
    }
}

/// [`check`] for an object's keys and values.
pub(crate) fn check_object(arg: &str, m: &Map<String, Json>) -> Result<()> {
    m.iter().try_for_each(|(k, x)| {
        if let Some(at) = k.find('\0') {
            return Err(nul_error(
                &format!("{arg} (a key)"),
                k[..at].chars().count(),
            ));
        }
        check(&format!("{arg}.{k}"), x)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_is_refused_with_its_path() {
        let e = parse("memory", r#"{"content":"front\u0000back"}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "memory.content: contains U+0000 (NUL) at character 5; text cannot hold it"
        );
        let e = parse("json", r#"{"t":[{"a":"ok"},{"b":"\u00e9\u0000"}]}"#).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("json.t[1].b: contains U+0000 (NUL) at character 1"));
        let e = parse("o", r#"{"k\u0000":1}"#).unwrap_err();
        assert!(e.to_string().starts_with("o (a key): contains U+0000"));
        assert!(parse("o", r#"{"a":"\\u0000 is six characters"}"#).is_ok());
        // A raw U+0000, in a string or between tokens, never parses: the escape is the only way in.
        assert!(parse("o", "{\"a\":\"x\u{0}y\"}").is_err());
        assert!(parse("o", "{\"a\":1}\u{0}").is_err());
        assert!(parse("o", "{")
            .unwrap_err()
            .to_string()
            .starts_with("o: malformed JSON"));
    }
}
