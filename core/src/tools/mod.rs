//! The LLM tools: seed 000's tool calls answered as JSON, never as SQL errors.

pub mod memory_search;
pub mod tasks;

/// A tool argument's text. Tools answer every bad call with `{"success":false,…}` instead
/// of an SQL error, so their arguments arrive as bytes and are checked here.
pub(crate) fn tool_text<'a>(arg: &str, bytes: Option<&'a [u8]>) -> Result<Option<&'a str>, String> {
    bytes
        .map(|b| std::str::from_utf8(b).map_err(|_| format!("{arg} must be valid UTF-8 text")))
        .transpose()
}
