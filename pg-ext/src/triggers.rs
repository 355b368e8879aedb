//! The trigger catalog's functions in Postgres: one C entry point for all of them, as
//! `mem__call` is for the function catalog. Each trigger function is created over the symbol
//! `mem__trigger` (`agentmem_core::triggers::render::postgres_functions`); the entry point
//! finds the called function's catalog entry by name (kept in `fn_extra`), hands the core a
//! [`Fired`] over the rows Postgres gave it, and returns the row a BEFORE trigger completed.

use crate::conn::SpiConn;
use crate::entry::{declaration, entry_point};
use crate::error::ok;
use crate::transition::NewRows;
use agentmem_core::cluster::route;
use agentmem_core::db::row::{Completion, Shape};
use agentmem_core::triggers::{self, Fired, Rows, Timing, Trigger};
use agentmem_core::{Conn, Error, Result, Row, Value};
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, WhoAllocated};
use std::num::NonZeroUsize;

/// Reads named columns of a trigger row as core values, by their Postgres types. The row's
/// column names are decoded once (a lookup by name decodes every name it passes).
fn values<W: WhoAllocated>(row: &PgHeapTuple<'_, W>, cols: &[&str]) -> Vec<Value> {
    let atts = columns(row);
    cols.iter()
        .map(|&col| {
            let Some(&(_, i, ty)) = atts.iter().find(|(name, ..)| *name == col) else {
                return Value::Null;
            };
            let v = match ty {
                pg_sys::INT8OID => row.get_by_index::<i64>(i).ok().flatten().map(Value::Int),
                pg_sys::INT4OID => row
                    .get_by_index::<i32>(i)
                    .ok()
                    .flatten()
                    .map(|v| Value::Int(v.into())),
                pg_sys::FLOAT8OID => row.get_by_index::<f64>(i).ok().flatten().map(Value::Real),
                pg_sys::JSONBOID => row
                    .get_by_index::<pgrx::JsonB>(i)
                    .ok()
                    .flatten()
                    .map(|j| Value::Text(j.0.to_string())),
                _ => row
                    .get_by_index::<String>(i)
                    .ok()
                    .flatten()
                    .map(Value::Text),
            };
            v.unwrap_or(Value::Null)
        })
        .collect()
}

/// A row's columns: name, attribute number and type.
fn columns<'r, W: WhoAllocated>(
    row: &'r PgHeapTuple<'_, W>,
) -> Vec<(&'r str, NonZeroUsize, pg_sys::Oid)> {
    row.attributes()
        .map(|(i, a)| (a.name(), i, a.atttypid))
        .collect()
}

/// The rows of one firing: `NEW` (a copy the handler may complete), `OLD`, and a statement
/// trigger's inserted rows.
struct PgRows<'a> {
    trigger: &'a PgTrigger<'a>,
    new: Option<PgHeapTuple<'a, AllocatedByRust>>,
    inserted: Option<NewRows>,
    /// The columns of the inserted rows the handler reads.
    reads: &'static [&'static str],
}

impl Rows for PgRows<'_> {
    fn value(&mut self, new: bool, col: &str) -> Result<Value> {
        let v = if new {
            self.new.as_ref().map(|r| values(r, &[col]))
        } else {
            self.trigger.old().map(|r| values(&r, &[col]))
        };
        Ok(v.and_then(|v| v.into_iter().next()).unwrap_or(Value::Null))
    }

    fn new_row(&mut self, _conn: &mut dyn Conn, shape: Shape) -> Result<Row> {
        self.new
            .as_ref()
            .map(|r| values(r, shape.columns))
            .ok_or_else(|| {
                Error::internal(format!("a trigger on {} fired without NEW", shape.table))
            })
    }

    /// Writes the filled columns into `NEW`, each as its column's Postgres type.
    fn complete(&mut self, _conn: &mut dyn Conn, done: Completion) -> Result<()> {
        let row = self
            .new
            .as_mut()
            .ok_or_else(|| Error::internal("a completing trigger fired without NEW"))?;
        // Where each changed column is, found before the row is written to.
        let targets = {
            let atts = columns(row);
            done.changed
                .iter()
                .map(|(col, _)| {
                    atts.iter()
                        .find(|(name, ..)| name == col)
                        .map(|&(_, i, ty)| (i, ty))
                        .ok_or_else(|| {
                            Error::internal(format!("writing trigger row: no column {col}"))
                        })
                })
                .collect::<Result<Vec<_>>>()?
        };
        for ((col, v), (i, ty)) in done.changed.into_iter().zip(targets) {
            let r = match ty {
                pg_sys::INT8OID => row.set_by_index(i, v.as_i64()),
                pg_sys::INT4OID => {
                    row.set_by_index(i, v.as_i64().and_then(|i| i32::try_from(i).ok()))
                }
                _ => row.set_by_index(i, v.as_str().map(str::to_owned)),
            };
            r.map_err(|e| Error::internal(format!("writing trigger row: {col}: {e}")))?;
        }
        Ok(())
    }

    fn completes_after_write(&self) -> bool {
        false
    }

    fn next_inserted(&mut self) -> Option<Row> {
        let rows = self.inserted.as_mut()?;
        if !rows.advance() {
            return None;
        }
        Some((0..self.reads.len()).map(|i| rows.value(i)).collect())
    }

    /// Whether the relation has the enabled trigger `name`.
    /// On a Citus shard (`mem_messages_102072`) the table's triggers carry the shard's
    /// number too (`…_trg_102072`).
    fn table_has(&self, name: &str) -> bool {
        let rel = self.trigger.trigger_data().tg_relation;
        let shard = shard_suffix(relation_name(self.trigger));
        // SAFETY: the trigger's relation is open for the call; its trigdesc, when not NULL,
        // holds NUL-terminated names (numtriggers entries).
        unsafe {
            let desc = (*rel).trigdesc;
            if desc.is_null() {
                return false;
            }
            let all = std::slice::from_raw_parts((*desc).triggers, (*desc).numtriggers as usize);
            all.iter().any(|t| {
                let tg = std::ffi::CStr::from_ptr(t.tgname).to_bytes();
                t.tgenabled != pg_sys::TRIGGER_DISABLED as std::ffi::c_char
                    && tg.strip_prefix(name.as_bytes()) == Some(shard)
            })
        }
    }

    fn arguments(&self) -> Vec<String> {
        self.trigger.extra_args().unwrap_or_default()
    }
}

/// The name of the table the trigger fired on.
fn relation_name<'a>(trigger: &'a PgTrigger<'a>) -> &'a [u8] {
    let rel = trigger.trigger_data().tg_relation;
    // SAFETY: the trigger's relation is open for the call, its name NUL-terminated.
    unsafe { std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()).to_bytes() }
}

/// The resource a row trigger fired on a Citus shard works for: the row's (every
/// distributed table carries one), so that its statements name it and stay on this node's
/// shards, as those of a call handed over here do. `None` elsewhere, for a statement
/// trigger (whose rows may be of several resources), and inside a handed-over call.
fn shard_home(t: &Trigger, rows: &mut PgRows<'_>) -> Option<String> {
    if t.timing == Timing::StatementEnd
        || shard_suffix(relation_name(rows.trigger)).is_empty()
        || route::home(&mut SpiConn).is_some()
    {
        return None;
    }
    let new = rows.new.is_some();
    rows.value(new, "resource_id").ok()?.into_string()
}

/// A shard's number as Citus appends it to the table's and its triggers' names (`_102072`),
/// or nothing for a table that is not a shard.
fn shard_suffix(table: &[u8]) -> &[u8] {
    let digits = table
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let at = table.len() - digits;
    if digits > 0 && at > 0 && table[at - 1] == b'_' {
        &table[at - 1..]
    } else {
        &[]
    }
}

entry_point!(
    /// The entry point of every trigger function.
    mem__trigger,
    pg_finfo_mem__trigger,
    fire
);

unsafe fn fire(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: fcinfo is valid; mem__trigger's fn_extra holds trigger declarations only.
    let t: &Trigger = unsafe {
        declaration(fcinfo, "trigger catalog", |name| {
            triggers::find(name).filter(|t| t.in_postgres())
        })
    };
    // SAFETY: Postgres called the function as a trigger (checked by from_fcinfo).
    let pg = ok(unsafe { PgTrigger::from_fcinfo(&*fcinfo) }
        .map_err(|e| Error::internal(format!("{} called not as a trigger: {e}", t.function))));
    let _inside = internal::Guard::new();
    let data = pg.trigger_data() as *const pg_sys::TriggerData;
    let mut rows = PgRows {
        trigger: &pg,
        new: pg.new().map(|r| r.into_owned()),
        // SAFETY: the trigger's data lives for the call, and so does the cursor.
        inserted: match t.timing {
            Timing::StatementEnd => unsafe { NewRows::open(data, t.new) },
            _ => None,
        },
        reads: t.new,
    };
    let home = shard_home(t, &mut rows);
    let mut run = || ok((t.run)(&mut SpiConn, &mut Fired::of(t, &mut rows, false)));
    match home {
        Some(resource) => crate::home::at_home(&resource, run),
        None => run(),
    }
    // A BEFORE row trigger returns the row to write (completed), or the old one for a delete;
    // the others return nothing.
    let before = matches!(t.timing, Timing::Completing | Timing::Before);
    let row = if before {
        rows.new.take().and_then(PgHeapTuple::into_trigger_datum)
    } else {
        None
    };
    match row {
        Some(d) => d,
        None if before => pg
            .old()
            .and_then(|o| o.into_owned().into_trigger_datum())
            .unwrap_or(pg_sys::Datum::from(0)),
        None => pg_sys::Datum::from(0),
    }
}

/// The symbols of the trigger functions earlier releases created one by one
/// (`AS 'MODULE_PATHNAME', '<name>_wrapper'`): installing such a release with this library
/// binds them, and they run the same entry point.
macro_rules! earlier_symbols {
    ($($name:ident),* $(,)?) => {
        $(
            #[doc(hidden)]
            mod $name {
                use pgrx::pg_sys;

                #[export_name = concat!("pg_finfo_", stringify!($name), "_wrapper")]
                pub extern "C" fn finfo() -> &'static pg_sys::Pg_finfo_record {
                    super::pg_finfo_mem__trigger()
                }

                /// # Safety
                /// As for `mem__trigger`.
                #[export_name = concat!(stringify!($name), "_wrapper")]
                pub unsafe extern "C-unwind" fn call(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
                    unsafe { super::mem__trigger(fcinfo) }
                }
            }
        )*
    };
}

earlier_symbols!(
    mem__message_insert,
    mem__messages_booked,
    mem__message_held,
    mem__message_update,
    mem__message_delete,
    mem__refuse,
    mem__task_insert,
    mem__task_status,
    mem__task_status_after,
    mem__task_text,
    mem__task_id_change,
    mem__task_delete,
    mem__task_dep_insert,
    mem__task_dep_update,
    mem__task_dep_delete,
    mem__graph_edge_insert,
    mem__graph_edge_update,
    mem__graph_edge_delete,
    mem__graph_node_delete,
    mem__graph_settings_changed,
    mem__memory_insert,
    mem__memory_update,
    mem__memory_delete,
    mem__embedding_insert,
    mem__embedding_update,
    mem__embedding_delete,
);

/// Whether the backend is inside one of agentmem's own writes; the schema's guards on derived
/// columns let writes through only then.
#[pg_extern(stable, parallel_safe)]
fn mem__internal() -> bool {
    internal::inside()
}

/// Whether `mem_message_add` is inserting the message `id` itself: the message insert
/// trigger's condition lets that row pass.
#[pg_extern(stable, parallel_safe)]
fn mem__adding(id: &str) -> bool {
    triggers::adding(&mut SpiConn, id)
}

/// How deep this backend is inside agentmem's trigger handlers (and migrations), which are
/// the only writers of derived columns.
pub mod internal {
    use std::cell::Cell;

    thread_local! {
        static DEPTH: Cell<u32> = const { Cell::new(0) };
    }

    pub fn inside() -> bool {
        DEPTH.with(|d| d.get() > 0)
    }

    /// Held while a handler runs; released on return and on an error's unwinding.
    pub struct Guard(());

    impl Guard {
        pub fn new() -> Guard {
            DEPTH.with(|d| d.set(d.get() + 1));
            Guard(())
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
}
