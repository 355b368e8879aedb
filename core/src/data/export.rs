//! `mem_export`, `mem_export_rows` and `mem_import`: a thread, a resource or everything, as
//! JSON that round-trips, or as Markdown a person reads.
//!
//! The JSON document is `{"format": "agentmem-export", "version": 1, "scope": …, "tables":
//! {table: [row, …]}}` with every base row of the scope (data/tables.rs); keys are sorted and
//! rows in a fixed order, so the same data always gives the same text — on either database.
//! Import writes the rows with plain `INSERT`s, so the triggers rebuild everything derived
//! (search index, counters, closure, blocked state) as for any write; ids are kept.

use super::markdown;
pub(crate) use super::scope::Scope;
use super::tables::{self, Kind, Table, TABLES};
use crate::cluster::route::Owner;
use crate::columns::row;
use crate::text::hex;
use crate::{Conn, Error, Result, Value};
use serde_json::{json, Map, Value as Json};

/// The `format` of an export document, and its version.
pub(crate) const FORMAT: &str = "agentmem-export";
pub(crate) const VERSION: i64 = 1;

row! {
    /// One part of `mem_export_rows`: its number from 1, what it is, and its text.
    pub(crate) struct ExportPart {
        pub n: i64,
        pub part: String,
        pub body: String,
    }
}

/// The output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Markdown,
}

impl Format {
    pub(crate) fn parse(text: Option<&str>) -> Result<Format> {
        match text.unwrap_or("json") {
            "json" => Ok(Format::Json),
            "markdown" => Ok(Format::Markdown),
            _ => Err(Error::invalid("format", "must be json or markdown")),
        }
    }
}

/// A table's rows of the scope, as JSON objects in export order; `None` when the table has no
/// rows of a thread (memories, the graph).
pub(crate) fn rows_of(conn: &mut dyn Conn, t: &Table, scope: &Scope) -> Result<Option<Vec<Json>>> {
    let (cond, params): (Option<&str>, Vec<Value>) = match scope {
        Scope::All => (None, Vec::new()),
        Scope::Thread(id) => match t.of_thread {
            Some(c) => (Some(c), vec![id.as_str().into()]),
            None => return Ok(None),
        },
        Scope::Resource(id) => (Some(t.of_resource), vec![id.as_str().into()]),
    };
    let cols: Vec<&str> = t.columns.iter().map(|c| c.0).collect();
    let sql = format!(
        "SELECT {} FROM {}{} ORDER BY {}",
        cols.join(", "),
        t.name,
        cond.map(|c| format!(" WHERE {c}")).unwrap_or_default(),
        t.order
    );
    let mut out = Vec::new();
    for row in conn.query(&sql, &params)? {
        let mut m = Map::new();
        for ((name, kind), v) in t.columns.iter().zip(row) {
            m.insert((*name).to_owned(), to_json(t.name, name, *kind, v)?);
        }
        out.push(Json::Object(m));
    }
    Ok(Some(out))
}

fn to_json(table: &str, col: &str, kind: Kind, v: Value) -> Result<Json> {
    Ok(match (kind, v) {
        (_, Value::Null) => Json::Null,
        (Kind::Json, Value::Text(s)) => serde_json::from_str(&s).map_err(|e| {
            Error::internal(format!("{table}.{col}: stored JSON is malformed: {e}"))
        })?,
        (Kind::Blob, Value::Blob(b)) => Json::String(hex(&b)),
        (Kind::Real, Value::Int(i)) => json!(i as f64),
        (_, Value::Int(i)) => json!(i),
        (_, Value::Real(f)) => json!(f),
        (_, Value::Text(s)) => Json::String(s),
        (_, Value::Blob(b)) => Json::String(hex(&b)),
        (_, Value::Json(j)) => serde_json::to_value(&j)
            .map_err(|e| Error::internal(format!("{table}.{col}: {e}")))?,
    })
}

fn unhex(arg: &str, s: &str) -> Result<Vec<u8>> {
    let bad = || Error::invalid(arg.to_owned(), "must be an even number of hex digits");
    if !s.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2).ok_or_else(bad)?, 16).map_err(|_| bad()))
        .collect()
}

/// Every table's rows of the scope, in import order.
fn collect(conn: &mut dyn Conn, scope: &Scope) -> Result<Vec<(&'static str, Vec<Json>)>> {
    let mut out = Vec::new();
    for t in TABLES {
        if let Some(rows) = rows_of(conn, t, scope)? {
            out.push((t.name, rows));
        }
    }
    Ok(out)
}

fn document(scope: &Scope, tables: Vec<(&'static str, Vec<Json>)>) -> Json {
    let tables: Map<String, Json> = tables
        .into_iter()
        .map(|(n, rows)| (n.to_owned(), Json::Array(rows)))
        .collect();
    json!({
        "format": FORMAT,
        "version": VERSION,
        "scope": scope.to_json(),
        "tables": tables,
    })
}

/// `mem_export(scope [, format])` → the export as one text.
pub(crate) fn export(conn: &mut dyn Conn, scope: Option<&str>, format: Option<&str>) -> Result<String> {
    let scope = Scope::parse(scope)?;
    let format = Format::parse(format)?;
    let tables = collect(conn, &scope)?;
    Ok(match format {
        Format::Json => document(&scope, tables).to_string(),
        Format::Markdown => markdown::render(&scope, &tables).concat(),
    })
}

/// `mem_export_rows(scope [, format])` → the same export in parts, one row each, so a client
/// reads it row by row: JSON gives a first row `export`, the document with every table empty,
/// then one row per record (`part` the table, `body` the row's JSON), which appended to their
/// tables give `mem_export`'s document; Markdown one row per section, whose bodies
/// concatenated are `mem_export`'s text.
pub(crate) fn export_rows(
    conn: &mut dyn Conn,
    scope: Option<&str>,
    format: Option<&str>,
) -> Result<Vec<ExportPart>> {
    let scope = Scope::parse(scope)?;
    let format = Format::parse(format)?;
    let tables = collect(conn, &scope)?;
    let parts: Vec<(String, String)> = match format {
        Format::Json => {
            let empty = tables.iter().map(|(name, _)| (*name, Vec::new())).collect();
            let head = ("export".to_owned(), document(&scope, empty).to_string());
            std::iter::once(head)
                .chain(tables.into_iter().flat_map(|(name, rows)| {
                    rows.into_iter()
                        .map(move |r| (name.to_owned(), r.to_string()))
                }))
                .collect()
        }
        Format::Markdown => markdown::render(&scope, &tables)
            .into_iter()
            .map(|body| ("markdown".to_owned(), body))
            .collect(),
    };
    Ok(parts
        .into_iter()
        .enumerate()
        .map(|(i, (part, body))| ExportPart {
            n: i as i64 + 1,
            part,
            body,
        })
        .collect())
}

/// `mem_import(json)` → JSON `{table: rows written}`. The rows keep their ids; a row whose id
/// exists already fails the whole import (nothing is written). Threads are written active and
/// without metadata first, and get their state and metadata after their messages, so that
/// an archived thread takes its messages and an active task in the metadata links none.
pub(crate) fn import(conn: &mut dyn Conn, text: &str) -> Result<String> {
    let doc = crate::json_input::parse("json", text)?;
    if doc["format"] != FORMAT {
        return Err(Error::invalid(
            "json.format",
            format!("must be \"{FORMAT}\""),
        ));
    }
    if doc["version"].as_i64() != Some(VERSION) {
        return Err(Error::invalid("json.version", format!("must be {VERSION}")));
    }
    let given = doc["tables"]
        .as_object()
        .ok_or_else(|| Error::invalid("json.tables", "must be an object"))?;
    if let Some(name) = given.keys().find(|k| tables::table(k).is_none()) {
        return Err(Error::invalid(
            "json.tables",
            format!("unknown table {}", crate::error::echo(name)),
        ));
    }
    let mut counts = Map::new();
    let mut threads_after: Vec<ThreadAfter> = Vec::new();
    let mut owners = Owners::new(crate::cluster::route::distributed(conn)?);
    for t in TABLES {
        let Some(rows) = given.get(t.name) else {
            continue;
        };
        let rows = rows
            .as_array()
            .ok_or_else(|| Error::invalid(format!("json.tables.{}", t.name), "must be an array"))?;
        for (i, row) in rows.iter().enumerate() {
            let arg = format!("json.tables.{}[{i}]", t.name);
            let mut obj = row
                .as_object()
                .cloned()
                .ok_or_else(|| Error::invalid(arg.clone(), "must be an object"))?;
            if t.name == "mem_threads" {
                threads_after.push(ThreadAfter {
                    id: obj.get("id").cloned().unwrap_or(Json::Null),
                    metadata: obj
                        .insert("metadata".into(), json!({}))
                        .unwrap_or(json!({})),
                    state: obj
                        .insert("state".into(), json!("active"))
                        .unwrap_or(json!("active")),
                    updated_at: obj.get("updated_at").cloned().unwrap_or(Json::Null),
                });
            }
            let resource = owners.resource(conn, t.name, &obj)?;
            insert(conn, t, &arg, &obj, resource)?;
            owners.note(t.name, &obj);
        }
        counts.insert(t.name.to_owned(), json!(rows.len()));
    }
    for (i, t) in threads_after.into_iter().enumerate() {
        let arg = format!("json.tables.mem_threads[{i}]");
        let (updated_at, _) = from_json(&format!("{arg}.updated_at"), Kind::Int, &t.updated_at)?;
        let params = [
            t.id.as_str().into(),
            t.metadata.to_string().into(),
            t.state.as_str().into(),
            updated_at,
        ];
        conn.in_context(&arg, &mut |c| {
            c.execute(
                "UPDATE mem_threads SET metadata = CAST(?2 AS @JSON), state = ?3, \
                 updated_at = coalesce(CAST(?4 AS BIGINT), updated_at) WHERE id = ?1",
                &params,
            )
            .map(|_| ())
        })?;
    }
    Ok(Json::Object(counts).to_string())
}

/// What a thread row gets after its messages are in: its metadata and state (written active
/// and empty first, so that an archived thread takes its messages and an active task in the
/// metadata links none) and its time of update, which its messages moved.
struct ThreadAfter {
    id: Json,
    metadata: Json,
    state: Json,
    updated_at: Json,
}

/// The resources of the imported threads and tasks, for the rows an export writes without
/// one (a message's is its thread's, a task link's its task's): a distributed database
/// routes every row by its resource, so an import there gives it. On one node the triggers
/// complete the message's, and the link tables have none.
struct Owners {
    distributed: bool,
    of: std::collections::HashMap<(&'static str, String), String>,
}

impl Owners {
    fn new(distributed: bool) -> Owners {
        Owners {
            distributed,
            of: Default::default(),
        }
    }

    /// The table that owns the rows of `table`, and the column naming the owner.
    fn owner(table: &str) -> Option<(&'static str, &'static str)> {
        match table {
            "mem_messages" => Some(("mem_threads", "thread_id")),
            "mem_task_deps" | "mem_task_labels" | "mem_task_messages" => {
                Some(("mem_tasks", "task_id"))
            }
            _ => None,
        }
    }

    /// Remembers the resource of an imported thread or task.
    fn note(&mut self, table: &'static str, obj: &Map<String, Json>) {
        if let (Some(Json::String(id)), Some(Json::String(r))) =
            (obj.get("id"), obj.get("resource_id"))
        {
            self.of.insert((table, id.clone()), r.clone());
        }
    }

    /// The resource a row of `table` is written with, when the database needs it and the row
    /// does not give it: its owner's, imported before it or stored.
    fn resource(
        &self,
        conn: &mut dyn Conn,
        table: &str,
        obj: &Map<String, Json>,
    ) -> Result<Option<String>> {
        let (Some((owner, column)), true) = (Self::owner(table), self.distributed) else {
            return Ok(None);
        };
        let Some(Json::String(id)) = obj.get(column) else {
            return Ok(None);
        };
        if let Some(r) = self.of.get(&(owner, id.clone())) {
            return Ok(Some(r.clone()));
        }
        match owner {
            "mem_threads" => crate::threads::resource_by_id(conn, id),
            _ => Owner::Task.resource_of(conn, id),
        }
    }
}

/// One row through a plain `INSERT` of the columns it gives (unknown columns refused), and
/// the resource the database needs when the row has no column for it ([`Owners`]).
fn insert(
    conn: &mut dyn Conn,
    t: &Table,
    arg: &str,
    obj: &Map<String, Json>,
    resource: Option<String>,
) -> Result<()> {
    if let Some(k) = obj
        .keys()
        .find(|k| !t.columns.iter().any(|c| c.0 == k.as_str()))
    {
        return Err(Error::invalid(
            arg.to_owned(),
            format!("unknown column {}", crate::error::echo(k)),
        ));
    }
    let mut cols = Vec::new();
    let mut marks = Vec::new();
    let mut params = Vec::new();
    for (name, kind) in t.columns {
        // NULL is every nullable column's default; leaving it out also spares Postgres a
        // NULL parameter of unknown type.
        let Some(v) = obj.get(*name).filter(|v| !v.is_null()) else {
            continue;
        };
        let col_arg = format!("{arg}.{name}");
        let (value, mark) = from_json(&col_arg, *kind, v)?;
        params.push(value);
        cols.push(*name);
        marks.push(mark.replace('?', &format!("?{}", params.len())));
    }
    if let Some(r) = resource {
        params.push(r.into());
        cols.push("resource_id");
        marks.push(format!("?{}", params.len()));
    }
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({})",
        t.name,
        cols.join(", "),
        marks.join(", ")
    );
    // What the table's checks and triggers refuse is named by the row.
    conn.in_context(arg, &mut |c| c.execute(&sql, &params).map(|_| ()))
}

/// A JSON value as a statement parameter, with the placeholder its column needs.
fn from_json(arg: &str, kind: Kind, v: &Json) -> Result<(Value, &'static str)> {
    let wrong = |rule: &str| Error::invalid(arg.to_owned(), rule.to_owned());
    Ok(match (kind, v) {
        (_, Json::Null) => (Value::Null, "?"),
        (Kind::Json, v) => (v.to_string().into(), "CAST(? AS @JSON)"),
        (Kind::Text, Json::String(s)) => (s.as_str().into(), "?"),
        (Kind::Int, Json::Number(n)) => (
            Value::Int(n.as_i64().ok_or_else(|| wrong("must be an integer"))?),
            "?",
        ),
        (Kind::Real, Json::Number(n)) => (
            Value::Real(n.as_f64().ok_or_else(|| wrong("must be a number"))?),
            "?",
        ),
        (Kind::Blob, Json::String(s)) => (Value::Blob(unhex(arg, s)?), "?"),
        (Kind::Text, _) => return Err(wrong("must be a string")),
        (Kind::Int, _) => return Err(wrong("must be an integer")),
        (Kind::Real, _) => return Err(wrong("must be a number")),
        (Kind::Blob, _) => return Err(wrong("must be a hex string")),
    })
}

