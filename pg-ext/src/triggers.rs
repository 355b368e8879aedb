//! Row triggers of `mem_messages`. Postgres hands the row to a BEFORE trigger, which may
//! change it, so the core's completion is written straight into `NEW`.

use crate::functions::ok;
use agentmem_core::{messages, messages::Draft, Error, Value};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, WhoAllocated};

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

/// Reads the draft's columns from a row.
fn draft<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> Draft {
    ok(Draft::from_values(values(row, &Draft::COLUMNS)))
}

/// Writes the columns the core fills back into `NEW`.
fn write_back(row: &mut PgHeapTuple<'_, AllocatedByRust>, d: &Draft) {
    let set = |r: Result<(), _>| {
        if let Err(e) = r {
            ok::<()>(Err(Error::internal(format!("writing trigger row: {e}"))));
        }
    };
    set(row.set_by_name("id", d.id.clone()));
    set(row.set_by_name("resource_id", d.resource_id.clone()));
    set(row.set_by_name("search_text", d.search_text.clone()));
    set(row.set_by_name("injection_text", d.injection_text.clone()));
    set(row.set_by_name("message_index", d.message_index));
    set(row.set_by_name("token_count", d.token_count));
    set(row.set_by_name("task_id", d.task_id.clone()));
}

fn new_row<'a>(trigger: &'a PgTrigger<'a>) -> PgHeapTuple<'a, AllocatedByRust> {
    match trigger.new() {
        Some(row) => row.into_owned(),
        None => ok(Err(Error::internal("trigger fired without a NEW row"))),
    }
}

#[pg_trigger]
fn mem__message_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let mut row = new_row(trigger);
    let d = ok(messages::complete_insert(
        &mut crate::conn::SpiConn,
        draft(&row),
    ));
    write_back(&mut row, &d);
    Ok(Some(row))
}

#[pg_trigger]
fn mem__message_update<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let old = trigger.old().map(|o| draft(&o));
    let mut row = new_row(trigger);
    let new = draft(&row);
    let raw_changed = old
        .as_ref()
        .is_none_or(|o| o.raw_content != new.raw_content);
    let old_tokens = old.and_then(|o| o.token_count);
    let d = ok(messages::complete_update(
        &mut crate::conn::SpiConn,
        raw_changed,
        old_tokens,
        new,
    ));
    write_back(&mut row, &d);
    Ok(Some(row))
}

#[pg_trigger]
fn mem__message_delete<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let Some(old) = trigger.old() else {
        return Ok(None);
    };
    ok(messages::before_delete(
        &mut crate::conn::SpiConn,
        &draft(&old),
    ));
    Ok(Some(old.into_owned()))
}
