//! Postgres values as the core's: a column of a row read by a statement or directly, by its
//! type.

use agentmem_core::{Error, Result, Value, ValueRef};
use pgrx::prelude::*;

/// A result column as a core value, by its Postgres type.
///
/// # Safety
///
/// `datum` is a value of type `oid` (or NULL) that lives until the call returns.
pub unsafe fn column(datum: pg_sys::Datum, null: bool, oid: pg_sys::Oid) -> Result<Value> {
    column_ref(datum, null, oid).map(ValueRef::into_owned)
}

/// [`column`], its text and bytes borrowed from the datum (or from its detoasted copy in the
/// current memory context).
///
/// # Safety
///
/// `datum` is a value of type `oid` (or NULL) that lives as long as `'a`.
pub unsafe fn column_ref<'a>(
    datum: pg_sys::Datum,
    null: bool,
    oid: pg_sys::Oid,
) -> Result<ValueRef<'a>> {
    if null {
        return Ok(ValueRef::Null);
    }
    let v = match oid {
        pg_sys::INT8OID => i64::from_datum(datum, false).map(ValueRef::Int),
        pg_sys::INT4OID => i32::from_datum(datum, false).map(|v| ValueRef::Int(v.into())),
        pg_sys::INT2OID => i16::from_datum(datum, false).map(|v| ValueRef::Int(v.into())),
        pg_sys::BOOLOID => bool::from_datum(datum, false).map(|v| ValueRef::Int(v.into())),
        pg_sys::FLOAT8OID => f64::from_datum(datum, false).map(ValueRef::Real),
        pg_sys::FLOAT4OID => f32::from_datum(datum, false).map(|v| ValueRef::Real(v.into())),
        pg_sys::BYTEAOID => <&[u8]>::from_datum(datum, false).map(ValueRef::Blob),
        pg_sys::JSONBOID => {
            pgrx::JsonB::from_datum(datum, false).map(|j| ValueRef::Text(j.0.to_string().into()))
        }
        pg_sys::TEXTOID | pg_sys::VARCHAROID => {
            <&str>::from_datum(datum, false).map(|t| ValueRef::Text(t.into()))
        }
        _ => String::try_from_datum(datum, false, oid)
            .map_err(|e| Error::Database(e.to_string()))?
            .map(|t| ValueRef::Text(t.into())),
    };
    Ok(v.unwrap_or(ValueRef::Null))
}
