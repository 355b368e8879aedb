//! Observational memory, the prompt context, and working memory.

use super::{int, text, Function, Nature, Returns, Type};
use crate::{memory::working_memory, om, Value};

fn opt_int(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Int)
}

fn opt_bool(v: Option<bool>) -> Value {
    v.map_or(Value::Null, |b| Value::Int(b.into()))
}

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "om_status",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(om::status::status(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "om_configure",
        args: &[text("lookup_key"), text("config")],
        required: 2,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(om::configure(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into())
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
            Ok(om::lease::acquire(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.int(2)?,
                a.text(3)?.as_deref(),
            )?
            .into())
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
            let ok = om::lease::heartbeat(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.int(3)?,
            )?;
            Ok(opt_bool(Some(ok)))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_release_lease",
        args: &[text("lookup_key"), text("owner_id"), text("operation_id")],
        required: 3,
        returns: Returns::Scalar(Type::Bool, |c, a| {
            let ok = om::lease::release(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
            Ok(opt_bool(Some(ok)))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_observer_input",
        args: &[text("lookup_key"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(
                om::observe::observer_input(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?
                    .into(),
            )
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "om_apply_observation",
        args: &[
            text("lookup_key"),
            text("owner_id"),
            text("operation_id"),
            text("answer"),
            text("message_ids"),
        ],
        required: 5,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let r = om::observe::apply_observation(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.text(4)?.as_deref(),
            )?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_buffer_chunk",
        args: &[
            text("lookup_key"),
            text("owner_id"),
            text("operation_id"),
            text("answer"),
            text("message_ids"),
        ],
        required: 5,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let r = om::observe::buffer_chunk(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.text(4)?.as_deref(),
            )?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_activate",
        args: &[text("lookup_key"), text("owner_id"), text("operation_id")],
        required: 3,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let r = om::observe::activate(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_reflector_input",
        args: &[text("lookup_key"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(
                om::reflect::reflector_input(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?
                    .into(),
            )
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "om_apply_reflection",
        args: &[
            text("lookup_key"),
            text("owner_id"),
            text("operation_id"),
            text("answer"),
            int("compression_level"),
        ],
        required: 4,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let r = om::reflect::apply_reflection(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.int(4)?,
            )?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_buffer_reflection",
        args: &[
            text("lookup_key"),
            text("owner_id"),
            text("operation_id"),
            text("answer"),
            int("compression_level"),
        ],
        required: 4,
        returns: Returns::Scalar(Type::Bool, |c, a| {
            let r = om::reflect::buffer_reflection(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.int(4)?,
            )?;
            Ok(opt_bool(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_activate_reflection",
        args: &[text("lookup_key"), text("owner_id"), text("operation_id")],
        required: 3,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let r = om::reflect::activate_reflection(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
            Ok(opt_int(r))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "om_context",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            Ok(om::context::om_context(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "mem_context",
        args: &[text("thread_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(om::context::mem_context(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "wm_get",
        args: &[text("scope_key")],
        required: 1,
        returns: Returns::Scalar(Type::Text, |c, a| {
            Ok(working_memory::get(c, a.text(0)?.as_deref())?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "wm_set",
        args: &[text("scope_key"), text("content")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            Ok(Value::Int(working_memory::set(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
            )?))
        }),
        nature: Nature::Writer,
    },
];
