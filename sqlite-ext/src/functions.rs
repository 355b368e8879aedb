//! The scalar SQL functions: a table of names, arities and core calls.

use crate::{args::Args, conn::SqliteConn};
use agentmem_core::{
    compaction, error::catch_panic, memory_tool, message_search, messages, messages::Draft, schema,
    threads, tokens, Error, Result, Value,
};
use sqlite_loadable::{
    api, ext::sqlite3, ext::sqlite3_context, ext::sqlite3ext_context_db_handle, FunctionFlags,
};

type Run = fn(&mut SqliteConn, &Args) -> Result<Value>;

/// One scalar function: its name, its argument names (the first `required` are mandatory),
/// and the core call.
pub struct Scalar {
    pub name: &'static str,
    pub args: &'static [&'static str],
    pub required: usize,
    /// Deterministic and side-effect free: may appear in indexes, CHECKs and views.
    pub pure: bool,
    pub run: Run,
}

pub const SCALARS: &[Scalar] = &[
    Scalar {
        name: "mem_version",
        args: &[],
        required: 0,
        pure: true,
        run: |_, _| Ok(agentmem_core::VERSION.into()),
    },
    Scalar {
        name: "mem_init",
        args: &["version"],
        required: 0,
        pure: false,
        run: |c, a| Ok(Value::Int(schema::migrate(c, a.int(0)?)?)),
    },
    Scalar {
        name: "mem_uuid7",
        args: &[],
        required: 0,
        pure: false,
        run: |_, _| Ok(agentmem_core::ids::new_id().into()),
    },
    Scalar {
        name: "mem_now",
        args: &[],
        required: 0,
        pure: false,
        run: |c, _| {
            use agentmem_core::Conn;
            Ok(Value::Int(c.now_ms()?))
        },
    },
    Scalar {
        name: "mem_tokens",
        args: &["text", "encoding"],
        required: 1,
        pure: true,
        run: |_, a| {
            let Some(text) = a.text(0)? else {
                return Ok(Value::Null);
            };
            let enc = tokens::Encoding::parse(a.text(1)?.as_deref())?;
            Ok(Value::Int(tokens::count(&text, enc)))
        },
    },
    Scalar {
        name: "mem_thread_create",
        args: &["resource_id", "title", "metadata"],
        required: 1,
        pure: false,
        run: |c, a| {
            Ok(threads::create(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
            )?
            .into())
        },
    },
    Scalar {
        name: "mem_message_add",
        args: &["thread_id", "role", "content", "options"],
        required: 3,
        pure: false,
        run: |c, a| {
            Ok(messages::add(
                c,
                a.text(0)?.as_deref(),
                a.text(1)?.as_deref(),
                a.text(2)?.as_deref(),
                a.text(3)?.as_deref(),
            )?
            .into())
        },
    },
    Scalar {
        name: "mem_compact",
        args: &[
            "thread_id",
            "start_index",
            "end_index",
            "summary",
            "extracted_code",
        ],
        required: 4,
        pure: false,
        run: |c, a| {
            let id = compaction::compact(
                c,
                a.text(0)?.as_deref(),
                a.int(1)?,
                a.int(2)?,
                a.text(3)?.as_deref(),
                a.text(4)?.as_deref(),
            )?;
            Ok(id.into())
        },
    },
    Scalar {
        name: "mem_uncompact",
        args: &["compaction_id"],
        required: 1,
        pure: false,
        run: |c, a| Ok(Value::Int(compaction::uncompact(c, a.text(0)?.as_deref())?)),
    },
    Scalar {
        name: "memory_search",
        args: &["input"],
        required: 1,
        pure: false,
        run: |c, a| Ok(memory_tool::memory_search(c, a.text(0)?.as_deref()).into()),
    },
    Scalar {
        name: "mem_optimize",
        args: &[],
        required: 0,
        pure: false,
        run: |c, _| {
            message_search::optimize(c)?;
            Ok(Value::Int(1))
        },
    },
    Scalar {
        name: "mem_reindex",
        args: &[],
        required: 0,
        pure: false,
        run: |c, _| Ok(Value::Int(message_search::reindex(c)?)),
    },
    // Row triggers of mem_messages (see core::schema): after insert, after update of
    // raw_content, before delete. Internal: the double underscore marks them.
    Scalar {
        name: "mem__message_insert",
        args: &["seq"],
        required: 1,
        pure: false,
        run: |c, a| {
            let d = Draft::load(c, seq(a)?)?;
            messages::complete_insert(c, d)?.store(c)?;
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__message_update",
        args: &["seq", "raw_changed", "search_changed"],
        required: 1,
        pure: false,
        run: |c, a| {
            let d = Draft::load(c, seq(a)?)?;
            // The row still holds the old token count: the user's UPDATE did not write it.
            let old_tokens = d.token_count;
            let raw_changed = a.int(1)?.unwrap_or(1) != 0;
            let updated = messages::complete_update(c, raw_changed, old_tokens, d.clone())?;
            if updated != d {
                updated.store(c)?;
            }
            Ok(Value::Null)
        },
    },
    Scalar {
        name: "mem__message_delete",
        args: &["seq"],
        required: 1,
        pure: false,
        run: |c, a| {
            let d = Draft::load(c, seq(a)?)?;
            messages::before_delete(c, &d)?;
            Ok(Value::Null)
        },
    },
    // Proves that a panic inside a function becomes an SQL error instead of killing the host.
    Scalar {
        name: "mem__selftest_panic",
        args: &[],
        required: 0,
        pure: false,
        run: |_, _| panic!("deliberate panic from mem__selftest_panic"),
    },
];

fn seq(a: &Args) -> Result<i64> {
    a.int(0)?
        .ok_or_else(|| Error::invalid("seq", "must not be NULL"))
}

fn set_result(ctx: *mut sqlite3_context, v: Value) -> sqlite_loadable::Result<()> {
    match v {
        Value::Null => api::result_null(ctx),
        Value::Int(i) => api::result_int64(ctx, i),
        Value::Real(f) => api::result_double(ctx, f),
        Value::Text(s) => api::result_text(ctx, s)?,
        Value::Blob(b) => api::result_blob(ctx, &b),
    }
    Ok(())
}

/// Turns a core error into the SQLite error message (NULs removed: C strings end at them).
pub fn sql_error(e: &Error) -> sqlite_loadable::Error {
    sqlite_loadable::Error::new_message(e.to_string().replace('\0', ""))
}

/// Registers every scalar function on `db`.
pub fn register(db: *mut sqlite3) -> sqlite_loadable::Result<()> {
    for f in SCALARS
        .iter()
        .chain(crate::tasks::SCALARS)
        .chain(crate::om::SCALARS)
    {
        let mut flags = FunctionFlags::UTF8;
        if f.pure {
            flags |= FunctionFlags::DETERMINISTIC | FunctionFlags::INNOCUOUS;
        }
        sqlite_loadable::define_scalar_function(
            db,
            f.name,
            -1,
            move |ctx, values| {
                if values.len() < f.required || values.len() > f.args.len() {
                    return Err(sql_error(&arity_error(
                        f.name,
                        f.args,
                        f.required,
                        values.len(),
                    )));
                }
                // SAFETY: ctx is the live context of this call.
                let db = unsafe { sqlite3ext_context_db_handle(ctx) };
                let mut conn = SqliteConn::new(db);
                let run =
                    |c: &mut SqliteConn| catch_panic(|| (f.run)(c, &Args::new(values, f.args)));
                let result = if f.pure || f.name.starts_with("mem__") || READ_ONLY.contains(&f.name)
                {
                    // Readers need no transaction of their own; trigger handlers already run
                    // inside the writing statement, whose failure undoes them.
                    run(&mut conn)
                } else {
                    atomic(&mut conn, run)
                };
                match result {
                    Ok(v) => set_result(ctx, v),
                    Err(e) => Err(sql_error(&e)),
                }
            },
            flags,
        )?;
    }
    Ok(())
}

/// Functions that only read (and are not deterministic, so not `pure`).
const READ_ONLY: &[&str] = &[
    "mem_uuid7",
    "mem_now",
    "memory_search",
    "om_status",
    "om_observer_input",
    "om_reflector_input",
    "om_context",
    "mem_context",
    "wm_get",
    "task_show",
    "task_query",
];

/// Runs a writing call as one unit.
///
/// Called as `SELECT f(…)` outside a transaction, the statements the core runs would each
/// commit on their own, and a failure (or a SIGKILL) half-way would leave half a change. So
/// the call runs in `BEGIN IMMEDIATE … COMMIT`: all or nothing, and the write lock is taken
/// first, through the busy handler, because a read transaction that later wants to write
/// fails at once with SQLITE_BUSY when another connection wrote meanwhile (WAL snapshots).
/// Inside the caller's transaction the call nests as a savepoint; inside a writing statement
/// (`INSERT … SELECT f()`) it is already part of that statement's all-or-nothing.
fn atomic(
    conn: &mut SqliteConn,
    run: impl FnOnce(&mut SqliteConn) -> Result<Value>,
) -> Result<Value> {
    use agentmem_core::Conn;
    if conn.in_writing_statement() {
        return run(conn);
    }
    let (begin, commit, rollback) = if conn.in_transaction() {
        (
            "SAVEPOINT agentmem_call",
            "RELEASE agentmem_call",
            "ROLLBACK TO agentmem_call; RELEASE agentmem_call",
        )
    } else {
        ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
    };
    conn.execute_batch(begin)?;
    let result = run(conn);
    match &result {
        Ok(_) => conn.execute_batch(commit)?,
        Err(_) => conn.execute_batch(rollback)?,
    }
    result
}

/// `"mem_tokens(text [, encoding]) takes 1 to 2 arguments, got 3"`.
pub fn arity_error(name: &str, args: &[&str], required: usize, got: usize) -> Error {
    let sig = args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i < required {
                a.to_string()
            } else {
                format!("[{a}]")
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let takes = if required == args.len() {
        format!("{required}")
    } else {
        format!("{required} to {}", args.len())
    };
    Error::invalid(
        format!("{name}({sig})"),
        format!("takes {takes} arguments, got {got}"),
    )
}
