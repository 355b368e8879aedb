//! A function's declaration as the catalog holds it: name, arguments, result, nature and
//! flags, and what the reference and the errors say about its signature.

use super::call::Call;
pub use crate::cluster::route::Route;
use crate::cluster::route::{Destination, Owner};
use crate::columns::{Field, Type};
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
    /// On a distributed database, where a call runs (see [`crate::cluster::route`]).
    pub route: Route,
}

/// What [`functions!`] calls: the function, then one method per flag.
impl Function {
    pub(crate) const fn new(
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
            route: Route::Here,
        }
    }

    pub(crate) const fn owner_only(self) -> Function {
        Function {
            owner_only: true,
            ..self
        }
    }

    pub(crate) const fn generic_plans(self) -> Function {
        Function {
            generic_plans: true,
            ..self
        }
    }

    /// Routed as `route` says (see [`Route`]).
    const fn routed(self, route: Route) -> Function {
        Function { route, ..self }
    }

    pub(crate) const fn by_resource(self) -> Function {
        self.routed(Route::Resource)
    }

    pub(crate) const fn by_resource_option(self) -> Function {
        self.routed(Route::ResourceOption)
    }

    pub(crate) const fn by_thread(self) -> Function {
        self.routed(Route::Thread)
    }

    pub(crate) const fn by_tool(self) -> Function {
        self.routed(Route::Tool)
    }

    pub(crate) const fn by_task(self) -> Function {
        self.routed(Route::Row(Owner::Task, "task_id"))
    }

    pub(crate) const fn by_memory(self) -> Function {
        self.routed(Route::Row(Owner::Memory, "id"))
    }

    pub(crate) const fn by_vector_owner(self) -> Function {
        self.routed(Route::VectorOwner)
    }

    /// Routed by the graph node `node_id`.
    pub(crate) const fn by_node(self) -> Function {
        self.routed(Route::Row(Owner::GraphNode, "node_id"))
    }

    /// Routed by the graph node `id`.
    pub(crate) const fn by_node_id(self) -> Function {
        self.routed(Route::Row(Owner::GraphNode, "id"))
    }

    /// Routed by the edge's source node, `from_id`.
    pub(crate) const fn by_edge_source(self) -> Function {
        self.routed(Route::Row(Owner::GraphNode, "from_id"))
    }

    /// Routed by the graph edge `id`.
    pub(crate) const fn by_edge(self) -> Function {
        self.routed(Route::Row(Owner::GraphEdge, "id"))
    }

    /// Routed by the observed session `session_id`.
    pub(crate) const fn by_session(self) -> Function {
        self.routed(Route::Row(Owner::Session, "session_id"))
    }

    /// Routed by the scope key `lookup_key` (observational memory).
    pub(crate) const fn by_lookup_key(self) -> Function {
        self.routed(Route::ScopeKey("lookup_key"))
    }

    /// Routed by the scope key `scope_key` (working memory).
    pub(crate) const fn by_scope_key(self) -> Function {
        self.routed(Route::ScopeKey("scope_key"))
    }

    /// The position of the SQL argument `name`.
    pub(crate) fn arg_index(&self, name: &str) -> Option<usize> {
        self.args.iter().position(|a| a.name == name)
    }

    /// The resource a call with `values` works in, by the function's [`Route`]; `None` when
    /// the call spans resources (or names none it can be sent by) and runs where it was
    /// called. A thread or task that does not exist leaves the call here, to fail as on one
    /// node; a session that does not exist is answered as not found ([`Owner::not_found`]).
    pub fn resource_of(&self, conn: &mut dyn Conn, values: &[Value]) -> Result<Option<String>> {
        let to = self.route.destination(|name| {
            self.arg_index(name)
                .and_then(|i| values.get(i))
                .and_then(Value::as_str)
        });
        Ok(match to {
            Destination::Resource(r) => Some(r),
            Destination::Thread(t) => crate::threads::resource_by_id(conn, &t)?,
            Destination::Row(owner, id) => match owner.resource_of(conn, &id)? {
                None => return owner.not_found(&id).map_or(Ok(None), Err),
                found => found,
            },
            Destination::Here => None,
        })
    }

    /// A call of the function with `values`; refuses a wrong number of arguments.
    pub fn bind(&self, values: Vec<Value>) -> Result<Call> {
        if values.len() < self.required || values.len() > self.args.len() {
            return Err(arity_error(self, values.len()));
        }
        Ok(Call::of(values))
    }

    /// A table function's result columns (none for a scalar function).
    pub fn columns(&self) -> &'static [Field] {
        match self.returns {
            Returns::Table(cols, _) => cols,
            Returns::Scalar(..) => &[],
        }
    }

    /// Whether the function is internal (`mem__…`): registered, but not part of the API.
    #[cfg(any(test, feature = "testing"))]
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn is_internal(&self) -> bool {
        self.name.starts_with("mem__")
    }
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
    #[cfg(any(test, feature = "testing"))]
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn doc_name(self) -> &'static str {
        match self {
            Nature::Pure => "pure",
            Nature::Volatile => "volatile",
            Nature::Reader => "reads",
            Nature::Writer => "writes",
        }
    }
}

/// `"mem_tokens(text [, encoding]) takes 1 to 2 arguments, got 3"`.
pub(crate) fn arity_error(f: &Function, got: usize) -> crate::Error {
    let takes = if f.required == f.args.len() {
        format!("{}", f.required)
    } else {
        format!("{} to {}", f.required, f.args.len())
    };
    crate::Error::invalid(call_form(f), format!("takes {takes} arguments, got {got}"))
}
