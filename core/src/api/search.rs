//! Search over messages, the index's upkeep, and the memory-search tool.

use super::{int, text, Field, Function, Nature, Returns, Type};
use crate::{memory::message_search, search, tools::memory_search, Value};

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_search",
        args: &[text("query"), text("options")],
        required: 1,
        returns: Returns::Table(&message_search::COLUMNS, |c, a| {
            let t = a.texts()?;
            let snippets = a.reads_column(message_search::SNIPPET_COLUMN);
            let hits = message_search::search_with(c, t.at(0), t.at(1), snippets)?;
            Ok(hits
                .into_iter()
                .map(message_search::MessageHit::into_row)
                .collect())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_index_check",
        args: &[],
        required: 0,
        returns: Returns::Table(
            &[Field {
                name: "problem",
                ty: Type::Text,
            }],
            |c, _| {
                Ok(message_search::index_check(c)?
                    .into_iter()
                    .map(|p| vec![p.into()])
                    .collect())
            },
        ),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_optimize",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Int, |c, _| {
            message_search::optimize(c)?;
            Ok(Value::Int(1))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_reindex",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Int, |c, _| {
            Ok(Value::Int(message_search::reindex(c)?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_index_stats",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Json, |c, _| Ok(search::stats::index_stats(c)?.into())),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_search_cache",
        args: &[int("limit_bytes")],
        required: 0,
        returns: Returns::Scalar(Type::Json, |_, a| {
            Ok(search::stats::cache_status(a.int(0)?)?.into())
        }),
        nature: Nature::Volatile,
    },
    Function {
        name: "memory_search",
        args: &[text("input"), text("context")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(
                memory_search::memory_search(c, a.bytes(0).as_deref(), a.bytes(1).as_deref())?
                    .into(),
            )
        }),
        nature: Nature::Reader,
    },
];
