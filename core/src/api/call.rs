//! One call's arguments, read with errors that name the argument.

use super::Function;
use crate::{Error, Result, Value};

/// The arguments of one call of a catalog function, as the adapter read them: absent
/// optional arguments are NULL. SQLite hands text over as bytes (checked as UTF-8 here), so
/// every host gets the same errors.
pub struct Call<'f> {
    function: &'f Function,
    values: Vec<Value>,
    /// For a table function: bit i set when the statement reads output column i.
    columns: u64,
}

impl<'f> Call<'f> {
    /// A call of `function` with `values`; refuses a wrong number of arguments.
    pub fn new(function: &'f Function, values: Vec<Value>) -> Result<Call<'f>> {
        if values.len() < function.required || values.len() > function.args.len() {
            return Err(super::arity_error(function, values.len()));
        }
        Ok(Call {
            function,
            values,
            columns: u64::MAX,
        })
    }

    /// Only the output columns in `columns` (bit i for column i) are read by the statement.
    pub fn with_columns(mut self, columns: u64) -> Self {
        self.columns = columns;
        self
    }

    /// Whether the statement reads output column `i` (a table function may skip costly work
    /// for a column nobody reads).
    pub fn reads_column(&self, i: usize) -> bool {
        i >= 63 || self.columns & (1 << i) != 0
    }

    fn name(&self, i: usize) -> &'static str {
        self.function.args.get(i).map_or("argument", |a| a.name)
    }

    fn value(&self, i: usize) -> &Value {
        self.values.get(i).unwrap_or(&Value::Null)
    }

    /// Argument `i` as text; NULL or absent gives `None`. Numbers are taken in their
    /// decimal form; bytes must be valid UTF-8; no text may hold U+0000
    /// ([`crate::args::no_nul`]).
    pub fn text(&self, i: usize) -> Result<Option<String>> {
        let s = match self.value(i) {
            Value::Null => return Ok(None),
            Value::Int(v) => v.to_string(),
            Value::Real(v) => v.to_string(),
            Value::Text(s) => s.clone(),
            Value::Blob(b) => String::from_utf8(b.clone())
                .map_err(|_| Error::invalid(self.name(i), "must be valid UTF-8 text"))?,
        };
        crate::args::no_nul(self.name(i), &s)?;
        Ok(Some(s))
    }

    /// Every text argument at once (see [`Texts`]), checked as [`Call::text`] checks one.
    pub fn texts(&self) -> Result<Texts> {
        let all = (0..self.function.args.len())
            .map(|i| match self.function.args[i].ty {
                super::Type::Text => self.text(i),
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        Ok(Texts(all))
    }

    /// Argument `i` as bytes, unchecked (the tools check UTF-8 themselves, to answer with
    /// JSON instead of an SQL error); numbers in their decimal form.
    pub fn bytes(&self, i: usize) -> Option<Vec<u8>> {
        match self.value(i) {
            Value::Null => None,
            Value::Int(v) => Some(v.to_string().into_bytes()),
            Value::Real(v) => Some(v.to_string().into_bytes()),
            Value::Text(s) => Some(s.clone().into_bytes()),
            Value::Blob(b) => Some(b.clone()),
        }
    }

    /// Argument `i` as bytes of a blob; NULL or absent gives `None`. Text is refused: the
    /// bytes of a text are not what its writer meant them to be.
    pub fn blob(&self, i: usize) -> Result<Option<Vec<u8>>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Blob(b) => Ok(Some(b.clone())),
            _ => Err(Error::invalid(
                self.name(i),
                "must be a blob (float32 little-endian); for a JSON array use mem_vector('[…]')",
            )),
        }
    }

    /// Argument `i` as an integer; NULL or absent gives `None`.
    pub fn int(&self, i: usize) -> Result<Option<i64>> {
        match self.value(i) {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(*v)),
            _ => Err(Error::invalid(self.name(i), "must be an integer")),
        }
    }
}

/// A call's text arguments, by position (`None` for NULL, absent, or not a text argument).
pub struct Texts(Vec<Option<String>>);

impl Texts {
    /// Argument `i`.
    pub fn at(&self, i: usize) -> Option<&str> {
        self.0.get(i).and_then(|t| t.as_deref())
    }
}
