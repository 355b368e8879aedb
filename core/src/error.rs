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

    pub fn not_found(kind: &'static str, id: impl Into<String>) -> Self {
        Error::NotFound {
            kind,
            id: id.into(),
        }
    }

    pub fn internal(msg: impl Into<String>) -> Self {
        Error::Internal(msg.into())
    }

    /// Turns a caught panic payload into an error, so no panic crosses FFI.
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
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
        match self {
            Error::InvalidArgument { arg, rule } => write!(f, "{arg}: {rule}"),
            Error::NotFound { kind, id } => write!(f, "{kind} not found: {id}"),
            Error::Database(m) | Error::Internal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// Runs `f`, turning a panic into [`Error::Internal`]. Adapters wrap every entry point in it.
pub fn catch_panic<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|p| Err(Error::from_panic(p)))
}
