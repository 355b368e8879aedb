//! Threads and their lifecycle, messages, recall and compaction.

use super::{int, text, Function, Nature, Returns, Type};
use crate::memory::lifecycle::{self, Event};
use crate::memory::{compaction, message_page, messages, recall, thread_list, threads};
use crate::Value;

/// The argument of a lifecycle event.
const THREAD_ID: &[super::Field] = &[text("thread_id")];

/// A lifecycle event's function: `thread_id` → the new state.
const fn transition(name: &'static str, run: super::ScalarRun) -> Function {
    Function {
        name,
        args: THREAD_ID,
        required: 1,
        returns: Returns::Scalar(Type::Text, run),
        nature: Nature::Writer,
    }
}

fn apply(c: &mut dyn crate::Conn, a: &super::Call, event: Event) -> crate::Result<Value> {
    Ok(lifecycle::apply(c, a.texts()?.at(0), event)?.into())
}

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_thread_create",
        args: &[
            text("resource_id"),
            text("title"),
            text("metadata"),
            text("options"),
        ],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(threads::create(c, t.at(0), t.at(1), t.at(2), t.at(3))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_thread_get",
        args: &[text("thread_id")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(threads::get(c, a.texts()?.at(0))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_thread_update",
        args: &[text("thread_id"), text("patch")],
        required: 2,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(threads::update(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
    transition("mem_thread_archive", |c, a| apply(c, a, Event::Archive)),
    transition("mem_thread_delete", |c, a| apply(c, a, Event::Delete)),
    transition("mem_thread_restore", |c, a| apply(c, a, Event::Restore)),
    Function {
        name: "mem_thread_list",
        args: &[text("options")],
        required: 0,
        returns: Returns::Table(&thread_list::COLUMNS, |c, a| {
            thread_list::list(c, a.texts()?.at(0))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_messages_page",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Table(&message_page::COLUMNS, |c, a| {
            let t = a.texts()?;
            message_page::page(c, t.at(0), t.at(1))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_message_add",
        args: &[
            text("thread_id"),
            text("role"),
            text("content"),
            text("options"),
        ],
        required: 3,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(messages::add(c, t.at(0), t.at(1), t.at(2), t.at(3))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_recall",
        args: &[text("thread_id"), text("hint"), text("options")],
        required: 1,
        returns: Returns::Table(&recall::COLUMNS, |c, a| {
            let t = a.texts()?;
            let rows = recall::recall(c, t.at(0), t.at(1), t.at(2))?;
            Ok(rows.into_iter().map(recall::Recalled::into_row).collect())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_compact",
        args: &[
            text("thread_id"),
            int("start_index"),
            int("end_index"),
            text("summary"),
            text("extracted_code"),
        ],
        required: 4,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(compaction::compact(c, t.at(0), a.int(1)?, a.int(2)?, t.at(3), t.at(4))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_uncompact",
        args: &[text("compaction_id")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(compaction::uncompact(c, t.at(0))?))
        }),
        nature: Nature::Writer,
    },
];
