//! Observational memory, the prompt context, and working memory.

use super::Texts;
use super::{int, text, Field, Function, Nature, Returns, Type};
use crate::om::lease::{Answered, Fenced};
use crate::{memory::working_memory, om, Value};

fn opt_int(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Int)
}

/// The first three arguments of a call under a lease.
fn fenced(t: &Texts) -> Fenced<'_> {
    Fenced {
        key: t.at(0),
        owner_id: t.at(1),
        operation_id: t.at(2),
    }
}

/// The first four arguments of a call that hands over an answer under a lease.
fn answered(t: &Texts) -> Answered<'_> {
    Answered {
        key: t.at(0),
        owner_id: t.at(1),
        operation_id: t.at(2),
        answer: t.at(3),
    }
}

fn opt_bool(v: Option<bool>) -> Value {
    v.map_or(Value::Null, |b| Value::Int(b.into()))
}

/// The fenced triple every call under a lease starts with.
const FENCE: &[Field] = &[text("lookup_key"), text("owner_id"), text("operation_id")];
/// A fenced call that hands over the observer's answer for some messages.
const CHUNK: &[Field] = &[
    text("lookup_key"),
    text("owner_id"),
    text("operation_id"),
    text("answer"),
    text("message_ids"),
];
/// A fenced call that hands over the reflector's answer.
const REFLECTION: &[Field] = &[
    text("lookup_key"),
    text("owner_id"),
    text("operation_id"),
    text("answer"),
    int("compression_level"),
];

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "om_status",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(om::status::status(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "om_configure",
        args: &[text("lookup_key"), text("config")],
        required: 2,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(om::configure(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_acquire_lease",
        args: &[
            text("lookup_key"),
            text("owner_id"),
            int("lease_ms"),
            text("purpose"),
        ],
        required: 2,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(om::lease::acquire(c, t.at(0), t.at(1), a.int(2)?, t.at(3))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_heartbeat",
        args: &[
            text("lookup_key"),
            text("owner_id"),
            text("operation_id"),
            int("lease_ms"),
        ],
        required: 3,
        returns: Returns::Scalar(Type::Bool, |c, a| {
            let t = a.texts()?;
            let ok = om::lease::heartbeat(c, t.at(0), t.at(1), t.at(2), a.int(3)?)?;
            Ok(opt_bool(Some(ok)))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_release_lease",
        args: FENCE,
        required: 3,
        returns: Returns::Scalar(Type::Bool, |c, a| {
            let t = a.texts()?;
            let ok = om::lease::release(c, t.at(0), t.at(1), t.at(2))?;
            Ok(opt_bool(Some(ok)))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_observer_input",
        args: &[text("lookup_key"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(om::observe::observer_input(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "om_apply_observation",
        args: CHUNK,
        required: 5,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            let r = om::observe::apply_observation(c, &answered(&t), t.at(4))?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_buffer_chunk",
        args: CHUNK,
        required: 5,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            let r = om::observe::buffer_chunk(c, &answered(&t), t.at(4))?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_activate",
        args: FENCE,
        required: 3,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            let r = om::observe::activate(c, &fenced(&t))?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_reflector_input",
        args: &[text("lookup_key"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(om::reflect::reflector_input(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "om_apply_reflection",
        args: REFLECTION,
        required: 4,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            let r = om::reflect::apply_reflection(c, &answered(&t), a.int(4)?)?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_buffer_reflection",
        args: REFLECTION,
        required: 4,
        returns: Returns::Scalar(Type::Bool, |c, a| {
            let t = a.texts()?;
            let r = om::reflect::buffer_reflection(c, &answered(&t), a.int(4)?)?;
            Ok(opt_bool(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_activate_reflection",
        args: FENCE,
        required: 3,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            let r = om::reflect::activate_reflection(c, &fenced(&t))?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_context",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(om::context::om_context(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_context",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(om::context::mem_context(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "wm_get",
        args: &[text("scope_key")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(working_memory::get(c, t.at(0))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "wm_set",
        args: &[text("scope_key"), text("content")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(working_memory::set(c, t.at(0), t.at(1))?))
        }),
        nature: Nature::Writer,
    },
];
