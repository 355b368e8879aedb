//! The SQL surface as data: every public function with its arguments, its result, its nature,
//! its access flags and the core call behind it, each declared once as a Rust signature (see
//! `declare`).
//!
//! Both adapters iterate [`functions`]: SQLite registers a scalar or table-valued function per
//! entry, Postgres creates one SQL function per entry over a single C entry point. The
//! signatures in `docs/functions.md` are generated from the same list (see [`signature`]), and
//! a test reads back what each database registered. So a function is added once, here, and
//! the three cannot drift apart.

mod call;
mod data;
mod declare;
mod graph;
mod memories;
mod messages;
mod om;
mod search;
mod setup;
mod tasks;
mod tools;
mod vectors;

pub use crate::columns::{Field, Type};
pub use call::{arity, read_others, read_texts, Arg, Call, Nullable, Pass, RawText};
pub(crate) use declare::{functions, returns};
pub use declare::{sql, Returned, Scalar};

use crate::{Conn, Result, Row, Value};

/// What a function does to the database, which decides how each host may call it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nature {
    /// Deterministic and touches nothing: Postgres `IMMUTABLE`, SQLite `DETERMINISTIC`.
    Pure,
    /// Reads nothing, writes nothing, differs per call (a clock, an id): `VOLATILE`, no
    /// transaction of its own.
    Volatile,
    /// Reads only: Postgres `STABLE`; SQLite runs it without a write transaction.
    Reader,
    /// Writes: Postgres `VOLATILE`; SQLite runs it all-or-nothing (`BEGIN IMMEDIATE` or a
    /// savepoint).
    Writer,
}

/// A scalar function's core call.
pub type ScalarRun = fn(&mut dyn Conn, &Call) -> Result<Value>;
/// A table function's core call: the rows, columns in [`Returns::Table`] order.
pub type TableRun = fn(&mut dyn Conn, &Call) -> Result<Vec<Row>>;

/// A function's result and the call that produces it.
#[derive(Clone, Copy)]
pub enum Returns {
    Scalar(Type, ScalarRun),
    Table(&'static [Field], TableRun),
}

/// One public SQL function, as [`functions!`] declares it.
pub struct Function {
    pub name: &'static str,
    /// In call order; the first `required` are mandatory, the rest may be omitted.
    pub args: &'static [Field],
    pub required: usize,
    pub returns: Returns,
    pub nature: Nature,
    /// On Postgres only the extension's owner may call it: the index's upkeep, which sees
    /// every tenant's documents, and the internal functions.
    pub owner_only: bool,
    /// On Postgres its statements keep generic plans (`plan_cache_mode =
    /// force_generic_plan`): lookups by key, whose generic plans are the custom ones, so
    /// planning each call anew is wasted.
    pub generic_plans: bool,
}

/// What [`functions!`] calls: the function, then one method per flag.
impl Function {
    pub const fn new(
        name: &'static str,
        args: (&'static [Field], usize),
        returns: Returns,
        nature: Nature,
    ) -> Function {
        Function {
            name,
            args: args.0,
            required: args.1,
            returns,
            nature,
            owner_only: false,
            generic_plans: false,
        }
    }

    pub const fn owner_only(self) -> Function {
        Function {
            owner_only: true,
            ..self
        }
    }

    pub const fn generic_plans(self) -> Function {
        Function {
            generic_plans: true,
            ..self
        }
    }

    /// A table function's result columns (none for a scalar function).
    pub fn columns(&self) -> &'static [Field] {
        match self.returns {
            Returns::Table(cols, _) => cols,
            Returns::Scalar(..) => &[],
        }
    }

    /// Whether the function is internal (`mem__…`): registered, but not part of the API.
    pub fn is_internal(&self) -> bool {
        self.name.starts_with("mem__")
    }
}

/// Every function, grouped by what it serves.
pub fn functions() -> impl Iterator<Item = &'static Function> {
    setup::FUNCTIONS
        .iter()
        .chain(messages::FUNCTIONS)
        .chain(search::FUNCTIONS)
        .chain(tasks::FUNCTIONS)
        .chain(om::FUNCTIONS)
        .chain(graph::FUNCTIONS)
        .chain(memories::FUNCTIONS)
        .chain(vectors::FUNCTIONS)
        .chain(data::FUNCTIONS)
        .chain(tools::FUNCTIONS)
}

/// The function called `name`.
pub fn find(name: &str) -> Option<&'static Function> {
    functions().find(|f| f.name == name)
}

/// The reference's one-line signature: `name(a, b [, c [, d]]) → type` or
/// `→ table(col, …)`.
pub fn signature(f: &Function) -> String {
    let mut s = call_form(f);
    s.push_str(" → ");
    match f.returns {
        Returns::Scalar(t, _) => s.push_str(t.doc_name()),
        Returns::Table(cols, _) => {
            let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
            s.push_str(&format!("table({})", names.join(", ")));
        }
    }
    s
}

/// The call part of the signature: `name(a, b [, c [, d]])`.
fn call_form(f: &Function) -> String {
    let mut s = format!("{}(", f.name);
    for (i, a) in f.args.iter().enumerate() {
        if i >= f.required {
            s.push_str(if i == 0 { "[" } else { " [" });
        }
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(a.name);
    }
    s.push_str(&"]".repeat(f.args.len() - f.required));
    s.push(')');
    s
}

impl Nature {
    /// The word the reference uses.
    pub fn doc_name(self) -> &'static str {
        match self {
            Nature::Pure => "pure",
            Nature::Volatile => "volatile",
            Nature::Reader => "reads",
            Nature::Writer => "writes",
        }
    }
}

/// The reference's table of signatures (Markdown), one row per public function in catalog
/// order. `docs/functions.md` carries it between [`REFERENCE_BEGIN`] and [`REFERENCE_END`].
pub fn reference() -> String {
    let mut s = String::from("| signature | nature |\n|---|---|\n");
    for f in functions().filter(|f| !f.is_internal()) {
        s.push_str(&format!(
            "| `{}` | {} |\n",
            signature(f),
            f.nature.doc_name()
        ));
    }
    s
}

/// The line before the generated table in `docs/functions.md`.
pub const REFERENCE_BEGIN: &str =
    "<!-- signatures: generated from the catalog (core/src/api); `make docs` rewrites -->";
/// The line after it.
pub const REFERENCE_END: &str = "<!-- end of signatures -->";

/// `"mem_tokens(text [, encoding]) takes 1 to 2 arguments, got 3"`.
pub fn arity_error(f: &Function, got: usize) -> crate::Error {
    let takes = if f.required == f.args.len() {
        format!("{}", f.required)
    } else {
        format!("{} to {}", f.required, f.args.len())
    };
    crate::Error::invalid(call_form(f), format!("takes {takes} arguments, got {got}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn internal_functions_are_the_owners() {
        for f in functions().filter(|f| f.is_internal()) {
            assert!(f.owner_only, "{}", f.name);
        }
        let owners: Vec<&str> = functions()
            .filter(|f| f.owner_only && !f.is_internal())
            .map(|f| f.name)
            .collect();
        assert_eq!(
            owners,
            [
                "mem_index_check",
                "mem_optimize",
                "mem_reindex",
                "mem_index_stats",
                "mem_search_cache"
            ]
        );
    }

    #[test]
    fn names_are_unique_and_arguments_well_formed() {
        let mut seen = HashSet::new();
        for f in functions() {
            assert!(seen.insert(f.name), "{} listed twice", f.name);
            assert!(f.required <= f.args.len(), "{}", f.name);
            let args: HashSet<_> = f.args.iter().map(|a| a.name).collect();
            assert_eq!(
                args.len(),
                f.args.len(),
                "{}: argument listed twice",
                f.name
            );
            if let Returns::Table(cols, _) = f.returns {
                let names: HashSet<_> = cols.iter().map(|c| c.name).collect();
                assert_eq!(names.len(), cols.len(), "{}: column listed twice", f.name);
                // SQLite passes a table function's arguments as hidden columns.
                assert!(cols.len() + f.args.len() <= 31, "{}", f.name);
            }
        }
    }

    #[test]
    fn signatures_read_like_the_reference() {
        assert_eq!(
            signature(find("mem_tokens").unwrap()),
            "mem_tokens(text [, encoding]) → integer"
        );
        assert_eq!(
            signature(find("mem_init").unwrap()),
            "mem_init([version]) → integer"
        );
        assert_eq!(
            signature(find("mem_thread_create").unwrap()),
            "mem_thread_create(resource_id [, title [, metadata [, options]]]) → text"
        );
        assert_eq!(
            arity_error(find("mem_tokens").unwrap(), 3).to_string(),
            "mem_tokens(text [, encoding]): takes 1 to 2 arguments, got 3"
        );
    }
}
