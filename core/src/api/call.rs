//! One call's arguments, and how each Rust parameter type of a declaration reads its
//! argument ([`Arg`]), with errors that name the argument.

use crate::columns::{Columns, Type, Wanted};
use crate::{Error, Result, Value};
use std::marker::PhantomData;

/// The arguments of one call of a catalog function, as the adapter read them: absent
/// optional arguments are NULL. SQLite hands text over as bytes (checked as UTF-8 here), so
/// every host gets the same errors.
pub struct Call {
    values: Vec<Value>,
    /// For a table function: bit i set when the statement reads output column i.
    columns: u64,
}

impl Call {
    /// The call with `values` (the function checked their number: [`Function::bind`](super::Function::bind)).
    pub(super) fn of(values: Vec<Value>) -> Call {
        Call {
            values,
            columns: u64::MAX,
        }
    }

    /// Only the output columns in `columns` (bit i for column i) are read by the statement.
    pub fn with_columns(mut self, columns: u64) -> Self {
        self.columns = columns;
        self
    }

    fn value(&self, i: usize) -> &Value {
        self.values.get(i).unwrap_or(&Value::Null)
    }
}

/// How an argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pass {
    /// Always (SQL has no default for it).
    Required,
    /// May be left out: `DEFAULT NULL`.
    Optional,
    /// Not an SQL argument: something the adapter knows of the call ([`Wanted`]).
    Hidden,
}

/// A parameter type of a catalog declaration: its SQL type, how it is passed, and how its
/// argument is read, in two steps so that a call's arguments are all checked (types, UTF-8)
/// before any NULL is refused (see [`read_texts`]).
pub(crate) trait Arg {
    const TYPE: Type;
    const PASS: Pass;
    /// What the first step keeps.
    type Read;
    /// What the core function is given.
    type Value<'a>;
    /// Checks the argument's type; NULL is not refused yet.
    fn read(call: &Call, i: usize, name: &'static str) -> Result<Self::Read>;
    /// The value, or the argument's error when it is NULL and may not be.
    fn value<'a>(read: &'a Self::Read, name: &'static str) -> Result<Self::Value<'a>>;
}

/// A required argument that may be NULL (the core function decides what NULL means):
/// `Nullable<&str>` gives an `Option<&str>`. `&str` refuses NULL, and `Option<&str>` may be
/// left out.
pub(crate) struct Nullable<T>(PhantomData<T>);

/// Text taken as it came, not checked as UTF-8: the tools answer bad text with JSON instead
/// of an SQL error. The core function gets the bytes (`Option<&[u8]>`).
pub(crate) enum RawText {}

/// The types an argument is read as: the SQL type, and the check of a value that is not NULL.
pub(crate) trait Base {
    const TYPE: Type;
    type Owned;
    type Value<'a>;
    fn read(v: &Value, name: &'static str) -> Result<Self::Owned>;
    fn value(o: &Self::Owned) -> Self::Value<'_>;
}

/// Text: numbers in their decimal form; bytes must be valid UTF-8; no text may hold U+0000
/// ([`crate::args::no_nul`]).
impl Base for &str {
    const TYPE: Type = Type::Text;
    type Owned = String;
    type Value<'a> = &'a str;
    fn read(v: &Value, name: &'static str) -> Result<String> {
        let s = match v {
            Value::Int(v) => v.to_string(),
            Value::Real(v) => v.to_string(),
            Value::Text(s) => s.clone(),
            Value::Json(j) => j.to_text(),
            Value::Blob(b) => String::from_utf8(b.clone())
                .map_err(|_| Error::invalid(name, "must be valid UTF-8 text"))?,
            Value::Null => unreachable!("NULL is read by Arg"),
        };
        crate::args::no_nul(name, &s)?;
        Ok(s)
    }
    fn value(o: &String) -> &str {
        o
    }
}

impl Base for i64 {
    const TYPE: Type = Type::Int;
    type Owned = i64;
    type Value<'a> = i64;
    fn read(v: &Value, name: &'static str) -> Result<i64> {
        match v {
            Value::Int(v) => Ok(*v),
            _ => Err(Error::invalid(name, "must be an integer")),
        }
    }
    fn value(o: &i64) -> i64 {
        *o
    }
}

/// A blob. Text is refused: the bytes of a text are not what its writer meant them to be.
impl Base for &[u8] {
    const TYPE: Type = Type::Blob;
    type Owned = Vec<u8>;
    type Value<'a> = &'a [u8];
    fn read(v: &Value, name: &'static str) -> Result<Vec<u8>> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            _ => Err(Error::invalid(
                name,
                "must be a blob (float32 little-endian); for a JSON array use mem_vector('[…]')",
            )),
        }
    }
    fn value(o: &Vec<u8>) -> &[u8] {
        o
    }
}

impl Base for RawText {
    const TYPE: Type = Type::Text;
    type Owned = Vec<u8>;
    type Value<'a> = &'a [u8];
    fn read(v: &Value, _: &'static str) -> Result<Vec<u8>> {
        Ok(match v {
            Value::Int(v) => v.to_string().into_bytes(),
            Value::Real(v) => v.to_string().into_bytes(),
            Value::Text(s) => s.clone().into_bytes(),
            Value::Json(j) => j.to_text().into_bytes(),
            Value::Blob(b) => b.clone(),
            Value::Null => unreachable!("NULL is read by Arg"),
        })
    }
    fn value(o: &Vec<u8>) -> &[u8] {
        o
    }
}

fn read_base<B: Base>(call: &Call, i: usize, name: &'static str) -> Result<Option<B::Owned>> {
    match call.value(i) {
        Value::Null => Ok(None),
        v => B::read(v, name).map(Some),
    }
}

/// `T`, `Option<T>` and `Nullable<T>` for each base type.
macro_rules! passes {
    (@may_be_null $arg:ty, $base:ty, $pass:ident) => {
        impl<'x> Arg for $arg {
            const TYPE: Type = <$base as Base>::TYPE;
            const PASS: Pass = Pass::$pass;
            type Read = Option<<$base as Base>::Owned>;
            type Value<'a> = Option<<$base as Base>::Value<'a>>;
            fn read(call: &Call, i: usize, name: &'static str) -> Result<Self::Read> {
                read_base::<$base>(call, i, name)
            }
            fn value<'a>(read: &'a Self::Read, _: &'static str) -> Result<Self::Value<'a>> {
                Ok(read.as_ref().map(<$base as Base>::value))
            }
        }
    };
    ($($base:ty),*) => {$(
        impl<'x> Arg for $base {
            const TYPE: Type = <$base as Base>::TYPE;
            const PASS: Pass = Pass::Required;
            type Read = Option<<$base as Base>::Owned>;
            type Value<'a> = <$base as Base>::Value<'a>;
            fn read(call: &Call, i: usize, name: &'static str) -> Result<Self::Read> {
                read_base::<$base>(call, i, name)
            }
            fn value<'a>(read: &'a Self::Read, name: &'static str) -> Result<Self::Value<'a>> {
                read.as_ref()
                    .map(<$base as Base>::value)
                    .ok_or_else(|| Error::invalid(name, "must not be NULL"))
            }
        }
        passes!(@may_be_null Option<$base>, $base, Optional);
        passes!(@may_be_null Nullable<$base>, $base, Required);
    )*};
}

passes!(&'x str, i64, &'x [u8], RawText);

/// The columns the statement reads, for a table function that can skip costly work.
impl<R: Columns> Arg for Wanted<R> {
    const TYPE: Type = Type::Int;
    const PASS: Pass = Pass::Hidden;
    type Read = Wanted<R>;
    type Value<'a> = Wanted<R>;
    fn read(call: &Call, _: usize, _: &'static str) -> Result<Wanted<R>> {
        Ok(Wanted::mask(call.columns))
    }
    fn value<'a>(read: &'a Wanted<R>, _: &'static str) -> Result<Wanted<R>> {
        Ok(*read)
    }
}

/// The first step for the text arguments of a call, which are checked before the others:
/// `Some` for a text argument, `None` for one that [`read_others`] reads.
pub(crate) fn read_texts<A: Arg>(
    call: &Call,
    i: usize,
    name: &'static str,
) -> Result<Option<A::Read>> {
    match A::TYPE {
        Type::Text => A::read(call, i, name).map(Some),
        _ => Ok(None),
    }
}

/// The first step for the arguments [`read_texts`] left.
pub(crate) fn read_others<A: Arg>(
    read: Option<A::Read>,
    call: &Call,
    i: usize,
    name: &'static str,
) -> Result<A::Read> {
    match read {
        Some(read) => Ok(read),
        None => A::read(call, i, name),
    }
}

/// The number of SQL arguments and of required ones, from how each parameter is passed; a
/// required argument after an optional one, or an SQL one after a hidden one, is refused with
/// `error` (at compile time: the catalog is a constant).
pub(crate) const fn arity(passes: &[Pass], error: &'static str) -> (usize, usize) {
    let (mut sql, mut required, mut i) = (0, 0, 0);
    while i < passes.len() {
        match passes[i] {
            Pass::Required if required == sql && sql == i => required += 1,
            Pass::Optional if sql == i => {}
            Pass::Hidden => {
                i += 1;
                continue;
            }
            _ => panic!("{}", error),
        }
        sql += 1;
        i += 1;
    }
    (sql, required)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arity_counts_and_orders() {
        use Pass::*;
        assert_eq!(arity(&[], ""), (0, 0));
        assert_eq!(arity(&[Required, Optional, Hidden], ""), (2, 1));
        assert_eq!(arity(&[Required, Required, Optional, Optional], ""), (4, 2));
        for bad in [
            &[Optional, Required][..],
            &[Hidden, Required],
            &[Required, Hidden, Optional],
        ] {
            assert!(std::panic::catch_unwind(|| arity(bad, "bad")).is_err());
        }
    }
}
