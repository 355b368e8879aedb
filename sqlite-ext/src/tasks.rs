//! Task memory: the SQLite functions.

use crate::{functions::Scalar, table::TableFn};
use agentmem_core::tasks::{ops, query, tool};
use agentmem_core::Value;

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
        run: |c, a| Ok(tool::task_query(c, a.bytes(0).as_deref(), a.bytes(1).as_deref()).into()),
    },
    Scalar {
        name: "task_mutate",
        args: &["input", "context"],
        required: 1,
        pure: false,
        run: |c, a| Ok(tool::task_mutate(c, a.bytes(0).as_deref(), a.bytes(1).as_deref()).into()),
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
