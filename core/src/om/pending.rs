//! Which messages a record has not observed yet.
//!
//! A message is unobserved when it was created at or after the record's cursor
//! (`last_observed_at`) and its id is not in `observed_message_ids` (which holds the observed
//! messages at or after the cursor, so that equal timestamps never hide a message). Messages of
//! deleted threads are not pending: observational memory stops counting a thread when it is
//! deleted (and counts it again when it is restored).

use super::record::{Key, Record, Scope};
use crate::cluster::route;
use crate::threads::lifecycle;
use crate::{Conn, Result, Value};
use std::collections::HashSet;

/// An unobserved message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Msg {
    pub id: String,
    pub thread_id: String,
    pub role: String,
    /// The injection text, or empty when the caller did not ask for text.
    pub content: String,
    pub created_at: i64,
    pub token_count: i64,
}

/// Unobserved messages of the key's scope, oldest first. O(unobserved · log n).
pub(crate) fn unobserved(
    conn: &mut dyn Conn,
    key: &Key,
    rec: Option<&Record>,
    with_text: bool,
) -> Result<Vec<Msg>> {
    let cursor = rec.and_then(|r| r.last_observed_at);
    let (column, value) = match key.scope {
        Scope::Thread => ("thread_id", key.thread_id.clone().unwrap_or_default()),
        Scope::Resource => ("resource_id", key.resource_id.clone()),
    };
    let text = if with_text {
        "coalesce(injection_text, raw_content)"
    } else {
        "''"
    };
    let mut params: Vec<Value> = vec![value.into(), cursor.into()];
    let live = lifecycle::hide_deleted(conn, Some(&key.resource_id), false, &mut params)?;
    let rows = route::query(
        conn,
        &format!(
            "SELECT id, thread_id, role, {text}, created_at, token_count FROM mem_messages \
             WHERE {column} = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR created_at >= CAST(?2 AS BIGINT)){live}\
             {{home}} ORDER BY created_at, thread_id, message_index"
        ),
        &params,
    )?;
    let observed: HashSet<&str> = rec
        .map(|r| r.observed_ids.iter().map(String::as_str).collect())
        .unwrap_or_default();
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            let mut it = r.into_iter();
            let id = it.next()?.into_string()?;
            if observed.contains(id.as_str()) {
                return None;
            }
            Some(Msg {
                id,
                thread_id: it.next()?.into_string()?,
                role: it.next()?.into_string()?,
                content: it.next().and_then(Value::into_string).unwrap_or_default(),
                created_at: it.next()?.as_i64()?,
                token_count: it.next().and_then(|v| v.as_i64()).unwrap_or(0),
            })
        })
        .collect())
}

/// Count and tokens of the unobserved messages, as index range sums: the messages at or after
/// the cursor, less the observed ones among them. O(log n + range) inside the database.
pub(crate) fn totals(conn: &mut dyn Conn, key: &Key, rec: Option<&Record>) -> Result<(i64, i64)> {
    let cursor = rec.and_then(|r| r.last_observed_at);
    let (column, value) = match key.scope {
        Scope::Thread => ("thread_id", key.thread_id.clone().unwrap_or_default()),
        Scope::Resource => ("resource_id", key.resource_id.clone()),
    };
    let sum = |conn: &mut dyn Conn, sql: &str, params: &[Value]| -> Result<(i64, i64)> {
        let row = conn
            .query(sql, params)?
            .into_iter()
            .next()
            .unwrap_or_default();
        let n = row.first().and_then(Value::as_i64).unwrap_or(0);
        let t = row.get(1).and_then(Value::as_i64).unwrap_or(0);
        Ok((n, t))
    };
    let mut params: Vec<Value> = vec![value.into(), cursor.into()];
    let live = lifecycle::hide_deleted(conn, Some(&key.resource_id), false, &mut params)?;
    let home = route::and_home(conn, "resource_id", &mut params);
    let within = format!(
        "SELECT count(*), CAST(coalesce(sum(token_count), 0) AS BIGINT) FROM mem_messages \
         WHERE {column} = ?1 AND (CAST(?2 AS BIGINT) IS NULL OR created_at >= CAST(?2 AS BIGINT))\
         {live}{home}"
    );
    let (mut n, mut t) = sum(conn, &within, &params)?;
    let observed = rec.map(|r| r.observed_ids.as_slice()).unwrap_or_default();
    if !observed.is_empty() {
        let marks = crate::db::batch::values("#", observed.len(), params.len() + 1);
        params.extend(observed.iter().map(|i| Value::Text(i.clone())));
        let (on, ot) = sum(conn, &format!("{within} AND id IN ({marks})"), &params)?;
        n -= on;
        t -= ot;
    }
    Ok((n, t))
}

/// Ids covered by the record's buffered chunks.
pub(crate) fn buffered_ids(rec: Option<&Record>) -> HashSet<String> {
    rec.map(|r| {
        r.chunks
            .iter()
            .flat_map(|c| c.message_ids.iter().cloned())
            .collect()
    })
    .unwrap_or_default()
}
