//! Observational memory and working memory: the SQLite functions.

use crate::{functions::Scalar, table::TableFn};
use agentmem_core::{om, working_memory, Value};

fn opt_int(v: Option<i64>) -> Value {
    v.map_or(Value::Null, Value::Int)
}

fn opt_bool(v: Option<bool>) -> Value {
    v.map_or(Value::Null, |b| Value::Int(b.into()))
}

pub const SCALARS: &[Scalar] = &[
    Scalar {
        name: "om_status",
        args: &["thread_id", "options"],
        required: 1,
        pure: false,
        run: |c, a| Ok(om::status::status(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into()),
    },
    Scalar {
        name: "om_configure",
        args: &["lookup_key", "config"],
        required: 2,
        pure: false,
        run: |c, a| Ok(om::configure(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into()),
    },
    Scalar {
        name: "om_acquire_lease",
        args: &["lookup_key", "owner_id", "lease_ms", "purpose"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(om::lease::acquire(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.int(2)?,
                a.text(3)?.as_deref(),
            )?
            .into())
        },
    },
    Scalar {
        name: "om_heartbeat",
        args: &["lookup_key", "owner_id", "operation_id", "lease_ms"],
        required: 3,
        pure: false,
        run: |c, a| {
            let ok = om::lease::heartbeat(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.int(3)?,
            )?;
            Ok(opt_bool(Some(ok)))
        },
    },
    Scalar {
        name: "om_release_lease",
        args: &["lookup_key", "owner_id", "operation_id"],
        required: 3,
        pure: false,
        run: |c, a| {
            let ok = om::lease::release(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
            Ok(opt_bool(Some(ok)))
        },
    },
    Scalar {
        name: "om_observer_input",
        args: &["lookup_key", "options"],
        required: 1,
        pure: false,
        run: |c, a| {
            Ok(
                om::observe::observer_input(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?
                    .into(),
            )
        },
    },
    Scalar {
        name: "om_apply_observation",
        args: &[
            "lookup_key",
            "owner_id",
            "operation_id",
            "answer",
            "message_ids",
        ],
        required: 5,
        pure: false,
        run: |c, a| {
            let r = om::observe::apply_observation(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.text(4)?.as_deref(),
            )?;
            Ok(opt_int(r))
        },
    },
    Scalar {
        name: "om_buffer_chunk",
        args: &[
            "lookup_key",
            "owner_id",
            "operation_id",
            "answer",
            "message_ids",
        ],
        required: 5,
        pure: false,
        run: |c, a| {
            let r = om::observe::buffer_chunk(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.text(4)?.as_deref(),
            )?;
            Ok(opt_int(r))
        },
    },
    Scalar {
        name: "om_activate",
        args: &["lookup_key", "owner_id", "operation_id"],
        required: 3,
        pure: false,
        run: |c, a| {
            let r = om::observe::activate(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
            Ok(opt_int(r))
        },
    },
    Scalar {
        name: "om_reflector_input",
        args: &["lookup_key", "options"],
        required: 1,
        pure: false,
        run: |c, a| {
            Ok(
                om::reflect::reflector_input(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?
                    .into(),
            )
        },
    },
    Scalar {
        name: "om_apply_reflection",
        args: &[
            "lookup_key",
            "owner_id",
            "operation_id",
            "answer",
            "compression_level",
        ],
        required: 4,
        pure: false,
        run: |c, a| {
            let r = om::reflect::apply_reflection(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.int(4)?,
            )?;
            Ok(opt_int(r))
        },
    },
    Scalar {
        name: "om_buffer_reflection",
        args: &[
            "lookup_key",
            "owner_id",
            "operation_id",
            "answer",
            "compression_level",
        ],
        required: 4,
        pure: false,
        run: |c, a| {
            let r = om::reflect::buffer_reflection(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
                a.int(4)?,
            )?;
            Ok(opt_bool(r))
        },
    },
    Scalar {
        name: "om_activate_reflection",
        args: &["lookup_key", "owner_id", "operation_id"],
        required: 3,
        pure: false,
        run: |c, a| {
            let r = om::reflect::activate_reflection(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?;
            Ok(opt_int(r))
        },
    },
    Scalar {
        name: "om_context",
        args: &["thread_id", "options"],
        required: 1,
        pure: false,
        run: |c, a| {
            Ok(om::context::om_context(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into())
        },
    },
    Scalar {
        name: "mem_context",
        args: &["thread_id", "options"],
        required: 1,
        pure: false,
        run: |c, a| {
            Ok(om::context::mem_context(c, a.text(0)?.as_deref(), a.text(1)?.as_deref())?.into())
        },
    },
    Scalar {
        name: "wm_get",
        args: &["scope_key"],
        required: 1,
        pure: false,
        run: |c, a| Ok(working_memory::get(c, a.text(0)?.as_deref())?.into()),
    },
    Scalar {
        name: "wm_set",
        args: &["scope_key", "content"],
        required: 2,
        pure: false,
        run: |c, a| {
            Ok(Value::Int(working_memory::set(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
            )?))
        },
    },
];

pub const TABLE_FNS: &[TableFn] = &[];
