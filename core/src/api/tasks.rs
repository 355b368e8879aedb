//! Task memory: the ready queue, dependencies, claims, and the task tools.

use super::{text, Function, Nature, Returns, Type};
use crate::tasks::{ops, query};
use crate::tools;
use crate::Value;

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "task_create",
        args: &[text("title"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(ops::create(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_dep_add",
        args: &[text("task_id"), text("depends_on_id"), text("type")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(ops::dep_add(
                c,
                &ops::Dep::new(t.at(0), t.at(1), t.at(2))?,
            )?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_dep_remove",
        args: &[text("task_id"), text("depends_on_id"), text("type")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(ops::dep_remove(
                c,
                &ops::Dep::new(t.at(0), t.at(1), t.at(2))?,
            )?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_claim",
        args: &[text("task_id"), text("session_id"), text("thread_id")],
        required: 2,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(ops::claim(c, t.at(0), t.at(1), t.at(2))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_close",
        args: &[text("task_id"), text("reason"), text("summary")],
        required: 3,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(ops::close(c, t.at(0), t.at(1), t.at(2))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_update",
        args: &[text("task_id"), text("options")],
        required: 2,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(ops::update(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_show",
        args: &[text("task_id")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(query::show(c, t.at(0))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "task_link",
        args: &[text("task_id"), text("message_id"), text("relation")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(ops::link(c, t.at(0), t.at(1), t.at(2))?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_compact",
        args: &[text("task_id"), text("summary"), text("options")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(ops::compact(c, t.at(0), t.at(1), t.at(2))?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_restore",
        args: &[text("task_id")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(ops::restore(c, t.at(0))?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_query",
        args: &[text("input"), text("context")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(tools::tasks::task_query(c, a.bytes(0).as_deref(), a.bytes(1).as_deref())?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "task_mutate",
        args: &[text("input"), text("context")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(tools::tasks::task_mutate(c, a.bytes(0).as_deref(), a.bytes(1).as_deref())?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "task_ready",
        args: &[text("options")],
        required: 0,
        returns: Returns::Table(&query::READY_COLUMNS, |c, a| {
            let t = a.texts()?;
            Ok(query::ready(c, t.at(0))?
                .into_iter()
                .map(query::ReadyRow::into_row)
                .collect())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "task_list",
        args: &[text("options")],
        required: 0,
        returns: Returns::Table(&query::LIST_COLUMNS, |c, a| {
            let t = a.texts()?;
            query::list(c, t.at(0))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "task_search",
        args: &[text("query"), text("options")],
        required: 1,
        returns: Returns::Table(&query::SEARCH_COLUMNS, |c, a| {
            let t = a.texts()?;
            query::search_tasks(c, t.at(0), t.at(1))
        }),
        nature: Nature::Reader,
    },
];
