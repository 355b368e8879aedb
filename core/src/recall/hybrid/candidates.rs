//! The three candidate lists — BM25, dense, graph — and the rows behind the candidates.

use super::neighbors::Around;
use crate::cluster::route;
use crate::db::batch::query_in;
use crate::db::row::Fields;
use crate::memories::filter::Filter;
use crate::memories::lifecycle::decayed;
use crate::graph::chunks::NS_CODE;
use crate::memories::{files, NS_MEMORIES};
use crate::om::search::NS_OBSERVATIONS;
use crate::recall::thread_context;
use crate::search::rows::{self, Allowed};
use crate::search::{SearchParams, NS_MESSAGES};
use crate::threads::lifecycle;
use crate::vectors::math::{Metric, Query};
use crate::vectors::search::{nearest, Owners};
use crate::{Conn, Result, Value};
use std::collections::{BTreeMap, HashMap};

/// What a candidate is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Kind {
    Memory,
    Message,
    Observation,
    Code,
}

/// The kind names, as options and rows spell them.
pub(crate) const KIND_NAMES: &[&str] = &["memory", "message", "observation", "code"];

impl Kind {
    pub(crate) fn parse(name: &str) -> Option<Kind> {
        match name {
            "memory" => Some(Kind::Memory),
            "message" => Some(Kind::Message),
            "observation" => Some(Kind::Observation),
            "code" => Some(Kind::Code),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        KIND_NAMES[self as usize]
    }

    /// Whether the graph list (what is around the agent's files) holds this kind.
    pub(crate) fn in_graph_list(self) -> bool {
        matches!(self, Kind::Memory | Kind::Code)
    }

    fn table(self) -> &'static str {
        match self {
            Kind::Memory => "mem_memories",
            Kind::Message => "mem_messages",
            Kind::Observation => "mem_om_records",
            Kind::Code => "mem_code_chunks",
        }
    }
}

/// A candidate: its kind and its row's `seq`.
pub(crate) type Key = (Kind, i64);

/// The rows of `kind` a list may return: memories through the memory filter, messages and
/// observations of the resource (active observations only), not of a deleted thread; code
/// chunks of the resource.
fn allowed(conn: &mut dyn Conn, kind: Kind, filter: &Filter) -> Result<Allowed> {
    let mut params = Vec::new();
    let conds = match kind {
        Kind::Memory => filter.sql("", &mut params),
        Kind::Message | Kind::Observation => {
            let mut c: Vec<String> = Vec::new();
            if let Some(r) = &filter.resource {
                params.push(r.as_str().into());
                c.push("resource_id = ?1".to_owned());
            }
            let live = lifecycle::hide_deleted(conn, filter.resource.as_deref(), false, &mut params)?;
            if let (Some(r), "") = (&filter.resource, live.as_str()) {
                return Allowed::of_resource(conn, kind.table(), r);
            }
            if let Some(cond) = live.strip_prefix(" AND ") {
                c.push(cond.to_owned());
            }
            (!c.is_empty()).then(|| c.join(" AND "))
        }
        Kind::Code => match &filter.resource {
            Some(r) => return Allowed::of_resource(conn, kind.table(), r),
            None => None,
        },
    };
    match conds {
        None => Allowed::every(conn, kind.table()),
        Some(c) => Allowed::query(
            conn,
            &format!("SELECT seq FROM {} WHERE {c}", kind.table()),
            &params,
        ),
    }
}

/// The BM25 list of `kind`: the search engine's best `k` for `query` with their scores
/// (recency boost included; messages ranked and scored with their thread context, as
/// `mem_search` ranks them).
pub(crate) fn bm25(
    conn: &mut dyn Conn,
    kind: Kind,
    query: &str,
    filter: &Filter,
    k: usize,
    now: i64,
) -> Result<Vec<(Key, f64)>> {
    let ns = match kind {
        Kind::Memory => NS_MEMORIES,
        Kind::Message => NS_MESSAGES,
        Kind::Observation => NS_OBSERVATIONS,
        Kind::Code => NS_CODE,
    };
    let context = match kind {
        Kind::Message => thread_context::DEFAULT_WEIGHT,
        Kind::Memory | Kind::Observation | Kind::Code => 0.0,
    };
    let params = SearchParams {
        limit: thread_context::first_stage(k, context),
        now: Some(now),
        ..SearchParams::default()
    };
    let allowed = allowed(conn, kind, filter)?;
    let resource = filter.resource.as_deref();
    let found = rows::search_allowed(conn, ns, resource, query, &params, &allowed)?;
    if context == 0.0 {
        return Ok(found.hits.iter().map(|h| ((kind, h.doc), h.score)).collect());
    }
    let ranked = crate::recall::search::in_context(conn, &found.hits, k, context, resource)?;
    Ok(ranked.iter().map(|c| ((kind, c.seq), c.score)).collect())
}

/// The dense list: the `k` vectors of `model` closest to `query` among the owners of `kinds`
/// that pass (memories and messages have vectors), with their cosine similarity.
pub(crate) fn dense(
    conn: &mut dyn Conn,
    model: &str,
    query: Vec<f32>,
    kinds: &[Kind],
    filter: &Filter,
    k: usize,
) -> Result<Vec<(Key, f64)>> {
    let owners = Owners {
        thread: None,
        kinds: kinds
            .iter()
            .filter(|k| matches!(k, Kind::Memory | Kind::Message))
            .map(|k| k.name().to_owned())
            .collect(),
        memories: filter.clone(),
    };
    if owners.kinds.is_empty() {
        return Ok(Vec::new());
    }
    let found = nearest(conn, model, query, Metric::Cosine, k, &owners)?;
    let mut seqs: HashMap<(Kind, String), i64> = HashMap::new();
    for kind in [Kind::Memory, Kind::Message] {
        let ids: Vec<Value> = found
            .iter()
            .filter(|f| f.kind == kind.name())
            .map(|f| f.owner_id.as_str().into())
            .collect();
        // Messages of deleted threads have vectors too; they are dropped here.
        let mut fixed = Vec::new();
        let live = match kind {
            Kind::Message => {
                lifecycle::hide_deleted(conn, filter.resource.as_deref(), false, &mut fixed)?
            }
            Kind::Memory | Kind::Observation | Kind::Code => String::new(),
        };
        let sql = format!(
            "SELECT seq, id FROM {} WHERE id IN ({{keys}}){live}{{home}}",
            kind.table()
        );
        for r in query_in(conn, &sql, &fixed, &ids)? {
            let mut f = Fields::new(r);
            if let (Some(seq), Some(id)) = (f.int(), f.text()) {
                seqs.insert((kind, id), seq);
            }
        }
    }
    Ok(found
        .into_iter()
        .filter_map(|f| {
            let kind = Kind::parse(&f.kind)?;
            Some(((kind, *seqs.get(&(kind, f.owner_id))?), 1.0 - f.distance))
        })
        .collect())
}

/// The cosine similarity to `query` of the vectors of `model` that `owners` (candidate keys
/// and row ids) have; owners without one, or with one of another width, are left out.
pub(crate) fn similarities(
    conn: &mut dyn Conn,
    model: &str,
    query: &[f32],
    owners: &[(Key, &str)],
) -> Result<BTreeMap<Key, f64>> {
    let q = Query::new(query.to_vec(), Metric::Cosine);
    let mut out = BTreeMap::new();
    for kind in [Kind::Memory, Kind::Message] {
        let mut by_id: HashMap<&str, Key> = HashMap::new();
        let ids: Vec<Value> = owners
            .iter()
            .filter(|(key, _)| key.0 == kind)
            .map(|&(key, id)| {
                by_id.insert(id, key);
                id.into()
            })
            .collect();
        let fixed = [model.into(), kind.name().into(), Value::Int(query.len() as i64)];
        let sql = "SELECT owner_id, vector FROM mem_embeddings WHERE model = ?1 AND kind = ?2 \
                   AND dims = ?3 AND owner_id IN ({keys}){home}";
        for r in query_in(conn, sql, &fixed, &ids)? {
            let mut f = Fields::new(r);
            let (Some(id), Value::Blob(blob)) = (f.text(), f.value()) else {
                continue;
            };
            if let Some(&key) = by_id.get(id.as_str()) {
                let v = crate::vectors::from_blob("mem_embeddings.vector", &blob)?;
                out.insert(key, 1.0 - q.distance(&v));
            }
        }
    }
    Ok(out)
}

/// The graph list: memories about the files around the agent's (their related files, or the
/// node they are attached to), nearest first — in the files themselves, then a hop away —
/// then by how many of those files and nodes they name, then newest first.
pub(crate) fn graph(conn: &mut dyn Conn, around: &Around, filter: &Filter, k: usize) -> Result<Vec<Key>> {
    let mut params = Vec::new();
    let conds = filter
        .sql("m", &mut params)
        .unwrap_or_else(|| "1 = 1".into());
    // Per memory: (nearest distance, files and nodes named).
    let mut reached: BTreeMap<i64, (u8, usize)> = BTreeMap::new();
    let mut reach = |rows: Vec<crate::Row>, distances: &BTreeMap<String, u8>| {
        for r in rows {
            let mut f = Fields::new(r);
            if let (Some(seq), Some(key)) = (f.int(), f.text()) {
                let d = distances.get(&key).copied().unwrap_or(u8::MAX);
                let e = reached.entry(seq).or_insert((d, 0));
                e.0 = e.0.min(d);
                e.1 += 1;
            }
        }
    };
    // What names a file: the file index (derived data, read apart from the memories:
    // db::privilege), then which of those memories pass the filter.
    let files: Vec<Value> = around.files.keys().map(|k| k.as_str().into()).collect();
    let named = query_in(
        conn,
        "SELECT memory_seq, file_path FROM mem_memory_files WHERE file_path IN ({keys}){home}",
        &[],
        &files,
    )?;
    let seqs: Vec<Value> = named.iter().filter_map(|r| r.first().cloned()).collect();
    let hint = conn.dialect().key_lookup_hint();
    let passing: std::collections::HashSet<i64> = query_in(
        conn,
        &format!(
            "SELECT m.seq FROM mem_memories m{hint} WHERE m.seq IN ({{keys}}) AND {conds}{{home:m}}"
        ),
        &params,
        &seqs,
    )?
    .iter()
    .filter_map(|r| r.first().and_then(Value::as_i64))
    .collect();
    let named = named
        .into_iter()
        .filter(|r| {
            r.first()
                .and_then(Value::as_i64)
                .is_some_and(|s| passing.contains(&s))
        })
        .collect();
    reach(named, &around.files);
    // What is attached to a node. CROSS JOIN keeps SQLite's planner from walking the
    // resource's memories to find the few that name these (without statistics it takes
    // `resource_id = ?` for selective).
    let nodes: Vec<Value> = around.nodes.keys().map(|k| k.as_str().into()).collect();
    let attached = query_in(
        conn,
        &format!(
            "SELECT m.seq, m.target_node_id FROM mem_memories t CROSS JOIN mem_memories m \
             WHERE t.target_node_id IN ({{keys}}) AND m.seq = t.seq AND {conds}{{home:t}}{{home:m}}"
        ),
        &params,
        &nodes,
    )?;
    reach(attached, &around.nodes);
    Ok(nearest_first(reached, k, Kind::Memory))
}

/// The graph list of code: the chunks of the symbols around the agent's files (in them, then
/// a hop away), newest first among equals.
pub(crate) fn graph_code(conn: &mut dyn Conn, around: &Around, filter: &Filter, k: usize) -> Result<Vec<Key>> {
    let nodes: Vec<Value> = around.nodes.keys().map(|k| k.as_str().into()).collect();
    let (sql, fixed): (&str, Vec<Value>) = match &filter.resource {
        Some(r) => (
            "SELECT seq, node_id FROM mem_code_chunks WHERE resource_id = ?1 AND node_id IN ({keys})",
            vec![r.as_str().into()],
        ),
        None => ("SELECT seq, node_id FROM mem_code_chunks WHERE node_id IN ({keys})", Vec::new()),
    };
    let mut reached: BTreeMap<i64, (u8, usize)> = BTreeMap::new();
    for r in query_in(conn, sql, &fixed, &nodes)? {
        let mut f = Fields::new(r);
        if let (Some(seq), Some(node)) = (f.int(), f.text()) {
            reached.insert(seq, (around.nodes.get(&node).copied().unwrap_or(u8::MAX), 1));
        }
    }
    Ok(nearest_first(reached, k, Kind::Code))
}

/// Candidates by (distance, names) ascending and descending, newest first among equals.
fn nearest_first(reached: BTreeMap<i64, (u8, usize)>, k: usize, kind: Kind) -> Vec<Key> {
    let mut ranked: Vec<(i64, (u8, usize))> = reached.into_iter().collect();
    ranked.sort_by(|(sa, (da, na)), (sb, (db, nb))| da.cmp(db).then(nb.cmp(na)).then(sb.cmp(sa)));
    ranked.into_iter().take(k).map(|(seq, _)| (kind, seq)).collect()
}

/// The confidence of what no one reviewed: a new memory's default, and what a message or an
/// observation counts as, so that raw conversation never outranks a curated memory that
/// matches as well.
pub(crate) const UNREVIEWED: f64 = 0.8;

/// What recall needs of a candidate's row.
pub(crate) struct Row {
    pub id: String,
    pub content: String,
    /// The memory type; `None` for messages and observations.
    pub ty: Option<String>,
    pub source: Option<String>,
    /// Decayed confidence (memories); [`UNREVIEWED`] for messages and observations.
    pub confidence: f64,
    /// Related files (memories), distinct, sorted.
    pub files: Vec<String>,
}

/// The rows of `keys`, by key (rows deleted meanwhile are missing).
pub(crate) fn rows_of(conn: &mut dyn Conn, keys: &[Key], now: i64) -> Result<HashMap<Key, Row>> {
    let mut out = HashMap::new();
    for kind in [Kind::Memory, Kind::Message, Kind::Observation, Kind::Code] {
        let seqs: Vec<i64> = keys.iter().filter(|k| k.0 == kind).map(|k| k.1).collect();
        let columns = match kind {
            Kind::Memory => {
                "id, content, type, source, confidence, decay_half_life_days, pinned, \
                 last_accessed_at, CAST(related_files AS TEXT)"
            }
            Kind::Message => "id, coalesce(injection_text, raw_content)",
            Kind::Observation => "id, active_observations",
            Kind::Code => "id, content, file_path",
        };
        let home = route::home(conn);
        for (seq, r) in rows::hydrate(conn, kind.table(), columns, &seqs, home.as_deref())? {
            let mut f = Fields::new(r);
            let (id, content) = (f.text().unwrap_or_default(), f.text().unwrap_or_default());
            let row = if kind == Kind::Memory {
                let (ty, source) = (f.text(), f.text());
                let conf = f.value().as_f64().unwrap_or(0.0);
                let half = f.value().as_f64();
                let pinned = f.int() == Some(1);
                let last = f.int().unwrap_or(now);
                Row {
                    id,
                    content,
                    ty,
                    source,
                    confidence: decayed(conf, half, pinned, last, now),
                    files: files::paths(&f.text().unwrap_or_default())
                        .into_iter()
                        .collect(),
                }
            } else {
                // A chunk is what its file says now: nothing to doubt, nothing decays.
                let (confidence, files) = match kind {
                    Kind::Code => (1.0, f.text().into_iter().collect()),
                    _ => (UNREVIEWED, Vec::new()),
                };
                Row {
                    id,
                    content,
                    ty: None,
                    source: None,
                    confidence,
                    files,
                }
            };
            out.insert((kind, seq), row);
        }
    }
    Ok(out)
}
