//! Where a call runs on a distributed database.
//!
//! Every table that carries a resource is split by it, and a resource's rows, index and
//! closure live on one node. A catalog function and the triggers it fires cooperate through
//! the connection's session (the rows it booked, the documents a transaction holds), so the
//! whole call must run in one backend of that node: the host finds the call's resource from
//! its [`Route`] and hands the call over ([`super::wire`]); there the resource is the call's
//! [`home`], which statements name so that each stays on the node's own shards.

pub use crate::db::home::{home, swap_home};
use crate::{Conn, Result, Value};

/// Whether `mem_distribute()` made this database the distributed layout.
pub fn distributed(conn: &mut dyn Conn) -> Result<bool> {
    crate::search::partition::distributed(conn)
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
    /// A task tool's call (`input` and `context`, JSON): the `resourceId` of the context (or
    /// of the input), else the task's (the input's `id` or `taskId`), else the thread's (the
    /// context's or the input's `threadId`). Its `update_context` action writes working
    /// memory, which is not distributed: it runs where it was called.
    TaskTool,
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
            Route::TaskTool => {
                let parsed = |arg: &str| {
                    argument(arg)
                        .and_then(|o| serde_json::from_str::<serde_json::Value>(o).ok())
                        .unwrap_or_default()
                };
                let (input, context) = (parsed("input"), parsed("context"));
                let field = |json: &serde_json::Value, key: &str| {
                    json.get(key)?.as_str().map(str::to_owned)
                };
                let either = |key: &str| field(&context, key).or_else(|| field(&input, key));
                if field(&input, "action").as_deref() == Some("update_context") {
                    return Destination::Here;
                }
                either("resourceId")
                    .map(Destination::Resource)
                    .or_else(|| {
                        field(&input, "id")
                            .or_else(|| field(&input, "taskId"))
                            .map(Destination::Task)
                    })
                    .or_else(|| either("threadId").map(Destination::Thread))
            }
        };
        to.unwrap_or(Destination::Here)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(route: Route, args: &[(&str, &str)]) -> Destination {
        route.destination(|name| args.iter().find(|(k, _)| *k == name).map(|(_, v)| *v))
    }

    #[test]
    fn a_call_goes_where_its_arguments_say() {
        use Destination::*;
        assert_eq!(to(Route::Here, &[("resource_id", "r")]), Here);
        assert_eq!(
            to(Route::Resource, &[("resource_id", "r")]),
            Resource("r".into())
        );
        assert_eq!(to(Route::ResourceOption, &[("options", "{}")]), Here);
        let named = [("thread_id", "t"), ("options", r#"{"resource_id":"r"}"#)];
        assert_eq!(to(Route::Thread, &named), Resource("r".into()));
        assert_eq!(to(Route::Thread, &named[..1]), Thread("t".into()));
        assert_eq!(to(Route::Task, &[("task_id", "k")]), Task("k".into()));
    }

    #[test]
    fn a_task_tool_goes_by_its_resource_then_its_task_then_its_thread() {
        use Destination::*;
        let tool = |input: &str, context: &str| {
            to(Route::TaskTool, &[("input", input), ("context", context)])
        };
        let claim = r#"{"action":"claim","id":"k"}"#;
        assert_eq!(tool(claim, r#"{"resourceId":"r"}"#), Resource("r".into()));
        assert_eq!(tool(claim, r#"{"threadId":"t"}"#), Task("k".into()));
        let dep = r#"{"action":"dep","taskId":"k","dependsOn":"j"}"#;
        assert_eq!(tool(dep, "{}"), Task("k".into()));
        let ready = r#"{"action":"ready"}"#;
        assert_eq!(tool(ready, r#"{"threadId":"t"}"#), Thread("t".into()));
        assert_eq!(tool(ready, "not json"), Here);
        let own = r#"{"action":"create","title":"x","resourceId":"r"}"#;
        assert_eq!(tool(own, "{}"), Resource("r".into()));
        let working = r#"{"action":"update_context","section":"s","content":"c"}"#;
        assert_eq!(tool(working, r#"{"resourceId":"r"}"#), Here);
    }
}
