//! Where a call runs on a distributed database.
//!
//! Every table that carries a resource is split by it, and a resource's rows, index and
//! closure live on one node. A catalog function and the triggers it fires cooperate through
//! the connection's session (the rows it booked, the documents a transaction holds), so the
//! whole call must run in one backend of that node: the host finds the call's resource from
//! its [`Route`] and hands the call over ([`super::wire`]); there the resource is the call's
//! [`home`], which statements name so that each stays on the node's own shards.

pub(crate) use crate::db::home::{
    and_home, execute, for_each_row, homed, query, query_value, HomeParam,
};
pub use crate::db::home::{home, swap_home};
use crate::{Conn, Result, Value};

/// Whether `mem_distribute()` made this database the distributed layout.
pub fn distributed(conn: &mut dyn Conn) -> Result<bool> {
    crate::search::layout::distributed(conn)
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

/// Refuses, on a distributed database, a call that names no resource and was not handed over:
/// its work (`what`) lives in each resource's shards, which one call cannot gather. `option`
/// names the option that routes the call.
pub(crate) fn require_resource(conn: &mut dyn Conn, option: &str, what: &str) -> Result<()> {
    if home(conn).is_none() && distributed(conn)? {
        return Err(crate::Error::invalid(
            option,
            format!("is required on a distributed database ({what})"),
        ));
    }
    Ok(())
}

/// A table whose rows carry their resource and are named by a unique `id`, so that a call
/// naming one goes to that row's node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Task,
    Memory,
    Message,
    GraphNode,
    GraphEdge,
    /// An observed session (`mem_observer_sessions`).
    Session,
}

impl Owner {
    fn table(self) -> &'static str {
        match self {
            Owner::Task => "mem_tasks",
            Owner::Memory => "mem_memories",
            Owner::Message => "mem_messages",
            Owner::GraphNode => "mem_graph_nodes",
            Owner::GraphEdge => "mem_graph_edges",
            Owner::Session => "mem_observer_sessions",
        }
    }

    /// What a call that names a row of this table that does not exist always answers, when
    /// it does: `session not found`, for every call that names a session. Such a call is
    /// answered where it was made, as it would be on one node; others run here to fail (or
    /// not) as they would there.
    pub fn not_found(self, id: &str) -> Option<crate::Error> {
        (self == Owner::Session).then(|| crate::Error::not_found("session", id))
    }

    /// The resource of the row `id`, looked up by its id alone (on a distributed database, in
    /// every shard); `None` when there is no such row.
    pub fn resource_of(self, conn: &mut dyn Conn, id: &str) -> Result<Option<String>> {
        Ok(conn
            .query_value(
                &format!("SELECT resource_id FROM {} WHERE id = ?1", self.table()),
                &[id.into()],
            )?
            .and_then(Value::into_string))
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
    /// The resource is that of the row of [`Owner`] whose id is the named argument.
    Row(Owner, &'static str),
    /// The resource a scope key names (`resource:<id>`, or `thread:<id>`: the thread's), the
    /// named argument: an observational-memory record's lookup key, a working memory's scope.
    ScopeKey(&'static str),
    /// The resource is that of a vector's owner: the memory, or else the message, whose id is
    /// the `id` argument, as the `kind` argument says.
    VectorOwner,
    /// A tool's call (`input` and `context`, JSON; `name`, the tool, for `mem_tool`): the
    /// `resourceId` of the context (or of the input), else the row the input names (a task
    /// tool's task, the input's `id` or `taskId`; a graph tool's `target` node), else the
    /// thread's (the context's or the input's `threadId`).
    Tool,
}

/// Where a call goes, as its [`Route`] reads its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// The node of this resource.
    Resource(String),
    /// The node of this thread's resource, looked up by the caller.
    Thread(String),
    /// The node of the resource of this row, looked up by the caller.
    Row(Owner, String),
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
            Route::Row(owner, arg) => argument(arg).map(|id| Destination::Row(owner, id.into())),
            Route::ScopeKey(arg) => argument(arg).and_then(|key| {
                if let Some(r) = key.strip_prefix("resource:") {
                    Some(Destination::Resource(r.into()))
                } else {
                    key.strip_prefix("thread:")
                        .map(|t| Destination::Thread(t.into()))
                }
            }),
            Route::VectorOwner => {
                let owner = match argument("kind") {
                    Some("memory") => Owner::Memory,
                    _ => Owner::Message,
                };
                argument("id").map(|id| Destination::Row(owner, id.into()))
            }
            Route::Tool => {
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
                // The row the input names: a graph tool's target node, a task tool's task.
                let named = match argument("name") {
                    Some(tool) if tool.starts_with("graph_") => {
                        field(&input, "target").map(|id| Destination::Row(Owner::GraphNode, id))
                    }
                    Some(tool) if !tool.starts_with("task_") => None,
                    _ => field(&input, "id")
                        .or_else(|| field(&input, "taskId"))
                        .map(|id| Destination::Row(Owner::Task, id)),
                };
                either("resourceId")
                    .map(Destination::Resource)
                    .or(named)
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
        let key = |k: &str| to(Route::ScopeKey("lookup_key"), &[("lookup_key", k)]);
        assert_eq!(key("resource:r"), Resource("r".into()));
        assert_eq!(key("thread:t"), Thread("t".into()));
        assert_eq!(key("other"), Here);
        let vector = [("kind", "memory"), ("id", "m")];
        assert_eq!(
            to(Route::VectorOwner, &vector),
            Row(Owner::Memory, "m".into())
        );
        let task = Route::Row(Owner::Task, "task_id");
        assert_eq!(to(task, &[("task_id", "k")]), Row(Owner::Task, "k".into()));
    }

    #[test]
    fn a_tool_goes_by_its_resource_then_the_row_it_names_then_its_thread() {
        use Destination::*;
        let tool =
            |input: &str, context: &str| to(Route::Tool, &[("input", input), ("context", context)]);
        let claim = r#"{"action":"claim","id":"k"}"#;
        assert_eq!(tool(claim, r#"{"resourceId":"r"}"#), Resource("r".into()));
        assert_eq!(
            tool(claim, r#"{"threadId":"t"}"#),
            Row(Owner::Task, "k".into())
        );
        let dep = r#"{"action":"dep","taskId":"k","dependsOn":"j"}"#;
        assert_eq!(tool(dep, "{}"), Row(Owner::Task, "k".into()));
        let ready = r#"{"action":"ready"}"#;
        assert_eq!(tool(ready, r#"{"threadId":"t"}"#), Thread("t".into()));
        assert_eq!(tool(ready, "not json"), Here);
        let own = r#"{"action":"create","title":"x","resourceId":"r"}"#;
        assert_eq!(tool(own, "{}"), Resource("r".into()));
        let working = r#"{"action":"update_context","section":"s","content":"c"}"#;
        assert_eq!(tool(working, r#"{"resourceId":"r"}"#), Resource("r".into()));
        let by_name = |name: &str, input: &str| {
            to(
                Route::Tool,
                &[("name", name), ("input", input), ("context", "{}")],
            )
        };
        let target = r#"{"target":"n","id":"k"}"#;
        assert_eq!(
            by_name("graph_impact", target),
            Row(Owner::GraphNode, "n".into())
        );
        assert_eq!(by_name("task_mutate", target), Row(Owner::Task, "k".into()));
        assert_eq!(by_name("memory_recall", target), Here);
    }
}
