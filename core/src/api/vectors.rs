//! Client vectors: store one per owner and model, search them exactly.

use super::{blob, text, Function, Nature, Returns, Type};
use crate::vectors::{self, search, store};
use crate::Value;

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_embed_set",
        args: &[text("kind"), text("id"), text("model"), blob("vector")],
        required: 4,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            let v = a.blob(3)?;
            Ok(Value::Int(store::embed_set(
                c,
                t.at(0),
                t.at(1),
                t.at(2),
                v.as_deref(),
            )?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_vector_search",
        args: &[text("model"), blob("query_vector"), text("options")],
        required: 2,
        returns: Returns::Table(&search::COLUMNS, |c, a| {
            let t = a.texts()?;
            let q = a.blob(1)?;
            search::search(c, t.at(0), q.as_deref(), t.at(2))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_vector",
        args: &[text("json")],
        required: 1,
        returns: Returns::Scalar(Type::Blob, |_, a| {
            Ok(vectors::from_json(a.texts()?.at(0))?
                .map(Value::Blob)
                .unwrap_or(Value::Null))
        }),
        nature: Nature::Pure,
    },
];
