//! Core errors and core JSON crossing into Postgres.

use agentmem_core::Error;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

/// Unwraps a core result, raising its error as a Postgres ERROR.
pub fn ok<T>(r: agentmem_core::Result<T>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => {
            let code = match &e {
                Error::InvalidArgument { .. } => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                Error::NotFound { .. } => PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
                Error::Database(_) => PgSqlErrorCode::ERRCODE_DATA_EXCEPTION,
                Error::Refused(_) => PgSqlErrorCode::ERRCODE_RESTRICT_VIOLATION,
                Error::Internal(_) => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            };
            ereport!(ERROR, code, e.to_string());
        }
    }
}

/// JSON made by the core, as `jsonb`: Postgres users get operators (`->>`) and indexing, and
/// `->>` on the result reads the same as SQLite's `->>` on its text.
/// Arrays and objects are written straight into `jsonb` ([`crate::jsonb`]); what that does not
/// lay out is parsed by Postgres' own `jsonb_in` (which raises an ERROR if the core ever
/// produced invalid JSON).
pub fn jsonb(text: String) -> Option<pg_sys::Datum> {
    if let Some(d) =
        crate::jsonb::from_plain_array(&text).or_else(|| crate::jsonb::from_json(&text))
    {
        return Some(d);
    }
    let text = match std::ffi::CString::new(text) {
        Ok(t) => t,
        Err(_) => ok(Err(Error::internal("core produced JSON with a NUL byte"))),
    };
    // SAFETY: jsonb_in reads a NUL-terminated string that outlives the call.
    unsafe {
        pgrx::fcinfo::direct_function_call_as_datum(pg_sys::jsonb_in, &[Some(text.as_ptr().into())])
    }
}
