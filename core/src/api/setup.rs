//! Setup and plumbing: version, schema, ids, the clock, token counts.

use super::{int, text, Function, Nature, Returns, Type};
use crate::{ids, memory::tokens, schema, Value};

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "mem_version",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Text, |_, _| Ok(crate::VERSION.into())),
        nature: Nature::Pure,
    },
    Function {
        name: "mem_init",
        args: &[int("version")],
        required: 0,
        returns: Returns::Scalar(Type::Int, |c, a| {
            Ok(Value::Int(schema::init(c, a.int(0)?)?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "mem_uuid7",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Text, |_, _| Ok(ids::new_id().into())),
        nature: Nature::Volatile,
    },
    Function {
        name: "mem_now",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Int, |c, _| Ok(Value::Int(c.now_ms()?))),
        nature: Nature::Volatile,
    },
    Function {
        name: "mem_tokens",
        args: &[text("text"), text("encoding")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |_, a| {
            let Some(text) = a.text(0)? else {
                return Ok(Value::Null);
            };
            let enc = tokens::Encoding::parse(a.text(1)?.as_deref())?;
            Ok(Value::Int(tokens::count(&text, enc)))
        }),
        nature: Nature::Pure,
    },
    // Proves that a panic inside a function becomes an SQL error instead of killing the host.
    Function {
        name: "mem__selftest_panic",
        args: &[],
        required: 0,
        returns: Returns::Scalar(Type::Int, |_, _| {
            panic!("deliberate panic from mem__selftest_panic")
        }),
        nature: Nature::Volatile,
    },
];
