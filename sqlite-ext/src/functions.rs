//! The scalar SQL functions: a table of names, arities and core calls.

use crate::{args::Args, conn::SqliteConn};
use agentmem_core::{
    compaction, error::catch_panic, memory_tool, message_search, messages, schema, search,
    sqlite_triggers, threads, tokens, Error, Result, Value,
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
        run: |c, a| Ok(memory_tool::memory_search(c, a.bytes(0).as_deref()).into()),
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
    Scalar {
        name: "mem_index_stats",
        args: &[],
        required: 0,
        pure: false,
        run: |c, _| Ok(search::stats::index_stats(c)?.into()),
    },
    Scalar {
        name: "mem_search_cache",
        args: &["limit_bytes"],
        required: 0,
        pure: false,
        run: |_, a| Ok(search::cache::describe(a.int(0)?)?.into()),
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

/// Registers every scalar function on `db`: the public ones, SQLite's row-trigger functions
/// (`core::sqlite_triggers`) and `mem__internal()`.
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
                let run = |c: &mut SqliteConn| (f.run)(c, &Args::new(values, f.args));
                let result = if f.pure || READ_ONLY.contains(&f.name) {
                    // Readers need no transaction of their own.
                    enter(ctx, run)
                } else {
                    enter(ctx, |c| atomic(c, run))
                };
                match result {
                    Ok(v) => set_result(ctx, v),
                    Err(e) => Err(sql_error(&e)),
                }
            },
            flags,
        )?;
    }
    for &name in sqlite_triggers::NAMES {
        sqlite_loadable::define_scalar_function(
            db,
            name,
            -1,
            move |ctx, values| {
                let args: Vec<Value> = (0..values.len())
                    .map(|i| Args::new(values, &[]).value(i))
                    .collect();
                // Trigger functions run inside the writing statement, whose failure undoes
                // them: no transaction of their own.
                let result = enter(ctx, |c| {
                    let key = c.key();
                    sqlite_triggers::call(c, key, name, &args)
                });
                match result {
                    Ok(v) => set_result(ctx, v),
                    Err(e) => Err(sql_error(&e)),
                }
            },
            FunctionFlags::UTF8,
        )?;
    }
    sqlite_loadable::define_scalar_function(
        db,
        "mem__internal",
        0,
        |ctx, _| {
            // SAFETY: ctx is the live context of this call.
            let db = unsafe { sqlite3ext_context_db_handle(ctx) };
            api::result_int64(ctx, i64::from(depth::inside(db)));
            Ok(())
        },
        FunctionFlags::UTF8,
    )?;
    Ok(())
}

/// Runs a call on the calling connection, with panics caught and the connection marked as
/// inside agentmem for `mem__internal()`.
fn enter(
    ctx: *mut sqlite3_context,
    run: impl FnOnce(&mut SqliteConn) -> Result<Value>,
) -> Result<Value> {
    // SAFETY: ctx is the live context of this call.
    let db = unsafe { sqlite3ext_context_db_handle(ctx) };
    let _inside = depth::Guard::new(db);
    let mut conn = SqliteConn::new(db);
    catch_panic(|| run(&mut conn))
}

/// How deep each connection is inside agentmem's own calls. The schema's guards on derived
/// columns (`@derived` in core::schema) let writes through only while it is above zero, so
/// the counters and the blocked state are written by agentmem alone.
mod depth {
    use sqlite_loadable::ext::sqlite3;
    use std::cell::RefCell;
    use std::collections::HashMap;

    thread_local! {
        // A connection is used by one thread at a time, and a call enters and leaves on the
        // same thread.
        static DEPTH: RefCell<HashMap<usize, u32>> = RefCell::new(HashMap::new());
    }

    pub fn inside(db: *mut sqlite3) -> bool {
        DEPTH.with(|d| d.borrow().get(&(db as usize)).is_some_and(|&n| n > 0))
    }

    pub struct Guard(usize);

    impl Guard {
        pub fn new(db: *mut sqlite3) -> Guard {
            let key = db as usize;
            DEPTH.with(|d| *d.borrow_mut().entry(key).or_insert(0) += 1);
            Guard(key)
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            DEPTH.with(|d| {
                let mut d = d.borrow_mut();
                if let Some(n) = d.get_mut(&self.0) {
                    *n -= 1;
                    if *n == 0 {
                        d.remove(&self.0);
                    }
                }
            });
        }
    }
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
    // After `sqlite3_interrupt` SQLite refuses to prepare any statement until the host's
    // statement ends, ROLLBACK included, and an interrupted read-only statement (ROLLBACK is
    // one) rolls nothing back. An interrupted *writing* statement rolls the whole transaction
    // back, so a harmless one, prepared now, is the way out when the rollback fails.
    let guard = match conn.prepare_kept(agentmem_core::schema::VERSION_TABLE) {
        Ok(g) => g,
        Err(e) => {
            conn.execute_batch(rollback).ok();
            return Err(e);
        }
    };
    let result = run(conn).and_then(|v| conn.execute_batch(commit).map(|_| v));
    if result.is_err() && conn.execute_batch(rollback).is_err() {
        guard.step_once();
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
