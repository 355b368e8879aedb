//! `mem_vector_search`: exact top-k over a model's vectors. It reads the model's chunks (a few
//! large blobs, floats contiguous) and its few unpacked rows, computes every distance in a
//! fixed-lane loop, and keeps the k closest in a bounded heap — no per-vector SQL value, no
//! approximation.

use super::cache::{self, Chunk};
use super::math::{Metric, Query};
use super::store::{self, Shelf};
use super::{from_blob, KINDS};
use crate::args::check_one_of;
use crate::cluster::route;
use crate::columns::row;
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::memories::filter::Filter;
use crate::search::rows::{Allowed, LISTED};
use crate::{Conn, Error, Result, Value};
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;

row! {
    /// One row of `mem_vector_search`: the vector's owner and its distance to the query.
    #[derive(Debug)]
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) struct Nearest {
        pub kind: String,
        pub id: String,
        pub distance: f64,
    }
}

const OPTIONS: &[&str] = &["metric", "limit", "kind", "resource_id", "thread_id", "types"];

/// Largest `limit` accepted.
pub(crate) const MAX_LIMIT: i64 = 1000;

/// A candidate: distance, then seq (ties: the earlier vector first).
#[derive(PartialEq)]
struct Near(f64, i64);

impl Eq for Near {}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The k closest seen so far (a max-heap of them: the worst on top).
struct TopK {
    k: usize,
    heap: BinaryHeap<Near>,
}

impl TopK {
    fn offer(&mut self, d: f64, seq: i64) {
        if self.heap.len() < self.k {
            self.heap.push(Near(d, seq));
        } else if let Some(worst) = self.heap.peek() {
            if Near(d, seq) < *worst {
                self.heap.pop();
                self.heap.push(Near(d, seq));
            }
        }
    }
}

/// Whose vectors a search may return: owners of these kinds, memories passing a memory
/// filter, messages and items of a resource, messages of a thread.
pub(crate) struct Owners {
    pub kinds: Vec<String>,
    pub memories: Filter,
    pub thread: Option<String>,
}

impl Owners {
    /// The owners `kind`, `resource_id` and `types` ask for (every memory, current or not: the
    /// vector search is the raw index; recall asks for current memories).
    fn from_options(o: &Opts) -> Result<Owners> {
        let kinds = match o.opt_str("kind")? {
            Some(k) => {
                check_one_of("options.kind", &k, KINDS)?;
                vec![k]
            }
            None => KINDS.iter().map(|k| k.to_string()).collect(),
        };
        let types = o.opt_strings("types")?;
        for t in types.iter().flatten() {
            check_one_of("options.types", t, crate::memories::TYPES)?;
        }
        let thread = o.opt_str("thread_id")?;
        if thread.is_some() && (types.is_some() || kinds.len() == 1 && kinds[0] != "message") {
            return Err(Error::invalid(
                "options.thread_id",
                "bounds messages: it goes without options.types and with kind message, if any",
            ));
        }
        Ok(Owners {
            thread,
            kinds,
            memories: Filter {
                resource: o.opt_str("resource_id")?,
                types,
                include_deprecated: true,
                ..Filter::default()
            },
        })
    }

    /// The owner kinds searched, with their tables (types given: memories only; a thread
    /// given: messages only).
    fn tables(&self) -> Vec<(&'static str, &'static str)> {
        [("memory", "mem_memories"), ("message", "mem_messages"), ("item", "mem_items")]
            .into_iter()
            .filter(|(k, _)| self.kinds.iter().any(|x| x == k))
            .filter(|(k, _)| *k == "memory" || self.memories.types.is_none())
            .filter(|(k, _)| *k == "message" || self.thread.is_none())
            .collect()
    }

    /// The conditions an owner of `kind` (alias `o`) must meet, their values pushed onto
    /// `params`; `None` when every owner passes.
    fn conditions(&self, kind: &str, params: &mut Vec<Value>) -> Option<String> {
        if kind == "memory" {
            return self.memories.sql("o", params);
        }
        let mut conds = Vec::new();
        let thread = self.thread.as_ref().filter(|_| kind == "message");
        for (column, value) in [("resource_id", self.memories.resource.as_ref()), ("thread_id", thread)] {
            if let Some(v) = value {
                params.push(v.as_str().into());
                conds.push(format!("o.{column} = ?{}", params.len()));
            }
        }
        (!conds.is_empty()).then(|| conds.join(" AND "))
    }

    /// The embeddings of `model` whose owners pass. Few passing owners (counted from their
    /// indexes) are joined to their vectors up front; many are checked lazily, a batch of the
    /// scan's best vectors at a time, each vector looking its owner up.
    pub(crate) fn allowed(&self, conn: &mut dyn Conn, model: &str) -> Result<Allowed> {
        let tables = self.tables();
        let unfiltered = tables
            .iter()
            .all(|(k, _)| self.conditions(k, &mut Vec::new()).is_none());
        if tables.len() == KINDS.len() && unfiltered {
            return Allowed::every(conn, "mem_embeddings");
        }
        let mut owners = 0;
        for (kind, table) in &tables {
            let mut params = Vec::new();
            let conds = self
                .conditions(kind, &mut params)
                .unwrap_or_else(|| "1 = 1".into());
            let sql = format!(
                "SELECT count(*) FROM (SELECT 1 FROM {table} o WHERE {conds}{{home:o}} \
                 LIMIT {LISTED}) AS c"
            );
            owners += route::query(conn, &sql, &params)?
                .first()
                .and_then(|r| r[0].as_i64())
                .unwrap_or(0);
        }
        if owners >= LISTED as i64 {
            let mut params: Vec<Value> = vec![model.into()];
            let per_kind: Vec<String> = tables
                .iter()
                .map(|(kind, table)| match self.conditions(kind, &mut params) {
                    Some(c) => format!(
                        "(e.kind = '{kind}' AND EXISTS \
                         (SELECT 1 FROM {table} o WHERE o.id = e.owner_id AND {c}{{home:o}}))"
                    ),
                    None => format!("e.kind = '{kind}'"),
                })
                .collect();
            let sql = format!(
                "SELECT e.seq FROM mem_embeddings e WHERE e.model = ?1{{home:e}} AND ({})",
                per_kind.join(" OR ")
            );
            let sql = route::homed(conn, &sql, &mut params);
            return Ok(Allowed::lazy(sql, params));
        }
        let mut listed = HashSet::new();
        for (kind, table) in &tables {
            let mut params: Vec<Value> = vec![model.into()];
            let conds = self
                .conditions(kind, &mut params)
                .unwrap_or_else(|| "1 = 1".into());
            let sql = format!(
                "SELECT e.seq FROM {table} o CROSS JOIN mem_embeddings e \
                 WHERE {conds} AND e.kind = '{kind}' AND e.owner_id = o.id AND e.model = ?1\
                 {{home:o}}{{home:e}}"
            );
            listed.extend(
                route::query(conn, &sql, &params)?
                    .iter()
                    .filter_map(|r| r[0].as_i64()),
            );
        }
        Ok(Allowed::Only(listed))
    }
}

/// Offers every vector of `floats` (with its seq in `seqs`) to `top`.
fn scan(q: &Query, seqs: &[i64], floats: &[f32], allowed: Option<&HashSet<i64>>, top: &mut TopK) {
    for (&seq, v) in seqs.iter().zip(floats.chunks_exact(q.v.len())) {
        if allowed.is_some_and(|a| !a.contains(&seq)) {
            continue;
        }
        top.offer(q.distance(v), seq);
    }
}

/// The `k` vectors of `model` closest to `q` among `allowed` (all when `None`), closest
/// first, as (distance, seq). Chunks come from the cache by build when they can (see
/// [`cache`]); the few unpacked rows are read each time.
fn scan_model(
    conn: &mut dyn Conn,
    shelf: Shelf,
    q: &Query,
    k: usize,
    allowed: Option<&HashSet<i64>>,
) -> Result<Vec<(f64, i64)>> {
    let mut top = TopK {
        k,
        heap: BinaryHeap::new(),
    };
    if k > 0 {
        let (model, dims) = (shelf.model, Value::Int(shelf.dims));
        let chunks = route::query(
            conn,
            "SELECT chunk, upto, build FROM mem_vec_chunks WHERE model = ?1 AND dims = ?2{home} \
             ORDER BY chunk",
            &[model.into(), dims.clone()],
        )?;
        // The last chunk's upto: every vector at or below it is in a chunk.
        let mut upto = 0;
        for r in chunks {
            let mut f = Fields::new(r);
            let chunk = f.int().unwrap_or(0);
            upto = upto.max(f.int().unwrap_or(0));
            let build = f.int();
            let decoded = match build.and_then(cache::get) {
                Some(c) => c,
                None => {
                    let mut read = None;
                    let mut params = vec![model.into(), Value::Int(chunk)];
                    let sql = route::homed(
                        conn,
                        "SELECT seqs, vectors FROM mem_vec_chunks WHERE model = ?1 AND chunk = ?2\
                         {home}",
                        &mut params,
                    );
                    conn.for_each_blobs(
                        &sql,
                        &params,
                        &mut |b| {
                            if let [s, v] = b {
                                read = Some(Arc::new(Chunk::decode(s, v)));
                            }
                            Ok(())
                        },
                    )?;
                    let Some(c) = read else { continue };
                    if let Some(b) = build {
                        cache::put(b, c.clone());
                    }
                    c
                }
            };
            scan(q, &decoded.seqs, &decoded.floats, allowed, &mut top);
        }
        for r in route::query(
            conn,
            "SELECT seq, vector FROM mem_embeddings WHERE model = ?1 AND chunk IS NULL AND seq > ?2 \
             AND dims = ?3{home}",
            &[model.into(), Value::Int(upto), dims],
        )? {
            let mut f = Fields::new(r);
            let seq = f.int().unwrap_or(0);
            if let Value::Blob(v) = f.value() {
                let c = Chunk::decode(&seq.to_le_bytes(), &v);
                scan(q, &c.seqs, &c.floats, allowed, &mut top);
            }
        }
    }
    Ok(top
        .heap
        .into_sorted_vec()
        .into_iter()
        .map(|Near(d, s)| (d, s))
        .collect())
}

/// A vector found: its distance and owner.
pub(crate) struct Found {
    pub distance: f64,
    pub kind: String,
    pub owner_id: String,
}

/// The `k` vectors of `model` closest to `query` whose owners pass, closest first (ties: the
/// earlier vector first). Empty when the caller sees no vector of the model; an error when
/// the vectors it sees have another number of dimensions.
pub(crate) fn nearest(
    conn: &mut dyn Conn,
    model: &str,
    query: Vec<f32>,
    metric: Metric,
    k: usize,
    owners: &Owners,
) -> Result<Vec<Found>> {
    route::require_resource(
        conn,
        "options.resource_id",
        "a resource's vectors live on its node",
    )?;
    let Some(dims) = store::model_dims(conn, model, 0)? else {
        return Ok(Vec::new());
    };
    let width = query.len() as i64;
    // A caller that sees several widths (the owner, across tenants) searches the query's.
    if dims != width && !store::has_width(conn, model, width)? {
        return Err(Error::invalid(
            "query_vector",
            format!(
                "has {} dimensions; model {} has {dims}",
                query.len(),
                crate::error::echo(model)
            ),
        ));
    }
    let q = Query::new(query, metric);
    let allowed = owners.allowed(conn, model)?;
    let shelf = Shelf { model, dims: width };
    let found = allowed.first_passing(
        conn,
        k,
        &mut |conn, n, keys| scan_model(conn, shelf, &q, n, keys),
        |f| f.1,
    )?;
    let seqs: Vec<i64> = found.iter().map(|f| f.1).collect();
    let home = route::home(conn);
    let mut by_seq =
        crate::search::rows::hydrate(conn, "mem_embeddings", "kind, owner_id", &seqs, home.as_deref())?;
    Ok(found
        .into_iter()
        .filter_map(|(distance, seq)| {
            let mut f = Fields::new(by_seq.remove(&seq)?);
            Some(Found {
                distance,
                kind: f.text()?,
                owner_id: f.text()?,
            })
        })
        .collect())
}

/// `mem_vector_search(model, query_vector [, options])` → the `limit` (default 10) vectors of
/// `model` closest to `query_vector`, closest first (ties: the earlier vector first), as
/// (kind, id, distance). Options: `metric` (`cosine` default, `l2`, `dot`), `limit`, `kind`,
/// `resource_id`, `types` (memory types).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn search(
    conn: &mut dyn Conn,
    model: &str,
    query: Option<&[u8]>,
    options: Option<&str>,
) -> Result<Vec<Nearest>> {
    let q = from_blob(
        "query_vector",
        query.ok_or_else(|| Error::invalid("query_vector", "is required"))?,
    )?;
    let o = Opts::parse("options", options, OPTIONS)?;
    let metric = metric(&o)?;
    let limit = o.int("limit", 10, 0, MAX_LIMIT)? as usize;
    let owners = Owners::from_options(&o)?;
    Ok(nearest(conn, model, q, metric, limit, &owners)?
        .into_iter()
        .map(|f| Nearest {
            kind: f.kind,
            id: f.owner_id,
            distance: f.distance,
        })
        .collect())
}

/// The `metric` option (`cosine` when absent).
pub(crate) fn metric(o: &Opts) -> Result<Metric> {
    let name = o.opt_str("metric")?.unwrap_or_else(|| "cosine".into());
    check_one_of("options.metric", &name, Metric::NAMES)?;
    Ok(Metric::parse(&name).unwrap_or(Metric::Cosine))
}
