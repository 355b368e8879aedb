//! `memory_search(input [, context])`: the memory-search tool as one SQL call. The
//! agent passes the LLM's tool arguments straight in and returns the answer straight back.
//! The context's `resourceId` and `threadId` bound the search; the LLM's arguments cannot
//! widen it.

use super::call::{known, tool_call, Answer, Failure, Input, Tool};
use crate::recall::search::{self, MAX_LIMIT};
use crate::Conn;
use serde_json::{json, Map, Value as Json};

/// Runs the tool: a bad call answers `{"success":false,"error":…}` (see
/// [`super::call::tool_call`]).
pub(crate) fn memory_search(
    conn: &mut dyn Conn,
    input: Option<&[u8]>,
    context: Option<&[u8]>,
) -> crate::Result<String> {
    tool_call(conn, input, context, run)
}

fn run(conn: &mut dyn Conn, i: &Input) -> Answer {
    known(i, &["search"])?;
    let query = i.str("query")?;
    let limit = i.limit(1, MAX_LIMIT)?;
    let results = results(conn, i, &query, limit)?;
    // A page that is not full holds every match; only a full one needs them counted.
    let total = if results.len() < limit as usize {
        results.len()
    } else {
        let request = search::Request::parse(Some(&scope(i, limit)?))?;
        search::count(conn, &query, &request, MAX_COUNTED)?
    };
    Ok(json!({ "success": true, "totalHits": total, "results": results }))
}

/// `totalHits` counts the matches up to this many.
const MAX_COUNTED: usize = 1000;

/// `mem_search` options for the call's context: its resource and thread.
fn scope(i: &Input, limit: i64) -> Result<String, Failure> {
    let mut options = Map::new();
    options.insert("limit".into(), json!(limit));
    if let Some(r) = i.scope("resourceId")? {
        options.insert("resource_id".into(), json!(r));
    }
    if let Some(t) = i.scope("threadId")? {
        options.insert("thread_id".into(), json!(t));
    }
    Ok(Json::Object(options).to_string())
}

/// The best `limit` messages and observations for `query` within the call's context, as the
/// seed's search results.
pub(crate) fn results(
    conn: &mut dyn Conn,
    i: &Input,
    query: &str,
    limit: i64,
) -> Result<Vec<Json>, Failure> {
    let options = scope(i, limit)?;
    let hits = search::search_with(conn, Some(query), Some(&options), false)?;
    Ok(hits
        .into_iter()
        .map(|h| {
            json!({
                "id": h.row.message_id,
                "source": h.row.source,
                "content": h.raw_content,
                // FTS5's convention, which the seed's tool documents: lower is better.
                "rank": -h.row.score,
                "taskId": h.row.task_id,
                "createdAt": h.row.created_at,
            })
        })
        .collect())
}

/// The tool as the LLM sees it.
pub(crate) const TOOL: Tool = Tool {
    name: "memory_search",
    description:
        "Search past conversations for context.\n\n\
        Use this to find information from previous sessions. The search uses BM25 keyword \
        matching - be specific with terms like function names, file names, or schema names.\n\n\
        Actions:\n- search: Search past conversations by keywords\n\n\
        Examples:\n\
        - Find auth code: { \"action\": \"search\", \"query\": \"LoginSchema\", \"limit\": 1 }\n\
        - Find past discussions: { \"action\": \"search\", \"query\": \"JWT token\", \"limit\": 2 }",
    properties,
    required: &["action", "query"],
    run,
};

fn properties() -> Json {
    json!({
        "action": { "type": "string", "enum": ["search"] },
        "query": { "type": "string", "description": "Search keywords - be specific" },
        "limit": {
            "type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 1,
            "description": "How many results to return"
        }
    })
}
