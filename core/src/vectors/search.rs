//! `mem_vector_search`: exact top-k over a model's vectors. It reads the model's chunks (a few
//! large blobs, floats contiguous) and its few unpacked rows, computes every distance in a
//! fixed-lane loop, and keeps the k closest in a bounded heap — no per-vector SQL value, no
//! approximation.

use super::math::{Metric, Query};
use super::{from_blob, KINDS};
use crate::api::{real, text, Field};
use crate::args::{check_one_of, required};
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::memories::filter::Filter;
use crate::search::rows::Allowed;
use crate::{Conn, Error, Result, Row, Value};
use std::collections::{BinaryHeap, HashSet};

/// Columns of the table `mem_vector_search` returns.
pub const COLUMNS: [Field; 3] = [text("kind"), text("id"), real("distance")];

const OPTIONS: &[&str] = &["metric", "limit", "kind", "resource_id", "types"];

/// Largest `limit` accepted.
pub const MAX_LIMIT: i64 = 1000;

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
/// filter, messages of a resource.
pub struct Owners {
    pub kinds: Vec<String>,
    pub memories: Filter,
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
        Ok(Owners {
            kinds,
            memories: Filter {
                resource: o.opt_str("resource_id")?,
                types,
                include_deprecated: true,
                ..Filter::default()
            },
        })
    }

    /// The embeddings of `model` whose owners pass (types given: memories only).
    pub fn allowed(&self, conn: &mut dyn Conn, model: &str) -> Result<Allowed> {
        let mut params: Vec<Value> = vec![model.into()];
        let mut owners = Vec::new();
        let mut filtered = false;
        if self.kinds.iter().any(|k| k == "memory") {
            owners.push(match self.memories.sql("m", &mut params) {
                Some(c) => {
                    filtered = true;
                    format!("(e.kind = 'memory' AND {c})")
                }
                None => "e.kind = 'memory'".to_owned(),
            });
        }
        if self.kinds.iter().any(|k| k == "message") && self.memories.types.is_none() {
            owners.push(match &self.memories.resource {
                Some(r) => {
                    filtered = true;
                    params.push(r.as_str().into());
                    format!("(e.kind = 'message' AND g.resource_id = ?{})", params.len())
                }
                None => "e.kind = 'message'".to_owned(),
            });
        }
        if owners.len() == KINDS.len() && !filtered {
            return Ok(Allowed::All);
        }
        if owners.is_empty() {
            return Ok(Allowed::Only(HashSet::new()));
        }
        Allowed::query(
            conn,
            &format!(
                "SELECT e.seq FROM mem_embeddings e \
                 LEFT JOIN mem_memories m ON e.kind = 'memory' AND m.id = e.owner_id \
                 LEFT JOIN mem_messages g ON e.kind = 'message' AND g.id = e.owner_id \
                 WHERE e.model = ?1 AND ({})",
                owners.join(" OR ")
            ),
            &params,
        )
    }
}

/// Offers every vector of `floats` (with its seq in `seqs`) to `top`. The floats are read in
/// place when the blob is aligned for them (an allocator's blocks are), else copied.
fn scan(q: &Query, seqs: &[u8], floats: &[u8], allowed: Option<&HashSet<i64>>, top: &mut TopK) {
    let dims = q.v.len();
    let copied: Vec<f32>;
    // SAFETY: every bit pattern is a valid f32; `align_to` only yields the aligned middle.
    let (head, mid, _) = unsafe { floats.align_to::<f32>() };
    let all: &[f32] = if head.is_empty() && cfg!(target_endian = "little") {
        mid
    } else {
        copied = floats
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        &copied
    };
    for (s, v) in seqs.chunks_exact(8).zip(all.chunks_exact(dims)) {
        let seq = i64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]);
        if allowed.is_some_and(|a| !a.contains(&seq)) {
            continue;
        }
        top.offer(q.distance(v), seq);
    }
}

/// The `k` vectors of `model` closest to `q` among `allowed` (all when `None`), closest
/// first, as (distance, seq).
fn scan_model(
    conn: &mut dyn Conn,
    model: &str,
    q: &Query,
    k: usize,
    allowed: Option<&HashSet<i64>>,
) -> Result<Vec<(f64, i64)>> {
    let mut top = TopK {
        k,
        heap: BinaryHeap::new(),
    };
    if k > 0 {
        conn.for_each_blobs(
            "SELECT seqs, vectors FROM mem_vec_chunks WHERE model = ?1 ORDER BY chunk",
            &[model.into()],
            &mut |b| {
                if let [s, v] = b {
                    scan(q, s, v, allowed, &mut top);
                }
                Ok(())
            },
        )?;
        for r in conn.query(
            "SELECT seq, vector FROM mem_embeddings WHERE model = ?1 AND chunk IS NULL",
            &[model.into()],
        )? {
            let mut f = Fields::new(r);
            let seq = f.int().unwrap_or(0);
            if let Value::Blob(v) = f.value() {
                scan(q, &seq.to_le_bytes(), &v, allowed, &mut top);
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
pub struct Found {
    pub distance: f64,
    pub kind: String,
    pub owner_id: String,
}

/// The `k` vectors of `model` closest to `query` whose owners pass, closest first (ties: the
/// earlier vector first). `None` when the model has no vectors; an error when `query` has
/// another number of dimensions.
pub fn nearest(
    conn: &mut dyn Conn,
    model: &str,
    query: Vec<f32>,
    metric: Metric,
    k: usize,
    owners: &Owners,
) -> Result<Vec<Found>> {
    let Some(dims) = super::store::model_dims(conn, model, 0)? else {
        return Ok(Vec::new());
    };
    if dims as usize != query.len() {
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
    let found = allowed.first_passing(
        conn,
        k,
        &mut |conn, n, keys| scan_model(conn, model, &q, n, keys),
        |f| f.1,
    )?;
    let seqs: Vec<i64> = found.iter().map(|f| f.1).collect();
    let mut by_seq = crate::search::rows::hydrate(conn, "mem_embeddings", "kind, owner_id", &seqs)?;
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
pub fn search(
    conn: &mut dyn Conn,
    model: Option<&str>,
    query: Option<&[u8]>,
    options: Option<&str>,
) -> Result<Vec<Row>> {
    let model = required("model", model)?;
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
        .map(|f| vec![f.kind.into(), f.owner_id.into(), Value::Real(f.distance)])
        .collect())
}

/// The `metric` option (`cosine` when absent).
pub fn metric(o: &Opts) -> Result<Metric> {
    let name = o.opt_str("metric")?.unwrap_or_else(|| "cosine".into());
    check_one_of("options.metric", &name, Metric::NAMES)?;
    Ok(Metric::parse(&name).unwrap_or(Metric::Cosine))
}
