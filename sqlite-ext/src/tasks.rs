//! Task memory: the SQLite functions.

use crate::{args::Args, functions::Scalar, table::TableFn};
use agentmem_core::tasks::{
    graph::{self, DepRow, TaskRow},
    ops, query, tool,
};
use agentmem_core::{Error, Result, Value};

fn seq(a: &Args) -> Result<i64> {
    a.int(0)?
        .ok_or_else(|| Error::invalid("seq", "must not be NULL"))
}

pub const SCALARS: &[Scalar] = &[
    Scalar {
        name: "task_create",
        args: &["title", "options"],
        required: 1,
        pure: false,
        run: |c, a| Ok(ops::create(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into()),
    },
    Scalar {
        name: "task_dep_add",
        args: &["task_id", "depends_on_id", "type"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(Value::Int(ops::dep_add(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?))
        },
    },
    Scalar {
        name: "task_dep_remove",
        args: &["task_id", "depends_on_id", "type"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(Value::Int(ops::dep_remove(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?))
        },
    },
    Scalar {
        name: "task_claim",
        args: &["task_id", "session_id", "thread_id"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(ops::claim(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?
            .into())
        },
    },
    Scalar {
        name: "task_close",
        args: &["task_id", "reason", "summary"],
        required: 3,
        pure: false,
        run: |c, a| {
            Ok(ops::close(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?
            .into())
        },
    },
    Scalar {
        name: "task_update",
        args: &["task_id", "options"],
        required: 2,
        pure: false,
        run: |c, a| Ok(ops::update(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into()),
    },
    Scalar {
        name: "task_show",
        args: &["task_id"],
        required: 1,
        pure: false,
        run: |c, a| Ok(query::show(c, a.text(0)?.as_deref())?.into()),
    },
    Scalar {
        name: "task_link",
        args: &["task_id", "message_id", "relation"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(Value::Int(ops::link(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?))
        },
    },
    Scalar {
        name: "task_compact",
        args: &["task_id", "summary", "options"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(Value::Int(ops::compact(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?))
        },
    },
    Scalar {
        name: "task_restore",
        args: &["task_id"],
        required: 1,
        pure: false,
        run: |c, a| Ok(Value::Int(ops::restore(c, a.text(0)?.as_deref())?)),
    },
    Scalar {
        name: "task_query",
        args: &["input", "context"],
        required: 1,
        pure: false,
        run: |c, a| Ok(tool::task_query(c, a.text(0)?.as_deref(), a.text(1)?.as_deref()).into()),
    },
    Scalar {
        name: "task_mutate",
        args: &["input", "context"],
        required: 1,
        pure: false,
        run: |c, a| Ok(tool::task_mutate(c, a.text(0)?.as_deref(), a.text(1)?.as_deref()).into()),
    },
    // Row triggers of mem_tasks and mem_task_deps (see sql/migrations/0004_tasks.sql).
    Scalar {
        name: "mem__task_insert",
        args: &["seq"],
        required: 1,
        pure: false,
        run: |c, a| {
            let mut row = TaskRow::load(c, seq(a)?)?;
            if graph::on_task_insert(c, &mut row)? {
                row.store(c)?;
            }
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__task_status",
        args: &["seq", "status_changed"],
        required: 1,
        pure: false,
        run: |c, a| {
            let mut row = TaskRow::load(c, seq(a)?)?;
            if graph::on_task_status(c, &mut row)? {
                row.store(c)?;
            }
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__task_text",
        args: &[
            "seq",
            "title_changed",
            "description_changed",
            "summary_changed",
        ],
        required: 1,
        pure: false,
        run: |c, a| {
            let row = TaskRow::load(c, seq(a)?)?;
            graph::on_task_text(c, &row)?;
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__task_id_change",
        args: &["seq", "id_changed"],
        required: 1,
        pure: false,
        run: |_, _| graph::on_task_id_change().map(|_| Value::Null),
    },
    Scalar {
        name: "mem__task_delete",
        args: &["seq", "id", "status", "is_blocked"],
        required: 4,
        pure: false,
        run: |c, a| {
            let id = a.text(1)?.unwrap_or_default();
            let status = a.text(2)?.unwrap_or_default();
            let blocked = a.int(3)?.unwrap_or(0) != 0;
            graph::on_task_delete(c, seq(a)?, &id, &status, blocked)?;
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__task_dep_insert",
        args: &["seq"],
        required: 1,
        pure: false,
        run: |c, a| {
            let dep = DepRow::load(c, seq(a)?)?;
            graph::on_dep_insert(c, &dep)?;
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__task_dep_update",
        args: &[
            "seq",
            "task_id_changed",
            "depends_on_id_changed",
            "type_changed",
        ],
        required: 1,
        pure: false,
        run: |_, _| graph::on_dep_update().map(|_| Value::Null),
    },
    Scalar {
        name: "mem__task_dep_delete",
        args: &["seq"],
        required: 1,
        pure: false,
        run: |c, a| {
            let dep = DepRow::load(c, seq(a)?)?;
            graph::on_dep_delete(c, &dep)?;
            Ok(Value::Null)
        },
    },
];

pub const TABLE_FNS: &[TableFn] = &[
    TableFn {
        name: "task_ready",
        columns: &query::READY_COLUMNS,
        args: &["options"],
        required: 0,
        run: |c, a| {
            Ok(query::ready(c, a.text(0)?.as_deref())?
                .into_iter()
                .map(query::ReadyRow::into_row)
                .collect())
        },
    },
    TableFn {
        name: "task_list",
        columns: &query::LIST_COLUMNS,
        args: &["options"],
        required: 0,
        run: |c, a| query::list(c, a.text(0)?.as_deref()),
    },
    TableFn {
        name: "task_search",
        columns: &query::SEARCH_COLUMNS,
        args: &["query", "options"],
        required: 1,
        run: |c, a| query::search_tasks(c, a.text(0)?.as_deref(), a.text(1)?.as_deref()),
    },
];
