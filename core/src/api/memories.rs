//! Long-term memories: remember, correct, deprecate, touch, decay, prune, search.

use super::{int, text, Function, Nature, Returns, Type};
use crate::memories::{self, lifecycle, recall, remember, search};
use crate::Value;

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_remember",
        args: &[text("resource_id"), text("memory"), text("options")],
        required: 2,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(remember::remember(c, t.at(0), t.at(1), t.at(2))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_memory_update",
        args: &[text("id"), text("patch"), text("options")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(lifecycle::update(c, t.at(0), t.at(1), t.at(2))?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_memory_deprecate",
        args: &[text("id"), int("now")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let id = a.texts()?;
            Ok(Value::Int(lifecycle::deprecate(c, id.at(0), a.int(1)?)?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_memory_touch",
        args: &[text("id"), int("now")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let id = a.texts()?;
            Ok(lifecycle::touch(c, id.at(0), a.int(1)?)?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_memory_confidence",
        args: &[text("id"), int("now")],
        required: 1,
        returns: Returns::Scalar(Type::Real, |c, a| {
            let id = a.texts()?;
            Ok(lifecycle::current_confidence(c, id.at(0), a.int(1)?)?
                .map(Value::Real)
                .unwrap_or(Value::Null))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_prune",
        args: &[text("resource_id"), int("now")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let r = a.texts()?;
            Ok(lifecycle::prune(c, r.at(0), a.int(1)?)?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_memory_search",
        args: &[text("query"), text("options")],
        required: 1,
        returns: Returns::Table(&search::COLUMNS, |c, a| {
            let t = a.texts()?;
            search::search(c, t.at(0), t.at(1))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_recall_hybrid",
        args: &[text("query"), text("options")],
        required: 1,
        returns: Returns::Table(&recall::COLUMNS, |c, a| {
            let t = a.texts()?;
            recall::recall_hybrid(c, t.at(0), t.at(1))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_content_hash",
        args: &[text("content")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |_, a| {
            Ok(memories::content_hash(a.text(0)?.as_deref()).into())
        }),
        nature: Nature::Pure,
    },
];
