//! What an export covers: a thread, a resource or everything.

use crate::json_opts::Opts;
use crate::{Error, Result};
use serde_json::{json, Value as Json};

/// What an export covers.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Scope {
    All,
    Thread(String),
    Resource(String),
}

impl Scope {
    /// `{}` (everything), `{"thread_id": …}` or `{"resource_id": …}`.
    pub(crate) fn parse(text: Option<&str>) -> Result<Scope> {
        let o = Opts::parse("scope", text, &["thread_id", "resource_id"])?;
        match (o.opt_str("thread_id")?, o.opt_str("resource_id")?) {
            (Some(_), Some(_)) => Err(Error::invalid(
                "scope",
                "names a thread_id or a resource_id, not both",
            )),
            (Some(t), None) => Ok(Scope::Thread(t)),
            (None, Some(r)) => Ok(Scope::Resource(r)),
            (None, None) => Ok(Scope::All),
        }
    }

    /// The scope as the export document names it.
    pub(crate) fn to_json(&self) -> Json {
        match self {
            Scope::All => json!({}),
            Scope::Thread(t) => json!({ "thread_id": t }),
            Scope::Resource(r) => json!({ "resource_id": r }),
        }
    }
}
