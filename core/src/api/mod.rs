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
mod function;
mod graph;
mod items;
mod memories;
mod messages;
mod observer;
mod om;
mod search;
mod setup;
mod tasks;
mod tools;
mod vectors;

pub use crate::columns::{Field, Type};
pub(crate) use call::{arity, read_others, read_texts, Arg, Nullable, RawText};
pub(crate) use declare::{functions, returns};
pub(crate) use declare::{sql, Returned, Scalar};
pub use function::{signature, Function, Nature, Returns, Route, ScalarRun, TableRun};

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
        .chain(items::FUNCTIONS)
        .chain(observer::FUNCTIONS)
        .chain(vectors::FUNCTIONS)
        .chain(data::FUNCTIONS)
        .chain(tools::FUNCTIONS)
}

/// The function called `name`.
pub fn find(name: &str) -> Option<&'static Function> {
    functions().find(|f| f.name == name)
}

/// The reference's table of signatures (Markdown), one row per public function in catalog
/// order. `docs/functions.md` carries it between [`REFERENCE_BEGIN`] and [`REFERENCE_END`].
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn reference() -> String {
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
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const REFERENCE_BEGIN: &str =
    "<!-- signatures: generated from the catalog (core/src/api); `make docs` rewrites -->";
/// The line after it.
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const REFERENCE_END: &str = "<!-- end of signatures -->";

#[cfg(test)]
mod tests {
    use super::function::arity_error;
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_route_names_an_argument_of_its_function() {
        for f in functions() {
            let wanted = match f.route {
                Route::Here => continue,
                Route::Resource => "resource_id",
                Route::Thread => "thread_id",
                Route::Row(_, arg) => arg,
                Route::VectorOwner => "kind",
                Route::ScopeKey(arg) => arg,
                Route::Tool => "input",
                Route::ResourceOption => "options",
            };
            assert!(
                f.arg_index(wanted).is_some(),
                "{} routes by {wanted}, which it does not take",
                f.name
            );
            assert!(
                !f.owner_only,
                "{} is the owner's: it runs where called",
                f.name
            );
        }
    }

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
                "mem_index_partition",
                "mem_distribute",
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
