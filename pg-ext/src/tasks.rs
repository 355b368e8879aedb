//! Task memory: the Postgres functions and the row triggers of `mem_tasks` and
//! `mem_task_deps`. Every rule is in `agentmem_core::tasks`.

use crate::conn::SpiConn;
use crate::functions::{json, ok};
use crate::triggers::{internal, values};
use agentmem_core::tasks::{
    graph::{self, DepRow, TaskRow},
    ops, query, tool,
};
use agentmem_core::{Error, Value};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, WhoAllocated};

fn text(v: Option<&Value>) -> Option<String> {
    match v {
        Some(Value::Text(s)) => Some(s.clone()),
        Some(Value::Int(i)) => Some(i.to_string()),
        _ => None,
    }
}

fn int(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
}

#[pg_extern]
fn task_create(title: Option<&str>, options: default!(Option<&str>, "NULL")) -> String {
    ok(ops::create(&mut SpiConn, title, options))
}

#[pg_extern]
fn task_dep_add(
    task_id: Option<&str>,
    depends_on_id: Option<&str>,
    dep_type: default!(Option<&str>, "NULL"),
) -> i64 {
    ok(ops::dep_add(&mut SpiConn, task_id, depends_on_id, dep_type))
}

#[pg_extern]
fn task_dep_remove(
    task_id: Option<&str>,
    depends_on_id: Option<&str>,
    dep_type: default!(Option<&str>, "NULL"),
) -> i64 {
    ok(ops::dep_remove(
        &mut SpiConn,
        task_id,
        depends_on_id,
        dep_type,
    ))
}

#[pg_extern]
fn task_claim(
    task_id: Option<&str>,
    session_id: Option<&str>,
    thread_id: default!(Option<&str>, "NULL"),
) -> String {
    ok(ops::claim(&mut SpiConn, task_id, session_id, thread_id))
}

#[pg_extern]
fn task_close(task_id: Option<&str>, reason: Option<&str>, summary: Option<&str>) -> String {
    ok(ops::close(&mut SpiConn, task_id, reason, summary))
}

#[pg_extern]
fn task_update(task_id: Option<&str>, options: Option<&str>) -> String {
    ok(ops::update(&mut SpiConn, task_id, options))
}

#[pg_extern]
fn task_show(task_id: Option<&str>) -> pgrx::JsonB {
    json(ok(query::show(&mut SpiConn, task_id)))
}

#[pg_extern]
fn task_link(
    task_id: Option<&str>,
    message_id: Option<&str>,
    relation: default!(Option<&str>, "NULL"),
) -> i64 {
    ok(ops::link(&mut SpiConn, task_id, message_id, relation))
}

#[pg_extern]
fn task_compact(
    task_id: Option<&str>,
    summary: Option<&str>,
    options: default!(Option<&str>, "NULL"),
) -> i64 {
    ok(ops::compact(&mut SpiConn, task_id, summary, options))
}

#[pg_extern]
fn task_restore(task_id: Option<&str>) -> i64 {
    ok(ops::restore(&mut SpiConn, task_id))
}

#[pg_extern]
fn task_query(input: Option<&str>, context: default!(Option<&str>, "NULL")) -> pgrx::JsonB {
    json(tool::task_query(
        &mut SpiConn,
        input.map(str::as_bytes),
        context.map(str::as_bytes),
    ))
}

#[pg_extern]
fn task_mutate(input: Option<&str>, context: default!(Option<&str>, "NULL")) -> pgrx::JsonB {
    json(tool::task_mutate(
        &mut SpiConn,
        input.map(str::as_bytes),
        context.map(str::as_bytes),
    ))
}

#[pg_extern]
#[allow(clippy::type_complexity)]
fn task_ready(
    options: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(id, String),
        name!(title, String),
        name!(priority, i64),
        name!(type, String),
        name!(status, String),
        name!(assignee, Option<String>),
        name!(labels, String),
        name!(created_at, i64),
    ),
> {
    let rows = ok(query::ready(&mut SpiConn, options));
    TableIterator::new(rows.into_iter().map(|r| {
        (
            r.id,
            r.title,
            r.priority,
            r.ty,
            r.status,
            r.assignee,
            r.labels,
            r.created_at,
        )
    }))
}

#[pg_extern]
#[allow(clippy::type_complexity)]
fn task_list(
    options: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(id, Option<String>),
        name!(title, Option<String>),
        name!(status, Option<String>),
        name!(priority, Option<i64>),
        name!(type, Option<String>),
        name!(assignee, Option<String>),
        name!(session_id, Option<String>),
        name!(labels, Option<String>),
        name!(is_blocked, Option<i64>),
        name!(created_at, Option<i64>),
        name!(updated_at, Option<i64>),
        name!(closed_at, Option<i64>),
    ),
> {
    let rows = ok(query::list(&mut SpiConn, options));
    TableIterator::new(rows.into_iter().map(|r| {
        (
            text(r.first()),
            text(r.get(1)),
            text(r.get(2)),
            int(r.get(3)),
            text(r.get(4)),
            text(r.get(5)),
            text(r.get(6)),
            text(r.get(7)),
            int(r.get(8)),
            int(r.get(9)),
            int(r.get(10)),
            int(r.get(11)),
        )
    }))
}

#[pg_extern]
#[allow(clippy::type_complexity)]
fn task_search(
    query: Option<&str>,
    options: default!(Option<&str>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(id, Option<String>),
        name!(title, Option<String>),
        name!(status, Option<String>),
        name!(priority, Option<i64>),
        name!(type, Option<String>),
        name!(score, Option<f64>),
        name!(snippet, Option<String>),
    ),
> {
    let rows = ok(query::search_tasks(&mut SpiConn, query, options));
    TableIterator::new(rows.into_iter().map(|r| {
        (
            text(r.first()),
            text(r.get(1)),
            text(r.get(2)),
            int(r.get(3)),
            text(r.get(4)),
            r.get(5).and_then(Value::as_f64),
            text(r.get(6)),
        )
    }))
}

// ------------------------------------------------------------------ row triggers

fn task_row<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> TaskRow {
    ok(TaskRow::from_values(values(row, &TaskRow::COLUMNS)))
}

fn dep_row<W: WhoAllocated>(row: &PgHeapTuple<'_, W>) -> DepRow {
    ok(DepRow::from_values(values(row, &DepRow::COLUMNS)))
}

/// Writes the columns the core completes back into `NEW`.
fn write_back(row: &mut PgHeapTuple<'_, AllocatedByRust>, t: &TaskRow) {
    let set = |r: Result<(), _>| {
        if let Err(e) = r {
            ok::<()>(Err(Error::internal(format!("writing trigger row: {e}"))));
        }
    };
    set(row.set_by_name("closed_at", t.closed_at));
    set(row.set_by_name("close_reason", t.close_reason.clone()));
    set(row.set_by_name("open_blockers", t.open_blockers));
    set(row.set_by_name("blocked_parents", t.blocked_parents));
    set(row.set_by_name("is_blocked", t.is_blocked as i32));
}

fn new_row<'a>(trigger: &'a PgTrigger<'a>) -> PgHeapTuple<'a, AllocatedByRust> {
    match trigger.new() {
        Some(row) => row.into_owned(),
        None => ok(Err(Error::internal("trigger fired without a NEW row"))),
    }
}

#[pg_trigger]
fn mem__task_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let mut row = new_row(trigger);
    let mut t = task_row(&row);
    if ok(graph::on_task_insert(&mut SpiConn, &mut t)) {
        write_back(&mut row, &t);
    }
    Ok(Some(row))
}

/// BEFORE UPDATE of a status that crosses the closed line: fills the row.
#[pg_trigger]
fn mem__task_status<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let mut row = new_row(trigger);
    let mut t = task_row(&row);
    if ok(graph::on_task_status(&mut SpiConn, &mut t)) {
        write_back(&mut row, &t);
    }
    Ok(Some(row))
}

/// AFTER UPDATE of such a status: the dependents see the new status.
#[pg_trigger]
fn mem__task_status_after<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(graph::after_task_status(&mut SpiConn, &task_row(&new).id));
    }
    Ok(None)
}

#[pg_trigger]
fn mem__task_text<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    let row = new_row(trigger);
    let old = trigger
        .old()
        .map(|o| task_row(&o).search_text())
        .unwrap_or_default();
    ok(graph::on_task_text(&mut SpiConn, &task_row(&row), &old));
    Ok(Some(row))
}

#[pg_trigger]
fn mem__task_id_change<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    ok(graph::on_task_id_change());
    Ok(None)
}

/// AFTER DELETE: the row is gone; its dependencies, labels, links and document follow.
#[pg_trigger]
fn mem__task_delete<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        let t = task_row(&old);
        ok(graph::on_task_delete(
            &mut SpiConn,
            t.seq,
            &t.id,
            &t.search_text(),
        ));
    }
    Ok(None)
}

/// AFTER INSERT: the new dependency is counted.
#[pg_trigger]
fn mem__task_dep_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(new) = trigger.new() {
        ok(graph::on_dep_insert(&mut SpiConn, &dep_row(&new)));
    }
    Ok(None)
}

#[pg_trigger]
fn mem__task_dep_update<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    ok(graph::on_dep_update());
    Ok(None)
}

/// AFTER DELETE: the task is recounted without the dependency.
#[pg_trigger]
fn mem__task_dep_delete<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, PgHeapTupleError> {
    let _inside = internal::Guard::new();
    if let Some(old) = trigger.old() {
        ok(graph::on_dep_delete(&mut SpiConn, &dep_row(&old).task_id));
    }
    Ok(None)
}
