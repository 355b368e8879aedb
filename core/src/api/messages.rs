//! Threads, messages, recall and compaction.

use super::{int, text, Function, Nature, Returns, Type};
use crate::{memory::compaction, memory::messages, memory::recall, memory::threads, Value};

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_thread_create",
        args: &[text("resource_id"), text("title"), text("metadata")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(threads::create(c, t.at(0), t.at(1), t.at(2))?.into())
        }),
        nature: Nature::Writer,
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
