//! Reading items: `mem_item_get`, `mem_item_search` and `mem_item_namespaces`. Expired items
//! are invisible to every read; a read that finds an item with a time to live starts its time
//! again (unless told not to), as the framework's stores do.

use super::filter::Filter;
use super::{namespace, NS_ITEMS};
use crate::columns::{row, JsonText};
use crate::db::row::Fields;
use crate::ids::check_id;
use crate::json_opts::Opts;
use crate::cluster::route;
use crate::search::rows::{self, Allowed};
use crate::vectors::{self, math::{Metric, Query}};
use crate::search::SearchParams;
use crate::{json_input, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};
use std::collections::{BTreeSet, HashMap};

row! {
    /// One row of `mem_item_search`.
    pub(crate) struct Found {
        pub namespace: JsonText,
        pub key: String,
        pub value: JsonText,
        pub created_at: i64,
        pub updated_at: i64,
        /// The BM25 score of a search with a query; NULL without one.
        pub score: Option<f64>,
    }
}

row! {
    /// One row of `mem_item_namespaces`.
    pub(crate) struct Namespace {
        pub namespace: JsonText,
    }
}

/// The most items a search returns.
const MAX_LIMIT: i64 = 1000;

/// An item row as the reads select it: `seq, id, namespace, key, value, created_at,
/// updated_at, ttl_minutes`, of a resource, not expired at `?2`.
const COLUMNS: &str = "seq, id, namespace, key, value, created_at, updated_at, ttl_minutes";
const VISIBLE: &str = "resource_id = ?1 AND (expires_at IS NULL OR expires_at > ?2)";

struct Stored {
    seq: i64,
    id: String,
    namespace: String,
    key: String,
    value: String,
    created_at: i64,
    updated_at: i64,
    ttl: Option<f64>,
}

fn decode(r: crate::Row) -> Option<Stored> {
    let mut f = Fields::new(r);
    Some(Stored {
        seq: f.int()?,
        id: f.text()?,
        namespace: f.text()?,
        key: f.text()?,
        value: f.text()?,
        created_at: f.int()?,
        updated_at: f.int()?,
        ttl: f.value().as_f64(),
    })
}

/// Starts again the time of the rows that have one (one statement per distinct time to live).
fn refresh(conn: &mut dyn Conn, resource: &str, found: &[&Stored], now: i64) -> Result<()> {
    let mut by_ttl: HashMap<u64, Vec<i64>> = HashMap::new();
    for r in found {
        if let Some(m) = r.ttl {
            by_ttl.entry(m.to_bits()).or_default().push(r.seq);
        }
    }
    for (bits, seqs) in by_ttl {
        let marks: Vec<String> = (0..seqs.len()).map(|i| format!("?{}", i + 3)).collect();
        let mut params: Vec<Value> = vec![resource.into()];
        params.push(Value::Int(now + (f64::from_bits(bits) * 60_000.0) as i64));
        params.extend(seqs.into_iter().map(Value::Int));
        conn.execute(
            &format!(
                "UPDATE mem_items SET expires_at = ?2 WHERE resource_id = ?1 AND seq IN ({})",
                marks.join(", ")
            ),
            &params,
        )?;
    }
    Ok(())
}

/// A stored value as the reads give it: compact, keys sorted, whatever plain SQL wrote on
/// SQLite (Postgres' jsonb holds one form already).
fn canonical(value: &str) -> Result<Json> {
    json_input::parse("value", value)
}

fn item_json(r: &Stored) -> Result<String> {
    let value = canonical(&r.value)?;
    Ok(json!({
        "id": r.id,
        "namespace": namespace::split(&r.namespace),
        "key": r.key,
        "value": value,
        "created_at": r.created_at,
        "updated_at": r.updated_at,
    })
    .to_string())
}

/// The item under a stored namespace and key, visible at `now`, as JSON.
pub(crate) fn one(conn: &mut dyn Conn, resource: &str, ns: &str, key: &str, now: i64) -> Result<Option<String>> {
    fetch(conn, resource, ns, key, now)?.as_ref().map(item_json).transpose()
}

fn fetch(conn: &mut dyn Conn, resource: &str, ns: &str, key: &str, now: i64) -> Result<Option<Stored>> {
    Ok(conn
        .query(
            &format!("SELECT {COLUMNS} FROM mem_items WHERE {VISIBLE} AND namespace = ?3 AND key = ?4"),
            &[resource.into(), Value::Int(now), ns.into(), key.into()],
        )?
        .into_iter()
        .next()
        .and_then(decode))
}

const GET_OPTIONS: &[&str] = &["refresh_ttl", "now"];

/// `mem_item_get(resource_id, namespace, key [, options])`: the item as JSON (`id`,
/// `namespace`, `key`, `value`, `created_at`, `updated_at`), or NULL; vectors belong to it by
/// its `id`. Options: `refresh_ttl` (true), `now`.
pub(crate) fn get(
    conn: &mut dyn Conn,
    resource: &str,
    ns: &str,
    key: &str,
    options: Option<&str>,
) -> Result<Option<String>> {
    check_id("resource_id", resource)?;
    let stored = namespace::join(&namespace::parse("namespace", ns, false)?);
    namespace::check_key(key)?;
    let o = Opts::parse("options", options, GET_OPTIONS)?;
    let now = conn.now_or(o.opt_int("now")?)?;
    let Some(r) = fetch(conn, resource, &stored, key, now)? else {
        return Ok(None);
    };
    if o.opt_bool("refresh_ttl")?.unwrap_or(true) {
        refresh(conn, resource, &[&r], now)?;
    }
    item_json(&r).map(Some)
}

const SEARCH_OPTIONS: &[&str] = &[
    "query",
    "vector",
    "model",
    "filter",
    "limit",
    "offset",
    "refresh_ttl",
    "now",
];

/// `mem_item_search(resource_id, namespace_prefix [, options])`: the items under the prefix
/// (a JSON array of labels; `[]` for all) whose values pass `filter`, most recently written
/// first — or, with a `query`, the ones that match it, best first by BM25 (× recency); or,
/// with a `vector` and its `model`, every one by the cosine similarity of its vector of that
/// model, those without one last. Options: `query`, `vector`, `model`, `filter`, `limit` (10,
/// up to 1000), `offset` (0), `refresh_ttl` (true), `now`.
pub(crate) fn search(
    conn: &mut dyn Conn,
    resource: &str,
    prefix: &str,
    options: Option<&str>,
) -> Result<Vec<Found>> {
    check_id("resource_id", resource)?;
    let prefix = namespace::parse("namespace_prefix", prefix, true)?;
    let o = Opts::parse("options", options, SEARCH_OPTIONS)?;
    let query = o.opt_str("query")?.filter(|q| !q.trim().is_empty());
    let filter = match o.opt_object("filter")? {
        Some(f) => match json_input::parse("options.filter", &f)? {
            Json::Object(m) => Some(Filter::parse("options.filter", m)?),
            _ => None,
        },
        None => None,
    };
    let dense = nearness(&o)?;
    if dense.is_some() && query.is_some() {
        return Err(Error::invalid("options.vector", "goes without a query (give one or the other)"));
    }
    let limit = o.int("limit", 10, 0, MAX_LIMIT)? as usize;
    let offset = o.int("offset", 0, 0, i64::MAX)? as usize;
    let now = conn.now_or(o.opt_int("now")?)?;

    let mut params: Vec<Value> = vec![resource.into(), Value::Int(now)];
    let mut sql = format!("SELECT {COLUMNS} FROM mem_items WHERE {VISIBLE}");
    if !prefix.is_empty() {
        let stored = namespace::join(&prefix);
        let under = format!("{stored}.");
        sql.push_str(" AND (namespace = ?3 OR substr(namespace, 1, CAST(?4 AS INTEGER)) = ?5)");
        params.push(stored.into());
        params.push(Value::Int(under.chars().count() as i64));
        params.push(under.into());
    }
    sql.push_str(" ORDER BY updated_at DESC, namespace, key");
    // Without a filter or a ranking the database cuts the page itself.
    let plain = filter.is_none() && query.is_none() && dense.is_none();
    if plain {
        sql.push_str(&format!(" LIMIT {limit} OFFSET {offset}"));
    }
    let mut rows: Vec<Stored> = conn.query(&sql, &params)?.into_iter().filter_map(decode).collect();
    if let Some(f) = &filter {
        rows.retain(|r| serde_json::from_str(&r.value).is_ok_and(|v| f.passes(&v)));
    }
    let page: Vec<(&Stored, Option<f64>)> = match (&query, dense) {
        _ if plain => rows.iter().map(|r| (r, None)).collect(),
        (None, Some((model, q))) => nearest(conn, resource, &model, q, &rows)?
            .into_iter()
            .skip(offset)
            .take(limit)
            .collect(),
        (None, None) => rows.iter().skip(offset).take(limit).map(|r| (r, None)).collect(),
        (Some(q), _) => {
            let by_seq: HashMap<i64, &Stored> = rows.iter().map(|r| (r.seq, r)).collect();
            let allowed = Allowed::Only(by_seq.keys().copied().collect());
            let params = SearchParams {
                limit: offset.saturating_add(limit),
                now: Some(now),
                ..SearchParams::default()
            };
            let found = rows::search_allowed(conn, NS_ITEMS, Some(resource), q, &params, &allowed)?;
            found
                .hits
                .into_iter()
                .skip(offset)
                .filter_map(|h| by_seq.get(&h.doc).map(|r| (*r, Some(h.score))))
                .collect()
        }
    };
    if o.opt_bool("refresh_ttl")?.unwrap_or(true) {
        refresh(conn, resource, &page.iter().map(|(r, _)| *r).collect::<Vec<_>>(), now)?;
    }
    page.into_iter()
        .map(|(r, score)| {
            Ok(Found {
                namespace: JsonText(namespace::to_json(&r.namespace)),
                key: r.key.clone(),
                value: JsonText(canonical(&r.value)?.to_string()),
                created_at: r.created_at,
                updated_at: r.updated_at,
                score,
            })
        })
        .collect()
}

/// The `vector` and `model` options of a search by nearness, if it is one.
fn nearness(o: &Opts) -> Result<Option<(String, Query)>> {
    match (o.opt_array("vector")?, o.opt_str("model")?) {
        (Some(v), Some(model)) => {
            let v = vectors::from_numbers("options.vector", &v)?;
            vectors::check_norm("options.vector", &v)?;
            Ok(Some((model, Query::new(v, Metric::Cosine))))
        }
        (None, None) => Ok(None),
        (Some(_), None) => Err(Error::invalid("options.model", "is required with options.vector")),
        (None, Some(_)) => Err(Error::invalid("options.vector", "is required with options.model")),
    }
}

/// `rows` by the cosine similarity of their vector of `model` to the query, best first (ties
/// newest first, as `rows` are), then those without a vector in their order.
fn nearest<'a>(
    conn: &mut dyn Conn,
    resource: &str,
    model: &str,
    q: Query,
    rows: &'a [Stored],
) -> Result<Vec<(&'a Stored, Option<f64>)>> {
    let found = route::query(
        conn,
        "SELECT i.seq, e.vector FROM mem_items i JOIN mem_embeddings e ON e.owner_id = i.id \
         WHERE i.resource_id = ?1 AND e.kind = 'item' AND e.model = ?2{home:e}",
        &[resource.into(), model.into()],
    )?;
    let mut similarity: HashMap<i64, f64> = HashMap::new();
    for r in found {
        let mut f = Fields::new(r);
        let (Some(seq), Value::Blob(b)) = (f.int(), f.value()) else { continue };
        let v = vectors::from_blob("vector", &b)?;
        if v.len() != q.v.len() {
            return Err(Error::invalid(
                "options.vector",
                format!("has {} numbers; the vectors of model {} have {}", q.v.len(), crate::error::echo(model), v.len()),
            ));
        }
        similarity.insert(seq, 1.0 - q.distance(&v));
    }
    let (mut scored, unscored): (Vec<_>, Vec<_>) = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (i, r, similarity.get(&r.seq).copied()))
        .partition(|(_, _, s)| s.is_some());
    scored.sort_by(|a, b| b.2.unwrap_or(0.0).total_cmp(&a.2.unwrap_or(0.0)).then(a.0.cmp(&b.0)));
    Ok(scored.into_iter().chain(unscored).map(|(_, r, s)| (r, s)).collect())
}

const NAMESPACE_OPTIONS: &[&str] = &["prefix", "suffix", "max_depth", "limit", "offset", "now"];

/// A match pattern: labels, `*` matching any one.
fn pattern(o: &Opts, key: &str) -> Result<Option<Vec<String>>> {
    o.opt_array(key)?
        .map(|a| namespace::labels(&format!("options.{key}"), &a, true))
        .transpose()
}

/// `mem_item_namespaces(resource_id [, options])`: the namespaces that hold items, sorted by
/// their labels. Options: `prefix`, `suffix` (labels it must start or end with, `*` matching
/// any one), `max_depth` (namespaces cut to that many labels, then deduplicated), `limit`
/// (100, up to 1000), `offset` (0), `now`.
pub(crate) fn namespaces(conn: &mut dyn Conn, resource: &str, options: Option<&str>) -> Result<Vec<Namespace>> {
    check_id("resource_id", resource)?;
    let o = Opts::parse("options", options, NAMESPACE_OPTIONS)?;
    let (prefix, suffix) = (pattern(&o, "prefix")?, pattern(&o, "suffix")?);
    let depth = o.opt_int("max_depth")?;
    if depth.is_some_and(|d| d < 1) {
        return Err(Error::invalid("options.max_depth", "must be at least 1"));
    }
    let limit = o.int("limit", 100, 0, MAX_LIMIT)? as usize;
    let offset = o.int("offset", 0, 0, i64::MAX)? as usize;
    let now = conn.now_or(o.opt_int("now")?)?;
    let stored = conn.query(
        &format!("SELECT DISTINCT namespace FROM mem_items WHERE {VISIBLE}"),
        &[resource.into(), Value::Int(now)],
    )?;
    let mut out = BTreeSet::new();
    for r in stored {
        let Some(Value::Text(s)) = r.into_iter().next() else { continue };
        let mut labels = namespace::split(&s);
        if prefix.as_ref().is_some_and(|p| !namespace::matches(&labels, p, false))
            || suffix.as_ref().is_some_and(|p| !namespace::matches(&labels, p, true))
        {
            continue;
        }
        if let Some(d) = depth {
            labels.truncate(d as usize);
        }
        out.insert(labels);
    }
    Ok(out
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|labels| Namespace {
            namespace: JsonText(Json::from(labels).to_string()),
        })
        .collect())
}
