//! The LLM tools as data and as one call: what an agent loop or the MCP server needs.

use super::{text, Function, Nature, Returns, Type};
use crate::tools;

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_tools",
        args: &[text("format")],
        required: 0,
        returns: Returns::Scalar(Type::Json, |_, a| {
            let t = a.texts()?;
            Ok(tools::definitions(t.at(0))?.into())
        }),
        nature: Nature::Pure,
    },
    Function {
        name: "mem_tool",
        args: &[text("name"), text("input"), text("context")],
        required: 2,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(tools::call(
                c,
                a.bytes(0).as_deref(),
                a.bytes(1).as_deref(),
                a.bytes(2).as_deref(),
            )?
            .into())
        }),
        nature: Nature::Writer,
    },
];
