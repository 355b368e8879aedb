//! The user's data as a whole: statistics and forget.

use super::{text, Function, Nature, Returns, Type};
use crate::data::{forget, stats};

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
        name: "mem_forget",
        args: &[text("resource_id")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(forget::forget(c, a.texts()?.at(0))?.into())
        }),
        nature: Nature::Writer,
    },
];
