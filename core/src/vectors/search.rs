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
use crate::memories::type_marks;
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

/// The embeddings a search may return, when options filter them (`None`: all of the model).
fn allowed(conn: &mut dyn Conn, model: &str, o: &Opts) -> Result<Option<HashSet<i64>>> {
    let kind = o.opt_str("kind")?;
    let resource = o.opt_str("resource_id")?;
    if kind.is_none() && resource.is_none() && !o.has("types") {
        return Ok(None);
    }
    let mut params: Vec<Value> = vec![model.into()];
    let mut sql = String::from(
        "SELECT e.seq FROM mem_embeddings e \
         LEFT JOIN mem_memories m ON e.kind = 'memory' AND m.id = e.owner_id \
         LEFT JOIN mem_messages g ON e.kind = 'message' AND g.id = e.owner_id \
         WHERE e.model = ?1",
    );
    if let Some(k) = kind {
        check_one_of("options.kind", &k, KINDS)?;
        params.push(k.into());
        sql.push_str(&format!(" AND e.kind = ?{}", params.len()));
    }
    if let Some(r) = resource {
        params.push(r.into());
        sql.push_str(&format!(
            " AND coalesce(m.resource_id, g.resource_id) = ?{}",
            params.len()
        ));
    }
    if let Some(marks) = type_marks(o, &mut params)? {
        if marks.is_empty() {
            return Ok(Some(HashSet::new()));
        }
        sql.push_str(&format!(" AND m.type IN ({})", marks.join(", ")));
    }
    Ok(Some(
        conn.query(&sql, &params)?
            .iter()
            .filter_map(|r| r.first().and_then(Value::as_i64))
            .collect(),
    ))
}

/// Offers every vector of `floats` (with its seq in `seqs`) to `top`. The floats are read in
/// place when the blob is aligned for them (an allocator's blocks are), else copied.
fn scan(q: &Query, seqs: &[u8], floats: &[u8], allowed: &Option<HashSet<i64>>, top: &mut TopK) {
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
        if allowed.as_ref().is_some_and(|a| !a.contains(&seq)) {
            continue;
        }
        top.offer(q.distance(v), seq);
    }
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
    let metric_name = o.opt_str("metric")?.unwrap_or_else(|| "cosine".into());
    check_one_of("options.metric", &metric_name, Metric::NAMES)?;
    let metric = Metric::parse(&metric_name).unwrap_or(Metric::Cosine);
    let limit = o.int("limit", 10, 0, MAX_LIMIT)? as usize;
    let Some(dims) = super::store::model_dims(conn, model, 0)? else {
        return Ok(Vec::new());
    };
    if dims as usize != q.len() {
        return Err(Error::invalid(
            "query_vector",
            format!(
                "has {} dimensions; model {} has {dims}",
                q.len(),
                crate::error::echo(model)
            ),
        ));
    }
    let allowed = allowed(conn, model, &o)?;
    let q = Query::new(q, metric);
    let mut top = TopK {
        k: limit,
        heap: BinaryHeap::new(),
    };
    if limit > 0 {
        conn.for_each_blobs(
            "SELECT seqs, vectors FROM mem_vec_chunks WHERE model = ?1 ORDER BY chunk",
            &[model.into()],
            &mut |b| {
                if let [s, v] = b {
                    scan(&q, s, v, &allowed, &mut top);
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
                scan(&q, &seq.to_le_bytes(), &v, &allowed, &mut top);
            }
        }
    }
    let found = top.heap.into_sorted_vec();
    let seqs: Vec<i64> = found.iter().map(|n| n.1).collect();
    let mut owners = crate::search::rows::hydrate(conn, "mem_embeddings", "kind, owner_id", &seqs)?;
    Ok(found
        .into_iter()
        .filter_map(|Near(d, seq)| {
            let mut f = Fields::new(owners.remove(&seq)?);
            Some(vec![f.text().into(), f.text().into(), Value::Real(d)])
        })
        .collect())
}
