//! What each database registered is what the core's catalog says: names, argument names and
//! types, result columns, and (in Postgres) volatility. Read back from `pragma_function_list`
//! / `pragma_table_xinfo` and from `pg_proc`.

use agentmem_core::api::{self, Nature, Returns, Type};
use agentmem_tests::backend::{Backend, Postgres, Sqlite};
use std::collections::BTreeSet;

/// Whether a registered name is in one of the catalog's name spaces (`mem_…`, `graph_…` …).
fn is_ours(name: &str) -> bool {
    let space = |n: &str| n.split('_').next().unwrap_or("").to_string();
    api::functions().any(|f| space(f.name) == space(name))
}

#[test]
fn sqlite_registers_the_catalog() {
    let db = Sqlite::open(":memory:");
    let mut st = db
        .conn
        .prepare("SELECT DISTINCT name FROM pragma_function_list")
        .unwrap();
    let registered: BTreeSet<String> = st
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .filter(|n| is_ours(n))
        .collect();
    let mut expected: BTreeSet<String> = api::functions()
        .filter(|f| matches!(f.returns, Returns::Scalar(..)))
        .map(|f| f.name.to_string())
        .collect();
    expected.extend(agentmem_core::triggers::sqlite_functions().map(|n| n.to_string()));
    expected.insert("mem__internal".into());
    expected.insert(agentmem_core::triggers::MAY_HOLD_NUL.into());
    expected.insert(agentmem_core::triggers::ADDING_BOOKED.into());
    expected.insert(agentmem_core::schema::types::CHECK_TYPES.into());
    expected.insert(agentmem_core::schema::types::CHECK_CHANGES.into());
    expected.insert(agentmem_core::db::seen::FUNCTION.into());
    assert_eq!(registered, expected, "scalar functions");

    for f in api::functions() {
        let Returns::Table(cols, _) = f.returns else {
            continue;
        };
        let mut st = db
            .conn
            .prepare("SELECT name, hidden FROM pragma_table_xinfo(?1) ORDER BY cid")
            .unwrap();
        let got: Vec<(String, i64)> = st
            .query_map([f.name], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let want: Vec<(String, i64)> = cols
            .iter()
            .map(|c| (c.name.to_string(), 0))
            .chain(f.args.iter().map(|a| (format!("arg_{}", a.name), 1)))
            .collect();
        assert_eq!(got, want, "{}: columns then hidden arguments", f.name);
    }
}

/// The Postgres type name each catalog type is declared as (as `pg_get_function_*` prints it).
const PG_TYPES: [(Type, &str); 6] = [
    (Type::Text, "text"),
    (Type::Int, "bigint"),
    (Type::Real, "double precision"),
    (Type::Bool, "boolean"),
    (Type::Json, "jsonb"),
    (Type::Blob, "bytea"),
];

fn pg_type(t: Type) -> &'static str {
    PG_TYPES
        .iter()
        .find(|(k, _)| *k == t)
        .map_or("?", |(_, v)| v)
}

fn text(cells: &[agentmem_tests::backend::Cell], i: usize) -> String {
    cells[i].to_string()
}

#[test]
fn postgres_creates_the_catalog() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut db = Postgres::connect(&url);
    db.reset().unwrap();
    // Every function of the extension: the catalog's, and internal ones (`mem__…`).
    let members = db
        .query(
            "SELECT p.proname::text FROM pg_proc p \
             JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e' \
             JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'agentmem' ORDER BY 1",
            &[],
        )
        .unwrap();
    let public: BTreeSet<String> = members
        .iter()
        .map(|r| text(r, 0))
        .filter(|n| !n.starts_with("mem__"))
        .collect();
    let expected: BTreeSet<String> = api::functions()
        .filter(|f| !f.is_internal())
        .map(|f| f.name.to_string())
        .collect();
    assert_eq!(public, expected, "public functions of the extension");

    for f in api::functions() {
        let rows = db
            .query(
                "SELECT pg_get_function_arguments(p.oid), pg_get_function_result(p.oid), \
                 p.provolatile::text FROM pg_proc p WHERE p.proname = $1",
                &[agentmem_tests::backend::Param::Text(f.name.into())],
            )
            .unwrap();
        assert_eq!(rows.len(), 1, "{}: one function of that name", f.name);
        let args: Vec<String> = f
            .args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let default = if i >= f.required {
                    " DEFAULT NULL::"
                } else {
                    ""
                };
                let ty = pg_type(a.ty);
                if default.is_empty() {
                    format!("{} {ty}", a.name)
                } else {
                    format!("{} {ty}{default}{ty}", a.name)
                }
            })
            .collect();
        assert_eq!(text(&rows[0], 0), args.join(", "), "{}: arguments", f.name);
        let result = match f.returns {
            Returns::Scalar(t, _) => pg_type(t).to_string(),
            Returns::Table(cols, _) => {
                let columns = cols
                    .iter()
                    .map(|c| format!("{} {}", c.name, pg_type(c.ty)))
                    .collect::<Vec<_>>()
                    .join(", ");
                if cols.len() == 1 {
                    format!("TABLE({columns})")
                } else {
                    // Rows of a composite type of the same columns, named after the function.
                    let ty = format!("{}.{}_row", agentmem_core::schema::PRIVATE_SCHEMA, f.name);
                    let declared = db
                        .query(
                            "SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, \
                             a.atttypmod), ', ' ORDER BY a.attnum) FROM pg_attribute a \
                             WHERE a.attrelid = (SELECT typrelid FROM pg_type \
                             WHERE oid = to_regtype($1)) AND a.attnum > 0 AND NOT a.attisdropped",
                            &[agentmem_tests::backend::Param::Text(ty.clone())],
                        )
                        .unwrap();
                    assert_eq!(text(&declared[0], 0), columns, "{}: row type", f.name);
                    // Named as the session's search path shows it.
                    let shown = db
                        .query(
                            "SELECT CAST(to_regtype($1) AS text)",
                            &[agentmem_tests::backend::Param::Text(ty)],
                        )
                        .unwrap();
                    format!("SETOF {}", text(&shown[0], 0))
                }
            }
        };
        assert_eq!(text(&rows[0], 1), result, "{}: result", f.name);
        let volatility = match f.nature {
            Nature::Pure => "i",
            Nature::Reader => "s",
            Nature::Volatile | Nature::Writer => "v",
        };
        assert_eq!(text(&rows[0], 2), volatility, "{}: volatility", f.name);
    }
}
