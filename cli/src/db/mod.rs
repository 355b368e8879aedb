//! Calls of agentmem's SQL functions over either database.
//!
//! The CLI implements no rule of its own: every command is a call of a function of the core's
//! catalog ([`agentmem_core::api`]), made in SQL on a SQLite file (with the extension linked
//! into this binary) or on a Postgres database (where the extension is installed). The
//! catalog also says how to read the answer, so both databases give the same JSON.

mod connection;
mod postgres;
mod sqlite;

pub use connection::{Db, Result};

pub use agentmem_core::api::Type;
use agentmem_core::api::{self, Function, Returns};
use serde_json::Value as Json;

/// Opens the memory: a SQLite file (created and initialised when new) or a Postgres
/// connection string.
pub fn open(sqlite: Option<&str>, pg: Option<&str>) -> Result<Box<dyn Db>> {
    match (sqlite, pg) {
        (Some(path), None) => Ok(Box::new(sqlite::Sqlite::open(path)?)),
        (None, Some(dsn)) => Ok(Box::new(postgres::Postgres::connect(dsn)?)),
        (Some(_), Some(_)) => Err(
            "give --db or --pg, not both (the environment's AGENTMEM_DB and AGENTMEM_PG count)"
                .into(),
        ),
        (None, None) => Err(
            "no database: give --db FILE (SQLite) or --pg CONNINFO (Postgres), \
             or set AGENTMEM_DB or AGENTMEM_PG"
                .into(),
        ),
    }
}

/// The rows a table function returned, with its column names.
pub struct Table {
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Json>>,
}

/// The catalog entry of `name`; the CLI only calls functions that exist.
fn function(name: &str) -> &'static Function {
    api::find(name).unwrap_or_else(|| panic!("{name} is not in agentmem's catalog"))
}

/// The statement that calls `f` with `n` arguments. Only catalog names go into it; the
/// arguments are parameters.
fn statement(db: &dyn Db, f: &Function, n: usize) -> String {
    let args: Vec<String> = (1..=n)
        .map(|i| db.placeholder(i, f.args.get(i - 1).map_or(Type::Text, |a| a.ty)))
        .collect();
    let call = format!("{}({})", f.name, args.join(", "));
    match f.returns {
        Returns::Scalar(..) => format!("SELECT {call}"),
        Returns::Table(cols, _) => {
            let names: Vec<&str> = cols.iter().map(|c| c.name).collect();
            format!("SELECT {} FROM {call}", names.join(", "))
        }
    }
}

/// A value read as the catalog types it: SQLite returns JSON as text and booleans as 0/1.
fn typed(ty: Type, v: Json) -> Json {
    match (ty, v) {
        (Type::Json, Json::String(s)) => serde_json::from_str(&s).unwrap_or(Json::String(s)),
        (Type::Bool, Json::Number(n)) => Json::Bool(n.as_i64() != Some(0)),
        (_, v) => v,
    }
}

/// Calls the scalar function `name`.
pub fn scalar(db: &mut dyn Db, name: &str, args: &[Option<&str>]) -> Result<Json> {
    let f = function(name);
    let Returns::Scalar(ty, _) = f.returns else {
        panic!("{name} returns a table");
    };
    let sql = statement(db, f, args.len());
    let mut out = Json::Null;
    db.each(&sql, args, &mut |mut row| {
        out = typed(ty, row.pop().unwrap_or(Json::Null));
        Ok(())
    })?;
    Ok(out)
}

/// Calls the table function `name`, handing over each row as it comes.
pub fn rows_each(
    db: &mut dyn Db,
    name: &str,
    args: &[Option<&str>],
    each: &mut dyn FnMut(&[&'static str], Vec<Json>) -> Result<()>,
) -> Result<Vec<&'static str>> {
    let f = function(name);
    let Returns::Table(cols, _) = f.returns else {
        panic!("{name} returns a scalar");
    };
    let names: Vec<&'static str> = cols.iter().map(|c| c.name).collect();
    let sql = statement(db, f, args.len());
    db.each(&sql, args, &mut |row| {
        let row = cols.iter().zip(row).map(|(c, v)| typed(c.ty, v)).collect();
        each(&names, row)
    })?;
    Ok(names)
}

/// Calls the table function `name`.
pub fn table(db: &mut dyn Db, name: &str, args: &[Option<&str>]) -> Result<Table> {
    let mut rows = Vec::new();
    let columns = rows_each(db, name, args, &mut |_, r| {
        rows.push(r);
        Ok(())
    })?;
    Ok(Table { columns, rows })
}
