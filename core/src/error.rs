//! Errors that become SQL errors. Each message names the argument and the rule it broke.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// An argument broke a rule: `"<arg>: <rule>"`.
    InvalidArgument { arg: String, rule: String },
    /// A referenced row does not exist: `"<kind> not found: <id>"`.
    NotFound { kind: &'static str, id: String },
    /// The database refused a statement.
    Database(String),
    /// The schema refuses the change (a plain-SQL write its rules forbid): the message says
    /// which column and why.
    Refused(String),
    /// A bug in agentmem (including a caught panic).
    Internal(String),
}

impl Error {
    pub fn invalid(arg: impl Into<String>, rule: impl Into<String>) -> Self {
        Error::InvalidArgument {
            arg: arg.into(),
            rule: rule.into(),
        }
    }

    /// A missing row, named by its id (cut and escaped: see [`echo`]).
    pub(crate) fn not_found(kind: &'static str, id: impl AsRef<str>) -> Self {
        Error::NotFound {
            kind,
            id: echo_bare(id.as_ref()),
        }
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        Error::Internal(msg.into())
    }

    /// This error, said of a part of a larger argument (`context`, such as the row of an
    /// import document): `"<context>: <message>"`, an invalid argument whatever it was (a
    /// database's refusal of that part included), except a bug, which stays one.
    pub fn in_context(self, context: &str) -> Error {
        match self {
            Error::Internal(m) => Error::Internal(format!("{context}: {m}")),
            other => Error::invalid(context, other.to_string()),
        }
    }

    /// Turns a caught panic payload into an error, so no panic crosses FFI.
    pub(crate) fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Error::Internal(format!("internal error (panic caught): {msg}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Error::InvalidArgument { arg, rule } => format!("{arg}: {rule}"),
            Error::NotFound { kind, id } => format!("{kind} not found: {id}"),
            Error::Database(m) | Error::Refused(m) | Error::Internal(m) => m.clone(),
        };
        // The last line of defence: whatever a message quotes, it stays one readable line
        // of bounded length.
        f.write_str(&escape_and_cut(&text, MAX_MESSAGE_CHARS))
    }
}

/// Longest error message, in characters, before it is cut.
pub(crate) const MAX_MESSAGE_CHARS: usize = 1000;
/// Longest value quoted inside an error message, in characters, before it is cut.
pub(crate) const MAX_ECHO_CHARS: usize = 80;

/// A caller's value as an error message quotes it: in double quotes, control characters
/// escaped (`\n`, `\u{1b}`), and cut after [`MAX_ECHO_CHARS`] characters with an ellipsis and
/// the full length, so a 10 MB argument gives a one-line error.
pub(crate) fn echo(value: &str) -> String {
    format!("\"{}\"", echo_bare(value))
}

/// [`echo`] without the quotes (ids after "not found:").
pub(crate) fn echo_bare(value: &str) -> String {
    escape_and_cut(value, MAX_ECHO_CHARS)
}

fn escape_and_cut(value: &str, max_chars: usize) -> String {
    let mut out = String::new();
    for (n, c) in value.chars().enumerate() {
        if n == max_chars {
            out.push_str(&format!("… ({} bytes)", value.len()));
            return out;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

impl std::error::Error for Error {}

/// A list of names as an error message shows it: all of them when few, else the first and
/// last few around a count (a cycle through 10 000 tasks stays readable).
pub(crate) fn echo_list(items: &[String], sep: &str) -> String {
    const HEAD: usize = 8;
    const TAIL: usize = 3;
    let show = |s: &String| echo_bare(s);
    if items.len() <= HEAD + TAIL {
        return items.iter().map(show).collect::<Vec<_>>().join(sep);
    }
    let head: Vec<String> = items[..HEAD].iter().map(show).collect();
    let tail: Vec<String> = items[items.len() - TAIL..].iter().map(show).collect();
    format!(
        "{}{sep}… ({} more){sep}{}",
        head.join(sep),
        items.len() - HEAD - TAIL,
        tail.join(sep)
    )
}

/// Runs `f`, turning a panic into [`Error::Internal`] and a missing table of ours into
/// [`Error::uninitialised`]. Adapters wrap every entry point in it.
pub fn catch_panic<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(Error::from_panic(p)))
        .map_err(Error::uninitialised)
}

impl Error {
    /// A statement that failed on one of agentmem's tables being absent says how to create
    /// them, keeping the database's words: a SQLite file is empty until `mem_init()`, and
    /// `no such table: mem_idx_docs` would not tell a new user that.
    pub(crate) fn uninitialised(self) -> Error {
        match &self {
            Error::Database(m)
                if m.starts_with("no such table: mem_")
                    || (m.starts_with("relation \"mem_") && m.ends_with("does not exist")) =>
            {
                Error::Database(format!("{UNINITIALISED} ({m})"))
            }
            _ => self,
        }
    }
}

/// What a call made before the schema exists is told.
pub(crate) const UNINITIALISED: &str = "agentmem schema not initialised: run SELECT mem_init()";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_tables_of_ours_say_how_to_create_them() {
        let e = Error::Database("no such table: mem_idx_docs".into()).uninitialised();
        assert_eq!(
            e.to_string(),
            format!("{UNINITIALISED} (no such table: mem_idx_docs)")
        );
        let pg = Error::Database("relation \"mem_threads\" does not exist".into());
        assert!(pg.uninitialised().to_string().starts_with(UNINITIALISED));
        // Other tables and other errors are the database's own words.
        for m in [
            "no such table: users",
            "UNIQUE constraint failed: mem_threads.id",
        ] {
            let e = Error::Database(m.into());
            assert_eq!(e.clone().uninitialised(), e);
        }
        let e = Error::invalid("thread_id", "must be text");
        assert_eq!(e.clone().uninitialised(), e);
    }

    #[test]
    fn echoed_values_are_cut_and_escaped() {
        assert_eq!(echo("ok"), "\"ok\"");
        assert_eq!(echo("a\nb\u{1b}"), "\"a\\nb\\u{1b}\"");
        let big = "x".repeat(10 << 20);
        let e = Error::not_found("thread", &big).to_string();
        assert!(e.len() < 200, "{}", e.len());
        assert!(e.ends_with("… (10485760 bytes)"), "{e}");
        let long = Error::invalid("a", "b".repeat(5000)).to_string();
        assert!(long.chars().count() < MAX_MESSAGE_CHARS + 30);
        let ids: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
        let l = echo_list(&ids, " → ");
        assert!(l.starts_with("t0 → t1") && l.contains("(9989 more)") && l.ends_with("t9999"));
    }
}
