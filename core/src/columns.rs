//! SQL types, and result rows as Rust structs.
//!
//! A leaf: a domain declares the rows its table functions return with [`row!`] and needs
//! nothing of the function catalog (`api`), which lists the functions and reads these
//! declarations.

use crate::{Row, Value};
use std::marker::PhantomData;

/// The SQL type of an argument, a scalar result or a result column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Text,
    Int,
    Real,
    /// SQLite: 0 or 1. Postgres: `boolean`.
    Bool,
    /// SQLite: text. Postgres: `jsonb`, so that `->>` reads the same on both.
    Json,
    /// SQLite: blob. Postgres: `bytea`.
    Blob,
}

impl Type {
    /// The name the reference uses.
    pub(crate) fn doc_name(self) -> &'static str {
        match self {
            Type::Text => "text",
            Type::Int => "integer",
            Type::Real => "real",
            Type::Bool => "boolean",
            Type::Json => "json",
            Type::Blob => "blob",
        }
    }
}

/// A named, typed argument or result column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub ty: Type,
}

/// The SQL name of a Rust identifier as `stringify!` spells it: `r#type` is `type`.
pub(crate) const fn sql_name(ident: &'static str) -> &'static str {
    match ident.as_bytes() {
        [b'r', b'#', rest @ ..] => match std::str::from_utf8(rest) {
            Ok(name) => name,
            Err(_) => panic!("not an identifier"),
        },
        _ => ident,
    }
}

/// JSON text in a result column (Postgres `jsonb`, SQLite text).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JsonText(pub String);

/// A Rust type that fills a result column: the column's SQL type and the value.
pub(crate) trait Column {
    const TYPE: Type;
    fn into_value(self) -> Value;
}

impl Column for String {
    const TYPE: Type = Type::Text;
    fn into_value(self) -> Value {
        Value::Text(self)
    }
}

impl Column for &'static str {
    const TYPE: Type = Type::Text;
    fn into_value(self) -> Value {
        Value::Text(self.to_owned())
    }
}

impl Column for JsonText {
    const TYPE: Type = Type::Json;
    fn into_value(self) -> Value {
        Value::Text(self.0)
    }
}

/// A list of strings: a JSON array of them (Postgres `jsonb`, SQLite text).
impl Column for crate::Strings {
    const TYPE: Type = Type::Json;
    fn into_value(self) -> Value {
        self.into()
    }
}

impl Column for i64 {
    const TYPE: Type = Type::Int;
    fn into_value(self) -> Value {
        Value::Int(self)
    }
}

impl Column for f64 {
    const TYPE: Type = Type::Real;
    fn into_value(self) -> Value {
        Value::Real(self)
    }
}

/// NULL for `None`.
impl<T: Column> Column for Option<T> {
    const TYPE: Type = T::TYPE;
    fn into_value(self) -> Value {
        self.map_or(Value::Null, Column::into_value)
    }
}

/// A table function's row: a struct whose fields are the result columns, in order. Declared
/// with [`row!`], which derives both items from the struct.
pub(crate) trait Columns {
    const COLUMNS: &'static [Field];
    fn into_values(self) -> Row;
}

/// The columns of `R` that the statement reads, so that a table function can skip costly
/// work for a column nobody reads (SQLite says which; Postgres reads every column). [`row!`]
/// gives it one method per column: `wanted.snippet()`.
pub(crate) struct Wanted<R> {
    /// Bit i: column i is read (bit 63 stands for every column from 63 on).
    mask: u64,
    row: PhantomData<fn() -> R>,
}

impl<R> Clone for Wanted<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Wanted<R> {}

impl<R> Wanted<R> {
    /// Every column.
    #[cfg(test)]
    pub(crate) fn all() -> Self {
        Wanted::mask(u64::MAX)
    }

    /// The columns whose bits are set in `mask`.
    pub(crate) fn mask(mask: u64) -> Self {
        Wanted {
            mask,
            row: PhantomData,
        }
    }

    /// Whether column `i` is read ([`row!`]'s per-column methods call it).
    pub(crate) fn reads_column(&self, i: usize) -> bool {
        self.mask & (1 << i.min(63)) != 0
    }
}

/// The position of the column called `name` (for [`row!`], at compile time).
pub(crate) const fn position(columns: &[Field], name: &str) -> usize {
    let mut i = 0;
    while i < columns.len() {
        let (a, b) = (columns[i].name.as_bytes(), name.as_bytes());
        let mut same = a.len() == b.len();
        let mut j = 0;
        while same && j < a.len() {
            same = a[j] == b[j];
            j += 1;
        }
        if same {
            return i;
        }
        i += 1;
    }
    panic!("no such column")
}

/// Declares a result row: the struct as written, its [`Columns`] (a column per field, named
/// after it, of the SQL type of its Rust type: `String` text, `JsonText` JSON, `i64` integer,
/// `f64` real, `Option` of those NULL-able) and a [`Wanted`] method per column.
///
/// ```ignore
/// row! {
///     /// One row of `mem_export_rows`.
///     pub struct ExportPart {
///         pub n: i64,
///         pub part: String,
///         pub body: String,
///     }
/// }
/// ```
macro_rules! row {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $( $(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[cfg_attr(feature = "testing", visibility::make(pub))]
        $vis struct $name {
            $( $(#[$fmeta])* $fvis $field: $ty ),*
        }

        impl $crate::columns::Columns for $name {
            const COLUMNS: &'static [$crate::columns::Field] = &[$(
                $crate::columns::Field {
                    name: $crate::columns::sql_name(stringify!($field)),
                    ty: <$ty as $crate::columns::Column>::TYPE,
                }
            ),*];

            fn into_values(self) -> $crate::Row {
                vec![$( $crate::columns::Column::into_value(self.$field) ),*]
            }
        }

        #[allow(dead_code)]
        impl $crate::columns::Wanted<$name> {
            $(
                /// Whether the statement reads this column.
                pub(crate) fn $field(&self) -> bool {
                    self.reads_column(const {
                        $crate::columns::position(
                            <$name as $crate::columns::Columns>::COLUMNS,
                            $crate::columns::sql_name(stringify!($field)),
                        )
                    })
                }
            )*
        }
    };
}
pub(crate) use row;

#[cfg(test)]
mod tests {
    use super::*;

    row! {
        #[derive(Debug)]
        struct Sample {
            id: String,
            r#type: Option<String>,
            meta: JsonText,
            n: i64,
            score: Option<f64>,
        }
    }

    #[test]
    fn a_row_is_its_fields_in_order() {
        let cols: Vec<(&str, Type)> = Sample::COLUMNS.iter().map(|c| (c.name, c.ty)).collect();
        assert_eq!(
            cols,
            [
                ("id", Type::Text),
                ("type", Type::Text),
                ("meta", Type::Json),
                ("n", Type::Int),
                ("score", Type::Real)
            ]
        );
        let row = Sample {
            id: "a".into(),
            r#type: None,
            meta: JsonText("{}".into()),
            n: 3,
            score: Some(0.5),
        };
        assert_eq!(
            row.into_values(),
            vec![
                Value::Text("a".into()),
                Value::Null,
                Value::Text("{}".into()),
                Value::Int(3),
                Value::Real(0.5)
            ]
        );
    }

    #[test]
    fn wanted_names_its_columns() {
        let w = Wanted::<Sample>::mask(0b100);
        assert!(w.meta() && !w.id() && !w.r#type());
        assert!(Wanted::<Sample>::all().score());
    }
}
