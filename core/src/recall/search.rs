//! `mem_search`: the search engine over `mem_messages` and the observations, with the
//! filters, snippets and result rows the SQL function returns.

use crate::columns::{row, Wanted};
use crate::db::row::Fields;
use crate::graph::chunks;
use crate::json_opts::Opts;
use crate::om;
use crate::recall::thread_context::{self, Candidate};
use crate::search::rows::{self, Allowed};
use crate::search::scoring::PARAM_OPTIONS;
use crate::search::{self, layout, SearchParams, SnippetSettings, NS_MESSAGES};
use crate::threads::lifecycle;
use crate::{Conn, Error, Result, Value};
use std::collections::HashMap;

row! {
    /// One row of `mem_search`.
    #[derive(Clone, Debug, PartialEq)]
    pub(crate) struct SearchRow {
        pub message_id: String,
        pub thread_id: String,
        pub resource_id: Option<String>,
        pub role: String,
        pub task_id: Option<String>,
        pub created_at: i64,
        pub score: f64,
        pub bm25: f64,
        pub recency: f64,
        /// `raw` for an uncompacted message, `compacted` otherwise, `reflection` for an
        /// observation, `code` for a code chunk.
        pub source: &'static str,
        pub snippet: String,
    }
}

/// The table whose rows the message namespace indexes.
const TABLE: &str = "mem_messages";

/// The options of `mem_search` besides those every searcher takes ([`PARAM_OPTIONS`]).
const OPTIONS: &[&str] = &[
    "thread_id",
    "resource_id",
    "role",
    "task_id",
    "since",
    "until",
    "context_weight",
    "snippet",
    "include_deleted",
    "code",
];
const SNIPPET_OPTIONS: &[&str] = &["start", "end", "ellipsis", "tokens"];

/// Largest `limit` accepted.
pub(crate) const MAX_LIMIT: i64 = 1000;

/// One search hit: the row `mem_search` returns, and what else the core needs of the message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MessageHit {
    pub seq: i64,
    /// Its snippet is filled by [`search`] for the hits it returns, when asked for.
    pub row: SearchRow,
    pub message_index: i64,
    /// The text the snippet is cut from (what the index holds).
    pub search_text: String,
    pub raw_content: String,
}

/// Which messages a search may return.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filters {
    pub thread_id: Option<String>,
    pub resource_id: Option<String>,
    pub role: Option<String>,
    pub task_id: Option<String>,
    /// Messages created at or after this time (epoch ms).
    pub since: Option<i64>,
    /// Messages created at or before this time (epoch ms; inclusive, so that every time,
    /// `i64::MAX` included, can be selected).
    pub until: Option<i64>,
    /// Messages of deleted threads too.
    pub include_deleted: bool,
}

impl Filters {
    fn is_empty(&self) -> bool {
        self.resource_id.is_none() && self.beyond_resource_is_empty()
    }

    /// Whether nothing but the resource (if anything) is filtered.
    fn beyond_resource_is_empty(&self) -> bool {
        self.thread_id.is_none()
            && self.role.is_none()
            && self.task_id.is_none()
            && self.since.is_none()
            && self.until.is_none()
    }

    /// The messages that pass. O(matching messages) through the thread, resource and
    /// created_at indexes. Messages of deleted threads are left out unless asked for (see
    /// [`lifecycle::hide_deleted`]).
    fn allowed(&self, conn: &mut dyn Conn) -> Result<Allowed> {
        let mut params: Vec<Value> = vec![
            self.thread_id.clone().into(),
            self.resource_id.clone().into(),
            self.role.clone().into(),
            self.task_id.clone().into(),
            self.since.into(),
            self.until.into(),
        ];
        let live = lifecycle::hide_deleted(
            conn,
            self.resource_id.as_deref(),
            self.include_deleted,
            &mut params,
        )?;
        // In a database partitioned by resource, a search within one reads only its index:
        // the resource needs no filter of its own.
        let own_index = self.resource_id.is_some()
            && self.beyond_resource_is_empty()
            && layout::by_resource(conn)?;
        if (self.is_empty() || own_index) && live.is_empty() {
            return Allowed::every(conn, TABLE);
        }
        Allowed::query(
            conn,
            &format!(
                "SELECT seq FROM mem_messages WHERE \
                   (CAST(?1 AS TEXT) IS NULL OR thread_id = CAST(?1 AS TEXT)) \
                   AND (CAST(?2 AS TEXT) IS NULL OR resource_id = ?2) \
                   AND (CAST(?3 AS TEXT) IS NULL OR role = ?3) \
                   AND (CAST(?4 AS TEXT) IS NULL OR task_id = ?4) \
                   AND (CAST(?5 AS BIGINT) IS NULL OR created_at >= CAST(?5 AS BIGINT)) \
                   AND (CAST(?6 AS BIGINT) IS NULL OR created_at <= CAST(?6 AS BIGINT)){live}"
            ),
            &params,
        )
    }
}

/// A parsed search request.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Request {
    pub params: SearchParams,
    pub filters: Filters,
    pub snippet: SnippetSettings,
    /// Share of a thread neighbor's score a message gains (see [`crate::recall::thread_context`]).
    pub context_weight: f64,
    /// Code chunks too.
    pub code: bool,
}

impl Request {
    /// The engine's best messages for `query` within the request's filters, `params` deciding
    /// how many.
    fn engine_hits(
        &self,
        conn: &mut dyn Conn,
        query: &str,
        params: &SearchParams,
    ) -> Result<search::SearchResult> {
        let allowed = self.filters.allowed(conn)?;
        let resource = self.filters.resource_id.as_deref();
        rows::search_allowed(conn, NS_MESSAGES, resource, query, params, &allowed)
    }

    /// Parses `mem_search` options.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn parse(options: Option<&str>) -> Result<Request> {
        let o = Opts::parse("options", options, &[PARAM_OPTIONS, OPTIONS].concat())?;
        let params = SearchParams::from_options(&o, 10, MAX_LIMIT)?;
        let filters = Filters {
            thread_id: o.opt_str("thread_id")?,
            resource_id: o.opt_str("resource_id")?,
            role: o.opt_str("role")?,
            task_id: o.opt_str("task_id")?,
            since: o.opt_int("since")?,
            until: o.opt_int("until")?,
            include_deleted: o.opt_bool("include_deleted")?.unwrap_or(false),
        };
        if let Some(role) = &filters.role {
            crate::threads::messages::check_role(role).map_err(|_| {
                Error::invalid(
                    "options.role",
                    format!(
                        "must be one of {}",
                        crate::threads::messages::ROLES.join(", ")
                    ),
                )
            })?;
        }
        let mut snippet = SnippetSettings::default();
        if let Some(s) = o.opt_object("snippet")? {
            let so = Opts::parse("options.snippet", Some(&s), SNIPPET_OPTIONS)?;
            let d = snippet;
            snippet = SnippetSettings {
                start: so.opt_str("start")?.unwrap_or(d.start),
                end: so.opt_str("end")?.unwrap_or(d.end),
                ellipsis: so.opt_str("ellipsis")?.unwrap_or(d.ellipsis),
                max_tokens: so.int("tokens", d.max_tokens as i64, 0, 1000)? as usize,
            };
        }
        let context_weight = o
            .opt_f64("context_weight")?
            .unwrap_or(thread_context::DEFAULT_WEIGHT);
        search::check_weight("options.context_weight", context_weight)?;
        Ok(Request {
            params,
            filters,
            snippet,
            context_weight,
            code: o.opt_bool("code")?.unwrap_or(false),
        })
    }
}

/// `mem_search(query [, options])`: [`search_with`] as rows, snippets cut only when the
/// statement reads them.
pub(crate) fn search_rows(
    conn: &mut dyn Conn,
    query: Option<&str>,
    options: Option<&str>,
    wanted: Wanted<SearchRow>,
) -> Result<Vec<SearchRow>> {
    let hits = search_with(conn, query, options, wanted.snippet())?;
    Ok(hits.into_iter().map(|h| h.row).collect())
}

/// [`search`], with the snippets left empty when `snippets` is false (a SQLite statement that
/// does not read the column: cutting a snippet reads the whole text of a hit).
pub(crate) fn search_with(
    conn: &mut dyn Conn,
    query: Option<&str>,
    options: Option<&str>,
    snippets: bool,
) -> Result<Vec<MessageHit>> {
    let req = Request::parse(options)?;
    let Some(query) = query else {
        return Ok(Vec::new());
    };
    let mut hits = run(conn, query, &req)?;
    hits.extend(observation_hits(conn, query, &req)?);
    hits.extend(code_hits(conn, query, &req)?);
    // Score descending; the sort is stable, so equal scores keep the engine's order and
    // messages come before observations.
    hits.sort_by(|a, b| b.row.score.total_cmp(&a.row.score));
    hits.truncate(req.params.limit);
    if snippets {
        let cut = search::Snippeter::new(query, &req.snippet);
        for h in &mut hits {
            h.row.snippet = cut.of(&h.search_text);
        }
    }
    Ok(hits)
}

/// How many messages and observations match `query` within the request's filters, counted
/// up to `cap` (the engine's top `cap`, without reading the rows).
pub(crate) fn count(conn: &mut dyn Conn, query: &str, req: &Request, cap: usize) -> Result<usize> {
    let params = SearchParams {
        limit: cap,
        ..req.params.clone()
    };
    let messages = req.engine_hits(conn, query, &params)?;
    let observations = match observation_scope(&req.filters) {
        Some(scope) => om::search::hits(conn, query, &params, &scope)?.len(),
        None => 0,
    };
    Ok((messages.hits.len() + observations).min(cap))
}

/// Which observations a request's filters allow; `None` when they exclude them (a role or a
/// task: observations have neither).
fn observation_scope(f: &Filters) -> Option<om::search::Scope> {
    if f.role.is_some() || f.task_id.is_some() {
        return None;
    }
    Some(om::search::Scope {
        thread_id: f.thread_id.clone(),
        resource_id: f.resource_id.clone(),
        since: f.since,
        until: f.until,
        include_deleted: f.include_deleted,
    })
}

/// Observational memory's hits for a request, as rows of `mem_search` (`source`
/// `reflection`, `message_id` the record's id). Filters on role or task exclude them
/// (observations have neither).
fn observation_hits(conn: &mut dyn Conn, query: &str, req: &Request) -> Result<Vec<MessageHit>> {
    let Some(scope) = observation_scope(&req.filters) else {
        return Ok(Vec::new());
    };
    let hits = om::search::hits(conn, query, &req.params, &scope)?;
    Ok(hits
        .into_iter()
        .map(|o| MessageHit {
            seq: o.hit.doc,
            row: SearchRow {
                message_id: o.id,
                thread_id: o.thread_id,
                resource_id: o.resource_id,
                role: "system".into(),
                task_id: None,
                created_at: o.updated_at,
                score: o.hit.score,
                bm25: o.hit.bm25,
                recency: o.hit.recency,
                source: "reflection",
                snippet: String::new(),
            },
            message_index: 0,
            search_text: o.text.clone(),
            raw_content: o.text,
        })
        .collect())
}

/// The code chunks of a request that asks for them, as rows of `mem_search` (`source`
/// `code`, `message_id` the chunk's id — its symbol's node id —, `thread_id` its file's
/// path). Filters on a thread, role, task or time exclude them (chunks have none).
fn code_hits(conn: &mut dyn Conn, query: &str, req: &Request) -> Result<Vec<MessageHit>> {
    let f = &req.filters;
    if !req.code || f.thread_id.is_some() || f.role.is_some() || f.task_id.is_some() || f.since.is_some() || f.until.is_some() {
        return Ok(Vec::new());
    }
    let hits = chunks::hits(conn, query, &req.params, f.resource_id.as_deref())?;
    Ok(hits
        .into_iter()
        .map(|c| MessageHit {
            seq: c.hit.doc,
            row: SearchRow {
                message_id: c.id,
                thread_id: c.file_path,
                resource_id: Some(c.resource_id),
                role: "system".into(),
                task_id: None,
                created_at: c.created_at,
                score: c.hit.score,
                bm25: c.hit.bm25,
                recency: c.hit.recency,
                source: "code",
                snippet: String::new(),
            },
            message_index: 0,
            search_text: c.content.clone(),
            raw_content: c.content,
        })
        .collect())
}

/// The best `limit` of the engine's first-stage message `hits` once each has gained its
/// thread neighbors' share (see [`thread_context`]), best first: how messages rank wherever
/// they are searched (`mem_search`, the BM25 list of `mem_recall_hybrid`).
pub(crate) fn in_context(
    conn: &mut dyn Conn,
    hits: &[search::Hit],
    limit: usize,
    weight: f64,
    resource: Option<&str>,
) -> Result<Vec<Candidate>> {
    let scores: HashMap<i64, f64> = hits.iter().map(|h| (h.doc, h.score)).collect();
    let seqs: Vec<i64> = hits.iter().map(|h| h.doc).collect();
    let mut cands: Vec<Candidate> =
        rows::hydrate(conn, TABLE, "thread_id, message_index, role", &seqs, resource)?
            .into_iter()
            .filter_map(|(seq, mut cols)| {
                let turn = thread_context::is_turn(cols.pop()?.as_str()?);
                Some(Candidate {
                    seq,
                    message_index: cols.pop()?.as_i64()?,
                    thread_id: cols.pop()?.into_string()?,
                    turn,
                    score: *scores.get(&seq)?,
                })
            })
            .collect();
    thread_context::rerank(&mut cands, weight);
    cands.truncate(limit);
    Ok(cands)
}

/// Runs a parsed request: the engine's first stage, the thread context (see
/// [`crate::recall::thread_context`]), then one lookup of the kept rows.
pub(crate) fn run(conn: &mut dyn Conn, query: &str, req: &Request) -> Result<Vec<MessageHit>> {
    let limit = req.params.limit;
    let params = SearchParams {
        limit: thread_context::first_stage(limit, req.context_weight),
        ..req.params.clone()
    };
    let result = req.engine_hits(conn, query, &params)?;
    if result.hits.is_empty() {
        return Ok(Vec::new());
    }
    let engine: HashMap<i64, &search::Hit> = result.hits.iter().map(|h| (h.doc, h)).collect();
    let resource = req.filters.resource_id.as_deref();
    let cands = in_context(conn, &result.hits, limit, req.context_weight, resource)?;
    let kept: Vec<i64> = cands.iter().map(|c| c.seq).collect();
    let mut found = rows::hydrate(
        conn,
        TABLE,
        "id, thread_id, resource_id, role, task_id, created_at, message_index, compaction_level, \
         coalesce(search_text, raw_content), raw_content",
        &kept,
        req.filters.resource_id.as_deref(),
    )?;
    let mut out = Vec::with_capacity(cands.len());
    for c in &cands {
        let (Some(row), Some(h)) = (found.remove(&c.seq), engine.get(&c.seq)) else {
            continue;
        };
        let mut f = Fields::new(row);
        let message_id = f.text().unwrap_or_default();
        let thread_id = f.text().unwrap_or_default();
        let resource_id = f.text();
        let role = f.text().unwrap_or_default();
        let task_id = f.text();
        let created_at = f.int().unwrap_or(0);
        let message_index = f.int().unwrap_or(0);
        let level = f.int().unwrap_or(0);
        let search_text = f.text().unwrap_or_default();
        let raw_content = f.text().unwrap_or_default();
        out.push(MessageHit {
            seq: c.seq,
            row: SearchRow {
                message_id,
                thread_id,
                resource_id,
                role,
                task_id,
                created_at,
                score: c.score,
                bm25: h.bm25,
                recency: h.recency,
                source: if level == 0 { "raw" } else { "compacted" },
                snippet: String::new(),
            },
            message_index,
            search_text,
            raw_content,
        });
    }
    Ok(out)
}
