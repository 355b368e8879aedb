//! Which memories a read may return — the one rule memory search, vector search and recall
//! share: of the resource, scope and types asked, and current (neither deprecated, superseded
//! nor stale) unless asked otherwise.

use super::{SCOPES, TYPES};
use crate::args::check_one_of;
use crate::json_opts::Opts;
use crate::{Result, Value};

/// A memory filter, checked.
#[derive(Default)]
pub(crate) struct Filter {
    pub resource: Option<String>,
    pub scope: Option<String>,
    /// `None`: every type; an empty list passes nothing.
    pub types: Option<Vec<String>>,
    pub include_deprecated: bool,
}

/// The option keys [`Filter::from_options`] reads.
pub(crate) const KEYS: &[&str] = &["resource_id", "types", "scope", "include_deprecated"];

impl Filter {
    /// The filter that `resource_id`, `scope`, `types` and `include_deprecated` ask for.
    pub(crate) fn from_options(o: &Opts) -> Result<Filter> {
        let scope = o.opt_str("scope")?;
        if let Some(s) = &scope {
            check_one_of("options.scope", s, SCOPES)?;
        }
        let types = o.opt_strings("types")?;
        for t in types.iter().flatten() {
            check_one_of("options.types", t, TYPES)?;
        }
        Ok(Filter {
            resource: o.opt_str("resource_id")?,
            scope,
            types,
            include_deprecated: o.opt_bool("include_deprecated")?.unwrap_or(false),
        })
    }

    /// The conditions on the memory columns of `alias` (`""` for none), their values pushed
    /// onto `params`; `None` when every memory passes.
    pub(crate) fn sql(&self, alias: &str, params: &mut Vec<Value>) -> Option<String> {
        let col = |c: &str| {
            if alias.is_empty() {
                c.to_owned()
            } else {
                format!("{alias}.{c}")
            }
        };
        let mut conds = Vec::new();
        let bind = |params: &mut Vec<Value>, column: &str, v: &str| {
            params.push(v.into());
            format!("{} = ?{}", col(column), params.len())
        };
        if let Some(r) = &self.resource {
            conds.push(bind(params, "resource_id", r));
        }
        if let Some(s) = &self.scope {
            conds.push(bind(params, "scope", s));
        }
        match &self.types {
            Some(types) if types.is_empty() => conds.push("1 = 0".to_owned()),
            Some(types) => {
                let marks: Vec<String> = types
                    .iter()
                    .map(|t| {
                        params.push(t.as_str().into());
                        format!("?{}", params.len())
                    })
                    .collect();
                conds.push(format!("{} IN ({})", col("type"), marks.join(", ")));
            }
            None => {}
        }
        if !self.include_deprecated {
            conds.push(format!(
                "{} = 0 AND {} IS NULL AND {} IS NULL",
                col("deprecated"),
                col("superseded_by"),
                col("stale_at")
            ));
        }
        (!conds.is_empty()).then(|| conds.join(" AND "))
    }
}
