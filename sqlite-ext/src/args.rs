//! Reading SQL arguments into Rust values, with errors that name the argument.

use agentmem_core::{Error, Result, Value};
use sqlite_loadable::api::{self, ValueType};
use sqlite_loadable::ext::sqlite3_value;

/// The bytes of a text or blob value. (sqlite-loadable's `value_blob` builds a slice from
/// the NULL pointer SQLite returns for an empty value, which aborts the process.)
fn bytes(v: *mut sqlite3_value) -> Vec<u8> {
    // SAFETY: v is a live argument; blob() before bytes() as the SQLite docs require, and the
    // pointer is valid for `n` bytes until the value changes, which it does not here.
    unsafe {
        let p = crate::api::call!(value_blob(v)) as *const u8;
        let n = crate::api::call!(value_bytes(v)) as usize;
        if p.is_null() || n == 0 {
            Vec::new()
        } else {
            std::slice::from_raw_parts(p, n).to_vec()
        }
    }
}

/// The arguments of one call, with their documented names for error messages.
pub struct Args<'a> {
    values: &'a [*mut sqlite3_value],
    names: &'static [&'static str],
    /// For a table function: bit i set when the statement reads output column i.
    columns: u32,
}

impl<'a> Args<'a> {
    pub fn new(values: &'a [*mut sqlite3_value], names: &'static [&'static str]) -> Self {
        Args {
            values,
            names,
            columns: u32::MAX,
        }
    }

    /// The output columns a table function's statement reads (see [`Args::reads_column`]).
    pub fn with_columns(mut self, columns: u32) -> Self {
        self.columns = columns;
        self
    }

    /// Whether the statement reads output column `i` (a table function may skip costly work
    /// for a column nobody reads).
    pub fn reads_column(&self, i: usize) -> bool {
        i >= 31 || self.columns & (1 << i) != 0
    }

    fn name(&self, i: usize) -> &'static str {
        self.names.get(i).copied().unwrap_or("argument")
    }

    /// Argument `i` as one of our values. Text and blobs must be UTF-8 when read as text.
    pub fn value(&self, i: usize) -> Value {
        // Absent optional arguments of table functions arrive as null pointers.
        let Some(v) = self.values.get(i).filter(|v| !v.is_null()) else {
            return Value::Null;
        };
        match api::value_type(v) {
            ValueType::Null => Value::Null,
            ValueType::Integer => Value::Int(api::value_int64(v)),
            ValueType::Float => Value::Real(api::value_double(v)),
            ValueType::Text | ValueType::Blob => Value::Blob(bytes(*v)),
        }
    }

    /// Argument `i` as text; NULL or absent gives `None`. Numbers are taken in their
    /// decimal form; blobs and text must be valid UTF-8.
    pub fn text(&self, i: usize) -> Result<Option<String>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(v.to_string())),
            Value::Real(v) => Ok(Some(v.to_string())),
            Value::Text(s) => Ok(Some(s)),
            Value::Blob(b) => String::from_utf8(b)
                .map(Some)
                .map_err(|_| Error::invalid(self.name(i), "must be valid UTF-8 text")),
        }
    }

    /// Argument `i` as bytes, unchecked (the tools check UTF-8 themselves, to answer with
    /// JSON instead of an SQL error); numbers in their decimal form.
    pub fn bytes(&self, i: usize) -> Option<Vec<u8>> {
        match self.value(i) {
            Value::Null => None,
            Value::Int(v) => Some(v.to_string().into_bytes()),
            Value::Real(v) => Some(v.to_string().into_bytes()),
            Value::Text(s) => Some(s.into_bytes()),
            Value::Blob(b) => Some(b),
        }
    }

    /// Argument `i` as an integer; NULL or absent gives `None`.
    pub fn int(&self, i: usize) -> Result<Option<i64>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            _ => Err(Error::invalid(self.name(i), "must be an integer")),
        }
    }
}
