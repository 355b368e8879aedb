//! One interface over a SQLite connection and a Postgres client.

use postgres::types::Type;
use rusqlite::types::ValueRef;
use std::fmt;

/// A result cell, normalised so that the two databases' native types compare equal.
#[derive(Clone, Debug)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl PartialEq for Cell {
    fn eq(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Int(a), Cell::Int(b)) => a == b,
            (Cell::Real(a), Cell::Real(b)) => (a - b).abs() <= 1e-9 * a.abs().max(1.0),
            (Cell::Int(a), Cell::Real(b)) | (Cell::Real(b), Cell::Int(a)) => {
                (*a as f64 - b).abs() <= 1e-9
            }
            (Cell::Text(a), Cell::Text(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Cell::Null => f.write_str("NULL"),
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Real(v) => write!(f, "{v}"),
            Cell::Text(v) => f.write_str(v),
        }
    }
}

/// Text that holds a JSON object or array is compared in canonical form (sorted keys, no
/// spaces): Postgres stores `jsonb`, SQLite the text as written.
fn text_cell(s: String) -> Cell {
    let t = s.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&s) {
            return Cell::Text(v.to_string());
        }
    }
    Cell::Text(s)
}

pub type Rows = Vec<Vec<Cell>>;

/// A parameter: statements in tests bind text or integers.
#[derive(Clone, Debug)]
pub enum Param {
    Text(String),
    Int(i64),
}

pub trait Backend {
    fn name(&self) -> &'static str;
    /// Runs `sql`, whose parameters are written `$1`, `$2`, … in both dialects.
    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Rows, String>;
    /// Drops and recreates agentmem's schema.
    fn reset(&mut self) -> Result<(), String>;
}

pub struct Sqlite {
    pub conn: rusqlite::Connection,
}

impl Sqlite {
    /// Opens `path` (":memory:" for a private database), loads the extension, runs mem_init().
    pub fn open(path: &str) -> Sqlite {
        let conn = rusqlite::Connection::open(path).expect("open sqlite");
        load(&conn);
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .unwrap();
        conn.query_row("SELECT mem_init()", [], |_| Ok(()))
            .expect("mem_init");
        Sqlite { conn }
    }
}

/// Loads the built extension into a rusqlite connection, as an application would.
pub fn load(conn: &rusqlite::Connection) {
    let path = crate::sqlite_extension();
    // SAFETY: loading our own extension, built by this repository.
    unsafe {
        conn.load_extension_enable().unwrap();
        conn.load_extension(&path, None::<&str>)
            .unwrap_or_else(|e| panic!("loading {}: {e}", path.display()));
        conn.load_extension_disable().unwrap();
    }
}

impl Backend for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Rows, String> {
        let mut stmt = self
            .conn
            .prepare(&numbered_params(sql))
            .map_err(|e| e.to_string())?;
        let ncols = stmt.column_count();
        let values: Vec<rusqlite::types::Value> = params
            .iter()
            .map(|p| match p {
                Param::Text(s) => rusqlite::types::Value::Text(s.clone()),
                Param::Int(i) => rusqlite::types::Value::Integer(*i),
            })
            .collect();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(values))
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            let mut cells = Vec::with_capacity(ncols);
            for i in 0..ncols {
                cells.push(match row.get_ref(i).map_err(|e| e.to_string())? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(v) => Cell::Int(v),
                    ValueRef::Real(v) => Cell::Real(v),
                    ValueRef::Text(t) => text_cell(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Cell::Text(format!("x'{}'", hex(b))),
                });
            }
            out.push(cells);
        }
        Ok(out)
    }

    fn reset(&mut self) -> Result<(), String> {
        self.conn = rusqlite::Connection::open_in_memory().map_err(|e| e.to_string())?;
        load(&self.conn);
        self.conn
            .query_row("SELECT mem_init()", [], |_| Ok(()))
            .map_err(|e| e.to_string())
    }
}

/// `$1` → `?1` outside string literals: SQLite would read `$1` as a named parameter.
fn numbered_params(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut in_str = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            in_str = !in_str;
        }
        if c == '$' && !in_str && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub struct Postgres {
    pub client: postgres::Client,
}

impl Postgres {
    /// Connects as the extension's owner would work: with the private schema of derived data
    /// on the search path, so the suites can inspect it (the closure, the index) by the names
    /// SQLite uses. Applications cannot; `tenants.rs` tests them.
    pub fn connect(url: &str) -> Postgres {
        let mut client = postgres::Client::connect(url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to Postgres at {url}: {e}"));
        client
            .batch_execute(&format!(
                "SET search_path = \"$user\", public, {}",
                agentmem_core::schema::PRIVATE_SCHEMA
            ))
            .unwrap();
        Postgres { client }
    }
}

/// The message of a Postgres error (without "db error: ERROR:" decoration).
pub fn pg_message(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_else(|| e.to_string())
}

impl Backend for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn query(&mut self, sql: &str, params: &[Param]) -> Result<Rows, String> {
        let stmt = self.client.prepare(sql).map_err(|e| pg_message(&e))?;
        let owned: Vec<Box<dyn postgres::types::ToSql + Sync>> = params
            .iter()
            .zip(stmt.params())
            .map(|(p, ty)| -> Box<dyn postgres::types::ToSql + Sync> {
                match (p, ty) {
                    (Param::Int(i), &Type::INT4) => Box::new(*i as i32),
                    (Param::Int(i), &Type::INT8) => Box::new(*i),
                    (Param::Int(i), _) => Box::new(i.to_string()),
                    (Param::Text(s), &Type::INT8) => Box::new(s.parse::<i64>().unwrap_or_default()),
                    (Param::Text(s), _) => Box::new(s.clone()),
                }
            })
            .collect();
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            owned.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .client
            .query(&stmt, &refs)
            .map_err(|e| pg_message(&e))?;
        let mut out = Vec::new();
        for row in rows {
            let mut cells = Vec::new();
            for (i, col) in row.columns().iter().enumerate() {
                let ty = col.type_().clone();
                let cell = match ty {
                    Type::INT8 => row.get::<_, Option<i64>>(i).map(Cell::Int),
                    Type::INT4 => row.get::<_, Option<i32>>(i).map(|v| Cell::Int(v.into())),
                    Type::INT2 => row.get::<_, Option<i16>>(i).map(|v| Cell::Int(v.into())),
                    Type::BOOL => row.get::<_, Option<bool>>(i).map(|v| Cell::Int(v.into())),
                    Type::FLOAT8 => row.get::<_, Option<f64>>(i).map(Cell::Real),
                    Type::FLOAT4 => row.get::<_, Option<f32>>(i).map(|v| Cell::Real(v.into())),
                    Type::JSONB | Type::JSON => row
                        .get::<_, Option<serde_json::Value>>(i)
                        .map(|v| Cell::Text(v.to_string())),
                    Type::BYTEA => row
                        .get::<_, Option<Vec<u8>>>(i)
                        .map(|b| Cell::Text(format!("x'{}'", hex(&b)))),
                    _ => row.get::<_, Option<String>>(i).map(text_cell),
                };
                cells.push(cell.unwrap_or(Cell::Null));
            }
            out.push(cells);
        }
        Ok(out)
    }

    fn reset(&mut self) -> Result<(), String> {
        self.client
            .batch_execute("DROP EXTENSION IF EXISTS agentmem CASCADE; CREATE EXTENSION agentmem;")
            .map_err(|e| pg_message(&e))
    }
}
