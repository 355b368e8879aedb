//! A test-only [`Conn`] over rusqlite (system libsqlite3), shared by the core's integration
//! tests that run the core against a real SQLite database.

pub mod observer;
pub mod registry;

use agentmem_core::db::session::Session;
use agentmem_core::{Conn, Dialect, Error, Result, Row, Value};

pub struct Sq(pub rusqlite::Connection, Shared);

/// The session of a test connection, shared with the trigger functions that run on it.
#[derive(Clone, Default)]
pub struct Shared(std::rc::Rc<std::cell::UnsafeCell<Session>>);

impl Sq {
    /// A connection with a session of its own.
    #[allow(dead_code)]
    pub fn new(conn: rusqlite::Connection) -> Sq {
        Sq(conn, Shared::default())
    }
}

pub fn db(e: rusqlite::Error) -> Error {
    Error::Database(e.to_string())
}

fn to_sql(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Int(i) => V::Integer(*i),
        Value::Real(f) => V::Real(*f),
        Value::Text(s) => V::Text(s.clone()),
        Value::Blob(b) => V::Blob(b.clone()),
        Value::Json(j) => V::Text(j.to_text()),
    }
}

impl Conn for Sq {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn session(&mut self) -> &mut Session {
        // SAFETY: one thread drives a test connection, and the core holds the session only
        // between its statements, so no two of these borrows are alive at once.
        unsafe { &mut *(self.1).0.get() }
    }
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        use rusqlite::types::ValueRef;
        let sql = Dialect::Sqlite.prepare(sql)?;
        let mut st = self.0.prepare_cached(&sql).map_err(db)?;
        let n = st.column_count();
        let mut rows = st
            .query(rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map_err(db)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(db)? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i).map_err(db)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(i) => Value::Int(i),
                    ValueRef::Real(f) => Value::Real(f),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                });
            }
            out.push(row);
        }
        Ok(out)
    }
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let sql = Dialect::Sqlite.prepare(sql)?;
        let mut st = self.0.prepare_cached(&sql).map_err(db)?;
        Ok(st
            .execute(rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map_err(db)? as u64)
    }
    fn execute_batch(&mut self, sql: &str) -> Result<()> {
        self.0.execute_batch(sql).map_err(db)
    }
    fn as_conn(&mut self) -> &mut dyn Conn {
        self
    }
}

/// A small seeded generator (xorshift): the property tests' random steps, reproducible by
/// seed.
#[allow(dead_code)]
pub struct Rng(pub u64);

#[allow(dead_code)]
impl Rng {
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A fresh in-memory database with the schema and the SQL functions its triggers call
/// (`agentmem_core::triggers`, plus `mem_uuid7`, `mem_now`, `mem__internal`,
/// `mem_content_hash`, `mem__may_hold_nul`, `mem__seen`), as the
/// extension registers them, over the system SQLite.
#[allow(dead_code)]
pub fn open_with_triggers() -> Sq {
    triggers::open()
}

/// Runs `f` as an adapter runs a call of the catalog: inside it, `mem__internal()` is true,
/// so the columns only agentmem writes may be written.
#[allow(dead_code)]
pub fn as_call<T>(f: impl FnOnce() -> T) -> T {
    triggers::DEPTH.with(|d| d.set(d.get() + 1));
    let r = f();
    triggers::DEPTH.with(|d| d.set(d.get() - 1));
    r
}

mod triggers {
    use super::{db, Shared, Sq};
    use agentmem_core::{db::seen, schema::types, triggers, Conn, Error, Result, Value};
    use rusqlite::ffi;
    use std::cell::Cell;
    use std::ffi::{c_char, c_int, c_void, CString};

    const OWN: &[&str] = &[
        "mem_uuid7",
        "mem_now",
        "mem__internal",
        "mem_content_hash",
        triggers::MAY_HOLD_NUL,
        types::CHECK_TYPES,
        types::CHECK_CHANGES,
        seen::FUNCTION,
    ];

    thread_local! {
        /// How deep the test connection is inside a trigger function (for `mem__internal`).
        pub(super) static DEPTH: Cell<u32> = const { Cell::new(0) };
    }

    fn names() -> Vec<&'static str> {
        OWN.iter()
            .copied()
            .chain(triggers::sqlite_functions())
            .collect()
    }

    unsafe fn arg(v: *mut ffi::sqlite3_value) -> Value {
        match ffi::sqlite3_value_type(v) {
            ffi::SQLITE_INTEGER => Value::Int(ffi::sqlite3_value_int64(v)),
            ffi::SQLITE_FLOAT => Value::Real(ffi::sqlite3_value_double(v)),
            ffi::SQLITE_TEXT | ffi::SQLITE_BLOB => {
                let p = ffi::sqlite3_value_blob(v) as *const u8;
                let n = ffi::sqlite3_value_bytes(v) as usize;
                let bytes = if p.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(p, n).to_vec()
                };
                match String::from_utf8(bytes) {
                    Ok(s) if ffi::sqlite3_value_type(v) == ffi::SQLITE_TEXT => Value::Text(s),
                    Ok(s) => Value::Blob(s.into_bytes()),
                    Err(e) => Value::Blob(e.into_bytes()),
                }
            }
            _ => Value::Null,
        }
    }

    fn handler(name: &str, c: &mut Sq, a: &[Value]) -> Result<Value> {
        match name {
            "mem_uuid7" => Ok(agentmem_core::ids::new_id().into()),
            "mem_now" => Ok(Value::Int(c.now_ms()?)),
            "mem__internal" => Ok(Value::Int(i64::from(DEPTH.with(|d| d.get()) > 0))),
            "mem_content_hash" => Ok(agentmem_core::memories::content_hash(a[0].as_str()).into()),
            seen::FUNCTION => Ok(seen::see(c, a.to_vec())),
            triggers::MAY_HOLD_NUL => Ok(match a.first() {
                Some(Value::Text(s)) => {
                    let json = a.get(1).and_then(Value::as_i64).is_some_and(|j| j != 0);
                    Value::Int(i64::from(triggers::may_hold_nul(s.as_bytes(), json)))
                }
                _ => Value::Null,
            }),
            types::CHECK_TYPES | types::CHECK_CHANGES => {
                let args: Vec<types::Arg> = a
                    .iter()
                    .map(|v| match v {
                        Value::Null => types::Arg::Null,
                        Value::Int(n) => types::Arg::Int(*n),
                        Value::Real(_) => types::Arg::Real,
                        Value::Text(s) => types::Arg::Text(s.as_bytes()),
                        Value::Blob(_) => types::Arg::Blob,
                        // A result value only: the functions are called with SQL's own.
                        Value::Json(_) => types::Arg::Null,
                    })
                    .collect();
                types::check(&args, name == types::CHECK_CHANGES).map(|()| Value::Null)
            }
            other => {
                DEPTH.with(|d| d.set(d.get() + 1));
                let r = triggers::fire_sqlite(c, other, a.to_vec(), false);
                DEPTH.with(|d| d.set(d.get() - 1));
                r
            }
        }
    }

    unsafe extern "C" fn dispatch(
        ctx: *mut ffi::sqlite3_context,
        argc: c_int,
        argv: *mut *mut ffi::sqlite3_value,
    ) {
        let (which, shared) = &*(ffi::sqlite3_user_data(ctx) as *const (usize, Shared));
        let handle = ffi::sqlite3_context_db_handle(ctx);
        let args: Vec<Value> = (0..argc as usize).map(|i| arg(*argv.add(i))).collect();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let conn = rusqlite::Connection::from_handle(handle).map_err(db)?;
            let mut c = Sq(conn, shared.clone());
            handler(names()[*which], &mut c, &args)
        }))
        .unwrap_or_else(|_| Err(Error::internal("panic")));
        match result {
            Ok(Value::Int(i)) => ffi::sqlite3_result_int64(ctx, i),
            Ok(Value::Text(s)) => ffi::sqlite3_result_text(
                ctx,
                s.as_ptr() as *const c_char,
                s.len() as c_int,
                ffi::SQLITE_TRANSIENT(),
            ),
            Ok(_) => ffi::sqlite3_result_null(ctx),
            Err(e) => {
                let m = CString::new(e.to_string().replace('\0', "")).unwrap();
                ffi::sqlite3_result_error(ctx, m.as_ptr(), -1);
            }
        }
    }

    unsafe extern "C" fn forget(p: *mut c_void) {
        drop(Box::from_raw(p as *mut (usize, Shared)));
    }

    pub fn open() -> Sq {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let shared = Shared::default();
        for (i, name) in names().iter().enumerate() {
            let cname = CString::new(*name).unwrap();
            // SAFETY: a live connection; the callback only reads its arguments.
            let rc = unsafe {
                ffi::sqlite3_create_function_v2(
                    c.handle(),
                    cname.as_ptr(),
                    -1,
                    // A generated column may only call deterministic functions.
                    if *name == "mem_content_hash" {
                        ffi::SQLITE_UTF8 | ffi::SQLITE_DETERMINISTIC
                    } else {
                        ffi::SQLITE_UTF8
                    },
                    Box::into_raw(Box::new((i, shared.clone()))) as *mut c_void,
                    Some(dispatch),
                    None,
                    None,
                    Some(forget),
                )
            };
            assert_eq!(rc, ffi::SQLITE_OK);
        }
        let mut sq = Sq(c, shared);
        agentmem_core::schema::migrate(&mut sq, None).unwrap();
        sq
    }
}

/// A closure row with the nodes' ids: (depth, path, edge types, hop weights, total weight).
pub type ClosureRow = (usize, Vec<String>, Vec<String>, Vec<f64>, f64);

/// The closure's rows by (ancestor id, descendant id), their paths decoded.
#[allow(dead_code)]
pub fn closure(c: &mut Sq) -> std::collections::BTreeMap<(String, String), ClosureRow> {
    use agentmem_core::graph::stored::Stored;
    let ids: std::collections::HashMap<i64, String> = c
        .query("SELECT seq, id FROM mem_graph_nodes", &[])
        .unwrap()
        .into_iter()
        .map(|r| (r[0].as_i64().unwrap(), r[1].as_str().unwrap().to_string()))
        .collect();
    let rows = c
        .query(
            "SELECT ancestor, descendant, depth, hops, total_weight FROM mem_graph_closure",
            &[],
        )
        .unwrap();
    let n = rows.len();
    let mut out = std::collections::BTreeMap::new();
    for r in rows {
        let (a, d, depth) = (
            r[0].as_i64().unwrap(),
            r[1].as_i64().unwrap(),
            r[2].as_i64().unwrap(),
        );
        let Value::Blob(hops) = &r[3] else {
            panic!("hops is not a blob: {:?}", r[3])
        };
        let s = Stored::decode(a, d, depth as usize, hops).unwrap();
        let nodes: Vec<String> = s.nodes.iter().map(|k| ids[k].clone()).collect();
        out.insert(
            (nodes[0].clone(), nodes[nodes.len() - 1].clone()),
            (
                depth as usize,
                nodes,
                s.types.iter().map(|t| t.to_string()).collect(),
                s.weights,
                r[4].as_f64().unwrap(),
            ),
        );
    }
    assert_eq!(out.len(), n, "one row per pair");
    out
}
