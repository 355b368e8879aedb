//! Table-valued functions (`SELECT * FROM mem_recall('t1')`) as eponymous virtual tables.
//!
//! One generic virtual table serves every table function: its arguments are hidden columns
//! after the output columns, `xBestIndex` takes their equality constraints as the call's
//! arguments, and `xFilter` runs the core function and hands back the materialised rows
//! (every table function has a bounded result: a `limit` or a window).

use crate::state::Shared;
use crate::{args, functions};
use agentmem_core::api::{Function, Returns};
use agentmem_core::{Error, Row, Value};
use sqlite_loadable::{
    ext::{sqlite3, sqlite3_context, sqlite3_value, sqlite3_vtab, sqlite3_vtab_cursor},
    table::{BestIndexError, ConstraintOperator, IndexInfo, VTab, VTabArguments, VTabCursor},
};
use std::os::raw::c_int;

/// `idx_num` holds the given arguments in its low bits, the columns read above them.
const ARG_BITS: u32 = 16;
const COLUMN_BITS: u32 = 15;

#[repr(C)]
pub struct Table {
    base: sqlite3_vtab,
    db: *mut sqlite3,
    spec: &'static Function,
    state: Shared,
}

impl<'vtab> VTab<'vtab> for Table {
    /// The function, and the connection's state.
    type Aux = (&'static Function, Shared);
    type Cursor = Cursor;

    fn connect(
        db: *mut sqlite3,
        aux: Option<&Self::Aux>,
        _args: VTabArguments,
    ) -> sqlite_loadable::Result<(String, Self)> {
        let &(spec, state) =
            aux.ok_or_else(|| sqlite_loadable::Error::new_message("table function without spec"))?;
        let cols: Vec<String> = spec
            .columns()
            .iter()
            .map(|c| c.name.to_string())
            .chain(spec.args.iter().map(|a| format!("arg_{} HIDDEN", a.name)))
            .collect();
        let sql = format!("CREATE TABLE x({})", cols.join(", "));
        // SAFETY: an all-zero sqlite3_vtab is its documented initial state.
        let base = unsafe { std::mem::zeroed() };
        Ok((
            sql,
            Table {
                base,
                db,
                spec,
                state,
            },
        ))
    }

    fn best_index(&self, mut info: IndexInfo) -> std::result::Result<(), BestIndexError> {
        let first_arg = self.spec.columns().len() as i32;
        // Bit i of idx_num set: argument i was given. argv order is argument order.
        let mut present = 0i32;
        let mut constraints = info.constraints();
        for c in constraints.iter() {
            let col = c.column_idx() - first_arg;
            if col >= 0 && c.op() == Some(ConstraintOperator::EQ) {
                if !c.usable() {
                    return Err(BestIndexError::Constraint);
                }
                present |= 1 << col;
            }
        }
        let mut next = 1;
        let mut argv_of = [0; 16];
        for (i, slot) in argv_of.iter_mut().enumerate().take(self.spec.args.len()) {
            if present & (1 << i) != 0 {
                *slot = next;
                next += 1;
            }
        }
        for c in constraints.iter_mut() {
            let col = c.column_idx() - first_arg;
            if col >= 0 && c.op() == Some(ConstraintOperator::EQ) {
                c.set_argv_index(argv_of[col as usize]);
                c.set_omit(true);
            }
        }
        // Bits 16 and up: the output columns the statement reads (SQLite's colUsed; its last
        // bit stands for every column from 63 on).
        let used = info.columns_used();
        let cols = if used >> (COLUMN_BITS - 1) != 0 {
            (1 << COLUMN_BITS) - 1
        } else {
            used as i32
        };
        info.set_idxnum(present | (cols << ARG_BITS));
        info.set_estimated_cost(10.0);
        info.set_estimated_rows(10);
        Ok(())
    }

    fn open(&'vtab mut self) -> sqlite_loadable::Result<Cursor> {
        // SAFETY: as for the table.
        let base = unsafe { std::mem::zeroed() };
        Ok(Cursor {
            base,
            db: self.db,
            spec: self.spec,
            state: self.state,
            rows: Vec::new(),
            pos: 0,
        })
    }
}

#[repr(C)]
pub struct Cursor {
    base: sqlite3_vtab_cursor,
    db: *mut sqlite3,
    spec: &'static Function,
    state: Shared,
    rows: Vec<Row>,
    pos: usize,
}

impl VTabCursor for Cursor {
    fn filter(
        &mut self,
        idx_num: c_int,
        _idx_str: Option<&str>,
        values: &[*mut sqlite3_value],
    ) -> sqlite_loadable::Result<()> {
        let spec = self.spec;
        let Returns::Table(_, run) = spec.returns else {
            return Err(sqlite_loadable::Error::new_message("not a table function"));
        };
        // Spread the given arguments back to their positions; absent ones are NULL.
        let mut given = values.iter();
        let null = std::ptr::null_mut();
        let mut positional = Vec::with_capacity(spec.args.len());
        for i in 0..spec.args.len() {
            positional.push(if idx_num & (1 << i) != 0 {
                *given.next().unwrap_or(&null)
            } else {
                null
            });
        }
        let result = functions::enter_db(self.db, self.state, |c| {
            if let Some(i) = (0..spec.required).find(|&i| idx_num & (1 << i) == 0) {
                return Err(Error::invalid(
                    spec.args[i].name,
                    format!("{} requires this argument", spec.name),
                ));
            }
            let columns = (idx_num >> ARG_BITS) as u32;
            let call = spec
                .bind(args::values(&positional))?
                .with_columns(u64::from(columns));
            functions::run_as(spec, c, |c| run(c, &call))
        });
        self.rows = result.map_err(|e| functions::sql_error(&e))?;
        self.pos = 0;
        Ok(())
    }

    fn next(&mut self) -> sqlite_loadable::Result<()> {
        self.pos += 1;
        Ok(())
    }

    fn eof(&self) -> bool {
        self.pos >= self.rows.len()
    }

    fn column(&self, ctx: *mut sqlite3_context, i: c_int) -> sqlite_loadable::Result<()> {
        let value = self.rows.get(self.pos).and_then(|r| r.get(i as usize));
        functions::set_result(ctx, value.unwrap_or(&Value::Null))
    }

    fn rowid(&self) -> sqlite_loadable::Result<i64> {
        Ok(self.pos as i64)
    }
}

/// Registers every table function of the catalog on `db`, with the connection's `state`.
pub fn register(db: *mut sqlite3, state: Shared) -> sqlite_loadable::Result<()> {
    for f in agentmem_core::api::functions() {
        if let Returns::Table(..) = f.returns {
            sqlite_loadable::define_table_function::<Table>(db, f.name, Some((f, state)))?;
        }
    }
    Ok(())
}
