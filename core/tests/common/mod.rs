//! A test-only [`Conn`] over rusqlite (system libsqlite3), shared by the core's integration
//! tests that run the core against a real SQLite database.

use agentmem_core::conn::dialect_sql;
use agentmem_core::{Conn, Dialect, Error, Result, Row, Value};

pub struct Sq(pub rusqlite::Connection);

pub fn db(e: rusqlite::Error) -> Error {
    Error::Database(e.to_string())
}

fn to_sql(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Int(i) => V::Integer(*i),
        Value::Real(f) => V::Real(*f),
        Value::Text(s) => V::Text(s.clone()),
        Value::Blob(b) => V::Blob(b.clone()),
    }
}

impl Conn for Sq {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        use rusqlite::types::ValueRef;
        let sql = dialect_sql(sql, Dialect::Sqlite);
        let mut st = self.0.prepare_cached(&sql).map_err(db)?;
        let n = st.column_count();
        let mut rows = st
            .query(rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map_err(db)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(db)? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i).map_err(db)? {
                    ValueRef::Null => Value::Null,
                    ValueRef::Integer(i) => Value::Int(i),
                    ValueRef::Real(f) => Value::Real(f),
                    ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                });
            }
            out.push(row);
        }
        Ok(out)
    }
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        let sql = dialect_sql(sql, Dialect::Sqlite);
        let mut st = self.0.prepare_cached(&sql).map_err(db)?;
        Ok(st
            .execute(rusqlite::params_from_iter(params.iter().map(to_sql)))
            .map_err(db)? as u64)
    }
    fn execute_batch(&mut self, sql: &str) -> Result<()> {
        self.0.execute_batch(sql).map_err(db)
    }
}
