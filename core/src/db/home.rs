//! The resource a connection's running call was handed over for: a distributed database
//! sends a call to the node that holds its resource (`crate::cluster::route`), and there the
//! statements of the call, of its triggers and of the search index name that resource, so
//! that each stays on the node's own shards.

use crate::db::session::Part;
use crate::db::value::ValueRef;
use crate::{Conn, Result, Row, Value};

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

/// Makes `resource` the resource of the call this connection runs (see [`home`]), and returns
/// the one it replaces, which the host puts back when the call returns or fails.
pub fn swap_home(conn: &mut dyn Conn, resource: Option<String>) -> Option<String> {
    std::mem::replace(&mut conn.session().part::<Home>().resource, resource)
}

/// ` AND {column} = ?n` naming the resource of the call handed over to this connection
/// ([`home`]), pushed onto `params`; nothing when there is none.
pub(crate) fn and_home(conn: &mut dyn Conn, column: &str, params: &mut Vec<Value>) -> String {
    HomeParam::push(conn, params).and(column)
}

/// `sql` with its marks of the call's resource ([`home`]) filled, the resource pushed onto
/// `params` once when there is one: `{home}` becomes ` AND resource_id = ?n`, `{home:x}`
/// ` AND x.resource_id = ?n`; for an `INSERT` into a table that carries the resource only in
/// the distributed layout, `{home_column}` becomes `, resource_id` and `{home_value}` `, ?n`,
/// and `{home_column}` ends the conflict target of a key widened there. Every mark is empty
/// on one node and for calls made here; a statement without marks pushes nothing.
pub(crate) fn homed(conn: &mut dyn Conn, sql: &str, params: &mut Vec<Value>) -> String {
    if !sql.contains("{home") {
        return sql.to_owned();
    }
    let home = HomeParam::push(conn, params);
    fill_home(sql, &home)
}

/// Runs `run` on `sql` with its marks of the call's resource filled ([`homed`]); the
/// parameters are copied only to add the resource, never on one node.
fn at_home<T>(
    conn: &mut dyn Conn,
    sql: &str,
    params: &[Value],
    run: impl FnOnce(&mut dyn Conn, &str, &[Value]) -> Result<T>,
) -> Result<T> {
    if !sql.contains("{home") {
        return run(conn, sql, params);
    }
    if home(conn).is_none() {
        // The marks erased, kept by their text: the calls an agent makes once per message
        // run the same few statements.
        let text = super::sql_text::templated(sql, (0, 0), || fill_home(sql, &HomeParam(None)));
        return run(conn, &text, params);
    }
    let mut params = params.to_vec();
    let sql = homed(conn, sql, &mut params);
    run(conn, &sql, &params)
}

/// Runs `sql` with its marks of the call's resource filled ([`homed`]).
pub(crate) fn execute(conn: &mut dyn Conn, sql: &str, params: &[Value]) -> Result<u64> {
    at_home(conn, sql, params, |c, sql, p| c.execute(sql, p))
}

/// The rows of `sql` with its marks of the call's resource filled ([`homed`]).
pub(crate) fn query(conn: &mut dyn Conn, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
    at_home(conn, sql, params, |c, sql, p| c.query(sql, p))
}

/// Shows each row of `sql`, its marks of the call's resource filled ([`homed`]), to `f`,
/// borrowed where the host allows ([`Conn::for_each_row`]).
pub(crate) fn for_each_row(
    conn: &mut dyn Conn,
    sql: &str,
    params: &[Value],
    f: &mut dyn FnMut(&[ValueRef<'_>]) -> Result<()>,
) -> Result<()> {
    at_home(conn, sql, params, |c, sql, p| c.for_each_row(sql, p, f))
}

/// The first value of `sql` with its marks of the call's resource filled ([`homed`]).
pub(crate) fn query_value(
    conn: &mut dyn Conn,
    sql: &str,
    params: &[Value],
) -> Result<Option<Value>> {
    at_home(conn, sql, params, |c, sql, p| c.query_value(sql, p))
}

fn fill_home(sql: &str, home: &HomeParam) -> String {
    let mut out = String::with_capacity(sql.len() + 40);
    let (column, value) = home.insert();
    let mut rest = sql;
    while let Some(at) = rest.find("{home") {
        out.push_str(&rest[..at]);
        let Some(len) = rest[at..].find('}') else {
            rest = &rest[at..];
            break;
        };
        let end = at + len + 1;
        match &rest[at + 1..end - 1] {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
