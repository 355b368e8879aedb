//! A Postgres database where the agentmem extension is installed.

use super::connection::{hex, Db, Result, Sink};
use postgres::types::Type;
use postgres::{Client, NoTls};
use serde_json::Value as Json;

pub struct Postgres {
    client: Client,
}

impl Postgres {
    /// Connects with a libpq connection string or URL, and checks the extension is there.
    pub fn connect(dsn: &str) -> Result<Postgres> {
        let mut client = Client::connect(dsn, NoTls).map_err(|e| message(&e))?;
        let installed = client
            .query_opt(
                "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'agentmem'",
                &[],
            )
            .map_err(|e| message(&e))?;
        if installed.is_none() {
            return Err(
                "this database has no agentmem extension: run CREATE EXTENSION agentmem".into(),
            );
        }
        Ok(Postgres { client })
    }
}

impl Db for Postgres {
    fn placeholder(&self, n: usize, ty: super::Type) -> String {
        match ty {
            super::Type::Int => format!("CAST(CAST(${n} AS text) AS bigint)"),
            super::Type::Real => format!("CAST(CAST(${n} AS text) AS double precision)"),
            super::Type::Bool => format!("CAST(CAST(${n} AS text) AS boolean)"),
            _ => format!("${n}"),
        }
    }

    fn each(&mut self, sql: &str, params: &[Option<&str>], row: Sink) -> Result<()> {
        let stmt = self.client.prepare(sql).map_err(|e| message(&e))?;
        // Streamed: a large export is never held whole.
        let rows = self
            .client
            .query_raw(&stmt, params.iter())
            .map_err(|e| message(&e))?;
        for r in postgres::fallible_iterator::FallibleIterator::iterator(rows) {
            let r = r.map_err(|e| message(&e))?;
            let mut values = Vec::with_capacity(r.len());
            for (i, c) in r.columns().iter().enumerate() {
                values.push(value(&r, i, c.type_()).map_err(|e| message(&e))?);
            }
            row(values)?;
        }
        Ok(())
    }
}

/// Column `i` as JSON, by its Postgres type.
fn value(r: &postgres::Row, i: usize, ty: &Type) -> std::result::Result<Json, postgres::Error> {
    Ok(match *ty {
        Type::INT8 => r
            .try_get::<_, Option<i64>>(i)?
            .map_or(Json::Null, Json::from),
        Type::INT4 => r
            .try_get::<_, Option<i32>>(i)?
            .map_or(Json::Null, Json::from),
        Type::FLOAT8 => r
            .try_get::<_, Option<f64>>(i)?
            .map_or(Json::Null, Json::from),
        Type::BOOL => r
            .try_get::<_, Option<bool>>(i)?
            .map_or(Json::Null, Json::from),
        Type::JSONB | Type::JSON => r.try_get::<_, Option<Json>>(i)?.unwrap_or(Json::Null),
        Type::BYTEA => r
            .try_get::<_, Option<Vec<u8>>>(i)?
            .map_or(Json::Null, |b| Json::String(hex(&b))),
        _ => r
            .try_get::<_, Option<String>>(i)?
            .map_or(Json::Null, Json::String),
    })
}

/// The server's message without the client's decoration; a client-side error with its cause
/// ("error connecting to server: Connection refused").
fn message(e: &postgres::Error) -> String {
    match (e.as_db_error(), std::error::Error::source(e)) {
        (Some(d), _) => d.message().to_owned(),
        (None, Some(cause)) => format!("{e}: {cause}"),
        (None, None) => e.to_string(),
    }
}
