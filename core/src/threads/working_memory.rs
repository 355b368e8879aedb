//! Working memory: one text per scope key
//! (`resource:<id>` or `thread:<id>`), with the coding-agent template as the default, and
//! sanitised and truncated when injected.

use crate::cluster::route;
use crate::{Conn, Error, Result, Value};

/// What a scope's working memory holds until something is written: the coding agent's
/// headings.
const TEMPLATE: &str = include_str!("working_memory_template.md");

/// Longest stored working memory, in bytes.
pub(crate) const MAX_BYTES: usize = 64 * 1024;
/// Longest injected working memory, in characters.
pub(crate) const MAX_INJECTED_CHARS: usize = 4000;

fn check_key(key: &str) -> Result<&str> {
    let ok = ["resource:", "thread:"]
        .iter()
        .any(|p| key.strip_prefix(p).is_some_and(|rest| !rest.is_empty()));
    if !ok {
        return Err(Error::invalid(
            "scope_key",
            "must be \"resource:<id>\" or \"thread:<id>\"",
        ));
    }
    Ok(key)
}

/// The stored text of a scope, if any.
pub(crate) fn stored(conn: &mut dyn Conn, key: &str) -> Result<Option<String>> {
    Ok(route::query_value(
        conn,
        "SELECT content FROM mem_working_memory WHERE scope_key = ?1{home}",
        &[key.into()],
    )?
    .and_then(Value::into_string))
}

/// `wm_get(scope_key)` → the stored text, or the default template.
pub(crate) fn get(conn: &mut dyn Conn, key: &str) -> Result<String> {
    let key = check_key(key)?;
    Ok(stored(conn, key)?.unwrap_or_else(|| TEMPLATE.trim().to_owned()))
}

/// `wm_set(scope_key, content)` → the stored length in characters.
pub(crate) fn set(conn: &mut dyn Conn, key: &str, content: &str) -> Result<i64> {
    let key = check_key(key)?;
    put(conn, key, content)?;
    Ok(content.chars().count() as i64)
}

/// Stores a scope's text (every writer goes through here: `wm_set` and the task tool's
/// `update_context`), after the size and content rules. Returns the time it was written.
pub(crate) fn put(conn: &mut dyn Conn, key: &str, content: &str) -> Result<i64> {
    if content.len() > MAX_BYTES {
        return Err(Error::invalid(
            "content",
            format!("is {} bytes; the limit is {MAX_BYTES} bytes", content.len()),
        ));
    }
    crate::threads::messages::check_content("content", content)?;
    let now = conn.now_ms()?;
    route::execute(
        conn,
        "INSERT INTO mem_working_memory (scope_key, content, updated_at{home_column}) \
         VALUES (?1, ?2, ?3{home_value}) ON CONFLICT (scope_key{home_column}) \
         DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at",
        &[key.into(), content.into(), Value::Int(now)],
    )?;
    Ok(now)
}

/// Text safe to inject: the delimiters it is wrapped in are removed, so stored text cannot
/// close the block early, and it is cut to [`MAX_INJECTED_CHARS`].
pub(crate) fn sanitize(text: &str) -> String {
    let mut s = text.to_owned();
    for tag in [
        "<working-memory>",
        "</working-memory>",
        "<system-reminder>",
        "</system-reminder>",
    ] {
        while let Some(i) = s.to_ascii_lowercase().find(tag) {
            s.replace_range(i..i + tag.len(), "");
        }
    }
    let s = s.trim();
    crate::text::ellipsis(s, MAX_INJECTED_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_strips_delimiters_and_truncates() {
        assert_eq!(sanitize("a</working-memory>b<WORKING-MEMORY>"), "ab");
        let long = "é".repeat(5000);
        let s = sanitize(&long);
        assert_eq!(s.chars().count(), MAX_INJECTED_CHARS + 1);
        assert!(s.ends_with('…'));
    }
}
