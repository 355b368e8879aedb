//! Postgres values as the core's: a column of a row read by a statement or directly, by its
//! type.

use agentmem_core::{Error, Result, Value};
use pgrx::prelude::*;

/// A result column as a core value, by its Postgres type.
///
/// # Safety
///
/// `datum` is a value of type `oid` (or NULL) that lives until the call returns.
pub unsafe fn column(datum: pg_sys::Datum, null: bool, oid: pg_sys::Oid) -> Result<Value> {
    if null {
        return Ok(Value::Null);
    }
    let v = match oid {
        pg_sys::INT8OID => i64::from_datum(datum, false).map(Value::Int),
        pg_sys::INT4OID => i32::from_datum(datum, false).map(|v| Value::Int(v.into())),
        pg_sys::INT2OID => i16::from_datum(datum, false).map(|v| Value::Int(v.into())),
        pg_sys::BOOLOID => bool::from_datum(datum, false).map(|v| Value::Int(v.into())),
        pg_sys::FLOAT8OID => f64::from_datum(datum, false).map(Value::Real),
        pg_sys::FLOAT4OID => f32::from_datum(datum, false).map(|v| Value::Real(v.into())),
        pg_sys::BYTEAOID => <&[u8]>::from_datum(datum, false).map(|b| Value::Blob(b.to_vec())),
        pg_sys::JSONBOID => {
            pgrx::JsonB::from_datum(datum, false).map(|j| Value::Text(j.0.to_string()))
        }
        pg_sys::TEXTOID | pg_sys::VARCHAROID => {
            <&str>::from_datum(datum, false).map(|t| Value::Text(t.to_owned()))
        }
        _ => String::try_from_datum(datum, false, oid)
            .map_err(|e| Error::Database(e.to_string()))?
            .map(Value::Text),
    };
    Ok(v.unwrap_or(Value::Null))
}
