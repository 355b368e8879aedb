//! The catalog's functions in Postgres: one C entry point for all of them, and the
//! `CREATE FUNCTION` statements that bind each catalog entry to it.
//!
//! pgrx would want one Rust function per SQL function, each re-typing its arguments and result
//! columns by hand. Instead every entry of `agentmem_core::api` is created as a C-language
//! function over the symbol `mem__call`, with the argument names, types, defaults, result
//! columns and volatility the catalog gives. The entry point finds the called function by name
//! (once per call site: the entry is kept in `fn_extra`), reads the arguments by their
//! catalog types, runs the core and returns a scalar or materialises the rows.

use crate::conn::SpiConn;
use crate::entry::{declaration, entry_point};
use crate::error::{jsonb, ok};
use crate::row_datums::RowDatums;
use agentmem_core::api::{self, Function, Nature, Returns, Route, Type};
use agentmem_core::schema::PRIVATE_SCHEMA;
use agentmem_core::{Conn, Error, JsonTree, Value};
use pgrx::{pg_sys, FromDatum, IntoDatum};

/// The SQL type Postgres uses for a catalog type.
fn sql_type(t: Type) -> &'static str {
    match t {
        Type::Text => "text",
        Type::Int => "bigint",
        Type::Real => "double precision",
        Type::Bool => "boolean",
        Type::Json => "jsonb",
        Type::Blob => "bytea",
    }
}

fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `CREATE OR REPLACE FUNCTION` for one catalog entry.
pub fn create_sql(f: &Function) -> String {
    let args: Vec<String> = f
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let default = if i >= f.required { " DEFAULT NULL" } else { "" };
            format!("{} {}{default}", quoted(a.name), sql_type(a.ty))
        })
        .collect();
    let returns = match (f.returns, row_type(f)) {
        (_, Some(ty)) => format!("SETOF {ty}"),
        (Returns::Scalar(t, _), None) => sql_type(t).to_string(),
        (Returns::Table(cols, _), None) => {
            let cols: Vec<String> = cols
                .iter()
                .map(|c| format!("{} {}", quoted(c.name), sql_type(c.ty)))
                .collect();
            format!("TABLE({})", cols.join(", "))
        }
    };
    let nature = match f.nature {
        Nature::Pure => "IMMUTABLE PARALLEL SAFE",
        Nature::Reader => "STABLE",
        Nature::Volatile | Nature::Writer => "VOLATILE",
    };
    format!(
        "CREATE OR REPLACE FUNCTION {}({}) RETURNS {returns} LANGUAGE c {nature} \
         AS '$libdir/agentmem', 'mem__call'",
        quoted(f.name),
        args.join(", ")
    )
}

/// The row type a table function of more than one column returns: a composite type named
/// after it in the private schema. Postgres describes a `RETURNS TABLE` result anew from the
/// function's catalog row whenever a statement calling it is parsed and again when it starts
/// (the argument arrays read, each column's type looked up: 27 thousand instructions of a
/// `graph_neighbors` call that finds no rows, 137 thousand), a row type's from its cache. A
/// one-column table stays `TABLE`: Postgres returns it as `SETOF` the scalar, not as rows.
fn row_type(f: &Function) -> Option<String> {
    match f.returns {
        Returns::Table(cols, _) if cols.len() > 1 => Some(format!(
            "{PRIVATE_SCHEMA}.{}",
            quoted(&format!("{}_row", f.name))
        )),
        _ => None,
    }
}

/// Creates every catalog function (inside `CREATE EXTENSION` or an update, so they belong to
/// the extension), each with its row type ([`declare`]), in the private schema, which is made
/// here, closed to PUBLIC.
pub fn create_all() {
    let mut script = format!(
        "CREATE SCHEMA IF NOT EXISTS {PRIVATE_SCHEMA};\n\
         REVOKE ALL ON SCHEMA {PRIVATE_SCHEMA} FROM PUBLIC;\n"
    );
    for f in api::functions() {
        script.push_str(&declare(f));
    }
    ok(SpiConn.execute_batch(&script));
}

/// The statements that declare `f`. A table function with a row type ([`row_type`]) is
/// declared over it: as is when the type has its columns and the function returns it or does
/// not exist yet. Else the function as an earlier release declared it (`RETURNS TABLE`, or
/// other columns) is dropped, the type made again, the function created and its privileges,
/// when they were not the default, given back. A function other objects depend on (a view of
/// the user's) keeps its declaration while that answers the same columns, and a notice says
/// so; when the columns change, the update fails and says why.
pub(crate) fn declare(f: &Function) -> String {
    let create = format!("{};\n", create_sql(f));
    let (Some(ty), Returns::Table(cols, _)) = (row_type(f), f.returns) else {
        return create;
    };
    let signature = format!(
        "{}({})",
        quoted(f.name),
        f.args
            .iter()
            .map(|a| sql_type(a.ty))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let found = ok(SpiConn.query(
        "SELECT p.oid IS NOT NULL, p.prorettype IS NOT DISTINCT FROM to_regtype(?2), \
           EXISTS (SELECT 1 FROM pg_catalog.pg_depend d \
                   WHERE d.refclassid = 'pg_catalog.pg_proc'::regclass AND d.refobjid = p.oid \
                     AND d.deptype = 'n'), \
           (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' \
                              ORDER BY a.attnum) \
            FROM pg_catalog.pg_type t JOIN pg_catalog.pg_attribute a ON a.attrelid = t.typrelid \
            WHERE t.oid = to_regtype(?2) AND a.attnum > 0 AND NOT a.attisdropped), \
           (SELECT 'REVOKE ALL ON FUNCTION ' || ?1 || ' FROM PUBLIC;' || string_agg( \
              'GRANT EXECUTE ON FUNCTION ' || ?1 || ' TO ' || CASE WHEN x.grantee = 0 \
              THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(x.grantee)) END \
              || CASE WHEN x.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END || ';', '') \
            FROM aclexplode(p.proacl) x), \
           (SELECT string_agg(u.n || ' ' || format_type(u.t, NULL), ', ' ORDER BY u.o) \
            FROM unnest(p.proallargtypes, p.proargmodes, p.proargnames) \
              WITH ORDINALITY AS u(t, m, n, o) WHERE u.m = 't') \
         FROM (SELECT to_regprocedure(?1) AS oid) r \
         LEFT JOIN pg_catalog.pg_proc p ON p.oid = r.oid",
        &[Value::from(signature.as_str()), Value::from(ty.as_str())],
    ));
    let row = found.into_iter().next().unwrap_or_default();
    let flag = |i: usize| row.get(i).and_then(Value::as_i64) == Some(1);
    let (exists, returns_it, depended_on) = (flag(0), flag(1), flag(2));
    let text = |i: usize| row.get(i).and_then(Value::as_str);
    let columns = cols
        .iter()
        .map(|c| format!("{} {}", c.name, sql_type(c.ty)))
        .collect::<Vec<_>>()
        .join(", ");
    let current = text(3) == Some(columns.as_str());
    let replaced = exists && !(current && returns_it);
    if replaced && depended_on {
        // Kept only while it answers the same columns (a `TABLE` of them).
        if text(5) == Some(columns.as_str()) {
            pgrx::notice!(
                "{} keeps its earlier declaration: other objects depend on it",
                f.name
            );
            return String::new();
        }
        ok::<()>(Err(Error::invalid(
            f.name,
            "changes its result columns, and other objects depend on it: drop them, update, \
             and create them again",
        )));
    }
    let mut sql = String::new();
    if replaced {
        sql.push_str(&format!("DROP FUNCTION {signature};\n"));
    }
    if !current {
        if text(3).is_some() {
            sql.push_str(&format!("DROP TYPE {ty};\n"));
        }
        let columns: Vec<String> = cols
            .iter()
            .map(|c| format!("{} {}", quoted(c.name), sql_type(c.ty)))
            .collect();
        sql.push_str(&format!("CREATE TYPE {ty} AS ({});\n", columns.join(", ")));
    }
    sql.push_str(&create);
    if replaced {
        // Nothing when the function's privileges were the default.
        sql.push_str(text(4).unwrap_or_default());
    }
    sql
}

entry_point!(
    /// The entry point of every catalog function.
    mem__call,
    pg_finfo_mem__call,
    call
);

unsafe fn call(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: fcinfo is valid; mem__call's fn_extra holds catalog entries only.
    let f: &Function = unsafe { declaration(fcinfo, "function catalog", api::find) };
    let runs_statements = !matches!(f.nature, Nature::Pure | Nature::Volatile);
    let _settings = crate::pinned::for_call(runs_statements, f.generic_plans);
    let nargs = usize::try_from(unsafe { (*fcinfo).nargs }).unwrap_or(0);
    let values: Vec<Value> = (0..nargs.min(f.args.len()))
        .map(|i| unsafe { argument(fcinfo, i, f.args[i].ty) })
        .collect();
    // Whether Citus is here (a catalog lookup on its servers) matters to writers and to calls
    // routed by resource only.
    let citus = (f.nature == Nature::Writer || f.route != Route::Here) && crate::citus::installed();
    // On Citus a write that reaches one other node only would commit there in one phase,
    // and a lost answer would make a written call fail: ask for two.
    if f.nature == Nature::Writer && citus {
        crate::citus::commit_in_two_phases();
    }
    let rows = match crate::route::destination(f, &values, citus) {
        Some(resource) => crate::route::hand_over(f, &resource, &values),
        None => crate::local::run(f, values),
    };
    match f.returns {
        Returns::Scalar(t, _) => {
            let v = rows.into_iter().next().and_then(|r| r.into_iter().next());
            match unsafe { datum(v.unwrap_or(Value::Null), t) } {
                Some(d) => d,
                None => unsafe { pgrx::fcinfo::pg_return_null(fcinfo) },
            }
        }
        Returns::Table(cols, _) => unsafe { materialise(fcinfo, cols, rows) },
    }
}

/// Argument `i`, read as its declared type.
unsafe fn argument(fcinfo: pg_sys::FunctionCallInfo, i: usize, ty: Type) -> Value {
    // SAFETY (whole function): i < nargs, and the datum has the declared SQL type.
    if unsafe { pgrx::fcinfo::pg_arg_is_null(fcinfo, i) } {
        return Value::Null;
    }
    let d = unsafe { pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, i) };
    match ty {
        Type::Int => unsafe { i64::from_datum(d, false) }.map_or(Value::Null, Value::Int),
        Type::Real => unsafe { f64::from_datum(d, false) }.map_or(Value::Null, Value::Real),
        Type::Bool => {
            unsafe { bool::from_datum(d, false) }.map_or(Value::Null, |b| Value::Int(b.into()))
        }
        Type::Text => unsafe { String::from_datum(d, false) }.map_or(Value::Null, Value::Text),
        Type::Json => unsafe { pgrx::JsonB::from_datum(d, false) }
            .map_or(Value::Null, |j| Value::Text(j.0.to_string())),
        Type::Blob => unsafe { Vec::<u8>::from_datum(d, false) }.map_or(Value::Null, Value::Blob),
    }
}

/// A core value as a datum of `ty`; `None` for NULL.
unsafe fn datum(v: Value, ty: Type) -> Option<pg_sys::Datum> {
    if v == Value::Null {
        return None;
    }
    let wrong = |v: &Value| -> ! {
        ok::<()>(Err(Error::internal(format!(
            "core returned {v:?} for a {} result",
            sql_type(ty)
        ))));
        unreachable!("ereport returned")
    };
    match ty {
        Type::Int => v.as_i64().unwrap_or_else(|| wrong(&v)).into_datum(),
        Type::Real => v.as_f64().unwrap_or_else(|| wrong(&v)).into_datum(),
        Type::Bool => (v.as_i64().unwrap_or_else(|| wrong(&v)) != 0).into_datum(),
        Type::Text => match v {
            Value::Text(s) => s.into_datum(),
            other => wrong(&other),
        },
        Type::Json => match v {
            Value::Text(s) => jsonb(s),
            Value::Json(j) => crate::jsonb::from_tree(&j).or_else(|| jsonb(j.to_text())),
            other => wrong(&other),
        },
        Type::Blob => match v {
            Value::Blob(b) => b.into_datum(),
            other => wrong(&other),
        },
    }
}

/// The type oid Postgres uses for a catalog type.
fn type_oid(t: Type) -> pg_sys::Oid {
    match t {
        Type::Text => pg_sys::TEXTOID,
        Type::Int => pg_sys::INT8OID,
        Type::Real => pg_sys::FLOAT8OID,
        Type::Bool => pg_sys::BOOLOID,
        Type::Json => pg_sys::JSONBOID,
        Type::Blob => pg_sys::BYTEAOID,
    }
}

/// Whether `desc`, the row the executor expects of the call, has the catalog's columns' types
/// in order (it then serves as the result's descriptor, without a catalog lookup per column).
///
/// # Safety
///
/// `desc` is null or a valid descriptor.
unsafe fn describes(desc: pg_sys::TupleDesc, cols: &[api::Field]) -> bool {
    // SAFETY: a non-null descriptor holds `natts` attributes.
    unsafe {
        !desc.is_null()
            && usize::try_from((*desc).natts).is_ok_and(|n| n == cols.len())
            && cols
                .iter()
                .enumerate()
                .all(|(i, col)| (*(*desc).attrs.as_ptr().add(i)).atttypid == type_oid(col.ty))
    }
}

/// A descriptor of the catalog's columns, made in the current memory context.
///
/// # Safety
///
/// Called in a memory context that outlives the descriptor's use.
unsafe fn described(cols: &[api::Field]) -> pg_sys::TupleDesc {
    // SAFETY: the descriptor is made with room for every column, each initialised once.
    unsafe {
        let desc = pg_sys::CreateTemplateTupleDesc(cols.len() as i32);
        for (i, col) in cols.iter().enumerate() {
            let name = std::ffi::CString::new(col.name).unwrap_or_default();
            pg_sys::TupleDescInitEntry(
                desc,
                (i + 1) as pg_sys::AttrNumber,
                name.as_ptr(),
                type_oid(col.ty),
                -1,
                0,
            );
        }
        desc
    }
}

/// Returns `rows` as the result set of a set-returning call (materialise mode). The tuple
/// descriptor is the executor's expected row when it has the catalog's columns (which
/// `create_sql` declared), else it is built from them: this works for one-column tables too,
/// which Postgres treats as `SETOF` a scalar, not as a row type.
unsafe fn materialise(
    fcinfo: pg_sys::FunctionCallInfo,
    cols: &[api::Field],
    rows: Vec<agentmem_core::Row>,
) -> pg_sys::Datum {
    use pg_sys::SetFunctionReturnMode::{SFRM_Materialize, SFRM_Materialize_Random};
    // SAFETY (whole function): resultinfo is checked before use; the descriptor and the
    // tuplestore live in the per-query context, as the executor requires; every datum has the
    // type its column declares.
    unsafe {
        let rsinfo = (*fcinfo).resultinfo as *mut pg_sys::ReturnSetInfo;
        if rsinfo.is_null()
            || (*rsinfo).type_ != pg_sys::NodeTag::T_ReturnSetInfo
            || ((*rsinfo).allowedModes as u32 & SFRM_Materialize) == 0
        {
            ok::<()>(Err(Error::invalid(
                "call",
                "a table function must be called where a set is accepted (FROM)",
            )));
        }
        let random = ((*rsinfo).allowedModes as u32 & SFRM_Materialize_Random) != 0;
        let per_query = (*(*rsinfo).econtext).ecxt_per_query_memory;
        let expected = (*rsinfo).expectedDesc;
        let (desc, store) = pgrx::PgMemoryContexts::For(per_query).switch_to(|_| {
            let desc = if describes(expected, cols) {
                // A copy: the executor frees the descriptor it is handed back.
                pg_sys::CreateTupleDescCopy(expected)
            } else {
                described(cols)
            };
            (
                desc,
                pg_sys::tuplestore_begin_heap(random, false, pg_sys::work_mem),
            )
        });
        let mut values = vec![pg_sys::Datum::from(0); cols.len()];
        let mut nulls = vec![true; cols.len()];
        // Text and plain jsonb arrays go into one buffer per row, the rest is palloc'd; the
        // buffer's datums are known once the row's last value is placed.
        let mut buffer = RowDatums::default();
        let mut placed: Vec<Option<usize>> = vec![None; cols.len()];
        for row in rows {
            buffer.clear();
            let mut row = row.into_iter();
            for (i, col) in cols.iter().enumerate() {
                let v = row.next().unwrap_or(Value::Null);
                placed[i] = match (&v, col.ty) {
                    (Value::Text(s), Type::Text) => buffer.text(s),
                    (Value::Text(s), Type::Json) => buffer.plain_array(s),
                    (Value::Json(JsonTree::Strings(l)), Type::Json) => buffer.strings(l),
                    _ => None,
                };
                let d = match placed[i] {
                    Some(_) => Some(pg_sys::Datum::from(0)),
                    None => datum(v, col.ty),
                };
                nulls[i] = d.is_none();
                values[i] = d.unwrap_or(pg_sys::Datum::from(0));
            }
            for (value, at) in values.iter_mut().zip(&placed) {
                if let Some(at) = at {
                    *value = buffer.datum(*at);
                }
            }
            pg_sys::tuplestore_putvalues(store, desc, values.as_mut_ptr(), nulls.as_mut_ptr());
        }
        (*rsinfo).returnMode = SFRM_Materialize;
        (*rsinfo).setResult = store;
        (*rsinfo).setDesc = desc;
        pg_sys::Datum::from(0)
    }
}

/// In-database tests of the declarations (`cargo pgrx test`).
#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// Declares `mem_thread_list` as an earlier library did, `RETURNS TABLE` of `columns`
    /// (its row type's columns when `None`), still a member of the extension, and a view over
    /// it; its catalog entry.
    fn declared_as_table_under_a_view(
        columns: Option<&str>,
    ) -> &'static agentmem_core::api::Function {
        let (signature, definition, ty) = Spi::get_three::<String, String, String>(
            "SELECT CAST(p.oid AS regprocedure)::text, pg_get_functiondef(p.oid), \
             CAST(t.oid AS regtype)::text FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype \
             WHERE p.proname = 'mem_thread_list'",
        )
        .unwrap();
        let (signature, definition, ty) = (signature.unwrap(), definition.unwrap(), ty.unwrap());
        let own_columns = Spi::get_one::<String>(
            "SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' \
             ORDER BY a.attnum) FROM pg_proc p JOIN pg_type t ON t.oid = p.prorettype \
             JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 \
             WHERE p.proname = 'mem_thread_list'",
        )
        .unwrap()
        .unwrap();
        let as_table = definition.replace(
            &format!("RETURNS SETOF {ty}"),
            &format!("RETURNS TABLE({})", columns.unwrap_or(&own_columns)),
        );
        assert_ne!(as_table, definition);
        Spi::run(&format!(
            "ALTER EXTENSION agentmem DROP FUNCTION {signature}; DROP FUNCTION {signature}; \
             {as_table}; ALTER EXTENSION agentmem ADD FUNCTION {signature}; \
             CREATE VIEW public.threads_of_mine AS SELECT * FROM mem_thread_list()"
        ))
        .unwrap();
        agentmem_core::api::find("mem_thread_list").expect("in the catalog")
    }

    /// A table function declared as an earlier library did (`RETURNS TABLE`) is declared over
    /// its row type again by an update, unless other objects depend on it: then it keeps its
    /// declaration, which answers the same columns.
    #[pg_test]
    fn a_declaration_others_depend_on_is_kept() {
        let f = declared_as_table_under_a_view(None);
        assert_eq!(super::declare(f), "");
        Spi::run("DROP VIEW public.threads_of_mine").unwrap();
        assert!(super::declare(f).starts_with("DROP FUNCTION \"mem_thread_list\""));
    }

    /// When the columns changed, a function other objects depend on cannot be kept: the
    /// update fails and says why.
    #[pg_test(
        error = "mem_thread_list: changes its result columns, and other objects depend on it: drop them, update, and create them again"
    )]
    fn a_declaration_others_depend_on_with_other_columns_is_refused() {
        let f = declared_as_table_under_a_view(Some("id text, title text"));
        super::declare(f);
    }
}
