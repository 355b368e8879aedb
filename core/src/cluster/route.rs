//! Where a call runs on a distributed database.
//!
//! Every table that carries a resource is split by it, and a resource's rows, index and
//! closure live on one node. A catalog function and the triggers it fires cooperate through
//! the connection's session (the rows it booked, the documents a transaction holds), so the
//! whole call must run in one backend of that node: the host finds the call's resource from
//! its [`Route`] and hands the call over ([`super::wire`]); there the resource is the call's
//! [`Home`], which statements name so that each stays on the node's own shards.

use crate::db::session::Part;
use crate::{Conn, Result, Value};

/// The resource of the call this connection is running for another node, if any.
#[derive(Default)]
struct Home {
    resource: Option<String>,
}

/// A call ends within its transaction: a resource left behind by a host that failed to put
/// the previous one back goes with the transaction.
impl Part for Home {
    fn commit(&mut self) {
        self.resource = None;
    }

    fn rollback(&mut self) {
        self.resource = None;
    }
}

/// The resource the running call was handed over for: statements that can name it do, so
/// they stay on this node's shards. `None` on one node, and for calls made here.
pub fn home(conn: &mut dyn Conn) -> Option<String> {
    conn.session().part::<Home>().resource.clone()
}

/// Whether `mem_distribute()` made this database the distributed layout.
pub fn distributed(conn: &mut dyn Conn) -> Result<bool> {
    crate::search::partition::distributed(conn)
}

/// Makes `resource` the resource of the call this connection runs (see [`home`]), and returns
/// the one it replaces, which the host puts back when the call returns or fails.
pub fn swap_home(conn: &mut dyn Conn, resource: Option<String>) -> Option<String> {
    std::mem::replace(&mut conn.session().part::<Home>().resource, resource)
}

/// ` AND {column} = ?n`, `resource` pushed as parameter `n`; nothing when there is no
/// resource to name. A statement that names its resource stays on the node's own shards on a
/// distributed database, and costs one more key column on one node.
pub(crate) fn and_resource(
    column: &str,
    resource: Option<&str>,
    params: &mut Vec<Value>,
) -> String {
    match resource {
        Some(r) => {
            params.push(r.into());
            format!(" AND {column} = ?{}", params.len())
        }
        None => String::new(),
    }
}

/// [`and_resource`] for the resource of the call handed over to this connection ([`home`]).
pub(crate) fn and_home(conn: &mut dyn Conn, column: &str, params: &mut Vec<Value>) -> String {
    HomeParam::push(conn, params).and(column)
}

/// The resource of the call handed over to this connection ([`home`]) as one parameter of a
/// statement, which filters each of its distributed tables by it (Citus runs a statement on
/// one node only when every table in it names the same resource), and writes it into the
/// rows it inserts into tables that carry the resource only in the distributed layout. On
/// one node, and for calls made here, it adds nothing.
pub(crate) struct HomeParam(Option<usize>);

impl HomeParam {
    /// Pushes the resource onto `params`, when there is one.
    pub(crate) fn push(conn: &mut dyn Conn, params: &mut Vec<Value>) -> HomeParam {
        HomeParam(home(conn).map(|r| {
            params.push(r.into());
            params.len()
        }))
    }

    /// ` AND {column} = ?n`, or nothing.
    pub(crate) fn and(&self, column: &str) -> String {
        self.0
            .map(|n| format!(" AND {column} = ?{n}"))
            .unwrap_or_default()
    }

    /// The column and the value an `INSERT` adds: `(", resource_id", ", ?n")`, or nothing.
    pub(crate) fn insert(&self) -> (&'static str, String) {
        match self.0 {
            Some(n) => (", resource_id", format!(", ?{n}")),
            None => ("", String::new()),
        }
    }
}

/// Which resource a call's work belongs to, so that a distributed database runs the whole
/// call on the node that holds that resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// Where it was called: the function spans resources, or touches none.
    Here,
    /// The resource is the `resource_id` argument.
    Resource,
    /// The resource is the thread's, the `thread_id` argument (or the `resource_id` of the
    /// `options` argument, when the caller names it: the thread is then not looked up).
    Thread,
    /// The resource is the `resource_id` of the `options` argument, when it names one;
    /// otherwise the call spans resources and runs where it was called.
    ResourceOption,
    /// The resource is the task's, the `task_id` argument.
    Task,
}

/// Where a call goes, as its [`Route`] reads its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// The node of this resource.
    Resource(String),
    /// The node of this thread's resource, looked up by the caller.
    Thread(String),
    /// The node of this task's resource, looked up by the caller.
    Task(String),
    /// Where it was called.
    Here,
}

impl Route {
    /// Where a call goes, given its arguments by name: the resource an argument or the
    /// options name, or the thread whose resource it is.
    pub fn destination<'a>(self, argument: impl Fn(&str) -> Option<&'a str>) -> Destination {
        let named = || {
            argument("options")
                .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok())
                .and_then(|o| o.get("resource_id")?.as_str().map(str::to_owned))
        };
        let to = match self {
            Route::Here => None,
            Route::Resource => argument("resource_id").map(|r| Destination::Resource(r.into())),
            Route::ResourceOption => named().map(Destination::Resource),
            Route::Thread => named()
                .map(Destination::Resource)
                .or_else(|| argument("thread_id").map(|t| Destination::Thread(t.into()))),
            Route::Task => argument("task_id").map(|t| Destination::Task(t.into())),
        };
        to.unwrap_or(Destination::Here)
    }
}
