//! [`Conn`] over SPI, inside the calling transaction.
//!
//! Statement errors raised by Postgres unwind through the core as pgrx error reports and
//! abort the statement like any other SQL error; the core never catches them.

#[cfg(feature = "pg15")]
use agentmem_core::db::conn::Change;
#[cfg(feature = "pg15")]
use agentmem_core::db::direct::{Scan, Vouch};
use agentmem_core::db::privilege::Privilege;
use agentmem_core::db::session::Session;
use agentmem_core::{Conn, Dialect, Error, Result, Row, Value, ValueRef};
use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::panic::{CaughtError, ErrorReport};
use pgrx::prelude::*;

pub struct SpiConn;

/// A parameter as SPI wants it: a datum with its type. NULL travels as text; core statements
/// cast nullable non-text parameters explicitly.
fn param(v: &Value) -> DatumWithOid<'_> {
    match v {
        Value::Null => DatumWithOid::null::<String>(),
        Value::Int(i) => (*i).into(),
        Value::Real(f) => (*f).into(),
        Value::Text(s) => s.as_str().into(),
        Value::Blob(b) => b.as_slice().into(),
        Value::Json(j) => j.to_text().into(),
    }
}

/// Every row of the statement SPI just ran, each tuple deformed once (reading its columns
/// one by one walks the tuple again for each column after the first variable-width one).
fn rows(table: &pgrx::spi::SpiTupleTable<'_>) -> Result<Vec<Row>> {
    // SAFETY: `table` is the result of the statement just run in this SPI connection, so
    // `SPI_tuptable` is its table: `len()` tuples of its descriptor, alive until the
    // connection ends. Each tuple is deformed into buffers of the descriptor's width.
    unsafe {
        let tt = pg_sys::SPI_tuptable;
        if table.is_empty() || tt.is_null() {
            return Ok(Vec::new());
        }
        let desc = pgrx::PgTupleDesc::from_pg_unchecked((*tt).tupdesc);
        let oids: Vec<pg_sys::Oid> = (0..desc.len())
            .map(|i| desc.get(i).map_or(pg_sys::InvalidOid, |a| a.atttypid))
            .collect();
        let mut datums = vec![pg_sys::Datum::from(0usize); oids.len()];
        let mut nulls = vec![true; oids.len()];
        let tuples = std::slice::from_raw_parts((*tt).vals, table.len());
        tuples
            .iter()
            .map(|&tuple| {
                pg_sys::heap_deform_tuple(
                    tuple,
                    (*tt).tupdesc,
                    datums.as_mut_ptr(),
                    nulls.as_mut_ptr(),
                );
                (0..oids.len())
                    .map(|i| crate::datum::column(datums[i], nulls[i], oids[i]))
                    .collect()
            })
            .collect()
    }
}

fn spi_err(e: impl std::fmt::Display) -> Error {
    Error::Database(e.to_string())
}

/// Plans kept for the life of the backend (`SPI_keepplan`), keyed by the core's SQL text and
/// the parameter types, so a trigger running the same statements for every row does not
/// parse and plan them each time. Postgres revalidates kept plans itself (DDL, search_path),
/// and a backend runs one statement at a time, so a thread-local map is enough. A statement
/// whose preparation fails is not kept (the error aborts the statement as before).
mod plans {
    use agentmem_core::db::privilege::Privilege;
    use pgrx::pg_sys::{self, PgOid};
    use pgrx::spi::{OwnedPreparedStatement, SpiClient};
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;

    /// Distinct plans kept (the core has a few dozen statements).
    const MAX_PLANS: usize = 512;

    /// A statement's plan, and the rights it runs with (read from its text once).
    pub(super) struct Kept {
        pub plan: OwnedPreparedStatement,
        pub privilege: Privilege,
    }

    type Key = (String, Vec<pg_sys::Oid>);

    thread_local! {
        static PLANS: RefCell<HashMap<Key, Rc<Kept>>> = RefCell::new(HashMap::new());
    }

    /// The kept plan for `sql` with these parameter types, if it was prepared before.
    pub(super) fn kept(sql: &str, oids: &[pg_sys::Oid]) -> Option<Rc<Kept>> {
        // Keyed by the core text (before rendering), so a hit allocates nothing but the key.
        let key = (sql.to_owned(), oids.to_vec());
        PLANS.with(|m| m.borrow().get(&key).cloned())
    }

    /// Prepares `sql` (rendered by `render`) and keeps its plan.
    pub(super) fn prepare(
        client: &SpiClient<'_>,
        sql: &str,
        oids: &[pg_sys::Oid],
        privilege: Privilege,
        render: impl FnOnce() -> String,
    ) -> Result<Rc<Kept>, pgrx::spi::SpiError> {
        let args: Vec<PgOid> = oids.iter().map(|o| PgOid::from(*o)).collect();
        // Not marked mutating: whether a run may write is the caller's (see `with_plan`).
        let plan = client.prepare(render().as_str(), &args)?.keep();
        let kept = Rc::new(Kept { plan, privilege });
        PLANS.with(|m| {
            let mut m = m.borrow_mut();
            if m.len() < MAX_PLANS {
                m.insert((sql.to_owned(), oids.to_vec()), kept.clone());
            }
        });
        Ok(kept)
    }
}

/// Runs `sql` through its kept plan, with the rights its privilege names: the owner's for a
/// statement on derived data only, the caller's for every other (see [`crate::owner`]).
/// Within a reader's call (see [`crate::reader`]) it runs read-only, as Postgres runs a
/// `STABLE` function's statements: on the call's snapshot, with no transaction id taken —
/// which a statement that may write takes, and a transaction that has one must commit to the
/// WAL.
fn with_plan<T>(
    sql: &str,
    params: &[Value],
    f: impl FnOnce(pgrx::spi::SpiTupleTable<'_>) -> Result<T>,
) -> Result<T> {
    agentmem_core::db::value::check_params(params)?;
    crate::pinned::before_statement();
    let args: Vec<DatumWithOid> = params.iter().map(param).collect();
    let oids: Vec<pg_sys::Oid> = args.iter().map(|a| a.oid()).collect();
    let kept = plans::kept(sql, &oids);
    let privilege = match &kept {
        Some(k) => k.privilege,
        None => agentmem_core::db::privilege::of(sql)?,
    };
    let run = || {
        Spi::connect_mut(|client| {
            let kept = match kept {
                Some(k) => k,
                None => plans::prepare(client, sql, &oids, privilege, || {
                    Dialect::Postgres.statement(sql)
                })
                .map_err(spi_err)?,
            };
            let table = if crate::reader::in_reader() {
                client.select(&kept.plan, None, &args)
            } else {
                client.update(&kept.plan, None, &args)
            };
            f(table.map_err(spi_err)?)
        })
    };
    match privilege {
        Privilege::Owner => crate::owner::as_owner(run),
        Privilege::Caller => run(),
    }
}

fn run(sql: &str, params: &[Value]) -> Result<Vec<Row>> {
    with_plan(sql, params, |table| rows(&table))
}

/// A caught error's message, as a core error (what an attempt answers with).
fn caught_error(e: CaughtError) -> Error {
    match e {
        CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) => {
            Error::Database(r.message().to_string())
        }
        CaughtError::RustPanic { ereport, .. } => Error::internal(ereport.message().to_string()),
    }
}

/// Raises a caught Postgres error again, its message named by `context`, its SQLSTATE, detail
/// and hint kept; a Rust panic goes on as it was.
fn raise_in_context(e: CaughtError, context: &str) -> ! {
    let report = match e {
        CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) => r,
        other => other.rethrow(),
    };
    let mut again = ErrorReport::new(
        report.sql_error_code(),
        format!("{context}: {}", report.message()),
        "agentmem",
    );
    if let Some(d) = report.detail() {
        again = again.set_detail(d);
    }
    if let Some(h) = report.hint() {
        again = again.set_hint(h);
    }
    again.report(PgLogLevel::ERROR);
    unreachable!("an ERROR does not return")
}

impl Conn for SpiConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn as_conn(&mut self) -> &mut dyn Conn {
        self
    }

    /// The backend's session (see [`crate::session`]).
    fn session(&mut self) -> &mut Session {
        crate::session::get()
    }

    /// A subtransaction, as PL/pgSQL's `BEGIN … EXCEPTION` block runs one: released when
    /// `f` succeeds, rolled back (with what `f` wrote) when it fails, an error Postgres raised
    /// inside it included, which is caught and answered as a value.
    fn attempt(&mut self, f: &mut agentmem_core::db::conn::Work<'_>) -> Result<Result<()>> {
        // SAFETY: the memory context and resource owner are restored after the
        // subtransaction ends, either way, as PL/pgSQL does around its exception blocks.
        let (context, owner) =
            unsafe { (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner) };
        // Outside the subtransaction: its end, either way, would put back settings set in it.
        crate::pinned::before_statement();
        unsafe {
            pg_sys::BeginInternalSubTransaction(std::ptr::null());
            pg_sys::MemoryContextSwitchTo(context);
        }
        let outcome = PgTryBuilder::new(std::panic::AssertUnwindSafe(|| f(&mut SpiConn)))
            .catch_others(|e| Err(caught_error(e)))
            .execute();
        // SAFETY: ends the subtransaction begun above, then puts back what it changed.
        unsafe {
            if outcome.is_ok() {
                pg_sys::ReleaseCurrentSubTransaction();
            } else {
                pg_sys::RollbackAndReleaseCurrentSubTransaction();
            }
            pg_sys::MemoryContextSwitchTo(context);
            pg_sys::CurrentResourceOwner = owner;
        }
        Ok(outcome)
    }

    /// Errors of the core get the context as values; errors Postgres raised are caught and
    /// raised again with it (the statement fails either way, so nothing runs in between).
    fn in_context(
        &mut self,
        context: &str,
        f: &mut agentmem_core::db::conn::Work<'_>,
    ) -> Result<()> {
        PgTryBuilder::new(std::panic::AssertUnwindSafe(|| f(&mut SpiConn)))
            .catch_others(|e| raise_in_context(e, context))
            .execute()
            .map_err(|e| e.in_context(context))
    }

    /// The session settings `agentmem.failpoint` and `agentmem.failpoint_mark` (crash tests).
    fn failpoint(&mut self) -> Option<(String, String)> {
        let setting = |name: &std::ffi::CStr| -> Option<String> {
            // SAFETY: a NUL-terminated name; missing_ok, so an unset option gives NULL; the
            // returned string is copied before anything else runs.
            let p = unsafe { pg_sys::GetConfigOption(name.as_ptr(), true, false) };
            if p.is_null() {
                return None;
            }
            let s = unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned();
            Some(s).filter(|s| !s.is_empty())
        };
        Some((
            setting(c"agentmem.failpoint")?,
            setting(c"agentmem.failpoint_mark")?,
        ))
    }

    /// `CHECK_FOR_INTERRUPTS()`: a cancel request or `statement_timeout` raises its error
    /// here, which unwinds through the core like any Postgres error.
    fn check_interrupt(&mut self) -> Result<()> {
        pgrx::check_for_interrupts!();
        Ok(())
    }

    /// Outside `BEGIN … COMMIT` (and outside a multi-statement query string, which Postgres
    /// runs as an implicit block) the statement commits alone.
    fn statement_is_transaction(&mut self) -> bool {
        // SAFETY: reads the backend's transaction state; callable whenever a function runs.
        !unsafe { pg_sys::IsTransactionBlock() }
    }

    /// `clock_timestamp()` read without a statement, rounded to the millisecond as
    /// `(extract(epoch from clock_timestamp()) * 1000)::bigint` rounds it.
    fn now_ms(&mut self) -> Result<i64> {
        /// 2000-01-01, where Postgres' timestamps count from, in Unix epoch milliseconds.
        const POSTGRES_EPOCH_MS: i64 = 946_684_800_000;
        // SAFETY: reads the system clock; callable from any backend code.
        let micros = unsafe { pg_sys::GetCurrentTimestamp() };
        Ok((micros + 500).div_euclid(1000) + POSTGRES_EPOCH_MS)
    }

    /// Remembered per backend (see [`crate::page_space`]).
    fn pages_freed(&mut self, places: &[i64]) -> Result<()> {
        crate::page_space::note(places);
        Ok(())
    }

    fn reuse_freed_pages(&mut self) -> Result<()> {
        crate::page_space::reuse();
        Ok(())
    }

    /// See [`crate::direct`].
    #[cfg(feature = "pg15")]
    fn writes_directly(&mut self, vouches: &[&Vouch]) -> Result<bool> {
        crate::direct::usable(vouches)
    }

    #[cfg(feature = "pg15")]
    fn scan_directly(
        &mut self,
        scan: &Scan<'_>,
        f: &mut dyn FnMut(&[ValueRef<'_>]) -> bool,
    ) -> Result<bool> {
        crate::direct::scan(scan, f)
    }

    #[cfg(feature = "pg15")]
    fn rewrites(&mut self, table: &str) -> Result<bool> {
        crate::direct::rewrites(table)
    }

    #[cfg(feature = "pg15")]
    fn table_changed(&mut self, table: &str) -> Result<()> {
        crate::direct::table_changed(table)
    }

    #[cfg(feature = "pg15")]
    fn insert_directly(
        &mut self,
        v: &Vouch,
        values: &[(&str, Value)],
        returning: &[&str],
    ) -> Result<Vec<Value>> {
        crate::direct::insert(v, values, returning)
    }

    #[cfg(feature = "pg15")]
    fn insert_rows_directly(
        &mut self,
        v: &Vouch,
        columns: &[&str],
        values: &[Value],
    ) -> Result<()> {
        crate::direct::insert_rows(v, columns, values)
    }

    #[cfg(feature = "pg15")]
    fn update_directly(
        &mut self,
        v: &Vouch,
        key: &Value,
        read: &[&str],
        change: &mut Change<'_>,
    ) -> Result<bool> {
        crate::direct::update(v, key, read, change)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        run(sql, params)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        with_plan(sql, params, |table| Ok(table.len() as u64))
    }

    fn execute_batch(&mut self, sql: &str) -> Result<()> {
        crate::pinned::before_statement();
        let sql = Dialect::Postgres.statement(sql);
        Spi::connect_mut(|client| {
            client
                .update(sql.as_str(), None, &[])
                .map(|_| ())
                .map_err(spi_err)
        })
    }
}
