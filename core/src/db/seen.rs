//! The values of the row an `UPDATE` changed, read in the same statement on SQLite.
//!
//! Postgres hands them back with `RETURNING`. SQLite's `RETURNING` rows wait in a temporary
//! table that each run of the statement makes and drops, which costs more than reading the row
//! with a `SELECT` first; and a `SELECT` first is a second statement. So an update of one row
//! passes the values it needs through [`FUNCTION`] in its `SET` list instead:
//! `SET n = mem__seen(n + 1, n, other, …)` stores `n + 1` and keeps `n, other, …`, as the row
//! was before the update, for [`update_one`] to hand back.
//!
//! The host registers the function as direct-only: no trigger or view may call it, so nothing
//! but the statement [`update_one`] runs can leave values behind for it.

use crate::db::session::Part;
use crate::{Conn, Result, Row, Value};

/// The SQL name of the function.
pub const FUNCTION: &str = "mem__seen";

/// What the function kept last.
#[derive(Default)]
struct Seen(Option<Row>);

impl Part for Seen {}

/// The function's work, as the host calls it with its arguments: keeps all but the first,
/// and returns the first.
pub fn see(conn: &mut dyn Conn, mut args: Row) -> Value {
    let first = if args.is_empty() {
        Value::Null
    } else {
        args.remove(0)
    };
    conn.session().part::<Seen>().0 = Some(args);
    first
}

/// Runs `update`, an `UPDATE` whose `SET` list passes the values wanted through
/// [`FUNCTION`]: the values, when it changed exactly one row; `None` when it changed none.
///
/// What was kept before is put back after: an update that runs inside another's statement
/// (a call from a trigger the outer update fired) must not take the outer one's values.
pub(crate) fn update_one(
    conn: &mut dyn Conn,
    update: &str,
    params: &[Value],
) -> Result<Option<Row>> {
    let outer = conn.session().part::<Seen>().0.take();
    let changed = conn.execute(update, params);
    let seen = std::mem::replace(&mut conn.session().part::<Seen>().0, outer);
    let changed = changed?;
    Ok(seen.filter(|_| changed == 1))
}
