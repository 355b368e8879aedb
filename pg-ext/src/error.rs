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
                Error::Internal(_) => PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            };
            ereport!(ERROR, code, e.to_string());
        }
    }
}

/// JSON made by the core, as `jsonb`: Postgres users get operators (`->>`) and indexing, and
/// `->>` on the result reads the same as SQLite's `->>` on its text.
pub fn json(text: String) -> pgrx::JsonB {
    match serde_json::from_str(&text) {
        Ok(v) => pgrx::JsonB(v),
        Err(e) => ok(Err(Error::internal(format!(
            "core produced invalid JSON: {e}"
        )))),
    }
}
