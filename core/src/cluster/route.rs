//! Where a call runs on a distributed database.
//!
//! Every table that carries a resource is split by it, and a resource's rows, index and
//! closure live on one node. A catalog function and the triggers it fires cooperate through
//! the connection's session (the rows it booked, the documents a transaction holds), so the
//! whole call must run in one backend of that node: the host finds the call's resource from
//! its [`Route`] and hands the call over ([`super::wire`]); there the resource is the call's
//! [`home`], which statements name so that each stays on the node's own shards.

pub use crate::db::home::{home, swap_home};
use crate::{Conn, Result, Row, Value};

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

/// `sql` with its marks of the call's resource ([`home`]) filled, the resource pushed onto
/// `params` once when there is one: `{home}` becomes ` AND resource_id = ?n`, `{home:x}`
/// ` AND x.resource_id = ?n`, and, for an `INSERT` into a table that carries the resource
/// only in the distributed layout, `{home_column}` `, resource_id` and `{home_value}` `, ?n`.
/// Every mark is empty on one node and for calls made here.
pub(crate) fn homed(conn: &mut dyn Conn, sql: &str, params: &mut Vec<Value>) -> String {
    let home = HomeParam::push(conn, params);
    fill_home(sql, &home)
}

/// Runs `sql` with its marks of the call's resource filled ([`homed`]).
pub(crate) fn execute(conn: &mut dyn Conn, sql: &str, params: &[Value]) -> Result<u64> {
    let mut params = params.to_vec();
    let sql = homed(conn, sql, &mut params);
    conn.execute(&sql, &params)
}

/// The rows of `sql` with its marks of the call's resource filled ([`homed`]).
pub(crate) fn query(conn: &mut dyn Conn, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
    let mut params = params.to_vec();
    let sql = homed(conn, sql, &mut params);
    conn.query(&sql, &params)
}

/// The first value of `sql` with its marks of the call's resource filled ([`homed`]).
pub(crate) fn query_value(
    conn: &mut dyn Conn,
    sql: &str,
    params: &[Value],
) -> Result<Option<Value>> {
    let mut params = params.to_vec();
    let sql = homed(conn, sql, &mut params);
    conn.query_value(&sql, &params)
}

fn fill_home(sql: &str, home: &HomeParam) -> String {
    let mut out = String::with_capacity(sql.len() + 40);
    let mut rest = sql;
    while let Some(at) = rest.find("{home") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}').map_or(rest.len(), |e| at + e + 1);
        let (column, value) = home.insert();
        match &rest[at + 1..end.saturating_sub(1).max(at + 1)] {
            "home" => out.push_str(&home.and("resource_id")),
            "home_column" => out.push_str(column),
            "home_value" => out.push_str(&value),
            mark => match mark.strip_prefix("home:") {
                Some(alias) => out.push_str(&home.and(&format!("{alias}.resource_id"))),
                None => out.push_str(&rest[at..end]),
            },
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
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

/// A table whose rows carry their resource and are named by a unique `id`, so that a call
/// naming one goes to that row's node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Task,
    Memory,
    Message,
    GraphNode,
    GraphEdge,
}

impl Owner {
    fn table(self) -> &'static str {
        match self {
            Owner::Task => "mem_tasks",
            Owner::Memory => "mem_memories",
            Owner::Message => "mem_messages",
            Owner::GraphNode => "mem_graph_nodes",
            Owner::GraphEdge => "mem_graph_edges",
        }
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
    /// The resource is that of a vector's owner: the memory, or else the message, whose id is
    /// the `id` argument, as the `kind` argument says.
    VectorOwner,
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
            Route::VectorOwner => {
                let owner = match argument("kind") {
                    Some("memory") => Owner::Memory,
                    _ => Owner::Message,
                };
                argument("id").map(|id| Destination::Row(owner, id.into()))
            }
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
                            .map(|id| Destination::Row(Owner::Task, id))
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
        let vector = [("kind", "memory"), ("id", "m")];
        assert_eq!(
            to(Route::VectorOwner, &vector),
            Row(Owner::Memory, "m".into())
        );
        let task = Route::Row(Owner::Task, "task_id");
        assert_eq!(to(task, &[("task_id", "k")]), Row(Owner::Task, "k".into()));
    }

    #[test]
    fn the_marks_of_the_home_resource_fill_only_when_there_is_one() {
        let sql = "INSERT INTO t (a{home_column}) VALUES (?1{home_value}); \
                   SELECT 1 FROM t e WHERE a = ?1{home}{home:e} AND b = '{}'";
        assert_eq!(
            fill_home(sql, &HomeParam(Some(2))),
            "INSERT INTO t (a, resource_id) VALUES (?1, ?2); SELECT 1 FROM t e WHERE a = ?1 \
             AND resource_id = ?2 AND e.resource_id = ?2 AND b = '{}'"
        );
        assert_eq!(
            fill_home(sql, &HomeParam(None)),
            "INSERT INTO t (a) VALUES (?1); SELECT 1 FROM t e WHERE a = ?1 AND b = '{}'"
        );
    }

    #[test]
    fn a_task_tool_goes_by_its_resource_then_its_task_then_its_thread() {
        use Destination::*;
        let tool = |input: &str, context: &str| {
            to(Route::TaskTool, &[("input", input), ("context", context)])
        };
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
        assert_eq!(tool(working, r#"{"resourceId":"r"}"#), Here);
    }
}
