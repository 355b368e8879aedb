//! The user's data as a whole: statistics, export and import, forget.

use super::{text, Function, Nature, Returns, Type};
use crate::data::{export, forget, stats};

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_stats",
        args: &[text("options")],
        required: 0,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(stats::stats(c, a.texts()?.at(0))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_export",
        args: &[text("scope"), text("format")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(export::export(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_export_rows",
        args: &[text("scope"), text("format")],
        required: 1,
        returns: Returns::Table(&export::ROW_COLUMNS, |c, a| {
            let t = a.texts()?;
            export::export_rows(c, t.at(0), t.at(1))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_import",
        args: &[text("json")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(export::import(c, a.texts()?.at(0))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_forget",
        args: &[text("resource_id")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(forget::forget(c, a.texts()?.at(0))?.into())
        }),
        nature: Nature::Writer,
    },
];
