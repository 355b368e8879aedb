//! Writing items: `mem_item_put` and `mem_item_delete`, and the expiry of items that have a
//! time to live.

use super::namespace::{self, check_key};
use super::{fields, read};
use crate::ids::check_id;
use crate::json_opts::Opts;
use crate::{json_input, Conn, Error, Result, Value};
use serde_json::Value as Json;

/// The largest value, in bytes of JSON (as a message's content).
const MAX_VALUE: usize = 4 << 20;

const PUT_OPTIONS: &[&str] = &["fields", "ttl", "now"];

/// `mem_item_put(resource_id, namespace, key, value [, options])`: stores `value` (a JSON
/// object) under the namespace and key, replacing what was there (its creation time stays).
/// Options: `fields` (the paths whose text is searched; `[]` for none; every string by
/// default), `ttl` (minutes the item lives; for ever by default), `now`. Returns the item as
/// `mem_item_get` does.
pub(crate) fn put(
    conn: &mut dyn Conn,
    resource: &str,
    ns: &str,
    key: &str,
    value: &str,
    options: Option<&str>,
) -> Result<String> {
    check_id("resource_id", resource)?;
    let labels = namespace::parse("namespace", ns, false)?;
    check_key(key)?;
    if value.len() > MAX_VALUE {
        return Err(Error::invalid("value", format!("must be at most {MAX_VALUE} bytes of JSON")));
    }
    let parsed @ Json::Object(_) = json_input::parse("value", value)? else {
        return Err(Error::invalid("value", "must be a JSON object"));
    };
    // Stored as the reads give it back (compact, keys sorted, a repeated key's last value), on
    // SQLite as Postgres' jsonb keeps it.
    let value = parsed.to_string();
    let o = Opts::parse("options", options, PUT_OPTIONS)?;
    let paths = match o.opt_array("fields")? {
        Some(p) => {
            fields::check("options.fields", &p)?;
            Value::Text(Json::Array(p).to_string())
        }
        None => Value::Null,
    };
    let ttl = o.opt_f64("ttl")?;
    if ttl.is_some_and(|m| !(m > 0.0 && m.is_finite())) {
        return Err(Error::invalid("options.ttl", "must be a positive number of minutes"));
    }
    let now = conn.now_or(o.opt_int("now")?)?;
    expire(conn, resource, now)?;
    let expires = ttl.map_or(Value::Null, |m| Value::Int(now + (m * 60_000.0) as i64));
    let stored = namespace::join(&labels);
    conn.execute(
        "INSERT INTO mem_items (resource_id, namespace, key, value, fields, created_at, \
           updated_at, ttl_minutes, expires_at) \
         VALUES (?1, ?2, ?3, CAST(?4 AS @JSON), CAST(?5 AS @JSON), ?6, ?6, CAST(?7 AS @DOUBLE), \
           CAST(?8 AS BIGINT)) \
         ON CONFLICT (resource_id, namespace, key) DO UPDATE SET value = excluded.value, \
           fields = excluded.fields, updated_at = excluded.updated_at, \
           ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at",
        &[
            resource.into(),
            stored.as_str().into(),
            key.into(),
            value.as_str().into(),
            paths,
            Value::Int(now),
            ttl.map_or(Value::Null, Value::Real),
            expires,
        ],
    )?;
    read::one(conn, resource, &stored, key, now)?
        .ok_or_else(|| Error::internal("an item just put is not there"))
}

/// `mem_item_delete(resource_id, namespace, key)`: the number of items deleted (0 or 1).
pub(crate) fn delete(conn: &mut dyn Conn, resource: &str, ns: &str, key: &str) -> Result<i64> {
    let labels = namespace::parse("namespace", ns, false)?;
    check_key(key)?;
    let n = conn.execute(
        "DELETE FROM mem_items WHERE resource_id = ?1 AND namespace = ?2 AND key = ?3",
        &[resource.into(), namespace::join(&labels).into(), key.into()],
    )?;
    Ok(n as i64)
}

/// Deletes the resource's items that expired by `now`: what a write of the resource costs
/// besides its own (reads only skip them).
fn expire(conn: &mut dyn Conn, resource: &str, now: i64) -> Result<()> {
    conn.execute(
        "DELETE FROM mem_items WHERE resource_id = ?1 AND expires_at <= ?2",
        &[resource.into(), Value::Int(now)],
    )
    .map(drop)
}
