//! Reads a statement trigger's new-rows transition table straight from its tuple store. A
//! query over the table through SPI is parsed and planned on every statement (a transition
//! table cannot be named by a kept plan), which costs more than a one-row insert itself.

use pgrx::pg_sys;
use pgrx::prelude::*;

/// A cursor over the rows a statement inserted, reading the named columns.
pub struct NewRows {
    store: *mut pg_sys::Tuplestorestate,
    slot: *mut pg_sys::TupleTableSlot,
    /// 0-based attribute index of each requested column, and its type.
    cols: Vec<(usize, pg_sys::Oid)>,
}

impl NewRows {
    /// The trigger's new rows, or `None` when it has no new-rows table. Panics (a Postgres
    /// error) when a column is missing: the schema names them all.
    ///
    /// # Safety
    /// `data` must be the trigger data of the running trigger call, alive while the cursor is.
    pub unsafe fn open(data: *const pg_sys::TriggerData, cols: &[&str]) -> Option<NewRows> {
        let store = (*data).tg_newtable;
        if store.is_null() {
            return None;
        }
        let desc = (*(*data).tg_relation).rd_att;
        let tupdesc = pgrx::PgTupleDesc::from_pg_unchecked(desc);
        let cols = cols
            .iter()
            .map(|&want| {
                tupdesc
                    .iter()
                    .enumerate()
                    .find(|(_, a)| !a.is_dropped() && a.name() == want)
                    .map(|(i, a)| (i, a.atttypid))
                    .unwrap_or_else(|| error!("agentmem: transition table has no column {want}"))
            })
            .collect();
        // A read pointer of its own, from the start, as a scan of the table would take.
        let ptr = pg_sys::tuplestore_alloc_read_pointer(store, pg_sys::EXEC_FLAG_REWIND as i32);
        pg_sys::tuplestore_select_read_pointer(store, ptr);
        pg_sys::tuplestore_rescan(store);
        let slot = pg_sys::MakeSingleTupleTableSlot(desc, &pg_sys::TTSOpsMinimalTuple);
        Some(NewRows { store, slot, cols })
    }

    /// Moves to the next row; false past the last.
    pub fn advance(&mut self) -> bool {
        // SAFETY: the store and slot live as long as `self` (see `open`).
        unsafe {
            if !pg_sys::tuplestore_gettupleslot(self.store, true, false, self.slot) {
                return false;
            }
            pg_sys::slot_getallattrs(self.slot);
        }
        true
    }

    /// The datum of requested column `i` in the current row, `None` when NULL.
    fn datum(&self, i: usize) -> Option<pg_sys::Datum> {
        let (att, _) = self.cols[i];
        // SAFETY: `advance` deformed every attribute of the current row into the slot.
        unsafe {
            let slot = &*self.slot;
            if *slot.tts_isnull.add(att) {
                None
            } else {
                Some(*slot.tts_values.add(att))
            }
        }
    }

    /// Requested column `i` of the current row as a core value (`bigint` as an integer, the
    /// rest as text); NULL when NULL.
    pub fn value(&self, i: usize) -> agentmem_core::Value {
        use agentmem_core::Value;
        if self.datum(i).is_none() {
            return Value::Null;
        }
        match self.cols[i].1 {
            pg_sys::INT8OID => Value::Int(self.int(i)),
            _ => self.text(i).map_or(Value::Null, Value::Text),
        }
    }

    /// Requested column `i` (a `bigint`) of the current row; 0 when NULL.
    pub fn int(&self, i: usize) -> i64 {
        // SAFETY: the column's type is bigint (checked against the schema by the caller's
        // column list; a datum of another type would be misread, not unsafe to read).
        self.datum(i)
            .and_then(|d| unsafe { i64::from_polymorphic_datum(d, false, self.cols[i].1) })
            .unwrap_or(0)
    }

    /// Requested column `i` (a `text`) of the current row, detoasted; `None` when NULL.
    pub fn text(&self, i: usize) -> Option<String> {
        // SAFETY: a text datum of the current row, valid until the next `advance`.
        self.datum(i)
            .and_then(|d| unsafe { String::from_polymorphic_datum(d, false, self.cols[i].1) })
    }
}

impl Drop for NewRows {
    fn drop(&mut self) {
        // SAFETY: the slot was made by `open` and is dropped once.
        unsafe { pg_sys::ExecDropSingleTupleTableSlot(self.slot) }
    }
}
