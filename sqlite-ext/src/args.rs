//! Reading SQL arguments into the core's values.

use agentmem_core::{schema::types::Arg, Value};
use sqlite_loadable::api::{self, ValueType};
use sqlite_loadable::ext::sqlite3_value;

/// `f` of a value's bytes, borrowed: its UTF-8 text with `text` (SQLite converts a UTF-16
/// database's), else its bytes as stored. (sqlite-loadable's `value_blob` builds a slice from
/// the NULL pointer SQLite returns for an empty value, which aborts the process.)
fn borrowed<T>(v: *mut sqlite3_value, text: bool, f: impl FnOnce(&[u8]) -> T) -> T {
    // SAFETY: the value does not change during `f`.
    f(unsafe { in_place(v, text) })
}

/// A value's bytes in place (see [`borrowed`]).
///
/// # Safety
///
/// `v` is a live argument of the current call, and the slice is used only while the value
/// does not change: text() or blob() before bytes() as the SQLite docs require, and the
/// pointer is valid for `n` bytes until then.
unsafe fn in_place<'a>(v: *mut sqlite3_value, text: bool) -> &'a [u8] {
    let p = if text {
        crate::api::call!(value_text(v))
    } else {
        crate::api::call!(value_blob(v)) as *const u8
    };
    let n = crate::api::call!(value_bytes(v)) as usize;
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// `f` of a call's values as the schema's type checks read them: storage classes, and text
/// in place (a row's text is not copied to be checked). Every insert and update of a table
/// makes such a call, so its arguments are gathered on the stack when they fit.
pub fn checked<T>(values: &[*mut sqlite3_value], f: impl FnOnce(&[Arg]) -> T) -> T {
    let arg = |v: &*mut sqlite3_value| {
        if v.is_null() {
            return Arg::Null;
        }
        match api::value_type(v) {
            ValueType::Null => Arg::Null,
            ValueType::Integer => Arg::Int(api::value_int64(v)),
            ValueType::Float => Arg::Real,
            // SAFETY: the values are this call's, unchanged until it returns.
            ValueType::Text => Arg::Text(unsafe { in_place(*v, true) }),
            ValueType::Blob => Arg::Blob,
        }
    };
    let mut stack = [Arg::Null; 96];
    if values.len() <= stack.len() {
        for (slot, v) in stack.iter_mut().zip(values) {
            *slot = arg(v);
        }
        f(&stack[..values.len()])
    } else {
        f(&values.iter().map(arg).collect::<Vec<_>>())
    }
}

/// The bytes of a text or blob value, copied.
fn bytes(v: *mut sqlite3_value) -> Vec<u8> {
    borrowed(v, false, <[u8]>::to_vec)
}

/// `f` of the UTF-8 bytes of a text value, borrowed; `None` for a value that is not text.
pub fn with_text<T>(v: *mut sqlite3_value, f: impl FnOnce(&[u8]) -> T) -> Option<T> {
    (!v.is_null() && api::value_type(&v) == ValueType::Text).then(|| borrowed(v, true, f))
}

/// The values of a call, as the core reads them: text as text when it is valid UTF-8 (else as
/// bytes: the core checks UTF-8 and names the argument), blobs as bytes; absent optional
/// arguments of table functions, which arrive as null pointers, as NULL.
pub fn values(values: &[*mut sqlite3_value]) -> Vec<Value> {
    values
        .iter()
        .map(|v| {
            if v.is_null() {
                return Value::Null;
            }
            match api::value_type(v) {
                ValueType::Null => Value::Null,
                ValueType::Integer => Value::Int(api::value_int64(v)),
                ValueType::Float => Value::Real(api::value_double(v)),
                ValueType::Text => match String::from_utf8(bytes(*v)) {
                    Ok(s) => Value::Text(s),
                    Err(e) => Value::Blob(e.into_bytes()),
                },
                ValueType::Blob => Value::Blob(bytes(*v)),
            }
        })
        .collect()
}
