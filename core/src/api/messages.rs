//! Threads, messages, recall and compaction.

use super::{int, text, Function, Nature, Returns, Type};
use crate::{memory::compaction, memory::messages, memory::recall, memory::threads, Value};

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_thread_create",
        args: &[text("resource_id"), text("title"), text("metadata")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            Ok(threads::create(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?
            .into())
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
            Ok(messages::add(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
            )?
            .into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_recall",
        args: &[text("thread_id"), text("hint"), text("options")],
        required: 1,
        returns: Returns::Table(&recall::COLUMNS, |c, a| {
            let rows = recall::recall(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
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
            Ok(compaction::compact(
                c,
                a.text(0)?.as_deref(),
                a.int(1)?,
                a.int(2)?,
                a.text(3)?.as_deref(),
                a.text(4)?.as_deref(),
            )?
            .into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_uncompact",
        args: &[text("compaction_id")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            Ok(Value::Int(compaction::uncompact(c, a.text(0)?.as_deref())?))
        }),
        nature: Nature::Writer,
    },
];
