//! `mem_recall_hybrid`: the whole retrieval pipeline in one call.
//!
//! 1. **Candidates** from three lists: BM25 over memories (and messages and observations when
//!    asked), dense top-k when the client gives a query vector, and the graph — the memories
//!    about the files the agent is working in and their one-hop neighbors.
//! 2. **Fusion** of the lists' scores, each on a 0–1 scale, or of their ranks ([`fuse`]),
//!    weights chosen by the query's type ([`query_type`]), scaled so that the best a
//!    candidate could reach is 1.
//! 3. **Graph-neighborhood boost** for candidates 11–50 whose files neighbor the top ten's.
//! 4. **Phase and trust**: × the phase's weight for the memory's type, × its source's trust,
//!    × its decayed confidence ([`phases`]); deprecated, superseded and stale memories never
//!    enter.
//! 5. **Packing** into a token budget (exact o200k counts), duplicates dropped, each type's
//!    share of the budget reserved ([`pack`]).
//!
//! Every row says which lists found it, at which rank, and what multiplied its score.

pub(crate) mod candidates;
internal!(fuse);
pub(crate) mod neighbors;
internal!(pack);
internal!(phases);
pub(crate) mod query_type;

use self::candidates::{Key, Kind, KIND_NAMES};
use self::fuse::{Family, Fusion, List, BOOST_END, BOOST_TOP};
use self::query_type::{QueryType, Weights};
use crate::cluster::route;
use crate::args::check_one_of;
use crate::columns::{row, JsonText};
use crate::json_opts::Opts;
use crate::memories::filter::Filter;
use crate::memories::lifecycle;
use crate::tokens::{self, Encoding};
use crate::{Conn, Error, Result};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};

row! {
    /// One row of `mem_recall_hybrid`: what was recalled, the rank each list gave it, and
    /// what multiplied its score.
    pub(crate) struct Recalled {
        pub kind: &'static str,
        pub id: String,
        pub content: String,
        pub score: f64,
        pub bm25_rank: Option<i64>,
        pub dense_rank: Option<i64>,
        pub graph_rank: Option<i64>,
        pub boosts: JsonText,
        pub tokens: i64,
    }
}

const OPTIONS: &[&str] = &[
    "resource_id",
    "scope",
    "types",
    "source",
    "session_id",
    "file",
    "min_confidence",
    "kinds",
    "query_vector",
    "model",
    "current_files",
    "recent_tools",
    "query_type",
    "weights",
    "candidates",
    "fusion",
    "rrf_k",
    "neighborhood_boost",
    "phase",
    "budget",
    "limit",
    "touch",
    "now",
];

/// The seed's list lengths: dense top 30, BM25 top 20, graph top 15.
const CANDIDATES: [(&str, i64); 3] = [("bm25", 20), ("dense", 30), ("graph", 15)];

/// The seed's boost: `0.3 × neighbor files / top files`.
const NEIGHBORHOOD_BOOST: f64 = 0.3;

/// Largest `limit`, list length and budget accepted.
const MAX_LIMIT: i64 = 1000;
const MAX_BUDGET: i64 = 1_000_000;

/// Largest `rrf_k` accepted: beyond it every rank fuses to the same score.
const MAX_RRF_K: f64 = 1e6;

/// What a call asks, checked.
struct Ask {
    filter: Filter,
    kinds: Vec<Kind>,
    vector: Option<(String, Vec<f32>)>,
    current_files: Vec<String>,
    query_type: QueryType,
    weights: Weights,
    lengths: [usize; 3],
    fusion: Fusion,
    boost: f64,
    phase: Option<String>,
    budget: i64,
    limit: usize,
    touch: bool,
    now: Option<i64>,
}

impl Ask {
    fn parse(conn: &mut dyn Conn, query: &str, options: Option<&str>) -> Result<Ask> {
        let o = Opts::parse("options", options, OPTIONS)?;
        let mut filter = Filter::from_options(conn, &o)?;
        filter.include_deprecated = false;
        let kinds = match o.opt_strings("kinds")? {
            None => vec![Kind::Memory],
            Some(names) => {
                let mut kinds = Vec::new();
                for n in &names {
                    check_one_of("options.kinds", n, KIND_NAMES)?;
                    kinds.extend(Kind::parse(n).filter(|k| !kinds.contains(k)));
                }
                kinds.sort();
                kinds
            }
        };
        let vector = match o.opt_array("query_vector")? {
            None => None,
            Some(values) => {
                let model = o.opt_str("model")?.ok_or_else(|| {
                    Error::invalid("options.model", "is required with options.query_vector")
                })?;
                let json = serde_json::Value::Array(values).to_string();
                let blob = crate::vectors::from_json(Some(&json))
                    .map_err(|e| rename(e, "options.query_vector"))?
                    .unwrap_or_default();
                Some((
                    model,
                    crate::vectors::from_blob("options.query_vector", &blob)?,
                ))
            }
        };
        let recent_tools = o.opt_strings("recent_tools")?.unwrap_or_default();
        let query_type = match o.opt_str("query_type")? {
            Some(t) => {
                check_one_of("options.query_type", &t, query_type::NAMES)?;
                QueryType::parse(&t).unwrap_or(QueryType::Semantic)
            }
            None => query_type::detect(query, &recent_tools),
        };
        let weights = match o.opt_object("weights")? {
            Some(w) => Weights::merged(query_type.weights(), &w)?,
            None => query_type.weights(),
        };
        let lengths = list_lengths(o.opt_object("candidates")?.as_deref())?;
        let fusion = fusion(&o)?;
        let boost = o
            .opt_f64("neighborhood_boost")?
            .unwrap_or(NEIGHBORHOOD_BOOST);
        if !(boost.is_finite() && (0.0..=10.0).contains(&boost)) {
            return Err(Error::invalid(
                "options.neighborhood_boost",
                "must be a number between 0 and 10",
            ));
        }
        let current_files = o.opt_strings("current_files")?.unwrap_or_default();
        // The lists a call ranks with must weigh something, or every score is 0 / 0.
        let in_play = [
            ("bm25", weights.bm25, !query.trim().is_empty()),
            ("dense", weights.dense, vector.is_some()),
            (
                "graph",
                weights.graph,
                !current_files.is_empty() && kinds.iter().any(|k| k.in_graph_list()),
            ),
        ];
        let playing: Vec<&str> = in_play.iter().filter(|l| l.2).map(|l| l.0).collect();
        if !playing.is_empty() && in_play.iter().all(|l| !l.2 || l.1 == 0.0) {
            return Err(Error::invalid(
                "options.weights",
                format!(
                    "every list this call ranks with ({}) weighs 0: nothing could rank",
                    playing.join(", ")
                ),
            ));
        }
        let phase = o.opt_str("phase")?;
        if let Some(p) = &phase {
            check_one_of("options.phase", p, phases::PHASES)?;
        }
        let default_budget =
            phases::packing(phase.as_deref()).map_or(phases::DEFAULT_BUDGET, |p| p.budget);
        Ok(Ask {
            filter,
            kinds,
            vector,
            current_files,
            query_type,
            weights,
            lengths,
            fusion,
            boost,
            phase,
            budget: o.int("budget", default_budget, 1, MAX_BUDGET)?,
            limit: o.int("limit", 20, 0, MAX_LIMIT)? as usize,
            touch: o.opt_bool("touch")?.unwrap_or(false),
            now: o.opt_int("now")?,
        })
    }
}

/// An error about a nested argument, named by its place in the options.
fn rename(e: Error, arg: &str) -> Error {
    match e {
        Error::InvalidArgument { rule, .. } => Error::invalid(arg, rule),
        other => other,
    }
}

/// `options.fusion` (`score`, the default, or `rank`) and `options.rrf_k`, which only rank
/// fusion has and which alone asks for it.
fn fusion(o: &Opts) -> Result<Fusion> {
    let name = o.opt_str("fusion")?;
    if let Some(n) = &name {
        check_one_of("options.fusion", n, FUSIONS)?;
    }
    let k = o.opt_f64("rrf_k")?;
    match (name.as_deref(), k) {
        (Some("score"), Some(_)) => Err(Error::invalid(
            "options.rrf_k",
            "applies to fusion \"rank\" only",
        )),
        (Some("score"), None) | (None, None) => Ok(Fusion::Score),
        (_, k) => {
            let k = k.unwrap_or(fuse::RRF_K);
            if !(k.is_finite() && k > 0.0 && k <= MAX_RRF_K) {
                return Err(Error::invalid(
                    "options.rrf_k",
                    format!("must be a number above 0 and at most {MAX_RRF_K}"),
                ));
            }
            Ok(Fusion::Rank { k })
        }
    }
}

/// The names of `options.fusion`.
const FUSIONS: &[&str] = &["score", "rank"];

/// `options.candidates` `{bm25, dense, graph}`: each list's length.
fn list_lengths(object: Option<&str>) -> Result<[usize; 3]> {
    let keys: Vec<&str> = CANDIDATES.iter().map(|(k, _)| *k).collect();
    let o = Opts::parse("options.candidates", object, &keys)?;
    let mut out = [0; 3];
    for (slot, (key, default)) in out.iter_mut().zip(CANDIDATES) {
        *slot = o.int(key, default, 0, MAX_LIMIT)? as usize;
    }
    Ok(out)
}

/// A candidate after every stage.
struct Scored {
    key: Key,
    row: candidates::Row,
    score: f64,
    ranks: [Option<usize>; 3],
    boosts: serde_json::Value,
}

/// `mem_recall_hybrid(query [, options])` → the memories (and messages, observations) to put
/// in the prompt, best first, packed into a token budget. See the module and docs/recall.md.
pub(crate) fn recall_hybrid(
    conn: &mut dyn Conn,
    query: Option<&str>,
    options: Option<&str>,
) -> Result<Vec<Recalled>> {
    let query = query.unwrap_or("");
    let ask = Ask::parse(conn, query, options)?;
    route::require_resource(
        conn,
        "options.resource_id",
        "a resource's memories, vectors and graph live on its node",
    )?;
    let now = conn.now_or(ask.now)?;
    let lists = lists(conn, query, &ask, now)?;
    let keys: Vec<Key> = lists
        .iter()
        .flat_map(|l| l.hits.iter().map(|h| h.0))
        .collect::<std::collections::BTreeSet<Key>>()
        .into_iter()
        .collect();
    let mut rows = candidates::rows_of(conn, &keys, now)?;
    let similarity = match (&ask.vector, ask.fusion) {
        (Some((model, v)), Fusion::Score) => {
            let dense: HashSet<Key> = lists
                .iter()
                .filter(|l| l.family == Family::Dense)
                .flat_map(|l| l.hits.iter().map(|h| h.0))
                .collect();
            let others: Vec<(Key, &str)> = keys
                .iter()
                .filter(|k| !dense.contains(k))
                .filter_map(|k| Some((*k, rows.get(k)?.id.as_str())))
                .collect();
            candidates::similarities(conn, model, v, &others)?
        }
        _ => BTreeMap::new(),
    };
    let fused = fuse::fuse(&lists, ask.fusion, &similarity);
    let best = fuse::best_possible(&lists, ask.fusion);
    let fused: Vec<_> = fused
        .into_iter()
        .filter_map(|f| Some((rows.remove(&f.key)?, f)))
        .collect();

    // The neighborhood of the top results' files, for the boost.
    let mut top_files: Vec<String> = Vec::new();
    for (row, _) in fused.iter().take(BOOST_TOP) {
        for f in &row.files {
            if !top_files.contains(f) {
                top_files.push(f.clone());
            }
        }
    }
    let neighbors: HashSet<String> =
        if ask.boost > 0.0 && fused.len() > BOOST_TOP && !top_files.is_empty() {
            neighbors::around(conn, ask.filter.resource.as_deref(), &top_files)?
                .files
                .into_keys()
                .collect()
        } else {
            HashSet::new()
        };

    let mut scored: Vec<Scored> = fused
        .into_iter()
        .enumerate()
        .map(|(position, (row, f))| {
            let fused_score = f.sum / best;
            let boost = if position < BOOST_END {
                fuse::neighborhood_boost(
                    position,
                    &row.files,
                    &neighbors,
                    top_files.len(),
                    ask.boost,
                )
            } else {
                0.0
            };
            let phase = row
                .ty
                .as_deref()
                .map_or(1.0, |t| phases::weight(ask.phase.as_deref(), t));
            let trust = match f.key.0 {
                Kind::Memory => row.source.as_deref().map_or(1.0, phases::trust),
                Kind::Message | Kind::Code => 1.0,
                Kind::Observation => phases::trust("observer_inferred"),
            };
            let score = (fused_score + boost) * phase * trust * row.confidence;
            let boosts = json!({
                "query_type": ask.query_type.name(),
                "fusion": match ask.fusion {
                    Fusion::Score => "score",
                    Fusion::Rank { .. } => "rank",
                },
                "sum": f.sum,
                "fused": fused_score,
                "neighborhood": boost,
                "phase": phase,
                "trust": trust,
                "confidence": row.confidence,
            });
            Scored {
                key: f.key,
                row,
                score,
                ranks: f.ranks,
                boosts,
            }
        })
        .collect();
    scored.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.key.0.cmp(&b.key.0))
            .then_with(|| a.row.id.cmp(&b.row.id))
    });

    // The same content twice (a memory and the message it came from) is recalled once.
    let mut seen = HashSet::new();
    scored.retain(|s| seen.insert(crate::memories::content_hash(Some(&s.row.content))));

    let tokens: Vec<i64> = scored
        .iter()
        .map(|s| tokens::count(&s.row.content, Encoding::O200kBase))
        .collect();
    let items: Vec<pack::Item> = scored
        .iter()
        .zip(&tokens)
        .map(|(s, &t)| pack::Item {
            class: s.row.ty.as_deref().unwrap_or(phases::OTHER),
            tokens: t,
        })
        .collect();
    let packing = phases::packing(ask.phase.as_deref());
    let taken = pack::pack(
        &items,
        ask.budget,
        packing.as_ref().map(|p| p.allocation),
        ask.limit,
    );

    let mut out = Vec::with_capacity(taken.len());
    for i in taken {
        let s = &scored[i];
        if ask.touch && s.key.0 == Kind::Memory {
            lifecycle::touch(conn, &s.row.id, Some(now))?;
        }
        let rank = |family: Family| s.ranks[family as usize].map(|r| r as i64);
        out.push(Recalled {
            kind: s.key.0.name(),
            id: s.row.id.clone(),
            content: s.row.content.clone(),
            score: s.score,
            bm25_rank: rank(Family::Bm25),
            dense_rank: rank(Family::Dense),
            graph_rank: rank(Family::Graph),
            boosts: JsonText(s.boosts.to_string()),
            tokens: tokens[i],
        });
    }
    Ok(out)
}

/// The candidate lists the call asks for, in a fixed order (BM25 by kind, dense, graph).
fn lists(conn: &mut dyn Conn, query: &str, ask: &Ask, now: i64) -> Result<Vec<List<Key>>> {
    let mut out = Vec::new();
    let [bm25_k, dense_k, graph_k] = ask.lengths;
    if !query.trim().is_empty() {
        for &kind in &ask.kinds {
            out.push(List {
                family: Family::Bm25,
                weight: ask.weights.bm25,
                hits: candidates::bm25(conn, kind, query, &ask.filter, bm25_k, now)?,
            });
        }
    }
    if let Some((model, v)) = &ask.vector {
        out.push(List {
            family: Family::Dense,
            weight: ask.weights.dense,
            hits: candidates::dense(conn, model, v.clone(), &ask.kinds, &ask.filter, dense_k)?,
        });
    }
    if !ask.current_files.is_empty() && ask.kinds.iter().any(|k| k.in_graph_list()) {
        let around = neighbors::around(conn, ask.filter.resource.as_deref(), &ask.current_files)?;
        let mut keys = Vec::new();
        if ask.kinds.contains(&Kind::Memory) {
            keys = candidates::graph(conn, &around, &ask.filter, graph_k)?;
        }
        if ask.kinds.contains(&Kind::Code) {
            keys.extend(candidates::graph_code(conn, &around, &ask.filter, graph_k)?);
        }
        out.push(List {
            family: Family::Graph,
            weight: ask.weights.graph,
            hits: keys.into_iter().map(|k| (k, 0.0)).collect(),
        });
    }
    Ok(out)
}
