//! Row triggers of `mem_messages`. Postgres hands the row to a BEFORE trigger, which may
//! change it, so the core's completion is written straight into `NEW`.

use crate::error::ok;
use agentmem_core::db::row::{Completed, Stored};
use agentmem_core::memory::messages::{self, Changed, Draft, Timing};
use agentmem_core::{Error, Value};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, WhoAllocated};

/// What an AFTER row trigger returns (nothing: the row is already written).
pub type Fired<'a> = Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError>;

/// A text column of a trigger row (empty when NULL).
pub fn text<W: WhoAllocated>(row: &PgHeapTuple<'_, W>, col: &str) -> String {
    row.get_by_name::<String>(col)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The row's `seq` key.
pub fn seq<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> i64 {
    row.get_by_name::<i64>("seq").ok().flatten().unwrap_or(0)
}

/// Reads named columns of a trigger row as core values, by their Postgres types. The row
/// triggers of every table use it.
pub fn values<W: WhoAllocated>(row: &PgHeapTuple<'_, W>, cols: &[&str]) -> Vec<Value> {
    cols.iter()
        .map(|&col| {
            let v = match row.get_attribute_by_name(col).map(|(_, a)| a.atttypid) {
                Some(pg_sys::INT8OID) => row.get_by_name::<i64>(col).ok().flatten().map(Value::Int),
                Some(pg_sys::INT4OID) => row
                    .get_by_name::<i32>(col)
                    .ok()
                    .flatten()
                    .map(|v| Value::Int(v.into())),
                Some(pg_sys::JSONBOID) => row
                    .get_by_name::<pgrx::JsonB>(col)
                    .ok()
                    .flatten()
                    .map(|j| Value::Text(j.0.to_string())),
                _ => row
                    .get_by_name::<String>(col)
                    .ok()
                    .flatten()
                    .map(Value::Text),
            };
            v.unwrap_or(Value::Null)
        })
        .collect()
}

/// Reads a trigger row as the core's row type.
pub fn read<R: Stored, W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> R {
    ok(R::from_values(values(row, R::COLUMNS)))
}

/// Writes the columns the core fills in (`Completed::filled`) into `NEW`, each as its column's
/// Postgres type, skipping those that already hold their value: each write forms the row
/// again, and a row `mem_message_add` completed comes in whole. The row triggers of every
/// table use it.
pub fn write_back<R: Completed>(row: &mut PgHeapTuple<'_, AllocatedByRust>, completed: &R) {
    let filled = completed.filled();
    let names: Vec<&str> = filled.iter().map(|(col, _)| *col).collect();
    let held = values(row, &names);
    for ((col, v), now) in filled.into_iter().zip(held) {
        if v == now {
            continue;
        }
        let ty = row.get_attribute_by_name(col).map(|(_, a)| a.atttypid);
        let r = match ty {
            Some(pg_sys::INT8OID) => row.set_by_name(col, v.as_i64()),
            Some(pg_sys::INT4OID) => {
                row.set_by_name(col, v.as_i64().and_then(|i| i32::try_from(i).ok()))
            }
            _ => row.set_by_name(col, v.as_str().map(str::to_owned)),
        };
        if let Err(e) = r {
            ok::<()>(Err(Error::internal(format!(
                "writing trigger row: {col}: {e}"
            ))));
        }
    }
}

/// The trigger's `NEW` row, as a copy the trigger may change and return.
pub fn new_row<'a>(trigger: &'a PgTrigger<'a>) -> PgHeapTuple<'a, AllocatedByRust> {
    match trigger.new() {
        Some(row) => row.into_owned(),
        None => ok(Err(Error::internal("trigger fired without a NEW row"))),
    }
}

#[pg_trigger]
fn mem__message_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let mut row = new_row(trigger);
    // With the statement trigger, rows are booked when their statement ends.
    let timing = if crate::held::has_trigger(trigger, BOOKED_TRIGGER) {
        Timing::BeforeStatementEnd
    } else {
        Timing::BeforeWrite
    };
    let hold = crate::held::may_hold(trigger);
    let d = ok(messages::complete_insert(
        &mut crate::conn::SpiConn,
        read::<Draft, _>(&row),
        timing,
        hold,
    ));
    write_back(&mut row, &d);
    Ok(Some(row))
}

/// The statement trigger that books the rows an insert wrote.
const BOOKED_TRIGGER: &str = "mem__messages_booked_trg";

/// Rows booked at a time.
const BOOKED_PER_PAGE: usize = 1024;

/// The columns of the inserted rows the statement's end reads.
const INSERTED_COLUMNS: &[&str] = &[
    "seq",
    "id",
    "thread_id",
    "message_index",
    "token_count",
    "created_at",
    "search_text",
    "raw_content",
];

/// `AFTER INSERT … FOR EACH STATEMENT`: books the rows the statement inserted (and only
/// those: a row `ON CONFLICT DO NOTHING` skipped is not in its transition table), a page of
/// rows at a time. Rows `mem_message_add` booked itself are skipped before their text is read.
#[pg_trigger]
fn mem__messages_booked<'a>(trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    let _inside = internal::Guard::new();
    let hold = crate::held::may_hold(trigger);
    let data = trigger.trigger_data() as *const pg_sys::TriggerData;
    // SAFETY: the trigger's data lives for the call, and so does the cursor.
    let Some(mut inserted) = (unsafe { crate::transition::NewRows::open(data, INSERTED_COLUMNS) })
    else {
        return Ok(None);
    };
    let mut page = Vec::new();
    loop {
        let more = inserted.advance();
        if more {
            let id = inserted.text(1).unwrap_or_default();
            if messages::booked_by_add(&mut crate::conn::SpiConn, &id) {
                continue;
            }
            page.push(messages::Inserted {
                seq: inserted.int(0),
                id,
                thread_id: inserted.text(2).unwrap_or_default(),
                message_index: inserted.int(3),
                token_count: inserted.int(4),
                created_at: inserted.int(5),
                indexed_text: inserted
                    .text(6)
                    .or_else(|| inserted.text(7))
                    .unwrap_or_default(),
            });
        }
        if page.len() == BOOKED_PER_PAGE || (!more && !page.is_empty()) {
            ok(messages::book_inserted(
                &mut crate::conn::SpiConn,
                &page,
                hold,
            ));
            page.clear();
        }
        if !more {
            return Ok(None);
        }
    }
}

/// The deferred constraint trigger `mem__message_held_trg`: writes the search documents the
/// transaction holds (see [`crate::held`]).
#[pg_trigger]
fn mem__message_held<'a>(_trigger: &'a PgTrigger<'a>) -> Fired<'a> {
    crate::held::write();
    Ok(None)
}

#[pg_trigger]
fn mem__message_update<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let old = trigger.old().map(|o| read::<Draft, _>(&o));
    let mut row = new_row(trigger);
    let new = read::<Draft, _>(&row);
    let changed = match &old {
        Some(o) => Changed {
            raw_content: o.raw_content != new.raw_content,
            search_text: o.search_text != new.search_text,
            created_at: o.created_at != new.created_at,
        },
        None => Changed {
            raw_content: true,
            search_text: true,
            created_at: true,
        },
    };
    let old_tokens = old.as_ref().and_then(|o| o.token_count);
    let old_search = old.as_ref().map(Draft::indexed_text);
    let d = ok(messages::complete_update(
        &mut crate::conn::SpiConn,
        changed,
        old_tokens,
        old_search,
        new,
    ));
    write_back(&mut row, &d);
    Ok(Some(row))
}

/// AFTER DELETE: the row is gone; its old values take it off the books.
#[pg_trigger]
fn mem__message_delete<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        let d = read::<Draft, _>(&old);
        let row = messages::Booked {
            seq: d.seq,
            indexed_text: Some(d.indexed_text().to_string()),
            token_count: d.token_count.unwrap_or(0),
            thread_id: d.thread_id,
        };
        ok(messages::after_delete(&mut crate::conn::SpiConn, &row));
    }
    Ok(None)
}

/// Refuses the row with the message the schema gave the trigger (`@refuse`, `@derived` in
/// core::schema).
#[pg_trigger]
fn mem__refuse<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let msg = trigger
        .extra_args()
        .ok()
        .and_then(|a| a.into_iter().next())
        .unwrap_or_else(|| "this change is not allowed".into());
    pgrx::ereport!(ERROR, pgrx::PgSqlErrorCode::ERRCODE_RESTRICT_VIOLATION, msg);
}

/// Whether the backend is inside one of agentmem's own writes; the schema's guards on derived
/// columns let writes through only then.
#[pg_extern(stable, parallel_safe)]
fn mem__internal() -> bool {
    internal::inside()
}

/// How deep this backend is inside agentmem's trigger handlers (and migrations), which are
/// the only writers of derived columns.
pub mod internal {
    use std::cell::Cell;

    thread_local! {
        static DEPTH: Cell<u32> = const { Cell::new(0) };
    }

    pub fn inside() -> bool {
        DEPTH.with(|d| d.get() > 0)
    }

    /// Held while a handler runs; released on return and on an error's unwinding.
    pub struct Guard(());

    impl Guard {
        pub fn new() -> Guard {
            DEPTH.with(|d| d.set(d.get() + 1));
            Guard(())
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
}
