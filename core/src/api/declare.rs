//! [`functions!`]: a function declared once, as a Rust signature.
//!
//! ```ignore
//! functions! {
//!     mem_thread_create(resource_id: &str, title: Option<&str>, metadata: Option<&str>,
//!         options: Option<&str>) -> Text, writer => threads::create;
//!     mem_thread_list(options: Option<&str>) -> Table<ThreadRow>, reader => thread_list::list;
//!     mem_reindex() -> Int, writer, owner_only => message_index::reindex;
//! }
//! ```
//!
//! Each parameter's type ([`Arg`](super::Arg)) gives its SQL type and whether it must be
//! passed, and reads it: `&str` is required text whose NULL is refused (`resource_id: must not
//! be NULL`), `Option<&str>` optional text, `Nullable<&str>` required text that may be NULL;
//! the same for `i64` (integer), `&[u8]` (blob) and `RawText` (text as bytes); `Wanted<Row>`
//! is not an SQL argument but the columns the statement reads. The result is a scalar type of
//! [`sql`] or `Table<Row>`, `Row` declared with `row!`. Then the nature (`pure`, `volatile`,
//! `reader`, `writer`) and the flags (`owner_only`, `generic_plans`, and where a distributed
//! database runs a call: `by_resource`, `by_resource_option`, `by_thread`, `by_task`,
//! `by_tool`, `by_memory`, `by_vector_owner`, `by_node`, `by_node_id`, `by_edge`,
//! `by_edge_source`, `by_lookup_key`, `by_scope_key`). The body is a core function, or a
//! closure, taking the connection and the parameters' values in order and returning `Result`
//! of the result's Rust type.
//!
//! A declaration that does not fit fails to compile: a body whose parameter or result types
//! differ from the declared ones, a result type the SQL type cannot hold, an unknown nature or
//! flag, a required parameter after an optional one.

use crate::columns::Type;
use crate::Value;

/// The scalar result types, as a declaration names them (`-> Json`).
pub(crate) mod sql {
    pub(crate) struct Text;
    pub(crate) struct Json;
    pub(crate) struct Int;
    pub(crate) struct Real;
    pub(crate) struct Bool;
    pub(crate) struct Blob;
}

/// A scalar result type's SQL type.
pub(crate) trait Scalar {
    const TYPE: Type;
}

/// A Rust value that a function of result type `S` may return (NULL for `None`).
pub(crate) trait Returned<S: Scalar> {
    fn value(self) -> Value;
}

macro_rules! scalars {
    ($($sql:ident: $($rust:ty => $value:expr),*;)*) => {$(
        impl Scalar for sql::$sql {
            const TYPE: Type = Type::$sql;
        }
        $(
            impl Returned<sql::$sql> for $rust {
                fn value(self) -> Value {
                    $value(self)
                }
            }
            impl Returned<sql::$sql> for Option<$rust> {
                fn value(self) -> Value {
                    self.map_or(Value::Null, $value)
                }
            }
        )*
    )*};
}

scalars! {
    Text: String => Value::Text, &'static str => |s: &str| Value::Text(s.to_owned());
    Json: String => Value::Text, crate::JsonTree<'static> => Value::Json;
    Int: i64 => Value::Int;
    Real: f64 => Value::Real;
    Bool: bool => |b: bool| Value::Int(b.into());
    Blob: Vec<u8> => Value::Blob;
}

/// The catalog entries declared by one Rust signature each (see the module's documentation):
/// a `&'static [Function]`.
macro_rules! functions {
    ($(
        $(#[$attr:meta])*
        $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $out:ident $(<$row:ty>)?,
            $nature:ident $(, $flag:ident)* => $body:expr;
    )*) => {
        &[$(
            $crate::api::Function::new(
                stringify!($name),
                {
                    const ALL: &[$crate::api::Field] = &[$($crate::api::Field {
                        name: $crate::columns::sql_name(stringify!($arg)),
                        ty: <$ty as $crate::api::Arg>::TYPE,
                    }),*];
                    const ARITY: (usize, usize) = $crate::api::arity(
                        &[$(<$ty as $crate::api::Arg>::PASS),*],
                        concat!(stringify!($name), ": a required argument follows an optional \
                            one, or an SQL argument a hidden one"),
                    );
                    (ALL.split_at(ARITY.0).0, ARITY.1)
                },
                $crate::api::returns!($out $(<$row>)?, ($($arg: $ty),*), $body),
                $crate::api::functions!(@nature $nature),
            )$(.$flag())*
        ),*]
    };
    (@nature pure) => { $crate::api::Nature::Pure };
    (@nature volatile) => { $crate::api::Nature::Volatile };
    (@nature reader) => { $crate::api::Nature::Reader };
    (@nature writer) => { $crate::api::Nature::Writer };
}
pub(crate) use functions;

/// A declaration's [`Returns`](super::Returns): reads the arguments (texts, then the others,
/// then NULLs refused: each step in argument order), calls the body, converts its result.
macro_rules! returns {
    (@args $call:ident, $($arg:ident : $ty:ty),*) => {
        let _ = $call;
        #[allow(unused_mut, unused_variables)]
        let mut at = 0..;
        $(
            let $arg = $crate::api::read_texts::<$ty>(
                $call,
                at.next().unwrap_or_default(),
                $crate::columns::sql_name(stringify!($arg)),
            )?;
        )*
        #[allow(unused_mut, unused_variables)]
        let mut at = 0..;
        $(
            let $arg = $crate::api::read_others::<$ty>(
                $arg,
                $call,
                at.next().unwrap_or_default(),
                $crate::columns::sql_name(stringify!($arg)),
            )?;
        )*
        $(
            let $arg = <$ty as $crate::api::Arg>::value(
                &$arg,
                $crate::columns::sql_name(stringify!($arg)),
            )?;
        )*
    };
    (Table<$row:ty>, ($($arg:ident : $ty:ty),*), $body:expr) => {
        $crate::api::Returns::Table(
            <$row as $crate::columns::Columns>::COLUMNS,
            |conn, call| {
                $crate::api::returns!(@args call, $($arg: $ty),*);
                let run: fn(
                    &mut dyn $crate::Conn,
                    $(<$ty as $crate::api::Arg>::Value<'_>),*
                ) -> $crate::Result<Vec<$row>> = $body;
                Ok(run(conn, $($arg),*)?
                    .into_iter()
                    .map($crate::columns::Columns::into_values)
                    .collect())
            },
        )
    };
    ($out:ident, ($($arg:ident : $ty:ty),*), $body:expr) => {
        $crate::api::Returns::Scalar(
            <$crate::api::sql::$out as $crate::api::Scalar>::TYPE,
            |conn, call| {
                $crate::api::returns!(@args call, $($arg: $ty),*);
                let run: fn(
                    &mut dyn $crate::Conn,
                    $(<$ty as $crate::api::Arg>::Value<'_>),*
                ) -> $crate::Result<_> = $body;
                Ok($crate::api::Returned::<$crate::api::sql::$out>::value(
                    run(conn, $($arg),*)?,
                ))
            },
        )
    };
}
pub(crate) use returns;
