//! Rows written and read without a statement (see [`agentmem_core::db::direct`]): a tuple and
//! its index entries written through the table-access and index calls that logical
//! replication's apply uses, and index reads, for the core's hottest call.
//!
//! A table is written so only when its statement would have run nothing more: it is a plain
//! table; every `CHECK`, every trigger that fires on the write and every foreign key whose
//! trigger fires is one the core vouched for; the caller holds the table privileges the
//! statement needs and no row-level security policy applies to them; the transaction reads
//! committed data and may write, and the call is not a reader's. Anything else — a trigger or
//! policy a user added, column privileges, `REPEATABLE READ` — leaves the write to the
//! statement, which does all of that itself. A read needs `SELECT` and no policy. Neither
//! happens where Citus is installed: a table here may be the shell of shards elsewhere.
//!
//! The code follows Postgres 15's executor interfaces; other versions use the statements.

use agentmem_core::db::conn::Change;
use agentmem_core::db::direct::{Scan, Vouch, Write};
use agentmem_core::db::privilege::DERIVED;
use agentmem_core::db::value::check_params;
use agentmem_core::{Error, Result, Value, ValueRef};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::ptr::null_mut;

/// Whether every table of `vouches` can be written directly now.
pub fn usable(vouches: &[&Vouch]) -> Result<bool> {
    if !transaction_allows() {
        return Ok(false);
    }
    for v in vouches {
        let allowed = with_rights(v.table, || {
            let Some(table) = Table::open(v.table)? else {
                return Ok(false);
            };
            let allowed = table.allows(v);
            table.close();
            Ok(allowed)
        })?;
        if !allowed {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs `f` with the rights the statement writing `v.table` would have: the extension
/// owner's for derived data, the caller's for every other table (see [`crate::owner`]).
fn with_rights<T>(table: &str, f: impl FnOnce() -> T) -> T {
    if DERIVED.contains(&table) {
        crate::owner::as_owner(f)
    } else {
        f()
    }
}

/// A read-committed, read-write transaction outside parallel mode, in a writer's call, on a
/// database without Citus (whose tables here may be shells of shards elsewhere): what a
/// direct write behaves the same in as its statement. Under `REPEATABLE READ` the statement
/// would refuse a row changed since the transaction's snapshot, and `SERIALIZABLE` tracks
/// what a statement reads; a direct write does neither.
fn transaction_allows() -> bool {
    // SAFETY: reads the backend's transaction settings.
    let settings = unsafe {
        pg_sys::XactIsoLevel == pg_sys::XACT_READ_COMMITTED as i32
            && !pg_sys::XactReadOnly
            && !pg_sys::IsInParallelMode()
    };
    settings && !crate::reader::in_reader() && !crate::citus::installed()
}

/// Reads the rows `s` names with the active snapshot of a statement run now (see
/// [`agentmem_core::db::direct::Scan`]); `false`, having read nothing, when the caller may not
/// read the table directly (no `SELECT` on it, or a row-level security policy applies), or
/// Citus is installed (the table may be the shell of shards elsewhere).
pub fn scan(s: &Scan<'_>, f: &mut dyn FnMut(&[ValueRef<'_>]) -> bool) -> Result<bool> {
    if crate::citus::installed() {
        return Ok(false);
    }
    with_rights(s.table, || {
        if s.kept {
            return scan_kept(s, f);
        }
        let Some(table) = Table::open_locked(s.table, pg_sys::AccessShareLock)? else {
            return Ok(false);
        };
        // SAFETY: the index is opened, scanned and closed here; the snapshot is registered
        // for the scan and released after it; the scan keys outlive the scan.
        let read = unsafe { scan_table(&table, s, f) };
        table.close();
        read
    })
}

/// The key a kept scan's rows are found by: its index, its columns and every value it
/// compares, each value written with its kind and length, so that no two scans share a key
/// (writing them is cheaper than formatting them).
fn kept_key(s: &Scan<'_>) -> String {
    let mut key = String::with_capacity(64);
    key.push_str(s.index);
    for c in s.columns {
        key.push(',');
        key.push_str(c);
    }
    let (width, each) = s.each.map_or((0, &[][..]), |e| (e.width, e.keys));
    for (part, values) in [('=', s.equal), ('>', s.from.as_slice()), ('*', each)] {
        key.push(part);
        for v in values {
            push_value(&mut key, v);
        }
    }
    push_value(&mut key, &Value::Int(width as i64));
    key
}

/// Appends `v` to a [`kept_key`].
fn push_value(key: &mut String, v: &Value) {
    use std::fmt::Write;
    // Writing to a String does not fail.
    let _ = match v {
        Value::Null => write!(key, "n"),
        Value::Int(i) => write!(key, "i{i};"),
        Value::Real(f) => write!(key, "r{};", f.to_bits()),
        Value::Text(t) => write!(key, "t{}:{t}", t.len()),
        Value::Blob(b) => write!(key, "b{}:", b.len())
            .and_then(|()| b.iter().try_for_each(|byte| write!(key, "{byte:02x}"))),
        Value::Json(j) => {
            let json = j.to_text();
            write!(key, "j{}:{json}", json.len())
        }
    };
}

/// [`scan`] of a table whose rows the backend keeps (see [`Scan::kept`]) until the table's
/// cached definition is invalidated: its writers invalidate it ([`table_changed`]), and the
/// table's lock, taken here as the statement would take it, brings the invalidations of
/// transactions that committed since in before the rows are looked up.
fn scan_kept(s: &Scan<'_>, f: &mut dyn FnMut(&[ValueRef<'_>]) -> bool) -> Result<bool> {
    let relid = crate::relids::table(s.table);
    if relid == pg_sys::InvalidOid {
        return Ok(false);
    }
    // SAFETY: the lock is the one a read of the table takes, held to the transaction's end.
    unsafe { pg_sys::LockRelationOid(relid, pg_sys::AccessShareLock as i32) };
    watch_tables();
    let key = kept_key(s);
    let rows = match KEPT.with(|k| k.borrow().get(&(relid, key.clone())).cloned()) {
        Some(rows) => rows,
        None => {
            let Some(table) = Table::open_locked(s.table, pg_sys::AccessShareLock)? else {
                return Ok(false);
            };
            let mut rows = Vec::new();
            // SAFETY: as in `scan`.
            let read = unsafe {
                scan_table(&table, s, &mut |r| {
                    rows.push(r.iter().map(ValueRef::to_owned).collect::<Vec<_>>());
                    true
                })
            };
            table.close();
            if !read? {
                return Ok(false);
            }
            KEPT.with(|k| {
                let mut kept = k.borrow_mut();
                if kept.len() >= KEPT_SCANS {
                    kept.clear();
                }
                kept.insert((relid, key), rows.clone());
            });
            rows
        }
    };
    // The rights a read of the table needs, asked each time: they are not the table's to
    // invalidate (a role's membership, its BYPASSRLS).
    // SAFETY: catalog lookups for a table that exists (it is locked).
    let readable = unsafe {
        caller_may_in(
            relid,
            pg_sys::get_rel_namespace(relid),
            &[pg_sys::ACL_SELECT],
        )
    };
    if !readable {
        return Ok(false);
    }
    for row in &rows {
        if !f(&row.iter().map(Value::as_ref).collect::<Vec<_>>()) {
            break;
        }
    }
    Ok(true)
}

/// After this transaction wrote `table`, whose rows backends keep: their copies, this
/// backend's at once, everyone's when the transaction commits (an invalidation of the
/// table's cached definition, which Postgres sends to every backend then).
pub fn table_changed(table: &str) -> Result<()> {
    let relid = crate::relids::table(table);
    // SAFETY: the invalidation is queued in this transaction.
    unsafe {
        if relid != pg_sys::InvalidOid {
            pg_sys::CacheInvalidateRelcacheByRelid(relid);
            forget_table(pg_sys::Datum::from(0usize), relid);
        }
    }
    Ok(())
}

/// [`scan`] on the open table.
///
/// # Safety
///
/// `table` is open.
unsafe fn scan_table(
    table: &Table,
    s: &Scan<'_>,
    f: &mut dyn FnMut(&[ValueRef<'_>]) -> bool,
) -> Result<bool> {
    let rel = table.rel;
    let relid = (*rel).rd_id;
    if !caller_may(rel, &[pg_sys::ACL_SELECT]) {
        return Ok(false);
    }
    let index_id = crate::relids::in_schema(s.index, (*(*rel).rd_rel).relnamespace);
    if index_id == pg_sys::InvalidOid {
        return Ok(false);
    }
    // The keys after `equal`: each of `each` in turn (its first now), or `from`.
    let (key_width, first) = match s.each {
        Some(each) if each.width == 0 || each.keys.len() % each.width != 0 => {
            return Err(Error::internal("a scan's keys are not whole"));
        }
        Some(each) if each.keys.is_empty() => return Ok(true),
        Some(each) => (each.width, &each.keys[..each.width]),
        None => (usize::from(s.from.is_some()), s.from.as_slice()),
    };
    let index = pg_sys::index_open(index_id, pg_sys::AccessShareLock as i32);
    let form = (*index).rd_index;
    let after = s.equal.len();
    if (*form).indrelid != relid || after + key_width > (*form).indnkeyatts as usize {
        pg_sys::index_close(index, pg_sys::NoLock as i32);
        return Ok(false);
    }
    // The table's attribute of each index column, when it is one (not an expression).
    let column_of = |i: usize| {
        let column = (*form).indkey.values.as_ptr().add(i).read();
        (column > 0).then(|| column as usize - 1)
    };
    // Integer keys of one column that lie close are read a run at a time.
    let runs = s.each.and_then(|each| {
        let c = column_of(after)?;
        is_integer(table.attribute(c).atttypid)
            .then(|| each.runs(RUN_GAP))
            .flatten()
    });
    // One pass of the index per run, or per key of `each` (one pass without them).
    let by_runs = runs.is_some();
    let passes: Vec<&[Value]> = match (runs, s.each) {
        (Some(runs), _) => runs,
        (None, Some(each)) => each.keys.chunks(key_width).collect(),
        (None, None) => vec![first],
    };
    // The scan keys: each index column, the value it is compared with and how; the columns
    // after `equal` as the first pass compares them.
    let mut bounds: Vec<(usize, &Value, u32)> = s
        .equal
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v, pg_sys::BTEqualStrategyNumber))
        .collect();
    bounds.extend(compared(passes[0], after, by_runs, s.each.is_some()));
    let keys = bounds.len();
    // The columns found once: by name for every row, it cost more than reading them.
    let columns = match s
        .columns
        .iter()
        .map(|c| table.live_column(c))
        .collect::<Result<Vec<_>>>()
    {
        Ok(c) => c,
        Err(e) => {
            pg_sys::index_close(index, pg_sys::NoLock as i32);
            return Err(e);
        }
    };
    let mut scan_keys: Vec<pg_sys::ScanKeyData> = vec![std::mem::zeroed(); keys];
    let mut key_types = Vec::with_capacity(keys);
    for (key, &(i, value, strategy)) in scan_keys.iter_mut().zip(&bounds) {
        let Some(column) = column_of(i) else {
            pg_sys::index_close(index, pg_sys::NoLock as i32);
            return Ok(false);
        };
        let att = table.attribute(column);
        if i >= after {
            key_types.push(att.atttypid);
        }
        let (datum, null) = match to_datum(value, att.atttypid, attribute_name(att)) {
            Ok(d) => d,
            Err(e) => {
                pg_sys::index_close(index, pg_sys::NoLock as i32);
                return Err(e);
            }
        };
        match scan_key(index, i, strategy, datum).filter(|_| !null) {
            Some(k) => *key = k,
            None => {
                pg_sys::index_close(index, pg_sys::NoLock as i32);
                return Ok(false);
            }
        }
    }
    // A run's rows are matched to its keys by the key column, read with the others.
    let run_column = by_runs.then(|| column_of(after)).flatten();
    let width = columns
        .iter()
        .chain(&run_column)
        .max()
        .map_or(0, |&i| i + 1);
    // A writer's statement sees what the call wrote before it, on a snapshot taken now (read
    // committed); a reader's, the call's own snapshot.
    let snapshot = if crate::reader::in_reader() {
        pg_sys::GetActiveSnapshot()
    } else {
        pg_sys::CommandCounterIncrement();
        pg_sys::GetTransactionSnapshot()
    };
    let snapshot = pg_sys::RegisterSnapshot(snapshot);
    let scan = pg_sys::index_beginscan(rel, index, snapshot, keys as i32, 0);
    let slot = pg_sys::table_slot_create(rel, null_mut());
    let mut outcome = Ok(true);
    let mut row = Vec::with_capacity(columns.len());
    // Each pass after the first sets the values after `equal` anew; a key with a NULL in it
    // matches no row.
    'passes: for (n, key) in passes.iter().enumerate() {
        if n > 0 {
            let values = compared(key, after, by_runs, s.each.is_some());
            for (j, &(_, value, _)) in values.iter().enumerate() {
                match to_datum(value, key_types[j], "each") {
                    Ok((_, true)) => continue 'passes,
                    Ok((datum, false)) => scan_keys[after + j].sk_argument = datum,
                    Err(e) => {
                        outcome = Err(e);
                        break 'passes;
                    }
                }
            }
        }
        pg_sys::index_rescan(scan, scan_keys.as_mut_ptr(), keys as i32, null_mut(), 0);
        // The run's next key not yet passed.
        let mut next = 0;
        while pg_sys::index_getnext_slot(scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
            // Only the columns up to the last one read are taken apart.
            pg_sys::slot_getsomeattrs(slot, width as i32);
            if let Some(c) = run_column {
                let found = int_at(slot, c, table.attribute(c).atttypid);
                while key.get(next).is_some_and(|k| k.as_i64() < Some(found)) {
                    next += 1;
                }
                if key.get(next).and_then(Value::as_i64) != Some(found) {
                    continue;
                }
            }
            // Text borrowed from the tuple, pinned until the scan moves on.
            row.clear();
            match columns
                .iter()
                .try_for_each(|&i| table.read_at(slot, i).map(|v| row.push(v)))
            {
                Ok(()) if f(&row) => {}
                Ok(()) => break 'passes,
                Err(e) => {
                    outcome = Err(e);
                    break 'passes;
                }
            }
        }
    }
    pg_sys::ExecDropSingleTupleTableSlot(slot);
    pg_sys::index_endscan(scan);
    pg_sys::UnregisterSnapshot(snapshot);
    pg_sys::index_close(index, pg_sys::NoLock as i32);
    outcome
}

/// Whether rules rewrite statements on `table` (see [`agentmem_core::Conn::rewrites`]).
pub fn rewrites(table: &str) -> Result<bool> {
    let Some(table) = Table::open_locked(table, pg_sys::AccessShareLock)? else {
        return Ok(false);
    };
    // SAFETY: the table is open.
    let rules = unsafe { has_rules(table.rel) };
    table.close();
    Ok(rules)
}

/// Inserts a row into `v.table`: `values` by column name, the other columns their defaults
/// (an identity column its next number), or NULL. Returns the `returning` columns.
pub fn insert(v: &Vouch, values: &[(&str, Value)], returning: &[&str]) -> Result<Vec<Value>> {
    let columns: Vec<&str> = values.iter().map(|(c, _)| *c).collect();
    with_rights(v.table, || {
        // SAFETY: the inserter is opened and closed here, on this call's transaction.
        unsafe {
            let mut rows = Inserter::open(v, &columns)?;
            let out = rows.write(v, |k| &values[k].1, returning);
            rows.close();
            out
        }
    })
}

/// Inserts rows into `v.table`: `values` holds them end to end, each giving `columns` in
/// order; the other columns take their defaults.
pub fn insert_rows(v: &Vouch, columns: &[&str], values: &[Value]) -> Result<()> {
    if columns.is_empty() || values.len() % columns.len() != 0 {
        return Err(Error::internal("rows to insert are not whole"));
    }
    with_rights(v.table, || {
        // SAFETY: as in `insert`.
        unsafe {
            let mut rows = Inserter::open(v, columns)?;
            let mut outcome = Ok(());
            for row in values.chunks(columns.len()) {
                if let Err(e) = rows.write(v, |k| &row[k], &[]) {
                    outcome = Err(e);
                    break;
                }
            }
            rows.close();
            outcome
        }
    })
}

/// Rows written into one table without statements: the table, its indexes, a slot and an
/// executor state opened once for all of them, each row's values made in memory freed at the
/// next.
struct Inserter {
    table: Table,
    estate: *mut pg_sys::EState,
    slot: *mut pg_sys::TupleTableSlot,
    indexes: *mut pg_sys::ResultRelInfo,
    /// For each attribute, the place of its value in a row; `None` for its default.
    given: Vec<Option<usize>>,
}

impl Inserter {
    /// Opens `v.table` for rows that give `columns`, in that order.
    ///
    /// # Safety
    ///
    /// In a transaction that may write; [`Inserter::close`] must follow.
    unsafe fn open(v: &Vouch, columns: &[&str]) -> Result<Inserter> {
        let table = Table::open(v.table)?.ok_or_else(|| gone(v))?;
        let given: Vec<Option<usize>> = (0..table.width())
            .map(|i| {
                let att = table.attribute(i);
                let name = attribute_name(att);
                (!att.attisdropped)
                    .then(|| columns.iter().position(|c| *c == name))
                    .flatten()
            })
            .collect();
        if let Some(c) = columns
            .iter()
            .enumerate()
            .find(|(k, _)| !given.contains(&Some(*k)))
        {
            table.close();
            return Err(Error::internal(format!(
                "{} has no column {}",
                v.table, c.1
            )));
        }
        let rel = table.rel;
        Ok(Inserter {
            estate: pg_sys::CreateExecutorState(),
            slot: pg_sys::table_slot_create(rel, null_mut()),
            indexes: open_indexes(rel),
            table,
            given,
        })
    }

    /// Writes the row whose `k`th column (of those `open` was given) is `value(k)`, and its
    /// index entries; returns its `returning` columns.
    ///
    /// # Safety
    ///
    /// The inserter is open.
    unsafe fn write<'v>(
        &mut self,
        v: &Vouch,
        value: impl Fn(usize) -> &'v Value,
        returning: &[&str],
    ) -> Result<Vec<Value>> {
        let context = pg_sys::MakePerTupleExprContext(self.estate);
        let memory = (*context).ecxt_per_tuple_memory;
        pg_sys::MemoryContextReset(memory);
        let outer = pg_sys::MemoryContextSwitchTo(memory);
        let out = self.write_in_context(v, value, returning);
        pg_sys::MemoryContextSwitchTo(outer);
        out
    }

    /// [`Inserter::write`], in the memory of the row.
    unsafe fn write_in_context<'v>(
        &mut self,
        v: &Vouch,
        value: impl Fn(usize) -> &'v Value,
        returning: &[&str],
    ) -> Result<Vec<Value>> {
        let (rel, slot) = (self.table.rel, self.slot);
        pg_sys::ExecClearTuple(slot);
        for (i, given) in self.given.iter().enumerate() {
            let att = self.table.attribute(i);
            *(*slot).tts_isnull.add(i) = true;
            if att.attisdropped {
                continue;
            }
            let name = attribute_name(att);
            let (datum, null) = match given {
                Some(k) => {
                    let value = value(*k);
                    check_params(std::slice::from_ref(value))?;
                    to_datum(value, att.atttypid, name)?
                }
                None => column_default(rel, self.estate, i),
            };
            if null && att.attnotnull {
                return Err(Error::invalid(
                    name,
                    format!(
                        "null value in column \"{name}\" of relation \"{}\"",
                        v.table
                    ),
                ));
            }
            *(*slot).tts_values.add(i) = datum;
            *(*slot).tts_isnull.add(i) = null;
        }
        let out = returning
            .iter()
            .map(|c| self.table.read(slot, c))
            .collect::<Result<Vec<_>>>()?;
        pg_sys::ExecStoreVirtualTuple(slot);
        pg_sys::simple_table_tuple_insert(rel, slot);
        insert_index_entries(self.indexes, slot, self.estate, false);
        Ok(out)
    }

    /// Releases what `open` took; the rows written are seen by the statements that follow.
    ///
    /// # Safety
    ///
    /// The inserter is open.
    unsafe fn close(self) {
        pg_sys::ExecDropSingleTupleTableSlot(self.slot);
        close_indexes(self.indexes);
        pg_sys::FreeExecutorState(self.estate);
        self.table.close();
        pg_sys::CommandCounterIncrement();
    }
}

/// Writes what `change` makes of the `read` columns of the row of `v.table` whose one-column
/// primary key is `key`, as an `UPDATE` would: the row's newest committed version is read, and
/// when a concurrent writer changed it before the new version was written (after waiting for
/// that writer to end), it is read again and `change` asked again. `false` when there is no
/// such row or `change` declines; the row is then left unlocked, as an `UPDATE` leaves a row
/// its condition passed over.
///
/// No tuple lock is taken before the write (logical replication's lookup takes one): the
/// update itself waits for and detects concurrent writers, and the lock would cost a WAL
/// record and a page change on every call.
pub fn update(v: &Vouch, key: &Value, read: &[&str], change: &mut Change<'_>) -> Result<bool> {
    with_rights(v.table, || update_row(v, key, read, change))
}

fn update_row(v: &Vouch, key: &Value, read: &[&str], change: &mut Change<'_>) -> Result<bool> {
    let table = Table::open(v.table)?.ok_or_else(|| gone(v))?;
    let (index_id, key_at) = match table.primary_key() {
        Some(k) => k,
        None => {
            table.close();
            return Err(gone(v));
        }
    };
    let key_att = table.attribute(key_at);
    // SAFETY: the table is open; the index is opened and closed here (its lock kept to the
    // transaction's end, as the statement's); each found version's slot keeps its buffer
    // pinned until the new version is written.
    let written = unsafe {
        match to_datum(key, key_att.atttypid, attribute_name(key_att)) {
            Ok((_, true)) => Ok(false),
            Ok((datum, false)) => {
                pg_sys::CommandCounterIncrement();
                let index = pg_sys::index_open(index_id, pg_sys::RowExclusiveLock as i32);
                let written = match scan_key(index, 0, pg_sys::BTEqualStrategyNumber, datum) {
                    Some(mut skey) => update_found(v, &table, index, &mut skey, read, change),
                    None => Err(gone(v)),
                };
                pg_sys::index_close(index, pg_sys::NoLock as i32);
                pg_sys::CommandCounterIncrement();
                written
            }
            Err(e) => Err(e),
        }
    };
    table.close();
    written
}

/// [`update_row`]'s reads and write, retried while a concurrent writer changes the row first.
///
/// # Safety
///
/// `table` and `index` (its primary key) are open; `skey` compares the index's column.
unsafe fn update_found(
    v: &Vouch,
    table: &Table,
    index: pg_sys::Relation,
    skey: &mut pg_sys::ScanKeyData,
    read: &[&str],
    change: &mut Change<'_>,
) -> Result<bool> {
    let rel = table.rel;
    let estate = pg_sys::CreateExecutorState();
    let found = pg_sys::table_slot_create(rel, null_mut());
    let new = pg_sys::table_slot_create(rel, null_mut());
    let outcome = loop {
        // The newest committed version (and this transaction's own earlier writes).
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        let scan = pg_sys::index_beginscan(rel, index, snapshot, 1, 0);
        pg_sys::index_rescan(scan, skey, 1, null_mut(), 0);
        let seen =
            pg_sys::index_getnext_slot(scan, pg_sys::ScanDirection::ForwardScanDirection, found);
        pg_sys::index_endscan(scan);
        pg_sys::UnregisterSnapshot(snapshot);
        if !seen {
            break Ok(false);
        }
        pg_sys::slot_getallattrs(found);
        let columns = match read
            .iter()
            .map(|c| table.read(found, c))
            .collect::<Result<Vec<_>>>()
        {
            Ok(c) => c,
            Err(e) => break Err(e),
        };
        let Some(changes) = change(&columns) else {
            break Ok(false);
        };
        if let Err(e) = fill_new_version(v, table, found, new, &changes) {
            break Err(e);
        }
        let mut tmfd: pg_sys::TM_FailureData = std::mem::zeroed();
        let mut lockmode = pg_sys::LockTupleMode::LockTupleNoKeyExclusive;
        let mut indexes_too = false;
        let result = pg_sys::table_tuple_update(
            rel,
            &mut (*found).tts_tid,
            new,
            pg_sys::GetCurrentCommandId(true),
            pg_sys::GetActiveSnapshot(),
            null_mut(),
            true,
            &mut tmfd,
            &mut lockmode,
            &mut indexes_too,
        );
        match result {
            pg_sys::TM_Result::TM_Ok => {
                if indexes_too {
                    write_index_entries(rel, new, estate, true);
                }
                break Ok(true);
            }
            // A concurrent writer updated or removed the row and committed: read it again.
            pg_sys::TM_Result::TM_Updated | pg_sys::TM_Result::TM_Deleted => continue,
            other => {
                break Err(Error::internal(format!(
                    "the update of a {} row failed ({other})",
                    v.table
                )))
            }
        }
    };
    pg_sys::ExecDropSingleTupleTableSlot(new);
    pg_sys::ExecDropSingleTupleTableSlot(found);
    pg_sys::FreeExecutorState(estate);
    outcome
}

/// Fills the slot `new` with the version of `found` that `changes` make, as a virtual tuple.
///
/// # Safety
///
/// Both slots are the table's; `found` holds a row.
unsafe fn fill_new_version(
    v: &Vouch,
    table: &Table,
    found: *mut pg_sys::TupleTableSlot,
    new: *mut pg_sys::TupleTableSlot,
    changes: &[(&'static str, Value)],
) -> Result<()> {
    pg_sys::ExecClearTuple(new);
    for i in 0..table.width() {
        *(*new).tts_values.add(i) = *(*found).tts_values.add(i);
        *(*new).tts_isnull.add(i) = *(*found).tts_isnull.add(i);
    }
    for (c, value) in changes {
        check_params(std::slice::from_ref(value))?;
        let i = table
            .column(c)
            .ok_or_else(|| Error::internal(format!("{} has no column {c}", v.table)))?;
        let att = table.attribute(i);
        let (datum, null) = to_datum(value, att.atttypid, c)?;
        if null && att.attnotnull {
            return Err(Error::invalid(*c, format!("null value in column \"{c}\"")));
        }
        *(*new).tts_values.add(i) = datum;
        *(*new).tts_isnull.add(i) = null;
    }
    pg_sys::ExecStoreVirtualTuple(new);
    Ok(())
}

/// The key that compares column `i` of the B-tree `index` with `datum` by `strategy`, the
/// operator its operator family has for the column's type; `None` when it has none.
///
/// # Safety
///
/// `index` is open and has a column `i`.
unsafe fn scan_key(
    index: pg_sys::Relation,
    i: usize,
    strategy: u32,
    datum: pg_sys::Datum,
) -> Option<pg_sys::ScanKeyData> {
    let family = *(*index).rd_opfamily.add(i);
    let input = *(*index).rd_opcintype.add(i);
    let operator = pg_sys::get_opfamily_member(family, input, input, strategy as i16);
    if operator == pg_sys::InvalidOid {
        return None;
    }
    let mut key: pg_sys::ScanKeyData = std::mem::zeroed();
    pg_sys::ScanKeyInit(
        &mut key,
        i as i16 + 1,
        strategy as u16,
        pg_sys::get_opcode(operator),
        datum,
    );
    key.sk_collation = *(*index).rd_indcollation.add(i);
    Some(key)
}

/// The error for a table that went away between the check and the write (a core bug, or DDL
/// in between).
fn gone(v: &Vouch) -> Error {
    Error::internal(format!("{} cannot be written directly", v.table))
}

/// An open table, locked as a write locks it until the transaction ends.
struct Table {
    rel: pg_sys::Relation,
}

impl Table {
    /// The table `name` as the core's statements find it (by the search path), locked as a
    /// write locks it; `None` when there is none or it is not a plain table (a view, a
    /// partitioned or foreign table).
    fn open(name: &str) -> Result<Option<Table>> {
        Table::open_locked(name, pg_sys::RowExclusiveLock)
    }

    /// [`Table::open`] with the lock `lock` (a read's, or a write's).
    fn open_locked(name: &str, lock: u32) -> Result<Option<Table>> {
        let relid = crate::relids::table(name);
        // SAFETY: the relation is opened only when it exists.
        unsafe {
            if relid == pg_sys::InvalidOid {
                return Ok(None);
            }
            let table = Table {
                rel: pg_sys::table_open(relid, lock as i32),
            };
            if (*(*table.rel).rd_rel).relkind != pg_sys::RELKIND_RELATION as std::ffi::c_char {
                table.close();
                return Ok(None);
            }
            Ok(Some(table))
        }
    }

    /// Closes the relation; its lock stays until the transaction ends.
    fn close(self) {
        // SAFETY: opened by `open`, closed once (this consumes it).
        unsafe { pg_sys::table_close(self.rel, pg_sys::NoLock as i32) }
    }

    fn width(&self) -> usize {
        // SAFETY: an open relation has a descriptor.
        unsafe { (*(*self.rel).rd_att).natts as usize }
    }

    /// The `i`th attribute; `i` is below [`Table::width`].
    fn attribute(&self, i: usize) -> &pg_sys::FormData_pg_attribute {
        // SAFETY: the descriptor holds `natts` attributes and lives while the relation is open.
        unsafe { &*(*(*self.rel).rd_att).attrs.as_ptr().add(i) }
    }

    /// The index of the live column `name`.
    fn column(&self, name: &str) -> Option<usize> {
        (0..self.width()).find(|&i| {
            let att = self.attribute(i);
            !att.attisdropped && has_name(att, name)
        })
    }

    /// Column `name` of the row in `slot`, whose values are all in place; JSON as Postgres
    /// prints it.
    ///
    /// # Safety
    ///
    /// `slot` is a slot of this table with its values deformed.
    unsafe fn read(&self, slot: *mut pg_sys::TupleTableSlot, name: &str) -> Result<Value> {
        self.read_at(slot, self.live_column(name)?)
            .map(ValueRef::into_owned)
    }

    /// [`Table::column`], an error when there is none.
    fn live_column(&self, name: &str) -> Result<usize> {
        self.column(name)
            .ok_or_else(|| Error::internal(format!("no column {name}")))
    }

    /// [`Table::read`] of the column at index `i`, found by [`Table::live_column`], text and
    /// bytes borrowed from the row.
    ///
    /// # Safety
    ///
    /// As for [`Table::read`], and `i` is below the table's width; what is borrowed lives
    /// while the slot holds the row.
    unsafe fn read_at<'a>(
        &self,
        slot: *mut pg_sys::TupleTableSlot,
        i: usize,
    ) -> Result<ValueRef<'a>> {
        let (datum, null) = (*(*slot).tts_values.add(i), *(*slot).tts_isnull.add(i));
        let oid = self.attribute(i).atttypid;
        if oid != pg_sys::JSONBOID || null {
            return crate::datum::column_ref(datum, null, oid);
        }
        // JSON as Postgres prints it: what the core reads here it parses, so the compact form
        // a statement's reading makes (through serde) would cost a parse and a print more.
        let text = pgrx::direct_function_call_as_datum(pg_sys::jsonb_out, &[Some(datum)])
            .ok_or_else(|| Error::internal("jsonb_out returned NULL"))?;
        let text = CStr::from_ptr(text.cast_mut_ptr::<std::ffi::c_char>());
        Ok(ValueRef::Text(text.to_string_lossy().into_owned().into()))
    }

    /// The primary key's index and its one column's attribute index.
    fn primary_key(&self) -> Option<(pg_sys::Oid, usize)> {
        // SAFETY: the index is opened to read its definition and closed at once; the lock
        // taken stays until the transaction ends, as the scan's would.
        unsafe {
            let index = pg_sys::RelationGetPrimaryKeyIndex(self.rel);
            if index == pg_sys::InvalidOid {
                return None;
            }
            let rel = pg_sys::index_open(index, pg_sys::RowExclusiveLock as i32);
            let form = (*rel).rd_index;
            let key = ((*form).indnatts == 1)
                .then(|| (*form).indkey.values.as_ptr().read())
                .filter(|&a| a > 0);
            pg_sys::index_close(rel, pg_sys::NoLock as i32);
            key.map(|a| (index, a as usize - 1))
        }
    }

    /// Whether a write of this table may skip its statement, as `v` vouches (see the module).
    fn allows(&self, v: &Vouch) -> bool {
        // SAFETY: reads the open relation's cached descriptor, constraints and triggers.
        unsafe {
            let rel = self.rel;
            let modes = match v.write {
                Write::Insert => [pg_sys::ACL_INSERT, pg_sys::ACL_SELECT],
                Write::Update => [pg_sys::ACL_UPDATE, pg_sys::ACL_SELECT],
            };
            // A rule rewrites the statement into others.
            if !caller_may(rel, &modes) || has_rules(rel) {
                return false;
            }
            let constr = (*(*rel).rd_att).constr;
            if !constr.is_null() {
                if (*constr).has_generated_stored {
                    return false;
                }
                for i in 0..(*constr).num_check as usize {
                    if !named((*(*constr).check.add(i)).ccname, v.checks) {
                        return false;
                    }
                }
            }
            let triggers = (*rel).trigdesc;
            if triggers.is_null() {
                return true;
            }
            let event = match v.write {
                Write::Insert => pg_sys::TRIGGER_TYPE_INSERT,
                Write::Update => pg_sys::TRIGGER_TYPE_UPDATE,
            } as i16;
            (0..(*triggers).numtriggers as usize).all(|i| {
                let t = &*(*triggers).triggers.add(i);
                if t.tgtype & event == 0
                    || t.tgenabled == pg_sys::TRIGGER_DISABLED as std::ffi::c_char
                {
                    return true;
                }
                if t.tgisinternal && t.tgconstraint != pg_sys::InvalidOid {
                    let name = pg_sys::get_constraint_name(t.tgconstraint);
                    !name.is_null() && named(name, v.foreign_keys)
                } else {
                    named(t.tgname, v.triggers)
                }
            })
        }
    }
}

/// Whether rules are defined on `rel` now (`relhasrules` stays set after the last is
/// dropped).
///
/// # Safety
///
/// `rel` is open.
unsafe fn has_rules(rel: pg_sys::Relation) -> bool {
    let rules = (*rel).rd_rules;
    !rules.is_null() && (*rules).numLocks > 0
}

/// Whether the current user may do to `rel` what the statement would, checked as the
/// executor checks it: each of the table privileges `modes` (not a column's), `USAGE` on its
/// schema, and no row-level security policy applying to them.
///
/// # Safety
///
/// `rel` is open.
unsafe fn caller_may(rel: pg_sys::Relation, modes: &[u32]) -> bool {
    caller_may_in((*rel).rd_id, (*(*rel).rd_rel).relnamespace, modes)
}

/// [`caller_may`] for the table `relid` of schema `namespace`.
///
/// # Safety
///
/// `relid` names an existing table.
unsafe fn caller_may_in(relid: pg_sys::Oid, namespace: pg_sys::Oid, modes: &[u32]) -> bool {
    let user = pg_sys::GetUserId();
    // One mode at a time: a check of several passes when any of them is granted.
    modes.iter().all(|&m| {
        pg_sys::pg_class_aclcheck(relid, user, m.into()) == pg_sys::AclResult::ACLCHECK_OK
    }) && pg_sys::pg_namespace_aclcheck(namespace, user, pg_sys::ACL_USAGE.into())
        == pg_sys::AclResult::ACLCHECK_OK
        && pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, false)
            != pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
}

/// Whether the C string `name` is one of `names`.
///
/// # Safety
///
/// `name` is a NUL-terminated string.
unsafe fn named(name: *const std::ffi::c_char, names: &[&str]) -> bool {
    let name = CStr::from_ptr(name).to_bytes();
    names.iter().any(|n| n.as_bytes() == name)
}

/// Whether `att` is named `name`, compared byte for byte: a scan looks up each of its columns
/// by name, and reading every attribute's name as text first cost more than the compare.
fn has_name(att: &pg_sys::FormData_pg_attribute, name: &str) -> bool {
    let (data, name) = (&att.attname.data, name.as_bytes());
    data.get(name.len()) == Some(&0) && data.iter().zip(name).all(|(&a, &b)| a as u8 == b)
}

fn attribute_name(att: &pg_sys::FormData_pg_attribute) -> &str {
    // SAFETY: `attname` is a NUL-terminated NameData.
    unsafe { CStr::from_ptr(att.attname.data.as_ptr()) }
        .to_str()
        .unwrap_or("")
}

/// Column `i`'s default as an `INSERT` computes it (an identity column's next number), or
/// NULL when it has none.
///
/// # Safety
///
/// `rel` is open, `estate` made for this write, `i` below the descriptor's width.
unsafe fn column_default(
    rel: pg_sys::Relation,
    estate: *mut pg_sys::EState,
    i: usize,
) -> (pg_sys::Datum, bool) {
    let att = &*(*(*rel).rd_att).attrs.as_ptr().add(i);
    let expr = if att.attidentity != 0 {
        let next = pg_sys::palloc0(std::mem::size_of::<pg_sys::NextValueExpr>())
            .cast::<pg_sys::NextValueExpr>();
        (*next).xpr.type_ = pg_sys::NodeTag::T_NextValueExpr;
        (*next).seqid = identity_sequence((*rel).rd_id, i as i16 + 1);
        (*next).typeId = att.atttypid;
        next.cast::<pg_sys::Node>()
    } else {
        pg_sys::build_column_default(rel, i as i32 + 1)
    };
    if expr.is_null() {
        return (pg_sys::Datum::from(0usize), true);
    }
    let state = pg_sys::ExecPrepareExpr(expr.cast(), estate);
    let mut context = (*estate).es_per_tuple_exprcontext;
    if context.is_null() {
        context = pg_sys::MakePerTupleExprContext(estate);
    }
    let mut null = false;
    let datum = pg_sys::ExecEvalExpr(state, context, &mut null);
    (datum, null)
}

/// Kept scans a backend holds at most: a backend that writes to the search indexes of many
/// resources keeps a read of each one's meta row; past the bound, all are read again.
const KEPT_SCANS: usize = 4096;

thread_local! {
    /// The sequences of identity columns, by table and column: Postgres finds one by scanning
    /// the catalog of dependencies, at every insert. Forgotten when the table's cached
    /// definition is invalidated (an `ALTER TABLE` that drops or adds the identity does).
    static SEQUENCES: RefCell<HashMap<(pg_sys::Oid, i16), pg_sys::Oid>> =
        RefCell::new(HashMap::new());
    /// The rows of kept scans ([`scan_kept`]), by table and scan; forgotten likewise.
    static KEPT: RefCell<HashMap<(pg_sys::Oid, String), Vec<Vec<Value>>>> =
        RefCell::new(HashMap::new());
    static WATCHING: Cell<bool> = const { Cell::new(false) };
}

/// Makes sure [`forget_table`] hears of every invalidated table.
fn watch_tables() {
    if !WATCHING.with(|w| w.replace(true)) {
        // SAFETY: registers a callback with a static lifetime, once per backend.
        unsafe {
            pg_sys::CacheRegisterRelcacheCallback(Some(forget_table), pg_sys::Datum::from(0usize))
        };
    }
}

/// The sequence of identity column `attnum` of table `relid`.
///
/// # Safety
///
/// The column is an identity column of an open table.
unsafe fn identity_sequence(relid: pg_sys::Oid, attnum: i16) -> pg_sys::Oid {
    watch_tables();
    if let Some(seq) = SEQUENCES.with(|m| m.borrow().get(&(relid, attnum)).copied()) {
        return seq;
    }
    let seq = pg_sys::getIdentitySequence(relid, attnum, false);
    SEQUENCES.with(|m| m.borrow_mut().insert((relid, attnum), seq));
    seq
}

/// Drops what is known of table `relid` (of every table when it is invalid): its identity
/// sequences and kept rows.
#[pg_guard]
unsafe extern "C-unwind" fn forget_table(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    let stays = |r: pg_sys::Oid| relid != pg_sys::InvalidOid && r != relid;
    // Never borrowed across a call into Postgres, so free whenever an invalidation arrives.
    SEQUENCES.with(|m| m.borrow_mut().retain(|&(r, _), _| stays(r)));
    KEPT.with(|m| m.borrow_mut().retain(|(r, _), _| stays(*r)));
}

/// Writes the index entries of the tuple just stored from `slot`, as the executor does after
/// a heap insert (or an update that could not stay on its page): unique indexes raise their
/// violation here.
///
/// # Safety
///
/// `slot` holds the tuple just written to `rel`, `estate` is made for this write.
unsafe fn write_index_entries(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    estate: *mut pg_sys::EState,
    update: bool,
) {
    let indexes = open_indexes(rel);
    insert_index_entries(indexes, slot, estate, update);
    close_indexes(indexes);
}

/// The indexes of `rel` opened for writing, or null when it has none.
///
/// # Safety
///
/// `rel` is open; [`close_indexes`] must follow.
unsafe fn open_indexes(rel: pg_sys::Relation) -> *mut pg_sys::ResultRelInfo {
    if !(*(*rel).rd_rel).relhasindex {
        return null_mut();
    }
    let info = pg_sys::palloc0(std::mem::size_of::<pg_sys::ResultRelInfo>())
        .cast::<pg_sys::ResultRelInfo>();
    (*info).type_ = pg_sys::NodeTag::T_ResultRelInfo;
    (*info).ri_RelationDesc = rel;
    pg_sys::ExecOpenIndices(info, false);
    info
}

/// [`write_index_entries`] into indexes [`open_indexes`] opened (none when null).
///
/// # Safety
///
/// As for [`write_index_entries`], `indexes` opened for the same table.
unsafe fn insert_index_entries(
    indexes: *mut pg_sys::ResultRelInfo,
    slot: *mut pg_sys::TupleTableSlot,
    estate: *mut pg_sys::EState,
    update: bool,
) {
    if !indexes.is_null() {
        pg_sys::ExecInsertIndexTuples(indexes, slot, estate, update, false, null_mut(), null_mut());
    }
}

/// Closes what [`open_indexes`] opened. The indexes' locks stay until the transaction ends,
/// as the table's do (`ExecCloseIndices` releases them, and taking them again for the next
/// row or call cost more than holding them: a call writes seven indexes).
///
/// # Safety
///
/// `indexes` came from [`open_indexes`] and is closed once.
unsafe fn close_indexes(indexes: *mut pg_sys::ResultRelInfo) {
    if indexes.is_null() {
        return;
    }
    let n = usize::try_from((*indexes).ri_NumIndices).unwrap_or(0);
    for i in 0..n {
        let index = *(*indexes).ri_IndexRelationDescs.add(i);
        if !index.is_null() {
            pg_sys::index_close(index, pg_sys::NoLock as i32);
        }
    }
}

/// What one pass of a scan compares the index columns from `at` with, and how: a run's first
/// and last key as the bounds of one column, a key of `each` column by column, or `from` as
/// a lower bound.
fn compared(key: &[Value], at: usize, run: bool, each: bool) -> Vec<(usize, &Value, u32)> {
    match (run, each) {
        (true, _) => vec![
            (at, &key[0], pg_sys::BTGreaterEqualStrategyNumber),
            (at, &key[key.len() - 1], pg_sys::BTLessEqualStrategyNumber),
        ],
        (false, true) => key
            .iter()
            .enumerate()
            .map(|(j, v)| (at + j, v, pg_sys::BTEqualStrategyNumber))
            .collect(),
        (false, false) => key
            .iter()
            .map(|v| (at, v, pg_sys::BTGreaterEqualStrategyNumber))
            .collect(),
    }
}

/// How far past the last key of a run the next may lie and still join it (see
/// [`agentmem_core::db::direct::Each::runs`]): a row between them that was not asked for
/// costs a read of its tuple, about a quarter of a descent from the index's root.
pub(crate) const RUN_GAP: i64 = 4;

fn is_integer(oid: pg_sys::Oid) -> bool {
    matches!(oid, pg_sys::INT8OID | pg_sys::INT4OID | pg_sys::INT2OID)
}

/// The integer at attribute `i` of `slot`, whose type `oid` is one [`is_integer`] accepts;
/// the values up to it are deformed and it is not NULL (an index key of a run).
///
/// # Safety
///
/// `slot` holds a row whose attributes up to `i` are deformed.
unsafe fn int_at(slot: *mut pg_sys::TupleTableSlot, i: usize, oid: pg_sys::Oid) -> i64 {
    let datum = *(*slot).tts_values.add(i);
    match oid {
        pg_sys::INT8OID => datum.value() as i64,
        pg_sys::INT4OID => datum.value() as i32 as i64,
        _ => datum.value() as i16 as i64,
    }
}

/// A core value as a datum of the column's type; a value of another kind is a core bug.
///
/// # Safety
///
/// Allocates in the current memory context, which outlives the write.
unsafe fn to_datum(value: &Value, oid: pg_sys::Oid, column: &str) -> Result<(pg_sys::Datum, bool)> {
    let datum = match (value, oid) {
        (Value::Null, _) => return Ok((pg_sys::Datum::from(0usize), true)),
        (Value::Int(i), pg_sys::INT8OID) => i.into_datum(),
        (Value::Int(i), pg_sys::INT4OID) => i32::try_from(*i).ok().into_datum(),
        (Value::Int(i), pg_sys::INT2OID) => i16::try_from(*i).ok().into_datum(),
        (Value::Real(f), pg_sys::FLOAT8OID) => f.into_datum(),
        (Value::Text(s), pg_sys::TEXTOID) => s.as_str().into_datum(),
        (Value::Text(s), pg_sys::JSONBOID) => {
            let text = CString::new(s.as_str()).map_err(|_| Error::invalid(column, "holds NUL"))?;
            pgrx::direct_function_call::<pg_sys::Datum>(
                pg_sys::jsonb_in,
                &[Some(pg_sys::Datum::from(text.as_ptr()))],
            )
        }
        (Value::Blob(b), pg_sys::BYTEAOID) => b.as_slice().into_datum(),
        _ => None,
    };
    datum.map(|d| (d, false)).ok_or_else(|| {
        Error::internal(format!(
            "column {column} (type {oid:?}) cannot take this value"
        ))
    })
}
