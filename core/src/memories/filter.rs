//! Which memories a read may return — the one rule memory search, vector search and recall
//! share: of the resource, scope and types asked, and current (neither deprecated, superseded
//! nor stale) unless asked otherwise.

use super::{files, SCOPES, SOURCES, TYPES};
use crate::args::check_one_of;
use crate::json_opts::Opts;
use crate::{Conn, Error, Result, Value};

/// A memory filter, checked.
#[derive(Clone, Default)]
pub(crate) struct Filter {
    pub resource: Option<String>,
    pub scope: Option<String>,
    /// `None`: every type; an empty list passes nothing.
    pub types: Option<Vec<String>>,
    pub source: Option<String>,
    pub session: Option<String>,
    /// The memories naming a path among their related files (the files index, read when the
    /// filter is made: derived data is read apart from the memories, see `db::privilege`).
    pub file_seqs: Option<Vec<i64>>,
    /// The least stored (not decayed) confidence.
    pub min_confidence: Option<f64>,
    pub include_deprecated: bool,
}

/// The option keys [`Filter::from_options`] reads.
pub(crate) const KEYS: &[&str] = &[
    "resource_id",
    "types",
    "scope",
    "source",
    "session_id",
    "file",
    "min_confidence",
    "include_deprecated",
];

impl Filter {
    /// The filter that `resource_id`, `scope`, `types` and `include_deprecated` ask for.
    pub(crate) fn from_options(conn: &mut dyn Conn, o: &Opts) -> Result<Filter> {
        let scope = o.opt_str("scope")?;
        if let Some(s) = &scope {
            check_one_of("options.scope", s, SCOPES)?;
        }
        let types = o.opt_strings("types")?;
        for t in types.iter().flatten() {
            check_one_of("options.types", t, TYPES)?;
        }
        let source = o.opt_str("source")?;
        if let Some(s) = &source {
            check_one_of("options.source", s, SOURCES)?;
        }
        let min_confidence = o.opt_f64("min_confidence")?;
        if let Some(c) = min_confidence {
            if !(0.0..=1.0).contains(&c) {
                return Err(Error::invalid("options.min_confidence", "must be between 0 and 1"));
            }
        }
        Ok(Filter {
            resource: o.opt_str("resource_id")?,
            scope,
            types,
            source,
            session: o.opt_str("session_id")?,
            file_seqs: match o.opt_str("file")? {
                Some(path) => Some(files::memories_naming(conn, &path)?),
                None => None,
            },
            min_confidence,
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
        if let Some(s) = &self.source {
            conds.push(bind(params, "source", s));
        }
        if let Some(s) = &self.session {
            conds.push(bind(params, "session_id", s));
        }
        if let Some(seqs) = &self.file_seqs {
            // Integers the database gave, written as literals: no parameter limit applies.
            let list: Vec<String> = seqs.iter().map(i64::to_string).collect();
            conds.push(match list.is_empty() {
                true => "1 = 0".to_owned(),
                false => format!("{} IN ({})", col("seq"), list.join(", ")),
            });
        }
        if let Some(c) = self.min_confidence {
            params.push(Value::Real(c));
            conds.push(format!("{} >= ?{}", col("confidence"), params.len()));
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
