//! SQLite's row triggers, as the SQL functions they call.
//!
//! SQLite triggers cannot change `NEW` and cannot run host code, so each trigger in the schema
//! calls one of these functions with the row's key (and, after a delete, its old values). The
//! function reads the row, runs the core's handler and writes back what the core filled in.
//! The extension registers every name in [`NAMES`]; tests that drive the schema through the
//! system SQLite register the same ones, so both run this dispatch.
//!
//! Every handler is safe to call by hand: it books a row at most once, refuses to act on a row
//! that still exists where it expects it gone, or recounts instead of counting.

use crate::db::row;
use crate::db::session::Part;
use crate::memory::messages::{self, Booked, Changed, Draft, Timing};
use crate::tasks::graph::{self, DepRow, TaskRow};
use crate::{memory::threads, Conn, Error, Result, Value};

/// The trigger functions, by SQL name.
pub const NAMES: &[&str] = &[
    "mem__message_insert",
    "mem__message_conflicts",
    "mem__message_update",
    "mem__message_delete",
    "mem__thread_recount",
    "mem__task_insert",
    "mem__task_status",
    "mem__task_text",
    "mem__task_id_change",
    "mem__task_delete",
    "mem__task_dep_insert",
    "mem__task_dep_update",
    "mem__task_dep_delete",
    "mem__graph_edge_insert",
    "mem__graph_edge_update",
    "mem__graph_edge_delete",
    "mem__graph_node_delete",
    "mem__graph_settings_changed",
    "mem__memory_insert",
    "mem__memory_update",
    "mem__memory_delete",
    "mem__memory_secrets",
    "mem__embedding_insert",
    "mem__embedding_update",
    "mem__embedding_delete",
    "mem__refuse_nul",
];

/// The rows an `INSERT OR REPLACE` may remove, seen by the before-insert trigger of the row
/// with this id, kept in the connection's session until that row's after-insert handler runs
/// (or the transaction ends). A stale entry (its insert was ignored) is harmless: settling
/// books nothing for rows still there.
#[derive(Default)]
struct Pending(Option<(String, Vec<Booked>)>);

impl Part for Pending {
    fn commit(&mut self) {
        self.0 = None;
    }

    fn rollback(&mut self) {
        self.0 = None;
    }
}

fn take_pending(conn: &mut dyn Conn, id: &str) -> Vec<Booked> {
    match conn.session().part::<Pending>().0.take() {
        Some((pending, rows)) if pending == id => rows,
        _ => Vec::new(),
    }
}

fn int(args: &[Value], i: usize, name: &str) -> Result<i64> {
    args.get(i)
        .and_then(Value::as_i64)
        .ok_or_else(|| Error::invalid(name, "must be an integer"))
}

/// An edge's old (from, to, type, counted) from the trigger's arguments at `i`.
fn old_edge(args: &[Value], i: usize) -> crate::graph::OldEdge {
    crate::graph::OldEdge {
        from: text(args, i).unwrap_or_default(),
        to: text(args, i + 1).unwrap_or_default(),
        ty: text(args, i + 2).unwrap_or_default(),
        active: opt_int(args, i + 3) == Some(1),
    }
}

/// A memory's indexed columns before a change, from `OLD.content, OLD.tags,
/// OLD.related_files`.
fn old_memory(args: &[Value], i: usize) -> crate::memories::OldMemory {
    crate::memories::OldMemory {
        content: text(args, i).unwrap_or_default(),
        tags: text(args, i + 1).unwrap_or_default(),
        related_files: text(args, i + 2).unwrap_or_default(),
    }
}

fn opt_int(args: &[Value], i: usize) -> Option<i64> {
    args.get(i).and_then(Value::as_i64)
}

fn text(args: &[Value], i: usize) -> Option<String> {
    match args.get(i) {
        Some(Value::Text(s)) => Some(s.clone()),
        Some(Value::Int(v)) => Some(v.to_string()),
        Some(Value::Blob(b)) => String::from_utf8(b.clone()).ok(),
        _ => None,
    }
}

/// `mem__refuse_nul(column, value)`, which the schema's type checks call for text that holds
/// U+0000 or JSON text that may (`\u0000`): fails with the rule's error, naming the column and
/// the character (or the JSON path); passes JSON whose `\u0000` was an escaped backslash.
fn refuse_nul(column: &str, value: Option<&Value>) -> Result<()> {
    let Some(Value::Text(s)) = value else {
        return Ok(());
    };
    crate::args::no_nul(column, s)?;
    match serde_json::from_str::<serde_json::Value>(s) {
        Ok(v) => crate::json_input::check(column, &v),
        Err(_) => Ok(()),
    }
}

fn flag(args: &[Value], i: usize) -> bool {
    opt_int(args, i).unwrap_or(1) != 0
}

/// Completes and books the message row `seq` after its insert (what `mem__message_insert`
/// does; the table the insert trigger writes to does it with `hold`, see
/// [`crate::search::held`]).
pub fn message_inserted(conn: &mut dyn Conn, seq: i64, hold: bool) -> Result<()> {
    let d = row::load::<Draft>(conn, seq)?;
    let replaced = take_pending(conn, &d.id);
    messages::settle_replaced(conn, d.seq, &replaced)?;
    let before = d.clone();
    let d = messages::complete_insert(conn, d, Timing::AfterWrite, hold)?;
    row::store(conn, &before, &d)
}

/// Runs the trigger function `name` with its arguments.
pub fn call(conn: &mut dyn Conn, name: &str, args: &[Value]) -> Result<Value> {
    match name {
        "mem__message_insert" => {
            message_inserted(conn, int(args, 0, "seq")?, false)?;
        }
        "mem__message_conflicts" => {
            let id = text(args, 1).unwrap_or_default();
            let rows = messages::conflicts(
                conn,
                opt_int(args, 0),
                Some(&id),
                text(args, 2).as_deref(),
                opt_int(args, 3),
            )?;
            conn.session().part::<Pending>().0 = Some((id, rows));
        }
        "mem__message_update" => {
            let d = row::load::<Draft>(conn, int(args, 0, "seq")?)?;
            // The stored count is the one booked on the thread (token_count cannot be updated).
            let old_tokens = d.token_count;
            let changed = Changed {
                raw_content: flag(args, 1),
                search_text: flag(args, 2),
                created_at: flag(args, 3),
            };
            let old_search = text(args, 4);
            let updated = messages::complete_update(
                conn,
                changed,
                old_tokens,
                old_search.as_deref(),
                d.clone(),
            )?;
            row::store(conn, &d, &updated)?;
        }
        "mem__message_delete" => {
            let row = Booked {
                seq: int(args, 0, "seq")?,
                thread_id: text(args, 1).unwrap_or_default(),
                token_count: opt_int(args, 2).unwrap_or(0),
                indexed_text: text(args, 3),
            };
            messages::after_delete(conn, &row)?;
        }
        "mem__thread_recount" => {
            threads::recount(conn, &text(args, 0).unwrap_or_default())?;
        }
        "mem__task_insert" => {
            let mut row = row::load::<TaskRow>(conn, int(args, 0, "seq")?)?;
            let before = row.clone();
            if graph::on_task_insert(conn, &mut row)? {
                row::store(conn, &before, &row)?;
            }
        }
        "mem__task_status" => {
            let mut row = row::load::<TaskRow>(conn, int(args, 0, "seq")?)?;
            let before = row.clone();
            if graph::on_task_status(conn, &mut row)? {
                row::store(conn, &before, &row)?;
            }
            graph::after_task_status(conn, &row.id)?;
        }
        "mem__task_text" => {
            let row = row::load::<TaskRow>(conn, int(args, 0, "seq")?)?;
            let old = graph::search_text(
                &text(args, 1).unwrap_or_default(),
                text(args, 2).as_deref(),
                text(args, 3).as_deref(),
            );
            graph::on_task_text(conn, &row, &old)?;
        }
        "mem__task_id_change" => graph::on_task_id_change()?,
        "mem__task_delete" => {
            let id = text(args, 1).unwrap_or_default();
            let old = graph::search_text(
                &text(args, 2).unwrap_or_default(),
                text(args, 3).as_deref(),
                text(args, 4).as_deref(),
            );
            graph::on_task_delete(conn, int(args, 0, "seq")?, &id, &old)?;
        }
        "mem__task_dep_insert" => {
            let dep = row::load::<DepRow>(conn, int(args, 0, "seq")?)?;
            graph::on_dep_insert(conn, &dep)?;
        }
        "mem__task_dep_update" => graph::on_dep_update()?,
        "mem__task_dep_delete" => {
            graph::on_dep_delete(conn, &text(args, 0).unwrap_or_default())?;
        }
        "mem__graph_edge_insert" => crate::graph::on_edge_insert(conn, int(args, 0, "seq")?)?,
        "mem__graph_edge_update" => {
            let old = old_edge(args, 1);
            crate::graph::on_edge_update(conn, int(args, 0, "seq")?, &old)?;
        }
        "mem__graph_edge_delete" => {
            let old = old_edge(args, 1);
            let resource = text(args, 0).unwrap_or_default();
            crate::graph::on_edge_delete(conn, &resource, &old)?;
        }
        "mem__graph_node_delete" => {
            crate::graph::on_node_delete(conn, &text(args, 0).unwrap_or_default())?;
        }
        "mem__graph_settings_changed" => {
            crate::graph::on_settings_change(conn, &text(args, 0).unwrap_or_default())?;
        }
        "mem__memory_insert" => crate::memories::on_insert(conn, int(args, 0, "seq")?)?,
        "mem__memory_update" => {
            crate::memories::on_update(conn, int(args, 0, "seq")?, &old_memory(args, 1))?;
        }
        "mem__memory_delete" => {
            crate::memories::on_delete(conn, int(args, 0, "seq")?, &old_memory(args, 1))?;
        }
        "mem__memory_secrets" => crate::memories::check_secrets(conn, int(args, 0, "seq")?)?,
        "mem__embedding_insert" => crate::vectors::store::on_insert(conn, int(args, 0, "seq")?)?,
        "mem__embedding_update" => crate::vectors::store::on_update(
            conn,
            int(args, 0, "seq")?,
            &text(args, 1).unwrap_or_default(),
            opt_int(args, 2),
        )?,
        "mem__embedding_delete" => crate::vectors::store::on_delete(
            conn,
            int(args, 0, "seq")?,
            &text(args, 1).unwrap_or_default(),
            opt_int(args, 2),
        )?,
        "mem__refuse_nul" => refuse_nul(&text(args, 0).unwrap_or_default(), args.get(1))?,
        other => return Err(Error::internal(format!("no trigger function {other}"))),
    }
    Ok(Value::Null)
}
